// SPDX-License-Identifier: Apache-2.0
// hooks.js: window.__ph, the hooks the tests and the bench read and drive
// the page through (no effect on the page itself).
'use strict';

// --- hooks for tests and the bench (no effect on the page) -----------------------
window.__ph = {
  laneCounts() { const o = {}; for (const l of LANES) o[l.id] = store.lanes[l.id].total; return o; },
  laneRect(id) { const tops = laneTops(); const r = canvas.getBoundingClientRect(); return { x: r.left + LABEL_W, y: r.top + tops[id], w: plotW(), h: laneById[id].h }; },
  xOf: (t) => canvas.getBoundingClientRect().left + xOf(t),
  marks: (id) => marksOf(store.lanes[id]).map((m) => ({ t0: m.t0, t1: m.t1, kind: m.ev && m.ev.event, label: m.label, color: m.color,
    row: m.row | 0, who: m.who === undefined ? null : IO_WHO[m.who], data: m.ev ? m.ev.data : undefined, args: m.args })),
  // Opens the detail panel on a lane's i-th mark (marks(id) order).
  open(id, i) { const m = marksOf(store.lanes[id])[i]; if (m) { m.lane = id; showDetail(m); } return !!m; },
  findings: () => ({ state: findings.state, kind: findingsText().kind, text: findingsText().text, n: findings.answer ? (findings.answer.findings || []).length : null,
    trace: findings.answer && findings.answer.trace ? findings.answer.trace : null, asked: findings.answer ? findings.answer.asked || null : null,
    fromTrace: findings.answer ? (findings.answer.findings || []).filter((f) => f.source === 'trace').map((f) => ({ id: f.id, title: f.title, window: f.window || null })) : [],
    fromIo: findings.answer ? (findings.answer.findings || []).filter((f) => f.source === 'iotrace').map((f) => ({ id: f.id, title: f.title, window: f.window || null })) : [],
    labels: findings.marks.map((m) => m.label),
    drawnTrace: findings.marks.filter((m) => m.f.source === 'trace' && m.t1 >= view.from && m.t0 <= view.to).length }),
  emptyReason: (id) => emptyReason(laneById[id], false),
  view: () => ({ from: view.from, to: view.to, follow: view.follow }),
  setView: (from, to) => setView(from, to, false),
  askPrompt,
  drawTimes,
  selected: () => (selected ? { label: selected.label, lane: selected.lane, t0: selected.t0, t1: selected.t1, finding: selected.f ? selected.f.id : null, key: selected.f ? selected.f.key : null } : null),
  drawNow() { draw(); },
  // After each WebSocket message: what the store holds and how far the
  // newest event is behind the live edge (bench/ui_stream.mjs).
  probe(fn) {
    batchProbe = fn ? () => fn({ count: store.count, kinds: store.kinds, lastT: store.lastT, edge: liveEdge(), appDropped: store.appDropped, version: store.version }) : null;
  },
  stats: () => ({ count: store.count, kinds: { ...store.kinds }, ioRecordings: store.ioRecordings.slice(), lastT: store.lastT, edge: liveEdge(), appDropped: store.appDropped, version: store.version,
    restarts: store.restarts.slice(), hello: store.hello, conn: $('conn-text').textContent, state: $('conn').dataset.state }),
  drawn: (id) => drawn[id] || 0,
  // What the last draw put on the canvas, in page coordinates.
  labels() {
    const r = canvas.getBoundingClientRect();
    return findings.labels.map((b) => ({ text: b.text, full: b.full, inside: b.inside, dark: b.dark, x: r.left + b.x, y: r.top + b.y, w: b.w, h: b.h }));
  },
  findingBars() {
    const r = canvas.getBoundingClientRect();
    return findings.marks.filter((m) => m.box).map((m) => ({ id: m.f.id, key: m.f.key, t0: m.t0, title: m.f.title, x: r.left + m.box.x, y: r.top + m.box.y, w: m.box.w, h: m.box.h }));
  },
  canvasRect() { const r = canvas.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; },
  axis: () => ({ origin: origin(), ticks: axisTicks.slice(), range: $('range').textContent }),
  legend: () => LEGEND.map(([lane, name, items]) => ({ lane, name, items: items.map(([color, what]) => ({ color, what })) })),
  highlighted: () => ({ ...highlighted }),
  system: () => ({ state: sysTrace.state, trace: sysTrace.trace, states: sysTrace.states.length, freq: sysTrace.freq.length, thread: sysTrace.thread, note: sysTrace.note, error: sysTrace.error,
    from: sysTrace.from, to: sysTrace.to, classes: [...new Set(sysTrace.states.map((x) => x[2]))], lanes: LANES.filter((l) => l.system).map((l) => ({ id: l.id, h: l.h })) }),
  systemOver: (a, b) => systemOver(a, b),
  logSelected: () => (selectedLog ? { t: selectedLog.t, message: selectedLog.data && selectedLog.data.message } : null),
  line(o) { ingestLine(o); },
  hoverAt: (x, y) => hoverAt(x, y),
  inject(ev) { ingest(ev); },
  withCollectors(cols) { if (store.hello) store.hello.collectors = cols; dirty = true; },
  // Loads n synthetic events spread over `seconds` (bench only).
  loadSynthetic(n, seconds) {
    resetStore();
    // io requests split main thread / app / others against pid 100.
    if (!store.procs.length) store.procs.push({ startedAt: 0, pid: 100 });
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
    sysTrace.seq++;
    Object.assign(sysTrace, { trace: 'synthetic', state: 'ok', thread: { tid: 100, name: 'main' }, note: '', error: '', from: 1000, to: 1000 + T, freq: [], freqMax: 0 });
    sysTrace.states = [];
    for (let i = 0; i < NS; i++) sysTrace.states.push([1000 + i * T / NS, T / NS, cls[i % cls.length], 'S', i % 4, i % 7 ? 0 : 42, i % 7 ? '' : 'kworker/0:1']);
    sysTrace.maxDur = T / NS;
    for (let c = 0; c < 4; c++) {
      const pts = [];
      for (let i = 0; i < 2000; i++) pts.push([1000 + i * T / 2000, 600000 + ((i * 7 + c) % 13) * 100000]);
      sysTrace.freq.push({ cpu: c, points: pts });
    }
    for (const l of LANES) if (l.system) l.h = l.sysH;
    view.follow = false; $('follow').checked = false;
    setView(1000, 1000 + T, false);
  },
};
