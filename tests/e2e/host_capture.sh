#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the host: `porthole capture` around the real
# porthole-sample (each planted bug asserted as a finding: id, severity,
# window, evidence), the clean scenario's silence, the published runtime's
# recorded stream through the whole host, and sessions on disk.
. tests/lib/e2e.sh
P="$(pwd)/$BIN/porthole"
S="$(pwd)/$BIN/porthole-sample"
WIRE=$(fixture porthole-wire/received.ndjson)
T=$E2E_TMP
ROOT=$(pwd)

(cd "$T" && PORTHOLE_PROJECT_ROOT=$ROOT PORTHOLE_SESSIONS=0 "$P" capture --scenario checkout --out "$T/c.json" -- \
	"$S" --scenario checkout --seconds 10 --app-id "e2e.cap.$$" --data-dir "$T/d1" \
	> "$T/cap.out" 2> "$T/cap.err"; echo $? > "$T/cap.rc")
C="$T/c.json"
# one finding object per line, for grep
tr -d '\n' < "$C" | sed 's/},{"id":/}\n{"id":/g' > "$T/f.txt"
has() { grep "\"id\":\"$1\",\"severity\":\"$2\"" "$T/f.txt" | grep -q -- "$3"; }

check "capture exits with the app's status" sh -c "[ \$(cat $T/cap.rc) -eq 0 ]"
check "capture wrote a capture file" grep -q '"format":"porthole-capture"' "$C"
check "db-on-main-thread: error with the planted SQL" \
	has db-on-main-thread error 'SELECT sum(qty \* price_cents) FROM cart_items'
check "main-thread-stall: error naming the function and its window" \
	sh -c "grep '\"id\":\"main-thread-stall\",\"severity\":\"error\"' $T/f.txt | grep -q 'apply_coupon_synchronously' && grep '\"id\":\"main-thread-stall\"' $T/f.txt | grep -q '\"window\":{\"from\":[0-9]*,\"to\":[0-9]*}'"
check "main-thread-stall resolved to sample/main.c" \
	has main-thread-stall error '"path":"sample/main.c"'
check "http-failed: POST /v1/checkout 402" \
	has http-failed error '"method":"POST","url":"http://127.0.0.1:[0-9]*/v1/checkout","status":402'
check "http-call-slow: 3.2 s, mostly waiting" \
	has http-call-slow warning 'mostly waiting'
check "frames-dropped: warning, refreshes counted at 60 Hz" \
	has frames-dropped warning '"refreshHz":60'
check "recompose-hotspot: correlated note naming Cart.total" \
	sh -c "grep '\"id\":\"recompose-hotspot\",\"severity\":\"note\",\"confidence\":\"correlated\"' $T/f.txt | grep -q 'Cart.total'"
check "work-retried: note" has work-retried note 'SyncCartJob'
check "db-error: the UNIQUE constraint" has db-error warning 'UNIQUE constraint failed'
check "report shows the quiet line and the footer" sh -c \
	"'$P' report '$C' > $T/r.txt && grep -q '^quiet: ' $T/r.txt && grep -q '^frame budget 16.7 ms (60 Hz)' $T/r.txt && grep -q 'apply_coupon_synchronously' $T/r.txt && grep -q '402' $T/r.txt"
check "report --html is one self-contained page" sh -c \
	"'$P' report '$C' --html $T/r.html > /dev/null && grep -q '<svg' $T/r.html && ! grep -q 'http-equiv\|<script src\|<link' $T/r.html"
(cd "$T" && PORTHOLE_PROJECT_ROOT=$T "$P" capture --scenario clean --out "$T/clean.json" -- \
	"$S" --scenario clean --seconds 4 --app-id "e2e.clean.$$" --data-dir "$T/d2" > /dev/null 2>&1)
