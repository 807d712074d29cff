// SPDX-License-Identifier: Apache-2.0
// The MCP tools' windows and parameters (issue 18, "no false all-clear:
// every answer states what it saw and is right about it"), driven by the
// official MCP TypeScript SDK against a running porthole-sample.
//
//   PH_BIN=build/bin node --test tests/node/mcp_tools.test.mjs
//
// One sample (the `all` scenario: checkout, then a burst of marks that
// pushes older events out of the app's ring), one server for the whole
// file; tests
// run in file order.  The app's answers are checked against the events
// the same server holds (timeline over the same window), never against a
// wall-clock constant.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.resolve(ROOT, process.env.PH_BIN || 'build/bin');
const APP = `mcp.tools.${process.pid}`;
const RING = 4096; // the agent's ring, events (include/porthole.h ring_size)

let dir, sample, client;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const call = (name, args = {}) => client.callTool({ name, arguments: args });
// The summary line without its size note (which counts the payload),
// past any banner line (an error the running app made since the last call).
const BANNER = /^\d+ unreported errors?: /;
const line = (res) => text(res).split('\n').find((l) => !BANNER.test(l)).replace(/ \[\d+ returned; full ≈ \d+\]$/, '');
const payload = (res) => {
	const t = text(res);
	return JSON.parse(t.slice(t.indexOf('\n{') + 1));
};
// The window an answer quotes: "t=FROM..TO".
const quoted = (res) => {
	const m = line(res).match(/t=(\d+|start)\.\.(\d+)/);
	assert.ok(m, `no window quoted in: ${line(res)}`);
	return { from: m[1] === 'start' ? null : Number(m[1]), to: Number(m[2]) };
};
// The events of some kinds the server holds over a window.
async function held(kinds, w) {
	const res = await call('timeline', { ...w, kinds, limit: 100000, detail: 'normal' });
	assert.equal(res.isError, false, text(res));
	return payload(res).events;
}

// The stalls among blocked events: a stall sent while it lasts is several
// events (ongoing ones, then the closing one) with its start as t; the
// newest tells it.
function stallsOf(events) {
	const by = new Map();
	for (const e of events) by.set(e.t, e);
	return [...by.values()];
}

before(async () => {
	dir = mkdtempSync(path.join(tmpdir(), 'ph-mcp-tools-'));
	sample = spawn(path.join(BIN, 'porthole-sample'), ['--scenario', 'all',
		'--seconds', '600', '--app-id', APP, '--data-dir', path.join(dir, 'data')],
	{ stdio: 'ignore' });
	for (let i = 0; i < 400; i++) {
		if (readFileSync('/proc/net/unix', 'utf8').includes(`@porthole.${APP}`)) break;
		await sleep(50);
	}
	const transport = new StdioClientTransport({
		command: path.join(BIN, 'porthole'),
		args: ['mcp'],
		env: { ...process.env, PORTHOLE_APPLICATION_ID: APP, PORTHOLE_PROJECT_ROOT: dir },
		stderr: 'ignore',
	});
	client = new Client({ name: 'porthole-tools-test', version: '1.0.0' });
	await client.connect(transport);
	// The checkout part ends by popping back home, and the burst of
	// marks follows: wait until the server holds more marks than the
	// app's ring has slots (4096), so the app no longer holds the
	// checkout's log lines.
	for (let i = 0; i < 600; i++) {
		const res = await call('timeline', { since: 'all', kinds: ['mark'], limit: 1 });
		const m = text(res).match(/: (\d+) events matched/);
		if (!res.isError && m && Number(m[1]) > RING) break;
		await sleep(100);
	}
});

after(async () => {
	if (client) await client.close();
	if (sample) sample.kill('SIGKILL');
	if (dir) rmSync(dir, { recursive: true, force: true });
});

test('blocking applies from/to: only the stalls overlapping the window', async () => {
	const stalls = stallsOf(await held(['blocked'], { since: 'all' }));
	assert.ok(stalls.length >= 1, 'the checkout scenario stalls the main thread');
	const s = stalls[0];
	// Before the first stall: nothing, as the events say.
	const before = { from: 0, to: s.t - 1 };
	const b0 = await call('blocking', { ...before, detail: 'normal' });
	assert.equal(b0.isError, false, text(b0));
	assert.equal(payload(b0).blocking.stalls.length,
		stallsOf(await held(['blocked'], before)).length, text(b0));
	assert.match(line(b0), new RegExp(`t=0\\.\\.${s.t - 1}: 0 main-thread stalls`));
	// The stall's own instant: that stall.
	const at = { from: s.t, to: s.t };
	const b1 = await call('blocking', { ...at, detail: 'normal' });
	const listed = payload(b1).blocking.stalls;
	assert.equal(listed.length, stallsOf(await held(['blocked'], at)).length, text(b1));
	assert.ok(listed.some((x) => x.at === s.t), text(b1));
});

