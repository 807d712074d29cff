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
grep -E '^(not )?ok [0-9]+ - ' "$T/tap" > "$T/results"
[ -s "$T/results" ] || { tail -30 "$T/tap"; check "node suite ran" false; }
while IFS= read -r line; do
	name=${line#*- }
	case $line in
	"not ok"*) grep -F -A30 -- "$line" "$T/tap" > "$T/why"
		check "$name" sh -c "cat '$T/why'; false" ;;
	*) check "$name" true ;;
	esac
done < "$T/results"

# --- a process that restarts with the same identity --------------------------
# The sample's checkout recording, then the same process identity again
# (the same hello: startedAt, pid) with its seqs back at 0 and its events
# later: a new stream, every event counted; and the recording followed by
# itself (a reconnect's backfill sends what was sent): nothing twice.
P="$BIN/porthole"
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

finish
