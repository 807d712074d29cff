#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `porthole mcp` under concurrent calls (tests/node/mcp_concurrent.test.mjs):
# calls that reach the trace engine and the store, sent at once while a
# system trace records on the server's background thread.  The TSan pass
# (tests/run-threaded.sh) runs this script against build/tsan too.
. tests/lib/e2e.sh
TAP=$E2E_TMP/mcp_concurrent.tap

check "sdk installed (make deps)" test -d node_modules/@modelcontextprotocol/sdk
check "the fixture trace is there" fixture perfetto/simple_perfetto_2026-03-05_00-54_1338.pftrace
# It records with tracefs, which is machine-wide: one live trace at a time.
PH_BIN=$BIN flock /tmp/porthole-tracefs.lock node --test \
	--test-reporter=tap tests/node/mcp_concurrent.test.mjs > "$TAP" 2>&1
tap_checks "mcp_concurrent.test.mjs" "$TAP" $?
finish
