#!/bin/sh
# The TSan pass: the unit tests that run threads (their case names start
# with mt_), built with -fsanitize=thread.  Usage: BUILD_DIR RESULTS_FILE
set -u
build=$1 results=$2
cd "$(dirname "$0")/.."
out=$(mktemp)
echo "== threaded unit tests (tsan)"
PH_TEST_SUITE=tsan TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	"$build/tests/unit-tests" __mt_ > "$out" 2>&1
rc=$?
grep -v '^ok ' "$out"
line=$(grep -E '^\[tsan\] [0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
[ -n "$line" ] && [ $rc -eq 0 ] || line="[tsan] 0 passed, 1 failed"
echo "$line" | tee -a "$results"
rm -f "$out"
[ $rc -eq 0 ]
