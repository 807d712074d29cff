#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every suite against one build: unit tests, end-to-end scripts and
# golden cases.  Usage: tests/run-suites.sh BUILD_DIR LABEL RESULTS_FILE
# Each suite's "[name] N passed, N failed" line is appended to RESULTS_FILE.
# Exits non-zero when anything failed.
set -u
build=$1 label=$2 results=$3
cd "$(dirname "$0")/.."
status=0

# Each suite's wall time goes to the log (not the results file), so a
# slow suite is found by reading one run's output.
started=0
begin() { echo "== $1"; started=$(date +%s); }

record() { # record NAME OUTPUT_FILE EXIT_STATUS: keep the closing line
	echo "   $(($(date +%s) - started)) s"
	line=$(grep -E '^\[[^]]*\] [0-9]+ passed, [0-9]+ failed$' "$2" | tail -1)
	[ -n "$line" ] || line="[$1] 0 passed, 1 failed"
	# A clean count with a failing exit (a sanitizer's report at exit, a
	# crash after the count) is a failure too.
	if [ "${3:-0}" != 0 ] && echo "$line" | grep -q ' 0 failed$'; then
		echo "  exit status $3 after: $line"
		line="[$1] 0 passed, 1 failed"
	fi
	echo "$line" | sed "s/^\[/[$label:/" | tee -a "$results"
	echo "$line" | grep -q ' 0 failed$' || status=1
}

out=$(mktemp)
begin "unit tests ($label)"
PH_TEST_SUITE=unit "$build/tests/unit-tests" > "$out" 2>&1
rc=$?
grep -v '^ok ' "$out"
record unit "$out" $rc

for t in tests/e2e/*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	begin "e2e $name ($label)"
	PH_BUILD=$build PH_SUITE=e2e-$name sh "$t" > "$out" 2>&1
	rc=$?
	grep -v '^ok ' "$out"
	record "e2e-$name" "$out" $rc
done

if [ -x tests/golden/run.sh ]; then
	begin "golden ($label)"
	PH_BUILD=$build sh tests/golden/run.sh > "$out" 2>&1
	rc=$?
	grep -v '^ok ' "$out"
	record golden "$out" $rc
fi
rm -f "$out"
exit $status
