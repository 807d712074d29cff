// SPDX-License-Identifier: Apache-2.0
// The MCP server (issue 5) driven by the official MCP TypeScript SDK as a
// real client, against a running porthole-sample.
//
//   PH_BIN=build/bin node --test tests/node/mcp.test.mjs
//
// One sample, one server for the whole file; tests run in file order.
// Nothing here asserts a wall-clock constant.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.resolve(ROOT, process.env.PH_BIN || 'build/bin');
const APP = `mcp.test.${process.pid}`;
const TOOLS = ['findings', 'recompositions', 'semantics_tree', 'accessibility',
	'nav_state', 'state', 'inflight', 'frames', 'blocking', 'logs', 'timeline',
	'what_was_happening', 'io_summary', 'io_requests', 'system_context',
	'capture_system_trace',
	'system_trace_start', 'system_trace_snapshot', 'system_trace_stop',
	'ask_system_trace', 'save_moment', 'open_timeline', 'porthole_status',
	'porthole_connect', 'setup', 'screenshot'];

let dir, sample, client, transport;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const call = (name, args = {}) => client.callTool({ name, arguments: args });
// An error the app made since the last call leads an answer as a banner
// line (the app keeps running while the tests ask).
const BANNER = /^\d+ unreported errors?: /;
const unbannered = (t) => t.split('\n').filter((l) => !BANNER.test(l));

// Every summary line ends with the size note, measured on the answer.
function sizeNote(res) {
	const t = text(res);
	const m = t.match(/\[(\d+) returned; full ≈ (\d+)\]/);
	assert.ok(m, `no size note in: ${t}`);
	return { returned: Number(m[1]), full: Number(m[2]), t };
}

// A server of its own on raw stdio: send() writes one request line, wait(n)
// polls (bounded) until n answers came, end() closes stdin.
function rawServer(args, env = {}) {
	const p = spawn(path.join(BIN, 'porthole'), ['mcp', ...args],
		{ stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, PORTHOLE_PROJECT_ROOT: dir, ...env } });
	const lines = [];
	let buf = '';
	p.stdout.on('data', (d) => {
		buf += d;
		let i;
		while ((i = buf.indexOf('\n')) >= 0) { lines.push(JSON.parse(buf.slice(0, i))); buf = buf.slice(i + 1); }
	});
	// 'close': after stdout's last data, unlike 'exit'
	const exited = new Promise((r) => p.on('close', (code) => r(code)));
	return {
		p, lines, exited,
		send: (o) => p.stdin.write(JSON.stringify(o) + '\n'),
		wait: async (n) => { for (let i = 0; i < 2400 && lines.length < n; i++) await sleep(25); },
		end: () => p.stdin.end(),
	};
}

before(async () => {
	dir = mkdtempSync(path.join(tmpdir(), 'ph-mcp-'));
	sample = spawn(path.join(BIN, 'porthole-sample'), ['--scenario', 'all',
		'--seconds', '600', '--app-id', APP, '--data-dir', path.join(dir, 'data')],
	{ stdio: 'ignore' });
	// the socket appears once the sample's agent listens (a loaded machine
	// may take a while: a generous bound, and a clear failure past it)
	let listening = false;
	for (let i = 0; i < 1200 && !listening; i++) {
		listening = readFileSync('/proc/net/unix', 'utf8').includes(`@porthole.${APP}`);
		if (!listening) await sleep(50);
	}
	assert.ok(listening, `porthole-sample never listened on @porthole.${APP}`);
	// the checkout scenario runs in the first seconds: let it happen
	await sleep(4000);
	transport = new StdioClientTransport({
		command: path.join(BIN, 'porthole'),
		args: ['mcp'],
		env: { ...process.env, PORTHOLE_APPLICATION_ID: APP, PORTHOLE_PROJECT_ROOT: dir },
		stderr: 'ignore',
	});
	client = new Client({ name: 'porthole-test', version: '1.0.0' });
	await client.connect(transport);
});