# No planted bug: its launch's main-thread queries, and at most what a
# loaded machine makes real (a stall, late frames, the machine's memory
# pressure that the app is told of), nothing else.
check "clean scenario: the launch's queries, no planted bug" python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
keys = [x["key"] for x in f]
print(keys)
assert "db-on-main-thread:launch" in keys
assert all(k == "db-on-main-thread:launch" or x["id"] in ("main-thread-stall", "frames-dropped", "memory-pressure") for k, x in zip(keys, f))
' "$T/clean.json"
check "the session was recorded on disk, and only that one" sh -c \
	"[ \$(ls $T/.porthole/sessions | wc -l) -eq 1 ] && grep -q '\"event\":\"startup\"' $T/.porthole/sessions/*/events.ndjson && grep -q '\"counts\"' $T/.porthole/sessions/*/meta.json"
check "sessions lists it as the most recent" sh -c "cd $T && '$P' sessions | grep -q '^\* e2e.clean.$$_'"

"$P" report --json "$WIRE" > "$T/w.json"
check "wire fixture: 14 main-thread queries" grep -q '"id":"db-on-main-thread".*"count":14' "$T/w.json"
check "wire fixture: 3 db errors" grep -q '"id":"db-error","severity":"warning".*"count":3' "$T/w.json"
check "wire fixture: 402 x3 on POST /v1/checkout" grep -q '"title":"POST /v1/checkout answered 402".*"count":3' "$T/w.json"
check "wire fixture: 6 calls of 3 s or more" grep -q '"id":"http-call-slow".*"count":6' "$T/w.json"
check "wire fixture: every kind shown" sh -c \
	"for k in recompose state_write nav http_start http_end db_start db_end; do grep -q \"\\\"\$k\\\":\" $T/w.json || exit 1; done"

(cd "$T" && "$P" watch --application-id e2e.none --timeout 0.2 > /dev/null 2>&1; echo $? > "$T/w.rc")
check "watch: timeout having observed nothing is exit 4" sh -c "[ \$(cat $T/w.rc) -eq 4 ]"
"$S" --scenario checkout --seconds 6 --app-id e2e.watch --data-dir "$T/d3" > /dev/null 2>&1 &
(cd "$T" && PORTHOLE_SESSIONS=0 "$P" watch --application-id e2e.watch --until-first --severity error --timeout 20 > "$T/watch.out" 2> /dev/null; echo $? > "$T/w.rc")
check "watch --until-first: exit 1 on the first error" sh -c "[ \$(cat $T/w.rc) -eq 1 ] && grep -q '^error ' $T/watch.out"
wait

# --- a capture that never connected ------------------------------------------
# never NAME CMD...: a capture around CMD, its file, stderr and status.
never() {
	name=$1
	shift
	(cd "$T" && PORTHOLE_SESSIONS=0 "$P" capture --scenario checkout \
		--out "$T/$name.json" -- "$@" > /dev/null 2> "$T/$name.err"
	echo $? > "$T/$name.rc")
}
never nx /nonexistent/porthole-app
never nolib sh -c 'sleep 0.3'
# (an app whose socket another process holds is reached: agent_peers.sh)
for n in nx nolib; do
	check "never connected ($n): capture exits 3" sh -c "[ \$(cat $T/$n.rc) -eq 3 ]"
	check "never connected ($n): the file says nothing was observed, no check quiet" sh -c \
		"grep -q '\"connected\":false' $T/$n.json && grep -q '\"quiet\":\[\]' $T/$n.json && grep -q 'never connected: nothing observed' $T/$n.json"
	check "never connected ($n): stderr says so" grep -q 'never connected to the app' "$T/$n.err"
done
check "never connected: report says nothing was observed, not 'no findings'" sh -c \
	"'$P' report $T/nolib.json > $T/nolib.txt; grep -q '^never connected: nothing observed' $T/nolib.txt && ! grep -q 'no findings\|^quiet' $T/nolib.txt"
check "capture says on stderr when it connects: app, pid, socket" \
	grep -q "^porthole capture: connected to e2e.cap.$$ (pid [0-9]*) on @porthole.e2e.cap.$$\$" "$T/cap.err"

