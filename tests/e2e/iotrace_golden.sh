#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Golden cases of `porthole iotrace parse` and `summary`, kept as data in
# tests/golden/iotrace/CASE/ (curl's tests/data habit):
#   input.txt            ftrace text, or
#   source               a fixture to read instead (path under fixtures;
#                        a .html.zip is unzipped first)
#   expected.csv         every ds row, all files joined, one header
#   expected-head.csv    or only the first rows, with
#   expected.sha256      the SHA-256 of all of them
#   expected-counters.json  the manifest's "parse" and "pairing" objects
#   expected-summary.txt `porthole iotrace summary` (LC_ALL=C)
#   args                 options for parse instead of the pinned offset
# Times are pinned: TZ=UTC and --mono-to-real-offset-ns 1700000000e9
# (unless args says otherwise).
# PH_GOLDEN_UPDATE=1 rewrites the expected files from what the build says
# (then read every diff before committing it).
. tests/lib/e2e.sh
P="$BIN/porthole"
G=tests/golden/iotrace
export TZ=UTC LC_ALL=C
OFFSET=1700000000000000000

# ds_rows DIR: every ds file of DIR decompressed, one header row
ds_rows() {
	first=1
	for f in "$1"/ds/ds_*.csv.gz; do
		[ -e "$f" ] || continue
		if [ $first = 1 ]; then gzip -dc "$f"; first=0
		else gzip -dc "$f" | tail -n +2; fi
	done
}

# counters DIR: the parse and pairing objects of the manifest
counters() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
print(json.dumps({"parse": m["parse"], "pairing": m["pairing"],
                  "rows_written": m["rows_written"],
                  "files_written": m["files_written"]}, indent=2))' "$1"
}

# compare NAME EXPECTED ACTUAL: diff, or write EXPECTED when updating
compare() {
	if [ "${PH_GOLDEN_UPDATE:-}" = 1 ]; then
		cp "$3" "$2"
		return 0
	fi
	diff -u "$2" "$3"
}

run_case() {
	c=$1 d=$G/$1 o=$E2E_TMP/$1
	rm -rf "$o" && mkdir -p "$o"
	if [ -f "$d/source" ]; then
		src=$(fixture "$(cat "$d/source")") || return 1
		case $src in
		*.zip)
			python3 -m zipfile -e "$src" "$o/src" || return 1
			src=$(ls "$o"/src/* | head -1) ;;
		esac
	else
		src=$d/input.txt
	fi
	args="--mono-to-real-offset-ns $OFFSET"
	[ -f "$d/args" ] && args=$(cat "$d/args")
	# shellcheck disable=SC2086
	"$P" iotrace parse "$src" --out "$o/rec" $args > "$o/report.txt" ||
		return 1
	ds_rows "$o/rec" > "$o/rows.csv"
	if [ -f "$d/expected.csv" ]; then
		compare "$c rows" "$d/expected.csv" "$o/rows.csv" || return 1
	fi
	if [ -f "$d/expected-head.csv" ]; then
		n=$(wc -l < "$d/expected-head.csv")
		head -n "$n" "$o/rows.csv" > "$o/head.csv"
		compare "$c head" "$d/expected-head.csv" "$o/head.csv" || return 1
		sha256sum < "$o/rows.csv" | cut -d' ' -f1 > "$o/sha"
		compare "$c sha256" "$d/expected.sha256" "$o/sha" || return 1
	fi
	counters "$o/rec" > "$o/counters.json" || return 1
	compare "$c counters" "$d/expected-counters.json" "$o/counters.json" ||
		return 1
	if [ -f "$d/expected-summary.txt" ]; then
		"$P" iotrace summary "$o/rec" |
			sed "s|$o/rec|RECORDING|" > "$o/summary.txt"
		compare "$c summary" "$d/expected-summary.txt" "$o/summary.txt" ||
			return 1
	fi
}

for d in "$G"/*/; do
	c=$(basename "$d")
	[ -f "$d/input.txt" ] || [ -f "$d/source" ] || continue
	check "golden $c" run_case "$c"
done
finish
