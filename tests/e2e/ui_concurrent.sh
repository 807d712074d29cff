#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `porthole ui` under concurrent requests, without a browser
# (tests/node/ui_concurrent.test.mjs): 8 clients ask for trace-merged
# findings at once while a page's WebSocket is open, then the server stops
# with requests in flight.  The TSan pass (tests/run-threaded.sh) runs
# this script against build/tsan too.
. tests/lib/e2e.sh
TAP=$E2E_TMP/ui_concurrent.tap

check "the fixture trace is there" fixture perfetto/perfetto_android12_cpuschedstack.pftrace
PH_BIN=$BIN node --experimental-websocket --no-warnings --test \
	--test-reporter=tap tests/node/ui_concurrent.test.mjs > "$TAP" 2>&1
tap_checks "ui_concurrent.test.mjs" "$TAP" $?
finish