# --- a TCP device (PORTHOLE_HOST/PORTHOLE_PORT) --------------------------------
# The app in its own network namespace: its abstract socket is invisible
# here; relay.py (what `adb forward` does) makes it a TCP port on this
# machine.  CMD only waits for the app's end (it has no agent of its own).
# The app runs 12 s: the relay and the capture start after it, and on a
# loaded machine that takes seconds.
unshare -n sh -c "ip link set lo up && exec '$S' --scenario checkout --seconds 12 --app-id e2e.tcp --data-dir '$T/tcpd'" > /dev/null 2>&1 &
TAPP=$!
wait_for 10 sh -c "nsenter -t $TAPP -n cat /proc/net/unix | grep -q '@porthole.e2e.tcp'"
python3 tests/e2e/fake-adb/relay.py porthole.e2e.tcp $TAPP "$T/tcp.port" > /dev/null 2>&1 &
RELAY=$!
wait_for 10 test -s "$T/tcp.port"
TPORT=$(cat "$T/tcp.port")
# until the app exits (a zombie of this test's shell counts as exited)
echo "while s=\$(cut -d' ' -f3 /proc/$TAPP/stat 2> /dev/null) && [ \"\$s\" != Z ]; do sleep 0.1; done" > "$T/wait-app.sh"
(cd "$T" && PORTHOLE_HOST=127.0.0.1 PORTHOLE_PORT=$TPORT PORTHOLE_SESSIONS=0 "$P" capture \
	--scenario checkout --out "$T/tcp.json" -- sh "$T/wait-app.sh" > /dev/null 2> "$T/tcp.err"
echo $? > "$T/tcp.rc")
wait $TAPP
kill $RELAY 2> /dev/null
wait $RELAY 2> /dev/null
check "tcp: capture connected to PORTHOLE_HOST:PORTHOLE_PORT" sh -c \
	"[ \$(cat $T/tcp.rc) -eq 0 ] && grep -q '^porthole capture: connected to e2e.tcp (pid [0-9]*) on tcp 127.0.0.1:$TPORT' $T/tcp.err"
check "tcp: the device's findings are in the capture" \
	grep -q '"id":"db-on-main-thread","severity":"error"' "$T/tcp.json"

# --- ui -- CMD watches the app CMD started, not another one here --------------
"$S" --scenario clean --seconds 120 --app-id e2e.uiother --data-dir "$T/uo" > /dev/null 2>&1 &
OTHER=$!
wait_for 10 grep -q '@porthole.e2e.uiother' /proc/net/unix
(cd "$T" && PORTHOLE_SESSIONS=0 exec "$P" ui --no-open --port 0 -- "$S" --scenario clean \
	--seconds 120 --app-id e2e.uimine --data-dir "$T/um" > "$T/ui.out" 2> "$T/ui.err") &
UI=$!
wait_for 20 grep -q 'http://127.0.0.1:' "$T/ui.out"
URL=$(sed -n 's/.*\(http:[^ ]*\).*/\1/p' "$T/ui.out")
wait_for 20 sh -c "curl -s ${URL}api/status | grep -q '\"state\":\"connected\"'"
curl -s "${URL}api/status" > "$T/ui.status"
kill $UI
wait $UI
kill $OTHER
wait $OTHER 2> /dev/null
check "ui -- CMD: connected to the app CMD started (its announcement)" \
	grep -q '"state":"connected","target":"@porthole.e2e.uimine"' "$T/ui.status"
# --- watch: errors by default, says why it cannot connect ----------------------
"$S" --scenario checkout --seconds 6 --app-id e2e.sev --data-dir "$T/sevd" > /dev/null 2>&1 &
SEVAPP=$!
(cd "$T" && PORTHOLE_SESSIONS=0 exec "$P" watch --application-id e2e.sev > "$T/sev.default" 2> /dev/null) &
W1=$!
(cd "$T" && PORTHOLE_SESSIONS=0 exec "$P" watch --application-id e2e.sev --severity warning > "$T/sev.warning" 2> /dev/null) &
W2=$!
wait $SEVAPP
# both have seen the run once the wide one printed a warning and an error
wait_for 20 sh -c "grep -q '^warning ' $T/sev.warning && grep -q '^error ' $T/sev.warning && grep -q '^error ' $T/sev.default"
kill -INT $W1 $W2
wait $W1 $W2
check "watch: errors only by default" sh -c \
	"grep -q '^error ' $T/sev.default && ! grep -v '^error ' $T/sev.default"
