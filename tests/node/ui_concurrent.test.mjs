// SPDX-License-Identifier: Apache-2.0
// `porthole ui` under concurrent load, with no browser: the requests that
// reach the engines from many workers at once, while a WebSocket client
// keeps the broadcaster writing, then a stop in the middle of that.  It
// runs in every pass; the TSan pass (tests/run-threaded.sh) runs it
// against build/tsan, where a data race in the server is a report.
//
//   PH_BIN=build/bin node --experimental-websocket --test tests/node/ui_concurrent.test.mjs
//
// Nothing here asserts a wall-clock constant: waits are bounded polls.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.resolve(ROOT, process.env.PH_BIN || 'build/bin');
const APP = 'dev.porthole.uiconc' + process.pid;
const FIXTURES = path.resolve(ROOT, process.env.PORTHOLE_FIXTURES || '../shared/fixtures');
const CLIENTS = 8;

let tmp, sample, ui, port, base;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

// A sanitized build on a loaded machine is slow: generous bounds.
async function until(what, fn, ms = 120000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out waiting for ' + what + ' (last: ' + (last instanceof Error ? last.message : JSON.stringify(last)) + ')');
}

const exited = (p) => new Promise((r) => {
  if (p.exitCode !== null || p.signalCode !== null) r({ code: p.exitCode, signal: p.signalCode });
  else p.once('exit', (code, signal) => r({ code, signal }));
});

before(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'ph-uiconc-'));
  port = await freePort();
  base = 'http://127.0.0.1:' + port;
  const env = { ...process.env, PORTHOLE_PROJECT_ROOT: tmp, PORTHOLE_SESSIONS: '1' };
  mkdirSync(path.join(tmp, '.porthole/traces'), { recursive: true });
  copyFileSync(path.join(FIXTURES, 'perfetto/perfetto_android12_cpuschedstack.pftrace'),
    path.join(tmp, '.porthole/traces/android12.pftrace'));
  sample = spawn(path.join(BIN, 'porthole-sample'), ['--scenario', 'checkout', '--seconds', '600',
    '--app-id', APP, '--data-dir', path.join(tmp, 'data')], { cwd: tmp, env, stdio: 'ignore' });
  // From the checkout: the trace engine finds detectors/ there.
  ui = spawn(path.join(BIN, 'porthole'), ['ui', '--no-open', '--port', String(port), '--application-id', APP],
    { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  await until('the server to be connected to the app', async () => {
    const j = await (await fetch(base + '/api/status')).json();
    return j.link.state === 'connected';
  });
});

after(async () => {
  for (const p of [ui, sample]) if (p && p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const p of [ui, sample]) if (p) await Promise.race([exited(p), new Promise((r) => setTimeout(r, 5000))]);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// Opens a page's WebSocket and resolves once its first frame came (the
// snapshot): from then on the broadcaster writes to it.
function openSocket() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(base.replace('http', 'ws') + '/ws');
    ws.onmessage = () => { ws.onmessage = null; resolve(ws); };
    ws.onerror = (e) => reject(new Error('websocket: ' + (e.message || e.type)));
  });
}

const merged = async () => {
  const r = await fetch(base + '/api/findings?trace=android12.pftrace');
  const j = await r.json();
  assert.equal(r.status, 200, JSON.stringify(j));
  return j;
};

test(CLIENTS + ' clients ask for trace-merged findings at once, with a page open', async () => {
  await until('the app\'s first events', async () => {
    const j = await (await fetch(base + '/api/status')).json();
    return j.store.events > 0;
  });
  const ws = await openSocket();
  try {
    const answers = await Promise.all(Array.from({ length: CLIENTS }, merged));
    for (const j of answers) {
      assert.equal(j.trace.id, 'android12.pftrace');
      assert.ok(j.findings.some((f) => f.source === 'trace'), 'the trace answered: ' + JSON.stringify(j).slice(0, 400));
      assert.ok(Array.isArray(j.asked) && j.asked.length > 0, 'asked is listed');
    }
  } finally {
    ws.close();
  }
});

// The server stops while pages are open and requests are in flight: the
// broadcaster and the workers end before what they use is freed, and the
// process exits 0 (a sanitizer's report at exit would make it non-zero).
test('it stops cleanly while pages are open and requests are in flight', async () => {
  const sockets = await Promise.all([openSocket(), openSocket()]);
  const inflight = Array.from({ length: CLIENTS }, () => merged().catch(() => null));
  // The first answer is back, the others are still being worked on.
  await Promise.race(inflight);
  ui.kill('SIGTERM');
  const { code, signal } = await exited(ui);
  await Promise.all(inflight);
  for (const ws of sockets) ws.close();
  assert.equal(signal, null, 'ended by a signal: ' + signal);
  assert.equal(code, 0, 'exit status');
});
