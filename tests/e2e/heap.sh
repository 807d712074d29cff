#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of `porthole heap`: the planted-leak dumps against their
# golden renderings, the fixtures' figures through stats/top/path, hostile
# dumps, `heap dump` against a fake adb and a fake jcmd, and leaks landing
# in the real sample's sessions as `leak` events (recorded, and live).
. tests/lib/e2e.sh
P="$BIN/porthole"
G=tests/golden/heap
DIALER=$(fixture hprof/perflib_dialer.android-hprof)
AHAT=$(fixture hprof/ahat_test-dump.hprof)
AHATMAP=$(fixture hprof/ahat_test-dump.map)
SLURP=$(fixture hprof/hprof-slurp_hprof-32.bin)

# `leaks` exits 1 when the app leaks; the text is LeakCanary's
for n in static listener watched local; do
	check "leaks planted-$n" sh -c \
		"'$P' heap leaks $G/planted-$n.hprof > '$E2E_TMP/l.txt'; \
		 [ \$? -eq 1 ] && diff -u $G/planted-$n.leaks.txt '$E2E_TMP/l.txt'"
done
check "leaks --json is the leak event's shape" sh -c \
	"'$P' heap leaks --json $G/planted-listener.hprof > '$E2E_TMP/j'; \
	 [ \$? -eq 1 ] && grep -q '\"kind\":\"application\"' '$E2E_TMP/j' && \
	 grep -q '\"leakCount\":1' '$E2E_TMP/j' && \
	 grep -q '\"shortDescription\":\"EventBus.listeners\"' '$E2E_TMP/j' && \
	 grep -q '\"source\":\"heap\"' '$E2E_TMP/j'"
check "leaks --class on a JVM dump" sh -c \
	"'$P' heap leaks $SLURP --class java.lang.Thread > '$E2E_TMP/t'; \
	 [ \$? -le 1 ] && grep -q 'APPLICATION LEAKS' '$E2E_TMP/t'"
check "leaks on dialer finds the quitting MessageQueue" sh -c \
	"'$P' heap leaks $DIALER | grep -q 'MessageQueue#mQuitting is true'"
check "stats dialer" sh -c \
	"'$P' heap stats --json $DIALER > '$E2E_TMP/s' && \
	 grep -q '\"objects\":43687' '$E2E_TMP/s' && \
	 grep -q '\"reachable\":42868' '$E2E_TMP/s' && \
	 grep -q '\"name\":\"zygote\",\"classes\":3533,\"objects\":38710' '$E2E_TMP/s' && \
	 grep -q '\"INTERNED_STRING\":7286' '$E2E_TMP/s'"
check "stats slurp matches its result file" sh -c \
	"'$P' heap stats $SLURP > '$E2E_TMP/s' && \
	 grep -q 'ROOT_UNKNOWN 54' '$E2E_TMP/s' && \
	 grep -q 'INSTANCE_DUMP 1293' '$E2E_TMP/s' && \
	 grep -q 'STRING 1496' '$E2E_TMP/s'"
check "top by retained, de-obfuscated" sh -c \
	"'$P' heap top $AHAT --map $AHATMAP --limit 5 > '$E2E_TMP/t' && \
	 grep -q 'DumpedStuff\$StackSmasher' '$E2E_TMP/t' && \
	 grep -q 'biggest retainers' '$E2E_TMP/t'"
check "top --by count --json" sh -c \
	"'$P' heap top $DIALER --by count --limit 3 --json | \
	 grep -q '\"by\":\"count\"'"
id=$("$P" heap leaks --json $G/planted-static.hprof | \
	sed 's/.*\"id\":\"\(0x[0-9a-f]*\)\",\"class\":\"com.example.MainActivity\".*/\1/')
check "path to the leaking activity" sh -c \
	"'$P' heap path $G/planted-static.hprof $id | grep -q 'static Foo.sInstance'"