after(async () => {
	try { await call('system_trace_stop'); } catch { /* none running */ }
	if (client) await client.close();
	if (sample) sample.kill('SIGKILL');
	if (dir) rmSync(dir, { recursive: true, force: true });
});

test('initialize negotiates the version and gives instructions', async () => {
	const v = client.getServerVersion();
	assert.equal(v.name, 'porthole');
	assert.match(client.getInstructions(), /findings/);
	assert.ok(client.getServerCapabilities().tools);
});

test('tools/list: every tool, with inputSchema and annotations', async () => {
	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name);
	for (const n of TOOLS) assert.ok(names.includes(n), `missing tool ${n}`);
	for (const t of tools) {
		assert.equal(t.inputSchema.type, 'object');
		assert.ok(t.inputSchema.properties.detail, `${t.name}: no detail`);
		assert.equal(t.inputSchema.properties.detail.default, 'summary');
		assert.ok(t.description.length > 40, `${t.name}: thin description`);
		for (const h of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
			assert.equal(typeof t.annotations[h], 'boolean', `${t.name}: ${h}`);
	}
	const f = tools.find((t) => t.name === 'findings');
	for (const k of ['since', 'sinceMs', 'from', 'to']) assert.ok(f.inputSchema.properties[k]);
});

test('findings: ranked, with evidence tools, and a banner exactly when sinceLast names an error', async () => {
	const first = await call('findings', { detail: 'normal', since: 'all' });
	const { t } = sizeNote(first);
	assert.equal(first.isError, false);
	// the sample's checkout: a main-thread query and a 402
	assert.match(t, /main thread/i);
	assert.match(t, /402/);
	const json = JSON.parse(t.slice(t.indexOf('\n{') + 1));
	assert.ok(json.findings.length >= 2);
	for (const f of json.findings) assert.ok(f.evidenceTool, 'evidenceTool');
	assert.ok('sinceLast' in json);
	// chained: a banner leads the next answer only when sinceLast says an
	// error came after this one (the app keeps running); that no error is
	// repeated is test_mcp__findings_banner_once_and_size_notes's, over a
	// store that holds still
	const second = await call('findings');
	const since = second.structuredContent.sinceLast;
	assert.equal(BANNER.test(text(second).split('\n')[0]), since !== null, text(second));
});

test('size notes are the real byte counts', async () => {
	for (const detail of ['summary', 'normal', 'full']) {
		const res = await call('timeline', { since: 'all', detail, limit: 20 });
		const { returned } = sizeNote(res);
		assert.equal(returned, Buffer.byteLength(text(res)), detail);
	}
	const s = await call('findings', { since: 'all' });
	const n = sizeNote(s);
	assert.ok(n.full >= n.returned);
	assert.ok(Buffer.byteLength(unbannered(text(s)).join('\n')) <= 1024, 'summary over 1 KB');
});

test('timeline: kinds filter and truncation note', async () => {
	const res = await call('timeline', { since: 'all', kinds: ['frame'], limit: 5, detail: 'normal' });
	const t = text(res);
	assert.match(t, /newest 5 returned/);
	const json = JSON.parse(t.slice(t.indexOf('\n{') + 1));
	assert.equal(json.events.length, 5);
	for (const e of json.events) assert.equal(e.event, 'frame');
	const bad = await call('timeline', { kinds: ['nope'] });
	assert.equal(bad.isError, true);
	assert.match(text(bad), /unknown event kind/);
});

