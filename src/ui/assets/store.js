// SPDX-License-Identifier: Apache-2.0
// store.js: the store every event goes into (per lane, sorted marks and
// pre-binned summaries; the log list), and ingest(), which turns one event
// into marks.
'use strict';

// --- the store -----------------------------------------------------------
// Each lane keeps its marks sorted by start time (binary search finds the
// visible ones when zoomed in) and, beside them, pre-binned summaries at
// a few zoom levels: per bucket of LEVEL_W[k] ms and per style class
// (color, row), how many marks and their tallest height or value range.
// Both are built as events arrive, so a zoomed-out draw touches at most a
// few buckets per pixel column, never every event (bench/ui_draw.mjs).
const store = {
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
  for (const l of LANES) store.lanes[l.id] = newLane();
  store.logs = []; store.logBySeq = new Map(); store.seen = new Map(); store.lastT = null; store.firstT = null;
  store.count = 0; store.open = new Map(); store.stallEnd = new Map(); store.kinds = {}; store.version++; store.restarts = []; store.appDropped = 0;
  store.hostSeen = new Set(); store.ioRecordings = [];
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
  const L = store.lanes[laneId];
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
  const rows = store.lanes[laneId].rows;
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
  const prev = store.seen.get(seq);
  if (prev === undefined) { store.seen.set(seq, t); return false; }
  if (prev === t) return true;
  if (Array.isArray(prev)) {
    if (prev.includes(t)) return true;
    prev.push(t);
    return false;
  }
  store.seen.set(seq, [prev, t]);
  return false;
}
// The app restarted at about t: a mark on the device lane, and the bar
// says so (the timeline keeps the old process's events).
function restarted(t, pid) {
  store.restarts.push({ t, pid });
  addMark('device', { t0: t, t1: t, color: COLOR.note, label: 'app restarted' + (pid ? ' (pid ' + pid + ')' : ''), restart: true,
    ev: { event: 'restart', t, seq: -1, data: { pid } } });
  dirty = true;
}