check "path to an unknown id fails" sh -c \
	"! '$P' heap path $G/planted-static.hprof 0x1"
# hostile input: clear errors with offsets, partial results flagged
head -c 100000 "$DIALER" > "$E2E_TMP/cut.hprof"
check "truncated dump is partial" sh -c \
	"'$P' heap stats '$E2E_TMP/cut.hprof' > '$E2E_TMP/o' 2> '$E2E_TMP/e'; \
	 [ \$? -eq 1 ] && grep -q '^PARTIAL: byte ' '$E2E_TMP/o'"
# a partial dump is never an all-clear: leaks exits 3 whatever it found
check "leaks on a truncated dump exits 3" sh -c \
	"'$P' heap leaks '$E2E_TMP/cut.hprof' > '$E2E_TMP/o' 2> '$E2E_TMP/e'; \
	 [ \$? -eq 3 ] && grep -q '^PARTIAL: ' '$E2E_TMP/o'"
head -c 3000 $G/planted-static.hprof > "$E2E_TMP/cut-leak.hprof"
check "leaks --json on a truncated dump exits 3" sh -c \
	"'$P' heap leaks --json '$E2E_TMP/cut-leak.hprof' > '$E2E_TMP/o' 2> '$E2E_TMP/e'; \
	 [ \$? -eq 3 ] && grep -q '\"partial\":true' '$E2E_TMP/o'"
check "not an hprof" sh -c \
	"'$P' heap stats tests/e2e/heap.sh 2> '$E2E_TMP/e'; \
	 [ \$? -eq 2 ] && grep -q 'byte 0: not an HPROF file' '$E2E_TMP/e'"
check "usage errors" sh -c "! '$P' heap top && ! '$P' heap bogus x"

# `heap dump` through a fake adb: dumpheap, poll, pull, clean up
cat > "$E2E_TMP/adb" <<FAKE
#!/bin/sh
echo "\$*" >> "$E2E_TMP/adb.log"
case "\$1 \$2" in
"shell am") exit 0 ;;
"shell stat") wc -c < $G/planted-static.hprof ;;
"pull "*) cp $G/planted-static.hprof "\$3" ;;
"shell rm") exit 0 ;;
esac
FAKE
chmod +x "$E2E_TMP/adb"
check "dump --application-id through adb" sh -c \
	"PORTHOLE_ADB='$E2E_TMP/adb' '$P' heap dump --application-id com.example \
		--out '$E2E_TMP/dev.hprof' > '$E2E_TMP/d' 2>&1; [ \$? -eq 1 ] && \
	 grep -q 'Activity#mDestroyed is true' '$E2E_TMP/d' && \
	 grep -q 'shell am dumpheap com.example /data/local/tmp/porthole-com.example.hprof' '$E2E_TMP/adb.log' && \
	 grep -q 'shell rm -f /data/local/tmp/porthole-com.example.hprof' '$E2E_TMP/adb.log' && \
	 cmp -s '$E2E_TMP/dev.hprof' $G/planted-static.hprof"
cat > "$E2E_TMP/jcmd" <<FAKE
#!/bin/sh
[ "\$2" = GC.heap_dump ] && cp $G/planted-local.hprof "\$3"
FAKE
chmod +x "$E2E_TMP/jcmd"
check "dump --pid through jcmd" sh -c \
	"PORTHOLE_JCMD='$E2E_TMP/jcmd' '$P' heap dump --pid 4242 \
		--out '$E2E_TMP/jvm.hprof' > '$E2E_TMP/d' 2>&1; [ \$? -eq 1 ] && \
	 grep -q 'GC Root: Java local variable' '$E2E_TMP/d'"
