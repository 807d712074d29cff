// SPDX-License-Identifier: Apache-2.0
// Whether the page keeps up with a live stream (issue 6), driven by
// bench/bench_ui.c over stdin/stdout:
//
//   -> "ready"                      the page is connected to the app
//   <- "stage RATE"  -> "armed"     counters reset, the app starts emitting
//   <- "end N"       -> {...}       the app emitted N events of the mix
//
// For each stage the page reports how many of the mix's events arrived
// (kinds the bench emits, so the agent's own memory samples do not count),
// how far behind the live edge the newest event was as each WebSocket
// batch landed (lag), how long its frames took, and its long tasks.  It
// waits for the stream to drain after "end" (up to 3 s without progress).
// Usage: node bench/ui_stream.mjs URL
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const url = process.argv[2];
const MIX = ['recompose', 'state_write', 'log', 'db_start', 'db_end'];
const profile = mkdtempSync(path.join(tmpdir(), 'ph-bench-chromium-'));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1500, height: 900 },
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (a, p) => (a.length ? a[Math.min(a.length - 1, Math.floor(a.length * p))] : -1);
const round = (x) => Math.round(x * 10) / 10;

try {
  const page = ctx.pages()[0] || await ctx.newPage();
  await page.goto(url);
  for (let i = 0; ; i++) {
    const s = await page.evaluate(() => window.__ph.stats());
    if (s.state === 'connected' && s.hello) break;
    if (i > 300) throw new Error('the page never connected: ' + s.conn);
    await sleep(100);
  }
  await page.evaluate((mix) => {
    const B = window.__bench = { on: false, lags: [], frames: [], longTasks: 0, longMs: 0, resets: 0, mix };
    let version = null;
    window.__ph.probe((s) => {
      if (version !== null && s.version !== version) B.resets++;
      version = s.version;
      if (B.on && s.lastT !== null) B.lags.push(s.edge - s.lastT);
    });
    let last = performance.now();
    const frame = (now) => { if (B.on) B.frames.push(now - last); last = now; requestAnimationFrame(frame); };
    requestAnimationFrame(frame);
    new PerformanceObserver((l) => {
      if (!B.on) return;
      for (const e of l.getEntries()) { B.longTasks++; B.longMs += e.duration; }
    }).observe({ entryTypes: ['longtask'] });
    B.received = () => { const k = window.__ph.stats().kinds; return mix.reduce((n, m) => n + (k[m] || 0), 0); };
  }, MIX);
  console.log('ready');

  let base = 0, dropped0 = 0;
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === 'stage') {
      [base, dropped0] = await page.evaluate(() => {
        const B = window.__bench;
        B.lags = []; B.frames = []; B.longTasks = 0; B.longMs = 0; B.resets = 0; B.on = true;
        return [B.received(), window.__ph.stats().appDropped];
      });
      console.log('armed');
    } else if (cmd === 'end') {
      const n = Number(arg), t0 = Date.now();
      let got = 0, lastGot = -1, lastMove = Date.now();
      while (Date.now() - lastMove < 3000) {
        got = await page.evaluate(() => window.__bench.received()) - base;
        if (got >= n) break;
        if (got !== lastGot) { lastGot = got; lastMove = Date.now(); }
        await sleep(50);
      }
      const drainMs = Date.now() - t0;
      const r = await page.evaluate(() => {
        const B = window.__bench;
        B.on = false;
        return { lags: B.lags.slice().sort((a, b) => a - b), frames: B.frames.slice().sort((a, b) => a - b),
          longTasks: B.longTasks, longMs: B.longMs, resets: B.resets, dropped: window.__ph.stats().appDropped };
      });
      console.log(JSON.stringify({
        emitted: n, received: got, lost: Math.max(0, n - got), appDropped: r.dropped - dropped0,
        drainMs, lagP50: round(pct(r.lags, 0.5)), lagP95: round(pct(r.lags, 0.95)), lagMax: round(pct(r.lags, 1)),
        frameMsP50: round(pct(r.frames, 0.5)), frameMsP95: round(pct(r.frames, 0.95)), frames: r.frames.length,
        longTasks: r.longTasks, longTaskMs: Math.round(r.longMs), snapshots: r.resets,
      }));
    }
  }
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
