// SPDX-License-Identifier: Apache-2.0
// socket.js: the WebSocket to the server (events, status frames), the app's
// hello, and the connection state in the bar.
'use strict';

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
  const old = store.hello;
  // A replayed batch can carry the hello of the process before: keep
  // the newest.
  if (live && old && typeof h.startedAt === 'number' && h.startedAt < old.startedAt) return;
  store.hello = h;
  const pid = num(h.pid), at = typeof h.startedAt === 'number' ? h.startedAt : 0;
  if (pid > 0 && !store.procs.some((p) => p.pid === pid && p.startedAt === at)) {
    store.procs.push({ startedAt: at, pid });
    store.procs.sort((a, b) => a.startedAt - b.startedAt);
  }
  if (live && old && (old.startedAt !== h.startedAt || old.pid !== h.pid)) {
    const t = typeof h.startedAt === 'number' && h.startedAt > 0 ? h.startedAt : store.lastT;
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
  const prev = store.status ? store.status.store.version : -1;
  store.status = st; store.statusAt = performance.now();
  if (st.store && st.store.version !== prev) findingsTouch();
  $('restart').disabled = !st.canRestart;
  $('restart').title = st.canRestart ? 'Restart the app (asks first)' :
    'porthole ui did not start this app: run `porthole ui -- CMD...` to restart it from here';
  renderConn();
}
function renderConn() {
  const el = $('conn');
  let state = 'down', text = 'porthole ui is not answering';
  if (wsUp && store.status) {
    state = store.status.link.state;
    text = state === 'connected' ? 'live: ' + (store.status.store.events) + ' events' :
      state + (store.status.link.error ? ': ' + store.status.link.error : '');
    // The link reconnects by itself; say so, and whether the app it
    // found again is a new process.
    // Counted by the app's hellos: a socket closed before its hello
    // (the app still starting) is no reconnect.
    const again = (store.status.link.hellos || 0) - 1;
    if (again > 0) text += ' · reconnected ' + (again > 1 ? again + '×' : 'once');
    if (store.restarts.length) text += ' · app restarted ' + (store.restarts.length > 1 ? store.restarts.length + '×' : 'once');
    if (store.appDropped) text += ' · the app dropped ' + store.appDropped + ' events (its queue was full)';
    if (store.status.link.warning) text += ' (' + store.status.link.warning + ')';
  } else if (wsUp) { state = 'connecting'; text = 'connected to porthole ui'; }
  el.dataset.state = state;
  $('conn-text').textContent = text;
  el.title = text;
}
