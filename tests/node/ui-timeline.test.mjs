// SPDX-License-Identifier: Apache-2.0
// Browser tests of what the timeline tells a person (issue ui-2): finding
// labels, the legend, the axis from the app's start, fitting the view, the
// header at 1280 px, the detail panel, keyboard navigation and the system
// lanes.  The real porthole-sample, the real server, Debian's Chromium
// through playwright-core; the page's own DOM and test hooks (window.__ph)
// are read, never pixels of a committed image.
//
//   PH_BIN=build/bin PH_SHOTS=DIR node --test tests/node/ui-timeline.test.mjs
//
// Screenshots at 1280x800 and 1920x1080 go to PH_SHOTS (the e2e script's
// scratch dir).  Tests run in file order on one page; waits are bounded
// polls for a state, never a wall-clock constant.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.resolve(ROOT, process.env.PH_BIN || 'build/bin');
const APP = 'dev.porthole.uitimeline' + process.pid;

let tmp, profile, sample, ui, base, browser, page, shots, recorder, env;
const pageErrors = [];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}
async function until(what, fn, ms = 60000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out waiting for ' + what + ' (last: ' + (last instanceof Error ? last.message : JSON.stringify(last)) + ')');
}
const ph = (expr, arg) => page.evaluate(expr, arg);
const exited = (p) => new Promise((r) => { if (p.exitCode !== null || p.signalCode !== null) r(); else p.once('exit', r); });
const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

before(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'ph-uitl-'));
  shots = process.env.PH_SHOTS || tmp;
  // The project root holds the sample's source, so a stack frame's
  // `where` resolves there (sessions go to its .porthole/ too).
  mkdirSync(path.join(tmp, 'sample'));
  copyFileSync(path.join(ROOT, 'sample/main.c'), path.join(tmp, 'sample/main.c'));
  const port = await freePort();
  base = 'http://127.0.0.1:' + port;
  env = { ...process.env, PORTHOLE_PROJECT_ROOT: tmp, PORTHOLE_SESSIONS: '1' };
  sample = spawn(path.join(BIN, 'porthole-sample'), ['--scenario', 'checkout', '--seconds', '300',
    '--app-id', APP, '--data-dir', path.join(tmp, 'data')], { cwd: tmp, env, stdio: 'ignore' });
  // A system trace of the app's first seconds (its script: late frames,
  // the planted stall), for the system lanes.  tracefs is machine-wide:
  // one recorder at a time, so it may start later than the app.
  mkdirSync(path.join(tmp, '.porthole/traces'), { recursive: true });
  recorder = spawn('flock', ['/tmp/porthole-tracefs.lock', path.join(BIN, 'porthole'), 'trace', 'record', '--seconds', '12',
    '--out', path.join(tmp, '.porthole/traces/run.trace')], { cwd: tmp, env, stdio: 'ignore' });
  ui = spawn(path.join(BIN, 'porthole'), ['ui', '--no-open', '--port', String(port), '--application-id', APP],
    { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  await until('the server to be connected to the app', async () => {
    const j = await (await fetch(base + '/api/status')).json();
    return j.link.state === 'connected';
  });
  profile = mkdtempSync(path.join(tmpdir(), 'ph-uitl-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
  });
  page = browser.pages()[0] || await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(base + '/');
  // The checkout run: its planted stall and its findings.
  await until('the planted stall', async () => (await ph(() => window.__ph.marks('main'))).some((m) => m.kind === 'blocked' && /apply_coupon/.test(m.label)));
});

after(async () => {
  if (browser) await browser.close();
  for (const p of [ui, sample, recorder]) if (p && p.exitCode === null) p.kill('SIGTERM');
  for (const p of [ui, sample, recorder]) if (p) await Promise.race([exited(p), new Promise((r) => setTimeout(r, 5000))]);
  for (const d of [tmp, profile]) if (d) rmSync(d, { recursive: true, force: true });
});

