// SPDX-License-Identifier: Apache-2.0
// Coverage over MCP (docs/findings.md, "Coverage"): a host that attaches
// after the app's queue overflowed answers `findings` with what it could
// not see as notSeen, never as quiet.  Run by tests/e2e/host_coverage.sh
// against a porthole-sample it started (PH_APP), with the official SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.resolve(ROOT, process.env.PH_BIN || 'build/bin');
const APP = process.env.PH_APP;
const DIR = process.env.PH_DIR;
let client;

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
// The answer: a summary line, then the JSON (as tests/node/mcp.test.mjs).
const payload = (res) => JSON.parse(text(res).slice(text(res).indexOf('\n{') + 1));

before(async () => {
	assert.ok(APP && DIR, 'PH_APP and PH_DIR are set by host_coverage.sh');
	const transport = new StdioClientTransport({
		command: path.join(BIN, 'porthole'),
		args: ['mcp'],
		cwd: DIR,
		env: { ...process.env, PORTHOLE_APPLICATION_ID: APP, PORTHOLE_PROJECT_ROOT: DIR },
		stderr: 'ignore',
	});
	client = new Client({ name: 'porthole-coverage-test', version: '1.0.0' });
	await client.connect(transport);
});

after(async () => {
	if (client) await client.close();
});

test('findings after a late attach: not seen, with the reason, never quiet', async () => {
	// The first answer may come before the backfill is in: ask until the
	// host holds events (bounded).
	let res, p;
	for (let i = 0; i < 100; i++) {
		res = await client.callTool({ name: 'findings', arguments: { since: 'all', detail: 'normal' } });
		if (!res.isError) {
			p = payload(res);
			if (p.coverage && p.coverage.held) break;
		}
		await new Promise((r) => setTimeout(r, 100));
	}
	assert.ok(p && p.coverage, `no coverage in: ${text(res)}`);
	assert.equal(p.coverage.complete, false, JSON.stringify(p.coverage));
	assert.ok(p.coverage.missingBefore > 0 || p.coverage.missingSeqs > 0,
		JSON.stringify(p.coverage));
	assert.match(p.coverage.reason, /never received|missing by seq/);
	assert.deepEqual(p.quiet, []);
	assert.ok(p.notSeen.includes('main-thread-stall'), JSON.stringify(p.notSeen));
	assert.match(text(res), /NOT SEEN/);
	assert.doesNotMatch(text(res), /checks ran quiet/);
});