# Leaks into the app's session.  A real session first: porthole-sample
# under `capture`.  The fixture's dump is from 2014; a copy stamped with
# the current time (the header's u8 at 23) maps onto the session's clock.
stamp() { python3 -c 'import sys, time, struct
d = bytearray(open(sys.argv[1], "rb").read())
d[23:31] = struct.pack(">Q", int(time.time() * 1000))
open(sys.argv[2], "wb").write(d)' "$1" "$2"; }
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
PA=$(abs "$P")
SA=$(abs "$BIN/porthole-sample")
DIALER=$(abs "$DIALER")
R="$E2E_TMP/rec"
mkdir -p "$R"
(cd "$R" && PORTHOLE_PROJECT_ROOT="$R" "$PA" capture --scenario clean \
	--out "$R/c.json" -- "$SA" --scenario clean --seconds 2 \
	--app-id e2e.heap --data-dir "$R/d" > /dev/null 2>&1)
SID=$(ls "$R/.porthole/sessions" 2>/dev/null | head -1)
EV="$R/.porthole/sessions/$SID/events.ndjson"
stamp "$DIALER" "$E2E_TMP/now.hprof"
check "leaks --session adds the dialer's leak to a recorded session" sh -c \
	"PORTHOLE_PROJECT_ROOT='$R' '$P' heap leaks '$E2E_TMP/now.hprof' \
		--session '$SID' > /dev/null 2> '$E2E_TMP/e'; [ \$? -eq 1 ] && \
	 grep -q '1 leak event added to the session' '$E2E_TMP/e' && \
	 [ \$(grep -c '^{\"event\":\"leak\",\"t\":[0-9]*,\"seq\":-1,\"data\":{\"kind\":\"application\"' '$EV') -eq 1 ] && \
	 grep '\"event\":\"leak\"' '$EV' | grep -q '\"source\":\"heap\",\"hprof\":\"$E2E_TMP/now.hprof\"'"
check "the leak event keeps the contract of docs/protocol-kinds.tsv" \
	python3 -c 'import json, sys
table = {}
for line in list(open(sys.argv[1]))[1:]:
    k, f, t, prod, req = line.rstrip("\n").split("\t")[:5]
    if k == "leak":
        table[f] = (t, prod, req)
types = {"string": str, "int": int}
n = 0
for line in open(sys.argv[2]):
    e = json.loads(line)
    if e.get("event") != "leak":
        continue
    n += 1
    assert e["seq"] == -1 and isinstance(e["t"], int), e
    for f, v in e["data"].items():
        assert f in table, "not in the table: " + f
        assert isinstance(v, types[table[f][0]]), f
    for f, (t, prod, req) in table.items():
        assert req != "yes" or prod != "host" or f in e["data"], f
assert n == 1' docs/protocol-kinds.tsv "$EV"
# its t: the dump's time through the session's device:clocks
up=$(grep -o '"kind":"clocks","uptimeMs":"[0-9]*"' "$EV" | head -1 | tr -dc 0-9)
lt=$(sed -n 's/^{"event":"leak","t":\([0-9]*\),"seq":-1,.*/\1/p' "$EV")
check "the leak's t is the dump's time on the app's clock" sh -c \
	"[ -n '$up' ] && [ -n '$lt' ] && [ '$lt' -gt '$up' ] && \
	 [ '$lt' -lt \$(( $up + 600000 )) ]"
check "report shows the leak finding, with its size and path" sh -c \
	"'$P' report '$EV' > '$E2E_TMP/r' && \
	 grep -q '^warning  MessageQueue leaked (60 B) via DefaultVoicemailNotifier.sInstance' '$E2E_TMP/r' && \
	 grep -q 'GC Root: System class → static DefaultVoicemailNotifier.sInstance' '$E2E_TMP/r' && \
	 grep -q 'leak 1' '$E2E_TMP/r'"
check "report --json: the finding carries the trace" sh -c \
	"'$P' report --json '$EV' | grep -q '\"id\":\"leak\",\"severity\":\"warning\",.*\"retainedHeapByteSize\":60,.*Leaking: YES (MessageQueue#mQuitting is true)'"
check "a dump older than the process gets t 0, and says so" sh -c \
	"'$P' heap leaks '$DIALER' --session '$R/.porthole/sessions/$SID' \
		> /dev/null 2> '$E2E_TMP/e'; [ \$? -eq 1 ] && \
	 grep -q 'does not map onto the session' '$E2E_TMP/e' && \
	 grep -q '^{\"event\":\"leak\",\"t\":0,\"seq\":-1,' '$EV'"
check "--session must name a session" sh -c \
	"PORTHOLE_PROJECT_ROOT='$R' '$P' heap leaks '$DIALER' --session nope \
		2> '$E2E_TMP/e'; [ \$? -eq 2 ] && grep -q 'no session at' '$E2E_TMP/e' && \
	 ! '$P' heap stats '$DIALER' --session '$SID' 2> /dev/null"

# Live: while `watch` records the app, `heap dump --application-id` finds
# its session and adds the leaks next to the writer's own lines; the
# recording `watch` reads them back and prints the leak finding itself
# (it never reads the session file otherwise), and meta.json counts it.
L="$E2E_TMP/live"
mkdir -p "$L"
cat > "$E2E_TMP/adb2" <<FAKE
#!/bin/sh
case "\$1 \$2" in
"shell stat") wc -c < "$DIALER" ;;
"pull "*) python3 -c 'import sys, time, struct
d = bytearray(open(sys.argv[1], "rb").read())
d[23:31] = struct.pack(">Q", int(time.time() * 1000))
open(sys.argv[2], "wb").write(d)' "$DIALER" "\$3" ;;
esac
exit 0
FAKE
chmod +x "$E2E_TMP/adb2"
"$SA" --scenario checkout --seconds 6 --app-id e2e.live --data-dir "$L/d" \
	> /dev/null 2>&1 &
