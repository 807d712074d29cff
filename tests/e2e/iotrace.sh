#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of `porthole iotrace parse` and `summary`, offline: the
# acceptance figures on the 6.18 fixture, the CSV read back by Python's
# csv module with the exact schema-v3 header, the manifest, zstd output,
# compressed and piped input, rotation, and the command line's errors.
# (tests/e2e/iotrace_live.sh records for real; iotrace_golden.sh holds the
# byte-exact cases.)
. tests/lib/e2e.sh
P="$BIN/porthole"
T=$E2E_TMP
export TZ=UTC LC_ALL=C
FX=$(fixture ftrace-block/linux-6.18-virtio-dd-fio.txt) || FX=/missing
HEADER="timestamp,operation,pid,tid,command,sector,size,latency_ms,device,flags,cpu_id,ppid,queue_latency_ms,command_flags,operation_code,request_id,mono_ns"

# The checker: every ds file of a recording through Python's csv module.
cat > "$T/readback.py" <<'EOF'
import csv, glob, gzip, json, re, sys
rec, header = sys.argv[1], sys.argv[2].split(",")
m = json.load(open(rec + "/manifest.json"))
assert m["schema_version"] == 3, m["schema_version"]
cols = [c["name"] for c in m["streams"]["ds"]["columns"]]
assert cols == header, cols
rows = []
for f in sorted(glob.glob(rec + "/ds/ds_*.csv.gz")):
    assert re.search(r"/ds_\d{8}_\d{6}_\d{3}_\d{4}\.csv\.gz$", f), f
    with gzip.open(f, "rt", encoding="utf-8", newline="") as fh:
        r = list(csv.reader(fh))
    assert r[0] == header, r[0]
    rows += r[1:]
assert len(rows) == m["rows_written"]["ds"], (len(rows), m["rows_written"])
ts = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$")
ids = []
for r in rows:
    assert len(r) == 17, r
    d = dict(zip(header, r))
    assert ts.match(d["timestamp"]), d
    assert d["operation"] in ("read", "write", "flush", "discard",
                              "secure_erase", "none"), d
    assert re.match(r"^\d+:\d+$", d["device"]), d
    int(d["mono_ns"]); int(d["size"]); int(d["cpu_id"])
    if d["latency_ms"]:
        assert float(d["latency_ms"]) >= 0, d
        assert d["pid"] and d["command"] and d["request_id"], d
        ids.append(int(d["request_id"]))
    else:
        assert not d["pid"] and not d["command"] and not d["request_id"], d
    assert d["command_flags"] == "" and d["operation_code"] == "", d
assert len(ids) == len(set(ids)), "request_id repeats"
print(len(rows), sum(1 for r in rows if r[7]), sum(1 for r in rows if r[1] == "flush"))
EOF

check "parse: 19,999 paired, 1 with no issue, 1 in flight" sh -c "
	'$P' iotrace parse '$FX' --out '$T/x' > '$T/p.txt' &&
	grep -q '^requests   19,999 paired (1 flush included), 1 completion with no issue, 1 issue still in flight at the end$' '$T/p.txt' &&
	grep -q '^events     20,000 block_rq_issue, 20,000 block_rq_complete$' '$T/p.txt'"