test('app tools answer with what the sample really did', async () => {
	// The screen now: the script opens the cart at 2 s and goes back home
	// at 7.5 s, and a loaded machine can get here after either.  The answer
	// is the route of the app's newest nav event, before or after the ask.
	const routes = async () => {
		const t = text(await call('timeline', { since: 'all', kinds: ['nav'], limit: 1000, detail: 'normal' }));
		return JSON.parse(t.slice(t.indexOf('\n{') + 1)).events.map((e) => e.data.route);
	};
	const seen = await routes();
	assert.ok(seen.includes('cart'), 'the checkout opened the cart: ' + seen);
	const ns = text(await call('nav_state'));
	const later = await routes();
	const screens = [seen.at(-1), later.at(-1)].map((r) => 'screen: ' + r + ';');
	assert.ok(ns.split('\n').some((l) => screens.some((sc) => l.startsWith(sc))), ns + ' (routes ' + later + ')');
	assert.match(text(await call('blocking', { since: 'all' })), /main-thread quer/);
	assert.match(text(await call('inflight', { since: 'all' })), /open HTTP/);
	assert.match(text(await call('frames', { since: 'all' })), /frames/);
	assert.match(text(await call('logs', { since: 'all', level: 'E' })), /log line/);
	assert.match(text(await call('recompositions', { since: 'all' })), /recomposed/);
	assert.match(text(await call('state')), /state owner/);
	const tree = await call('semantics_tree', { detail: 'normal' });
	assert.match(text(tree), /nodes on screen/);
	assert.match(text(tree), /stableId/);
	const a11y = await call('accessibility', { detail: 'normal' });
	assert.equal(a11y.isError, false);
	// the sample's two planted faults: the share icon button with no
	// label, and the close button at 16 x 16 dp
	assert.match(text(a11y), /Button 'share' is interactive but has no label/);
	assert.match(text(a11y), /Button 'close' is 16x16 dp: under the 24 dp minimum touch target/);
	assert.match(text(await call('setup')), /wired/);
	const st = await call('porthole_status');
	assert.match(text(st), /^connected/m);
	assert.match(text(await call('system_context')), /this machine/);
	const at = await call('what_was_happening', { at: 1 });
	assert.equal(at.isError, false);
	assert.match(text(at), /screen/);
	// a summary is one line of prose: no JSON runs into it (strings the
	// app sent are quoted by length, never read up to a NUL)
	for (const tool of ['blocking', 'logs', 'frames', 'inflight', 'recompositions',
		'nav_state', 'state', 'setup', 'accessibility', 'semantics_tree']) {
		const windowed = ['blocking', 'logs', 'frames', 'inflight', 'recompositions'];
		const t = text(await call(tool, windowed.includes(tool) ? { since: 'all' } : {}));
		assert.doesNotMatch(t, /"\}|\{"/, `${tool}: ${t}`);
	}
});

// The first call, sent the moment the server starts, waits for the link's
// backfill instead of answering "connected, nothing received yet".  (This
// and the next run after the app tools' test: that one reads the cart
// screen, which the sample leaves 7.5 s into its scenario.)
test('the first call after start answers from the backfill', async () => {
	const s = rawServer([], { PORTHOLE_APPLICATION_ID: APP, PORTHOLE_SESSIONS: '0' });
	s.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18' } });
	s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call',
		params: { name: 'timeline', arguments: { since: 'all', detail: 'normal', limit: 1 } } });
	await s.wait(2);
	s.end();
	await s.exited;
	const r = s.lines.find((l) => l.id === 2);
	assert.ok(r, 'no answer to the first call');
	const t = r.result.content[0].text;
	assert.equal(r.result.isError, false, t);
	const json = JSON.parse(t.slice(t.indexOf('\n{') + 1));
	assert.equal(json.source, 'live', t);
	// the checkout scenario ran seconds before this server started
	assert.ok(json.matched > 0, t);
	assert.match(JSON.stringify(json.events), /"seq":/, t);
});

