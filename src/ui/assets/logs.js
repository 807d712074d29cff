// SPDX-License-Identifier: Apache-2.0
// logs.js: the log pane: a virtual list of the store's log lines.
'use strict';

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
function logOffset() { return Math.max(0, store.logs.length - LOG_MAX); }
function renderLogs() {
  const off = logOffset(), n = store.logs.length - off;
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
    const ev = store.logs[off + first + k], d = ev.data || {};
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
  $('log-count').textContent = store.logs.length ? '(' + store.logs.length + ' lines' + (off ? ', the last ' + LOG_MAX + ' listed' : '') + ')' : '(no lines yet)';
}
// Scrolled to the bottom, the list follows new lines; scrolled up, it
// stays where the person put it.
logBox.addEventListener('scroll', () => {
  const n = store.logs.length - logOffset();
  logPinned = logBox.scrollTop + logBox.clientHeight >= n * LOG_ROW_H - 4 && !selectedLog;
  if (Math.floor(logBox.scrollTop / LOG_ROW_H) !== logFirst) { for (const r of logPool) r.ev = null; renderLogs(); }
}, { passive: true });
