#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs each fuzz target for SECONDS on its seed corpus (read-only: new
# inputs go to a scratch directory).  Usage: SECONDS RESULTS_FILE TARGET...
set -u
secs=$1 results=$2
shift 2
cd "$(dirname "$0")/.."
passed=0 failed=0
for bin in "$@"; do
	name=$(basename "$bin")
	seeds=tests/fuzz/corpus/${name#fuzz_}
	scratch=$(mktemp -d)
	echo "== fuzz $name for ${secs}s"
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$scratch/" -print_final_stats=0 \
		"$scratch" "$seeds" > "$scratch.log" 2>&1; then
		passed=$((passed + 1))
		tail -1 "$scratch.log"
	else
		failed=$((failed + 1))
		tail -40 "$scratch.log"
		# Keep the reproducer where a person will look for it.
		mkdir -p build/fuzz/crashes
		cp "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* \
			build/fuzz/crashes/ 2>/dev/null || true
		echo "reproducers: build/fuzz/crashes/"
	fi
	rm -rf "$scratch" "$scratch.log"
done
echo "[fuzz-smoke] $passed passed, $failed failed" | tee -a "$results"
[ $failed -eq 0 ]
