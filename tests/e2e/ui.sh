#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of `porthole ui` (issue 6) in a real browser: the
# sample, the server and Debian's Chromium driven by playwright-core
# (tests/node/ui.test.mjs, node's own test runner).  One check per node
# test, read from its TAP output; the page's screenshot is left in
# build/ui-screenshot.png (build/san/ui-screenshot.png for the ASan pass).
. tests/lib/e2e.sh
TAP=$E2E_TMP/ui.tap

check "chromium is installed" test -x /usr/bin/chromium
check "playwright-core is installed (make deps)" test -d node_modules/playwright-core
PH_BIN=$BIN PH_SCREENSHOT=${PH_BUILD:-build}/ui-screenshot.png \
	node --test --test-reporter=tap tests/node/ui.test.mjs > "$TAP" 2>&1
tap_checks "ui.test.mjs" "$TAP" $?
# What the page tells a person (labels, legend, axis, detail panel, keys,
# system lanes); its screenshots at 1280x800 and 1920x1080 stay in the
# scratch dir.
PH_BIN=$BIN PH_SHOTS=$E2E_TMP \
	node --test --test-reporter=tap tests/node/ui-timeline.test.mjs > "$TAP.2" 2>&1
tap_checks "ui-timeline.test.mjs" "$TAP.2" $?
check "the screenshot was written" test -s "${PH_BUILD:-build}/ui-screenshot.png"
finish
