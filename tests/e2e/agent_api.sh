# SPDX-License-Identifier: Apache-2.0
# The public API: porthole.h and porthole_noop.h declare the same surface
# (names and signatures), one file calling every function compiles against
# both, and the release build (PORTHOLE_DISABLED) references no agent
# symbol at all; an integration present but never attached is named on
# stderr.
. tests/lib/e2e.sh

CC=${CC:-gcc}
T=$E2E_TMP

surface() { # surface HEADER_MODE: "real" or "noop" -> sorted prototypes
	python3 - "$1" <<'PY'
import re, sys
mode = sys.argv[1]
h = open('include/porthole.h').read()
if mode == 'real':
    src = h[h.index('#else', h.index('#ifdef PORTHOLE_DISABLED')):]
    decls = re.findall(r'PORTHOLE_API\s+([^;{]*?\))\s*(?:__attribute__\(\([^;]*\)\))?;', src, re.S)
    decls += re.findall(r'static inline ([^;{]*?\))\s*\{', h[h.index('#else', h.index('#ifdef PORTHOLE_DISABLED')):])
else:
    src = open('include/porthole_noop.h').read()
    decls = re.findall(r'static inline ([^;{]*?\))\s*\{', src, re.S)
for d in sorted(' '.join(d.split()) for d in decls):
    print(d)
PY
}

surface real > "$T/real.txt"
surface noop > "$T/noop.txt"
check "headers declare the same surface" sh -c '
	test "$(wc -l < "$0/real.txt")" -gt 30 &&
	diff -u "$0/real.txt" "$0/noop.txt"' "$T"
check "every call compiles against the real header" \
	$CC -std=c11 -Wall -Wextra -Werror -Iinclude -c tests/agent/api_calls.c \
	-o "$T/real.o"
check "every call compiles against the no-op header" \
	$CC -std=c11 -Wall -Wextra -Werror -O2 -DPORTHOLE_DISABLED -Iinclude \
	tests/agent/api_calls.c -o "$T/noop"
check "a release build references no agent symbol" sh -c \
	'! nm "$0/noop" | grep -q " U porthole_"' "$T"
check "a release build runs and does nothing" "$T/noop"
# The plain library in every pass: this links it the way an app would,
# without the sanitizer runtime the sanitized build needs.
check "the real build links against libporthole" \
	$CC -o "$T/real" "$T/real.o" build/lib/libporthole.a \
	-ldw -lz -ldl -lpthread -lm
check "without a debug build or PORTHOLE_ENABLE it refuses, and says why" \
	sh -c 'env -u PORTHOLE_ENABLE "$0/real" 2>&1 | grep -q "not started: this is not a debug build"' "$T"
# An app with SQLite loaded that never attached it is told so, once, a
# few seconds after start, with the call to add; no line for libcurl,
# which it does not load.
check "an app that never attached SQLite links" \
	$CC -std=c11 -Wall -Wextra -Werror -Iinclude -Isrc/core -Itests/lib \
	-o "$T/unwired" tests/agent/unwired.c tests/lib/ph_threads.c \
	build/lib/libporthole.a -lsqlite3 \
	-ldw -lz -ldl -lpthread -lm
PORTHOLE_ENABLE=1 PORTHOLE_ANNOUNCE="$T/unwired.announce" "$T/unwired" \
	"porthole.e2e-unwired.$$" "$T/unwired-data" \
	> "$T/unwired.out" 2> "$T/unwired.err" &
UPID=$!
build/tests/ph-record --announce "$T/unwired.announce" \
	--out "$T/unwired.ndjson" --seconds 7
wait $UPID
URC=$?
check "the unwired app ran its course" sh -c \
	'test "$0" = 0 && grep -q "setup-thread=" "$1"' $URC "$T/unwired.out"
check "the check ran on the agent's named thread" \
	grep -q "setup-thread=1" "$T/unwired.out"
check "one stderr line says SQLite is loaded but not attached, with the call" \
	sh -c 'test "$(grep -c "sqlite is loaded but not instrumented.*add porthole_sqlite_attach(db)" "$0")" = 1' \
	"$T/unwired.err"
check "and none for libcurl, which is not loaded" \
	sh -c '! grep -q "curl is loaded" "$0"' "$T/unwired.err"
# Its stdio is captured: its own stderr line is a log event (and still
# reaches stderr); the agent's warning, written beside it, is not one.
check "the app's own stderr line still reaches stderr" \
	grep -q "unwired: a line of the app's own" "$T/unwired.err"
check "the app's own stderr line is a log event" \
	grep -q '"event":"log".*"message":"unwired: a line of the app'"'"'s own"' \
	"$T/unwired.ndjson"
check "a trace's next line is glued to it" \
	grep -q '"event":"log_append".*"text":"    at glued (t.c:1)"' "$T/unwired.ndjson"
check "a line 300 ms later is an entry of its own" \
	grep -q '"event":"log".*"message":"    at late (t.c:2)"' "$T/unwired.ndjson"
check "a line on the other stream is an entry of its own" \
	grep -q '"event":"log".*"message":"    at other_stream (t.c:3)"' "$T/unwired.ndjson"
check "the agent's own warning never loops back into capture" \
	sh -c '! grep -q "not instrumented" "$0"' "$T/unwired.ndjson"
check "pkg-config describes the library" sh -c \
	'PKG_CONFIG_PATH="$0" pkg-config --libs --cflags porthole | grep -q -- "-lporthole"' \
	build/lib/pkgconfig
finish
