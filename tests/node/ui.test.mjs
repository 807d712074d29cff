// Browser tests of `porthole ui` (issue 6): the real porthole-sample, the
// real server, Debian's Chromium driven by playwright-core.
//
//   PH_BIN=build/bin node --test tests/node/ui.test.mjs
//
// Each test leaves the page as the next one expects it (one page, one app
// run); they run in file order.  Nothing here asserts a wall-clock
// constant: waits are bounded polls for a state.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, copyFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.resolve(ROOT, process.env.PH_BIN || 'build/bin');
const SHOT = path.resolve(ROOT, process.env.PH_SCREENSHOT || 'build/ui-screenshot.png');
const APP = 'dev.porthole.uitest' + process.pid;

const FIXTURES = path.resolve(ROOT, '../shared/fixtures');

let tmp, profile, sample, ui, port, base, browser, page;
let ui2, page2; // the restart-button test's own ui, which starts its app
const pageErrors = []; // uncaught exceptions in any page

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

async function until(what, fn, ms = 30000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out waiting for ' + what + ' (last: ' + (last instanceof Error ? last.message : JSON.stringify(last)) + ')');
}

// Polls text() until it matches re; the last text is in the timeout's message.
async function untilMatch(what, text, re) {
  let last = '';
  try {
    return await until(what, async () => { last = await text(); return re.test(last) ? last : null; });
  } catch (e) {
    throw new Error(e.message + ' (text: ' + JSON.stringify(last) + ')');
  }
}
const ph = (expr, arg) => page.evaluate(expr, arg);
let env;
function startSample() {
  return spawn(path.join(BIN, 'porthole-sample'), ['--scenario', 'checkout', '--seconds', '300',
    '--app-id', APP, '--data-dir', path.join(tmp, 'data')], { cwd: tmp, env, stdio: 'ignore' });
}
const exited = (p) => new Promise((r) => { if (p.exitCode !== null || p.signalCode !== null) r(); else p.once('exit', r); });

before(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'ph-ui-'));
  port = await freePort();
  base = 'http://127.0.0.1:' + port;
  env = { ...process.env, PORTHOLE_PROJECT_ROOT: tmp, PORTHOLE_SESSIONS: '1' };
  sample = startSample();
  // From the checkout: the trace engine finds detectors/ in the working
  // directory or beside build/bin, not beside build/san/bin.
  ui = spawn(path.join(BIN, 'porthole'), ['ui', '--no-open', '--port', String(port), '--application-id', APP],
    { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  await until('the server to be connected to the app', async () => {
    const r = await fetch(base + '/api/status');
    const j = await r.json();
    return j.link.state === 'connected';
  });
  // Outside the project root: `where` walks the root.
  profile = mkdtempSync(path.join(tmpdir(), 'ph-ui-chromium-'));
  // A fresh profile per run (playwright passes it as --user-data-dir).
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1500, height: 900 },
  });
  await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = browser.pages()[0] || await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(base + '/');
});

after(async () => {
  if (browser) await browser.close();
  for (const p of [ui2, ui, sample]) if (p && p.exitCode === null) p.kill('SIGTERM');
  for (const p of [ui2, ui, sample]) if (p) await Promise.race([exited(p), new Promise((r) => setTimeout(r, 5000))]);
  await new Promise((r) => setTimeout(r, 300));
  for (const d of [tmp, profile]) if (d) rmSync(d, { recursive: true, force: true });
});

test('the page connects and streams live', async () => {
  await until('the live state', async () => (await page.locator('#conn').getAttribute('data-state')) === 'connected');
  await until('events counted', async () => /live: \d+ events/.test(await page.locator('#conn-text').textContent()));
});

test('every lane the sample feeds gets marks', async () => {
  const lanes = ['recompose', 'frames', 'main', 'nav', 'http', 'db', 'work', 'memory', 'device', 'warnings'];
  const counts = await until('marks on every lane', async () => {
    const c = await ph(() => window.__ph.laneCounts());
    return lanes.every((l) => c[l] > 0) ? c : null;
  });
  for (const l of lanes) assert.ok(counts[l] > 0, l + ' has marks');
  // The planted stall is on the main-thread lane.
  await until('the planted stall', async () => (await ph(() => window.__ph.marks('main'))).some((m) => m.kind === 'blocked' && /apply_coupon/.test(m.label)));
});

