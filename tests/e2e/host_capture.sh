#!/bin/sh
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
	"$S" --scenario checkout --seconds 10 --data-dir "$T/d1" \
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
	"$S" --scenario clean --seconds 4 --data-dir "$T/d2" > /dev/null 2>&1)
check "clean scenario: only the launch's main-thread queries" sh -c \
	"python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))[\"findings\"]; sys.exit(not (len(f) == 1 and f[0][\"key\"] == \"db-on-main-thread:launch\"))' $T/clean.json"
check "the session was recorded on disk, and only that one" sh -c \
	"[ \$(ls $T/.porthole/sessions | wc -l) -eq 1 ] && grep -q '\"event\":\"startup\"' $T/.porthole/sessions/*/events.ndjson && grep -q '\"counts\"' $T/.porthole/sessions/*/meta.json"
check "sessions lists it as the most recent" sh -c "cd $T && '$P' sessions | grep -q '^\* dev.porthole.sample_'"

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
finish
