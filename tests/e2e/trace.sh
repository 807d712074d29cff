#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# porthole trace: stats, query and analyze on the real fixtures.
. tests/lib/e2e.sh
A12=$(fixture perfetto/perfetto_android12_cpuschedstack.pftrace)
SYS=$(fixture systrace/trace_input_blog_launcher_scroll.html.zip)

check stats-json sh -c "$BIN/porthole trace stats '$A12' --json | grep -q '\"sched\":23536'"
check stats-systrace sh -c "$BIN/porthole trace stats '$SYS' | grep -q '^slice  *5262$'"
check query-csv sh -c "$BIN/porthole trace query '$A12' 'SELECT COUNT(*) AS n FROM sched' --csv | tail -1 | grep -qx 23536"
check query-bad-sql sh -c "! $BIN/porthole trace query '$A12' 'SELEC nope' 2>/dev/null"
check missing-file sh -c "$BIN/porthole trace stats /nonexistent 2>/dev/null; [ \$? -eq 2 ]"
head -c 1000000 "$A12" > "$E2E_TMP/cut.pftrace"
check truncated-exit-1 sh -c "$BIN/porthole trace stats '$E2E_TMP/cut.pftrace' 2>&1 | grep -q 'stopped at byte'; $BIN/porthole trace stats '$E2E_TMP/cut.pftrace' >/dev/null 2>&1; [ \$? -eq 1 ]"
# Inputs that hold less than a trace say what was read and exit 1, never
# "complete": an empty file, the first bytes of a Perfetto trace (1-3 of
# them look like text, so they are read as ftrace), ftrace text cut
# mid-line (the torn line's offset), and text with no ftrace line in it.
BLK=$(fixture systrace/parser__parsing__sched_blocked_systrace.systrace)
: > "$E2E_TMP/empty.trace"
for n in 1 3 9; do head -c $n "$A12" > "$E2E_TMP/p$n.pftrace"; done
head -c 900 "$BLK" > "$E2E_TMP/torn.systrace"
printf 'hello\nworld\n' > "$E2E_TMP/words.txt"
partial() { # partial FILE REGEX: exit 1, not complete, REGEX in the text
	"$BIN/porthole" trace stats "$1" > "$E2E_TMP/st.out" 2>&1
	rc=$?
	cat "$E2E_TMP/st.out"
	[ $rc -eq 1 ] && ! grep -q '^complete  yes' "$E2E_TMP/st.out" &&
		grep -Eq "$2" "$E2E_TMP/st.out" &&
		"$BIN/porthole" trace stats --json "$1" 2> /dev/null |
		grep -q '"complete":false'
}
check "stats: an empty file is not complete" partial "$E2E_TMP/empty.trace" \
	'^read +0 bytes$'
for n in 1 3 9; do
	check "stats: $n bytes of a Perfetto trace are not complete" \
		partial "$E2E_TMP/p$n.pftrace" "^read +$n bytes"
done
check "stats: ftrace cut mid-line names the torn line's offset" \
	partial "$E2E_TMP/torn.systrace" \
	'^complete  no: stopped at byte 822: the last line \(bytes 822\.\.900\) ends without a newline'
check "stats: text with no ftrace line counts the lines not parsed" \
	partial "$E2E_TMP/words.txt" '^lines +2, 2 not parsed \(the first at byte 0\)$'
check "stats: the whole ftrace file is complete" sh -c \
	"'$BIN/porthole' trace stats '$BLK' | grep -q '^complete  yes$'"
# The indent a systrace HTML leaves before </script> is no torn line.
{ cat "$BLK"; printf '  '; } > "$E2E_TMP/indented.systrace"
check "stats: blanks after the last newline are no torn line" sh -c \
	"'$BIN/porthole' trace stats '$E2E_TMP/indented.systrace' | grep -q '^complete  yes$'"
