// SPDX-License-Identifier: Apache-2.0
// actions.js: the bar's actions: toasts and the clipboard, Ask agent (a prompt
// with the window as bounds), Keep (porthole save) and Restart, which
// carry the server's write token.
'use strict';

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
    const L = store.lanes[laneId], ms = marksOf(L);
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
  const st = marksOf(store.lanes.main).filter((m) => m.ev.event === 'blocked' && m.t1 >= from && m.t0 <= to);
  const mq = count('main', (m) => m.ev.event === 'db_end');
  const dbn = count('db'), http = count('http'), bad = count('http', (m) => m.color === COLOR.err);
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
  const inWin = findings.answer && !isStale() ? (findings.answer.findings || []) : [];
  if (!inWin.length) start = st.length ? 'blocking' : fr ? 'frames' : rec ? 'recompositions' : 'timeline';
  return { parts, start, findings: inWin };
}
function askPrompt() {
  const from = Math.floor(view.from), to = Math.ceil(view.to);
  const w = windowSummary(from, to);
  let p = 'look at device uptime ' + from + ' to ' + to + ' ms (' + ((to - from) / 1000).toFixed(1) + ' s) of ' +
    (store.hello ? store.hello.packageName : 'the app') + '; that window contains ' + (w.parts.length ? w.parts.join(', ') : 'no events') + ';';
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
