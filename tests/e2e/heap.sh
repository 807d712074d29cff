#!/bin/sh
# End-to-end tests of `porthole heap`: the planted-leak dumps against their
# golden renderings, the fixtures' figures through stats/top/path, hostile
# dumps, and `heap dump` against a fake adb and a fake jcmd.
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
finish
