#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Marks one group's bench figures against bench/targets.tsv.
# Usage: bench/check.sh GROUP [TARGETS] < FIGURES > MARKED
# Each JSON line on stdin comes out with "group", "target", "cmp" and
# "met" added: "met" is true or false where the table gives a target, and
# "target" and "met" are null where it gives none.  A miss, a targeted
# figure whose value is null (not measured) and a targeted figure of the
# group that the run never printed are each named on stderr, and make the
# exit status 1: a figure that was not checked is never reported as met.
# So does a line that carries its own "target" (or group, cmp, met): the
# targets live in the table alone.
set -u
group=$1 targets=${2:-$(dirname "$0")/targets.tsv}
[ -r "$targets" ] || { echo "bench/check.sh: cannot read $targets" >&2; exit 2; }
awk -F '\t' -v group="$group" -v targets="$targets" '
function num(s) { return s + 0 }
BEGIN {
	while ((getline row < targets) > 0) {
		if (row ~ /^#/ || row == "")
			continue
		n = split(row, f, "\t")
		if (n < 5 || (f[3] != "<=" && f[3] != ">=" && f[3] != "-")) {
			printf "bench/check.sh: %s: bad row: %s\n", targets, row > "/dev/stderr"
			bad = 1
			continue
		}
		cmp[f[2]] = f[3]; target[f[2]] = f[4]; unit[f[2]] = f[5]
		if (f[1] == group && f[3] != "-")
			want[f[2]] = 1
	}
	if (bad)
		exit 2
}
!/^\{"name":"/ { print; next }
{
	line = $0
	match(line, /^\{"name":"[^"]*"/)
	name = substr(line, 10, RLENGTH - 10)
	value = ""
	if (match(line, /"value":[^,}]*/))
		value = substr(line, RSTART + 8, RLENGTH - 8)
	seen[name] = 1
	# the targets live in one table: a bench that prints its own would
	# give a line two "target" members that disagree
	if (line ~ /"(group|target|cmp|met)":/) {
		printf "bench: %s carries its own group, target, cmp or met; targets belong in %s\n", name, targets > "/dev/stderr"
		failed++
	}
	if (!(name in cmp)) {
		printf "bench: %s has no row in %s\n", name, targets > "/dev/stderr"
		add = "\"target\":null,\"cmp\":null,\"met\":null"
	} else if (cmp[name] == "-") {
		add = "\"target\":null,\"cmp\":null,\"met\":null"
	} else {
		if (value == "" || value == "null") {
			met = "false"
			printf "bench: NOT MEASURED %s (target %s %s %s)\n", name, cmp[name], target[name], unit[name] > "/dev/stderr"
			failed++
		} else if (cmp[name] == "<=" ? num(value) <= num(target[name]) : num(value) >= num(target[name])) {
			met = "true"
		} else {
			met = "false"
			printf "bench: MISSED %s = %s %s, target %s %s\n", name, value, unit[name], cmp[name], target[name] > "/dev/stderr"
			failed++
		}
		add = "\"target\":" target[name] ",\"cmp\":\"" cmp[name] "\",\"met\":" met
	}
	sub(/\}[ \t\r]*$/, "", line)
	print line ",\"group\":\"" group "\"," add "}"
	fflush()
}
END {
	if (bad)
		exit 2
	for (name in want)
		if (!(name in seen)) {
			printf "bench: NOT PRINTED %s (group %s ran without it)\n", name, group > "/dev/stderr"
			failed++
		}
	exit failed ? 1 : 0
}'