check "parse: Python's csv reads every row back, header exact" sh -c "
	python3 '$T/readback.py' '$T/x' '$HEADER' > '$T/rb.txt' &&
	[ \"\$(cat '$T/rb.txt')\" = '20000 19999 1' ]"
check "parse: the header row, byte for byte" sh -c "
	[ \"\$(gzip -dc '$T'/x/ds/*.csv.gz | head -1)\" = '$HEADER' ]"
check "parse: manifest counters" python3 -c "
import json
m = json.load(open('$T/x/manifest.json'))
p = m['pairing']
assert p['paired'] == 19999 and p['paired_flushes'] == 1, p
assert p['completions_without_issue'] == 1, p
assert p['issues_in_flight_at_end'] == 1, p
assert m['parse']['malformed']['total'] == 0
assert m['files_written'] == {'ds': 1, 'process': 0}, m['files_written']
assert m['mode'] == 'offline' and m['machine_id'] is None
assert isinstance(m['clock']['mono_to_real_offset_ns'], int)
assert m['ftrace_loss']['total_lost'] == 0
"
check "parse --zstd: the same rows as gzip" sh -c "
	'$P' iotrace parse '$FX' --out '$T/g' --mono-to-real-offset-ns 0 >/dev/null &&
	'$P' iotrace parse '$FX' --out '$T/z' --zstd --mono-to-real-offset-ns 0 >/dev/null &&
	ls '$T'/z/ds/ds_*.csv.zst >/dev/null &&
	zstd -qdc '$T'/z/ds/*.csv.zst > '$T/z.csv' &&
	gzip -dc '$T'/g/ds/*.csv.gz > '$T/g.csv' &&
	cmp '$T/z.csv' '$T/g.csv' && grep -q '\"compression\": \"zstd\"' '$T/z/manifest.json'"
check "parse: gzip, zstd and piped input read like the file" sh -c "
	gzip -c '$FX' > '$T/fx.gz' && zstd -q -c '$FX' > '$T/fx.zst' &&
	'$P' iotrace parse '$T/fx.gz' --out '$T/i1' --mono-to-real-offset-ns 0 >/dev/null &&
	'$P' iotrace parse '$T/fx.zst' --out '$T/i2' --mono-to-real-offset-ns 0 >/dev/null &&
	'$P' iotrace parse - --out '$T/i3' --mono-to-real-offset-ns 0 < '$FX' >/dev/null &&
	for d in i1 i2 i3; do gzip -dc '$T'/\$d/ds/*.csv.gz | cmp - '$T/g.csv' || exit 1; done"
check "parse --rotate-mb 1: several files, every row once" sh -c "
	'$P' iotrace parse '$FX' --out '$T/r' --rotate-mb 1 > /dev/null &&
	[ \$(ls '$T'/r/ds/ | wc -l) -eq 2 ] &&
	ls '$T'/r/ds/ | grep -q '_0002.csv.gz\$' &&
	python3 '$T/readback.py' '$T/r' '$HEADER' | grep -q '^20000 19999 1\$'"
check "parse: two files pair across the cut" sh -c "
	head -n 20001 '$FX' > '$T/a.txt' && tail -n +20002 '$FX' > '$T/b.txt' &&
	'$P' iotrace parse '$T/a.txt' '$T/b.txt' --out '$T/two' > '$T/two.txt' &&
	grep -q '19,999 paired' '$T/two.txt'"
check "parse: a systrace HTML file, with its clock marker" sh -c "
	python3 -m zipfile -e '$(fixture systrace/trace_input_blog_launcher_scroll.html.zip)' '$T/st' &&
	'$P' iotrace parse '$T'/st/*.html --out '$T/s' > '$T/s.txt' &&
	grep -q '^requests   9 paired (0 flushes included), 0 completions with no issue, 11 issues still in flight at the end$' '$T/s.txt' &&
	grep -q 'systrace trace_event_clock_sync marker' '$T/s/manifest.json' &&
	gzip -dc '$T'/s/ds/*.csv.gz | sed -n 2p | grep -q '^2019-11-01 08:37:37.980484,read,2145,,pool-2-thread-3,'"
ZIP=$(fixture systrace/trace_input_blog_launcher_scroll.html.zip) || ZIP=/missing
check "parse: a zipped systrace is read from inside the zip" sh -c "
	'$P' iotrace parse '$ZIP' --out '$T/sz' > '$T/sz.txt' &&
	grep -q '^requests   9 paired (0 flushes included), 0 completions with no issue, 11 issues still in flight at the end$' '$T/sz.txt' &&
	gzip -dc '$T'/s/ds/*.csv.gz > '$T/s.csv' &&
	gzip -dc '$T'/sz/ds/*.csv.gz | cmp - '$T/s.csv'"
# what parse cannot read is refused, named, exit 2 -- never 0 events
cat > "$T/mk.py" <<'EOF2'
import bz2, gzip, lzma, sys, zipfile
t, fx = sys.argv[1], sys.argv[2]
text = open(fx, "rb").read(200000)
with zipfile.ZipFile(t + "/bz.zip", "w", zipfile.ZIP_BZIP2) as z:
    z.writestr("trace.txt", text)
with zipfile.ZipFile(t + "/two.zip", "w", zipfile.ZIP_STORED) as z:
    z.writestr("trace.txt", text)
    z.writestr("other.txt", b"not read")
open(t + "/fx.xz", "wb").write(lzma.compress(text))
open(t + "/fx.bz2", "wb").write(bz2.compress(text))
open(t + "/proto.gz", "wb").write(gzip.compress(b"\x0a\x05\x00\x01\x02\x03\x04" * 10))
open(t + "/cut.zip", "wb").write(open(t + "/two.zip", "rb").read()[:5000])
EOF2
check "parse: a zip of stored entries reads the first, says so" sh -c "
	python3 '$T/mk.py' '$T' '$FX' &&
	'$P' iotrace parse '$T/two.zip' --out '$T/z2' > '$T/z2.txt' 2> '$T/z2.err' &&
	grep -q 'reading only the first, trace.txt' '$T/z2.err' &&
	grep -q '^events     [1-9]' '$T/z2.txt'"
check "parse: refuses what is not ftrace text, and names it" sh -c "
	for f in bz.zip:'compression method 12' fx.xz:'xz data' \
		fx.bz2:'bzip2 data' proto.gz:'decompressed, it holds binary data' \
		cut.zip:'end of central directory'; do
		'$P' iotrace parse '$T/'\${f%%:*} --out '$T/no-'\${f%%:*} > /dev/null 2> '$T/no.err'
		[ \$? -eq 2 ] || { echo \$f exit; exit 1; }
		grep -q \"\${f#*:}\" '$T/no.err' || { cat '$T/no.err'; exit 1; }
		[ ! -e '$T/no-'\${f%%:*}/manifest.json ] || exit 1
	done"
# rejected lines and a torn last line: where they are, on stderr, in the
# report and in the manifest
printf '%s\n%s\n%s\n%s' \
	'              dd-7       [000] .....    70.000000: block_rq_issue: 8,0 WS 4096 () 100 + 8 be,0,4 [dd]' \
	'              dd-7       [000] .....    70.000100: block_rq_issue: 8,0 WS 4096 () xx + 8 be,0,4 [dd]' \
	'          <idle>-0       [000] d.h1.    70.000200: block_rq_complete: 8,0 WS () 100 + 8 be,0,4 [0]' \
	'          <idle>-0       [000] d.h1.    70.000300: block_rq_complete: 8,0 WS () 10' > "$T/torn.txt"
check "parse: a rejected line and a torn last line, by line and byte" sh -c "
	'$P' iotrace parse '$T/torn.txt' --out '$T/torn' > '$T/torn.out' 2> '$T/torn.err' &&
	grep -q 'torn.txt:2 (byte 102): rejected block_rq line: bad_sector' '$T/torn.err' &&
	grep -q 'torn.txt:4 (byte 302): the last line has no newline' '$T/torn.err' &&
	grep -q '^           first at .*torn.txt:2 (byte 102): bad_sector$' '$T/torn.out' &&
	grep -q '^torn       the last line, .*torn.txt:4 (byte 302), has no newline' '$T/torn.out' &&
	python3 -c \"
import json
p = json.load(open('$T/torn/manifest.json'))['parse']
assert p['malformed']['first'][0] == {'input': '$T/torn.txt', 'line': 2, 'byte': 102, 'reason': 'bad_sector'}, p
assert p['torn_last_line']['line'] == 4 and p['torn_last_line']['byte'] == 302, p
\""
check "parse: lines in a second, gzipped input count from its start" sh -c "
	gzip -c '$T/torn.txt' > '$T/torn.gz' &&
	'$P' iotrace parse '$FX' - --out '$T/torn2' < '$T/torn.gz' > /dev/null 2> '$T/torn2.err' &&
	grep -q 'standard input:2 (byte 102): rejected' '$T/torn2.err' &&
	grep -q 'standard input:4 (byte 302): the last line has no newline' '$T/torn2.err'"
check "parse: text with no ftrace event is refused, by line and byte" sh -c "
	printf '# a log\nREADME for the app\nmore\n' > '$T/log.txt' &&
	python3 -c 'import zipfile; zipfile.ZipFile(\"$T/log.zip\", \"w\").write(\"$T/log.txt\", \"log.txt\")' &&
	for f in log.txt log.zip; do
		'$P' iotrace parse '$T/'\$f --out '$T/log' > /dev/null 2> '$T/log.err'
		[ \$? -eq 2 ] || { echo \$f exit; exit 1; }
		grep -q \"\$f: not ftrace text: none of its 3 lines is an ftrace event (the first is line 2, byte 8)\" '$T/log.err' || { cat '$T/log.err'; exit 1; }
		[ ! -e '$T/log/manifest.json' ] || exit 1
	done &&
	'$P' iotrace parse '$FX' '$T/log.txt' --out '$T/log' > /dev/null 2> '$T/log.err'
	[ \$? -eq 2 ] && grep -q 'log.txt: not ftrace text' '$T/log.err' &&
	'$P' iotrace parse '$FX' --out '$T/log' > /dev/null"
check "parse: nothing to pair is not an error" sh -c "
	printf '# tracer: nop\n' > '$T/empty.txt' &&
	'$P' iotrace parse '$T/empty.txt' --out '$T/e' > /dev/null 2> '$T/e.err' &&
	grep -q 'no block_rq_issue or block_rq_complete event in the input (no I/O ran' '$T/e.err' &&
	[ -d '$T/e/ds' ] && [ -z \"\$(ls '$T/e/ds')\" ] &&
	'$P' iotrace summary '$T/e' | grep -q '0 rows in 0 ds files'"
check "summary: tables and a histogram" sh -c "
	'$P' iotrace summary '$T/x' > '$T/sum.txt' &&
	grep -q '^device   operation      requests       bytes    p50 ms    p95 ms    p99 ms     max ms$' '$T/sum.txt' &&
	grep -q '^254:0    write            19,995    78.3 MiB     0.075     0.109     0.199      4.794$' '$T/sum.txt' &&
	grep -q '^  16190    dd                   19,958' '$T/sum.txt' &&
	grep -q '50 us - 100 us |########################################|     17,671$' '$T/sum.txt'"
check "summary: UTF-8 blocks when the terminal takes them" sh -c "
	LC_ALL=C.UTF-8 '$P' iotrace summary '$T/x' | grep -q '│████'"
check "summary: of something that is not a recording" sh -c "
	'$P' iotrace summary '$T' 2> '$T/err.txt'; [ \$? -eq 2 ] &&
	grep -q 'ds' '$T/err.txt'"
check "command line: mistakes exit 2 and say why" sh -c "
	'$P' iotrace 2>/dev/null; [ \$? -eq 2 ] || exit 1
	'$P' iotrace parse 2>/dev/null; [ \$? -eq 2 ] || exit 1
	'$P' iotrace parse '$FX' --bogus 2>/dev/null; [ \$? -eq 2 ] || exit 1
	'$P' iotrace record --seconds soon 2>&1 | grep -q 'not a duration' || exit 1
	'$P' iotrace parse /no/such/file --out '$T/n' 2>&1 | grep -q 'No such file' || exit 1
	'$P' iotrace frobnicate 2>&1 | grep -q \"no subcommand 'frobnicate'\""
check "parse: refuses to mix into an existing recording" sh -c "
	'$P' iotrace parse '$FX' --out '$T/x' > /dev/null 2> '$T/again.txt'
	[ \$? -eq 2 ] && grep -q 'already holds a recording' '$T/again.txt' &&
	[ \$(ls '$T/x/ds' | wc -l) -eq 1 ]"
check "help lists iotrace" sh -c "'$P' help | grep -q '^  iotrace '"
finish
