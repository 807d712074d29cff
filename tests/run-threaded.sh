#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The TSan pass, against a build made with -fsanitize=thread (all and
# tests): the unit tests that run threads (their case names start with
# mt_), then the end-to-end checks that send concurrent requests through
# the UI and MCP servers to the engines (tests/e2e/ui_concurrent.sh,
# mcp_concurrent.sh).  Each appends "[tsan:NAME] N passed, N failed" to
# RESULTS_FILE; a ThreadSanitizer report from any process they started
# (the server, the sample) is one more failure.  Races inside libraries
# we cannot fix are suppressed, each with its reason, in tests/tsan.supp.
# Usage: BUILD_DIR RESULTS_FILE
set -u
build=$1 results=$2
cd "$(dirname "$0")/.."
out=$(mktemp)
reports=$(mktemp -d)
status=0
supp="suppressions=$(pwd)/tests/tsan.supp"

echo "== threaded unit tests (tsan)"
PH_TEST_SUITE=tsan TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $supp" \
	"$build/tests/unit-tests" __mt_ > "$out" 2>&1
rc=$?
grep -v '^ok ' "$out"
line=$(grep -E '^\[tsan\] [0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
[ -n "$line" ] && [ $rc -eq 0 ] || { line="[tsan] 0 passed, 1 failed"; status=1; }
echo "$line" | tee -a "$results"

# The servers keep running past a report (halt_on_error=0) so every race
# of the run is listed; each process writes its reports to log_path.PID.
for name in ui_concurrent mcp_concurrent; do
	echo "== e2e $name (tsan)"
	rm -f "$reports"/r.*
	PH_BUILD=$build PH_SUITE=e2e-$name \
		TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 $supp log_path=$reports/r" \
		sh "tests/e2e/$name.sh" > "$out" 2>&1
	rc=$?
	grep -v '^ok ' "$out"
	line=$(grep -E '^\[[^]]*\] [0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
	passed=$(echo "$line" | sed -n 's/.* \([0-9]*\) passed.*/\1/p')
	failed=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed$/\1/p')
	[ -n "$passed" ] || { passed=0; failed=1; }
	[ $rc -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
	if ls "$reports"/r.* > /dev/null 2>&1; then
		echo "ThreadSanitizer reported (tests/tsan.supp lists what is suppressed):"
		cat "$reports"/r.*
		failed=$((failed + 1))
	fi
	[ "$failed" -eq 0 ] || status=1
	echo "[tsan:e2e-$name] $passed passed, $failed failed" | tee -a "$results"
done
rm -rf "$out" "$reports"
exit $status