// The app's pid at app time t: the hello of the newest process that had
// started by then (a restarted app has another pid), else the oldest.
function appPidAt(t) {
  let pid = 0;
  for (const p of store.procs) { if (p.startedAt <= t || !pid) pid = p.pid; else break; }
  return pid;
}
// Who issued a block request, by `porthole io`'s rule (docs/iotrace.md):
// the app's main thread when tid is the app's pid, the app when pid is.
const IO_WHO = ['main thread', 'app', 'other process'];
const IO_COLOR = [COLOR.ioMain, COLOR.ioApp, COLOR.ioOther];
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
    if (n > 0) { store.appDropped += n; renderConn(); }
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
    if (store.hostSeen.has(key)) return;
    store.hostSeen.add(key);
  }
  store.count++;
  store.kinds[ev.event] = (store.kinds[ev.event] || 0) + 1;
  if (store.lastT === null || t > store.lastT) store.lastT = t;
  if (store.firstT === null || t < store.firstT) store.firstT = t;
  switch (ev.event) {
    case 'recompose':
      addMark('recompose', { t0: t, t1: t, row: 1, color: COLOR.plain, label: d.name || d.id || 'recompose', ev });
      break;
    case 'state_write': {
      const keys = Array.isArray(d.keys) ? d.keys : [];
      const named = Array.isArray(d.named) ? d.named : keys.filter((k) => !isAnonKey(k));
      const anon = named.length === 0;
      addMark('recompose', { t0: t, t1: t, row: anon ? 2 : 0, anon, color: anon ? COLOR.anon : COLOR.named,
        label: 'state write ' + (named.length ? named.join(', ') : (keys.length + ' anonymous')), ev });
      break;
    }
    case 'frame': {
      const total = num(d.totalMs) || 0;
      const missed = num(d.missedFrames) || 0;
      addMark('frames', { t0: t, t1: t + total, color: missed >= 3 || total >= 250 ? COLOR.err : COLOR.warn,
        hfrac: Math.min(1, 0.35 + missed / 6), label: 'frame ' + total + ' ms, ' + missed + ' missed' + (d.worstPhase ? ' (' + d.worstPhase + ')' : ''), ev });
      break;
    }
    case 'blocked': {
      // A stall is sent while it lasts (ongoing, then closed), every
      // event with its start as t: each draws only what it adds past
      // the last one, so the bar grows instead of piling up.
      const dur = num(d.durationMs) || 0;
      const from = store.stallEnd.get(t) || t;
      const label = 'stall ' + dur + ' ms in ' + (d.top || '?') + (d.ongoing === true ? ' (still going)' : '');
      if (t + dur > from || from === t) addMark('main', { t0: from, t1: Math.max(from, t + dur), row: 0, color: COLOR.err, label, ev });
      store.stallEnd.set(t, Math.max(from, t + dur));
      break;
    }
    case 'db_start':
      store.open.set('db:' + d.id, { t, ev });
      break;
    case 'db_end': {
      const el = num(d.elapsedMs) || 0;
      // The bound values come with the start (db_start.args).
      const st = store.open.get('db:' + d.id);
      const args = d.args !== undefined ? d.args : st && st.ev.data ? st.ev.data.args : undefined;
      store.open.delete('db:' + d.id);
      const onMain = truthy(d.onMainThread) || d.mainThread === true || d.thread === 'main';
      const color = d.error ? COLOR.err : onMain ? COLOR.mainq : COLOR.db;
      const label = (onMain ? 'main-thread query ' : 'query ') + el + ' ms: ' + (d.sql || '');
      addMark('db', { t0: t - el, t1: t, row: rowFor('db', t - el, t, 3), color, label, ev, args });
      if (onMain) addMark('main', { t0: t - el, t1: t, row: 1, color: COLOR.mainq, label, ev, args });
      break;
    }
    case 'http_start':
      store.open.set('http:' + d.id, { t, ev });
      break;
    case 'http_end': {
      const el = num(d.elapsedMs) || 0;
      store.open.delete('http:' + d.id);
      const st = num(d.status);
      const bad = st >= 400 || d.phase === 'failed';
      addMark('http', { t0: t - el, t1: t, row: rowFor('http', t - el, t, 3), color: bad ? COLOR.err : el >= 3000 ? COLOR.warn : COLOR.http,
        label: (d.method || '') + ' ' + (d.url || '') + ' ' + (isNaN(st) ? d.phase || '' : st) + ' · ' + el + ' ms', ev });
      break;
    }
    case 'work_start':
      store.open.set('work:' + d.id, { t, ev });
      break;
    case 'work_end': {
      const el = num(d.elapsedMs) || 0;
      const st = store.open.get('work:' + d.id);
      store.open.delete('work:' + d.id);
      const name = d.name || (st && st.ev.data && st.ev.data.name) || d.workId || 'job';
      const state = d.state || '';
      addMark('work', { t0: t - el, t1: t, row: rowFor('work', t - el, t, 2),
        color: state === 'SUCCEEDED' ? COLOR.ok : state === 'FAILED' ? COLOR.err : COLOR.warn,
        label: name + ' attempt ' + (d.attempt || '?') + ': ' + state + (d.error ? ' (' + d.error + ')' : ''), ev });
      break;
    }
    case 'nav':
      addMark('nav', { t0: t, t1: t, color: COLOR.note, label: 'nav ' + (d.direction || '') + ' ' + (d.route || '') + (d.deepLink ? ' ← ' + d.deepLink : ''), ev });
      break;
    case 'input':
      if (d.action === 'tap') {
        const ms = num(d.tapMs) || 0;
        addMark('nav', { t0: t, t1: t + ms, color: ms > 500 ? COLOR.err : ms > 100 ? COLOR.warn : COLOR.ok, label: 'tap ' + (d.target || '') + ' answered in ' + ms + ' ms', ev });
      }
      break;
    case 'mark':
      addMark('nav', { t0: t, t1: t, color: COLOR.text, label: 'mark ' + (d.label || ''), ev });
      break;
    case 'memory': {
      const v = num(d.rssMb);
      addMark('memory', { t0: t, t1: t, value: isNaN(v) ? num(d.heapUsedMb) : v, color: COLOR.mem,
        label: 'rss ' + d.rssMb + ' MB, heap ' + d.heapUsedMb + ' MB', ev });
      break;
    }
    case 'gc':
      addMark('memory', { t0: t, t1: t + (num(d.pausedMs) || 0), color: COLOR.warn, label: 'gc ' + (d.count || ''), gc: true, ev });
      break;
    case 'device':
      addMark('device', { t0: t, t1: t, color: d.kind === 'lowMemory' || d.kind === 'trimMemory' ? COLOR.warn : COLOR.plain, label: 'device ' + (d.kind || ''), ev });
      break;
    case 'startup':
      addMark('device', { t0: num(d.originMs) || t, t1: t, color: COLOR.note, label: 'startup ' + (d.classification || '') + ' ' + (d.totalMs || '') + ' ms', ev });
      break;
    case 'log': {
      store.logs.push(ev);
      if (typeof ev.seq === 'number') store.logBySeq.set(ev.seq, ev);
      logDirty = true;
      if (d.level === 'W' || d.level === 'E' || d.level === 'F')
        addMark('warnings', { t0: t, t1: t, color: d.level === 'W' ? COLOR.warn : COLOR.err, label: d.level + ' ' + (d.tag || '') + ': ' + (d.message || ''), ev });
      break;
    }
    case 'log_append': {
      const parent = store.logBySeq.get(d.seq);
      if (parent) { parent.more = (parent.more || '') + '\n' + (d.text || ''); }
      break;
    }
    case 'io':
      ioMark(t, d, ev);
      break;
    case 'io_recording': // what `porthole iotrace attach` joined
      store.ioRecordings.push(d);
      dirty = true;
      break;
    case 'strict_violation':
    case 'exit':
    case 'leak':
      addMark('warnings', { t0: t, t1: t, color: COLOR.err, label: ev.event + ' ' + (d.reason || d.category || d.shortDescription || ''), ev });
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
    const h = store.hello;
    if (h && typeof h.startedAt === 'number' && store.firstT !== null && store.firstT < h.startedAt) restarted(h.startedAt, h.pid);
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
