#!/bin/sh
# sessions.sh: sessions on disk through hosts that come and go: a host
# that attaches late, one that restarts, and what they leave in meta.json
# (tests/node/sessions.test.mjs, the official MCP SDK as the client, one
# check per node test).
. tests/lib/e2e.sh
PH_SUITE=${PH_SUITE:-e2e-sessions}
T=$E2E_TMP

check "sdk installed (make deps)" test -d node_modules/@modelcontextprotocol/sdk
PH_BIN=$BIN node --test --test-reporter=tap tests/node/sessions.test.mjs \
	> "$T/tap" 2>&1
tap_checks "sessions.test.mjs" "$T/tap" $?

# --- a process that restarts with the same identity --------------------------
# The sample's checkout recording, then the same process identity again
# (the same hello: startedAt, pid) with its seqs back at 0 and its events
# later: a new stream, every event counted; and the recording followed by
# itself (a reconnect's backfill sends what was sent): nothing twice.
P=$(cd "$BIN" && pwd)/porthole
REC=tests/golden/report/checkout.ndjson
python3 - "$REC" "$T/again.ndjson" "$T/replay.ndjson" << 'PY'
import json, sys
src, again, replay = sys.argv[1:]
lines = open(src).read().splitlines()
def later(line):
    o = json.loads(line)
    evs = [o] if "event" in o else (o.get("result") or {}).get("events") or []
    for e in evs:
        if "event" in e:
            e["t"] += 100000
    return json.dumps(o, separators=(",", ":"))
open(again, "w").write("\n".join(lines + [later(l) for l in lines]) + "\n")
open(replay, "w").write("\n".join(lines + lines) + "\n")
PY
count() { # count FILE ID: the count of finding ID in the report of FILE
	"$P" report --json "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(sum(f["count"] for f in r["findings"] if f["id"] == sys.argv[1]))' "$2"
}
for id in http-failed main-thread-stall db-error; do
	one=$(count "$REC" $id)
	two=$(count "$T/again.ndjson" $id)
	same=$(count "$T/replay.ndjson" $id)
	check "same identity, seqs back at 0: a new stream ($id: $one, then $two)" \
		test "$one" -gt 0 -a "$two" -eq $((one * 2))
	check "the same process's events sent again count once ($id: $same)" \
		test "$one" -gt 0 -a "$same" -eq "$one"
done

# ... and live: one host watching while the process stops and comes back
# with the same identity (tests/e2e/replay_app.py replays the recording as
# an app, the second time with its events 100 s later).
ID=e2e.sessions.same.$$
L=$T/live
mkdir -p "$L"
(cd "$L" && PORTHOLE_PROJECT_ROOT=$L exec "$P" watch \
	--application-id $ID --json > "$T/live.out" 2> "$T/live.err") &
W=$!
pages() { cat "$L"/.porthole/sessions/*/events.ndjson 2> /dev/null |
	grep -c '^{"id":2,"ok":true'; }
for run in 1 2; do
	python3 tests/e2e/replay_app.py "$REC" $ID $(((run - 1) * 100000)) \
		"$T/done$run" &
	A=$!
	wait_for 60 sh -c "[ \$(cat $L/.porthole/sessions/*/events.ndjson 2> /dev/null | grep -c '^{\"id\":2,\"ok\":true') -ge $run ]"
	touch "$T/done$run"
	wait $A
done
kill -INT $W
wait $W
check "live: both runs' backfills reached the session file" test "$(pages)" -eq 2
check "live: one session directory for the one identity" \
	test "$(ls "$L/.porthole/sessions" | wc -l)" -eq 1
check "live: meta.json counts both runs' events" python3 -c '
import json, sys
seqs = set()
for line in open(sys.argv[1]):
    o = json.loads(line)
    for e in [o] if "event" in o else (o.get("result") or {}).get("events") or []:
        if "event" in e and e["event"] != "dropped":
            seqs.add(e["seq"])
m = json.load(open(sys.argv[2]))
assert m["events"] == 2 * len(seqs), (m["events"], 2 * len(seqs))
print(m["events"])' "$REC" "$(ls "$L"/.porthole/sessions/*/meta.json)"
check "live: the session's report counts both runs' failed call" \
	test "$(count "$(ls "$L"/.porthole/sessions/*/events.ndjson)" http-failed)" -eq 2

finish
