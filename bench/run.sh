#!/bin/sh
# Runs every benchmark group, or one: bench/run.sh BUILD_DIR [GROUP]
# Each figure is one JSON line on stdout; the run ends with a summary line.
set -u
build=$1 group=${2:-}
cd "$(dirname "$0")/.."
# Groups in the order the issues name them; a group runs when its
# bench/bench_<group>.c exists (more than one binary per group may follow).
groups=""
for g in json agent host mcp ui trace heap iotrace; do
	[ -x "$build/bin/bench-$g" ] && groups="$groups $g"
done
ran=0 failed=0
for g in $groups; do
	[ -z "$group" ] || [ "$group" = "$g" ] || continue
	if "$build/bin/bench-$g"; then ran=$((ran + 1)); else failed=$((failed + 1)); fi
done
if [ $ran -eq 0 ] && [ $failed -eq 0 ]; then
	echo "bench: no group named '$group' (groups: $groups)" >&2
	exit 2
fi
echo "{\"name\":\"bench_summary\",\"value\":$ran,\"unit\":\"groups\",\"failed\":$failed,\"machine\":\"$(nproc) cores, $(uname -m), $(uname -r)\"}"
[ $failed -eq 0 ]