test('findings: loading, then an answer; stale while a new one is asked; empty says it looked', async () => {
  let release;
  const gate = new Promise((r) => { release = r; });
  await page.route('**/api/findings*', async (route) => { await gate; await route.continue().catch(() => {}); });
  // A still window over the whole run, asked while the answer is held back.
  const all = await ph(() => { const m = window.__ph.marks('main'); return [m[0].t0 - 8000, m[0].t0 + 8000]; });
  await ph(([a, b]) => window.__ph.setView(a, b), all);
  await until('loading or stale, never "nothing"', async () => {
    const f = await ph(() => window.__ph.findings());
    return (f.kind === 'loading' || f.kind === 'stale') && !/nothing found/.test(f.text);
  });
  release();
  await page.unroute('**/api/findings*');
  const ok = await until('an answer', async () => {
    const f = await ph(() => window.__ph.findings());
    return f.kind === 'ok' ? f : null;
  });
  assert.ok(ok.n > 0, 'the checkout run has findings');
  // Moving the window makes the shown answer stale until the new one lands.
  let release2;
  const gate2 = new Promise((r) => { release2 = r; });
  await page.route('**/api/findings*', async (route) => { await gate2; await route.continue().catch(() => {}); });
  await ph(([a, b]) => window.__ph.setView(a - 60000, b - 60000), all);
  await until('stale', async () => (await ph(() => window.__ph.findings())).kind === 'stale');
  release2();
  await page.unroute('**/api/findings*');
  // Before the app started nothing happened: the answer says it looked.
  const empty = await until('an empty answer', async () => {
    const f = await ph(() => window.__ph.findings());
    return f.kind === 'empty' ? f : null;
  });
  assert.match(empty.text, /looked: nothing found \(\d+ checks quiet\)/);
});

test('an empty lane says why', async () => {
  // The window from the last test holds no events at all.
  const why = await ph(() => window.__ph.emptyReason('http'));
  assert.match(why, /nothing in this window/);
  await ph(() => window.__ph.withCollectors(['frames', 'main_thread', 'sqlite']));
  assert.match(await ph(() => window.__ph.emptyReason('http')), /curl not instrumented/);
  assert.match(await ph(() => window.__ph.emptyReason('work')), /not instrumented/);
});

test('clicking the planted stall opens its stack', async () => {
  // The planted one (the app has other, stackless stalls too).
  const stall = (await ph(() => window.__ph.marks('main'))).find((m) => m.kind === 'blocked' && /apply_coupon/.test(m.label));
  await ph(([a, b]) => window.__ph.setView(a, b), [stall.t0 - 1000, stall.t1 + 1000]);
  await page.waitForTimeout(100);
  const r = await ph(() => window.__ph.laneRect('main'));
  const x = await ph((t) => window.__ph.xOf(t), (stall.t0 + stall.t1) / 2);
  await page.mouse.click(x, r.y + 6);
  await until('the detail panel', async () => page.locator('#detail').isVisible());
  const text = await page.locator('#detail').textContent();
  assert.match(text, /blocked/);
  assert.match(text, /stack/);
  assert.match(text, /apply_coupon_synchronously/);
});

test('clicking a log line moves the timeline there', async () => {
  const row = page.locator('#log-rows .log').first();
  await until('log rows', async () => (await page.locator('#log-rows .log').count()) > 0);
  const t = Number(await row.getAttribute('data-t'));
  await ph(([a, b]) => window.__ph.setView(a, b), [t + 600000, t + 700000]);
  await row.click();
  const v = await ph(() => window.__ph.view());
  assert.equal(v.follow, false);
  assert.ok(v.from <= t && t <= v.to, 'the log line is inside the window');
  assert.ok(Math.abs((v.from + v.to) / 2 - t) < (v.to - v.from) * 0.05, 'and centred');
});

test('the Framework toggle shows anonymous state writes', async () => {
  // A still window before the app started: nothing live moves the count.
  const first = Number(await page.locator('#log-rows .log').first().getAttribute('data-t'));
  await ph(([a, b]) => window.__ph.setView(a, b), [first - 60000, first - 50000]);
  const t = first - 55000;
  await ph((tt) => window.__ph.inject({ event: 'state_write', t: tt, seq: 999999999, data: { keys: ['unnamed#1f2e'], named: [], unnamed: 1 } }), t);
  await page.waitForTimeout(100);
  const before = await ph(() => window.__ph.drawn('recompose'));
  await page.locator('#framework').check();
  assert.equal(before, 0, 'hidden by default');
  await until('the anonymous write drawn', async () => (await ph(() => window.__ph.drawn('recompose'))) > before);
  await page.locator('#framework').uncheck();
  await until('hidden again', async () => (await ph(() => window.__ph.drawn('recompose'))) === before);
});