// MCP 2025-06-18: a tool with an outputSchema returns structuredContent
// conforming to it on every result that is not an error (the SDK client
// validates it in callTool, and rejects a result without it).
test('structuredContent is the whole payload, as the outputSchema declares', async () => {
	const { tools } = await client.listTools();
	for (const t of tools) {
		assert.equal(t.outputSchema?.type, 'object', `${t.name}: no outputSchema`);
		assert.deepEqual(t.outputSchema.required, ['sinceLast'], t.name);
	}
	for (const detail of ['normal', 'full']) {
		const res = await call('findings', { since: 'all', detail });
		const t = text(res);
		assert.equal(res.isError, false, t);
		assert.deepEqual(res.structuredContent, JSON.parse(t.slice(t.indexOf('\n{') + 1)), detail);
		assert.ok(res.structuredContent.findings.length >= 2, detail);
	}
	// at summary the text is one line; the structured form is still whole
	const sum = await call('timeline', { since: 'all', limit: 3 });
	const ls = text(sum).split('\n');
	assert.equal(unbannered(text(sum)).length, 1, text(sum));
	assert.equal(ls.length - 1, sum.structuredContent.sinceLast ? 1 : 0, text(sum));
	assert.equal(sum.structuredContent.events.length, 3);
	assert.ok(sum.structuredContent.matched >= 3);
	// an error has none: there is no answer to describe
	const bad = await call('timeline', { kinds: ['nope'] });
	assert.equal(bad.isError, true);
	assert.equal(bad.structuredContent, undefined);
});

