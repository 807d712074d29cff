#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Draws the README's performance table from a bench run's saved JSON.
# Usage: bench/table.sh BENCH_JSONL [README] [TARGETS]
# BENCH_JSONL is what bench/run.sh saved (BUILD_DIR/bench.jsonl): figures
# marked by bench/check.sh and one "bench_group" line per group.  The
# table replaces what lies between the README's <!-- bench-table:begin -->
# and <!-- bench-table:end --> lines and nothing else.  A figure that
# missed its target reads "**not met**", one never measured "not
# measured", and a group of bench/targets.tsv absent from the run gets a
# row saying it did not run: the table never shows more than was checked.
set -u
jsonl=$1 readme=${2:-README.md} targets=${3:-$(dirname "$0")/targets.tsv}
for f in "$jsonl" "$readme" "$targets"; do
	[ -r "$f" ] || { echo "bench/table.sh: cannot read $f" >&2; exit 2; }
done
begin='<!-- bench-table:begin -->' end='<!-- bench-table:end -->'
if [ "$(grep -c -x -F "$begin" "$readme")" != 1 ] ||
	[ "$(grep -c -x -F "$end" "$readme")" != 1 ]; then
	echo "bench/table.sh: $readme needs one '$begin' line and one '$end' line" >&2
	exit 2
fi
table=$(mktemp)
trap 'rm -f "$table" "$table.new"' EXIT
awk -v targets="$targets" -v src="$jsonl" '
# A member of a flat JSON line: a string without its quotes, or a number,
# true, false or null as written; "" when absent.
function get(line, key,    s) {
	if (match(line, "\"" key "\":\"[^\"]*\""))
		return substr(line, RSTART + length(key) + 4, RLENGTH - length(key) - 5)
	if (match(line, "\"" key "\":[^,}]*"))
		return substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
	return ""
}
function commas(n,    s, out) {
	s = sprintf("%.0f", n)
	out = ""
	while (length(s) > 3) {
		out = "," substr(s, length(s) - 2) out
		s = substr(s, 1, length(s) - 3)
	}
	return s out
}
function shown(v) {
	if (v == "" || v == "null")
		return "not measured"
	v += 0
	if (v >= 1000 || v <= -1000)
		return commas(v)
	if (v == int(v))
		return v
	if (v >= 10 || v <= -10)
		return sprintf("%.1f", v)
	return sprintf("%.2f", v)
}
BEGIN {
	while ((getline row < targets) > 0) {
		if (row ~ /^#/ || row == "")
			continue
		split(row, f, "\t")
		why[f[2]] = f[6]
		if (!(f[1] in known)) {
			known[f[1]] = 1
			order[++ngroups] = f[1]
		}
	}
	sign["<="] = "≤"; sign[">="] = "≥"
}
/"name":"bench_group"/ {
	g = get($0, "group")
	ran[g] = 1
	when[g] = get($0, "date") " (load " get($0, "load1") ")"
	machine = get($0, "machine")
	if (get($0, "status") != "0")
		broke[g] = get($0, "status")
	next
}
/^\{"name":"/ {
	name = get($0, "name")
	g = get($0, "group")
	met = get($0, "met")
	cmp = get($0, "cmp")
	status = met == "true" ? "met" : met == "false" ? (get($0, "value") == "null" ? "**not measured**" : "**not met**") : "no target"
	tgt = cmp == "" || cmp == "null" ? "—" : sign[cmp] " " shown(get($0, "target")) " " get($0, "unit")
	rows[g] = rows[g] sprintf("| %s | `%s` | %s %s | %s | %s | %s |\n", g, name, shown(get($0, "value")), get($0, "unit"), tgt, status, why[name])
	if (!(g in known)) {
		known[g] = 1
		order[++ngroups] = g
	}
}
END {
	print "<!-- drawn by `make bench-table` (bench/table.sh) from " src "; edit bench/targets.tsv or rerun the bench, not this block -->"
	print "Measured by bench/run.sh (`make bench`) on " (machine == "" ? "(no group ran)" : machine) "."
	printf "Each group ran once:"
	sep = " "
	for (i = 1; i <= ngroups; i++)
		if (order[i] in ran) {
			printf "%s%s %s", sep, order[i], when[order[i]]
			sep = "; "
		}
	print "."
	print ""
	print "| group | figure | measured | target | | what it says |"
	print "| --- | --- | --- | --- | --- | --- |"
	for (i = 1; i <= ngroups; i++) {
		g = order[i]
		if (!(g in ran))
			printf "| %s | (the group did not run) | not measured | | **not measured** | |\n", g
		else {
			printf "%s", rows[g]
			if (g in broke)
				printf "| %s | (the group exited %s) | | | **failed** | its figures above are what it printed before |\n", g, broke[g]
		}
	}
}' "$jsonl" > "$table" || exit 2
awk -v begin="$begin" -v end="$end" -v table="$table" '
$0 == begin { print; while ((getline l < table) > 0) print l; skip = 1; next }
$0 == end { skip = 0 }
!skip' "$readme" > "$table.new" && cat "$table.new" > "$readme"