test('frames applies from/to, lists the worst first, and its summary is the same at every detail', async () => {
	const all = await held(['frame'], { since: 'all' });
	assert.ok(all.length >= 3, `the checkout scenario draws late frames (${all.length})`);
	// A closed window over the first half of them.
	const w = { from: all[0].t, to: all[Math.floor(all.length / 2)].t };
	const inw = await held(['frame'], w);
	const lines = [];
	for (const detail of ['summary', 'normal', 'full']) {
		const res = await call('frames', { ...w, detail });
		assert.equal(res.isError, false, text(res));
		lines.push(line(res));
		if (detail === 'summary') continue;
		const f = payload(res).frames;
		assert.equal(f.jankyFrames, inw.length, text(res));
		for (let i = 1; i < f.worst.length; i++)
			assert.ok(f.worst[i - 1].totalMs >= f.worst[i].totalMs, `worst first: ${text(res)}`);
		for (const x of f.worst)
			assert.ok(x.at <= w.to && x.at + x.totalMs >= w.from, `outside the window: ${x.at}`);
		const max = Math.max(...inw.map((e) => e.data.totalMs));
		assert.equal(f.worst[0].totalMs, max);
	}
	assert.equal(lines[1], lines[0]);
	assert.equal(lines[2], lines[0]);
	assert.match(lines[0], new RegExp(`: ${inw.length} late frames? `));
	// Outside every late frame: none, and said so.
	const last = all[all.length - 1];
	const after = { from: last.t + last.data.totalMs + 1, to: last.t + last.data.totalMs + 2 };
	const none = await call('frames', { ...after, detail: 'normal' });
	assert.equal(payload(none).frames.jankyFrames, (await held(['frame'], after)).length);
});

test('an inverted window is refused by every window tool, and moves no since:"last" mark', async () => {
	const { tools } = await client.listTools();
	const windowed = tools.filter((t) => t.inputSchema.properties?.from).map((t) => t.name);
	assert.ok(windowed.includes('findings') && windowed.includes('timeline'), windowed.join());
	for (const name of ['timeline', 'findings', 'blocking', 'frames']) {
		// since:"all" marks this tool's window as answered up to its end
		const all = await call(name, { since: 'all' });
		assert.equal(all.isError, false, text(all));
		const end = quoted(all).to;
		const bad = await call(name, { from: 10, to: 5 });
		assert.equal(bad.isError, true, `${name}: ${text(bad)}`);
		assert.match(text(bad), /window t=10\.\.5 is empty: it starts after it ends/);
		// the next since:"last" still starts where since:"all" ended
		// (once the app's clock has moved on, so that it is not empty)
		await sleep(3);
		const next = await call(name, {});
		assert.equal(next.isError, false, text(next));
		assert.equal(quoted(next).from, end + 1, `${name}: ${line(next)}`);
	}
	for (const name of windowed) {
		const args = { from: 10, to: 5 };
		if (name === 'save_moment') args.name = 'inverted';
		const bad = await call(name, args);
		assert.equal(bad.isError, true, `${name}: ${text(bad)}`);
		assert.match(text(bad), /is empty: it starts after it ends/, name);
	}
	// a start after now, with to left open, holds nothing either
	const future = await call('timeline', { from: 2 ** 52 });
	assert.equal(future.isError, true, text(future));
});

test('logs answers the lines the session holds, also those the app no longer does', async () => {
	const marks = await call('timeline', { since: 'all', kinds: ['mark'], limit: 1 });
	assert.ok(Number(text(marks).match(/: (\d+) events matched/)[1]) > RING,
		`the burst must outgrow the app's ring: ${line(marks)}`);
	const lines = await held(['log'], { since: 'all' });
	assert.ok(lines.length >= 2, 'the checkout logs');
	const res = await call('logs', { since: 'all', limit: 1000, detail: 'normal' });
	assert.equal(res.isError, false, text(res));
	const got = payload(res).logs.entries;
	assert.equal(got.length, lines.length, text(res));
	assert.match(line(res), new RegExp(`: ${lines.length} log lines`));
	for (let i = 1; i < got.length; i++) assert.ok(got[i - 1].t >= got[i].t, 'newest first');
	// the app counts what its ring let go: not a constant 0
	const ev = line(res).match(/; (\d+) older lines? (?:is|are) no longer held there/);
	assert.ok(ev && Number(ev[1]) > 0, line(res));
	// the filters hold on the lines the host answers with
	const errors = lines.filter((l) => ['E', 'F'].includes(l.data.level));
	assert.ok(errors.length >= 1, 'the checkout logs an error');
	const e = await call('logs', { since: 'all', level: 'E', limit: 1000, detail: 'normal' });
	assert.deepEqual(payload(e).logs.entries.map((x) => x.t).sort(),
		errors.map((x) => x.t).sort(), text(e));
	const tagged = lines.filter((l) => /net/i.test(l.data.tag));
	const t = await call('logs', { since: 'all', tag: 'NET', limit: 1000, detail: 'normal' });
	assert.equal(payload(t).logs.entries.length, tagged.length, text(t));
});

