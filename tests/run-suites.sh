#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every suite against one build: unit tests, end-to-end scripts and
# golden cases.  Usage: tests/run-suites.sh BUILD_DIR LABEL RESULTS_FILE
# Each suite's "[name] N passed, N failed" line is appended to RESULTS_FILE.
# Exits non-zero when anything failed.
#
# The end-to-end scripts and the goldens run PH_TEST_JOBS at a time
# (default 2): most of their wall time is an app running for a set number
# of seconds, not CPU, so two lanes halve it.  Every script keeps its own
# temporary directory, app id and port, and the ones that record a system
# trace take /tmp/porthole-tracefs.lock.  The unit tests run alone first:
# their threaded cases compare against baselines measured in the process.
set -u
build=$1 label=$2 results=$3
jobs=${PH_TEST_JOBS:-2}
cd "$(dirname "$0")/.."
status=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. tests/lib/record.sh

echo "== unit tests ($label)"
started=$(date +%s)
PH_TEST_SUITE=unit "$build/tests/unit-tests" > "$work/unit.out" 2>&1
rc=$?
grep -v '^ok ' "$work/unit.out"
echo "   $(($(date +%s) - started)) s"
record unit "$work/unit.out" $rc

# One line per suite: NAME SCRIPT.  The longest suites of the last run
# of any pass (build/suite-seconds) start first, so the lanes end
# together; a suite not timed yet starts before the timed ones.
: > "$work/list"
for t in tests/e2e/*.sh; do
	[ -e "$t" ] && echo "e2e-$(basename "$t" .sh) $t" >> "$work/list"
done
[ -x tests/golden/run.sh ] && echo "golden tests/golden/run.sh" >> "$work/list"
times=build/suite-seconds
[ -f "$times" ] || : > "$times"
awk 'FILENAME == ARGV[1] { s[$1] = $2; next }
     { print (($1 in s) ? s[$1] : 1e9), $0 }' "$times" "$work/list" |
	sort -k1,1nr -k2,2 | cut -d' ' -f2- > "$work/order"

# run_one NAME SCRIPT: its output, exit status and seconds into $work
# shellcheck disable=SC2016
run_one='
	started=$(date +%s)
	PH_BUILD=$0 PH_SUITE=$2 sh "$3" > "$1/$2.out" 2>&1
	echo $? > "$1/$2.rc"
	echo $(($(date +%s) - started)) > "$1/$2.secs"'
xargs -P "$jobs" -L 1 sh -c "$run_one" "$build" "$work" < "$work/order"

# Reported in name order, as a serial run would print them.
: > "$times.new"
sort "$work/list" | while read -r name script; do
	echo "== $(echo "$name" | sed 's/^e2e-/e2e /') ($label)"
	grep -v '^ok ' "$work/$name.out" 2>/dev/null
	secs=$(cat "$work/$name.secs" 2>/dev/null || echo 0)
	echo "$name $secs" >> "$times.new"
	# Each suite's wall time goes to the log (not the results file), so
	# a slow suite is found by reading one run's output.
	echo "   $secs s"
	record "$name" "$work/$name.out" "$(cat "$work/$name.rc" 2>/dev/null || echo 1)"
	[ $status = 0 ] || echo 1 > "$work/failed"
done
mv "$times.new" "$times"
[ -e "$work/failed" ] && status=1
exit $status
