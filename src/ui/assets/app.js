// Porthole's live timeline.  Vanilla JS, one canvas, no framework.
//
// Events never live in framework state: they go into a plain store (per
// lane a sorted array of marks and pre-binned summaries for zoomed-out
// draws, plus the log list; docs/ui.md), and the canvas is
// redrawn from that store at most once per animation frame, only when
// something changed (or while following the live edge).  Findings are
// the server's answers (the host's findings engine); the page never judges
// events itself.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const canvas = $('canvas');
  const ctx = canvas.getContext('2d', { alpha: false });

  const C = {
    bg: '#111217', grid: '#23262f', text: '#e6e7eb', dim: '#8b8d98',
    err: '#e5484d', warn: '#f5a524', note: '#3e9bff', ok: '#46a758',
    plain: '#7c8190', named: '#b18cff', anon: 'rgba(177,140,255,0.28)',
    db: '#2fb3a6', mainq: '#c86bff', http: '#3e9bff', mem: '#46a758',
    // Block I/O by who issued it, the colors of `report --html`'s io
    // lanes: the app's main thread, the rest of the app, other processes.
    ioMain: '#c62828', ioApp: '#ef8f00', ioOther: '#9aa5b1',
  };
  // The system under the app (a merged system trace's thread states).
  const SYS = { running: '#46a758', runnable: '#f5a524', sleeping: '#3a4150', io: '#e5484d', blocked: '#ff7ab6', freq: '#3e9bff' };
  const LABEL_W = 132, AXIS_H = 22;

  // Lanes, top to bottom.  `need` names the hello collectors that feed a
  // lane: an empty lane says which is missing instead of looking quiet.
  const LANES = [
    { id: 'findings', name: 'Findings', h: 50 },
    { id: 'recompose', name: 'Recompositions', h: 44, need: ['recompositions'], what: 'recompositions' },
    { id: 'frames', name: 'Frames', h: 34, need: ['frames'], what: 'frame timing' },
    { id: 'main', name: 'Main thread', h: 34, need: ['main_thread'], what: 'the main-thread watchdog' },
    { id: 'nav', name: 'Navigation', h: 26, need: ['nav_state', 'input'], what: 'navigation' },
    { id: 'http', name: 'HTTP', h: 44, need: ['curl', 'inflight', 'okhttp'], what: 'curl' },
    { id: 'db', name: 'DB', h: 44, need: ['sqlite', 'room'], what: 'SQLite' },
    { id: 'work', name: 'Work', h: 34, need: ['jobs', 'workmanager'], what: 'the job API' },
    { id: 'memory', name: 'Memory', h: 36, need: ['memory'], what: 'memory sampling' },
    { id: 'device', name: 'Device', h: 26, need: ['device'], what: 'device events' },
    { id: 'warnings', name: 'Warnings (W+)', h: 26, need: ['logs'], what: 'logs' },
    // The system under the app, from a system trace chosen in the menu:
    // shown (sysH tall) only while one is, above the block I/O lane.
    { id: 'sys', name: 'Main thread (sched)', h: 0, sysH: 28, system: true },
    { id: 'cpufreq', name: 'CPU frequency', h: 0, sysH: 30, system: true },
    { id: 'io', name: 'Block I/O', h: 40, what: 'block I/O' },
  ];
  const laneById = {};
  LANES.forEach((l) => { laneById[l.id] = l; });

  // The legend: every color and mark the canvas draws, by lane (the
  // test checks that each color a mark carries is named here).  kind is
  // the swatch's shape: a bar, a point, a line, an outline or a band.
  const LEGEND = [
    ['findings', 'Findings', [[C.err, 'error'], [C.warn, 'warning'], [C.note, 'info'], ['rgba(255,255,255,0.16)', 'selected finding\'s window', 'band']]],
    ['recompose', 'Recompositions', [[C.named, 'named state write'], [C.plain, 'recomposition', 'point'], [C.anon, 'anonymous write (Framework)']]],
    ['frames', 'Frames', [[C.warn, 'late frame'], [C.err, 'very late (3+ missed, 250 ms+)'], [C.dim, 'height: refreshes missed', 'line']]],
    ['main', 'Main thread', [[C.err, 'stall'], [C.mainq, 'query on the main thread']]],
    ['http', 'HTTP', [[C.http, 'call'], [C.warn, 'slow (3 s+)'], [C.err, 'failed or 4xx/5xx']]],
    ['db', 'DB', [[C.db, 'query'], [C.mainq, 'on the main thread'], [C.err, 'failed']]],
    ['io', 'Block I/O', [[C.ioMain, 'main thread'], [C.ioApp, 'app'], [C.ioOther, 'other process']]],
    ['sys', 'System', [[SYS.running, 'running'], [SYS.runnable, 'runnable (waiting for a CPU)'], [SYS.sleeping, 'sleeping'], [SYS.io, 'blocked in I/O'], [SYS.blocked, 'blocked (uninterruptible, not I/O)'], [SYS.freq, 'CPU frequency, one line per CPU', 'line']]],
    ['work', 'Work', [[C.ok, 'succeeded'], [C.warn, 'retried or other'], [C.err, 'failed']]],
    ['memory', 'Memory', [[C.mem, 'RSS', 'line'], [C.warn, 'GC pause']]],
    ['nav', 'Navigation', [[C.note, 'route change', 'point'], [C.ok, 'tap answered < 100 ms'], [C.warn, 'tap 100–500 ms'], [C.err, 'tap > 500 ms'], [C.text, 'mark', 'point']]],
    ['device', 'Device', [[C.plain, 'device event', 'point'], [C.warn, 'low memory', 'point'], [C.note, 'startup, app restarted']]],
    ['warnings', 'Warnings', [[C.warn, 'W log line', 'point'], [C.err, 'E/F line, crash, exit, leak', 'point']]],
    ['selection', 'Selection', [[C.text, 'selected mark', 'box'], [C.text, 'cursor (log line)', 'line']]],
  ];

  // --- the store -----------------------------------------------------------
  // Each lane keeps its marks sorted by start time (binary search finds the
  // visible ones when zoomed in) and, beside them, pre-binned summaries at
  // a few zoom levels: per bucket of LEVEL_W[k] ms and per style class
  // (color, row), how many marks and their tallest height or value range.
  // Both are built as events arrive, so a zoomed-out draw touches at most a
  // few buckets per pixel column, never every event (bench/ui_draw.mjs).
  const S = {
    lanes: {}, logs: [], logBySeq: new Map(), seen: new Map(), hello: null, status: null,
    statusAt: 0, lastT: null, firstT: null, count: 0, version: 0,
    open: new Map(), // http/db/work starts not yet ended, by id
    stallEnd: new Map(), // a stall's start -> the end drawn so far
    kinds: {}, restarts: [], appDropped: 0,
    hostSeen: new Set(), // host-made events (seq -1) taken, by content
    ioRecordings: [], // io_recording events: the recordings attached
    procs: [], // {startedAt, pid} of every hello seen, oldest first
  };
  const LEVEL_W = [4, 16, 64, 256, 1024, 4096, 16384, 65536];
  // A mark spanning more buckets than this is kept whole at that level
  // (it is wide enough there to be drawn as itself).
  const LONG_BUCKETS = 8;
  function newLane() {
    return {
      marks: [], tail: [], maxDur: 0, rows: [0, 0, 0, 0], total: 0,
      classes: [], classOf: new Map(),
      levels: LEVEL_W.map((w) => ({ w, bins: [], longs: [], longMax: 0 })),
    };
  }
  function resetStore() {
    for (const l of LANES) S.lanes[l.id] = newLane();
    S.logs = []; S.logBySeq = new Map(); S.seen = new Map(); S.lastT = null; S.firstT = null;
    S.count = 0; S.open = new Map(); S.stallEnd = new Map(); S.kinds = {}; S.version++; S.restarts = []; S.appDropped = 0;
    S.hostSeen = new Set(); S.ioRecordings = [];
    logReset = true; logDirty = true;
  }

  const num = (v) => (v === undefined || v === null || v === '' ? NaN : Number(v));
  const truthy = (v) => v === true || v === 'true';

  // First index whose value >= v in a sorted array of numbers.
  function lowerNum(a, v) {
    let lo = 0, hi = a.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (a[mid] < v) lo = mid + 1; else hi = mid; }
    return lo;
  }
  // First index whose t0 >= t (marks sorted by t0).
  function lowerBound(ms, t) {
    let lo = 0, hi = ms.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (ms[mid].t0 < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  const byT0 = (a, b) => a.t0 - b.t0;
  // The marks of a lane, sorted.  Marks that arrive out of order (a query's
  // mark starts before it ends, so before the marks that came meanwhile)
  // wait in `tail` and are merged in here: only the end of the array from
  // the earliest of them on is touched, not the whole lane.
  function marksOf(L) {
    if (L.tail.length) {
      const tail = L.tail.sort(byT0);
      L.tail = [];
      const ms = L.marks, p = lowerBound(ms, tail[0].t0);
      const rest = ms.splice(p);
      let i = 0, j = 0;
      while (i < rest.length && j < tail.length) ms.push(rest[i].t0 <= tail[j].t0 ? rest[i++] : tail[j++]);
      while (i < rest.length) ms.push(rest[i++]);
      while (j < tail.length) ms.push(tail[j++]);
    }
    return L.marks;
  }
  // The style class of a mark: what the draw paints the same way.
  function classOf(L, m) {
    const key = m.color + '|' + (m.row | 0) + (m.anon ? '|a' : '') + (m.gc ? '|g' : '');
    let c = L.classOf.get(key);
    if (c === undefined) {
      c = L.classes.length;
      L.classes.push({ color: m.color, row: m.row | 0, anon: !!m.anon, gc: !!m.gc, value: m.value !== undefined });
      L.classOf.set(key, c);
    }
    return c;
  }
  // One bucket of a class at one level: counts, tallest height, value range.
  function bump(B, b, h, v) {
    const idx = B.idx;
    let i = idx.length - 1;
    if (i < 0 || idx[i] < b) {
      idx.push(b); B.n.push(1); B.h.push(h); B.lo.push(v); B.hi.push(v);
      return;
    }
    if (idx[i] !== b) {
      i = lowerNum(idx, b);
      if (idx[i] !== b) {
        idx.splice(i, 0, b); B.n.splice(i, 0, 1); B.h.splice(i, 0, h); B.lo.splice(i, 0, v); B.hi.splice(i, 0, v);
        return;
      }
    }
    B.n[i]++;
    if (h > B.h[i]) B.h[i] = h;
    if (v < B.lo[i]) B.lo[i] = v;
    if (v > B.hi[i]) B.hi[i] = v;
  }
  function binAdd(L, m) {
    const h = m.hfrac || 1, v = m.value >= 0 ? m.value : NaN;
    for (const lv of L.levels) {
      const b0 = Math.floor(m.t0 / lv.w), b1 = Math.floor(m.t1 / lv.w);
      if (b1 - b0 >= LONG_BUCKETS) {
        const ls = lv.longs;
        if (!ls.length || ls[ls.length - 1].t0 <= m.t0) ls.push(m);
        else ls.splice(lowerBound(ls, m.t0), 0, m);
        if (m.t1 - m.t0 > lv.longMax) lv.longMax = m.t1 - m.t0;
        continue;
      }
      const B = lv.bins[m.cls] || (lv.bins[m.cls] = { idx: [], n: [], h: [], lo: [], hi: [] });
      for (let b = b0; b <= b1; b++) bump(B, b, h, v);
    }
  }

  function addMark(laneId, m) {
    const L = S.lanes[laneId];
    const ms = L.marks;
    m.cls = classOf(L, m);
    if (!ms.length || ms[ms.length - 1].t0 <= m.t0) ms.push(m);
    else L.tail.push(m);
    const d = m.t1 - m.t0;
    if (d > L.maxDur) L.maxDur = d;
    binAdd(L, m);
    L.total++;
  }
  // A free sub-row for a span, so overlapping calls do not hide each other.
  function rowFor(laneId, t0, t1, n) {
    const rows = S.lanes[laneId].rows;
    for (let i = 0; i < n; i++) if (rows[i] <= t0) { rows[i] = t1; return i; }
    let best = 0;
    for (let i = 1; i < n; i++) if (rows[i] < rows[best]) best = i;
    rows[best] = Math.max(rows[best], t1);
    return best;
  }
  function isAnonKey(k) { return typeof k === 'string' && (k.startsWith('unnamed#') || k.startsWith('<unnamed')); }

  // The same event can come twice (in a snapshot and in the stream, or in
  // the backfill after a reconnect); within one process a seq always comes
  // with the same t, and across processes the t differs, so (seq, t)
  // names an event even after the app restarted and numbers from 0 again.
  function seenBefore(seq, t) {
    const prev = S.seen.get(seq);
    if (prev === undefined) { S.seen.set(seq, t); return false; }
    if (prev === t) return true;
    if (Array.isArray(prev)) {
      if (prev.includes(t)) return true;
      prev.push(t);
      return false;
    }
    S.seen.set(seq, [prev, t]);
    return false;
  }
  // The app restarted at about t: a mark on the device lane, and the bar
  // says so (the timeline keeps the old process's events).
  function restarted(t, pid) {
    S.restarts.push({ t, pid });
    addMark('device', { t0: t, t1: t, color: C.note, label: 'app restarted' + (pid ? ' (pid ' + pid + ')' : ''), restart: true,
      ev: { event: 'restart', t, seq: -1, data: { pid } } });
    dirty = true;
  }

  // The app's pid at app time t: the hello of the newest process that had
  // started by then (a restarted app has another pid), else the oldest.
  function appPidAt(t) {
    let pid = 0;
    for (const p of S.procs) { if (p.startedAt <= t || !pid) pid = p.pid; else break; }
    return pid;
  }
  // Who issued a block request, by `porthole io`'s rule (docs/iotrace.md):
  // the app's main thread when tid is the app's pid, the app when pid is.
  const IO_WHO = ['main thread', 'app', 'other process'];
  const IO_COLOR = [C.ioMain, C.ioApp, C.ioOther];
  function ioWho(d, t) {
    const app = appPidAt(t), pid = num(d.pid), tid = num(d.tid);
    if (!app) return 2;
    if (tid === app) return 0;
    return pid === app ? 1 : 2;
  }
  // One block request: a bar from its issue to its completion, on the
  // row of who issued it.  t is the issue's whole ms; issueMs, when sent,
  // the exact one.  A request whose issue the recording did not see has
  // no latency and t is its completion: a point.
  function ioMark(t, d, ev) {
    const lat = num(d.latencyMs), who = ioWho(d, t), exact = num(d.issueMs);
    const t0 = exact >= t && exact < t + 1 ? exact : t;
    const ms = lat >= 0 ? (lat < 1 ? lat.toFixed(3) : lat < 100 ? lat.toFixed(1) : Math.round(lat)) + ' ms' : 'issue not seen';
    addMark('io', { t0, t1: lat >= 0 ? t0 + lat : t0, row: who, color: IO_COLOR[who], who,
      label: (d.op || 'io') + ' ' + (d.rwbs || '') + ' ' + (num(d.bytes) || 0) + ' B on ' + (d.dev || '?') + ' · ' + ms +
        ' · ' + IO_WHO[who] + (d.comm ? ' ' + d.comm : '') + (d.pid !== undefined ? ' pid ' + d.pid : '') + (d.tid !== undefined ? ' tid ' + d.tid : ''),
      ev });
  }

  function ingest(ev) {
    if (!ev || typeof ev.event !== 'string' || typeof ev.t !== 'number') return;
    if (ev.event === 'dropped') { // the app's full queue: counted, not drawn
      const n = num(ev.data && ev.data.count);
      if (n > 0) { S.appDropped += n; renderConn(); }
      return;
    }
    const t = ev.t;
    const d = ev.data || {};
    if (typeof ev.seq === 'number' && ev.seq >= 0) {
      if (seenBefore(ev.seq, t)) return;
    } else {
      // Host-made (io, leaks): no seq names them, and the server can send
      // one both in a snapshot and live (server.c, send_host_made).  A
      // block request is named by what attach itself dedups on (device,
      // sector, size, issue, latency), at half the cost of the whole data.
      const key = ev.event === 'io' ? 'io|' + t + '|' + d.dev + '|' + d.sector + '|' + d.bytes + '|' + d.issueMs + '|' + d.latencyMs + '|' + d.requestId :
        ev.event + '|' + t + '|' + JSON.stringify(d);
      if (S.hostSeen.has(key)) return;
      S.hostSeen.add(key);
    }
    S.count++;
    S.kinds[ev.event] = (S.kinds[ev.event] || 0) + 1;
    if (S.lastT === null || t > S.lastT) S.lastT = t;
    if (S.firstT === null || t < S.firstT) S.firstT = t;
    switch (ev.event) {
      case 'recompose':
        addMark('recompose', { t0: t, t1: t, row: 1, color: C.plain, label: d.name || d.id || 'recompose', ev });
        break;
      case 'state_write': {
        const keys = Array.isArray(d.keys) ? d.keys : [];
        const named = Array.isArray(d.named) ? d.named : keys.filter((k) => !isAnonKey(k));
        const anon = named.length === 0;
        addMark('recompose', { t0: t, t1: t, row: anon ? 2 : 0, anon, color: anon ? C.anon : C.named,
          label: 'state write ' + (named.length ? named.join(', ') : (keys.length + ' anonymous')), ev });
        break;
      }
      case 'frame': {
        const total = num(d.totalMs) || 0;
        const missed = num(d.missedFrames) || 0;
        addMark('frames', { t0: t, t1: t + total, color: missed >= 3 || total >= 250 ? C.err : C.warn,
          hfrac: Math.min(1, 0.35 + missed / 6), label: 'frame ' + total + ' ms, ' + missed + ' missed' + (d.worstPhase ? ' (' + d.worstPhase + ')' : ''), ev });
        break;
      }
      case 'blocked': {
        // A stall is sent while it lasts (ongoing, then closed), every
        // event with its start as t: each draws only what it adds past
        // the last one, so the bar grows instead of piling up.
        const dur = num(d.durationMs) || 0;
        const from = S.stallEnd.get(t) || t;
        const label = 'stall ' + dur + ' ms in ' + (d.top || '?') + (d.ongoing === true ? ' (still going)' : '');
        if (t + dur > from || from === t) addMark('main', { t0: from, t1: Math.max(from, t + dur), row: 0, color: C.err, label, ev });
        S.stallEnd.set(t, Math.max(from, t + dur));
        break;
      }
      case 'db_start':
        S.open.set('db:' + d.id, { t, ev });
        break;
      case 'db_end': {
        const el = num(d.elapsedMs) || 0;
        // The bound values come with the start (db_start.args).
        const st = S.open.get('db:' + d.id);
        const args = d.args !== undefined ? d.args : st && st.ev.data ? st.ev.data.args : undefined;
        S.open.delete('db:' + d.id);
        const onMain = truthy(d.onMainThread) || d.mainThread === true || d.thread === 'main';
        const color = d.error ? C.err : onMain ? C.mainq : C.db;
        const label = (onMain ? 'main-thread query ' : 'query ') + el + ' ms: ' + (d.sql || '');
        addMark('db', { t0: t - el, t1: t, row: rowFor('db', t - el, t, 3), color, label, ev, args });
        if (onMain) addMark('main', { t0: t - el, t1: t, row: 1, color: C.mainq, label, ev, args });
        break;
      }
      case 'http_start':
        S.open.set('http:' + d.id, { t, ev });
        break;
      case 'http_end': {
        const el = num(d.elapsedMs) || 0;
        S.open.delete('http:' + d.id);
        const st = num(d.status);
        const bad = st >= 400 || d.phase === 'failed';
        addMark('http', { t0: t - el, t1: t, row: rowFor('http', t - el, t, 3), color: bad ? C.err : el >= 3000 ? C.warn : C.http,
          label: (d.method || '') + ' ' + (d.url || '') + ' ' + (isNaN(st) ? d.phase || '' : st) + ' · ' + el + ' ms', ev });
        break;
      }
      case 'work_start':
        S.open.set('work:' + d.id, { t, ev });
        break;
      case 'work_end': {
        const el = num(d.elapsedMs) || 0;
        const st = S.open.get('work:' + d.id);
        S.open.delete('work:' + d.id);
        const name = d.name || (st && st.ev.data && st.ev.data.name) || d.workId || 'job';
        const state = d.state || '';
        addMark('work', { t0: t - el, t1: t, row: rowFor('work', t - el, t, 2),
          color: state === 'SUCCEEDED' ? C.ok : state === 'FAILED' ? C.err : C.warn,
          label: name + ' attempt ' + (d.attempt || '?') + ': ' + state + (d.error ? ' (' + d.error + ')' : ''), ev });
        break;
      }
      case 'nav':
        addMark('nav', { t0: t, t1: t, color: C.note, label: 'nav ' + (d.direction || '') + ' ' + (d.route || '') + (d.deepLink ? ' ← ' + d.deepLink : ''), ev });
        break;
      case 'input':
        if (d.action === 'tap') {
          const ms = num(d.tapMs) || 0;
          addMark('nav', { t0: t, t1: t + ms, color: ms > 500 ? C.err : ms > 100 ? C.warn : C.ok, label: 'tap ' + (d.target || '') + ' answered in ' + ms + ' ms', ev });
        }
        break;
      case 'mark':
        addMark('nav', { t0: t, t1: t, color: C.text, label: 'mark ' + (d.label || ''), ev });
        break;
      case 'memory': {
        const v = num(d.rssMb);
        addMark('memory', { t0: t, t1: t, value: isNaN(v) ? num(d.heapUsedMb) : v, color: C.mem,
          label: 'rss ' + d.rssMb + ' MB, heap ' + d.heapUsedMb + ' MB', ev });
        break;
      }
      case 'gc':
        addMark('memory', { t0: t, t1: t + (num(d.pausedMs) || 0), color: C.warn, label: 'gc ' + (d.count || ''), gc: true, ev });
        break;
      case 'device':
        addMark('device', { t0: t, t1: t, color: d.kind === 'lowMemory' || d.kind === 'trimMemory' ? C.warn : C.plain, label: 'device ' + (d.kind || ''), ev });
        break;
      case 'startup':
        addMark('device', { t0: num(d.originMs) || t, t1: t, color: C.note, label: 'startup ' + (d.classification || '') + ' ' + (d.totalMs || '') + ' ms', ev });
        break;
      case 'log': {
        S.logs.push(ev);
        if (typeof ev.seq === 'number') S.logBySeq.set(ev.seq, ev);
        logDirty = true;
        if (d.level === 'W' || d.level === 'E' || d.level === 'F')
          addMark('warnings', { t0: t, t1: t, color: d.level === 'W' ? C.warn : C.err, label: d.level + ' ' + (d.tag || '') + ': ' + (d.message || ''), ev });
        break;
      }
      case 'log_append': {
        const parent = S.logBySeq.get(d.seq);
        if (parent) { parent.more = (parent.more || '') + '\n' + (d.text || ''); }
        break;
      }
      case 'io':
        ioMark(t, d, ev);
        break;
      case 'io_recording': // what `porthole iotrace attach` joined
        S.ioRecordings.push(d);
        dirty = true;
        break;
      case 'strict_violation':
      case 'exit':
      case 'leak':
        addMark('warnings', { t0: t, t1: t, color: C.err, label: ev.event + ' ' + (d.reason || d.category || d.shortDescription || ''), ev });
        break;
      default:
        break;
    }
    dirty = true;
  }

  function ingestLine(o) {
    if (!o || typeof o !== 'object') return;
    if (o.ui === 'snapshot') {
      resetStore();
      if (o.hello) setHello(o.hello, false);
      if (o.status) setStatus(o.status);
      const evs = (o.timeline && o.timeline.events) || [];
      for (const e of evs) ingest(e);
      // A snapshot carries only the newest process's hello: events from
      // before it started were an earlier process's, so the app restarted
      // (at least once) while porthole ui was running.
      const h = S.hello;
      if (h && typeof h.startedAt === 'number' && S.firstT !== null && S.firstT < h.startedAt) restarted(h.startedAt, h.pid);
      findingsTouch();
      return;
    }
    if (o.ui === 'status') { setStatus(o.status); return; }
    if (typeof o.event === 'string') { ingest(o); return; }
    if (o.result && typeof o.result === 'object') {
      if (typeof o.result.protocol === 'number' && o.result.packageName) setHello(o.result, true);
      if (Array.isArray(o.result.events)) for (const e of o.result.events) ingest(e);
    }
  }

  // --- the socket ------------------------------------------------------------
  let ws = null, wsBackoff = 250, wsUp = false, batchProbe = null;
  function connect() {
    ws = new WebSocket('ws://' + location.host + '/ws');
    ws.onopen = () => { wsUp = true; wsBackoff = 250; renderConn(); };
    ws.onmessage = (m) => {
      const text = typeof m.data === 'string' ? m.data : '';
      if (text.startsWith('{"ui":"snapshot"')) { try { ingestLine(JSON.parse(text)); } catch (e) { /* hostile */ } return; }
      let i = 0;
      while (i < text.length) {
        let j = text.indexOf('\n', i);
        if (j < 0) j = text.length;
        if (j > i) { try { ingestLine(JSON.parse(text.slice(i, j))); } catch (e) { /* skip a bad line */ } }
        i = j + 1;
      }
      if (batchProbe) batchProbe();
    };
    ws.onclose = () => {
      wsUp = false; renderConn();
      setTimeout(connect, wsBackoff);
      wsBackoff = Math.min(wsBackoff * 2, 4000);
    };
  }
  setInterval(() => { if (ws && ws.readyState === 1) ws.send('ping'); }, 20000);

  // live: the hello came down the stream (the link reached a process),
  // not in a snapshot.  Another startedAt or pid there is a new process.
  function setHello(h, live) {
    const old = S.hello;
    // A replayed batch can carry the hello of the process before: keep
    // the newest.
    if (live && old && typeof h.startedAt === 'number' && h.startedAt < old.startedAt) return;
    S.hello = h;
    const pid = num(h.pid), at = typeof h.startedAt === 'number' ? h.startedAt : 0;
    if (pid > 0 && !S.procs.some((p) => p.pid === pid && p.startedAt === at)) {
      S.procs.push({ startedAt: at, pid });
      S.procs.sort((a, b) => a.startedAt - b.startedAt);
    }
    if (live && old && (old.startedAt !== h.startedAt || old.pid !== h.pid)) {
      const t = typeof h.startedAt === 'number' && h.startedAt > 0 ? h.startedAt : S.lastT;
      restarted(t === null ? 0 : t, h.pid);
      toast('The app restarted: ' + (old.pid ? 'pid ' + old.pid + ' → ' : '') + 'pid ' + (h.pid || '?') +
        '. The timeline keeps the old process\'s events.');
    }
    $('app').textContent = (h.packageName || '?') + (h.device ? ' · ' + h.device : '') + (h.pid ? ' · pid ' + h.pid : '');
    $('app').title = $('app').textContent;
    renderConn();
    dirty = true;
  }
  function setStatus(st) {
    if (!st) return;
    const prev = S.status ? S.status.store.version : -1;
    S.status = st; S.statusAt = performance.now();
    if (st.store && st.store.version !== prev) findingsTouch();
    $('restart').disabled = !st.canRestart;
    $('restart').title = st.canRestart ? 'Restart the app (asks first)' :
      'porthole ui did not start this app: run `porthole ui -- CMD...` to restart it from here';
    renderConn();
  }
  function renderConn() {
    const el = $('conn');
    let state = 'down', text = 'porthole ui is not answering';
    if (wsUp && S.status) {
      state = S.status.link.state;
      text = state === 'connected' ? 'live: ' + (S.status.store.events) + ' events' :
        state + (S.status.link.error ? ': ' + S.status.link.error : '');
      // The link reconnects by itself; say so, and whether the app it
      // found again is a new process.
      // Counted by the app's hellos: a socket closed before its hello
      // (the app still starting) is no reconnect.
      const again = (S.status.link.hellos || 0) - 1;
      if (again > 0) text += ' · reconnected ' + (again > 1 ? again + '×' : 'once');
      if (S.restarts.length) text += ' · app restarted ' + (S.restarts.length > 1 ? S.restarts.length + '×' : 'once');
      if (S.appDropped) text += ' · the app dropped ' + S.appDropped + ' events (its queue was full)';
      if (S.status.link.warning) text += ' (' + S.status.link.warning + ')';
    } else if (wsUp) { state = 'connecting'; text = 'connected to porthole ui'; }
    el.dataset.state = state;
    $('conn-text').textContent = text;
    el.title = text;
  }

  // --- the clock and the view -----------------------------------------------
  const view = { from: 0, to: 30000, follow: true, cursor: null, want: 30000 };
  let framework = false;
  let dirty = true, logDirty = true, logReset = true, lastLogs = 0;

  // The live edge on the app clock: this machine's clock when the app runs
  // here (the server says so), else the newest event.
  function liveEdge() {
    const st = S.status;
    if (st && st.link && st.link.clockShared) return st.now + (performance.now() - S.statusAt);
    if (S.lastT !== null) return S.lastT;
    return st ? st.now : 0;
  }
  function span() { return view.to - view.from; }
  // The axis reads time since the app started (hello's startedAt, of the
  // first process this page saw): "12 s" is 12 s into the run, and the
  // device clock is on hover.  Before any hello, the first event held.
  function origin() {
    if (S.procs.length) return S.procs[0].startedAt;
    if (S.hello && typeof S.hello.startedAt === 'number') return S.hello.startedAt;
    return S.firstT !== null ? S.firstT : 0;
  }
  // Following live shows the last view.want ms, or, when the app has run
  // for less than that, its whole run: the view fits what exists instead
  // of leaving empty time before the app started.
  function followWindow() {
    const e = liveEdge(), o = origin();
    const s = Math.max(1000, Math.min(view.want, (e - o) / 0.98));
    view.to = e + s * 0.02; view.from = view.to - s;
  }
  // F: the selection with a margin, or with nothing selected everything
  // the app did (following live, as the page opens).
  function fit() {
    if (selected) {
      const pad = Math.max(20, (selected.t1 - selected.t0) * 0.25);
      setView(selected.t0 - pad, selected.t1 + pad, false);
      return;
    }
    view.want = 86400000;
    setView(view.from, view.to, true);
    followWindow();
  }
  function setView(from, to, follow) {
    const minSpan = 5, maxSpan = 86400000;
    let s = Math.min(maxSpan, Math.max(minSpan, to - from));
    const mid = (from + to) / 2;
    view.from = mid - s / 2; view.to = mid + s / 2;
    if (follow !== undefined) { view.follow = follow; $('follow').checked = follow; }
    // What the tooltip named has moved from under the pointer.
    $('hover').hidden = true;
    dirty = true;
    findingsTouch();
  }
  // The canvas's CSS size, read in resize() only: reading clientWidth after
  // the page changed the DOM (the range text, the log pane) forces a
  // layout, which was a large part of a draw.
  let cssW = 1, cssH = 1;
  function plotW() { return Math.max(1, cssW - LABEL_W); }
  function xOf(t) { return LABEL_W + (t - view.from) / span() * plotW(); }
  function tOf(x) { return view.from + (x - LABEL_W) / plotW() * span(); }

  // --- findings: the server's answers, never the page's own --------------
  const F = { state: 'idle', answer: null, asked: null, error: null, timer: 0, seq: 0, marks: [], trace: '', labels: [] };
  // A still window is asked 250 ms after it stops moving; while following
  // live the window moves all the time, so it is asked at most every 1.2 s
  // (a debounce there would never fire).
  function findingsTouch() {
    dirty = true;
    if (view.follow) {
      if (F.timer) return;
    } else clearTimeout(F.timer);
    F.timer = setTimeout(() => { F.timer = 0; askFindings(); }, view.follow ? 1200 : 250);
  }
  function isStale() {
    if (!F.answer || !F.asked) return false;
    // Following live, the window slides every frame: an answer a few
    // seconds old is current; a still window is stale once events arrive.
    const tol = view.follow ? Math.max(3000, span() * 0.05) : span() * 0.02 + 1;
    const moved = Math.abs(F.asked.from - view.from) > tol || Math.abs(F.asked.to - view.to) > tol;
    const newer = !view.follow && S.status && S.status.store && S.status.store.version !== F.asked.version &&
      S.lastT !== null && S.lastT >= F.asked.from && S.lastT <= F.asked.to;
    return moved || newer || F.asked.trace !== F.trace;
  }
  function askFindingsSoon() { clearTimeout(F.timer); F.timer = 0; dirty = true; askFindings(); }
  async function askFindings() {
    const from = Math.floor(view.from), to = Math.ceil(view.to);
    if (from >= to) return;
    const version = S.status && S.status.store ? S.status.store.version : 0;
    const my = ++F.seq;
    F.state = 'loading'; dirty = true;
    try {
      const trace = F.trace;
      const r = await fetch('/api/findings?from=' + from + '&to=' + to + (trace ? '&trace=' + encodeURIComponent(trace) : ''));
      const j = await r.json();
      if (my !== F.seq) return;
      if (!r.ok) throw new Error(j.error || r.statusText);
      F.answer = j; F.asked = { from, to, version, trace }; F.state = 'ok'; F.error = null;
      if (trace !== SY.trace) loadSystem(trace);
      F.marks = [];
      for (const f of j.findings || []) {
        const w = f.window || {};
        const t0 = f.spanning ? view.from : num(w.from), t1 = f.spanning ? view.to : num(w.to);
        F.marks.push({ t0, t1, f, color: f.severity === 'error' ? C.err : f.severity === 'warning' ? C.warn : C.note,
          label: (f.source === 'trace' || f.source === 'iotrace' ? '[' + f.source + '] ' : '') + f.severity + ': ' + f.title });
      }
      F.marks.sort((a, b) => a.t0 - b.t0);
    } catch (e) {
      if (my !== F.seq) return;
      F.state = 'error'; F.error = String(e.message || e);
    }
    dirty = true;
    if (view.follow) findingsTouch();
  }
  function findingsText() {
    if (F.state === 'loading' && !F.answer) return { text: 'asking the findings engine…', color: C.dim, kind: 'loading' };
    if (F.state === 'error') return { text: 'no answer: ' + F.error, color: C.err, kind: 'error' };
    if (!F.answer) return { text: 'not asked yet', color: C.dim, kind: 'idle' };
    const stale = isStale() || F.state === 'loading';
    if (stale) return { text: 'stale: answer for t=' + F.asked.from + '..' + F.asked.to + '; asking again…', color: C.warn, kind: 'stale' };
    const fs = F.answer.findings || [];
    const tr = traceText(fs) + ioText(fs);
    // No app connected: nothing new is observed, so an empty answer is
    // "not connected", never the green all-clear of a run looked at.
    const link = S.status && S.status.link;
    if (!fs.length && (!link || link.state !== 'connected')) {
      const why = link && link.error ? ' (' + link.error + ')' : '';
      const held = S.status && S.status.store ? S.status.store.events : 0;
      return { text: held ? 'not connected' + why + ' · no findings in the ' + held + ' events held' + tr :
        'not connected: nothing observed' + why + tr, color: C.warn, kind: 'disconnected' };
    }
    // Quiet only over a window the host observed whole (docs/findings.md,
    // "Coverage"); otherwise what it could not see, and why.
    const cov = F.answer.coverage;
    const unseen = cov && !cov.complete ? ' · not seen (' + (F.answer.notSeen || []).length + ' checks): ' + cov.reason : '';
    if (!fs.length && unseen)
      return { text: 'nothing found in what was observed' + unseen + tr, color: C.warn, kind: 'notseen' };
    if (!fs.length)
      return { text: 'looked: nothing found (' + (F.answer.quiet || []).length + ' checks quiet)' + tr, color: C.ok, kind: 'empty' };
    return { text: fs.length + ' finding' + (fs.length > 1 ? 's' : '') + unseen + tr, color: unseen ? C.warn : C.dim, kind: 'ok' };
  }
  // What the block I/O view added (findings with source "iotrace").
  function ioText(fs) {
    const n = fs.filter((f) => f.source === 'iotrace').length;
    return n ? ' · block I/O: ' + n + ' finding' + (n === 1 ? '' : 's') : '';
  }
  // What the system trace added, and what it was asked; a trace finding
  // outside the visible window (a trace from another clock) is counted.
  function traceText(fs) {
    const t = F.answer.trace;
    if (!t) return '';
    const mine = fs.filter((f) => f.source === 'trace');
    const off = mine.filter((f) => !f.spanning && f.window && (f.window.to < view.from || f.window.from > view.to)).length;
    const asked = Array.isArray(F.answer.asked) ? F.answer.asked : [];
    return ' · system trace ' + t.id + ': ' + mine.length + ' finding' + (mine.length === 1 ? '' : 's') +
      (off ? ' (' + off + ' outside this window)' : '') + ', asked ' + (asked.join(', ') || 'nothing') +
      (t.processNote ? ' — ' + t.processNote : '');
  }

  // --- system traces under .porthole/traces/ ---------------------------------
  async function loadTraces() {
    const sel = $('trace');
    try {
      const r = await fetch('/api/traces');
      const j = await r.json();
      if (!r.ok) throw new Error(j.error || r.statusText);
      const keep = F.trace;
      sel.textContent = '';
      const none = document.createElement('option');
      none.value = ''; none.textContent = 'no system trace';
      sel.append(none);
      for (const t of j.traces || []) {
        const o = document.createElement('option');
        o.value = t.id;
        o.textContent = t.id + ' · ' + Math.round(t.bytes / 1024) + ' KB' +
          (t.coverage ? ' · t=' + t.coverage.from + '..' + t.coverage.to : ' · ' + (t.reason || 'not on the app clock'));
        sel.append(o);
      }
      sel.value = (j.traces || []).some((t) => t.id === keep) ? keep : '';
      sel.title = (j.traces || []).length ? 'Merge a system trace\'s answers into the findings' : 'No traces in .porthole/traces/ (porthole trace record --out .porthole/traces/NAME)';
    } catch (e) {
      sel.title = 'cannot list traces: ' + (e.message || e);
    }
  }
  $('trace').addEventListener('focus', loadTraces);
  $('trace').addEventListener('mousedown', loadTraces);
  // The system lanes are read as the trace is chosen (and again with the
  // findings answer, should that come first).
  $('trace').onchange = (e) => { F.trace = e.target.value; askFindingsSoon(); loadSystem(F.trace); };

  // --- drawing ---------------------------------------------------------------
  let dpr = 1;
  function resize() {
    dpr = window.devicePixelRatio || 1;
    cssW = canvas.clientWidth; cssH = canvas.clientHeight;
    canvas.width = Math.max(1, Math.round(cssW * dpr));
    canvas.height = Math.max(1, Math.round(cssH * dpr));
    dirty = true;
  }
  window.addEventListener('resize', resize);

  function laneTops() {
    const tops = {};
    let y = AXIS_H;
    for (const l of LANES) { tops[l.id] = y; y += l.h; }
    return tops;
  }
  // [first, end) of the marks that may overlap the view.
  function visible(L) {
    const ms = marksOf(L);
    return [lowerBound(ms, view.from - L.maxDur), lowerBound(ms, view.to + 1), ms];
  }
  function emptyReason(l, inView) {
    if (l.id === 'findings') return null;
    if (l.system) {
      if (inView) return null;
      if (SY.state === 'loading') return 'reading the system trace ' + SY.trace + '…';
      if (SY.state === 'error') return 'system trace ' + SY.trace + ': ' + SY.error;
      if (l.id === 'sys' && !SY.thread) return SY.note || 'the app\'s main thread is not in this trace';
      if (l.id === 'cpufreq' && !SY.freq.length) return 'no CPU frequency events in ' + SY.trace + ' (the kernel\'s cpufreq driver sent none)';
      return 'not in this window: ' + SY.trace + ' covers ' + secs(SY.from - origin(), 1) + '–' + secs(SY.to - origin(), 1) + ' s';
    }
    const L = S.lanes[l.id];
    if (inView) return null;
    const cols = S.hello && Array.isArray(S.hello.collectors) ? S.hello.collectors : null;
    if (!S.hello && (!S.status || S.status.link.state !== 'connected'))
      return 'not connected' + (S.status && S.status.link.error ? ': ' + S.status.link.error : '');
    if (cols && l.need && !l.need.some((n) => cols.includes(n)))
      return l.what + ' not instrumented (collectors: ' + (cols.join(', ') || 'none') + ')';
    if (l.id === 'frames' && !L.total) return 'no late frames: the app sends only janky ones';
    // Block I/O is recorded beside the app, not by it: say how to get it.
    if (l.id === 'io' && !L.total && S.ioRecordings.length) {
      const r = S.ioRecordings[S.ioRecordings.length - 1];
      return 'block I/O recording ' + (r.recording || '?') + ' attached, but no io events of it are held here';
    }
    if (l.id === 'io' && !L.total) {
      const sid = S.status && S.status.session ? S.status.session : 'SESSION';
      return 'no block I/O recorded: `porthole iotrace record --out DIR`, then `porthole iotrace attach ' + sid +
        ' DIR`; or `porthole capture --iotrace`';
    }
    if (l.id === 'warnings' && !L.total) return 'no W/E/F log lines yet';
    if (!L.total) return 'instrumented; nothing has happened yet';
    return 'nothing in this window (' + L.total + ' elsewhere)';
  }

  function draw() {
    const t0 = performance.now();
    const W = cssW, H = cssH;
    if (view.follow) followWindow();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = C.bg; ctx.fillRect(0, 0, W, H);
    drawAxis(W, H);
    const tops = laneTops();
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (const l of LANES) {
      if (!l.h) continue;
      const y = tops[l.id];
      ctx.fillStyle = C.grid; ctx.fillRect(0, y + l.h - 1, W, 1);
      ctx.fillStyle = C.dim; ctx.fillText(l.name, 8, y + l.h / 2);
      let n = 0;
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL_W, y, W - LABEL_W, l.h - 1); ctx.clip();
      if (l.id === 'findings') n = drawFindings(l, y);
      else if (l.id === 'memory') n = drawMemory(l, y);
      else if (l.id === 'sys') n = drawStates(l, y);
      else if (l.id === 'cpufreq') n = drawFreq(l, y);
      else n = drawLane(l, y);
      drawn[l.id] = n;
      const why = emptyReason(l, n > 0);
      if (why) { ctx.fillStyle = C.dim; ctx.fillText(why, LABEL_W + 10, y + l.h / 2); }
      ctx.restore();
    }
    if (view.cursor !== null) {
      const x = xOf(view.cursor);
      ctx.fillStyle = C.text; ctx.fillRect(x, AXIS_H, 1, H - AXIS_H);
    }
    if (selected && selected.f) drawEvidence(selected, tops, H);
    if (selected) {
      const x0 = xOf(selected.t0), x1 = Math.max(x0 + 2, xOf(selected.t1));
      const l = selected.lane ? laneById[selected.lane] : null;
      if (l && selected.box) { ctx.strokeStyle = C.text; ctx.strokeRect(selected.box.x - 1.5, selected.box.y - 1.5, selected.box.w + 3, selected.box.h + 3); }
      else if (l) { ctx.strokeStyle = C.text; ctx.strokeRect(x0 - 1.5, tops[l.id] + 1.5, x1 - x0 + 3, l.h - 4); }
    }
    ctx.fillStyle = C.grid; ctx.fillRect(LABEL_W - 1, 0, 1, H);
    renderRange();
    const dt = performance.now() - t0;
    drawTimes.push(dt);
    if (drawTimes.length > 2000) drawTimes.splice(0, 1000);
  }
  const drawTimes = [];
  const drawn = {};

  // A selected finding's evidence: its window as a band across every
  // lane, and in the lanes its kind draws from, each visible mark in the
  // window outlined (highlighted[lane] counts them, for the tests).
  const EVIDENCE_LANES = [
    [/db|sql|query/, ['db', 'main']], [/http|network|request/, ['http']], [/stall|blocked|anr|main-thread/, ['main']],
    [/frame|jank/, ['frames']], [/recompos|state/, ['recompose']], [/^io-|iotrace|block/, ['io']], [/startup|launch/, ['device', 'main', 'db']],
    [/work|job/, ['work']], [/memory|leak|gc/, ['memory']], [/crash|exit|log|strict|warn/, ['warnings']],
  ];
  function evidenceLanes(f) {
    const id = String(f.id || '');
    for (const [re, lanes] of EVIDENCE_LANES) if (re.test(id)) return lanes;
    return [];
  }
  const highlighted = {};
  function drawEvidence(m, tops, H) {
    const x0 = Math.max(LABEL_W, xOf(m.t0)), x1 = Math.min(cssW, Math.max(x0 + 2, xOf(m.t1)));
    for (const k of Object.keys(highlighted)) delete highlighted[k];
    if (x1 < LABEL_W || x0 > cssW) return;
    ctx.fillStyle = 'rgba(255,255,255,0.08)';
    ctx.fillRect(x0, AXIS_H, x1 - x0, H - AXIS_H);
    ctx.fillStyle = 'rgba(255,255,255,0.5)';
    ctx.fillRect(x0, AXIS_H, 1, H - AXIS_H); ctx.fillRect(x1 - 1, AXIS_H, 1, H - AXIS_H);
    ctx.strokeStyle = C.text; ctx.lineWidth = 1;
    for (const id of evidenceLanes(m.f)) {
      const l = laneById[id], L = S.lanes[id], ms = marksOf(L), y = tops[id];
      let n = 0;
      for (let i = lowerBound(ms, Math.max(m.t0, view.from) - L.maxDur); i < ms.length && ms[i].t0 <= Math.min(m.t1, view.to) && n < 500; i++) {
        const k = ms[i];
        if (k.t1 < m.t0 || k.t1 < view.from || hiddenAnon(k)) continue;
        const a = xOf(k.t0), b = Math.max(a + 2, xOf(k.t1));
        ctx.strokeRect(a - 1.5, y + 1.5, b - a + 3, l.h - 4);
        n++;
      }
      highlighted[id] = n;
    }
  }

  function niceStep(ms) {
    const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000];
    for (const s of steps) if (s >= ms) return s;
    return 7200000;
  }
  // ms as seconds with dig decimals, never "-0".
  function secs(ms, dig) {
    const v = (ms / 1000).toFixed(dig);
    return Number(v) === 0 ? (0).toFixed(dig) : v;
  }
  // A time since the app's start (ms), to the precision the step needs.
  function fmtT(rel, step) {
    const v = Math.abs(rel) < 1e-6 ? 0 : rel / 1000;
    if (step >= 1000) return v.toFixed(0) + ' s';
    if (step >= 100) return v.toFixed(1) + ' s';
    if (step >= 10) return v.toFixed(2) + ' s';
    return v.toFixed(3) + ' s';
  }
  const axisTicks = []; // the last draw's {t, rel, x, text}, for the tests
  function drawAxis(W, H) {
    const step = niceStep(span() / Math.max(1, plotW() / 110));
    const o = origin();
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    axisTicks.length = 0;
    // Ticks on whole steps since the start, so the first one reads 0 s.
    let rel = Math.ceil((view.from - o) / step) * step;
    for (; o + rel <= view.to; rel += step) {
      // A whole pixel: a grid line is its color, not half of it twice.
      const x = Math.round(xOf(o + rel)), text = fmtT(rel, step);
      ctx.fillStyle = C.grid; ctx.fillRect(x, AXIS_H - 4, 1, H);
      ctx.fillStyle = C.dim; ctx.fillText(text, x + 3, AXIS_H / 2);
      axisTicks.push({ t: o + rel, rel, x, text });
    }
    ctx.fillStyle = C.bg; ctx.fillRect(0, 0, LABEL_W - 1, AXIS_H);
    ctx.fillStyle = C.dim; ctx.fillText('since app start', 8, AXIS_H / 2);
  }

  // Drawing a lane goes through pixel columns: every mark (or, zoomed
  // out, every bucket of the lane's summary) raises the columns it covers
  // in its style class to its height, and each run of equal columns is one
  // rectangle, all rectangles of one color one path.  So a dense lane costs
  // a few rectangles, not one per event: canvas calls, not the loop, were
  // most of a slow frame (docs/ui.md).
  const colPool = [];
  function columns(k, pw) {
    let c = colPool[k];
    if (!c || c.length < pw) c = colPool[k] = new Float32Array(pw + 256);
    return c;
  }
  // Raises columns [x0, x1] (pixels from the plot's left edge) to v.
  function raise(col, x0, x1, v, pw) {
    let p0 = Math.floor(x0), p1 = Math.floor(x1);
    if (p1 < 0 || p0 >= pw) return;
    if (p0 < 0) p0 = 0;
    if (p1 >= pw) p1 = pw - 1;
    for (let p = p0; p <= p1; p++) if (v > col[p]) col[p] = v;
  }
  // The coarsest summary level still finer than a pixel, or null.
  function levelFor(L, pxMs) {
    let lv = null;
    for (const l of L.levels) if (l.w <= pxMs) lv = l;
    return lv;
  }
  // Adds each run of equal non-zero columns to the current path; geom(v)
  // gives [y, height] for a column value.  A run is at least 2 px wide, so
  // a lone point shows.
  function runs(col, pw, geom) {
    let p = 0;
    while (p < pw) {
      const v = col[p];
      if (!v) { p++; continue; }
      let q = p + 1;
      while (q < pw && col[q] === v) q++;
      const g = geom(v);
      ctx.rect(LABEL_W + p, g[0], Math.max(2, q - p), g[1]);
      p = q;
    }
  }
  // Fills the classes' columns from the marks (zoomed in) or from the
  // summary (zoomed out, when the window holds more marks than pixels).
  // Returns how many marks that was; used[c] is set for each class touched.
  function fillColumns(L, used, skip) {
    const pw = plotW(), from = view.from, to = view.to, pxMs = span() / pw;
    const [a, b, ms] = visible(L);
    const lv = levelFor(L, pxMs);
    let n = 0;
    const mark = (m) => {
      if (m.t1 < from || skip(m)) return;
      const col = columns(m.cls, pw);
      used[m.cls] = 1;
      const x0 = (m.t0 - from) / pxMs, x1 = (m.t1 - from) / pxMs;
      // A wide mark ends where it ends, so neighbours keep their gap.
      raise(col, x0, x1 - x0 >= 2 ? x1 - 1 : x0, m.hfrac || 1, pw);
      n++;
    };
    if (!lv || b - a <= pw) {
      for (let i = a; i < b; i++) mark(ms[i]);
      return n;
    }
    const w = lv.w, bFrom = Math.floor(from / w), bTo = Math.floor(to / w);
    for (let c = 0; c < L.classes.length; c++) {
      const B = lv.bins[c];
      if (!B || skip(L.classes[c])) continue;
      const idx = B.idx, e = lowerNum(idx, bTo + 1);
      let i = lowerNum(idx, bFrom);
      if (i >= e) continue;
      const col = columns(c, pw);
      used[c] = 1;
      for (; i < e; i++) {
        let p = Math.floor((idx[i] * w - from) / pxMs);
        if (p < 0) p = 0; else if (p >= pw) p = pw - 1;
        if (B.h[i] > col[p]) col[p] = B.h[i];
        n += B.n[i];
      }
    }
    const ls = lv.longs;
    for (let i = lowerBound(ls, from - lv.longMax); i < ls.length && ls[i].t0 <= to; i++) mark(ls[i]);
    return n;
  }
  // Where classes share a column the worse one is painted last, on top:
  // zoomed out, a column shows the worst thing in it.
  const RANK = { [C.err]: 3, [C.warn]: 2, [C.mainq]: 1, [C.ioMain]: 3, [C.ioApp]: 2 };
  // One path per color over the used classes, then the columns cleared.
  function paint(L, used, geomOf) {
    const pw = plotW();
    const done = new Uint8Array(L.classes.length);
    const order = [];
    for (let c = 0; c < L.classes.length; c++) if (used[c]) order.push(c);
    order.sort((x, y) => (RANK[L.classes[x].color] || 0) - (RANK[L.classes[y].color] || 0) || x - y);
    for (const c of order) {
      if (done[c]) continue;
      const color = L.classes[c].color;
      ctx.fillStyle = color;
      ctx.beginPath();
      for (let k = c; k < L.classes.length; k++) {
        if (!used[k] || done[k] || L.classes[k].color !== color) continue;
        done[k] = 1;
        runs(colPool[k], pw, geomOf(L.classes[k]));
        colPool[k].fill(0, 0, pw);
      }
      ctx.fill();
    }
  }
  const hiddenAnon = (m) => m.anon && !framework;
  function laneRows(l) {
    return l.id === 'recompose' || l.id === 'http' || l.id === 'db' || l.id === 'io' ? 3 : l.id === 'work' || l.id === 'main' ? 2 : 1;
  }
  function drawLane(l, y) {
    const L = S.lanes[l.id];
    const rh = (l.h - 4) / laneRows(l);
    const used = new Uint8Array(L.classes.length);
    const n = fillColumns(L, used, hiddenAnon);
    paint(L, used, (cl) => {
      if (l.id === 'frames') return (v) => { const hh = (l.h - 6) * v; return [y + l.h - 3 - hh, hh]; };
      const g = [y + 2 + cl.row * rh, rh - 2];
      return () => g;
    });
    return n;
  }
  // Memory: a line through the samples, or zoomed out the band between
  // each pixel column's lowest and highest sample; GC pauses as ticks.
  const memLo = [], memHi = [];
  function drawMemory(l, y) {
    const L = S.lanes[l.id];
    const pw = plotW(), from = view.from, to = view.to, pxMs = span() / pw;
    const [a, b, ms] = visible(L);
    const lv = levelFor(L, pxMs);
    const used = new Uint8Array(L.classes.length);
    const ticks = fillColumns(L, used, (m) => !m.gc);
    let lo = Infinity, hi = -Infinity, n = 0;
    const yOf = (v) => y + l.h - 4 - (v - lo) / (hi - lo) * (l.h - 10);
    ctx.strokeStyle = C.mem; ctx.lineWidth = 1.5; ctx.beginPath();
    if (lv && b - a > pw) {
      for (let p = 0; p < pw; p++) { memLo[p] = Infinity; memHi[p] = -Infinity; }
      const w = lv.w, bFrom = Math.floor(from / w), bTo = Math.floor(to / w);
      L.classes.forEach((cl, c) => {
        const B = lv.bins[c];
        if (!B || !cl.value) return;
        for (let i = lowerNum(B.idx, bFrom), e = lowerNum(B.idx, bTo + 1); i < e; i++) {
          let p = Math.floor((B.idx[i] * w - from) / pxMs);
          if (p < 0) p = 0; else if (p >= pw) p = pw - 1;
          if (B.lo[i] < memLo[p]) memLo[p] = B.lo[i];
          if (B.hi[i] > memHi[p]) memHi[p] = B.hi[i];
          n += B.n[i];
        }
      });
      for (let p = 0; p < pw; p++) if (memHi[p] >= memLo[p]) { if (memLo[p] < lo) lo = memLo[p]; if (memHi[p] > hi) hi = memHi[p]; }
      if (hi >= lo) {
        if (hi === lo) { hi += 1; lo = Math.max(0, lo - 1); }
        let first = true;
        for (let p = 0; p < pw; p++) {
          if (!(memHi[p] >= memLo[p])) continue;
          const x = LABEL_W + p + 0.5;
          if (first) { ctx.moveTo(x, yOf(memHi[p])); first = false; } else ctx.lineTo(x, yOf(memHi[p]));
          ctx.lineTo(x, yOf(memLo[p]));
        }
      }
    } else {
      for (let i = a; i < b; i++) { const v = ms[i].value; if (v >= 0) { if (v < lo) lo = v; if (v > hi) hi = v; } }
      if (hi >= lo) {
        if (hi === lo) { hi += 1; lo = Math.max(0, lo - 1); }
        const sc = pw / span(), base = LABEL_W - from * sc;
        let first = true;
        for (let i = Math.max(0, a - 1); i < Math.min(ms.length, b + 1); i++) {
          const m = ms[i];
          if (!(m.value >= 0)) continue;
          const x = base + m.t0 * sc, yy = yOf(m.value);
          if (first) { ctx.moveTo(x, yy); first = false; } else ctx.lineTo(x, yy);
          n++;
        }
      }
    }
    ctx.stroke();
    paint(L, used, () => { const g = [y + 2, 6]; return () => g; });
    if (hi >= lo) { ctx.fillStyle = C.dim; ctx.fillText(Math.round(hi) + ' MB', cssW - 60, y + 8); }
    return n + ticks;
  }
  // The findings lane: two rows of bars, each bar on the first row free
  // where it starts, and its title beside it (inside a wide bar) as far
  // as the next bar on that row; a title that does not fit is cut with
  // an ellipsis, and one with no room for a few letters is on hover only.
  // F.labels keeps what was drawn, for the tests (inside the canvas, no
  // two overlapping).
  const FROW_H = 15, LABEL_MIN = 36;
  function fitText(text, w) {
    if (ctx.measureText(text).width <= w) return text;
    let lo = 0, hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '…').width <= w) lo = mid; else hi = mid - 1;
    }
    return lo >= 3 ? text.slice(0, lo).trimEnd() + '…' : '';
  }
  // --- the system under the app (a chosen system trace) ----------------------
  // GET /api/trace/system: the main thread's states (sorted [from, dur,
  // class, state, cpu, ranTid, ranName] rows on the app clock) and each
  // CPU's frequency steps, fetched once per trace chosen.
  const SY = { trace: '', state: 'idle', states: [], maxDur: 0, freq: [], freqMax: 0, thread: null, note: '', error: '', from: 0, to: 0, seq: 0 };
  async function loadSystem(id) {
    const my = ++SY.seq;
    Object.assign(SY, { trace: id, state: id ? 'loading' : 'idle', states: [], maxDur: 0, freq: [], freqMax: 0, thread: null, note: '', error: '' });
    for (const l of LANES) if (l.system) l.h = id ? l.sysH : 0;
    dirty = true;
    if (!id) return;
    try {
      const r = await fetch('/api/trace/system?trace=' + encodeURIComponent(id));
      const j = await r.json();
      if (my !== SY.seq) return;
      if (!r.ok) throw new Error(j.error || r.statusText);
      SY.states = (j.states || []).sort((a, b) => a[0] - b[0]);
      for (const st of SY.states) if (st[1] > SY.maxDur) SY.maxDur = st[1];
      SY.freq = j.freq || [];
      SY.thread = j.thread; SY.note = j.note || '';
      SY.from = j.window.from; SY.to = j.window.to;
      SY.state = 'ok';
    } catch (e) {
      if (my !== SY.seq) return;
      SY.state = 'error'; SY.error = String(e.message || e);
    }
    dirty = true;
  }
  function firstState(t) {
    const a = SY.states;
    let lo = 0, hi = a.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (a[mid][0] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  // Through pixel columns, as the other lanes: each column takes the
  // worst state in it (io over runnable over running over blocked over
  // sleeping), and each run of equal columns is one rectangle, so 50,000
  // states zoomed out cost a few hundred rects.  Returns the states seen.
  const SYS_RANK = { sleeping: 1, blocked: 2, running: 3, runnable: 4, io: 5 };
  const SYS_BY_RANK = [null, 'sleeping', 'blocked', 'running', 'runnable', 'io'];
  let sysCol = new Uint8Array(0);
  function drawStates(l, y) {
    if (SY.state !== 'ok' || !SY.states.length) return 0;
    const a = SY.states, pw = plotW(), from = view.from, pxMs = span() / pw;
    if (sysCol.length < pw) sysCol = new Uint8Array(pw + 256);
    const col = sysCol;
    col.fill(0, 0, pw);
    let n = 0;
    for (let i = firstState(from - SY.maxDur); i < a.length && a[i][0] <= view.to; i++) {
      const st = a[i], t1 = st[0] + st[1];
      if (t1 < from) continue;
      const r = SYS_RANK[st[2]] || 1;
      let p0 = Math.floor((st[0] - from) / pxMs), p1 = Math.floor((t1 - from) / pxMs);
      if (p0 < 0) p0 = 0;
      if (p1 >= pw) p1 = pw - 1;
      for (let p = p0; p <= p1; p++) if (r > col[p]) col[p] = r;
      n++;
    }
    for (let r = 1; r < SYS_BY_RANK.length; r++) {
      ctx.fillStyle = SYS[SYS_BY_RANK[r]];
      ctx.beginPath();
      let p = 0;
      while (p < pw) {
        if (col[p] !== r) { p++; continue; }
        let q = p + 1;
        while (q < pw && col[q] === r) q++;
        ctx.rect(LABEL_W + p, y + 3, q - p, l.h - 7);
        p = q;
      }
      ctx.fill();
    }
    return n;
  }
  // Each CPU's frequency as a step line, on one scale (the highest seen),
  // at most two points per pixel column.
  function drawFreq(l, y) {
    if (SY.state !== 'ok' || !SY.freq.length) return 0;
    if (!(SY.freqMax > 0)) {
      SY.freqMax = 0;
      for (const c of SY.freq) for (const p of c.points) if (p[1] > SY.freqMax) SY.freqMax = p[1];
    }
    const max = SY.freqMax;
    if (!(max > 0)) return 0;
    let n = 0;
    const yOf = (v) => y + l.h - 3 - (v / max) * (l.h - 8);
    ctx.strokeStyle = SYS.freq; ctx.lineWidth = 1; ctx.globalAlpha = 0.8;
    for (const c of SY.freq) {
      const pts = c.points;
      ctx.beginPath();
      let started = false, lastPx = -1;
      let lo = 0, hi = pts.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (pts[mid][0] < view.from) lo = mid + 1; else hi = mid; }
      for (let i = Math.max(0, lo - 1); i < pts.length && pts[i][0] <= view.to; i++) {
        const t1 = i + 1 < pts.length ? pts[i + 1][0] : SY.to;
        const x0 = Math.max(LABEL_W, xOf(pts[i][0])), x1 = Math.min(cssW, xOf(t1)), yy = yOf(pts[i][1]);
        n++;
        if (Math.floor(x0) === lastPx && Math.floor(x1) === lastPx) continue; // inside one pixel
        if (!started) { ctx.moveTo(x0, yy); started = true; } else ctx.lineTo(x0, yy);
        ctx.lineTo(x1, yy);
        lastPx = Math.floor(x1);
      }
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
    if (n) { ctx.fillStyle = C.dim; ctx.fillText('max ' + Math.round(max / 1000) + ' MHz', cssW - 90, y + 8); }
    return n;
  }
  // What the main thread did over [t0, t1] by the trace: ms per state,
  // and its longest wait for a CPU with who held that CPU.  The sentence
  // a late frame or a stall gets in the detail panel.
  function systemOver(t0, t1) {
    if (SY.state !== 'ok' || !SY.thread || t1 <= t0 || t1 < SY.from || t0 > SY.to) return null;
    const ms = { running: 0, runnable: 0, sleeping: 0, io: 0, blocked: 0 };
    let worst = null;
    const a = SY.states;
    for (let i = firstState(t0 - SY.maxDur); i < a.length && a[i][0] < t1; i++) {
      const st = a[i], o = Math.min(t1, st[0] + st[1]) - Math.max(t0, st[0]);
      if (o <= 0) continue;
      ms[st[2]] = (ms[st[2]] || 0) + o;
      if (st[2] === 'runnable' && (!worst || o > worst.ms)) worst = { ms: o, cpu: st[4], by: st[6], tid: st[5] };
    }
    const parts = ['running', 'runnable', 'io', 'blocked', 'sleeping'].filter((k) => ms[k] >= 0.05)
      .map((k) => (k === 'io' ? 'blocked in I/O' : k) + ' ' + ms[k].toFixed(ms[k] < 10 ? 1 : 0) + ' ms');
    let text = 'main thread ' + (parts.join(', ') || 'not seen by the trace');
    if (worst && worst.ms >= 1 && worst.by) text += '; runnable ' + worst.ms.toFixed(0) + ' ms while CPU ' + worst.cpu + ' ran ' + worst.by + (worst.tid ? ' (tid ' + worst.tid + ')' : '');
    const covered = Math.max(t0, SY.from) > t0 || Math.min(t1, SY.to) < t1 ? ' (the trace covers part of it)' : '';
    return { ms, worst, text: text + covered };
  }

  function drawFindings(l, y) {
    const st = findingsText();
    const stale = st.kind === 'stale' || st.kind === 'loading';
    let n = 0;
    ctx.globalAlpha = stale ? 0.45 : 1;
    const right = cssW - 4, rowEnd = [-Infinity, -Infinity], rows = [[], []];
    F.labels = [];
    for (const m of F.marks) {
      m.box = null;
      const x0 = Math.max(LABEL_W - 2, xOf(m.t0)), x1 = Math.max(x0 + 3, xOf(m.t1));
      if (x1 < LABEL_W || x0 > cssW) continue;
      const r = rowEnd[0] <= x0 ? 0 : rowEnd[1] <= x0 ? 1 : rowEnd[0] <= rowEnd[1] ? 0 : 1;
      rowEnd[r] = Math.max(rowEnd[r], x1 + 2);
      m.box = { x: x0, y: y + 2 + r * (FROW_H + 1), w: x1 - x0, h: FROW_H };
      rows[r].push(m);
      ctx.fillStyle = m.color;
      ctx.fillRect(m.box.x, m.box.y, m.box.w, m.box.h);
      n++;
    }
    // Labels stay legible on a stale (faded) answer: light text then,
    // dark text only on a bar drawn in full.
    ctx.globalAlpha = 1;
    ctx.font = '11px system-ui, sans-serif';
    for (const row of rows) {
      row.forEach((m, i) => {
        const b = m.box, inside = b.w >= 80;
        const tx = inside ? Math.max(b.x, LABEL_W) + 4 : b.x + b.w + 3;
        const next = i + 1 < row.length ? row[i + 1].box.x - 4 : right;
        const end = Math.min(next, right, inside ? b.x + b.w - 4 : Infinity);
        if (end - tx < LABEL_MIN) return;
        const text = fitText(m.f.title, end - tx);
        if (!text) return;
        const w = ctx.measureText(text).width;
        if (F.labels.some((o) => o.y === b.y && tx < o.x + o.w + 2 && o.x < tx + w + 2)) return;
        const dark = inside && !stale;
        ctx.fillStyle = dark ? '#111217' : C.text;
        ctx.fillText(text, tx, b.y + b.h / 2 + 0.5);
        F.labels.push({ text, full: m.f.title, x: tx, y: b.y, w, h: b.h, inside, dark });
      });
    }
    ctx.globalAlpha = 1;
    // The state is always said, so "in flight" never reads as "nothing".
    ctx.fillStyle = st.color;
    ctx.fillText(st.text, LABEL_W + 10, y + l.h - 7);
    return n + 1;
  }
  let rangeText = '';
  function renderRange() {
    const sp = span(), o = origin(), dig = sp >= 10000 ? 0 : sp >= 1000 ? 1 : 3;
    const text = secs(view.from - o, dig) + '–' + secs(view.to - o, dig) + ' s (' + secs(sp, dig) + ' s)';
    if (text !== rangeText) {
      rangeText = text;
      $('range').textContent = text;
      $('range').title = 'since the app started; device uptime ' + Math.round(view.from) + '..' + Math.round(view.to) + ' ms';
    }
  }

  function frame() {
    if (dirty || view.follow) { dirty = false; draw(); }
    // The log list is DOM: rebuilt at most four times a second.
    const now = performance.now();
    if (logDirty && now - lastLogs > 250) { logDirty = false; lastLogs = now; renderLogs(); }
    requestAnimationFrame(frame);
  }

  // --- picking and the detail panel ----------------------------------------
  let selected = null;
  function pick(x, y) {
    const tops = laneTops();
    const l = LANES.find((ln) => y >= tops[ln.id] && y < tops[ln.id] + ln.h);
    if (!l || x < LABEL_W) return null;
    const t = tOf(x), slack = span() / plotW() * 4;
    // On the io lane a row is who issued the request: a click picks from
    // the row it landed on, not a busier row's request at the same time.
    const row = l.id === 'io' ? Math.min(2, Math.max(0, Math.floor((y - tops[l.id] - 2) / ((l.h - 4) / laneRows(l))))) : -1;
    let best = null, bestD = Infinity;
    const consider = (m) => {
      if (m.anon && !framework) return;
      if (row >= 0 && m.row !== row) return;
      const d = t < m.t0 ? m.t0 - t : t > m.t1 ? t - m.t1 : 0;
      if (d <= slack && (d < bestD || (d === bestD && best && (m.t1 - m.t0) < (best.t1 - best.t0)))) { best = m; bestD = d; }
    };
    if (l.id === 'findings') {
      // Bars sit on rows: the topmost (drawn last) under the pointer,
      // else the nearest.
      for (const m of F.marks) {
        const b = m.box;
        if (b && x >= b.x && x <= b.x + Math.max(b.w, 3) && y >= b.y && y <= b.y + b.h) best = m;
      }
      if (!best) F.marks.forEach(consider);
    } else {
      const L = S.lanes[l.id];
      const ms = marksOf(L);
      for (let i = lowerBound(ms, t - slack - L.maxDur); i < ms.length && ms[i].t0 <= t + slack; i++) consider(ms[i]);
    }
    if (best) best.lane = l.id;
    return best;
  }
  const BULK = ['stack', 'sql', 'args', 'requestBody', 'responseBody', 'traceText', 'mainStack', 'detail', 'message', 'frames', 'phases'];
  // "12.345 s since start (uptime 785123 ms)": both clocks, for people.
  function when(t) {
    return ((t - origin()) / 1000).toFixed(3) + ' s since start (device uptime ' + (Math.round(t * 1000) / 1000) + ' ms)';
  }
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  // A stack as frames a person can click: each asks the server where it
  // is in the project (GET /api/where, the `where` of findings).
  function stackFrames(d) {
    let frames = Array.isArray(d.frames) ? d.frames.filter((f) => f && typeof f === 'object') : [];
    if (!frames.length && typeof d.stack === 'string') {
      // "fn(file.c:12)", "fn(file.c)", "fn", "module+0x1a2b"
      frames = d.stack.split('\n').filter((x) => x.trim()).map((line) => {
        const m = /^\s*(?:at\s+)?([^(\s]+)\s*(?:\(([^:)]+)(?::(\d+))?\))?/.exec(line) || [];
        return { fn: m[1] || line.trim(), file: m[2], line: m[3] ? Number(m[3]) : undefined, app: true, text: line.trim() };
      });
    }
    const box = el('div', 'frames');
    for (const f of frames) {
      const b = el('button', 'frame' + (f.app === false ? ' lib' : ''));
      const text = f.text || ((f.fn || (f.module ? f.module + '+0x' + Number(f.offset || 0).toString(16) : f.pc || '?')) +
        (f.file ? '(' + f.file + (f.line ? ':' + f.line : '') + ')' : ''));
      b.append(el('span', 'fn', text));
      b.title = f.app === false ? 'a library frame; click to look for it in the project' : 'click: where is this in the project?';
      b.onclick = async () => {
        let w = b.querySelector('.where');
        if (!w) { w = el('span', 'where', 'looking…'); b.append(w); }
        try {
          const q = new URLSearchParams();
          if (f.fn) q.set('fn', f.fn);
          if (f.file) q.set('file', f.file);
          if (f.line) q.set('line', String(f.line));
          if (f.app !== false) q.set('app', '1');
          const r = await fetch('/api/where?' + q);
          const j = await r.json();
          if (!r.ok) throw new Error(j.error || r.statusText);
          if (j.status === 'resolved') { w.className = 'where'; w.textContent = 'where: ' + j.path + (j.line ? ':' + j.line : ''); }
          else if (j.status === 'ambiguous') { w.className = 'where'; w.textContent = 'where: one of ' + j.candidates.map((c) => c.path + (c.line ? ':' + c.line : '')).join(', '); }
          else { w.className = 'where none'; w.textContent = 'where: ' + j.status; }
        } catch (e) { w.className = 'where none'; w.textContent = 'where: ' + (e.message || e); }
      };
      box.append(b);
    }
    return frames.length ? box : null;
  }
  // Phases (name -> ms) as one bar, each phase a share of it.
  const PHASE_COLORS = ['#3e9bff', '#b18cff', '#2fb3a6', '#f5a524', '#e5484d', '#46a758', '#ff7ab6', '#9aa5b1', '#c86bff', '#ffd479'];
  function phaseBar(ph) {
    const names = Object.keys(ph || {}).filter((k) => num(ph[k]) >= 0);
    const total = names.reduce((a, k) => a + num(ph[k]), 0);
    if (!names.length) return null;
    const wrap = el('div'), bar = el('div', 'phases'), keys = el('div', 'phase-keys');
    names.forEach((k, i) => {
      const v = num(ph[k]), c = PHASE_COLORS[i % PHASE_COLORS.length];
      const seg = el('span');
      seg.style.flex = String(total > 0 ? v : 1);
      seg.style.background = c;
      seg.title = k + ' ' + v + ' ms';
      seg.dataset.phase = k;
      bar.append(seg);
      const key = el('span', '', k + ' ' + v + ' ms');
      const sw = el('i'); sw.style.background = c;
      key.prepend(sw);
      keys.append(key);
    });
    wrap.append(bar, keys);
    return wrap;
  }
  // A statement with its bound values in place of its `?`s (args is the
  // values joined with ", ", docs/protocol.md; a value holding ", " cannot
  // be split back, so a count that does not match shows them apart).
  function boundSql(sql, args) {
    const box = el('div', 'sql');
    const vals = typeof args === 'string' && args !== '' ? args.split(', ') : Array.isArray(args) ? args.map(String) : [];
    const parts = String(sql).split('?');
    if (vals.length && parts.length - 1 === vals.length) {
      parts.forEach((p, i) => {
        box.append(document.createTextNode(p));
        if (i < vals.length) box.append(el('span', 'bound', /^-?\d+(\.\d+)?$/.test(vals[i]) ? vals[i] : "'" + vals[i] + "'"));
      });
    } else {
      box.textContent = sql;
      if (vals.length) { box.append(document.createTextNode('\n-- bound: ')); box.append(el('span', 'bound', args)); }
    }
    return box;
  }
  function showDetail(m) {
    selected = m; dirty = true;
    const attrs = $('detail-attrs'), bulk = $('detail-bulk');
    attrs.textContent = ''; bulk.textContent = '';
    const row = (k, v) => {
      const tr = document.createElement('tr');
      const a = document.createElement('td'); a.textContent = k;
      const b = document.createElement('td'); b.textContent = typeof v === 'object' ? JSON.stringify(v) : String(v);
      tr.append(a, b); attrs.append(tr);
    };
    const pre = (k, v) => {
      const h = el('div', 'bulk-name', k);
      const p = el('pre', '', typeof v === 'string' ? v : JSON.stringify(v, null, 2));
      bulk.append(h, p);
    };
    const section = (k, node) => { if (node) bulk.append(el('div', 'bulk-name', k), node); return !!node; };
    let raw;
    if (m.f) {
      const f = m.f;
      raw = f;
      $('detail-title').textContent = f.title;
      $('detail-sub').textContent = f.severity + ' · ' + f.confidence + ' · ' + f.id + (f.source ? ' · ' + f.source : '');
      if (f.window) row('window', ((f.window.from - origin()) / 1000).toFixed(3) + '–' + ((f.window.to - origin()) / 1000).toFixed(3) + ' s since start (uptime ' + f.window.from + '..' + f.window.to + ' ms)');
      if (f.spanning) row('window', 'spanning (not on this axis)');
      row('count', f.count);
      if (f.status) row('status', f.status);
      if (f.where) row('where', f.where.path ? f.where.path + (f.where.line ? ':' + f.where.line : '') : f.where.status);
      if (Array.isArray(f.detail)) pre('detail', f.detail.join('\n'));
      const ev = f.evidence || {};
      if (typeof ev.sql === 'string') section('statement', boundSql(ev.sql, ev.args));
      if (typeof ev.stack === 'string' || Array.isArray(ev.frames)) section('stack', stackFrames(ev));
      if (ev.phases && typeof ev.phases === 'object') section('phases', phaseBar(ev.phases));
      scrollLogTo(m.t0);
    } else {
      const ev = m.ev, d = ev.data || {};
      raw = ev;
      $('detail-title').textContent = m.label;
      $('detail-sub').textContent = ev.event + ' · ' + when(ev.t) + (typeof ev.seq === 'number' && ev.seq >= 0 ? ' · seq ' + ev.seq : ' · host-made');
      if (m.who !== undefined) {
        row('issued by', IO_WHO[m.who] + (m.who < 2 ? ' (pid ' + appPidAt(m.t0) + ')' : ''));
        if (m.t1 > m.t0) row('completed', 't=' + (Math.round(m.t1 * 1000) / 1000));
      }
      const shown = new Set();
      // With a system trace: what the main thread was doing meanwhile.
      const sys = m.t1 > m.t0 ? systemOver(m.t0, m.t1) : null;
      if (sys) section('the system under it (' + SY.trace + ')', el('p', 'system-why',
        (ev.event === 'frame' ? 'frame late: ' : ev.event === 'blocked' ? 'stall: ' : '') + sys.text));
      // What a person reads first: the stack, the statement, the phases.
      if ((ev.event === 'blocked' || ev.event === 'exit') && section('stack', stackFrames(ev.event === 'exit' ? { stack: d.mainStack } : d))) shown.add('stack').add('frames').add('mainStack');
      const args = d.args !== undefined ? d.args : m.args;
      if (typeof d.sql === 'string' && section(args ? 'statement, with its bound values' : 'statement', boundSql(d.sql, args))) shown.add('sql').add('args');
      if (d.phases && typeof d.phases === 'object' && section(ev.event === 'frame' ? 'frame phases' : 'call phases', phaseBar(d.phases))) shown.add('phases');
      for (const k of Object.keys(d)) if (!BULK.includes(k)) row(k, d[k]);
      for (const k of BULK) if (!shown.has(k) && d[k] !== undefined && d[k] !== '') pre(k, d[k]);
      if (ev.more) pre('continued', ev.more);
    }
    // The raw JSON, one click away.
    const det = el('details', 'raw');
    det.append(el('summary', '', 'raw JSON'), el('pre', '', JSON.stringify(raw, null, 2)));
    bulk.append(det);
    $('detail').hidden = false;
    resize();
  }
  // Selecting a finding moves the log to its first line in the window.
  function scrollLogTo(t) {
    let i = 0;
    const off = logOffset();
    for (i = off; i < S.logs.length && S.logs[i].t < t; i++);
    if (i >= S.logs.length) i = S.logs.length - 1;
    if (i < off) return;
    selectedLog = S.logs[i]; logPinned = false;
    logBox.scrollTop = Math.max(0, (i - off) * LOG_ROW_H - logBox.clientHeight / 2);
    for (const x of logPool) x.ev = null;
    renderLogs();
  }
  $('detail-close').onclick = () => { $('detail').hidden = true; selected = null; resize(); };

  // --- zoom, pan, follow ------------------------------------------------------
  let drag = null;
  canvas.addEventListener('mousedown', (e) => { drag = { x: e.offsetX, from: view.from, to: view.to, moved: false }; });
  window.addEventListener('mousemove', (e) => {
    if (!drag) return;
    const dx = e.clientX - canvas.getBoundingClientRect().left - drag.x;
    if (Math.abs(dx) > 3) drag.moved = true;
    if (!drag.moved) return;
    const dt = dx / plotW() * (drag.to - drag.from);
    view.from = drag.from - dt; view.to = drag.to - dt;
    if (view.follow) { view.follow = false; $('follow').checked = false; }
    dirty = true; findingsTouch();
  });
  window.addEventListener('mouseup', (e) => {
    if (drag && !drag.moved && e.target === canvas) {
      const m = pick(e.offsetX, e.offsetY);
      if (m) showDetail(m);
    }
    drag = null;
  });
  // Hover: what is under the pointer (a finding's whole title, which its
  // bar may not have room for) and the time on both clocks.
  const hoverBox = $('hover');
  function hoverAt(x, y) {
    if (x < LABEL_W || x > cssW || y < 0 || y > cssH) { hoverBox.hidden = true; mouseT = null; return null; }
    const t = tOf(x), m = y >= AXIS_H ? pick(x, y) : null;
    mouseT = t;
    hoverBox.textContent = '';
    if (m) hoverBox.append(el('div', '', m.f ? m.f.severity + ': ' + m.f.title : m.label));
    const sl = laneById.sys, top = laneTops().sys;
    if (!m && sl.h && y >= top && y < top + sl.h && SY.states.length) {
      const a = SY.states, slack = span() / plotW() * 2;
      for (let i = firstState(t - SY.maxDur); i < a.length && a[i][0] <= t + slack; i++) {
        const st = a[i];
        if (st[0] + st[1] < t - slack) continue;
        hoverBox.append(el('div', '', 'main thread ' + (st[2] === 'io' ? 'blocked in I/O' : st[2]) + ' (' + st[3] + ') ' + st[1].toFixed(st[1] < 10 ? 2 : 0) + ' ms' +
          (st[4] >= 0 ? ' on CPU ' + st[4] : '') + (st[6] ? '; CPU ' + st[4] + ' ran ' + st[6] : '')));
        break;
      }
    }
    hoverBox.append(el('div', 'clock', when(t)));
    hoverBox.hidden = false;
    const w = hoverBox.offsetWidth, h = hoverBox.offsetHeight;
    hoverBox.style.left = Math.max(0, Math.min(cssW - w - 4, x + 12)) + 'px';
    hoverBox.style.top = Math.max(0, Math.min(cssH - h - 4, y + 14)) + 'px';
    return hoverBox.textContent;
  }
  canvas.addEventListener('mousemove', (e) => { if (!drag || !drag.moved) hoverAt(e.offsetX, e.offsetY); });
  canvas.addEventListener('mouseleave', () => { hoverBox.hidden = true; mouseT = null; });
  function zoomAt(t, factor) {
    const from = t - (t - view.from) * factor, to = t + (view.to - t) * factor;
    setView(from, to);
    if (view.follow) { view.want = Math.min(86400000, Math.max(1000, span())); followWindow(); }
  }
  // A and D (and the arrows): a fifth of the window.
  function pan(frac) {
    const d = span() * frac;
    view.from += d; view.to += d;
    if (view.follow) { view.follow = false; $('follow').checked = false; }
    dirty = true; findingsTouch();
  }
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY) || e.shiftKey) {
      const d = (e.deltaX || e.deltaY) / plotW() * span();
      view.from += d; view.to += d; view.follow = false; $('follow').checked = false;
      dirty = true; findingsTouch();
    } else zoomAt(tOf(e.offsetX), Math.exp(e.deltaY * 0.0015));
  }, { passive: false });
  $('zoom-in').onclick = () => zoomAt((view.from + view.to) / 2, 0.5);
  $('zoom-out').onclick = () => zoomAt((view.from + view.to) / 2, 2);
  $('follow').onchange = (e) => { view.follow = e.target.checked; dirty = true; findingsTouch(); };
  $('framework').onchange = (e) => { framework = e.target.checked; dirty = true; };
  $('fit').onclick = () => fit();
  // Keys as in Perfetto: W/S zoom in and out about the middle (or the
  // mouse), A/D pan, F fits the selection; L toggles following live.
  let mouseT = null;
  window.addEventListener('keydown', (e) => {
    const tag = e.target.tagName;
    // Not while typing, nor under the database dialog (its own Esc closes it).
    if (tag === 'TEXTAREA' || tag === 'INPUT' || tag === 'SELECT' || e.ctrlKey || e.metaKey || e.altKey || $('dbdlg').open) return;
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const at = mouseT !== null ? mouseT : (view.from + view.to) / 2;
    if (k === 'w' || k === '+' || k === '=') zoomAt(at, 0.6);
    else if (k === 's' || k === '-') zoomAt(at, 1 / 0.6);
    else if (k === 'a' || k === 'ArrowLeft') pan(-0.2);
    else if (k === 'd' || k === 'ArrowRight') pan(0.2);
    else if (k === 'f') fit();
    else if (k === 'l') { view.follow = !view.follow; $('follow').checked = view.follow; dirty = true; findingsTouch(); }
    else if (k === 'Escape') { $('detail-close').click(); return; }
    else return;
    e.preventDefault();
  });
  function moveTo(t) {
    const s = span();
    view.cursor = t;
    setView(t - s / 2, t + s / 2, false);
  }

  // --- the log pane ------------------------------------------------------------
  // A virtual list: a sizer as tall as every line, and DOM rows only for
  // the lines in view (a pool reused as it scrolls), so a stream of logs
  // costs the same few rows whatever its rate; building a row per line
  // was most of the page's time at a few thousand events a second.
  const LOG_ROW_H = 17, LOG_MAX = 100000;
  let selectedLog = null, logPinned = true, logFirst = 0;
  const logBox = $('log-rows'), logSizer = document.createElement('div');
  logSizer.className = 'log-sizer';
  logBox.append(logSizer);
  const logPool = [];
  function logRow() {
    const r = document.createElement('div');
    r.setAttribute('role', 'listitem');
    for (const c of ['t', 'lv', 'tag', 'msg']) { const e = document.createElement('span'); e.className = c; r.append(e); }
    r.onclick = () => {
      const ev = r.ev;
      if (!ev) return;
      selectedLog = ev; logPinned = false;
      for (const x of logPool) x.ev = null; // repaint the selection
      moveTo(ev.t);
      renderLogs();
    };
    logSizer.append(r);
    return r;
  }
  function logOffset() { return Math.max(0, S.logs.length - LOG_MAX); }
  function renderLogs() {
    const off = logOffset(), n = S.logs.length - off;
    if (logReset) { logReset = false; logBox.scrollTop = 0; logPinned = true; }
    logSizer.style.height = n * LOG_ROW_H + 'px';
    const viewH = logBox.clientHeight;
    if (logPinned) logBox.scrollTop = Math.max(0, n * LOG_ROW_H - viewH);
    const first = Math.max(0, Math.floor(logBox.scrollTop / LOG_ROW_H));
    const count = Math.min(n - first, Math.ceil(viewH / LOG_ROW_H) + 1);
    logFirst = first;
    for (let k = 0; k < Math.max(count, logPool.length); k++) {
      const r = logPool[k] || (logPool[k] = logRow());
      if (k >= count) { r.hidden = true; r.ev = null; continue; }
      const ev = S.logs[off + first + k], d = ev.data || {};
      r.hidden = false;
      if (r.ev === ev) continue;
      r.ev = ev;
      r.style.top = (first + k) * LOG_ROW_H + 'px';
      r.className = 'log ' + (d.level || '') + (ev === selectedLog ? ' sel' : '');
      r.dataset.t = ev.t;
      const c = r.children;
      // Seconds since the app's start, as on the axis; the device clock on hover.
      c[0].textContent = secs(ev.t - origin(), 3); c[0].title = 'device uptime ' + ev.t + ' ms';
      c[1].textContent = d.level || '?';
      c[2].textContent = d.tag || ''; c[3].textContent = d.message || '';
    }
    $('log-count').textContent = S.logs.length ? '(' + S.logs.length + ' lines' + (off ? ', the last ' + LOG_MAX + ' listed' : '') + ')' : '(no lines yet)';
  }
  // Scrolled to the bottom, the list follows new lines; scrolled up, it
  // stays where the person put it.
  logBox.addEventListener('scroll', () => {
    const n = S.logs.length - logOffset();
    logPinned = logBox.scrollTop + logBox.clientHeight >= n * LOG_ROW_H - 4 && !selectedLog;
    if (Math.floor(logBox.scrollTop / LOG_ROW_H) !== logFirst) { for (const r of logPool) r.ev = null; renderLogs(); }
  }, { passive: true });

  // --- toasts, clipboard ----------------------------------------------------------
  function toast(text, value) {
    $('toast-text').textContent = text;
    const v = $('toast-value'), b = $('toast-copy');
    v.hidden = b.hidden = value === undefined;
    if (value !== undefined) v.value = value;
    $('toast').hidden = false;
  }
  $('toast-close').onclick = () => { $('toast').hidden = true; };
  $('toast-copy').onclick = () => copy($('toast-value').value).then((ok) => { $('toast-text').textContent = ok ? 'copied' : 'select and copy'; });
  async function copy(text) {
    try { await navigator.clipboard.writeText(text); return true; } catch (e) {
      const ta = document.createElement('textarea');
      ta.value = text; document.body.append(ta); ta.select();
      let ok = false;
      try { ok = document.execCommand('copy'); } catch (e2) { ok = false; }
      ta.remove();
      return ok;
    }
  }

  // --- Ask agent: the window as bounds, and what it holds ---------------------
  function windowSummary(from, to) {
    const parts = [];
    const count = (laneId, pred) => {
      const L = S.lanes[laneId], ms = marksOf(L);
      let n = 0;
      for (let i = lowerBound(ms, from - L.maxDur), e = lowerBound(ms, to + 1); i < e; i++) {
        const m = ms[i];
        if (m.t1 >= from && (!pred || pred(m))) n++;
      }
      return n;
    };
    const rec = count('recompose', (m) => m.ev.event === 'recompose');
    const sw = count('recompose', (m) => m.ev.event === 'state_write' && !m.anon);
    const fr = count('frames');
    const st = marksOf(S.lanes.main).filter((m) => m.ev.event === 'blocked' && m.t1 >= from && m.t0 <= to);
    const mq = count('main', (m) => m.ev.event === 'db_end');
    const dbn = count('db'), http = count('http'), bad = count('http', (m) => m.color === C.err);
    const work = count('work'), warn = count('warnings');
    const io = count('io'), ioMain = count('io', (m) => m.who === 0);
    if (rec) parts.push('recompose ' + rec);
    if (sw) parts.push('named state writes ' + sw);
    if (fr) parts.push('late frames ' + fr);
    for (const s of st.slice(0, 3)) parts.push('a ' + s.ev.data.durationMs + ' ms main-thread stall at t=' + s.t0 + ' in ' + s.ev.data.top);
    if (mq) parts.push('main-thread queries ' + mq);
    if (dbn) parts.push('queries ' + dbn);
    if (http) parts.push('http calls ' + http + (bad ? ' (' + bad + ' failed)' : ''));
    if (io) parts.push('block I/O requests ' + io + (ioMain ? ' (' + ioMain + ' on the main thread)' : ''));
    if (work) parts.push('job attempts ' + work);
    if (warn) parts.push('warnings ' + warn);
    let start = 'findings';
    const inWin = F.answer && !isStale() ? (F.answer.findings || []) : [];
    if (!inWin.length) start = st.length ? 'blocking' : fr ? 'frames' : rec ? 'recompositions' : 'timeline';
    return { parts, start, findings: inWin };
  }
  function askPrompt() {
    const from = Math.floor(view.from), to = Math.ceil(view.to);
    const w = windowSummary(from, to);
    let p = 'look at device uptime ' + from + ' to ' + to + ' ms (' + ((to - from) / 1000).toFixed(1) + ' s) of ' +
      (S.hello ? S.hello.packageName : 'the app') + '; that window contains ' + (w.parts.length ? w.parts.join(', ') : 'no events') + ';';
    if (w.findings.length) p += ' porthole found: ' + w.findings.slice(0, 5).map((f) => f.severity + ' ' + f.title).join('; ') + ';';
    p += ' start with ' + w.start + ' {"from": ' + from + ', "to": ' + to + '}';
    return p;
  }
  $('ask').onclick = async () => {
    const p = askPrompt();
    const ok = await copy(p);
    toast(ok ? 'Prompt copied for your agent:' : 'Copy this prompt:', p);
  };

  // --- Keep: the visible window through porthole save ---------------------------
  // Every write carries the server's token, which only a page it served
  // can read (GET /api/token is same-origin like every route); asked again
  // once when refused, for a server that was started anew on this port.
  let writeToken = '';
  async function freshToken() {
    try { writeToken = (await (await fetch('/api/token')).json()).token || ''; } catch (e) { writeToken = ''; }
    return writeToken;
  }
  async function post(path, body) {
    const send = (tok) => fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Porthole-Token': tok }, body: JSON.stringify(body) });
    let r = await send(writeToken || await freshToken());
    if (r.status === 403) r = await send(await freshToken());
    let j = null;
    try { j = await r.json(); } catch (e) { j = { error: r.statusText }; }
    return { ok: r.ok, status: r.status, j };
  }
  $('keep').onclick = async () => {
    // While following live the visible window is the last N seconds.
    const to = Math.ceil(view.follow ? liveEdge() : view.to), from = Math.floor(to - span());
    toast('saving t=' + from + '..' + to + '…');
    const r = await post('/api/save', { from, to, scenario: 'ui' });
    if (r.ok) toast('Kept: ' + (r.j.to - r.j.from) / 1000 + ' s written to', r.j.path);
    else toast('Not kept: ' + (r.j.error || r.status));
  };

  // --- restart -----------------------------------------------------------------
  $('restart').onclick = async () => {
    if (!window.confirm('Restart the app? Its process is stopped and started again; the timeline keeps what it has.')) return;
    const r = await post('/api/restart', { confirmed: true });
    toast(r.ok ? 'Restarting the app…' : 'Not restarted: ' + (r.j.error || r.status));
  };

  // --- the database inspector ---------------------------------------------------------
  function table(res) {
    const box = $('db-result'); box.textContent = '';
    const t = document.createElement('table');
    const hr = document.createElement('tr');
    for (const c of res.columns || []) { const th = document.createElement('th'); th.textContent = c.name + (c.type ? ' ' + c.type : ''); hr.append(th); }
    t.append(hr);
    for (const row of res.rows || []) {
      const tr = document.createElement('tr');
      for (const v of row) { const td = document.createElement('td'); if (v === null) { td.textContent = 'NULL'; td.className = 'null'; } else td.textContent = String(v); tr.append(td); }
      t.append(tr);
    }
    box.append(t);
    if (res.error) dbError(res.error);
  }
  function dbError(msg) { const e = $('db-error'); e.hidden = !msg; e.textContent = msg || ''; }
  async function dbTables() {
    dbError('');
    const box = $('db-tables'); box.textContent = 'loading…';
    const r = await fetch('/api/db/tables'); const j = await r.json();
    box.textContent = '';
    if (!r.ok) { dbError(j.error); return; }
    if (j.error) dbError(j.error);
    for (const t of j.tables || []) {
      const d = document.createElement('div');
      d.className = 'db-table'; d.dataset.name = t.name;
      const a = document.createElement('span'); a.textContent = t.name;
      const b = document.createElement('span'); b.className = 'rows'; b.textContent = t.rows >= 0 ? t.rows : '?';
      d.append(a, b);
      d.onclick = async () => {
        dbError('');
        const rr = await fetch('/api/db/page?table=' + encodeURIComponent(t.name) + '&limit=200');
        const jj = await rr.json();
        if (!rr.ok) dbError(jj.error); else table(jj);
      };
      box.append(d);
    }
  }
  $('db').onclick = () => { $('dbdlg').showModal(); dbTables(); };
  $('db-run').onclick = async () => {
    dbError('');
    const r = await post('/api/db/query', { sql: $('db-sql').value });
    if (!r.ok) { dbError(r.j.error || String(r.status)); $('db-result').textContent = ''; } else table(r.j);
  };

  // --- hooks for tests and the bench (no effect on the page) -----------------------
  window.__ph = {
    laneCounts() { const o = {}; for (const l of LANES) o[l.id] = S.lanes[l.id].total; return o; },
    laneRect(id) { const tops = laneTops(); const r = canvas.getBoundingClientRect(); return { x: r.left + LABEL_W, y: r.top + tops[id], w: plotW(), h: laneById[id].h }; },
    xOf: (t) => canvas.getBoundingClientRect().left + xOf(t),
    marks: (id) => marksOf(S.lanes[id]).map((m) => ({ t0: m.t0, t1: m.t1, kind: m.ev && m.ev.event, label: m.label, color: m.color,
      row: m.row | 0, who: m.who === undefined ? null : IO_WHO[m.who], data: m.ev ? m.ev.data : undefined, args: m.args })),
    // Opens the detail panel on a lane's i-th mark (marks(id) order).
    open(id, i) { const m = marksOf(S.lanes[id])[i]; if (m) { m.lane = id; showDetail(m); } return !!m; },
    findings: () => ({ state: F.state, kind: findingsText().kind, text: findingsText().text, n: F.answer ? (F.answer.findings || []).length : null,
      trace: F.answer && F.answer.trace ? F.answer.trace : null, asked: F.answer ? F.answer.asked || null : null,
      fromTrace: F.answer ? (F.answer.findings || []).filter((f) => f.source === 'trace').map((f) => ({ id: f.id, title: f.title, window: f.window || null })) : [],
      fromIo: F.answer ? (F.answer.findings || []).filter((f) => f.source === 'iotrace').map((f) => ({ id: f.id, title: f.title, window: f.window || null })) : [],
      labels: F.marks.map((m) => m.label),
      drawnTrace: F.marks.filter((m) => m.f.source === 'trace' && m.t1 >= view.from && m.t0 <= view.to).length }),
    emptyReason: (id) => emptyReason(laneById[id], false),
    view: () => ({ from: view.from, to: view.to, follow: view.follow }),
    setView: (from, to) => setView(from, to, false),
    askPrompt,
    drawTimes,
    selected: () => (selected ? { label: selected.label, lane: selected.lane, t0: selected.t0, t1: selected.t1, finding: selected.f ? selected.f.id : null } : null),
    drawNow() { draw(); },
    // After each WebSocket message: what the store holds and how far the
    // newest event is behind the live edge (bench/ui_stream.mjs).
    probe(fn) {
      batchProbe = fn ? () => fn({ count: S.count, kinds: S.kinds, lastT: S.lastT, edge: liveEdge(), appDropped: S.appDropped, version: S.version }) : null;
    },
    stats: () => ({ count: S.count, kinds: { ...S.kinds }, ioRecordings: S.ioRecordings.slice(), lastT: S.lastT, edge: liveEdge(), appDropped: S.appDropped, version: S.version,
      restarts: S.restarts.slice(), hello: S.hello, conn: $('conn-text').textContent, state: $('conn').dataset.state }),
    drawn: (id) => drawn[id] || 0,
    // What the last draw put on the canvas, in page coordinates.
    labels() {
      const r = canvas.getBoundingClientRect();
      return F.labels.map((b) => ({ text: b.text, full: b.full, inside: b.inside, dark: b.dark, x: r.left + b.x, y: r.top + b.y, w: b.w, h: b.h }));
    },
    findingBars() {
      const r = canvas.getBoundingClientRect();
      return F.marks.filter((m) => m.box).map((m) => ({ id: m.f.id, title: m.f.title, x: r.left + m.box.x, y: r.top + m.box.y, w: m.box.w, h: m.box.h }));
    },
    canvasRect() { const r = canvas.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; },
    axis: () => ({ origin: origin(), ticks: axisTicks.slice(), range: $('range').textContent }),
    legend: () => LEGEND.map(([lane, name, items]) => ({ lane, name, items: items.map(([color, what]) => ({ color, what })) })),
    highlighted: () => ({ ...highlighted }),
    system: () => ({ state: SY.state, trace: SY.trace, states: SY.states.length, freq: SY.freq.length, thread: SY.thread, note: SY.note, error: SY.error,
      from: SY.from, to: SY.to, classes: [...new Set(SY.states.map((x) => x[2]))], lanes: LANES.filter((l) => l.system).map((l) => ({ id: l.id, h: l.h })) }),
    systemOver: (a, b) => systemOver(a, b),
    logSelected: () => (selectedLog ? { t: selectedLog.t, message: selectedLog.data && selectedLog.data.message } : null),
    line(o) { ingestLine(o); },
    hoverAt: (x, y) => hoverAt(x, y),
    inject(ev) { ingest(ev); },
    withCollectors(cols) { if (S.hello) S.hello.collectors = cols; dirty = true; },
    // Loads n synthetic events spread over `seconds` (bench only).
    loadSynthetic(n, seconds) {
      resetStore();
      // io requests split main thread / app / others against pid 100.
      if (!S.procs.length) S.procs.push({ startedAt: 0, pid: 100 });
      const kinds = ['recompose', 'state_write', 'frame', 'db_end', 'http_end', 'log', 'memory', 'blocked', 'work_end', 'nav', 'device', 'io'];
      const T = seconds * 1000;
      for (let i = 0; i < n; i++) {
        const t = Math.floor(i / n * T) + 1000, k = kinds[i % kinds.length];
        const data = { name: 'Row' + (i % 40), keys: i % 3 ? ['cart.total'] : ['unnamed#1f'], totalMs: 20 + i % 40, missedFrames: 1 + i % 3,
          elapsedMs: String(5 + i % 200), sql: 'SELECT 1', thread: i % 9 ? 'db' : 'main', method: 'GET', url: '/x', status: String(i % 17 ? 200 : 500),
          level: ['I', 'W', 'E', 'D'][i % 4], tag: 'bench', message: 'line ' + i, rssMb: 50 + (i % 100), heapUsedMb: 20, durationMs: 150,
          top: 'f()', workId: 'w', attempt: '1', state: 'SUCCEEDED', route: 'r', kind: 'clocks',
          dev: '254,0', op: 'write', rwbs: 'WS', bytes: 4096, latencyMs: (i % 97) / 10, pid: 100 + i % 3, tid: 100 + i % 5, requestId: i };
        ingest({ event: k, t, seq: i, data });
      }
      // The system lanes too, as a chosen trace fills them: 50,000 main-
      // thread states and 4 CPUs' frequency steps over the same span.
      const cls = ['running', 'runnable', 'sleeping', 'io', 'sleeping', 'blocked'], NS = 50000;
      SY.seq++;
      Object.assign(SY, { trace: 'synthetic', state: 'ok', thread: { tid: 100, name: 'main' }, note: '', error: '', from: 1000, to: 1000 + T, freq: [], freqMax: 0 });
      SY.states = [];
      for (let i = 0; i < NS; i++) SY.states.push([1000 + i * T / NS, T / NS, cls[i % cls.length], 'S', i % 4, i % 7 ? 0 : 42, i % 7 ? '' : 'kworker/0:1']);
      SY.maxDur = T / NS;
      for (let c = 0; c < 4; c++) {
        const pts = [];
        for (let i = 0; i < 2000; i++) pts.push([1000 + i * T / 2000, 600000 + ((i * 7 + c) % 13) * 100000]);
        SY.freq.push({ cpu: c, points: pts });
      }
      for (const l of LANES) if (l.system) l.h = l.sysH;
      view.follow = false; $('follow').checked = false;
      setView(1000, 1000 + T, false);
    },
  };

  // The legend strip under the timeline, from LEGEND.
  function renderLegend() {
    const box = $('legend');
    for (const [, name, items] of LEGEND) {
      const g = el('span', 'lg');
      g.append(el('b', '', name));
      for (const [color, what, kind] of items) {
        const it = el('span', 'lg');
        const sw = el('i', 'sw' + (kind ? ' ' + kind : ''));
        sw.style.background = color;
        if (kind === 'box') sw.style.borderColor = color;
        it.append(sw, document.createTextNode(what));
        g.append(it);
      }
      box.append(g);
    }
  }

  renderLegend();
  resetStore();
  resize();
  connect();
  loadTraces();
  requestAnimationFrame(frame);
})();
