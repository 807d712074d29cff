# e2e.sh: sourced by tests/e2e/*.sh.  `check NAME CMD...` runs CMD and
# counts it; `finish` prints the suite line run-suites.sh reads.
# $PH_BUILD is the build directory under test (build, build/san); with
# PH_KEEP set, the suite's scratch directory ($E2E_TMP) is left to look at.
set -u
BIN=${PH_BUILD:-build}/bin
FIXTURES=${PORTHOLE_FIXTURES:-../shared/fixtures}
e2e_passed=0
e2e_failed=0
E2E_TMP=$(mktemp -d)
trap '[ -n "${PH_KEEP:-}" ] || rm -rf "$E2E_TMP"' EXIT

check() {
	name=$1
	shift
	if "$@" > "$E2E_TMP/out" 2>&1; then
		e2e_passed=$((e2e_passed + 1))
		echo "ok $name"
	else
		e2e_failed=$((e2e_failed + 1))
		echo "FAIL $name"
		sed 's/^/  /' "$E2E_TMP/out" | tail -20
	fi
}

# fixture REL: the path, or a failure (a missing fixture never skips).
fixture() {
	[ -r "$FIXTURES/$1" ] || { echo "fixture $1 not found" >&2; return 1; }
	echo "$FIXTURES/$1"
}

finish() {
	echo "[${PH_SUITE:-e2e}] $e2e_passed passed, $e2e_failed failed"
	[ $e2e_failed -eq 0 ]
}
