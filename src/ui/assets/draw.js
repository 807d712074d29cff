// SPDX-License-Identifier: Apache-2.0
// draw.js: drawing the timeline on the canvas: lanes, the axis, marks
// (zoomed out, from the store's pre-binned summaries), the memory lane,
// the findings lane, and the animation frame that redraws when something
// changed.
'use strict';

// --- drawing ---------------------------------------------------------------
let dpr = 1;
function resize() {
  dpr = window.devicePixelRatio || 1;
  cssW = canvas.clientWidth; cssH = canvas.clientHeight;
  canvas.width = Math.max(1, Math.round(cssW * dpr));
  canvas.height = Math.max(1, Math.round(cssH * dpr));
  dirty = true;
}
window.addEventListener('resize', resize);

function laneTops() {
  const tops = {};
  let y = AXIS_H;
  for (const l of LANES) { tops[l.id] = y; y += l.h; }
  return tops;
}
// [first, end) of the marks that may overlap the view.
function visible(L) {
  const ms = marksOf(L);
  return [lowerBound(ms, view.from - L.maxDur), lowerBound(ms, view.to + 1), ms];
}
function emptyReason(l, inView) {
  if (l.id === 'findings') return null;
  if (l.system) {
    if (inView) return null;
    if (sysTrace.state === 'loading') return 'reading the system trace ' + sysTrace.trace + '…';
    if (sysTrace.state === 'error') return 'system trace ' + sysTrace.trace + ': ' + sysTrace.error;
    if (l.id === 'sys' && !sysTrace.thread) return sysTrace.note || 'the app\'s main thread is not in this trace';
    if (l.id === 'cpufreq' && !sysTrace.freq.length) return 'no CPU frequency events in ' + sysTrace.trace + ' (the kernel\'s cpufreq driver sent none)';
    return 'not in this window: ' + sysTrace.trace + ' covers ' + secs(sysTrace.from - origin(), 1) + '–' + secs(sysTrace.to - origin(), 1) + ' s';
  }
  const L = store.lanes[l.id];
  if (inView) return null;
  const cols = store.hello && Array.isArray(store.hello.collectors) ? store.hello.collectors : null;
  if (!store.hello && (!store.status || store.status.link.state !== 'connected'))
    return 'not connected' + (store.status && store.status.link.error ? ': ' + store.status.link.error : '');
  if (cols && l.need && !l.need.some((n) => cols.includes(n)))
    return l.what + ' not instrumented (collectors: ' + (cols.join(', ') || 'none') + ')';
  if (l.id === 'frames' && !L.total) return 'no late frames: the app sends only janky ones';
  // Block I/O is recorded beside the app, not by it: say how to get it.
  if (l.id === 'io' && !L.total && store.ioRecordings.length) {
    const r = store.ioRecordings[store.ioRecordings.length - 1];
    return 'block I/O recording ' + (r.recording || '?') + ' attached, but no io events of it are held here';
  }
  if (l.id === 'io' && !L.total) {
    const sid = store.status && store.status.session ? store.status.session : 'SESSION';
    return 'no block I/O recorded: `porthole iotrace record --out DIR`, then `porthole iotrace attach ' + sid +
      ' DIR`; or `porthole capture --iotrace`';
  }
  if (l.id === 'warnings' && !L.total) return 'no W/E/F log lines yet';
  if (!L.total) return 'instrumented; nothing has happened yet';
  return 'nothing in this window (' + L.total + ' elsewhere)';
}