test('Ask agent puts the window on the clipboard', async () => {
  await page.locator('#ask').click();
  const clip = await until('the clipboard', async () => {
    const c = await ph(() => navigator.clipboard.readText());
    return /look at device uptime/.test(c) ? c : null;
  });
  const v = await ph(() => window.__ph.view());
  assert.ok(clip.includes(String(Math.floor(v.from))), 'the window is the bounds');
  assert.match(clip, /that window contains/);
  assert.match(clip, /start with \w+ \{"from": \d+, "to": \d+\}/);
});

test('Keep writes a capture that porthole report reads', async () => {
  await page.locator('#follow').check();
  await page.locator('#keep').click();
  const file = await until('the kept path', async () => {
    const v = await page.locator('#toast-value').inputValue();
    return v && v.endsWith('.json') ? v : null;
  });
  assert.match(await page.locator('#toast-text').textContent(), /Kept/);
  const out = execFileSync(path.join(BIN, 'porthole'), ['report', file], { encoding: 'utf8' });
  assert.match(out, /quiet:|findings/);
});

test('the database inspector lists the tables and refuses DELETE', async () => {
  await page.locator('#db').click();
  await page.locator('.db-table[data-name="cart_items"]').waitFor({ timeout: 10000 });
  await page.locator('.db-table[data-name="cart_items"]').click();
  await until('rows', async () => (await page.locator('#db-result tr').count()) > 1);
  await page.locator('#db-sql').fill('DELETE FROM cart_items');
  await page.locator('#db-run').click();
  await until('the refusal', async () => /read-only/.test(await page.locator('#db-error').textContent()));
  // Even past the page's own check, the agent's connection is read-only.
  await page.locator('#db-sql').fill('SELECT count(*) AS n FROM cart_items');
  await page.locator('#db-run').click();
  await until('a result', async () => (await page.locator('#db-result th').allTextContents()).join('|').startsWith('n'));
  assert.equal(await page.locator('#db-error').isVisible(), false);
  await page.keyboard.press('Escape');
});

test('cross-origin and rebound requests are refused', async () => {
  const post = await fetch(base + '/api/save', { method: 'POST', headers: { Origin: 'http://evil.example', 'Content-Type': 'application/json' }, body: '{"from":1,"to":2}' });
  assert.equal(post.status, 403);
  const fromPage = await ph(async (b) => {
    try { const r = await fetch(b.replace('127.0.0.1', 'localhost') + '/api/status'); return r.status; } catch (e) { return 'blocked'; }
  }, base);
  assert.ok(fromPage === 403 || fromPage === 'blocked', 'a cross-origin fetch from the page is refused: ' + fromPage);
  const get = await fetch(base + '/api/findings?from=9&to=3');
  assert.equal(get.status, 400);
  assert.match((await get.json()).error, /must be before/);
  const trace = await fetch(base + '/api/findings?trace=..%2F..%2Fetc%2Fpasswd');
  assert.equal(trace.status, 400);
});

test('screenshot of the checkout run', async () => {
  await page.evaluate(() => { const d = document.getElementById('dbdlg'); if (d.open) d.close(); document.getElementById('toast').hidden = true; });
  // The checkout run: the stall is planted 4 s in, the run lasts 7.5 s.
  const stall = (await ph(() => window.__ph.marks('main'))).find((m) => m.kind === 'blocked' && /apply_coupon/.test(m.label));
  await ph(([a, b]) => window.__ph.setView(a, b), [stall.t0 - 4300, stall.t0 + 4300]);
  await until('a fresh findings answer', async () => (await ph(() => window.__ph.findings())).kind === 'ok');
  const r = await ph(() => window.__ph.laneRect('main'));
  const x = await ph((t) => window.__ph.xOf(t), (stall.t0 + stall.t1) / 2);
  await page.mouse.click(x, r.y + 6);
  await page.waitForTimeout(300);
  await page.screenshot({ path: SHOT });
});