spid=$!
(cd "$L" && PORTHOLE_PROJECT_ROOT="$L" exec "$PA" watch --application-id e2e.live \
	--severity note --json > "$L/w.out" 2> /dev/null) &
wpid=$!
for i in $(seq 100); do
	(cd "$L" && PORTHOLE_PROJECT_ROOT="$L" "$PA" sessions) 2> /dev/null | \
		grep -q 'recording' && break
	sleep 0.05
done
(cd "$L" && PORTHOLE_PROJECT_ROOT="$L" PORTHOLE_ADB="$E2E_TMP/adb2" "$PA" heap \
	dump --application-id e2e.live --out "$L/dev.hprof" > /dev/null \
	2> "$L/d.err"; echo $? > "$L/d.rc")
# The watch runs until it has printed the leak (its own time limit is not
# what is tested here, and a loaded machine is slow to dump).
wait_for 60 grep -q '"id":"leak"' "$L/w.out"
kill -INT $wpid
wait $wpid
wait $spid
LEV=$(ls "$L"/.porthole/sessions/e2e.live_*/events.ndjson 2>/dev/null | head -1)
check "dump while a host records: the leak joins the live session" sh -c \
	"[ \$(cat '$L/d.rc') -eq 1 ] && grep -q '1 leak event added' '$L/d.err' && \
	 [ \$(grep -c '\"event\":\"leak\"' '$LEV') -eq 1 ]"
check "the writer's lines and the leak's are whole lines" sh -c \
	"'$P' report --json '$LEV' > '$E2E_TMP/lj' && \
	 grep -q '\"id\":\"leak\"' '$E2E_TMP/lj' && \
	 grep -q '\"id\":\"db-on-main-thread\"' '$E2E_TMP/lj' && \
	 [ \$(grep -c '' '$LEV') -eq \$(grep -c '^{.*}\$' '$LEV') ]"
check "the recording watch prints the leak finding live" sh -c \
	"grep -q '\"id\":\"leak\"' '$L/w.out'"
check "meta.json counts the leak the dump added" sh -c \
	"grep -q '\"leak\":1' \"\$(dirname '$LEV')/meta.json\""
finish
