#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The musl pass: what `make musl` built (BUILD_DIR) with musl-gcc, run on
# this machine (musl's loader, /lib/ld-musl-*.so.1, is musl's own package).
# Usage: BUILD_DIR RESULTS_FILE
#
#   [musl:unit]     the unit tests of core and the agent that need no
#                   library Debian builds for glibc only (the table make
#                   musl drew: PH_TEST_GLIBC_LIBS=0)
#   [musl:capture]  this machine's porthole capture of a musl app
#                   (tests/agent/explicit_calls.c linked with the musl
#                   libporthole.a): its HTTP call and its query
#
# porthole-sample is not built for musl: it links SQLite and libcurl,
# which Debian builds for glibc only (docs/building.md, "musl").
set -u
build=$1 results=$2
cd "$(dirname "$0")/.."
HOST=${PH_HOST_BUILD:-build}/bin/porthole
status=0
out=$(mktemp)
T=$(mktemp -d)
trap 'rm -rf "$out" "$T"' EXIT

. tests/lib/record.sh

echo "== unit tests (musl)"
PH_TEST_SUITE=musl:unit "$build/tests/unit-tests" > "$out" 2>&1
rc=$?
grep -v '^ok ' "$out"
record musl:unit "$out" $rc

echo "== capture of a musl app"
(
	. tests/lib/e2e.sh
	PH_SUITE=musl:capture
	ROOT=$(pwd)
	A="$ROOT/$build/tests/explicit-calls"
	if [ ! -x "$HOST" ]; then
		check "the host's porthole is built ($HOST)" false
		finish
		exit
	fi
	(cd "$T" && PORTHOLE_SESSIONS=0 "$ROOT/$HOST" capture \
		--scenario musl --out "$T/c.json" -- \
		"$A" "$T/d" "musl.explicit.$$" > "$T/cap.out" 2> "$T/cap.err"
	echo $? > "$T/cap.rc")
	check "the app is a musl program" sh -c \
		"file -L '$A' | grep -q 'interpreter /lib/ld-musl'"
	check "the musl app ran and exited 0" sh -c \
		"[ \$(cat $T/cap.rc) -eq 0 ] || cat $T/cap.err"
	check "capture connected to the musl agent" \
		grep -q 'connected to musl.explicit' "$T/cap.err"
	check "its HTTP call: POST /v1/explicit, 200" grep -q \
		'"http.calls":1,.*"label":"POST http://127.0.0.1:9/v1/explicit?token=\* 200"' \
		"$T/c.json"
	check "its query: SELECT count(*) FROM explicit" grep -q \
		'"db.queries":1,.*"label":"SELECT count(\*) FROM explicit"' \
		"$T/c.json"
	check "the capture saw every event (coverage complete)" grep -q \
		'"coverage":{"complete":true' "$T/c.json"
	check "porthole report reads it" sh -c \
		"'$ROOT/$HOST' report '$T/c.json' > '$T/r.txt' &&
		grep -q 'calls 1 · queries 1' '$T/r.txt'"
	finish
) > "$out" 2>&1
rc=$?
grep -v '^ok ' "$out"
record musl:capture "$out" $rc
exit $status
