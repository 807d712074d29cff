// SPDX-License-Identifier: Apache-2.0
// The page's own draw time with 100,000 events loaded, in headless
// Chromium (issue 6): pans and zooms, each redraw timed in the page with
// performance.now() around draw().  Prints {"median":ms,"p95":ms,"n":N}.
// The first 30 draws (JIT warm-up) are not counted.
// Usage: node bench/ui_draw.mjs URL
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const url = process.argv[2];
const profile = mkdtempSync(path.join(tmpdir(), 'ph-bench-chromium-'));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1500, height: 900 },
});
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  await page.goto(url);
  const r = await page.evaluate(() => {
    const ph = window.__ph;
    ph.loadSynthetic(100000, 600);
    // Warm-up: the page has drawn many frames by the time a person pans;
    // the first few draws run before V8 has optimized the draw loop.
    for (let i = 0; i < 30; i++) { ph.setView(1000 + i * 10, 601000 - i * 10); ph.drawNow(); }
    const times = [];
    let from = 1000, to = 601000;
    for (let i = 0; i < 400; i++) {
      // zoom in and out around the middle, then pan across
      if (i < 100) { const m = (from + to) / 2, s = (to - from) * 0.93; from = m - s / 2; to = m + s / 2; }
      else if (i < 200) { const m = (from + to) / 2, s = (to - from) / 0.93; from = m - s / 2; to = m + s / 2; }
      else { const d = (to - from) * 0.01; from += d; to += d; }
      ph.setView(from, to);
      const t0 = performance.now();
      ph.drawNow();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { median: times[times.length >> 1], p95: times[Math.floor(times.length * 0.95)], n: times.length };
  });
  console.log(JSON.stringify(r));
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
