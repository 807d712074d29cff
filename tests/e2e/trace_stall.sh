#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The trace engine's acceptance on this machine: `porthole trace record`
# while porthole-sample runs its checkout scenario, then `porthole trace
# analyze` on the recording finds the scenario's planted stall (600 ms of
# work on the main thread, with no label around it) on the sample's main
# thread, by its pid.  Oracle: the longest stretch the main thread spent
# without sleeping, computed here from the raw sched_switch and
# sched_waking lines, independently of the engine.  Needs root and
# tracefs; takes the lock every live trace test takes.
. tests/lib/e2e.sh

T=$E2E_TMP
exec 9> /tmp/porthole-tracefs.lock
flock 9
"$BIN/porthole" trace record --seconds 9 --out "$T/trace.txt" > "$T/record.out" 2>&1 &
REC=$!
wait_for 30 tracefs_recording
"$BIN/porthole-sample" --scenario checkout --seconds 6 --app-id e2e.stall.$$ \
	--data-dir "$T/data" > "$T/sample.out" 2>&1 &
SPID=$!
wait $SPID
wait $REC
check "the trace was recorded" grep -q "trace_marker slices" "$T/record.out"
check "the sample's main thread is in the trace" \
	grep -Eq "porthole-sampl?e?-$SPID +\( *$SPID\) .* sched_switch:" "$T/trace.txt"

# The oracle: per stretch of the main thread (tid = pid) from its waking
# (or being switched in, when no waking was seen) to being switched out
# asleep (a prev_state other than R / R+), the longest, in ms, and when it
# began; and when the sample's main-thread query marker was written.
python3 - "$T/trace.txt" "$SPID" > "$T/oracle" <<'PY'
import re, sys
path, pid = sys.argv[1], sys.argv[2]
ts_re = re.compile(r'\s(\d+)\.(\d+):\s+(\S+):\s(.*)$')
start = None
best = (0, 0)
query = None
for line in open(path):
    m = ts_re.search(line)
    if not m:
        continue
    ts = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, '0')[:9])
    ev, args = m.group(3), m.group(4)
    if ev == 'sched_waking' and re.search(r'\bpid=%s\b' % pid, args):
        if start is None:
            start = ts
    elif ev == 'sched_switch':
        nxt = re.search(r'next_pid=(\d+)', args)
        prv = re.search(r'prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+)', args)
        if nxt and nxt.group(1) == pid and start is None:
            start = ts
        if prv and prv.group(1) == pid and prv.group(2) not in ('R', 'R+'):
            if start is not None and ts - start > best[0]:
                best = (ts - start, start)
            start = None
    elif ev == 'tracing_mark_write' and query is None and \
            re.search(r'B\|%s\|SELECT sum\(qty' % pid, args) and \
            re.search(r'-%s\s+\(' % pid, line):
        query = ts
print('%.3f %d %d' % (best[0] / 1e6, best[1], query or 0))
PY
read -r oracle_ms oracle_ts query_ts < "$T/oracle"
echo "oracle: longest busy stretch ${oracle_ms} ms from ${oracle_ts}; query marker at ${query_ts}"
# the planted stall is 600 ms of busy work: nothing else in the scenario
# keeps the main thread from sleeping that long
check "the raw trace shows the main thread busy >= 550 ms" \
	python3 -c "import sys; sys.exit(not float('$oracle_ms') >= 550)"
check "that stretch comes after the main-thread query, as the scenario plants it" \
	sh -c "[ $query_ts -gt 0 ] && [ $oracle_ts -gt $query_ts ]"

check "analyze runs on the recording, scoped to the sample by pid" \
	"$BIN/porthole" trace analyze "$T/trace.txt" --process "$SPID" --out "$T/rep"
check "the engine finds the stall on the sample's main thread, as long as the raw trace says" \
	python3 - "$T/rep/report.json" "$SPID" "$oracle_ms" "$oracle_ts" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
pid, want_ms, want_ts = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
assert rep['process']['pid'] == pid, rep['process']
det = [d for d in rep['detectors'] if d['id'] == 'main_thread_stall'][0]
assert det['ok'], det
rows = det['rows']
assert rows, 'main_thread_stall found nothing'
top = max(rows, key=lambda r: r['max_ms'])
print(json.dumps(top))
assert top['detail'].startswith('tid %d:' % pid), top['detail']
assert abs(top['max_ms'] - want_ms) <= 1.0, (top['max_ms'], want_ms)
assert (' from ts %d;' % want_ts) in top['detail'], (top['detail'], want_ts)
# the stall is not labelled by the app: no top-level slice holds it
assert top['location'] == 'main thread, no slice', top['location']
PY
check "report.md names the environment, thermal included" \
	grep -q '^- thermal' "$T/rep/report.md"
finish