// Fits everything (F with nothing selected) and waits for the findings
// answer of that window, drawn.  freeze: then stops following live, so
// bars stay where they were measured while the test points at them.
async function fitAll(freeze) {
  await page.keyboard.press('Escape');
  await page.mouse.move(5, 5); // off the canvas: zoom about the middle
  await page.keyboard.press('f');
  const answered = () => until('an answer for the fitted window', async () => {
    const f = await ph(() => window.__ph.findings());
    return f.kind === 'ok' && f.n > 0;
  });
  await answered();
  if (freeze) {
    await ph(() => { const v = window.__ph.view(); window.__ph.setView(v.from, v.to); });
    await answered();
  }
  await ph(() => window.__ph.drawNow());
}

test('the view fits the run and the axis starts at 0 s since the app started', async () => {
  await fitAll();
  const v = await ph(() => window.__ph.view());
  const ax = await ph(() => window.__ph.axis());
  const hello = (await ph(() => window.__ph.stats())).hello;
  assert.equal(ax.origin, hello.startedAt, 'the axis counts from the hello\'s startedAt');
  assert.ok(Math.abs(v.from - ax.origin) <= (v.to - v.from) * 0.01, 'the window starts at the app\'s start');
  assert.equal(ax.ticks[0].rel, 0, 'the first tick is the start');
  assert.equal(Number(ax.ticks[0].text.replace(/ s$/, '')), 0);
  assert.match(ax.range, /^0(\.0+)?–\d/, 'the range reads from 0');
  // Hover gives the device clock too.
  const c = await ph(() => window.__ph.canvasRect());
  const text = await ph(([x, y]) => window.__ph.hoverAt(x, y), [c.w / 2, 10]);
  assert.match(text, /s since start \(device uptime \d+/);
  // Following a short run leaves no empty time before the start.
  const s = v.to - v.from, ran = (await ph(() => window.__ph.stats())).edge - ax.origin;
  assert.ok(s <= Math.max(1000, ran / 0.98) * 1.05, 'the window is no wider than the run');
});

for (const [w, h] of [[1280, 800], [1920, 1080]]) {
  test('finding bars carry their titles at ' + w + 'x' + h + ', inside the canvas and apart', async () => {
    await page.setViewportSize({ width: w, height: h });
    await fitAll(true);
    const labels = await until('labels drawn', async () => {
      await ph(() => window.__ph.drawNow());
      const l = await ph(() => window.__ph.labels());
      return l.length ? l : null;
    });
    const c = await ph(() => window.__ph.canvasRect());
    for (const l of labels) {
      assert.ok(l.x >= c.x && l.x + l.w <= c.x + c.w + 0.5 && l.x + l.w <= w, 'label inside the canvas: ' + l.text);
      assert.ok(l.y >= c.y && l.y + l.h <= c.y + c.h && l.y + l.h <= h, 'label inside the viewport: ' + l.text);
      assert.ok(l.full.startsWith(l.text.replace(/…$/, '')), 'a label is its finding\'s title (or its start)');
    }
    for (let i = 0; i < labels.length; i++)
      for (let j = i + 1; j < labels.length; j++)
        assert.ok(!overlap(labels[i], labels[j]), 'labels do not overlap: ' + labels[i].text + ' / ' + labels[j].text);
    // The canvas has the text's pixels where a label is said to be (drawn
    // and read in one go: following live, the next frame moves them).
    const [drawnLabels, inked] = await ph(() => {
      window.__ph.drawNow();
      const ls = window.__ph.labels();
      const cv = document.getElementById('canvas'), r = cv.getBoundingClientRect(), k = cv.width / r.width;
      const g = cv.getContext('2d');
      return [ls, ls.map((l) => {
        const d = g.getImageData(Math.round((l.x - r.left) * k), Math.round((l.y - r.top) * k), Math.max(1, Math.round(l.w * k)), Math.round(l.h * k)).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) {
          const lum = (d[i] + d[i + 1] + d[i + 2]) / 3;
          if (l.dark ? lum < 60 : lum > 150) n++;
        }
        return n;
      })];
    });
    inked.forEach((n, i) => assert.ok(n > 5, 'ink under the label ' + drawnLabels[i].text + ' (' + n + ')'));
    // A bar without room for its title shows it on hover.  Drawn, read
    // and hovered in one go: a findings answer arriving between them
    // replaces the marks, which have no box until the next draw.
    const r = await ph(() => {
      window.__ph.drawNow();
      const ls = window.__ph.labels(), bars = window.__ph.findingBars(), cr = window.__ph.canvasRect();
      if (!bars.length) return { bars };
      const bare = bars.find((b) => !ls.some((l) => l.full === b.title && Math.abs(l.y - b.y) < 1 && l.x >= b.x - 1 && l.x <= b.x + b.w + 4));
      const target = bare || bars[0];
      const px = target.x + Math.min(1, target.w / 2), py = target.y + target.h / 2;
      // The bar drawn last at that point is the one a person sees there.
      const top = bars.filter((b) => px >= b.x && px <= b.x + Math.max(b.w, 3) && py >= b.y && py <= b.y + b.h).pop();
      return { bars, top, hov: window.__ph.hoverAt(px - cr.x, py - cr.y) };
    });
    assert.ok(r.bars.length > 0, 'finding bars drawn');
    assert.ok(r.hov.includes(r.top.title), 'hover names the finding: ' + r.hov + ' (' + r.top.title + ')');
    await page.screenshot({ path: path.join(shots, 'ui-' + w + 'x' + h + '.png') });
  });
}

