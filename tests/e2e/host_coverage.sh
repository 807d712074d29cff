#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# host_coverage.sh: answers say what they cover (docs/findings.md,
# "Coverage").  No app at all, an app attached from its start, and an app
# attached after its queue overflowed, through watch, report, capture and
# MCP (the official SDK, tests/node/coverage.test.mjs).
. tests/lib/e2e.sh
PH_SUITE=${PH_SUITE:-e2e-host_coverage}
P="$(pwd)/$BIN/porthole"
S="$(pwd)/$BIN/porthole-sample"
T=$E2E_TMP
APP=e2e.cov.$$

# waits (bounded) for an app's abstract socket
wait_socket() {
	i=0
	while [ $i -lt 200 ] && ! grep -q "@porthole.$1\$" /proc/net/unix; do
		sleep 0.05
		i=$((i + 1))
	done
}

# --- nothing observed ------------------------------------------------------
(cd "$T" && "$P" watch --application-id e2e.cov.none --timeout 0.3 \
	> "$T/none.out" 2> "$T/none.err"; echo $? > "$T/none.rc")
check "watch with no app: exit 4, not 3 (nothing found)" \
	sh -c "[ \$(cat $T/none.rc) -eq 4 ]"
check "watch with no app: says on stderr that nothing was seen" \
	grep -q "not seen: no event received" "$T/none.err"

# --- attached from the start: complete ---------------------------------------
(cd "$T" && "$P" capture --scenario cov --out "$T/c.json" -- "$S" \
	--scenario checkout --seconds 3 --app-id "$APP.c" \
	--data-dir "$T/dc" > /dev/null 2>&1)
"$P" report "$T/c.json" > "$T/c.txt" 2>&1
check "a capture from the app's start: coverage complete" \
	grep -q "^coverage: complete" "$T/c.txt"
check "a complete capture lists its quiet checks" grep -q "^quiet: " "$T/c.txt"

# --- attached after the queue overflowed -------------------------------------
# The `all` scenario's burst at 8 s overflows the agent's queue and its
# ring; a host attached after it cannot see what came before.
mkdir -p "$T/late"
"$S" --scenario all --seconds 40 --app-id "$APP" --data-dir "$T/dl" \
	> /dev/null 2>&1 &
spid=$!
wait_socket "$APP"
# The burst has happened once the agent counts events dropped and its ring
# no longer holds its first ones: its stats, asked by a short recorder (a
# loaded machine runs the app's script late, so no fixed wait will do).
overflowed() {
	build/tests/ph-record --socket "porthole.$APP" --out "$T/stats" \
		--seconds 1 --request '{"id":3,"method":"stats","params":{}}' \
		> /dev/null 2>&1 &&
		grep -Eq '"id":3,"ok":true,"result":\{"emitted":[0-9]+,"dropped":[1-9][0-9]*,"ringCapacity":[0-9]+,"ringUsed":[0-9]+,"oldestSeq":([2-9]|[1-9][0-9]+),' "$T/stats"
}
i=0
until overflowed || [ $i -ge 60 ]; do i=$((i + 1)); done
check "the app's burst overflowed its queue and ring before the watch" \
	[ $i -lt 60 ]
(cd "$T/late" && "$P" watch --application-id "$APP" --timeout 3 \
	> "$T/late.out" 2> "$T/late.err")
check "watch attached late: says what it did not see" \
	grep -q "not seen: .*never received" "$T/late.err"
session=$(ls -d "$T"/late/.porthole/sessions/*/ 2>/dev/null | head -1)
check "watch recorded the late session on disk" test -f "$session/events.ndjson"
"$P" report "$session/events.ndjson" > "$T/late.txt" 2>&1
check "report of the late session: coverage INCOMPLETE" \
	grep -q "^coverage: INCOMPLETE: .*never received" "$T/late.txt"
check "report of the late session: nothing quiet, checks not seen" sh -c \
	"! grep -q '^quiet:' $T/late.txt && grep -q '^not seen (see coverage): ' $T/late.txt"
PH_BIN=$BIN PH_APP=$APP PH_DIR=$T/late node --test --test-reporter=tap \
	tests/node/coverage.test.mjs > "$T/tap" 2>&1
tap_checks "coverage.test.mjs" "$T/tap" $?
kill "$spid" 2> /dev/null
wait "$spid" 2> /dev/null

finish