// Block I/O: none recorded yet, then a recording attached to the live
// session while this server writes it (`porthole iotrace attach`, as
// `heap dump --session` adds leaks): the server reads the appended lines
// back into its live store and io_summary and findings answer from them.
// The recording is the made-up one of tests/golden/io/data, moved onto
// the sample's clock with --offset-ms; its app is pid 100 (--pid).
test('io_summary: says when no block I/O was recorded, then reads an attached one', async () => {
	const none = await call('io_summary', { since: 'all', detail: 'normal' });
	assert.equal(none.isError, false, text(none));
	assert.match(text(none), /no block I\/O was recorded/);
	assert.match(text(none), /porthole iotrace attach SESSION DIR/);
	const noJson = JSON.parse(text(none).slice(text(none).indexOf('\n{') + 1));
	assert.equal(noJson.recorded, false);

	const sessions = path.join(dir, '.porthole', 'sessions');
	const sid = readdirSync(sessions).find((d) => d.startsWith(APP));
	assert.ok(sid, `no session of ${APP} in ${sessions}`);
	// the session's first t: streamed events, and the backfill's (a
	// `timeline` answer) the host writes first; the file is written
	// every 100 ms, so wait for it
	let firstT = Infinity;
	for (let i = 0; i < 100 && !Number.isFinite(firstT); i++) {
		for (const l of readFileSync(path.join(sessions, sid, 'events.ndjson'), 'utf8').split('\n')) {
			if (!l.trim()) continue;
			const o = JSON.parse(l);
			for (const e of o.event ? [o] : (o.result && o.result.events) || [])
				firstT = Math.min(firstT, e.t);
		}
		if (!Number.isFinite(firstT)) await sleep(50);
	}
	assert.ok(Number.isFinite(firstT), 'no event in the session file');
	// the recording's t=5000 lands 1 s into the session
	const at = spawnSync(path.join(BIN, 'porthole'), ['iotrace', 'attach', sid,
		path.join(ROOT, 'tests/golden/io/data/rec'), '--pid', '100',
		'--offset-ms', String(firstT + 1000 - 5000)],
	{ env: { ...process.env, PORTHOLE_PROJECT_ROOT: dir }, encoding: 'utf8' });
	assert.equal(at.status, 0, at.stderr + at.stdout);
	assert.match(at.stdout, /added {6}\d+ io events/);

	// the server reads them back on its next flush (100 ms)
	let res, json;
	for (let i = 0; i < 100; i++) {
		res = await call('io_summary', { since: 'all', detail: 'normal' });
		json = JSON.parse(text(res).slice(text(res).indexOf('\n{') + 1));
		if (json.recorded) break;
		await sleep(50);
	}
	assert.equal(res.isError, false, text(res));
	assert.equal(json.recorded, true, text(res));
	assert.equal(json.source, 'live');
	// pid 100: 7 requests, 4 on its main thread (tid 100), as the view
	// counts them in tests/golden/io/text
	assert.equal(json.requests.app, 7);
	assert.equal(json.requests.mainThread, 4);
	assert.ok(json.requests.total >= 30, JSON.stringify(json.requests));
	assert.equal(json.recordings.length, 1);
	assert.equal(json.recordings[0].alignment, 'given');
	assert.ok(json.devices.some((d) => d.device === '254:0' && d.operation === 'read'));
	assert.ok(json.findings.some((f) => f.id === 'io-on-main-thread'));
	const { returned, t } = sizeNote(res);
	assert.equal(returned, Buffer.byteLength(text(res)));
	// (an error the app made meanwhile leads the answer as a banner line)
	const lines = unbannered(t);
	assert.match(lines[0], /block I\/O in t=\d+\.\.\d+: \d+ requests \(7 by the app/);
	assert.ok(Buffer.byteLength(unbannered(text(await call('io_summary', { since: 'all' }))).join('\n')) <= 1024,
		'summary over 1 KB');

	// the findings engine judges them too, with source iotrace
	const f = await call('findings', { since: 'all', detail: 'full' });
	const fj = JSON.parse(text(f).slice(text(f).indexOf('\n{') + 1));
	const io = fj.findings.find((x) => x.id === 'io-on-main-thread');
	assert.ok(io, text(f));
	assert.equal(io.source, 'iotrace');
	assert.equal(io.count, 4);
	assert.equal(io.evidenceTool, 'io_summary');

	// and the rows behind them: the main thread's 4, in issue order
	const rq = await call('io_requests', { since: 'all', who: 'main', order: 'time', detail: 'normal' });
	assert.equal(rq.isError, false, text(rq));
	const rj = JSON.parse(text(rq).slice(text(rq).indexOf('\n{') + 1));
	assert.equal(rj.matched, 4, text(rq));
	assert.equal(rj.requests.length, 4);
	for (const r of rj.requests) assert.equal(r.mainThread, true, JSON.stringify(r));
	for (let i = 1; i < rj.requests.length; i++)
		assert.ok(rj.requests[i - 1].from <= rj.requests[i].from, JSON.stringify(rj.requests));
});

test('screenshot: an image, or an honest refusal', async () => {
	const res = await call('screenshot');
	if (res.isError) {
		assert.match(text(res), /refused|cannot/);
	} else {
		const img = res.content.find((c) => c.type === 'image');
		assert.equal(img.mimeType, 'image/png');
		assert.ok(Buffer.from(img.data, 'base64').subarray(1, 4).toString() === 'PNG');
	}
});

test('save_moment and open_timeline write files', async () => {
	const s = await call('save_moment', { since: 'all', name: 'checkout', detail: 'normal' });
	assert.equal(s.isError, false, text(s));
	const p = JSON.parse(text(s).slice(text(s).indexOf('\n{') + 1)).path;
	assert.ok(existsSync(p));
	const o = await call('open_timeline', { detail: 'normal' });
	assert.equal(o.isError, false, text(o));
	assert.match(text(o), /file:\/\//);
	const page = text(o).match(/file:\/\/(\S+\.html)/)[1];
	assert.equal(path.dirname(page), path.join(dir, '.porthole', 'timelines'));
	assert.ok(existsSync(page));
});

// capture_system_trace records on a thread of its own: other calls are
// answered meanwhile, progress comes each second when asked for, and a
// cancellation stops the recorder and leaves no file behind.
test('capture_system_trace: in the background, with progress, cancellable', async () => {
	const traces = path.join(dir, '.porthole', 'traces');
	const files = () => (existsSync(traces) ? readdirSync(traces) : []).sort();
	const progress = [];
	let done = false;
	// the requests as sent, for their ids
	const sent = [];
	const send = transport.send.bind(transport);
	transport.send = (msg, opts) => { sent.push(msg); return send(msg, opts); };
	const cap = client.callTool({ name: 'capture_system_trace', arguments: { seconds: 3 } },
		undefined, { onprogress: (p) => progress.push(p), timeout: 120000 })
		.finally(() => { done = true; });
	// answered while it records; the clock is not read: the capture's own
	// answer cannot come before its 3 s have passed
	const st = await call('porthole_status');
	assert.match(text(st), /^connected/m);
	assert.equal(done, false, 'porthole_status waited for the capture');
	// a second recorder at once is refused (tracefs is one per machine)
	const second = await call('capture_system_trace', { seconds: 1 });
	assert.equal(second.isError, true);
	// naming the request that records, not this one
	const capId = sent.find((m) => m.params?.arguments?.seconds === 3).id;
	assert.match(text(second), new RegExp(`being recorded \\(request ${capId}\\)`), text(second));
	const res = await cap;
	if (res.isError) {
		// no tracefs here: the recorder's own reason, said plainly
		assert.match(text(res), /no system trace: /);
		return;
	}
	assert.match(text(res), /the app is pid \d+/, text(res));
	assert.equal(res.structuredContent.appPid, sample.pid);
	// the header names the app's pid from its hello, whatever its name
	const head = readFileSync(res.structuredContent.trace, 'utf8').split('\n', 6).join('\n');
	assert.match(head, new RegExp(`# porthole application-id: ${APP} pids: ${sample.pid}\\b`), head);
	assert.ok(progress.length >= 2, JSON.stringify(progress));
	for (let i = 1; i < progress.length; i++)
		assert.ok(progress[i].progress > progress[i - 1].progress, JSON.stringify(progress));
	assert.equal(progress[0].total, 3);

	// asked with no process: the attached app, by its pid from hello
	const ask = await call('ask_system_trace', { trace: res.structuredContent.trace, detail: 'normal' });
	assert.equal(ask.isError, false, text(ask));
	assert.equal(ask.structuredContent.process, 'the attached app', text(ask));
	assert.equal(ask.structuredContent.answer.process.pid, sample.pid, text(ask));
	assert.doesNotMatch(text(ask), /busiest/);

	// cancelled: no answer, no file, and the recorder is gone
	const before = files();
	const ac = new AbortController();
	const errors = [];
	client.onerror = (e) => errors.push(e);
	const p2 = client.callTool({ name: 'capture_system_trace', arguments: { seconds: 60 } },
		undefined, { signal: ac.signal, onprogress: () => ac.abort('enough'), timeout: 120000 });
	await assert.rejects(p2);
	// it is over once a new capture is no longer refused as busy
	let again;
	for (let i = 0; i < 400; i++) {
		again = await call('capture_system_trace', { seconds: 1 });
		if (!/being recorded/.test(text(again))) break;
		await sleep(50);
	}
	assert.equal(again.isError, false, text(again));
	const added = files().filter((f) => !before.includes(f));
	assert.deepEqual(added, [path.basename(again.structuredContent.trace)]);
	client.onerror = undefined;
	transport.send = send;
	assert.deepEqual(errors, [], 'an answer came for the cancelled request');
});

// A trace of another machine (the fixture, a phone's) holds neither the
// attached app's pid nor its name: an error naming both, not the answer
// about whichever process was busiest there. A file the engine cannot
// read gets the reason and the next step.
test('ask_system_trace: the attached app by default; unreadable traces say why', async () => {
	const fixtures = process.env.PORTHOLE_FIXTURES || path.resolve(ROOT, '../shared/fixtures');
	const phone = path.join(fixtures, 'perfetto/simple_perfetto_2026-03-05_00-54_1338.pftrace');
	assert.ok(existsSync(phone), `fixture ${phone}`);
	const other = await call('ask_system_trace', { trace: phone });
	assert.equal(other.isError, true, text(other));
	assert.match(text(other), new RegExp(`neither its pid ${sample.pid} nor its process name`));
	assert.match(text(other), /capture_system_trace/);
	// asked about one of its processes (by pid: they have no names), it answers
	const named = await call('ask_system_trace', { trace: phone, process: '557' });
	assert.equal(named.isError, false, text(named));
	assert.equal(named.structuredContent.process, 'as asked');

	const missing = await call('ask_system_trace', { trace: path.join(dir, 'no-such.pftrace') });
	assert.equal(missing.isError, true);
	assert.match(text(missing), /No such file or directory; pass trace: .*capture_system_trace/);
	const junk = path.join(dir, 'junk.pftrace');
	writeFileSync(junk, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]));
	const bad = await call('ask_system_trace', { trace: junk });
	assert.equal(bad.isError, true);
	assert.match(text(bad), /read only in part: byte \d+: .*porthole trace stats FILE/);
});