test('what_was_happening says "not held" for an instant the server holds nothing of', async () => {
	// Long before the sample started (t is the machine's uptime).
	const early = await call('what_was_happening', { at: 1, detail: 'normal' });
	assert.equal(early.isError, false, text(early));
	assert.match(line(early), /^at t=1: not held: the events held here start at t=\d+/);
	assert.doesNotMatch(line(early), /not seen busy/);
	assert.equal(payload(early).held, false);
	// After the app's now: not known yet.
	const { to } = quoted(await call('timeline', { since: 'all', limit: 1 }));
	const late = await call('what_was_happening', { at: to + 1e9 });
	assert.match(line(late), /not held: it is after the app's now/);
	// Inside a stall the server holds: the stall.
	const s = stallsOf(await held(['blocked'], { since: 'all' }))[0];
	const mid = await call('what_was_happening', { at: s.t + 1, detail: 'normal' });
	assert.equal(payload(mid).held, true, text(mid));
	assert.match(line(mid), new RegExp(`main thread blocked ${s.data.durationMs} ms`));
});

test('state applies its owner filter', async () => {
	const all = payload(await call('state', { detail: 'normal' })).state.owners;
	assert.ok(all.length >= 1, 'the sample registers state');
	const name = all[0].name;
	const one = await call('state', { owner: name, detail: 'normal' });
	const got = payload(one).state.owners;
	assert.ok(got.length >= 1 && got.every((o) => o.name === name), text(one));
	const none = await call('state', { owner: 'NoSuchOwner', detail: 'normal' });
	assert.equal(none.isError, false, text(none));
	assert.equal(payload(none).state.owners.length, 0, text(none));
	assert.match(line(none), /^0 state owners, 0 fields for NoSuchOwner: the app registered no owner of that name \(its owners: /);
});

test('an empty or "null" string argument counts as absent, as in the published runtime', async () => {
	const owners = payload(await call('state', { detail: 'normal' })).state.owners.length;
	const { to } = quoted(await call('timeline', { since: 'all', limit: 1 }));
	const w = { from: 0, to };
	const base = payload(await call('recompositions', { ...w, detail: 'normal' })).recompositions;
	assert.ok(base.totalNodes >= 1, 'the sample recomposes');
	for (const v of ['', 'null']) {
		const st = await call('state', { owner: v, detail: 'normal' });
		assert.equal(payload(st).state.owners.length, owners, `owner ${JSON.stringify(v)}: ${text(st)}`);
		const rc = await call('recompositions', { ...w, screen: v, detail: 'normal' });
		assert.equal(payload(rc).recompositions.totalNodes, base.totalNodes,
			`screen ${JSON.stringify(v)}: ${text(rc)}`);
		const lg = await call('logs', { ...w, tag: v, contains: v, detail: 'normal' });
		const all = await call('logs', { ...w, detail: 'normal' });
		assert.equal(line(lg), line(all), `tag/contains ${JSON.stringify(v)}`);
	}
});

test('what_was_happening names the state written just before, from the wire\'s keys', async () => {
	const writes = await held(['state_write'], { since: 'all' });
	assert.ok(writes.length >= 1, 'the sample writes state');
	const sw = writes[writes.length - 1];
	assert.ok(Array.isArray(sw.data.keys) && sw.data.keys.length >= 1, JSON.stringify(sw));
	const res = await call('what_was_happening', { at: sw.t, detail: 'normal' });
	const before = payload(res).stateWrittenBefore;
	for (const k of sw.data.keys) assert.ok(before.includes(k), `${k} not in "${before}"`);
	assert.match(line(res), new RegExp(`state writes? in the 2000 ms before: .*${sw.data.keys[0].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
});
