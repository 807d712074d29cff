// SPDX-License-Identifier: Apache-2.0
// findings.js: the findings lane's answers, asked of the server (GET
// /api/findings), never judged by the page; and the system trace menu.
'use strict';

// --- findings: the server's answers, never the page's own --------------
const findings = { state: 'idle', answer: null, asked: null, error: null, timer: 0, seq: 0, marks: [], trace: '', labels: [] };
// A still window is asked 250 ms after it stops moving; while following
// live the window moves all the time, so it is asked at most every 1.2 s
// (a debounce there would never fire).
function findingsTouch() {
  dirty = true;
  if (view.follow) {
    if (findings.timer) return;
  } else clearTimeout(findings.timer);
  findings.timer = setTimeout(() => { findings.timer = 0; askFindings(); }, view.follow ? 1200 : 250);
}
function isStale() {
  if (!findings.answer || !findings.asked) return false;
  // Following live, the window slides every frame: an answer a few
  // seconds old is current; a still window is stale once events arrive.
  const tol = view.follow ? Math.max(3000, span() * 0.05) : span() * 0.02 + 1;
  const moved = Math.abs(findings.asked.from - view.from) > tol || Math.abs(findings.asked.to - view.to) > tol;
  const newer = !view.follow && store.status && store.status.store && store.status.store.version !== findings.asked.version &&
    store.lastT !== null && store.lastT >= findings.asked.from && store.lastT <= findings.asked.to;
  return moved || newer || findings.asked.trace !== findings.trace;
}
function askFindingsSoon() { clearTimeout(findings.timer); findings.timer = 0; dirty = true; askFindings(); }
async function askFindings() {
  const from = Math.floor(view.from), to = Math.ceil(view.to);
  if (from >= to) return;
  const version = store.status && store.status.store ? store.status.store.version : 0;
  const my = ++findings.seq;
  findings.state = 'loading'; dirty = true;
  try {
    const trace = findings.trace;
    const r = await fetch('/api/findings?from=' + from + '&to=' + to + (trace ? '&trace=' + encodeURIComponent(trace) : ''));
    const j = await r.json();
    if (my !== findings.seq) return;
    if (!r.ok) throw new Error(j.error || r.statusText);
    findings.answer = j; findings.asked = { from, to, version, trace }; findings.state = 'ok'; findings.error = null;
    if (trace !== sysTrace.trace) loadSystem(trace);
    findings.marks = [];
    for (const f of j.findings || []) {
      const w = f.window || {};
      const t0 = f.spanning ? view.from : num(w.from), t1 = f.spanning ? view.to : num(w.to);
      findings.marks.push({ t0, t1, f, color: f.severity === 'error' ? COLOR.err : f.severity === 'warning' ? COLOR.warn : COLOR.note,
        label: (f.source === 'trace' || f.source === 'iotrace' ? '[' + f.source + '] ' : '') + f.severity + ': ' + f.title });
    }
    findings.marks.sort((a, b) => a.t0 - b.t0);
    // Drawn now, not at the next frame: until drawn, the new marks have
    // no boxes, and a click in between would pick by time alone.
    draw();
  } catch (e) {
    if (my !== findings.seq) return;
    findings.state = 'error'; findings.error = String(e.message || e);
  }
  dirty = true;
  if (view.follow) findingsTouch();
}
function findingsText() {
  if (findings.state === 'loading' && !findings.answer) return { text: 'asking the findings engine…', color: COLOR.dim, kind: 'loading' };
  if (findings.state === 'error') return { text: 'no answer: ' + findings.error, color: COLOR.err, kind: 'error' };
  if (!findings.answer) return { text: 'not asked yet', color: COLOR.dim, kind: 'idle' };
  const stale = isStale() || findings.state === 'loading';
  if (stale) return { text: 'stale: answer for t=' + findings.asked.from + '..' + findings.asked.to + '; asking again…', color: COLOR.warn, kind: 'stale' };
  const fs = findings.answer.findings || [];
  const tr = traceText(fs) + ioText(fs);
  // No app connected: nothing new is observed, so an empty answer is
  // "not connected", never the green all-clear of a run looked at.
  const link = store.status && store.status.link;
  if (!fs.length && (!link || link.state !== 'connected')) {
    const why = link && link.error ? ' (' + link.error + ')' : '';
    const held = store.status && store.status.store ? store.status.store.events : 0;
    return { text: held ? 'not connected' + why + ' · no findings in the ' + held + ' events held' + tr :
      'not connected: nothing observed' + why + tr, color: COLOR.warn, kind: 'disconnected' };
  }
  // Quiet only over a window the host observed whole (docs/findings.md,
  // "Coverage"); otherwise what it could not see, and why.
  const cov = findings.answer.coverage;
  const unseen = cov && !cov.complete ? ' · not seen (' + (findings.answer.notSeen || []).length + ' checks): ' + cov.reason : '';
  if (!fs.length && unseen)
    return { text: 'nothing found in what was observed' + unseen + tr, color: COLOR.warn, kind: 'notseen' };
  if (!fs.length)
    return { text: 'looked: nothing found (' + (findings.answer.quiet || []).length + ' checks quiet)' + tr, color: COLOR.ok, kind: 'empty' };
  return { text: fs.length + ' finding' + (fs.length > 1 ? 's' : '') + unseen + tr, color: unseen ? COLOR.warn : COLOR.dim, kind: 'ok' };
}
// What the block I/O view added (findings with source "iotrace").
function ioText(fs) {
  const n = fs.filter((f) => f.source === 'iotrace').length;
  return n ? ' · block I/O: ' + n + ' finding' + (n === 1 ? '' : 's') : '';
}
// What the system trace added, and what it was asked; a trace finding
// outside the visible window (a trace from another clock) is counted.
function traceText(fs) {
  const t = findings.answer.trace;
  if (!t) return '';
  const mine = fs.filter((f) => f.source === 'trace');
  const off = mine.filter((f) => !f.spanning && f.window && (f.window.to < view.from || f.window.from > view.to)).length;
  const asked = Array.isArray(findings.answer.asked) ? findings.answer.asked : [];
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
    const keep = findings.trace;
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
$('trace').onchange = (e) => { findings.trace = e.target.value; askFindingsSoon(); loadSystem(findings.trace); };
