// Porthole's live timeline.  Vanilla JS, one canvas, no framework.
//
// Events never live in framework state: they go into a plain store (one
// sorted array of marks per lane, plus the log list), and the canvas is
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
  };
  const LABEL_W = 132, AXIS_H = 22;

  // Lanes, top to bottom.  `need` names the hello collectors that feed a
  // lane: an empty lane says which is missing instead of looking quiet.
  const LANES = [
    { id: 'findings', name: 'Findings', h: 38 },
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
  ];
  const laneById = {};
  LANES.forEach((l) => { laneById[l.id] = l; });

  // --- the store -----------------------------------------------------------
  const S = {
    lanes: {}, logs: [], seen: new Map(), hello: null, status: null,
    statusAt: 0, lastT: null, firstT: null, count: 0, version: 0,
    open: new Map(), // http/db/work starts not yet ended, by id
    kinds: {},
  };
  function resetStore() {
    for (const l of LANES) S.lanes[l.id] = { marks: [], sorted: true, maxDur: 0, rows: [0, 0, 0, 0], total: 0 };
    S.logs = []; S.seen = new Map(); S.lastT = null; S.firstT = null;
    S.count = 0; S.open = new Map(); S.kinds = {}; S.version++;
    logDirty = true;
  }

  const num = (v) => (v === undefined || v === null || v === '' ? NaN : Number(v));
  const truthy = (v) => v === true || v === 'true';

  function addMark(laneId, m) {
    const L = S.lanes[laneId];
    const ms = L.marks;
    if (ms.length && ms[ms.length - 1].t0 > m.t0) L.sorted = false;
    const d = m.t1 - m.t0;
    if (d > L.maxDur) L.maxDur = d;
    ms.push(m);
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

  function ingest(ev) {
    if (!ev || typeof ev.event !== 'string' || typeof ev.t !== 'number') return;
    if (ev.event === 'dropped') return; // counted by the host, never stored
    const proc = S.hello ? S.hello.startedAt : 0;
    if (typeof ev.seq === 'number' && ev.seq >= 0) {
      let set = S.seen.get(proc);
      if (!set) { set = new Set(); S.seen.set(proc, set); }
      if (set.has(ev.seq)) return;
      set.add(ev.seq);
    }
    const d = ev.data || {};
    const t = ev.t;
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
        const dur = num(d.durationMs) || 0;
        addMark('main', { t0: t, t1: t + dur, row: 0, color: C.err, label: 'stall ' + dur + ' ms in ' + (d.top || '?'), ev });
        break;
      }
      case 'db_start':
        S.open.set('db:' + d.id, { t, ev });
        break;
      case 'db_end': {
        const el = num(d.elapsedMs) || 0;
        S.open.delete('db:' + d.id);
        const onMain = truthy(d.onMainThread) || d.mainThread === true || d.thread === 'main';
        const color = d.error ? C.err : onMain ? C.mainq : C.db;
        const label = (onMain ? 'main-thread query ' : 'query ') + el + ' ms: ' + (d.sql || '');
        addMark('db', { t0: t - el, t1: t, row: rowFor('db', t - el, t, 3), color, label, ev });
        if (onMain) addMark('main', { t0: t - el, t1: t, row: 1, color: C.mainq, label, ev });
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
        logDirty = true;
        if (d.level === 'W' || d.level === 'E' || d.level === 'F')
          addMark('warnings', { t0: t, t1: t, color: d.level === 'W' ? C.warn : C.err, label: d.level + ' ' + (d.tag || '') + ': ' + (d.message || ''), ev });
        break;
      }
      case 'log_append': {
        const parent = S.logs.find((l) => l.seq === d.seq);
        if (parent) { parent.more = (parent.more || '') + '\n' + (d.text || ''); }
        break;
      }
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
      if (o.hello) setHello(o.hello);
      if (o.status) setStatus(o.status);
      const evs = (o.timeline && o.timeline.events) || [];
      for (const e of evs) ingest(e);
      findingsTouch();
      return;
    }
    if (o.ui === 'status') { setStatus(o.status); return; }
    if (typeof o.event === 'string') { ingest(o); return; }
    if (o.result && typeof o.result === 'object') {
      if (typeof o.result.protocol === 'number' && o.result.packageName) setHello(o.result);
      if (Array.isArray(o.result.events)) for (const e of o.result.events) ingest(e);
    }
  }

  // --- the socket ------------------------------------------------------------
  let ws = null, wsBackoff = 250, wsUp = false;
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
    };
    ws.onclose = () => {
      wsUp = false; renderConn();
      setTimeout(connect, wsBackoff);
      wsBackoff = Math.min(wsBackoff * 2, 4000);
    };
  }
  setInterval(() => { if (ws && ws.readyState === 1) ws.send('ping'); }, 20000);

  function setHello(h) {
    S.hello = h;
    $('app').textContent = (h.packageName || '?') + (h.device ? ' · ' + h.device : '') + (h.pid ? ' · pid ' + h.pid : '');
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
      if (S.status.link.warning) text += ' (' + S.status.link.warning + ')';
    } else if (wsUp) { state = 'connecting'; text = 'connected to porthole ui'; }
    el.dataset.state = state;
    $('conn-text').textContent = text;
  }

  // --- the clock and the view -----------------------------------------------
  const view = { from: 0, to: 30000, follow: true, cursor: null };
  let framework = false;
  let dirty = true, logDirty = true, lastLogs = 0;

  // The live edge on the app clock: this machine's clock when the app runs
  // here (the server says so), else the newest event.
  function liveEdge() {
    const st = S.status;
    if (st && st.link && st.link.clockShared) return st.now + (performance.now() - S.statusAt);
    if (S.lastT !== null) return S.lastT;
    return st ? st.now : 0;
  }
  function span() { return view.to - view.from; }
  function setView(from, to, follow) {
    const minSpan = 5, maxSpan = 86400000;
    let s = Math.min(maxSpan, Math.max(minSpan, to - from));
    const mid = (from + to) / 2;
    view.from = mid - s / 2; view.to = mid + s / 2;
    if (follow !== undefined) { view.follow = follow; $('follow').checked = follow; }
    dirty = true;
    findingsTouch();
  }
  function plotW() { return canvas.clientWidth - LABEL_W; }
  function xOf(t) { return LABEL_W + (t - view.from) / span() * plotW(); }
  function tOf(x) { return view.from + (x - LABEL_W) / plotW() * span(); }

  // --- findings: the server's answers, never the page's own --------------
  const F = { state: 'idle', answer: null, asked: null, error: null, timer: 0, seq: 0, marks: [] };
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
    return moved || newer;
  }
  async function askFindings() {
    const from = Math.floor(view.from), to = Math.ceil(view.to);
    if (from >= to) return;
    const version = S.status && S.status.store ? S.status.store.version : 0;
    const my = ++F.seq;
    F.state = 'loading'; dirty = true;
    try {
      const r = await fetch('/api/findings?from=' + from + '&to=' + to);
      const j = await r.json();
      if (my !== F.seq) return;
      if (!r.ok) throw new Error(j.error || r.statusText);
      F.answer = j; F.asked = { from, to, version }; F.state = 'ok'; F.error = null;
      F.marks = [];
      for (const f of j.findings || []) {
        const w = f.window || {};
        const t0 = f.spanning ? view.from : num(w.from), t1 = f.spanning ? view.to : num(w.to);
        F.marks.push({ t0, t1, f, color: f.severity === 'error' ? C.err : f.severity === 'warning' ? C.warn : C.note,
          label: f.severity + ': ' + f.title });
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
    if (!(F.answer.findings || []).length)
      return { text: 'looked: nothing found (' + (F.answer.quiet || []).length + ' checks quiet)', color: C.ok, kind: 'empty' };
    return { text: F.answer.findings.length + ' finding' + (F.answer.findings.length > 1 ? 's' : ''), color: C.dim, kind: 'ok' };
  }

  // --- drawing ---------------------------------------------------------------
  let dpr = 1;
  function resize() {
    dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    canvas.width = Math.max(1, Math.round(w * dpr));
    canvas.height = Math.max(1, Math.round(h * dpr));
    dirty = true;
  }
  window.addEventListener('resize', resize);

  function laneTops() {
    const tops = {};
    let y = AXIS_H;
    for (const l of LANES) { tops[l.id] = y; y += l.h; }
    return tops;
  }
  // First index whose t0 >= t (marks sorted by t0).
  function lowerBound(ms, t) {
    let lo = 0, hi = ms.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (ms[mid].t0 < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function visible(L) {
    if (!L.sorted) { L.marks.sort((a, b) => a.t0 - b.t0); L.sorted = true; }
    const ms = L.marks;
    return [lowerBound(ms, view.from - L.maxDur), lowerBound(ms, view.to + 1), ms];
  }
  function emptyReason(l, inView) {
    if (l.id === 'findings') return null;
    const L = S.lanes[l.id];
    if (inView) return null;
    const cols = S.hello && Array.isArray(S.hello.collectors) ? S.hello.collectors : null;
    if (!S.hello && (!S.status || S.status.link.state !== 'connected'))
      return 'not connected' + (S.status && S.status.link.error ? ': ' + S.status.link.error : '');
    if (cols && l.need && !l.need.some((n) => cols.includes(n)))
      return l.what + ' not instrumented (collectors: ' + (cols.join(', ') || 'none') + ')';
    if (l.id === 'frames' && !L.total) return 'no late frames: the app sends only janky ones';
    if (l.id === 'warnings' && !L.total) return 'no W/E/F log lines yet';
    if (!L.total) return 'instrumented; nothing has happened yet';
    return 'nothing in this window (' + L.total + ' elsewhere)';
  }

  function draw() {
    const t0 = performance.now();
    const W = canvas.clientWidth, H = canvas.clientHeight;
    if (view.follow) {
      const s = span(), e = liveEdge();
      view.to = e + s * 0.02; view.from = view.to - s;
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = C.bg; ctx.fillRect(0, 0, W, H);
    drawAxis(W, H);
    const tops = laneTops();
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (const l of LANES) {
      const y = tops[l.id];
      ctx.fillStyle = C.grid; ctx.fillRect(0, y + l.h - 1, W, 1);
      ctx.fillStyle = C.dim; ctx.fillText(l.name, 8, y + l.h / 2);
      let n = 0;
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL_W, y, W - LABEL_W, l.h - 1); ctx.clip();
      if (l.id === 'findings') n = drawFindings(l, y);
      else if (l.id === 'memory') n = drawMemory(l, y);
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
    if (selected) {
      const x0 = xOf(selected.t0), x1 = Math.max(x0 + 2, xOf(selected.t1));
      const l = selected.lane ? laneById[selected.lane] : null;
      if (l) { ctx.strokeStyle = C.text; ctx.strokeRect(x0 - 1.5, tops[l.id] + 1.5, x1 - x0 + 3, l.h - 4); }
    }
    ctx.fillStyle = C.grid; ctx.fillRect(LABEL_W - 1, 0, 1, H);
    renderRange();
    const dt = performance.now() - t0;
    drawTimes.push(dt);
    if (drawTimes.length > 2000) drawTimes.splice(0, 1000);
  }
  const drawTimes = [];
  const drawn = {};

  function niceStep(ms) {
    const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000];
    for (const s of steps) if (s >= ms) return s;
    return 7200000;
  }
  function fmtT(t, step) {
    if (step >= 1000) return (t / 1000).toFixed(0) + ' s';
    if (step >= 100) return (t / 1000).toFixed(1) + ' s';
    return (t / 1000).toFixed(3) + ' s';
  }
  function drawAxis(W, H) {
    const step = niceStep(span() / Math.max(1, plotW() / 110));
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    let t = Math.ceil(view.from / step) * step;
    for (; t <= view.to; t += step) {
      const x = Math.round(xOf(t)) + 0.5;
      ctx.fillStyle = C.grid; ctx.fillRect(x, AXIS_H - 4, 1, H);
      ctx.fillStyle = C.dim; ctx.fillText(fmtT(t, step), x + 3, AXIS_H / 2);
    }
    ctx.fillStyle = C.dim; ctx.fillText('uptime', 8, AXIS_H / 2);
  }

  // Marks of one lane: thin ones share a pixel column, so a dense second
  // costs one rectangle per column and color, not one per event.
  function drawLane(l, y) {
    const L = S.lanes[l.id];
    const [a, b, ms] = visible(L);
    const rows = l.id === 'recompose' ? 3 : l.id === 'http' || l.id === 'db' ? 3 : l.id === 'work' || l.id === 'main' ? 2 : 1;
    const rh = (l.h - 4) / rows;
    const sc = plotW() / span(), base = LABEL_W - view.from * sc;
    // The last pixel column drawn per color and row: interleaved kinds
    // (recompositions and writes) still cost one rectangle per column.
    const last = {};
    let n = 0;
    for (let i = a; i < b; i++) {
      const m = ms[i];
      if (m.t1 < view.from) continue;
      if (m.anon && !framework) continue;
      n++;
      let x0 = base + m.t0 * sc, x1 = base + m.t1 * sc;
      if (x1 - x0 < 2) {
        const px = x0 | 0, r = m.row | 0;
        let lr = last[m.color];
        if (!lr) lr = last[m.color] = [-1, -1, -1, -1];
        if (lr[r] === px) continue;
        lr[r] = px;
        x0 = px; x1 = px + 2;
      }
      const row = m.row | 0;
      let hh = rh - 2, yy = y + 2 + row * rh;
      if (m.hfrac) { hh = (l.h - 6) * m.hfrac; yy = y + l.h - 3 - hh; }
      if (x0 < LABEL_W - 2) x0 = LABEL_W - 2;
      ctx.fillStyle = m.color;
      ctx.fillRect(x0, yy, x1 - x0, hh);
    }
    return n;
  }
  function drawMemory(l, y) {
    const L = S.lanes[l.id];
    const [a, b, ms] = visible(L);
    let lo = Infinity, hi = -Infinity, n = 0;
    for (let i = a; i < b; i++) { const v = ms[i].value; if (v >= 0) { if (v < lo) lo = v; if (v > hi) hi = v; } }
    if (hi < lo) return 0;
    if (hi === lo) { hi += 1; lo = Math.max(0, lo - 1); }
    ctx.strokeStyle = C.mem; ctx.lineWidth = 1.5; ctx.beginPath();
    let first = true;
    for (let i = Math.max(0, a - 1); i < Math.min(ms.length, b + 1); i++) {
      const m = ms[i];
      if (m.gc) { ctx.fillStyle = C.warn; ctx.fillRect(xOf(m.t0), y + 2, 2, 6); continue; }
      if (!(m.value >= 0)) continue;
      const x = xOf(m.t0), yy = y + l.h - 4 - (m.value - lo) / (hi - lo) * (l.h - 10);
      if (first) { ctx.moveTo(x, yy); first = false; } else ctx.lineTo(x, yy);
      n++;
    }
    ctx.stroke();
    ctx.fillStyle = C.dim; ctx.fillText(Math.round(hi) + ' MB', canvas.clientWidth - 60, y + 8);
    return n;
  }
  function drawFindings(l, y) {
    const st = findingsText();
    const stale = st.kind === 'stale' || st.kind === 'loading';
    let n = 0;
    ctx.globalAlpha = stale ? 0.45 : 1;
    const rh = (l.h - 16) / 2;
    F.marks.forEach((m, i) => {
      const x0 = Math.max(LABEL_W - 2, xOf(m.t0)), x1 = Math.max(x0 + 3, xOf(m.t1));
      ctx.fillStyle = m.color;
      ctx.fillRect(x0, y + 2 + (i % 2) * rh, x1 - x0, rh - 1);
      n++;
    });
    ctx.globalAlpha = 1;
    // The state is always said, so "in flight" never reads as "nothing".
    ctx.fillStyle = st.color;
    ctx.fillText(st.text, LABEL_W + 10, y + l.h - 7);
    return n + 1;
  }
  function renderRange() {
    const s = span();
    $('range').textContent = 't=' + Math.round(view.from) + '..' + Math.round(view.to) + ' (' + (s >= 10000 ? (s / 1000).toFixed(0) : (s / 1000).toFixed(2)) + ' s)';
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
    let best = null, bestD = Infinity;
    const consider = (m) => {
      if (m.anon && !framework) return;
      const d = t < m.t0 ? m.t0 - t : t > m.t1 ? t - m.t1 : 0;
      if (d <= slack && (d < bestD || (d === bestD && best && (m.t1 - m.t0) < (best.t1 - best.t0)))) { best = m; bestD = d; }
    };
    if (l.id === 'findings') F.marks.forEach(consider);
    else {
      const L = S.lanes[l.id];
      if (!L.sorted) visible(L);
      const ms = L.marks;
      for (let i = lowerBound(ms, t - slack - L.maxDur); i < ms.length && ms[i].t0 <= t + slack; i++) consider(ms[i]);
    }
    if (best) best.lane = l.id;
    return best;
  }
  const BULK = ['stack', 'sql', 'args', 'requestBody', 'responseBody', 'traceText', 'mainStack', 'detail', 'message', 'frames', 'phases'];
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
      const h = document.createElement('div'); h.className = 'bulk-name'; h.textContent = k;
      const p = document.createElement('pre'); p.textContent = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
      bulk.append(h, p);
    };
    if (m.f) {
      const f = m.f;
      $('detail-title').textContent = f.title;
      $('detail-sub').textContent = f.severity + ' · ' + f.confidence + ' · ' + f.id + (f.source ? ' · ' + f.source : '');
      if (f.window) row('window', 't=' + f.window.from + '..' + f.window.to);
      if (f.spanning) row('window', 'spanning (not on this axis)');
      row('count', f.count);
      if (f.status) row('status', f.status);
      if (f.where) row('where', f.where.path ? f.where.path + ':' + f.where.line : f.where.status);
      if (Array.isArray(f.detail)) pre('detail', f.detail.join('\n'));
      if (f.evidence) pre('evidence', f.evidence);
    } else {
      const ev = m.ev, d = ev.data || {};
      $('detail-title').textContent = m.label;
      $('detail-sub').textContent = ev.event + ' · t=' + ev.t + ' · seq ' + ev.seq;
      for (const k of Object.keys(d)) if (!BULK.includes(k)) row(k, d[k]);
      for (const k of BULK) if (d[k] !== undefined && d[k] !== '') pre(k, d[k]);
      if (ev.more) pre('continued', ev.more);
    }
    $('detail').hidden = false;
    resize();
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
  function zoomAt(t, factor) {
    const from = t - (t - view.from) * factor, to = t + (view.to - t) * factor;
    setView(from, to);
    if (view.follow) { const s = span(); view.to = liveEdge() + s * 0.02; view.from = view.to - s; }
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
  window.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'TEXTAREA' || e.target.tagName === 'INPUT') return;
    if (e.key === 'f') { view.follow = !view.follow; $('follow').checked = view.follow; dirty = true; }
    else if (e.key === '+' || e.key === '=') $('zoom-in').click();
    else if (e.key === '-') $('zoom-out').click();
    else if (e.key === 'Escape') $('detail-close').click();
  });
  function moveTo(t) {
    const s = span();
    view.cursor = t;
    setView(t - s / 2, t + s / 2, false);
  }

  // --- the log pane ------------------------------------------------------------
  const LOG_ROWS = 1500;
  let selectedLog = null;
  function renderLogs() {
    const box = $('log-rows');
    const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    const logs = S.logs.length > LOG_ROWS ? S.logs.slice(S.logs.length - LOG_ROWS) : S.logs;
    const frag = document.createDocumentFragment();
    for (const ev of logs) {
      const d = ev.data || {};
      const r = document.createElement('div');
      r.className = 'log ' + (d.level || '') + (ev === selectedLog ? ' sel' : '');
      r.setAttribute('role', 'listitem');
      r.dataset.t = ev.t;
      const t = document.createElement('span'); t.className = 't'; t.textContent = ev.t;
      const lv = document.createElement('span'); lv.className = 'lv'; lv.textContent = d.level || '?';
      const tag = document.createElement('span'); tag.className = 'tag'; tag.textContent = d.tag || '';
      const msg = document.createElement('span'); msg.className = 'msg'; msg.textContent = d.message || '';
      r.append(t, lv, tag, msg);
      r.onclick = () => { selectedLog = ev; moveTo(ev.t); logDirty = true; };
      frag.append(r);
    }
    box.textContent = '';
    box.append(frag);
    $('log-count').textContent = S.logs.length ? '(' + S.logs.length + ' lines)' : '(no lines yet)';
    if (atBottom && !selectedLog) box.scrollTop = box.scrollHeight;
  }

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
      const L = S.lanes[laneId];
      if (!L.sorted) visible(L);
      let n = 0;
      for (const m of L.marks) if (m.t1 >= from && m.t0 <= to && (!pred || pred(m))) n++;
      return n;
    };
    const rec = count('recompose', (m) => m.ev.event === 'recompose');
    const sw = count('recompose', (m) => m.ev.event === 'state_write' && !m.anon);
    const fr = count('frames');
    const st = S.lanes.main.marks.filter((m) => m.ev.event === 'blocked' && m.t1 >= from && m.t0 <= to);
    const mq = count('main', (m) => m.ev.event === 'db_end');
    const dbn = count('db'), http = count('http'), bad = count('http', (m) => m.color === C.err);
    const work = count('work'), warn = count('warnings');
    if (rec) parts.push('recompose ' + rec);
    if (sw) parts.push('named state writes ' + sw);
    if (fr) parts.push('late frames ' + fr);
    for (const s of st.slice(0, 3)) parts.push('a ' + s.ev.data.durationMs + ' ms main-thread stall at t=' + s.t0 + ' in ' + s.ev.data.top);
    if (mq) parts.push('main-thread queries ' + mq);
    if (dbn) parts.push('queries ' + dbn);
    if (http) parts.push('http calls ' + http + (bad ? ' (' + bad + ' failed)' : ''));
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
  async function post(path, body) {
    const r = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
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
    marks: (id) => S.lanes[id].marks.map((m) => ({ t0: m.t0, t1: m.t1, kind: m.ev && m.ev.event, label: m.label })),
    findings: () => ({ state: F.state, kind: findingsText().kind, text: findingsText().text, n: F.answer ? (F.answer.findings || []).length : null }),
    emptyReason: (id) => emptyReason(laneById[id], false),
    view: () => ({ from: view.from, to: view.to, follow: view.follow }),
    setView: (from, to) => setView(from, to, false),
    askPrompt,
    drawTimes,
    selected: () => (selected ? { label: selected.label, lane: selected.lane } : null),
    drawNow() { draw(); },
    drawn: (id) => drawn[id] || 0,
    inject(ev) { ingest(ev); },
    withCollectors(cols) { if (S.hello) S.hello.collectors = cols; dirty = true; },
    // Loads n synthetic events spread over `seconds` (bench only).
    loadSynthetic(n, seconds) {
      resetStore();
      const kinds = ['recompose', 'state_write', 'frame', 'db_end', 'http_end', 'log', 'memory', 'blocked', 'work_end', 'nav', 'device'];
      const T = seconds * 1000;
      for (let i = 0; i < n; i++) {
        const t = Math.floor(i / n * T) + 1000, k = kinds[i % kinds.length];
        const data = { name: 'Row' + (i % 40), keys: i % 3 ? ['cart.total'] : ['unnamed#1f'], totalMs: 20 + i % 40, missedFrames: 1 + i % 3,
          elapsedMs: String(5 + i % 200), sql: 'SELECT 1', thread: i % 9 ? 'db' : 'main', method: 'GET', url: '/x', status: String(i % 17 ? 200 : 500),
          level: ['I', 'W', 'E', 'D'][i % 4], tag: 'bench', message: 'line ' + i, rssMb: 50 + (i % 100), heapUsedMb: 20, durationMs: 150,
          top: 'f()', workId: 'w', attempt: '1', state: 'SUCCEEDED', route: 'r', kind: 'clocks' };
        ingest({ event: k, t, seq: i, data });
      }
      view.follow = false; $('follow').checked = false;
      setView(1000, 1000 + T, false);
    },
  };

  resetStore();
  resize();
  connect();
  requestAnimationFrame(frame);
})();
