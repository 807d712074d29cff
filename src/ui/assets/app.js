// SPDX-License-Identifier: Apache-2.0
// Porthole's live timeline.  Vanilla JS, one canvas, no framework: this
// file starts the page; the others hold its parts.
//
// Events never live in framework state: they go into a plain store (per
// lane a sorted array of marks and pre-binned summaries for zoomed-out
// draws, plus the log list; docs/ui.md), and the canvas is
// redrawn from that store at most once per animation frame, only when
// something changed (or while following the live edge).  Findings are
// the server's answers (the host's findings engine); the page never judges
// events itself.
//
// The page is plain scripts that index.html loads in order, no build step
// and no modules: they share one global scope, so a file may use what an
// earlier one declares at load time, and anything once the page runs.
// Order: lanes.js store.js socket.js view.js findings.js draw.js
// system.js detail.js input.js logs.js actions.js db.js hooks.js, then
// app.js, which starts it all.
'use strict';

// The legend strip under the timeline, from LEGEND.
function renderLegend() {
  const box = $('legend');
  for (const [, name, items] of LEGEND) {
    const g = el('span', 'lg');
    g.append(el('b', '', name));
    for (const [color, what, kind] of items) {
      const it = el('span', 'lg');
      const sw = el('i', 'sw' + (kind ? ' ' + kind : ''));
      sw.style.background = color;
      if (kind === 'box') sw.style.borderColor = color;
      it.append(sw, document.createTextNode(what));
      g.append(it);
    }
    box.append(g);
  }
}

renderLegend();
resetStore();
resize();
connect();
loadTraces();
requestAnimationFrame(frame);
