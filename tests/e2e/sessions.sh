#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
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

# --- lines with bytes that are not UTF-8 --------------------------------------
# The recording with a byte that is not UTF-8 put into five URLs and a
# junk line added: the five are read with U+FFFD in place of the byte (no
# event lost), a junk line skipped, and report names each by line number
# and byte offset, in its notes and in --json.
python3 - "$REC" "$T/bad8.ndjson" "$T/bad8.want" << 'PY'
import sys
src, out, want = sys.argv[1:]
lines = open(src, "rb").read().split(b"\n")
lines.insert(7, b"{\"event\":\"mark\",\xff")
at, bad, n = 0, [], 0
for i, l in enumerate(lines):
    if n < 5 and b'"url":"' in l:
        lines[i] = l.replace(b'"url":"', b'"url":"\xff', 1)
        bad.append("%d:%d:repaired" % (i + 1, at))
        n += 1
    elif i == 7:
        bad.append("%d:%d:skipped" % (i + 1, at))
    at += len(lines[i]) + 1
open(out, "wb").write(b"\n".join(lines))
open(want, "w").write(" ".join(bad))
PY
"$P" report "$T/bad8.ndjson" > "$T/bad8.txt" 2>&1
"$P" report --json "$T/bad8.ndjson" > "$T/bad8.json" 2>&1
check "bad UTF-8: report's note names each repaired line and its offset" python3 -c '
import sys
txt, want = open(sys.argv[1]).read(), open(sys.argv[2]).read().split()
rep = [w.split(":") for w in want if w.endswith("repaired")]
note = [l for l in txt.splitlines() if "not UTF-8 replaced by U+FFFD" in l]
assert len(note) == 1 and note[0].startswith("note: %d lines read" % len(rep)), txt
for line, at, _ in rep:
    assert "line %s at byte %s" % (line, at) in note[0], (line, at, note)
skip = [l for l in txt.splitlines() if "malformed line skipped" in l]
line, at, _ = [w.split(":") for w in want if w.endswith("skipped")][0]
assert len(skip) == 1 and "line %s at byte %s (" % (line, at) in skip[0], txt
print(note[0]); print(skip[0])' "$T/bad8.txt" "$T/bad8.want"
check "bad UTF-8: report --json lists the lines in sourceLines" python3 -c '
import json, sys
r, want = json.load(open(sys.argv[1])), open(sys.argv[2]).read().split()
got = ["%d:%d:%s" % (l["line"], l["byte"], l["action"]) for l in r["sourceLines"]]
assert sorted(got) == sorted(want), (got, want)' "$T/bad8.json" "$T/bad8.want"
check "bad UTF-8: no event lost to a repaired line" python3 -c '
import json, subprocess, sys
def counts(f):
    return json.loads(subprocess.run([sys.argv[1], "report", "--json", f],
        capture_output=True, check=True).stdout)["counts"]
a, b = counts(sys.argv[2]), counts(sys.argv[3])
assert a == b, (a, b)' "$P" "$REC" "$T/bad8.ndjson"

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