test('the header fits one row at 1280 px', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const r = await ph(() => {
    const bar = document.getElementById('bar'), br = bar.getBoundingClientRect();
    const kids = [...bar.querySelectorAll('*')].filter((e) => e.offsetWidth > 0).map((e) => { const k = e.getBoundingClientRect(); return { id: e.id || e.className, l: k.left, r: k.right, t: k.top, b: k.bottom }; });
    return { w: bar.clientWidth, sw: bar.scrollWidth, h: br.height, top: br.top, bottom: br.bottom, right: br.right, kids };
  });
  assert.ok(r.sw <= r.w, 'nothing overflows the bar (' + r.sw + ' > ' + r.w + ')');
  assert.ok(r.h < 44, 'one row: ' + r.h + ' px tall');
  for (const k of r.kids) {
    assert.ok(k.t >= r.top && k.b <= r.bottom, k.id + ' inside the bar vertically');
    assert.ok(k.r <= r.right, k.id + ' inside the bar horizontally');
  }
  for (const id of ['restart', 'db', 'keep', 'ask', 'fit']) assert.ok(r.kids.some((k) => k.id === id), id + ' is shown');
});

test('a legend names every color the lanes draw', async () => {
  assert.ok(await page.locator('#legend').isVisible());
  const legend = await ph(() => window.__ph.legend());
  const text = await page.locator('#legend').textContent();
  for (const g of legend) assert.ok(text.includes(g.name), g.name + ' in the legend');
  const lanes = ['recompose', 'frames', 'main', 'nav', 'http', 'db', 'work', 'memory', 'device', 'warnings'];
  for (const id of lanes) {
    const colors = new Set((await ph((l) => window.__ph.marks(l), id)).map((m) => m.color));
    const named = new Set(legend.find((g) => g.lane === id).items.map((i) => i.color));
    for (const c of colors) assert.ok(named.has(c), 'the ' + id + ' lane\'s ' + c + ' is in its legend');
  }
  // The findings lane draws once the host has answered for this view; a
  // loaded machine can still be asking.
  await until('finding bars drawn', async () => (await ph(() => window.__ph.findingBars().length)) > 0);
  for (const sev of ['error', 'warning', 'info']) assert.ok(legend[0].items.some((i) => i.what === sev), sev);
});

