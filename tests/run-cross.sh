#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The arm64 pass: what `make cross ARCH=aarch64` built (BUILD_DIR), run on
# this x86-64 machine under qemu-user.  Usage: BUILD_DIR RESULTS_FILE
#
#   [aarch64:unit]     the unit tests of core, wire (json) and the agent,
#                      the iotrace reader's instruction sets (NEON here)
#   [aarch64:capture]  porthole capture of the arm64 porthole-sample's
#                      checkout (the agent, its stall unwinder and
#                      symbolizer on arm64), reported by the arm64 porthole
#
# Correctness only: qemu translates every instruction, so nothing here is
# timed.  None of the unit tests chosen compares timings (the timing
# comparisons are bench/'s, never run here).  The arm64 programs find their
# libraries through Debian's multiarch (libc6:arm64 and the -dev packages
# of make deps): qemu runs them with no -L, as /usr/aarch64-linux-gnu's
# loader is the cross toolchain's own libc and must not be mixed with
# multiarch's (threads hang in pthread_create when they are).
set -u
build=$1 results=$2
cd "$(dirname "$0")/.."
QEMU=${PH_QEMU:-qemu-aarch64-static}
HOST=${PH_HOST_BUILD:-build}/bin/porthole
status=0
out=$(mktemp)
T=$(mktemp -d)
trap 'rm -rf "$out" "$T"' EXIT

. tests/lib/record.sh

if ! command -v "$QEMU" > /dev/null; then
	echo "run-cross: $QEMU not found (make deps installs qemu-user-static)"
	echo "[aarch64:unit] 0 passed, 1 failed" | tee -a "$results"
	exit 1
fi

echo "== unit tests (aarch64, under qemu)"
PH_TEST_SUITE=aarch64:unit "$QEMU" "$build/tests/unit-tests" \
	test_buf__ test_arena__ test_log__ test_error__ test_clock__ \
	test_inflate__ test_json__ test_encode__ test_record__ test_queue__ \
	test_lanes__ test_tclock__ test_symbolize__ test_exits__ \
	test_agent__ test_agent_methods__ test_iotrace_isa__ > "$out" 2>&1
rc=$?
grep -v '^ok ' "$out"
record aarch64:unit "$out" $rc

# The capture: this machine's porthole (the host is the same code, and
# speaks the wire protocol to whatever agent answers) around the arm64
# sample under qemu; then the arm64 porthole reports the capture.  The
# sample's own clock runs slow under emulation, so the checks are of what
# was found, never of when.
echo "== capture of the arm64 sample (aarch64, under qemu)"
(
	. tests/lib/e2e.sh
	PH_SUITE=aarch64:capture
	ROOT=$(pwd)
	S="$ROOT/$build/bin/porthole-sample"
	P="$ROOT/$build/bin/porthole"
	if [ ! -x "$HOST" ]; then
		check "the host's porthole is built ($HOST)" false
		finish
		exit
	fi
	(cd "$T" && PORTHOLE_PROJECT_ROOT=$ROOT PORTHOLE_SESSIONS=0 \
		"$ROOT/$HOST" capture --scenario checkout --out "$T/c.json" -- \
		"$QEMU" "$S" --scenario checkout --seconds 10 \
		--app-id "arm64.cross.$$" --data-dir "$T/d" \
		> "$T/cap.out" 2> "$T/cap.err"
	echo $? > "$T/cap.rc")
	tr -d '\n' < "$T/c.json" | sed 's/},{"id":/}\n{"id":/g' > "$T/f.txt"
	has() { grep "\"id\":\"$1\",\"severity\":\"$2\"" "$T/f.txt" | grep -q -- "$3"; }
	check "the arm64 sample ran and exited 0" sh -c \
		"[ \$(cat $T/cap.rc) -eq 0 ] || cat $T/cap.err"
	check "the sample is an arm64 program" sh -c \
		"file -L '$S' | grep -q 'ARM aarch64'"
	check "capture connected to the arm64 agent" \
		grep -q 'connected to' "$T/cap.err"
	check "db-on-main-thread: the planted SQL" \
		has db-on-main-thread error 'SELECT sum(qty \* price_cents) FROM cart_items'
	check "main-thread-stall: unwound and symbolized on arm64" \
		has main-thread-stall error 'apply_coupon_synchronously'
	check "main-thread-stall resolved to sample/main.c" \
		has main-thread-stall error '"path":"sample/main.c"'
	# Sampled in a PLT entry (no CFI on arm64), the stack is still whole:
	# the callers come from the frame records, and the entry, in none of
	# the sample's functions, is not listed.
	grep '"id":"main-thread-stall"' "$T/f.txt" |
		grep apply_coupon_synchronously > "$T/stall.txt"
	check "main-thread-stall: its stack reaches main" \
		grep -q 'planted_stall(main.c:[0-9]*)\\nmain(main.c:' "$T/stall.txt"
	check "main-thread-stall: no unresolvable frame in its stack" sh -c \
		"! grep -q 'porthole-sample+0x' '$T/stall.txt'"
	check "http-failed: POST /v1/checkout 402" \
		has http-failed error '"method":"POST","url":"http://127.0.0.1:[0-9]*/v1/checkout","status":402'
	check "db-error: the UNIQUE constraint" \
		has db-error warning 'UNIQUE constraint failed'
	check "work-retried: SyncCartJob" has work-retried note 'SyncCartJob'
	# What the capture held when the stall is missing: its stalls, its
	# notes and the end of capture's stderr, to tell a missed stall from
	# a run that never reached it.
	if ! has main-thread-stall error 'apply_coupon_synchronously'; then
		echo "# stalls in the capture:"
		grep '"id":"main-thread-stall"' "$T/f.txt" |
			grep -o '"title":"[^"]*"' | sed 's/^/#   /'
		grep -o '"notes":\[[^]]*\]' "$T/c.json" | sed 's/^/# /'
		tail -5 "$T/cap.err" | sed 's/^/# /'
	fi
	check "the arm64 porthole reports the capture" sh -c \
		"'$QEMU' '$P' report '$T/c.json' > '$T/r.txt' &&
		grep -q apply_coupon_synchronously '$T/r.txt' &&
		grep -q 402 '$T/r.txt' && grep -q 'UNIQUE constraint' '$T/r.txt'"
	finish
) > "$out" 2>&1
rc=$?
grep -v '^ok ' "$out"
record aarch64:capture "$out" $rc
exit $status