function draw() {
  const t0 = performance.now();
  const W = cssW, H = cssH;
  if (view.follow) followWindow();
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = COLOR.bg; ctx.fillRect(0, 0, W, H);
  drawAxis(W, H);
  const tops = laneTops();
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (const l of LANES) {
    if (!l.h) continue;
    const y = tops[l.id];
    ctx.fillStyle = COLOR.grid; ctx.fillRect(0, y + l.h - 1, W, 1);
    ctx.fillStyle = COLOR.dim; ctx.fillText(l.name, 8, y + l.h / 2);
    let n = 0;
    ctx.save();
    ctx.beginPath(); ctx.rect(LABEL_W, y, W - LABEL_W, l.h - 1); ctx.clip();
    if (l.id === 'findings') n = drawFindings(l, y);
    else if (l.id === 'memory') n = drawMemory(l, y);
    else if (l.id === 'sys') n = drawStates(l, y);
    else if (l.id === 'cpufreq') n = drawFreq(l, y);
    else n = drawLane(l, y);
    drawn[l.id] = n;
    const why = emptyReason(l, n > 0);
    if (why) { ctx.fillStyle = COLOR.dim; ctx.fillText(why, LABEL_W + 10, y + l.h / 2); }
    ctx.restore();
  }
  if (view.cursor !== null) {
    const x = xOf(view.cursor);
    ctx.fillStyle = COLOR.text; ctx.fillRect(x, AXIS_H, 1, H - AXIS_H);
  }
  if (selected && selected.f) drawEvidence(selected, tops, H);
  if (selected) {
    const x0 = xOf(selected.t0), x1 = Math.max(x0 + 2, xOf(selected.t1));
    const l = selected.lane ? laneById[selected.lane] : null;
    if (l && selected.box) { ctx.strokeStyle = COLOR.text; ctx.strokeRect(selected.box.x - 1.5, selected.box.y - 1.5, selected.box.w + 3, selected.box.h + 3); }
    else if (l) { ctx.strokeStyle = COLOR.text; ctx.strokeRect(x0 - 1.5, tops[l.id] + 1.5, x1 - x0 + 3, l.h - 4); }
  }
  ctx.fillStyle = COLOR.grid; ctx.fillRect(LABEL_W - 1, 0, 1, H);
  renderRange();
  const dt = performance.now() - t0;
  drawTimes.push(dt);
  if (drawTimes.length > 2000) drawTimes.splice(0, 1000);
}
const drawTimes = [];
const drawn = {};

// A selected finding's evidence: its window as a band across every
// lane, and in the lanes its kind draws from, each visible mark in the
// window outlined (highlighted[lane] counts them, for the tests).
const EVIDENCE_LANES = [
  [/db|sql|query/, ['db', 'main']], [/http|network|request/, ['http']], [/stall|blocked|anr|main-thread/, ['main']],
  [/frame|jank/, ['frames']], [/recompos|state/, ['recompose']], [/^io-|iotrace|block/, ['io']], [/startup|launch/, ['device', 'main', 'db']],
  [/work|job/, ['work']], [/memory|leak|gc/, ['memory']], [/crash|exit|log|strict|warn/, ['warnings']],
];
function evidenceLanes(f) {
  const id = String(f.id || '');
  for (const [re, lanes] of EVIDENCE_LANES) if (re.test(id)) return lanes;
  return [];
}
const highlighted = {};
function drawEvidence(m, tops, H) {
  const x0 = Math.max(LABEL_W, xOf(m.t0)), x1 = Math.min(cssW, Math.max(x0 + 2, xOf(m.t1)));
  for (const k of Object.keys(highlighted)) delete highlighted[k];
  if (x1 < LABEL_W || x0 > cssW) return;
  ctx.fillStyle = 'rgba(255,255,255,0.08)';
  ctx.fillRect(x0, AXIS_H, x1 - x0, H - AXIS_H);
  ctx.fillStyle = 'rgba(255,255,255,0.5)';
  ctx.fillRect(x0, AXIS_H, 1, H - AXIS_H); ctx.fillRect(x1 - 1, AXIS_H, 1, H - AXIS_H);
  ctx.strokeStyle = COLOR.text; ctx.lineWidth = 1;
  for (const id of evidenceLanes(m.f)) {
    const l = laneById[id], L = store.lanes[id], ms = marksOf(L), y = tops[id];
    let n = 0;
    for (let i = lowerBound(ms, Math.max(m.t0, view.from) - L.maxDur); i < ms.length && ms[i].t0 <= Math.min(m.t1, view.to) && n < 500; i++) {
      const k = ms[i];
      if (k.t1 < m.t0 || k.t1 < view.from || hiddenAnon(k)) continue;
      const a = xOf(k.t0), b = Math.max(a + 2, xOf(k.t1));
      ctx.strokeRect(a - 1.5, y + 1.5, b - a + 3, l.h - 4);
      n++;
    }
    highlighted[id] = n;
  }
}