test('selecting a finding highlights its evidence and moves the log to it', async () => {
  await fitAll(true);
  // The planted stall's finding, whose evidence is on the main lane (a
  // bar whose evidence is in no drawn lane outlines nothing).  Other bars
  // can cover it (a slow tap in the stall shares its time, and a third
  // bar at once sits over one of the two rows): clicked again at one
  // point, the page chooses the bar under the selected one, so clicks
  // there reach it; a findings answer that re-lays the bars out between
  // the reading and the click is met by reading again.
  const sel = await until('the stall finding selected by clicks', async () => {
    const at = await ph(() => {
      window.__ph.drawNow();
      const b = window.__ph.findingBars().find((x) => x.id === 'main-thread-stall');
      return b ? { x: b.x + Math.min(1, b.w / 2), y: b.y + b.h / 2 } : null;
    });
    if (!at) return null;
    await page.mouse.click(at.x, at.y);
    const s = await ph(() => window.__ph.selected());
    return s && s.finding === 'main-thread-stall' ? s : null;
  });
  assert.equal(sel.lane, 'findings');
  await ph(() => window.__ph.drawNow());
  const hl = await ph(() => window.__ph.highlighted());
  assert.ok(Object.values(hl).some((n) => n > 0), 'evidence outlined in its lanes: ' + JSON.stringify({ hl, finding: sel.finding.id || sel.finding }));
  const log = await ph(() => window.__ph.logSelected());
  assert.ok(log, 'a log line is selected');
  await until('the selected line is in view', async () => {
    const r = await ph(() => {
      const box = document.getElementById('log-rows'), sel = box.querySelector('.log.sel:not([hidden])');
      if (!sel) return null;
      const a = box.getBoundingClientRect(), b = sel.getBoundingClientRect();
      return b.top >= a.top - 1 && b.bottom <= a.bottom + 1;
    });
    return r;
  });
  assert.match(await page.locator('#detail').textContent(), /raw JSON/);
});

// Bars sit on two rows, so a third at once covers one: clicked again at
// one point, the page chooses the bar under the selected one, so every
// finding there can be reached.  Viewed a day wide, the run's bars all
// but meet.  (Runs after the test above: its detail panel is open, so a
// selection does not move the bars.)
test('clicked again at one point, the findings under it take turns', async () => {
  const o = await ph(() => window.__ph.axis().origin);
  await ph((t) => window.__ph.setView(t - 3600e3, t + 23 * 3600e3), o);
  const got = await until('every finding under one point selected in turn', async () => {
    const r = await ph(() => {
      window.__ph.drawNow();
      const bars = window.__ph.findingBars();
      let best = null;
      for (const b of bars) {
        const pt = { x: b.x + Math.min(1, b.w / 2), y: b.y + b.h / 2 };
        const under = bars.filter((u) => pt.x >= u.x && pt.x <= u.x + Math.max(u.w, 3) && pt.y >= u.y && pt.y <= u.y + u.h);
        if (!best || under.length > best.under.length) best = { pt, under: under.map((u) => u.key + '@' + u.t0) };
      }
      return best;
    });
    if (!r || r.under.length < 2) return null;
    const seen = new Set();
    for (let i = 0; i < r.under.length; i++) {
      await page.mouse.click(r.pt.x, r.pt.y);
      const s = await ph(() => window.__ph.selected());
      if (s) seen.add(s.key + '@' + s.t0);
    }
    return r.under.every((k) => seen.has(k)) ? r.under : null;
  });
  assert.ok(got.length >= 2);
});

test('the detail panel: a stall\'s stack as frames that say where they are', async () => {
  const stall = (await ph(() => window.__ph.marks('main'))).find((m) => m.kind === 'blocked' && /apply_coupon/.test(m.label));
  await ph(([a, b]) => window.__ph.setView(a, b), [stall.t0 - 1000, stall.t1 + 1000]);
  await ph(() => window.__ph.drawNow());
  const r = await ph(() => window.__ph.laneRect('main'));
  const x = await ph((t) => window.__ph.xOf(t), (stall.t0 + stall.t1) / 2);
  await page.mouse.click(x, r.y + 6);
  const frame = page.locator('#detail .frame', { hasText: 'apply_coupon_synchronously' }).first();
  await until('the stack as frames', async () => (await frame.count()) > 0);
  assert.equal(await page.locator('#detail-bulk > pre', { hasText: 'apply_coupon_synchronously' }).count(), 0, 'not as raw text');
  await frame.click();
  const where = await until('where it is', async () => {
    const t = await frame.locator('.where').textContent().catch(() => '');
    return /where: sample\/main\.c:\d+/.test(t) ? t : null;
  });
  assert.match(where, /sample\/main\.c:\d+/);
  // The raw JSON is one click away, closed until then.
  const raw = page.locator('#detail details.raw');
  assert.equal(await raw.getAttribute('open'), null);
  await raw.locator('summary').click();
  assert.match(await raw.locator('pre').textContent(), /"event": "blocked"/);
  // Keyboard: F fits the selection.
  await page.mouse.move(5, 5);
  await page.keyboard.press('f');
  const v = await ph(() => window.__ph.view());
  assert.ok(v.from <= stall.t0 && v.to >= stall.t1, 'the stall is in view');
  assert.ok(v.to - v.from <= (stall.t1 - stall.t0) * 2 + 100, 'and fills it');
});