check "watch --severity warning widens it" grep -q '^warning ' "$T/sev.warning"
(cd "$T" && exec "$P" watch --application-id e2e.nobody > /dev/null 2> "$T/nobody.err") &
W3=$!
wait_for 20 grep -q 'cannot connect' "$T/nobody.err"
kill -INT $W3
wait $W3
check "watch says on stderr that it cannot connect, and why" \
	grep -q '^porthole watch: cannot connect: not running: nothing listens on @porthole.e2e.nobody' "$T/nobody.err"
(cd "$T" && "$P" watch --severity loud > /dev/null 2> "$T/badsev.err"; echo $? > "$T/badsev.rc")
check "watch: a bad --severity is exit 2 naming the valid values" sh -c \
	"[ \$(cat $T/badsev.rc) -eq 2 ] && grep -q \"error, warning, note (got 'loud')\" $T/badsev.err"
# --- two identical runs compare clean -------------------------------------------
# The same checkout run as the first capture above, again: the noise
# floors (docs/cli.md, measured from the spread of such runs) keep the
# run-to-run differences from reading as a regression or an improvement.
# What a loaded machine makes real (a main-thread stall of its own, late
# frames, slower startup, memory pressure) is a real difference, and the
# tool must say so: a regression is allowed only in what load moves, and
# only with the new run showing it.  The scripted counts never move.
(cd "$T" && PORTHOLE_SESSIONS=0 "$P" capture --scenario checkout --out "$T/c2.json" -- \
	"$S" --scenario checkout --seconds 10 --app-id "e2e.twin.$$" --data-dir "$T/d4" > /dev/null 2>&1)
"$P" compare "$T/c.json" "$T/c2.json" --json > "$T/twin.json"
"$P" compare "$T/c.json" "$T/c2.json" --fail-on regression > "$T/twin.txt"
echo $? > "$T/twin.rc"
check "two identical checkout runs: the scripted counts are the same, a regression only what load made" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
new = json.load(open(sys.argv[2]))
rc = int(open(sys.argv[3]).read())
scripted = {"db.queries", "db.mainThread", "db.errors", "http.calls",
            "http.failed", "http.slow", "work.retries", "logs.errors"}
load = {"main.stalls", "main.stallMs", "main.worstStallMs", "frames.janky",
        "frames.missedRefreshes", "frames.worstMs", "db.worstMs",
        "http.worstMs", "startup.coldMs", "taps.worstMs", "recompositions",
        "memory.peakRssMb"}
m = {x["name"]: x for x in r["metrics"]}
for n in scripted:
    assert m[n]["verdict"] == "same", m[n]
bad = [x for x in r["metrics"] if x["verdict"] == "regression"]
print("regressions:", bad, "new findings:", r["newFindings"])
for x in bad:
    assert x["name"] in load, x
own = [f for f in new["findings"] if f["id"] == "main-thread-stall"
       and "apply_coupon" not in f["key"]]
if any(x["name"].startswith("main.") for x in bad):
    assert own, "a stall regression, and no stall but the planted one"
for k in r["newFindings"]:
    assert k.startswith(("main-thread-stall:", "frames-dropped", "memory-pressure",
                         "startup-slow")) and "apply_coupon" not in k, k
assert (rc == 1) == (r["regressions"] > 0), (rc, r["regressions"])
' "$T/twin.json" "$T/c2.json" "$T/twin.rc"
check "a capture compared with itself: 0 regressions, 0 improvements" sh -c \
	"'$P' compare $T/c.json $T/c.json --fail-on regression | tail -1 | grep -qx '0 regressions, 0 improvements'"
finish
