#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `porthole capture --systrace` with the real sample on this machine: a
# tracefs recording (trace_clock=mono, root) over the capture's window,
# the trace engine's answers about the sample's process merged into the
# capture with source "trace", shown by report with a [trace] tag, and
# tracefs left as it was found.
. tests/lib/e2e.sh
# tracefs is machine-wide: one live trace test at a time (iotrace_live.sh).
exec 9> /tmp/porthole-tracefs.lock
flock 9
P="$(pwd)/$BIN/porthole"
S="$(pwd)/$BIN/porthole-sample"
T=$E2E_TMP
TR=/sys/kernel/tracing
[ -e $TR/trace_clock ] || TR=/sys/kernel/debug/tracing
before=$(cat $TR/trace_clock $TR/tracing_on 2> /dev/null)

# From the project root: the trace engine finds detectors/ there.
(PORTHOLE_SESSIONS=0 "$P" capture --systrace --scenario checkout \
	--out "$T/c.json" -- "$S" --scenario checkout --seconds 5 \
	--data-dir "$T/d" > /dev/null 2> "$T/cap.err"; echo $? > "$T/cap.rc")
tr -d '\n' < "$T/c.json" | sed 's/},{"id":/}\n{"id":/g' > "$T/f.txt"
check "capture --systrace exits with the app's status" sh -c "[ \$(cat $T/cap.rc) -eq 0 ]"
[ "$(cat "$T/cap.rc")" = 0 ] || sed 's/^/  capture: /' "$T/cap.err"
check "the trace's findings are merged, source trace" \
	grep -q '"source":"trace"' "$T/f.txt"
check "they are about the sample's process" \
	grep -q 'system trace: [0-9]* findings* about porthole-sample' "$T/c.json"
check "trace windows are on the app's clock, inside the run" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
w = c["window"]
tr = [f for f in c["findings"] if f["source"] == "trace" and "window" in f]
assert tr, "no windowed trace finding"
for f in tr:
    assert w["from"] - 1 <= f["window"]["from"] <= f["window"]["to"] <= w["to"] + 1, f
' "$T/c.json"
check "the app's own findings are still there" \
	grep -q '"id":"db-on-main-thread","severity":"error","confidence":"observed","source":"porthole"' "$T/f.txt"
check "report tags them [trace]" sh -c "'$P' report '$T/c.json' | grep -q '^[a-z]*  *\[trace\] '"
check "tracefs is left as it was" sh -c "[ \"\$(cat $TR/trace_clock $TR/tracing_on 2> /dev/null)\" = '$before' ]"
check "no temporary trace file is left behind" sh -c "! ls -d /tmp/porthole-capture-* 2> /dev/null | xargs -r -I{} ls {}/systrace.txt 2> /dev/null | grep -q ."
finish