function niceStep(ms) {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000];
  for (const s of steps) if (s >= ms) return s;
  return 7200000;
}
// ms as seconds with dig decimals, never "-0".
function secs(ms, dig) {
  const v = (ms / 1000).toFixed(dig);
  return Number(v) === 0 ? (0).toFixed(dig) : v;
}
// A time since the app's start (ms), to the precision the step needs.
function fmtT(rel, step) {
  const v = Math.abs(rel) < 1e-6 ? 0 : rel / 1000;
  if (step >= 1000) return v.toFixed(0) + ' s';
  if (step >= 100) return v.toFixed(1) + ' s';
  if (step >= 10) return v.toFixed(2) + ' s';
  return v.toFixed(3) + ' s';
}
const axisTicks = []; // the last draw's {t, rel, x, text}, for the tests
function drawAxis(W, H) {
  const step = niceStep(span() / Math.max(1, plotW() / 110));
  const o = origin();
  ctx.font = '10px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  axisTicks.length = 0;
  // Ticks on whole steps since the start, so the first one reads 0 s.
  let rel = Math.ceil((view.from - o) / step) * step;
  for (; o + rel <= view.to; rel += step) {
    // A whole pixel: a grid line is its color, not half of it twice.
    const x = Math.round(xOf(o + rel)), text = fmtT(rel, step);
    ctx.fillStyle = COLOR.grid; ctx.fillRect(x, AXIS_H - 4, 1, H);
    ctx.fillStyle = COLOR.dim; ctx.fillText(text, x + 3, AXIS_H / 2);
    axisTicks.push({ t: o + rel, rel, x, text });
  }
  ctx.fillStyle = COLOR.bg; ctx.fillRect(0, 0, LABEL_W - 1, AXIS_H);
  ctx.fillStyle = COLOR.dim; ctx.fillText('since app start', 8, AXIS_H / 2);
}