check analyze-frame-jank sh -c "$BIN/porthole trace analyze '$A12' --process com.android.systemui --out '$E2E_TMP/rep' >/dev/null && grep -q '\"id\":\"frame_jank\",[^]]*\"row_count\":[1-9]' '$E2E_TMP/rep/report.json' && grep -q 'Janky frames' '$E2E_TMP/rep/report.md'"
check analyze-twice sh -c "$BIN/porthole trace analyze '$A12' --process com.android.systemui --out '$E2E_TMP/rep2' >/dev/null"
check analyze-bad-set sh -c "$BIN/porthole trace analyze '$A12' --set nope=1 2>/dev/null; [ \$? -eq 2 ]"
check analyze-bad-type sh -c "$BIN/porthole trace analyze '$A12' --set main_thread_block.min_ms=abc 2>/dev/null; [ \$? -eq 2 ]"

# doctor: every detector fires on its planted problem
check doctor sh -c "$BIN/porthole trace doctor > '$E2E_TMP/doc.out' && grep -q '^$(ls detectors/*.sql | wc -l) fired, 0 silent with a reason, 0 failed: healthy$' '$E2E_TMP/doc.out' && grep -q '^fired *io_wait *on the planted' '$E2E_TMP/doc.out'"
check doctor-json sh -c "$BIN/porthole trace doctor --json --write '$E2E_TMP/doc.pftrace' | grep -q '\"healthy\":true' && [ -s '$E2E_TMP/doc.pftrace' ]"
mkdir -p "$E2E_TMP/det"
cp detectors/*.sql "$E2E_TMP/det/"
printf -- '-- @id never_fires\nSELECT 1 AS location, 1 AS count, 0 AS self_ms, 0 AS total_ms, 0 AS max_ms, 0 AS covered_ms, 0 AS detail WHERE 0\n' > "$E2E_TMP/det/never_fires.sql"
check doctor-unhealthy sh -c "$BIN/porthole trace doctor --detectors '$E2E_TMP/det' > '$E2E_TMP/doc2.out'; [ \$? -eq 1 ] && grep -q '^missed *never_fires *silent, and the detector names no reason' '$E2E_TMP/doc2.out'"
DOC=$E2E_TMP/doc.pftrace
# ask: the eight questions
check ask-json sh -c "$BIN/porthole trace ask '$DOC' --process com.example.doctor --json > '$E2E_TMP/ask.json' && grep -q '\"asked\":\\[\"jank\",\"thread_states\",\"binder\",\"render\",\"slices\",\"startup\",\"monitor_contention\",\"cpu\"\\]' '$E2E_TMP/ask.json'"
check ask-text sh -c "$BIN/porthole trace ask '$DOC' --process com.example.doctor --question binder | grep -q '^warning observed *binder *Binder call on the main thread'"
# binder from the systrace's ftrace text: SensorService's 99 ms call
check ask-binder-systrace sh -c "$BIN/porthole trace ask '$SYS' --process system_server --question binder > '$E2E_TMP/binder.out' && grep -q '^note *observed *binder *Binder call on SensorService: one call of 99.1 ms' '$E2E_TMP/binder.out' && ! grep -q 'no binder transaction slices' '$E2E_TMP/binder.out'"
check ask-unanswered sh -c "$BIN/porthole trace ask '$SYS' --question jank --json | grep -q '\"unanswered\":\\[{\"question\":\"jank\"'"
# anchors, repeats, compare
check analyze-anchors sh -c "$BIN/porthole trace analyze '$DOC' --process com.example.doctor --start loadConfig --end never --out '$E2E_TMP/anc' > /dev/null && grep -q \"end anchor 'never' never closed\" '$E2E_TMP/anc/report.md' && grep -q '\"end_unclosed\":true' '$E2E_TMP/anc/report.json'"
check analyze-repeats sh -c "$BIN/porthole trace analyze '$DOC' '$DOC' '$DOC' --process com.example.doctor --out '$E2E_TMP/rep3' > /dev/null && grep -q '\"repeats\":3' '$E2E_TMP/rep3/report.json' && grep -q '\"seen_in\":3' '$E2E_TMP/rep3/report.json'"
$BIN/porthole trace analyze "$DOC" --process com.example.doctor --out "$E2E_TMP/base" > /dev/null
$BIN/porthole trace analyze "$DOC" --process com.example.doctor --set main_thread_block.min_ms=45 --out "$E2E_TMP/fewer" > /dev/null
check compare-same sh -c "$BIN/porthole trace compare '$E2E_TMP/base/report.json' '$E2E_TMP/base/report.json' | grep -q '^0 worse, 0 new'"
check compare-better-exit-0 sh -c "$BIN/porthole trace compare '$E2E_TMP/base/report.json' '$E2E_TMP/fewer/report.json' > '$E2E_TMP/cmp.out'; [ \$? -eq 0 ] && grep -q '^gone *main_thread_block *Application.onCreate' '$E2E_TMP/cmp.out'"
check compare-worse-exit-1 sh -c "$BIN/porthole trace compare '$E2E_TMP/fewer/report.json' '$E2E_TMP/base/report.json' --json > '$E2E_TMP/cmp.json'; [ \$? -eq 1 ] && grep -q '\"status\":\"new\"' '$E2E_TMP/cmp.json'"
# (main_thread_block's row: app_init has an Application.onCreate row too)
sed 's/\("id":"main_thread_block",[^]]*"location":"Application.onCreate","count":1,"self_ms":\)40\.0/\141.2/' "$E2E_TMP/base/report.json" > "$E2E_TMP/noise.json"
sed 's/\("id":"main_thread_block",[^]]*"location":"Application.onCreate","count":1,"self_ms":\)40\.0/\180/' "$E2E_TMP/base/report.json" > "$E2E_TMP/slow.json"
check compare-under-noise-floor sh -c "$BIN/porthole trace compare '$E2E_TMP/base/report.json' '$E2E_TMP/noise.json' | grep -q '^0 worse'"
check compare-worse sh -c "$BIN/porthole trace compare '$E2E_TMP/base/report.json' '$E2E_TMP/slow.json' > '$E2E_TMP/cmp3.out'; [ \$? -eq 1 ] && grep -q '^worse *main_thread_block *Application.onCreate *40.000 -> *80.000 ms' '$E2E_TMP/cmp3.out'"
# porthole-trace.yml, read from the working directory by analyze, ask and
# doctor: its parameters apply, and a wrong one stops the command with
# exit 2 naming line, column and byte, before any trace is opened (the
# trace path below does not exist: its error would be a different one)
mkdir -p "$E2E_TMP/proj"
ABIN=$(cd "$BIN" && pwd)
printf 'params:\n  main_thread_block: { min_ms: 45 }\n' > "$E2E_TMP/proj/porthole-trace.yml"
check config-applies-to-analyze sh -c "cd '$E2E_TMP/proj' && '$ABIN/porthole' trace analyze '$DOC' --process com.example.doctor --detectors '$PWD/detectors' --out cfg > /dev/null && '$ABIN/porthole' trace compare '$E2E_TMP/fewer/report.json' cfg/report.json | grep -q '^0 worse, 0 new'"
printf 'params:\n  main_thread_block: { min_ms: 35 }\n' > "$E2E_TMP/proj/porthole-trace.yml"
check config-applies-to-doctor sh -c "cd '$E2E_TMP/proj' && '$ABIN/porthole' trace doctor --detectors '$PWD/detectors' | grep -q '^fired *main_thread_block .*(with min_ms=35)'"
printf 'params:\n  main_thread_block: { min_ms: "45" }\n' > "$E2E_TMP/proj/porthole-trace.yml"
for cmd in "analyze /nonexistent" "ask /nonexistent" doctor; do
	check "config-bad-${cmd%% *}-exit-2" sh -c "cd '$E2E_TMP/proj' && '$ABIN/porthole' trace $cmd --detectors '$PWD/detectors' > /dev/null 2> err; [ \$? -eq 2 ] && grep -q 'porthole-trace.yml:2:32 (byte 39): main_thread_block.min_ms wants a number' err"
done
check config-bad-set-ask sh -c "$BIN/porthole trace ask /nonexistent --set nope=1 2>&1 | grep -q \"unknown parameter 'nope'\""
# the environment phase: the android12 fixture has no thermal events, and
# says so; the doctor's fixture has them, and memory (trace_doctor.c)
check analyze-env-no-thermal sh -c "grep -q '^- thermal: not in the trace' '$E2E_TMP/rep/report.md' && grep -q '\"thermal\":\[\]' '$E2E_TMP/rep/report.json'"
check analyze-env-thermal sh -c "grep -qx -- '- thermal zone cpu: 51.2 C average (45.0..72.0)' '$E2E_TMP/base/report.md' && grep -qx -- '- cooling device thermal-cpufreq-0: state up to 2 (throttling), above 0 for 100.0 ms' '$E2E_TMP/base/report.md' && grep -qx -- '- cpu 0: 1800000 kHz average (500000..2000000); 80.0 ms below half its peak (2000000 kHz)' '$E2E_TMP/base/report.md'"
check analyze-env-process-memory sh -c "grep -qx -- '- process RSS: 102.4 MB at the start, 153.6 MB at its highest sample, 122.9 MB at the end' '$E2E_TMP/base/report.md' && grep -q '\"process_memory\":\[{\"counter\":\"mem.rss\",\"samples\":3,\"start_bytes\":102400000,\"start_ts\":10000000000,\"peak_bytes\":153600000,\"end_bytes\":122880000}' '$E2E_TMP/base/report.json'"
# a real trace's process memory, against the samples read with a query
check analyze-env-rss-oracle python3 - "$BIN/porthole" "$A12" "$E2E_TMP/rep/report.json" <<'PY'
import json, subprocess, sys
porthole, trace, rep = sys.argv[1:4]
r = json.load(open(rep))
lo, hi, pid = r['window']['from'], r['window']['to'], r['process']['pid']
out = subprocess.run([porthole, 'trace', 'query', trace,
    "SELECT c.ts, c.value FROM counter c JOIN process_counter_track t ON "
    "c.track_id = t.id WHERE t.name = 'mem.rss' AND t.upid = (SELECT upid "
    "FROM process WHERE pid = %d ORDER BY upid DESC LIMIT 1) ORDER BY c.ts"
    % pid, '--csv'], capture_output=True, text=True, check=True).stdout
rows = [(int(a), float(b)) for a, b in
        (l.split(',') for l in out.strip().splitlines()[1:])]
before = [v for t, v in rows if t < lo][-1:]
inside = [v for t, v in rows if lo <= t <= hi]
vals = before + inside
assert len(vals) >= 2, (len(rows), lo, hi)
m = [x for x in r['environment']['process_memory'] if x['counter'] == 'mem.rss'][0]
print(m, len(vals))
assert m['samples'] == len(vals), (m, len(vals))
assert m['start_bytes'] == vals[0] and m['end_bytes'] == vals[-1], m
assert m['peak_bytes'] == max(vals), (m, max(vals))
PY
# ask states the environment first, and each finding's own
check ask-env sh -c "$BIN/porthole trace ask '$DOC' --process com.example.doctor --question cpu > '$E2E_TMP/ask-env.out' && grep -qx 'environment (every duration below ran under it):' '$E2E_TMP/ask-env.out' && grep -qx '  - process RSS: 102.4 MB at the start, 153.6 MB at its highest sample, 122.9 MB at the end' '$E2E_TMP/ask-env.out' && grep -q '^warning correlated cpu  *Throttled for heat while the app ran: cooling device thermal-cpufreq-0' '$E2E_TMP/ask-env.out' && grep -q '^ *under: CPU at 2000 MHz on 2 CPUs; throttled: thermal-cpufreq-0 up to state 2 for 100.0 ms' '$E2E_TMP/ask-env.out'"
# the MCP tool answers with the same environment (a real server over stdio)
mkdir -p "$E2E_TMP/mcp"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"ask_system_trace\",\"arguments\":{\"trace\":\"$DOC\",\"process\":\"com.example.doctor\",\"questions\":[\"startup\"],\"detail\":\"full\"}}}" > "$E2E_TMP/mcp/in"
check mcp-ask-env python3 - "$ABIN/porthole" "$E2E_TMP/mcp" "$PWD/detectors" <<'PY'
import json, subprocess, sys
porthole, d, dets = sys.argv[1:4]
subprocess.run(['cp', '-r', dets, d + '/detectors'], check=True)
out = subprocess.run([porthole, 'mcp', '--no-link'], cwd=d, stdin=open(d + '/in'),
                     capture_output=True, text=True, timeout=60).stdout
r = [json.loads(l) for l in out.splitlines() if '"id":2' in l][0]['result']
text = r['content'][0]['text']
print(text[:400])
assert r['isError'] is False
assert '; environment: CPU 500..2000 MHz (average 1900) on 2 CPUs' in text, text
a = json.loads(text.split('\n', 1)[1])['answer']
rss = a['environment']['process_memory'][0]
assert (rss['counter'], rss['start_bytes'], rss['peak_bytes'], rss['end_bytes']) == \
    ('mem.rss', 102400000, 153600000, 122880000), rss
low = [f for f in a['findings'] if f['id'] == 'trace.startup:start-up at a low CPU frequency'][0]
assert low['evidence']['self_ms'] == 40.0 and low['severity'] == 'warning', low
assert low['evidence']['environment'].startswith('CPU 500..2000 MHz (average 1250) on 2 CPUs, below half its peak on cpu 0 40.0 ms; not throttled'), low
assert {'question': 'startup', 'cause': 'thermal throttling during the start-up: the trace has cooling devices, and none was above state 0 while it ran'} in a['ruled_out']
PY
# An installed binary, away from this checkout, asks with the detectors
# built into it (as many as detectors/ holds).
mkdir -p "$E2E_TMP/installed" && cp "$BIN/porthole" "$E2E_TMP/installed/"
check doctor-builtin-detectors sh -c "cd '$E2E_TMP/installed' && ./porthole trace doctor > out.txt && grep -q \"^$(ls detectors/*.sql | wc -l) fired, 0 silent with a reason, 0 failed: healthy\" out.txt"
# mark, names, calibrate on the doctor's fixture (its plan is in
# src/trace/trace_doctor.c)
check mark-candidates sh -c "$BIN/porthole trace mark '$DOC' --process com.example.doctor > '$E2E_TMP/mark.out' && grep -q '^  slice    110.0 ms from 10340000000 (main thread on a CPU 110.0 ms): RecyclerView:bind (1, the longest 110.0 ms)' '$E2E_TMP/mark.out' && grep -qx '           --from 10340000000 --to 10450000000' '$E2E_TMP/mark.out' && grep -q '^  start-up 60.0 ms from 10000000000' '$E2E_TMP/mark.out' && grep -q '^  busy     490.0 ms from 10000000000 (main thread on a CPU 441.0 ms)' '$E2E_TMP/mark.out'"
check mark-json sh -c "$BIN/porthole trace mark '$DOC' --process com.example.doctor --json | grep -q '\"kind\":\"slice\",\"label\":\"RecyclerView:bind (1, the longest 110.0 ms)\",\"from_ns\":10340000000,\"to_ns\":10450000000'"
check mark-bad-min sh -c "$BIN/porthole trace mark '$DOC' --min-ms soon 2>/dev/null; [ \$? -eq 2 ]"
check names-masks sh -c "$BIN/porthole trace names '$DOC' --process com.example.doctor > '$E2E_TMP/names.out' && grep -A1 -x '  composables Recompose:\*:' '$E2E_TMP/names.out' | grep -qx '    Recompose:CartList (1, 12.0 ms)' && grep -qx '  monitor_contention Lock contention\*: sees no slice' '$E2E_TMP/names.out' && sed -n '/^names no mask sees/,\$p' '$E2E_TMP/names.out' | grep -qx '  inflate (25, 87.5 ms)'"
check calibrate-thresholds sh -c "$BIN/porthole trace calibrate '$DOC' --detector main_thread_block --process com.example.doctor | grep -qx '  min_ms (now 16): 4: 2 rows (52.0 ms), 8: 2 rows (52.0 ms), 16: 1 row (40.0 ms), 32: 1 row (40.0 ms), 64: 0 rows (0.0 ms)'"
check calibrate-unknown-detector sh -c "$BIN/porthole trace calibrate '$DOC' --detector nope 2>/dev/null; [ \$? -eq 2 ]"
check compare-bad-input sh -c "$BIN/porthole trace compare /nonexistent '$E2E_TMP/base/report.json' 2>/dev/null; [ \$? -eq 2 ]"
finish
