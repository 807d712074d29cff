#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The bench's checker and table: bench/check.sh marks figures against a
# targets table and exits 1 on a miss, bench/run.sh fails a run with a
# miss, and bench/table.sh rewrites only the README's marked block from a
# run's saved JSON, printing misses, unmeasured figures and groups that did
# not run as such.  Small saved samples; no bench runs.
. tests/lib/e2e.sh
T=$E2E_TMP
printf '%s\n' '# test targets' \
	'alpha	a_rate	>=	100	ops/s	fast enough' \
	'alpha	a_ns	<=	50	ns	cheap enough' \
	'alpha	a_ref	-	-	ns	a reference' \
	'beta	b_mb	<=	16	MB	small enough' > "$T/targets.tsv"

printf '%s\n' '{"name":"a_rate","value":1234567.8,"unit":"ops/s"}' \
	'{"name":"a_ns","value":31,"unit":"ns","raw":61}' \
	'{"name":"a_ref","value":30,"unit":"ns"}' > "$T/met.json"
check "every target met: exit 0, each line marked" sh -c "
	bench/check.sh alpha '$T/targets.tsv' < '$T/met.json' > '$T/m' &&
	grep -qx '{\"name\":\"a_rate\",\"value\":1234567.8,\"unit\":\"ops/s\",\"group\":\"alpha\",\"target\":100,\"cmp\":\">=\",\"met\":true}' '$T/m' &&
	grep -qx '{\"name\":\"a_ns\",\"value\":31,\"unit\":\"ns\",\"raw\":61,\"group\":\"alpha\",\"target\":50,\"cmp\":\"<=\",\"met\":true}' '$T/m' &&
	grep -qx '{\"name\":\"a_ref\",\"value\":30,\"unit\":\"ns\",\"group\":\"alpha\",\"target\":null,\"cmp\":null,\"met\":null}' '$T/m'"

sed 's/"value":31,/"value":51,/' "$T/met.json" > "$T/miss.json"
check "a missed target: exit 1, named on stderr, met false" sh -c "
	bench/check.sh alpha '$T/targets.tsv' < '$T/miss.json' > '$T/x' 2> '$T/err'
	[ \$? -eq 1 ] && grep -q 'MISSED a_ns = 51 ns, target <= 50' '$T/err' &&
	grep -q '\"name\":\"a_ns\".*\"met\":false}' '$T/x'"

sed 's/"value":31,/"value":null,/' "$T/met.json" > "$T/null.json"
check "a targeted figure not measured: exit 1" sh -c "
	bench/check.sh alpha '$T/targets.tsv' < '$T/null.json' > /dev/null 2> '$T/err'
	[ \$? -eq 1 ] && grep -q 'NOT MEASURED a_ns' '$T/err'"

check "a targeted figure the group never printed: exit 1" sh -c "
	grep -v a_ns '$T/met.json' | bench/check.sh alpha '$T/targets.tsv' \
		> /dev/null 2> '$T/err'
	[ \$? -eq 1 ] && grep -q 'NOT PRINTED a_ns' '$T/err'"

check "a figure that brings its own target: exit 1" sh -c "
	echo '{\"name\":\"b_mb\",\"value\":1,\"unit\":\"MB\",\"target\":9}' |
	bench/check.sh beta '$T/targets.tsv' > /dev/null 2> '$T/err'
	[ \$? -eq 1 ] && grep -q 'b_mb carries its own' '$T/err' &&
	[ \$(wc -l < '$T/err') -eq 1 ]"

check "the project's targets table parses" sh -c "
	echo '{\"name\":\"json_parse_ratio\",\"value\":18.5,\"unit\":\"x\"}' |
	bench/check.sh json | grep -q '\"target\":3,\"cmp\":\">=\",\"met\":true'"

# bench/run.sh over a build whose only bench prints a miss.
mkdir -p "$T/build/bin"
printf '#!/bin/sh\necho %s\n' \
	"'{\"name\":\"json_parse_ratio\",\"value\":2.5,\"unit\":\"x\"}'" \
	> "$T/build/bin/bench-json"
chmod +x "$T/build/bin/bench-json"
check "run.sh exits 1 on a miss and saves the marked run" sh -c "
	bench/run.sh '$T/build' > '$T/run' 2> '$T/err'
	[ \$? -eq 1 ] && grep -q 'MISSED json_parse_ratio' '$T/err' &&
	grep -q '\"met\":false' '$T/build/bench.jsonl' &&
	grep -q '\"name\":\"bench_group\",\"group\":\"json\",\"status\":0' '$T/build/bench.jsonl' &&
	grep -q '\"name\":\"bench_summary\".*\"missed\":1' '$T/run'"

# The table, from a saved run: alpha ran (one miss), beta did not.
{
	sed 's/"value":31,/"value":51,/' "$T/met.json" |
		bench/check.sh alpha "$T/targets.tsv" 2> /dev/null
	echo '{"name":"bench_group","group":"alpha","status":0,"missed":true,"date":"2026-12-02T04:10Z","machine":"2 cores (Test CPU), x86_64, Linux 6.1","load1":4.20}'
} > "$T/bench.jsonl"
printf '%s\n' '# Title' 'before' '<!-- bench-table:begin -->' 'old row' \
	'<!-- bench-table:end -->' 'after' > "$T/README.md"
cat > "$T/want.md" <<'WANT'
# Title
before
<!-- bench-table:begin -->
<!-- drawn by `make bench-table` (bench/table.sh) from SRC; edit bench/targets.tsv or rerun the bench, not this block -->
Measured by bench/run.sh (`make bench`) on 2 cores (Test CPU), x86_64, Linux 6.1.
Each group ran once: alpha 2026-12-02T04:10Z (load 4.20).

| group | figure | measured | target | | what it says |
| --- | --- | --- | --- | --- | --- |
| alpha | `a_rate` | 1,234,568 ops/s | ≥ 100 ops/s | met | fast enough |
| alpha | `a_ns` | 51 ns | ≤ 50 ns | **not met** | cheap enough |
| alpha | `a_ref` | 30 ns | — | no target | a reference |
| beta | (the group did not run) | not measured | | **not measured** | |
<!-- bench-table:end -->
after
WANT
sed -i "s|SRC|$T/bench.jsonl|" "$T/want.md"
check "table: only the marked block, misses and absent groups as such" sh -c "
	bench/table.sh '$T/bench.jsonl' '$T/README.md' '$T/targets.tsv' &&
	diff -u '$T/want.md' '$T/README.md'"
check "table: a second run gives the same README" sh -c "
	bench/table.sh '$T/bench.jsonl' '$T/README.md' '$T/targets.tsv' &&
	diff -u '$T/want.md' '$T/README.md'"
printf '# no markers\n' > "$T/bare.md"
check "table: a README without markers is an error, left as it was" sh -c "
	bench/table.sh '$T/bench.jsonl' '$T/bare.md' '$T/targets.tsv' 2> '$T/err'
	[ \$? -eq 2 ] && grep -q 'needs one' '$T/err' &&
	[ \"\$(cat '$T/bare.md')\" = '# no markers' ]"
check "the README has the table's markers" sh -c "
	grep -qx '<!-- bench-table:begin -->' README.md &&
	grep -qx '<!-- bench-table:end -->' README.md"
finish