// Drawing a lane goes through pixel columns: every mark (or, zoomed
// out, every bucket of the lane's summary) raises the columns it covers
// in its style class to its height, and each run of equal columns is one
// rectangle, all rectangles of one color one path.  So a dense lane costs
// a few rectangles, not one per event: canvas calls, not the loop, were
// most of a slow frame (docs/ui.md).
const colPool = [];
function columns(k, pw) {
  let c = colPool[k];
  if (!c || c.length < pw) c = colPool[k] = new Float32Array(pw + 256);
  return c;
}
// Raises columns [x0, x1] (pixels from the plot's left edge) to v.
function raise(col, x0, x1, v, pw) {
  let p0 = Math.floor(x0), p1 = Math.floor(x1);
  if (p1 < 0 || p0 >= pw) return;
  if (p0 < 0) p0 = 0;
  if (p1 >= pw) p1 = pw - 1;
  for (let p = p0; p <= p1; p++) if (v > col[p]) col[p] = v;
}
// The coarsest summary level still finer than a pixel, or null.
function levelFor(L, pxMs) {
  let lv = null;
  for (const l of L.levels) if (l.w <= pxMs) lv = l;
  return lv;
}
// Adds each run of equal non-zero columns to the current path; geom(v)
// gives [y, height] for a column value.  A run is at least 2 px wide, so
// a lone point shows.
function runs(col, pw, geom) {
  let p = 0;
  while (p < pw) {
    const v = col[p];
    if (!v) { p++; continue; }
    let q = p + 1;
    while (q < pw && col[q] === v) q++;
    const g = geom(v);
    ctx.rect(LABEL_W + p, g[0], Math.max(2, q - p), g[1]);
    p = q;
  }
}
// Fills the classes' columns from the marks (zoomed in) or from the
// summary (zoomed out, when the window holds more marks than pixels).
// Returns how many marks that was; used[c] is set for each class touched.
function fillColumns(L, used, skip) {
  const pw = plotW(), from = view.from, to = view.to, pxMs = span() / pw;
  const [a, b, ms] = visible(L);
  const lv = levelFor(L, pxMs);
  let n = 0;
  const mark = (m) => {
    if (m.t1 < from || skip(m)) return;
    const col = columns(m.cls, pw);
    used[m.cls] = 1;
    const x0 = (m.t0 - from) / pxMs, x1 = (m.t1 - from) / pxMs;
    // A wide mark ends where it ends, so neighbours keep their gap.
    raise(col, x0, x1 - x0 >= 2 ? x1 - 1 : x0, m.hfrac || 1, pw);
    n++;
  };
  if (!lv || b - a <= pw) {
    for (let i = a; i < b; i++) mark(ms[i]);
    return n;
  }
  const w = lv.w, bFrom = Math.floor(from / w), bTo = Math.floor(to / w);
  for (let c = 0; c < L.classes.length; c++) {
    const B = lv.bins[c];
    if (!B || skip(L.classes[c])) continue;
    const idx = B.idx, e = lowerNum(idx, bTo + 1);
    let i = lowerNum(idx, bFrom);
    if (i >= e) continue;
    const col = columns(c, pw);
    used[c] = 1;
    for (; i < e; i++) {
      let p = Math.floor((idx[i] * w - from) / pxMs);
      if (p < 0) p = 0; else if (p >= pw) p = pw - 1;
      if (B.h[i] > col[p]) col[p] = B.h[i];
      n += B.n[i];
    }
  }
  const ls = lv.longs;
  for (let i = lowerBound(ls, from - lv.longMax); i < ls.length && ls[i].t0 <= to; i++) mark(ls[i]);
  return n;
}
// Where classes share a column the worse one is painted last, on top:
// zoomed out, a column shows the worst thing in it.
const RANK = { [COLOR.err]: 3, [COLOR.warn]: 2, [COLOR.mainq]: 1, [COLOR.ioMain]: 3, [COLOR.ioApp]: 2 };
// One path per color over the used classes, then the columns cleared.
function paint(L, used, geomOf) {
  const pw = plotW();
  const done = new Uint8Array(L.classes.length);
  const order = [];
  for (let c = 0; c < L.classes.length; c++) if (used[c]) order.push(c);
  order.sort((x, y) => (RANK[L.classes[x].color] || 0) - (RANK[L.classes[y].color] || 0) || x - y);
  for (const c of order) {
    if (done[c]) continue;
    const color = L.classes[c].color;
    ctx.fillStyle = color;
    ctx.beginPath();
    for (let k = c; k < L.classes.length; k++) {
      if (!used[k] || done[k] || L.classes[k].color !== color) continue;
      done[k] = 1;
      runs(colPool[k], pw, geomOf(L.classes[k]));
      colPool[k].fill(0, 0, pw);
    }
    ctx.fill();
  }
}
const hiddenAnon = (m) => m.anon && !framework;
function laneRows(l) {
  return l.id === 'recompose' || l.id === 'http' || l.id === 'db' || l.id === 'io' ? 3 : l.id === 'work' || l.id === 'main' ? 2 : 1;
}
function drawLane(l, y) {
  const L = store.lanes[l.id];
  const rh = (l.h - 4) / laneRows(l);
  const used = new Uint8Array(L.classes.length);
  const n = fillColumns(L, used, hiddenAnon);
  paint(L, used, (cl) => {
    if (l.id === 'frames') return (v) => { const hh = (l.h - 6) * v; return [y + l.h - 3 - hh, hh]; };
    const g = [y + 2 + cl.row * rh, rh - 2];
    return () => g;
  });
  return n;
}
// Memory: a line through the samples, or zoomed out the band between
// each pixel column's lowest and highest sample; GC pauses as ticks.
const memLo = [], memHi = [];
function drawMemory(l, y) {
  const L = store.lanes[l.id];
  const pw = plotW(), from = view.from, to = view.to, pxMs = span() / pw;
  const [a, b, ms] = visible(L);
  const lv = levelFor(L, pxMs);
  const used = new Uint8Array(L.classes.length);
  const ticks = fillColumns(L, used, (m) => !m.gc);
  let lo = Infinity, hi = -Infinity, n = 0;
  const yOf = (v) => y + l.h - 4 - (v - lo) / (hi - lo) * (l.h - 10);
  ctx.strokeStyle = COLOR.mem; ctx.lineWidth = 1.5; ctx.beginPath();
  if (lv && b - a > pw) {
    for (let p = 0; p < pw; p++) { memLo[p] = Infinity; memHi[p] = -Infinity; }
    const w = lv.w, bFrom = Math.floor(from / w), bTo = Math.floor(to / w);
    L.classes.forEach((cl, c) => {
      const B = lv.bins[c];
      if (!B || !cl.value) return;
      for (let i = lowerNum(B.idx, bFrom), e = lowerNum(B.idx, bTo + 1); i < e; i++) {
        let p = Math.floor((B.idx[i] * w - from) / pxMs);
        if (p < 0) p = 0; else if (p >= pw) p = pw - 1;
        if (B.lo[i] < memLo[p]) memLo[p] = B.lo[i];
        if (B.hi[i] > memHi[p]) memHi[p] = B.hi[i];
        n += B.n[i];
      }
    });
    for (let p = 0; p < pw; p++) if (memHi[p] >= memLo[p]) { if (memLo[p] < lo) lo = memLo[p]; if (memHi[p] > hi) hi = memHi[p]; }
    if (hi >= lo) {
      if (hi === lo) { hi += 1; lo = Math.max(0, lo - 1); }
      let first = true;
      for (let p = 0; p < pw; p++) {
        if (!(memHi[p] >= memLo[p])) continue;
        const x = LABEL_W + p + 0.5;
        if (first) { ctx.moveTo(x, yOf(memHi[p])); first = false; } else ctx.lineTo(x, yOf(memHi[p]));
        ctx.lineTo(x, yOf(memLo[p]));
      }
    }
  } else {
    for (let i = a; i < b; i++) { const v = ms[i].value; if (v >= 0) { if (v < lo) lo = v; if (v > hi) hi = v; } }
    if (hi >= lo) {
      if (hi === lo) { hi += 1; lo = Math.max(0, lo - 1); }
      const sc = pw / span(), base = LABEL_W - from * sc;
      let first = true;
      for (let i = Math.max(0, a - 1); i < Math.min(ms.length, b + 1); i++) {
        const m = ms[i];
        if (!(m.value >= 0)) continue;
        const x = base + m.t0 * sc, yy = yOf(m.value);
        if (first) { ctx.moveTo(x, yy); first = false; } else ctx.lineTo(x, yy);
        n++;
      }
    }
  }
  ctx.stroke();
  paint(L, used, () => { const g = [y + 2, 6]; return () => g; });
  if (hi >= lo) { ctx.fillStyle = COLOR.dim; ctx.fillText(Math.round(hi) + ' MB', cssW - 60, y + 8); }
  return n + ticks;
}
// The findings lane: two rows of bars, each bar on the first row free
// where it starts, and its title beside it (inside a wide bar) as far
// as the next bar on that row; a title that does not fit is cut with
// an ellipsis, and one with no room for a few letters is on hover only.
// findings.labels keeps what was drawn, for the tests (inside the canvas, no
// two overlapping).
const FROW_H = 15, LABEL_MIN = 36;
function fitText(text, w) {
  if (ctx.measureText(text).width <= w) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + '…').width <= w) lo = mid; else hi = mid - 1;
  }
  return lo >= 3 ? text.slice(0, lo).trimEnd() + '…' : '';
}

