#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every benchmark group, or one: bench/run.sh BUILD_DIR [GROUP]
# Each figure is one JSON line on stdout, marked by bench/check.sh against
# bench/targets.tsv (target, met); the run ends with a summary line.  Each
# group's marked lines, closed by a "bench_group" line (date, machine,
# load), are saved as BUILD_DIR/bench-out/GROUP.jsonl, and
# BUILD_DIR/bench.jsonl joins the latest of every group: bench/table.sh
# draws the README's table from it.  Exits 1 when a group fails or any
# figure misses its target (the checker names which on stderr).
set -u
build=$1 group=${2:-}
cd "$(dirname "$0")/.."
# Groups in the order the issues name them; a group runs when its
# bench/bench_<group>.c exists (more than one binary per group may follow).
groups=""
for g in json agent host mcp ui trace heap iotrace; do
	[ -x "$build/bin/bench-$g" ] && groups="$groups $g"
done
# The CPU's name where /proc/cpuinfo gives one (arm64's has no model name).
cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -1)
machine="$(nproc) cores${cpu:+ ($cpu)}, $(uname -m), Linux $(uname -r)"
mkdir -p "$build/bench-out"
ran=0 failed=0 missed=0
for g in $groups; do
	[ -z "$group" ] || [ "$group" = "$g" ] || continue
	out=$build/bench-out/$g.jsonl
	rcf=$build/bench-out/.$g.rc
	{
		"$build/bin/bench-$g"
		echo $? > "$rcf"
	} | bench/check.sh "$g" > "$out.tmp"
	checked=$?
	rc=$(cat "$rcf")
	rm -f "$rcf"
	cat "$out.tmp"
	printf '{"name":"bench_group","group":"%s","status":%s,"missed":%s,"date":"%s","machine":"%s","load1":%s}\n' \
		"$g" "$rc" "$([ $checked -eq 0 ] && echo false || echo true)" \
		"$(date -u +%Y-%m-%dT%H:%MZ)" "$machine" \
		"$(cut -d' ' -f1 /proc/loadavg)" >> "$out.tmp"
	mv "$out.tmp" "$out"
	if [ "$rc" -eq 0 ]; then ran=$((ran + 1)); else failed=$((failed + 1)); fi
	[ $checked -eq 0 ] || missed=$((missed + 1))
done
if [ $ran -eq 0 ] && [ $failed -eq 0 ]; then
	echo "bench: no group named '$group' (groups: $groups)" >&2
	exit 2
fi
cat "$build"/bench-out/*.jsonl > "$build/bench.jsonl"
echo "{\"name\":\"bench_summary\",\"value\":$ran,\"unit\":\"groups\",\"failed\":$failed,\"missed\":$missed,\"machine\":\"$machine\"}"
[ $failed -eq 0 ] && [ $missed -eq 0 ]
