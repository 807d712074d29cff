// SPDX-License-Identifier: Apache-2.0
// view.js: the clock and the visible window: the live edge, the origin the
// axis counts from, following, and pixel <-> time.
'use strict';

// --- the clock and the view -----------------------------------------------
const view = { from: 0, to: 30000, follow: true, cursor: null, want: 30000 };
let framework = false;
let dirty = true, logDirty = true, logReset = true, lastLogs = 0;

// The live edge on the app clock: this machine's clock when the app runs
// here (the server says so), else the newest event.
function liveEdge() {
  const st = store.status;
  if (st && st.link && st.link.clockShared) return st.now + (performance.now() - store.statusAt);
  if (store.lastT !== null) return store.lastT;
  return st ? st.now : 0;
}
function span() { return view.to - view.from; }
// The axis reads time since the app started (hello's startedAt, of the
// first process this page saw): "12 s" is 12 s into the run, and the
// device clock is on hover.  Before any hello, the first event held.
function origin() {
  if (store.procs.length) return store.procs[0].startedAt;
  if (store.hello && typeof store.hello.startedAt === 'number') return store.hello.startedAt;
  return store.firstT !== null ? store.firstT : 0;
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