function drawFindings(l, y) {
  const st = findingsText();
  const stale = st.kind === 'stale' || st.kind === 'loading';
  let n = 0;
  ctx.globalAlpha = stale ? 0.45 : 1;
  const right = cssW - 4, rowEnd = [-Infinity, -Infinity], rows = [[], []];
  findings.labels = [];
  for (const m of findings.marks) {
    m.box = null;
    const x0 = Math.max(LABEL_W - 2, xOf(m.t0)), x1 = Math.max(x0 + 3, xOf(m.t1));
    if (x1 < LABEL_W || x0 > cssW) continue;
    const r = rowEnd[0] <= x0 ? 0 : rowEnd[1] <= x0 ? 1 : rowEnd[0] <= rowEnd[1] ? 0 : 1;
    rowEnd[r] = Math.max(rowEnd[r], x1 + 2);
    m.box = { x: x0, y: y + 2 + r * (FROW_H + 1), w: x1 - x0, h: FROW_H };
    rows[r].push(m);
    ctx.fillStyle = m.color;
    ctx.fillRect(m.box.x, m.box.y, m.box.w, m.box.h);
    n++;
  }
  // Labels stay legible on a stale (faded) answer: light text then,
  // dark text only on a bar drawn in full.
  ctx.globalAlpha = 1;
  ctx.font = '11px system-ui, sans-serif';
  for (const row of rows) {
    row.forEach((m, i) => {
      const b = m.box, inside = b.w >= 80;
      const tx = inside ? Math.max(b.x, LABEL_W) + 4 : b.x + b.w + 3;
      const next = i + 1 < row.length ? row[i + 1].box.x - 4 : right;
      const end = Math.min(next, right, inside ? b.x + b.w - 4 : Infinity);
      if (end - tx < LABEL_MIN) return;
      const text = fitText(m.f.title, end - tx);
      if (!text) return;
      const w = ctx.measureText(text).width;
      if (findings.labels.some((o) => o.y === b.y && tx < o.x + o.w + 2 && o.x < tx + w + 2)) return;
      const dark = inside && !stale;
      ctx.fillStyle = dark ? '#111217' : COLOR.text;
      ctx.fillText(text, tx, b.y + b.h / 2 + 0.5);
      findings.labels.push({ text, full: m.f.title, x: tx, y: b.y, w, h: b.h, inside, dark });
    });
  }
  ctx.globalAlpha = 1;
  // The state is always said, so "in flight" never reads as "nothing".
  ctx.fillStyle = st.color;
  ctx.fillText(st.text, LABEL_W + 10, y + l.h - 7);
  return n + 1;
}
let rangeText = '';
function renderRange() {
  const sp = span(), o = origin(), dig = sp >= 10000 ? 0 : sp >= 1000 ? 1 : 3;
  const text = secs(view.from - o, dig) + '–' + secs(view.to - o, dig) + ' s (' + secs(sp, dig) + ' s)';
  if (text !== rangeText) {
    rangeText = text;
    $('range').textContent = text;
    $('range').title = 'since the app started; device uptime ' + Math.round(view.from) + '..' + Math.round(view.to) + ' ms';
  }
}

function frame() {
  if (dirty || view.follow) { dirty = false; draw(); }
  // The log list is DOM: rebuilt at most four times a second.
  const now = performance.now();
  if (logDirty && now - lastLogs > 250) { logDirty = false; lastLogs = now; renderLogs(); }
  requestAnimationFrame(frame);
}