test('system traces: record, or say why not', async () => {
	const cap = await call('capture_system_trace', { seconds: 1 });
	if (cap.isError) {
		assert.match(text(cap), /no system trace/);
		const ask = await call('ask_system_trace', { trace: '/nonexistent' });
		assert.equal(ask.isError, true);
		return;
	}
	const ask = await call('ask_system_trace', {});
	assert.match(text(ask), /asked \d+, skipped \d+, unanswered \d+, ruled out \d+/);
	const start = await call('system_trace_start');
	if (!start.isError) {
		// the recorder opens its file soon after it starts (an ASan start
		// at load can take longer than the tool's own wait)
		let snap;
		for (let i = 0; i < 200; i++) {
			snap = await call('system_trace_snapshot');
			if (!/cannot copy/.test(text(snap))) break;
			await sleep(100);
		}
		assert.equal(snap.isError, false, text(snap));
		const stop = await call('system_trace_stop');
		assert.equal(stop.isError, false, text(stop));
	}
	const again = await call('system_trace_stop');
	assert.equal(again.isError, true);
});

test('bad arguments are isError with a useful message', async () => {
	let r = await call('findings', { severity: 'loud' });
	assert.equal(r.isError, true);
	assert.match(text(r), /must be one of/);
	r = await call('findings', { bogus: 1 });
	assert.equal(r.isError, true);
	assert.match(text(r), /unknown argument 'bogus'/);
	r = await call('what_was_happening', {});
	assert.equal(r.isError, true);
	assert.match(text(r), /required/);
	r = await call('porthole_connect', { applicationId: 'bad id;rm' });
	assert.equal(r.isError, true);
});

