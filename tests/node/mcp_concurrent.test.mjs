// SPDX-License-Identifier: Apache-2.0
// `porthole mcp` under concurrent load, driven by the official MCP SDK: a
// system trace recorded on the server's background thread while a burst
// of calls that reach the trace engine and the store is answered on its
// main thread, and the link keeps ingesting.  It runs in every pass; the
// TSan pass (tests/run-threaded.sh) runs it against build/tsan, where a
// data race in the server is a report.  It records with tracefs, which is
// machine-wide: run it under flock /tmp/porthole-tracefs.lock.
//
//   PH_BIN=build/bin node --test tests/node/mcp_concurrent.test.mjs
//
// Nothing here asserts a wall-clock constant.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.resolve(ROOT, process.env.PH_BIN || 'build/bin');
const APP = `mcp.conc.${process.pid}`;
const FIXTURES = path.resolve(ROOT, process.env.PORTHOLE_FIXTURES || '../shared/fixtures');
const PHONE = path.join(FIXTURES, 'perfetto/simple_perfetto_2026-03-05_00-54_1338.pftrace');
// A sanitized build at load is slow: no call may time out on that alone.
const LONG = { timeout: 600000 };

let dir, sample, client, transport;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const call = (name, args = {}) => client.callTool({ name, arguments: args }, undefined, LONG);

before(async () => {
	dir = mkdtempSync(path.join(tmpdir(), 'ph-mcpconc-'));
	sample = spawn(path.join(BIN, 'porthole-sample'), ['--scenario', 'all',
		'--seconds', '600', '--app-id', APP, '--data-dir', path.join(dir, 'data')],
	{ stdio: 'ignore' });
	let listening = false;
	for (let i = 0; i < 2400 && !listening; i++) {
		listening = readFileSync('/proc/net/unix', 'utf8').includes(`@porthole.${APP}`);
		if (!listening) await sleep(50);
	}
	assert.ok(listening, `porthole-sample never listened on @porthole.${APP}`);
	transport = new StdioClientTransport({
		command: path.join(BIN, 'porthole'),
		args: ['mcp'],
		env: { ...process.env, PORTHOLE_APPLICATION_ID: APP, PORTHOLE_PROJECT_ROOT: dir },
		stderr: 'inherit',
	});
	client = new Client({ name: 'porthole-conc-test', version: '1.0.0' });
	await client.connect(transport);
	// Connected, and events stored: the calls below reach the store.
	for (let i = 0; i < 2400; i++) {
		const st = text(await call('porthole_status'));
		if (/^connected/m.test(st) && !/\b0 events\b/.test(st)) break;
		await sleep(50);
	}
});

after(async () => {
	if (client) await client.close();
	if (sample) sample.kill('SIGKILL');
	if (dir) rmSync(dir, { recursive: true, force: true });
});

test('calls that reach the trace engine and the store are answered while a capture records', async () => {
	assert.ok(existsSync(PHONE), `fixture ${PHONE}`);
	let done = false;
	const cap = client.callTool({ name: 'capture_system_trace', arguments: { seconds: 2 } }, undefined, LONG)
		.finally(() => { done = true; });
	// Sent together: the SDK writes them at once, the server reads them
	// while the capture's thread records and then asks its trace.
	const burst = await Promise.all([
		call('ask_system_trace', { trace: PHONE, process: '557' }),
		call('ask_system_trace', { trace: PHONE, process: '557', detail: 'normal' }),
		call('findings', { since: 'all' }),
		call('timeline', {}),
		call('blocking', {}),
		call('logs', {}),
		call('ask_system_trace', { trace: PHONE, process: '557' }),
		call('porthole_status'),
	]);
	for (const [i, r] of burst.entries())
		assert.equal(r.isError, false, `call ${i}: ${text(r)}`);
	assert.equal(burst[0].structuredContent.process, 'as asked');
	const res = await cap;
	assert.ok(done);
	if (res.isError) {
		// no tracefs here: the recorder's own reason, said plainly
		assert.match(text(res), /no system trace: /);
		return;
	}
	// The recording is asked on the main thread as more calls come.
	const again = await Promise.all([
		call('ask_system_trace', { trace: res.structuredContent.trace }),
		call('ask_system_trace', { trace: PHONE, process: '557' }),
		call('findings', { since: 'all' }),
	]);
	assert.match(text(again[0]), /asked \d+, skipped \d+, unanswered \d+, ruled out \d+/);
	assert.equal(again[1].isError, false, text(again[1]));
	assert.equal(again[2].isError, false, text(again[2]));
});