// A real system trace merged into the page's findings.  The fixture was
// recorded on an Android device: its clock maps onto that device's uptime,
// not this app's, and it does not hold the app's process.
test('a system trace from .porthole/traces merges into the findings (fixture)', async () => {
  const src = path.join(FIXTURES, 'perfetto/perfetto_android12_cpuschedstack.pftrace');
  mkdirSync(path.join(tmp, '.porthole/traces'), { recursive: true });
  copyFileSync(src, path.join(tmp, '.porthole/traces/android12.pftrace'));
  const list = await (await fetch(base + '/api/traces')).json();
  const t = list.traces.find((x) => x.id === 'android12.pftrace');
  assert.ok(t, 'listed');
  assert.equal(t.bytes, statSync(src).size);
  assert.ok(t.coverage === null ? typeof t.reason === 'string' : t.coverage.from < t.coverage.to, 'coverage or why not');

  const stall = (await ph(() => window.__ph.marks('main'))).find((m) => m.kind === 'blocked' && /apply_coupon/.test(m.label));
  const [from, to] = [Math.floor(stall.t0 - 4000), Math.ceil(stall.t1 + 4000)];
  // The API: the app's findings and the trace's, in one list.
  const j = await (await fetch(base + '/api/findings?from=' + from + '&to=' + to + '&trace=android12.pftrace')).json();
  const fromTrace = j.findings.filter((f) => f.source === 'trace');
  assert.ok(fromTrace.length > 0, 'the trace answered with findings');
  assert.ok(j.findings.some((f) => f.source !== 'trace'), 'beside the app\'s own');
  assert.ok(Array.isArray(j.asked) && j.asked.includes('thread_states'), 'asked is listed');
  assert.equal(j.trace.id, 'android12.pftrace');
  assert.match(j.trace.processNote, /not in this trace/);

  // The page: pick the trace; the findings lane says what it added.
  await ph(([a, b]) => window.__ph.setView(a, b), [from, to]);
  await page.locator('#trace').focus();
  await until('the trace listed in the page', async () => (await page.locator('#trace option[value="android12.pftrace"]').count()) === 1);
  await page.locator('#trace').selectOption('android12.pftrace');
  const f = await until('an answer with the trace merged', async () => {
    const x = await ph(() => window.__ph.findings());
    return x.kind === 'ok' && x.trace && x.trace.id === 'android12.pftrace' ? x : null;
  });
  assert.equal(f.fromTrace.length, fromTrace.length);
  assert.match(f.text, /system trace android12\.pftrace: \d+ findings? \(\d+ outside this window\), asked jank, thread_states/);
  await page.locator('#trace').selectOption('');
  await until('the trace unmerged', async () => {
    const x = await ph(() => window.__ph.findings());
    return x.kind === 'ok' && !x.trace;
  });
});

// A trace recorded here while the app runs is on the app's clock and holds
// its process: its findings land inside the window, on the findings lane.
test('a system trace recorded with porthole trace record merges onto the timeline', async () => {
  const out = path.join(tmp, '.porthole/traces/live.trace');
  // tracefs is machine-wide: one recorder at a time.
  execFileSync('flock', ['/tmp/porthole-tracefs.lock', path.join(BIN, 'porthole'), 'trace', 'record', '--seconds', '1', '--out', out],
    { cwd: tmp, env, stdio: 'ignore' });
  const list = await (await fetch(base + '/api/traces')).json();
  const t = list.traces.find((x) => x.id === 'live.trace');
  assert.ok(t && t.coverage, 'the recording maps onto the app clock: ' + JSON.stringify(t));
  const pid = await ph(() => window.__ph.stats().hello.pid);
  await ph(([a, b]) => window.__ph.setView(a, b), [t.coverage.from - 500, t.coverage.to + 500]);
  await page.locator('#trace').blur(); // tabbing onto it again lists anew
  await page.locator('#trace').focus();
  await until('the recording listed in the page', async () => (await page.locator('#trace option[value="live.trace"]').count()) === 1);
  await page.locator('#trace').selectOption('live.trace');
  const f = await until('an answer with the recording merged', async () => {
    const x = await ph(() => window.__ph.findings());
    return (x.kind === 'ok' || x.kind === 'empty') && x.trace && x.trace.id === 'live.trace' ? x : null;
  });
  assert.equal(f.trace.process.pid, pid, 'asked about the app\'s own process');
  assert.equal(f.trace.processNote, undefined);
  assert.ok(f.asked.length > 0);
  assert.match(f.text, /system trace live\.trace: \d+ findings?/);
  // What a one-second trace of an app past its script finds varies (often
  // nothing): whatever it found is drawn, inside the recording.
  if (f.fromTrace.some((x) => x.window)) assert.ok(f.drawnTrace > 0, 'drawn on the findings lane: ' + f.text);
  for (const x of f.fromTrace) if (x.window) assert.ok(x.window.from >= t.coverage.from - 1 && x.window.to <= t.coverage.to + 1, 'inside the recording');
  await page.locator('#trace').selectOption('');
});