test('the detail panel: a query with its bound values, a call\'s and a frame\'s phases', async () => {
  const open = (lane, pred) => ph(([l, p]) => {
    const ms = window.__ph.marks(l);
    const i = ms.findIndex(new Function('m', 'return ' + p));
    if (i < 0) return false;
    window.__ph.open(l, i);
    return true;
  }, [lane, pred]);
  assert.ok(await until('a query with bound values', () => open('db', 'm.args && m.data.sql.includes("?")')));
  const sql = page.locator('#detail .sql');
  assert.ok(await sql.locator('.bound').count() > 0, 'bound values in place');
  assert.doesNotMatch(await sql.textContent(), /\?/, 'no ? left');
  assert.ok(await until('a call with phases', () => open('http', 'm.data && m.data.phases && Object.keys(m.data.phases).length > 1')));
  const keys = await ph(() => { const m = window.__ph.selected(); return m; });
  assert.equal(keys.lane, 'http');
  const n = await page.locator('#detail .phases span').count();
  assert.ok(n > 1, 'a bar of phases: ' + n);
  assert.match(await page.locator('#detail .phase-keys').textContent(), /\d+ ms/);
  if (await open('frames', 'm.data && m.data.phases && Object.keys(m.data.phases).length > 0'))
    assert.ok(await page.locator('#detail .phases span').count() > 0, 'a frame\'s phases');
});

test('keyboard: W/S zoom, A/D pan as in Perfetto', async () => {
  await page.keyboard.press('Escape');
  await page.mouse.move(5, 5);
  const stall = (await ph(() => window.__ph.marks('main')))[0];
  await ph(([a, b]) => window.__ph.setView(a, b), [stall.t0 - 5000, stall.t0 + 5000]);
  const v0 = await ph(() => window.__ph.view());
  await page.keyboard.press('w');
  const v1 = await ph(() => window.__ph.view());
  assert.ok(v1.to - v1.from < (v0.to - v0.from) * 0.9, 'W zooms in');
  await page.keyboard.press('s');
  const v2 = await ph(() => window.__ph.view());
  assert.ok(Math.abs((v2.to - v2.from) - (v0.to - v0.from)) < 1, 'S zooms back out');
  await page.keyboard.press('d');
  const v3 = await ph(() => window.__ph.view());
  assert.ok(v3.from > v2.from && Math.abs(v3.to - v3.from - (v2.to - v2.from)) < 1, 'D pans right');
  await page.keyboard.press('a');
  await page.keyboard.press('a');
  const v4 = await ph(() => window.__ph.view());
  assert.ok(v4.from < v2.from, 'A pans left');
  assert.equal(v4.follow, false);
});

