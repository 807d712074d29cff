// SPDX-License-Identifier: Apache-2.0
// system.js: the system under the app: a chosen system trace's main-thread
// states and CPU frequencies (GET /api/trace/system), their lanes, and
// what the main thread did over a window.
'use strict';

// --- the system under the app (a chosen system trace) ----------------------
// GET /api/trace/system: the main thread's states (sorted [from, dur,
// class, state, cpu, ranTid, ranName] rows on the app clock) and each
// CPU's frequency steps, fetched once per trace chosen.
const sysTrace = { trace: '', state: 'idle', states: [], maxDur: 0, freq: [], freqMax: 0, thread: null, note: '', error: '', from: 0, to: 0, seq: 0 };
async function loadSystem(id) {
  const my = ++sysTrace.seq;
  Object.assign(sysTrace, { trace: id, state: id ? 'loading' : 'idle', states: [], maxDur: 0, freq: [], freqMax: 0, thread: null, note: '', error: '' });
  for (const l of LANES) if (l.system) l.h = id ? l.sysH : 0;
  dirty = true;
  if (!id) return;
  try {
    const r = await fetch('/api/trace/system?trace=' + encodeURIComponent(id));
    const j = await r.json();
    if (my !== sysTrace.seq) return;
    if (!r.ok) throw new Error(j.error || r.statusText);
    sysTrace.states = (j.states || []).sort((a, b) => a[0] - b[0]);
    for (const st of sysTrace.states) if (st[1] > sysTrace.maxDur) sysTrace.maxDur = st[1];
    sysTrace.freq = j.freq || [];
    sysTrace.thread = j.thread; sysTrace.note = j.note || '';
    sysTrace.from = j.window.from; sysTrace.to = j.window.to;
    sysTrace.state = 'ok';
  } catch (e) {
    if (my !== sysTrace.seq) return;
    sysTrace.state = 'error'; sysTrace.error = String(e.message || e);
  }
  dirty = true;
}
function firstState(t) {
  const a = sysTrace.states;
  let lo = 0, hi = a.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (a[mid][0] < t) lo = mid + 1; else hi = mid; }
  return lo;
}
// Through pixel columns, as the other lanes: each column takes the
// worst state in it (io over runnable over running over blocked over
// sleeping), and each run of equal columns is one rectangle, so 50,000
// states zoomed out cost a few hundred rects.  Returns the states seen.
const SYS_RANK = { sleeping: 1, blocked: 2, running: 3, runnable: 4, io: 5 };
const SYS_BY_RANK = [null, 'sleeping', 'blocked', 'running', 'runnable', 'io'];
let sysCol = new Uint8Array(0);
function drawStates(l, y) {
  if (sysTrace.state !== 'ok' || !sysTrace.states.length) return 0;
  const a = sysTrace.states, pw = plotW(), from = view.from, pxMs = span() / pw;
  if (sysCol.length < pw) sysCol = new Uint8Array(pw + 256);
  const col = sysCol;
  col.fill(0, 0, pw);
  let n = 0;
  for (let i = firstState(from - sysTrace.maxDur); i < a.length && a[i][0] <= view.to; i++) {
    const st = a[i], t1 = st[0] + st[1];
    if (t1 < from) continue;
    const r = SYS_RANK[st[2]] || 1;
    let p0 = Math.floor((st[0] - from) / pxMs), p1 = Math.floor((t1 - from) / pxMs);
    if (p0 < 0) p0 = 0;
    if (p1 >= pw) p1 = pw - 1;
    for (let p = p0; p <= p1; p++) if (r > col[p]) col[p] = r;
    n++;
  }
  for (let r = 1; r < SYS_BY_RANK.length; r++) {
    ctx.fillStyle = SYS_COLOR[SYS_BY_RANK[r]];
    ctx.beginPath();
    let p = 0;
    while (p < pw) {
      if (col[p] !== r) { p++; continue; }
      let q = p + 1;
      while (q < pw && col[q] === r) q++;
      ctx.rect(LABEL_W + p, y + 3, q - p, l.h - 7);
      p = q;
    }
    ctx.fill();
  }
  return n;
}
// Each CPU's frequency as a step line, on one scale (the highest seen),
// at most two points per pixel column.
function drawFreq(l, y) {
  if (sysTrace.state !== 'ok' || !sysTrace.freq.length) return 0;
  if (!(sysTrace.freqMax > 0)) {
    sysTrace.freqMax = 0;
    for (const c of sysTrace.freq) for (const p of c.points) if (p[1] > sysTrace.freqMax) sysTrace.freqMax = p[1];
  }
  const max = sysTrace.freqMax;
  if (!(max > 0)) return 0;
  let n = 0;
  const yOf = (v) => y + l.h - 3 - (v / max) * (l.h - 8);
  ctx.strokeStyle = SYS_COLOR.freq; ctx.lineWidth = 1; ctx.globalAlpha = 0.8;
  for (const c of sysTrace.freq) {
    const pts = c.points;
    ctx.beginPath();
    let started = false, lastPx = -1;
    let lo = 0, hi = pts.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (pts[mid][0] < view.from) lo = mid + 1; else hi = mid; }
    for (let i = Math.max(0, lo - 1); i < pts.length && pts[i][0] <= view.to; i++) {
      const t1 = i + 1 < pts.length ? pts[i + 1][0] : sysTrace.to;
      const x0 = Math.max(LABEL_W, xOf(pts[i][0])), x1 = Math.min(cssW, xOf(t1)), yy = yOf(pts[i][1]);
      n++;
      if (Math.floor(x0) === lastPx && Math.floor(x1) === lastPx) continue; // inside one pixel
      if (!started) { ctx.moveTo(x0, yy); started = true; } else ctx.lineTo(x0, yy);
      ctx.lineTo(x1, yy);
      lastPx = Math.floor(x1);
    }
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
  if (n) { ctx.fillStyle = COLOR.dim; ctx.fillText('max ' + Math.round(max / 1000) + ' MHz', cssW - 90, y + 8); }
  return n;
}
// What the main thread did over [t0, t1] by the trace: ms per state,
// and its longest wait for a CPU with who held that CPU.  The sentence
// a late frame or a stall gets in the detail panel.
function systemOver(t0, t1) {
  if (sysTrace.state !== 'ok' || !sysTrace.thread || t1 <= t0 || t1 < sysTrace.from || t0 > sysTrace.to) return null;
  const ms = { running: 0, runnable: 0, sleeping: 0, io: 0, blocked: 0 };
  let worst = null;
  const a = sysTrace.states;
  for (let i = firstState(t0 - sysTrace.maxDur); i < a.length && a[i][0] < t1; i++) {
    const st = a[i], o = Math.min(t1, st[0] + st[1]) - Math.max(t0, st[0]);
    if (o <= 0) continue;
    ms[st[2]] = (ms[st[2]] || 0) + o;
    if (st[2] === 'runnable' && (!worst || o > worst.ms)) worst = { ms: o, cpu: st[4], by: st[6], tid: st[5] };
  }
  const parts = ['running', 'runnable', 'io', 'blocked', 'sleeping'].filter((k) => ms[k] >= 0.05)
    .map((k) => (k === 'io' ? 'blocked in I/O' : k) + ' ' + ms[k].toFixed(ms[k] < 10 ? 1 : 0) + ' ms');
  let text = 'main thread ' + (parts.join(', ') || 'not seen by the trace');
  if (worst && worst.ms >= 1 && worst.by) text += '; runnable ' + worst.ms.toFixed(0) + ' ms while CPU ' + worst.cpu + ' ran ' + worst.by + (worst.tid ? ' (tid ' + worst.tid + ')' : '');
  const covered = Math.max(t0, sysTrace.from) > t0 || Math.min(t1, sysTrace.to) < t1 ? ' (the trace covers part of it)' : '';
  return { ms, worst, text: text + covered };
}
