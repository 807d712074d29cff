// SPDX-License-Identifier: Apache-2.0
// input.js: zoom, pan and follow, by mouse and keys, and the hover box.
'use strict';

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
    const m = pick(e.offsetX, e.offsetY, true);
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
  if (!m && sl.h && y >= top && y < top + sl.h && sysTrace.states.length) {
    const a = sysTrace.states, slack = span() / plotW() * 2;
    for (let i = firstState(t - sysTrace.maxDur); i < a.length && a[i][0] <= t + slack; i++) {
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
