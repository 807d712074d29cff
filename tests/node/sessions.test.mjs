// SPDX-License-Identifier: Apache-2.0
// Sessions on disk through hosts that come and go, driven by the official
// MCP SDK client against a running porthole-sample (tests/e2e/sessions.sh).
//
//   PH_BIN=build/bin node --test tests/node/sessions.test.mjs
//
// One sample for the whole file; tests run in file order and share it.  A
// first host records the sample's burst (more events than the app's ring
// holds); a second attaches late, beside it; then the first goes and a
// third takes over.  Each later host must answer for the whole recording,
// as a host reading only the session on disk does.  Nothing here asserts
// a wall-clock constant: every wait is a bounded poll for a condition.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.resolve(ROOT, process.env.PH_BIN || 'build/bin');
const APP = `sessions.test.${process.pid}`;
// The agent's ring (docs/protocol.md §1.6): a host attaching late gets at
// most this many events from the app itself.
const RING = 4096;

let dir, sample;
const hosts = [];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// Polls fn until it returns a truthy value; the last value otherwise.
async function until(fn, ms = 90000, step = 200) {
	let v;
	for (const end = Date.now() + ms; Date.now() < end; await sleep(step)) {
		v = await fn();
		if (v) return v;
	}
	return v;
}

async function host(args = [], env = {}) {
	const transport = new StdioClientTransport({
		command: path.join(BIN, 'porthole'),
		args: ['mcp', ...args],
		env: { ...process.env, PORTHOLE_APPLICATION_ID: APP, PORTHOLE_PROJECT_ROOT: dir, ...env },
		stderr: 'ignore',
	});
	const client = new Client({ name: 'porthole-sessions-test', version: '1.0.0' });
	await client.connect(transport);
	hosts.push(client);
	return client;
}

// The JSON payload that follows the summary line.
async function findings(client, args) {
	const res = await client.callTool({ name: 'findings', arguments: { detail: 'normal', limit: 100, ...args } });
	const t = text(res);
	assert.equal(res.isError, false, t);
	return { t, p: JSON.parse(t.slice(t.indexOf('\n{') + 1)) };
}

// The findings of an answer, with their counts ("resolved" ones are the
// previous call's, not this window's).
const ids = (p) => p.findings.filter((f) => f.status !== 'resolved')
	.map((f) => `${f.id} x${f.count}`).sort();

function sessionDir() {
	const root = path.join(dir, '.porthole', 'sessions');
	const names = existsSync(root) ? readdirSync(root).filter((n) => n.startsWith(APP)) : [];
	return names.length === 1 ? path.join(root, names[0]) : null;
}

function meta() {
	const d = sessionDir();
	try {
		return JSON.parse(readFileSync(path.join(d, 'meta.json'), 'utf8'));
	} catch {
		return null;
	}
}

async function connected(client) {
	return until(async () => {
		const res = await client.callTool({ name: 'porthole_status', arguments: {} });
		return /^connected to /.test(text(res));
	});
}

// The answer once the host has taken in what was recorded before it came
// (until then it says it is still loading).
async function settled(client, args) {
	return until(async () => {
		const r = await findings(client, args);
		return (r.p.notes || []).some((n) => /still loading/.test(n)) ? null : r;
	});
}

let window1, want, meta1, h3;

before(async () => {
	dir = mkdtempSync(path.join(tmpdir(), 'ph-sessions-'));
	sample = spawn(path.join(BIN, 'porthole-sample'), ['--scenario', 'all',
		'--seconds', '600', '--app-id', APP, '--data-dir', path.join(dir, 'data')],
	{ stdio: 'ignore' });
	await until(() => readFileSync('/proc/net/unix', 'utf8').includes(`@porthole.${APP}`), 20000, 50);
});

after(async () => {
	for (const c of hosts) {
		try { await c.close(); } catch { /* gone already */ }
	}
	if (sample) sample.kill('SIGKILL');
	if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a recording host sees the whole burst', async () => {
	const h1 = await host();
	await connected(h1);
	// The burst comes at 8 s: wait until the session holds well over a
	// ring's worth of events (meta.json is rewritten every 2 s).
	const m = await until(() => {
		const x = meta();
		return x && x.events > 4 * RING && x;
	});
	assert.ok(m && m.events > 4 * RING, `session meta: ${JSON.stringify(m)}`);
	window1 = (await findings(h1, { since: 'all' })).p.window;
	// An event can arrive after the window that holds it has passed (a
	// stall's is sent when it ends): wait until the app's clock is well
	// past it, then ask about it.
	await until(async () => (await findings(h1, { since: 'all' })).p.window.to > window1.to + 3000);
	const r = await findings(h1, { from: window1.from, to: window1.to });
	want = ids(r.p);
	assert.ok(want.length >= 5, r.t);
});

test('a host that attaches late answers for what was recorded before it', async () => {
	const h2 = await host();
	await connected(h2);
	const r = await settled(h2, { from: window1.from, to: window1.to });
	assert.deepEqual(ids(r.p), want, r.t);
	await h2.close();
});

test('a restarted host answers from the session for what its store lacks', async () => {
	await hosts[0].close();
	meta1 = meta();
	assert.ok(meta1 && meta1.events > 4 * RING, JSON.stringify(meta1));
	h3 = await host();
	await connected(h3);
	const r = await settled(h3, { from: window1.from, to: window1.to });
	assert.deepEqual(ids(r.p), want, r.t);
	// ... and the same as a host that reads only the disk
	const off = await host(['--no-link']);
	const d = await findings(off, { from: window1.from, to: window1.to });
	assert.deepEqual(ids(d.p), want, d.t);
	await off.close();
});

test('a restarted writer never shrinks what an earlier writer recorded', async () => {
	await h3.close(); // its close writes meta.json
	const m = meta();
	assert.ok(m, 'meta.json');
	assert.ok(m.events >= meta1.events, `events ${m.events} < ${meta1.events}`);
	assert.equal(m.firstT, meta1.firstT);
	assert.ok(m.lastT >= meta1.lastT);
	assert.deepEqual(m.profile, meta1.profile);
	for (const [kind, n] of Object.entries(meta1.counts))
		assert.ok((m.counts[kind] || 0) >= n, `${kind}: ${m.counts[kind]} < ${n}`);
});
