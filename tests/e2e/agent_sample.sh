# SPDX-License-Identifier: Apache-2.0
# libporthole inside porthole-sample, over the real abstract socket: every
# event kind the C agent produces (docs/protocol.md section 5) arrives from
# the `all` scenario; secrets never leave the process; a crash, a clean
# exit and a kill are recorded and reported by the next start; the methods
# answer; a second process of the same app says plainly that it lost the
# socket's name.
. tests/lib/e2e.sh

T=$E2E_TMP
APP=e2e.sample.$$
DATA=$T/data
REC=build/tests/ph-record

# 1. A run that crashes on demand, so the next start has an exit to report.
# (Under ASan the agent's own crash handler must be the one that runs.)
check "the sample crashes on demand" sh -c \
	'! ASAN_OPTIONS=handle_segv=0 "$0/porthole-sample" --scenario startup --seconds 5 --crash-at 700 \
	--app-id "$1" --data-dir "$2" > /dev/null 2>&1' "$BIN" "$APP" "$DATA"
check "the crash left an exit record" sh -c 'grep -q "state=crashed" "$0"/exit-*.rec' "$DATA"
# A run that ends cleanly, and one killed outright: the first leaves a
# record saying so; the second's still says running, so it was killed.
# Each in a data dir of its own (a start reports what is in its dir), the
# records then put beside the crash's for the next start to find.
check "a clean run records its exit" sh -c \
	'"$0/porthole-sample" --scenario clean --seconds 1 --app-id "$1" \
	--data-dir "$2" > /dev/null 2>&1 && grep -q "state=exited" "$2"/exit-*.rec' \
	"$BIN" "$APP" "$T/clean"
"$BIN/porthole-sample" --scenario startup --seconds 30 --app-id "$APP" \
	--data-dir "$T/killed" > /dev/null 2>&1 &
KPID=$!
for i in $(seq 100); do test -s "$T/killed/exit-$KPID.rec" && break; sleep 0.1; done
sleep 0.5
kill -9 $KPID
wait $KPID 2>/dev/null
check "a killed run's record still says running" \
	grep -q "state=running" "$T/killed/exit-$KPID.rec"
mv "$T"/clean/exit-*.rec "$T/killed/exit-$KPID.rec" "$DATA"/

# 2. The `all` scenario for 20 s (the acceptance run), recorded from its
# first event, methods included.
PORTHOLE_ANNOUNCE=$T/announce "$BIN/porthole-sample" --scenario all \
	--seconds 20 --app-id "$APP" --data-dir "$DATA" > "$T/stdout" 2> "$T/stderr" &
PID=$!
$REC --announce "$T/announce" --out "$T/rec.ndjson" --seconds 23 --after 2000 \
	--request '{"id":3,"method":"db_tables","params":{}}' \
	--request '{"id":4,"method":"db_query","params":{"sql":"DELETE FROM cart_items"}}' \
	--request '{"id":5,"method":"db_query","params":{"sql":"SELECT sku AS inspected_sku, qty FROM cart_items ORDER BY id"}}' \
	--request '{"id":6,"method":"semantics_tree","params":{}}' \
	--request '{"id":7,"method":"screenshot","params":{}}' \
	--request '{"id":8,"method":"setup","params":{}}' \
	--request '{"id":10,"method":"no_such_method","params":{}}' \
	--request '{"id":11,"method":"exits","params":{}}' \
	--request '{"id":12,"method":"db_query","params":{"sql":"WITH x AS (SELECT 1) INSERT INTO cart_items(sku, qty) SELECT '"'"'planted'"'"', 1 FROM x"}}' \
	--request '{"id":13,"method":"db_query","params":{"sql":"SELECT 1; DELETE FROM cart_items"}}' \
	--request '{"id":14,"method":"db_query","params":{"sql":"PRAGMA user_version = 7"}}' \
	--request '{"id":15,"method":"db_query","params":{"sql":"SELECT count(*) AS planted FROM cart_items WHERE sku = '"'"'planted'"'"'"}}' \
	--request 'this is not json' &
RPID=$!