// The app goes away and comes back as a new process while the page is
// open: the page says it lost the app, says it reconnected, marks the
// restart, and draws the new process's events.
test('the app restarts while the page is open', async () => {
  await page.locator('#follow').check();
  const before = await ph(() => window.__ph.stats());
  sample.kill('SIGTERM');
  await exited(sample);
  await until('the page shows the app gone', async () => (await page.locator('#conn').getAttribute('data-state')) !== 'connected');
  assert.doesNotMatch(await page.locator('#conn-text').textContent(), /^live/);
  sample = startSample();
  await until('the page reconnected', async () => (await page.locator('#conn').getAttribute('data-state')) === 'connected');
  const after = await until('the new process', async () => {
    const x = await ph(() => window.__ph.stats());
    return x.hello && x.hello.pid === sample.pid ? x : null;
  });
  assert.notEqual(after.hello.pid, before.hello.pid);
  assert.equal(after.restarts.length, 1);
  assert.match(await page.locator('#toast-text').textContent(), new RegExp('pid ' + before.hello.pid + ' → pid ' + sample.pid));
  await untilMatch('the bar says so', () => page.locator('#conn-text').textContent(), /reconnected (once|\d+×) · app restarted once/);
  const at = after.restarts[0].t;
  await until('the new process\'s marks on the lanes it feeds', async () => {
    const lanes = ['recompose', 'frames', 'db', 'memory'];
    const got = await ph((ls) => ls.map((l) => window.__ph.marks(l).filter((m) => m.t0 >= window.__ph.stats().restarts[0].t).length), lanes);
    return got.every((n) => n > 0);
  });
  assert.ok((await ph(() => window.__ph.marks('device'))).some((m) => m.kind === 'restart' && m.t0 === at), 'the restart is marked');
  // Nothing of the old process was lost on the page.
  for (const [k, n] of Object.entries(before.kinds)) assert.ok((after.kinds[k] || 0) >= n, k);
});

// With `porthole ui -- CMD` the page's Restart button restarts the app,
// after asking the person.
test('the restart button asks first, then restarts the app', async () => {
  const app2 = APP + 'r';
  // Port 0: the server picks a free one and prints its URL.
  ui2 = spawn(path.join(BIN, 'porthole'), ['ui', '--no-open', '--port', '0', '--application-id', app2, '--',
    path.join(BIN, 'porthole-sample'), '--scenario', 'checkout', '--seconds', '300', '--app-id', app2,
    '--data-dir', path.join(tmp, 'data2')], { cwd: tmp, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out2 = '';
  ui2.stdout.on('data', (d) => { out2 += d; });
  ui2.stderr.on('data', (d) => { out2 += d; });
  const base2 = (await until('the second server\'s URL', async () => {
    if (ui2.exitCode !== null) throw new Error('porthole ui exited ' + ui2.exitCode + ': ' + out2);
    const m = /porthole ui: (http:\/\/127\.0\.0\.1:\d+)\//.exec(out2);
    return m ? m[1] : null;
  })).replace(/\/$/, '');
  await until('the second server connected to its app', async () => (await (await fetch(base2 + '/api/status')).json()).link.state === 'connected');
  page2 = await browser.newPage();
  page2.on('pageerror', (e) => pageErrors.push(e.message));
  await page2.goto(base2 + '/');
  const st = () => page2.evaluate(() => window.__ph.stats());
  const first = await until('the page live', async () => { const x = await st(); return x.state === 'connected' && x.hello ? x : null; });
  assert.equal(await page2.locator('#restart').isDisabled(), false);
  // Not without asking: dismissed, nothing is sent.
  const posts = [];
  page2.on('request', (r) => { if (r.url().endsWith('/api/restart')) posts.push(r); });
  page2.once('dialog', (d) => d.dismiss());
  await page2.locator('#restart').click();
  assert.equal(posts.length, 0, 'a dismissed confirm sends nothing');
  // And the server refuses a restart that was not confirmed.
  const refused = await fetch(base2 + '/api/restart', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  assert.equal(refused.status, 400);
  let asked = '';
  page2.once('dialog', (d) => { asked = d.message(); d.accept(); });
  await page2.locator('#restart').click();
  const after = await until('the new process on the page', async () => { const x = await st(); return x.hello && x.hello.pid !== first.hello.pid ? x : null; });
  assert.match(asked, /Restart the app\?/);
  assert.equal(posts.length, 1);
  assert.equal(after.restarts.length, 1);
  await untilMatch('reconnected and marked', async () => (await st()).conn, /reconnected (once|\d+×) · app restarted once/);
  await until('the new process\'s events', async () => page2.evaluate(() => {
    const t = window.__ph.stats().restarts[0].t;
    return window.__ph.marks('recompose').some((m) => m.t0 >= t) && window.__ph.marks('db').some((m) => m.t0 >= t);
  }));
  await page2.close();
  ui2.kill('SIGTERM');
  await exited(ui2);
});

test('no page threw an uncaught exception', () => {
  assert.deepEqual(pageErrors, []);
});