test('a system trace draws the main thread\'s states and the CPU frequency under the app\'s lanes', async () => {
  const lanesBefore = await ph(() => window.__ph.system().lanes);
  assert.ok(lanesBefore.every((l) => l.h === 0), 'no system lanes without a trace');
  const rc = await until('the recording', () => (recorder.exitCode !== null ? { rc: recorder.exitCode } : null), 240000);
  assert.equal(rc.rc, 0, 'porthole trace record succeeded');
  await page.locator('#trace').focus();
  await until('the recording listed in the page', async () => (await page.locator('#trace option[value="run.trace"]').count()) === 1);
  await page.locator('#trace').selectOption('run.trace');
  const sys = await until('the system lanes', async () => { const x = await ph(() => window.__ph.system()); return x.state === 'ok' || x.state === 'error' ? x : null; }, 120000);
  assert.equal(sys.state, 'ok', sys.error);
  const hello = (await ph(() => window.__ph.stats())).hello;
  assert.ok(sys.thread, 'the app\'s main thread is in the trace: ' + sys.note);
  assert.equal(sys.thread.tid, hello.pid, 'its tid is the app\'s pid');
  assert.ok(sys.states > 0 && sys.classes.includes('running'), 'its states: ' + sys.classes);
  for (const l of sys.lanes) assert.ok(l.h > 0, l.id + ' is shown');
  // Under the app's lanes, on the app's clock, inside the canvas.
  const c = await ph(() => window.__ph.canvasRect());
  const [warn, st, fq, io] = await ph(() => ['warnings', 'sys', 'cpufreq', 'io'].map((id) => window.__ph.laneRect(id)));
  assert.ok(st.y >= warn.y + warn.h && fq.y >= st.y + st.h && io.y >= fq.y + fq.h, 'below the app\'s lanes, block I/O beside them');
  assert.ok(io.y + io.h <= c.y + c.h, 'all inside the canvas');
  await page.keyboard.press('Escape');
  await ph(([a, b]) => window.__ph.setView(a, b), [sys.from, sys.to]);
  await ph(() => window.__ph.drawNow());
  assert.ok(await ph(() => window.__ph.drawn('sys')) > 0, 'states drawn');
  const over = await ph(([a, b]) => window.__ph.systemOver(a, b), [sys.from, sys.to]);
  assert.match(over.text, /^main thread running \d/);
  // Hover over the lane names a state.
  const xm = await ph((t) => window.__ph.xOf(t), (sys.from + sys.to) / 2);
  const hov = await ph(([x, y]) => window.__ph.hoverAt(x, y), [xm - c.x, st.y - c.y + st.h / 2]);
  assert.match(hov, /s since start/);
  // A stall or a late frame inside the recording says what the main
  // thread did meanwhile, in the detail panel.
  const inside = async (lane, kind) => ph(([l, k, a, b]) => window.__ph.marks(l).findIndex((m) => m.kind === k && m.t1 > m.t0 && m.t0 >= a && m.t1 <= b), [lane, kind, sys.from, sys.to]);
  let opened = 0;
  for (const [lane, kind, re] of [['main', 'blocked', /^stall: main thread /], ['frames', 'frame', /^frame late: main thread /]]) {
    const i = await inside(lane, kind);
    if (i < 0) continue;
    await ph(([l, k]) => window.__ph.open(l, k), [lane, i]);
    assert.match(await page.locator('#detail .system-why').textContent(), re);
    opened++;
  }
  await page.screenshot({ path: path.join(shots, 'ui-system-1280x800.png') });
  if (!opened) console.log('# the recording started after the script\'s stall and frames: no detail sentence checked');
  await page.locator('#trace').selectOption('');
  await until('the system lanes hidden', async () => (await ph(() => window.__ph.system().lanes)).every((l) => l.h === 0));
});

test('"reconnected" counts the app\'s answers, not sockets', async () => {
  const st = await (await fetch(base + '/api/status')).json();
  assert.equal(st.link.hellos, 1, 'one hello so far');
  const say = async (connects, hellos) => {
    // Read in the same task: the server's next status frame replaces it.
    return ph((s) => { window.__ph.line({ ui: 'status', status: s }); return document.getElementById('conn-text').textContent; },
      { ...st, link: { ...st.link, connects, hellos } });
  };
  assert.doesNotMatch(await say(2, 1), /reconnected/, 'a socket closed before its hello is no reconnect');
  assert.match(await say(2, 2), /reconnected once/);
  await say(st.link.connects, st.link.hellos);
  const bad = await fetch(base + '/api/where');
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /fn= or file=/);
});

test('no page errors', () => {
  assert.deepEqual(pageErrors, []);
});