# 3. Meanwhile a second process of the same app loses the race for the
# socket's name: one stderr line that names it, the app and the fix.
for i in $(seq 100); do test -s "$T/announce" && break; sleep 0.1; done
"$BIN/porthole-sample" --scenario startup --seconds 1 --app-id "$APP" \
	--data-dir "$T/data2" > /dev/null 2> "$T/stderr2"
check "a second process of the app says the name is held, once" sh -c \
	'test "$(grep -c "held by another process of this app" "$0")" = 1' \
	"$T/stderr2"
check "that line names the process, the app and the fix" sh -c \
	'grep "held by another process" "$0" |
	grep -q "pid [0-9]* ($1): socket @porthole.$1 .*porthole_config.socket_name"' \
	"$T/stderr2" "$APP"

# inflight once a call has finished (the recording is on disk as it comes):
# at a fixed time after connecting, a loaded machine may not have made one.
wait_for 30 grep -q '"event":"http_end"' "$T/rec.ndjson"
$REC --socket "porthole.$APP" --out "$T/inflight.ndjson" --seconds 2 \
	--request '{"id":16,"method":"inflight","params":{}}'
check "the sample exits 0 after its scenario" wait $PID
check "the recorder connected" wait $RPID
check "the sample printed its socket name" grep -q "serving @porthole.$APP" "$T/stdout"

kinds() {
	python3 - "$T/rec.ndjson" <<'PY'
import json, sys
seen = set()
for line in open(sys.argv[1]):
    o = json.loads(line)
    if 'event' in o:
        seen.add(o['event'])
    elif o.get('id') == 2:
        for e in o['result']['events']:
            seen.add(e['event'])
print(' '.join(sorted(seen)))
PY
}
K=$(kinds)
# Every kind docs/protocol-kinds.tsv says the C agent sends (producer c or
# both; device sub-kinds count as device), read from the file, not a list.
C_KINDS=$(awk -F'\t' 'NR > 1 && ($4 == "c" || $4 == "both") { sub(/:.*/, "", $1); print $1 }' \
	docs/protocol-kinds.tsv | sort -u)
check "the contract names the C agent's kinds (20 or more)" \
	test "$(echo "$C_KINDS" | wc -l)" -ge 20
for kind in $C_KINDS; do
	check "event kind $kind arrived" sh -c 'echo " $0 " | grep -q " $1 "' "$K" "$kind"
done

check "no secret left the process" sh -c '! grep -q "do-not-log" "$0/rec.ndjson"' "$T"
check "query values are redacted" grep -q 'token=\*' "$T/rec.ndjson"
check "request headers are sent, the bearer token redacted in the app" \
	grep -q '"event":"http_start".*"requestHeaders":{[^}]*"Authorization":"\*"' "$T/rec.ndjson"
check "response headers are sent, the cookie redacted in the app" \
	grep -q '"event":"http_end".*"responseHeaders":{[^}]*"Set-Cookie":"\*"' "$T/rec.ndjson"
check "inflight's finished calls carry the redacted headers" \
	grep -q '{"id":16,"ok":true,"result":{.*"recentHttp":\[.*"requestHeaders":{[^}]*"Authorization":"\*"[^}]*},"responseHeaders":{[^}]*"Content-Type":"application/json"' "$T/inflight.ndjson"
check "an ordinary header keeps its value" \
	grep -q '"responseHeaders":{[^}]*"Content-Type":"application/json' "$T/rec.ndjson"
check "a crash is reported as an exit with its signal" \
	grep -q '"event":"exit","t":[0-9]*,"seq":[0-9]*,"data":{"reason":"REASON_CRASH_NATIVE"[^}]*"signal":11' "$T/rec.ndjson"
check "the exit names the other threads' states and the crashed stack" \
	grep -q '"event":"exit".*"mainStack":".*"otherThreadCount":[0-9]*,"otherThreadStates":{"[a-z-]*":[0-9]' "$T/rec.ndjson"
check "the killed run is reported as killed" \
	grep -q '"event":"exit".*"pid":'"$KPID"',.*"description":"killed: no exit or crash was recorded"' "$T/rec.ndjson"
