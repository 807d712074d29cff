// SPDX-License-Identifier: Apache-2.0
// detail.js: picking a mark under the mouse and the detail panel that shows
// it (stacks, phases, SQL with its bound values).
'use strict';

// --- picking and the detail panel ----------------------------------------
let selected = null;
// The same finding, across answers (each answer makes new marks).
const sameFinding = (a, b) => !!(a && b && a.f && b.f && a.f.key === b.f.key && a.t0 === b.t0);
// cycle: a click.  Bars sit on two rows, so a third at once covers one:
// clicked again where the selected finding is, the bar under it is
// chosen, so each bar there can be reached.  Hover shows the topmost.
function pick(x, y, cycle) {
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
    // The topmost (drawn last) under the pointer, else the nearest.
    const under = findings.marks.filter((m) => m.box && x >= m.box.x && x <= m.box.x + Math.max(m.box.w, 3) && y >= m.box.y && y <= m.box.y + m.box.h);
    const at = cycle ? under.findIndex((m) => sameFinding(m, selected)) : -1;
    best = under.length ? under[(at > 0 ? at : under.length) - 1] : null;
    if (!best) findings.marks.forEach(consider);
  } else {
    const L = store.lanes[l.id];
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
    if (sys) section('the system under it (' + sysTrace.trace + ')', el('p', 'system-why',
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
  for (i = off; i < store.logs.length && store.logs[i].t < t; i++);
  if (i >= store.logs.length) i = store.logs.length - 1;
  if (i < off) return;
  selectedLog = store.logs[i]; logPinned = false;
  logBox.scrollTop = Math.max(0, (i - off) * LOG_ROW_H - logBox.clientHeight / 2);
  for (const x of logPool) x.ev = null;
  renderLogs();
}
$('detail-close').onclick = () => { $('detail').hidden = true; selected = null; resize(); };