test('an unknown tool is JSON-RPC error -32602', async () => {
	await assert.rejects(call('no_such_tool'), (e) => e.code === -32602);
});

test('raw protocol: a last request without its newline is answered', async () => {
	const s = rawServer(['--no-link']);
	s.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18' } });
	s.p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }));
	s.end();
	assert.equal(await s.exited, 0);
	assert.equal(s.lines.length, 2);
	assert.equal(s.lines[1].id, 2);
	assert.deepEqual(s.lines[1].result, {});
});

test('raw protocol: version negotiation, ping, a line over the cap', async () => {
	const p = spawn(path.join(BIN, 'porthole'), ['mcp', '--no-link'],
		{ stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, PORTHOLE_PROJECT_ROOT: dir } });
	const lines = [];
	let buf = '';
	p.stdout.on('data', (d) => {
		buf += d;
		let i;
		while ((i = buf.indexOf('\n')) >= 0) { lines.push(JSON.parse(buf.slice(0, i))); buf = buf.slice(i + 1); }
	});
	const send = (o) => p.stdin.write(JSON.stringify(o) + '\n');
	const wait = async (n) => {
		for (let i = 0; i < 2400 && lines.length < n; i++) await sleep(25);
		assert.ok(lines.length >= n, 'answers within 60 s: ' + JSON.stringify(lines));
	};
	send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05' } });
	send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '1999-01-01' } });
	send({ jsonrpc: '2.0', id: 3, method: 'ping' });
	p.stdin.write('x'.repeat(5 * 1024 * 1024) + '\n');
	send({ jsonrpc: '2.0', id: 4, method: 'nope' });
	send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
	send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'nav_state' } });
	await wait(6);
	p.stdin.end();
	assert.equal(lines[0].result.protocolVersion, '2024-11-05');
	assert.equal(lines[1].result.protocolVersion, '2025-11-25');
	assert.deepEqual(lines[2].result, {});
	assert.equal(lines[3].error.code, -32600);
	assert.match(lines[3].error.message, /longer than/);
	assert.equal(lines[4].error.code, -32601);
	assert.equal(lines[5].result.isError, true);
	assert.match(lines[5].result.content[0].text, /not connected/);
});