check "exits lists the clean exit, with its status" \
	grep -q '"id":11,"ok":true,"result":{"exits":\[.*"state":"exited","reason":"REASON_EXIT_SELF","status":0' "$T/rec.ndjson"
check "exits lists the crash, already reported" \
	grep -q '"id":11,"ok":true,"result":{"exits":\[.*"state":"crashed","reason":"REASON_CRASH_NATIVE","signal":11,.*"reported":true' "$T/rec.ndjson"
check "the stall names the function that blocked" \
	grep -q '"top":"apply_coupon_synchronously(main.c:' "$T/rec.ndjson"
check "the main-thread query is marked" \
	grep -q '"sql":"SELECT sum(qty \* price_cents) FROM cart_items WHERE cart_id = ?".*"onMainThread":"true"' "$T/rec.ndjson"
check "bound values are recorded, blobs only sized" \
	grep -q '"args":"sync, <blob 48 bytes>"' "$T/rec.ndjson"
check "every query's ns time agrees with its ms, and some took under 1 ms" \
	python3 -c '
import json, sys
ends = [json.loads(l)["data"] for l in open(sys.argv[1])
        if l.startswith("{\"event\":\"db_end\"")]
assert ends and all(int(d["elapsedMs"]) == d["elapsedNs"] // 1000000 for d in ends)
assert any(0 < d["elapsedNs"] < 1000000 for d in ends)
' "$T/rec.ndjson"
check "a read says so and counts its rows" \
	grep -q '"event":"db_end".*"kind":"read".*"rows":[1-9]' "$T/rec.ndjson"
check "an insert says it writes and gives the new row id" \
	grep -q '"event":"db_end".*"sql":"INSERT[^"]*","kind":"write".*"insertId":[1-9]' "$T/rec.ndjson"
check "the failed insert carries SQLite's error" \
	grep -q '"error":"constraint failed: UNIQUE constraint failed: cart_items.id (code 1555)"' "$T/rec.ndjson"
check "the 402 arrives with the published runtime's string status" \
	grep -q '"url":"http://127.0.0.1:[0-9]*/v1/checkout","phase":"done","elapsedMs":"[0-9]*","status":"402"' "$T/rec.ndjson"
check "the job failed once and succeeded on retry" sh -c \
	'grep -q "\"state\":\"ENQUEUED\"" "$0" && grep -q "\"state\":\"SUCCEEDED\"" "$0"' "$T/rec.ndjson"
check "the burst was dropped and counted, not waited for" \
	grep -q '"event":"dropped".*"scope":"queue"' "$T/rec.ndjson"
# emitted = delivered + dropped, for this client: every seq the stream
# skipped is counted by a dropped frame, each frame's range its count.
check "the stream's seq gaps are exactly the dropped frames' counts" python3 -c '
import json, sys
seqs, counted = set(), 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "event" not in o:
        continue  # a method reply
    if o["event"] == "dropped":
        d = o["data"]
        assert d["lastSeq"] - d["firstSeq"] + 1 == d["count"], d
        counted += d["count"]
    else:
        seqs.add(o["seq"])
missing = max(seqs) - min(seqs) + 1 - len(seqs)
print("delivered", len(seqs), "missing", missing, "counted", counted)
assert counted > 0 and missing == counted
' "$T/rec.ndjson"
# Animate totals (5.5 s), then scoped reads (6.5 s), then off (7 s): every
# row re-renders each frame until the read moves into the leaf, after
# which only the leaf does.
check "rows re-render every frame, then only the leaf once reads are scoped" python3 -c '
import json, sys
rows, leaf = [], []
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") == "recompose":
        (leaf if o["data"]["name"] == "Cart.TotalLeaf" else rows).append((o["t"], o["data"]["name"]))
assert {n for _, n in rows} == {"Cart.ItemRow"}, rows[:3]
assert len(rows) >= 4 * 30 and len(leaf) >= 15, (len(rows), len(leaf))  # ~1 s and ~0.5 s at 60 Hz
assert max(t for t, _ in rows) <= min(t for t, _ in leaf), "a row re-rendered after reads were scoped"
' "$T/rec.ndjson"
check "a cold start" grep -q '"classification":"cold"' "$T/rec.ndjson"
check "its origin is the process's fork, read from /proc/self/stat" \
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    for e in o.get("result", {}).get("events", []) if "result" in o else [o]:
        d = e.get("data", {})
        if e.get("event") == "startup" and d.get("classification") == "cold":
            assert d["originAssumed"] is False and d["originKind"] == "fork"
            # forked before the agent started, and not long before
            assert 0 <= d["onCreateEntryMs"] - d["originMs"] < 5000
            sys.exit(0)
sys.exit(1)
' "$T/rec.ndjson"
check "a stderr stack trace is one entry with appended lines" \
	grep -q '"event":"log_append".*"text":"    at apply_coupon (coupon.c:88)"' "$T/rec.ndjson"
check "db_tables lists the cart database" grep -q '{"id":3,"ok":true,"result":{"database":".*cart.db"' "$T/rec.ndjson"
check "db_query refuses a write, with the reason" \
	grep -q '{"id":4,"ok":false,"error":"refused: only SELECT, WITH and PRAGMA' "$T/rec.ndjson"
check "a write behind WITH passes the first word, not the authorizer" \
	grep -q '{"id":12,"ok":false,"error":"refused: not authorized"' "$T/rec.ndjson"
check "db_query runs exactly one statement" \
	grep -q '{"id":13,"ok":false,"error":"refused: ' "$T/rec.ndjson"
check "a PRAGMA that assigns is refused" \
	grep -q '{"id":14,"ok":false,"error":"refused: a PRAGMA that assigns a value writes"' "$T/rec.ndjson"
check "and nothing was written" \
	grep -q '{"id":15,"ok":true,"result":{"columns":\[{"name":"planted".*"rows":\[\["0"\]\]' "$T/rec.ndjson"
check "db_query reads" grep -q '{"id":5,"ok":true,"result":{"columns":\[{"name":"inspected_sku"' "$T/rec.ndjson"
check "looking at the database is not a query of the app's" sh -c \
	'! grep "\"event\":\"db_" "$0" | grep -q -e inspected_sku -e sqlite_schema' \
	"$T/rec.ndjson"
check "the semantics tree has the unlabelled icon button" \
	grep -q '"role":"Button","testTag":"share","bounds"' "$T/rec.ndjson"
check "and the close button, 16 x 16: under the 24 dp touch target" \
	grep -q '"role":"Button","testTag":"close","contentDescription":"Close","bounds":{"left":10.0,"top":20.0,"right":26.0,"bottom":36.0},"actions":\["OnClick"\],"flags":\["clickable"\]' "$T/rec.ndjson"
check "the screenshot is a PNG" grep -q '{"id":7,"ok":true,"result":{.*"mimeType":"image/png","data":"iVBORw0KGgo' "$T/rec.ndjson"
check "setup says which integrations are wired" \
	grep -q '"name":"sqlite","onClasspath":true,"instrumented":true' "$T/rec.ndjson"
check "the cart was opened by a deep link" \
	grep -q '"event":"nav".*"route":"cart".*"deepLink":"porthole://cart/99001"' "$T/rec.ndjson"
check "an unknown method gets the published text" \
	grep -q '{"id":10,"ok":false,"error":"unknown method '"'"'no_such_method'"'"'"}' "$T/rec.ndjson"
check "a malformed line gets an error, not a hang-up" \
	grep -q '{"id":-1,"ok":false,"error":"malformed request: ' "$T/rec.ndjson"
check "seq strictly increases" python3 - "$T/rec.ndjson" <<'PY'
import json, sys
last = -1
for line in open(sys.argv[1]):
    o = json.loads(line)
    if 'event' in o and o['event'] != 'dropped':
        assert o['seq'] > last, (o['seq'], last)
        last = o['seq']
PY
check "the app's own output still reaches its stdout" grep -q "serving @" "$T/stdout"
check "every event keeps the contract of docs/protocol-kinds.tsv" \
	python3 tests/e2e/protocol_contract.py docs/protocol-kinds.tsv "$T/rec.ndjson"
finish
