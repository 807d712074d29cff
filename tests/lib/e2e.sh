# SPDX-License-Identifier: Apache-2.0
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
# The tests' Python is Debian's (make deps installs it; they use only its
# standard library), first on PATH for them and the fakes they start: a
# version manager's shim in front of it took 6 s a start at load 12, and
# relays and trace writers that slow made the apps they wait on time out.
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$E2E_TMP/.bin"
	ln -s /usr/bin/python3 "$E2E_TMP/.bin/python3"
	PATH="$E2E_TMP/.bin:$PATH"
fi

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

# tap_checks SUITE TAP_FILE EXIT_STATUS: one check per top-level
# "ok N - name" / "not ok N - name" of a node --test TAP stream, then two
# more, so a run that died halfway cannot pass on the tests it got to:
# node exited 0, and the plan line ("1..N") was printed and N tests ran.
tap_checks() {
	suite=$1 tap=$2 rc=$3
	grep -E '^(not )?ok [0-9]+ - ' "$tap" | sed 's/ # .*//' > "$tap.results"
	while IFS= read -r line; do
		name=${line#*- }
		case $line in
		"not ok"*) # its diagnostic block alone (check shows the
			# last 20 lines: the next tests' lines must not push
			# the error message out)
			grep -F -A30 -- "$line" "$tap" | head -30 |
				awk '{ print } /^  \.\.\.$/ { exit }' > "$tap.why"
			check "$name" sh -c "cat '$tap.why'; false" ;;
		*) check "$name" true ;;
		esac
	done < "$tap.results"
	plan=$(grep -E '^1\.\.[0-9]+$' "$tap" | tail -1)
	ran=$(grep -c '' "$tap.results")
	check "$suite: node exited 0" sh -c "[ $rc -eq 0 ] || { tail -30 '$tap'; false; }"
	check "$suite: all of its plan ran ($plan, $ran results)" \
		sh -c "[ -n '$plan' ] && [ '$plan' = '1..$ran' ] || { tail -30 '$tap'; false; }"
}

# tracefs_recording: a `porthole trace record` has started recording.  It
# switches the clock to mono with tracing off, enables its events, and
# turns tracing on last; an app started before that misses its first look
# at whether tracing is on (the agent looks once a second).
tracefs_recording() {
	tr=/sys/kernel/tracing
	[ -e $tr/trace_clock ] || tr=/sys/kernel/debug/tracing
	grep -q '\[mono\]' $tr/trace_clock && grep -qx 1 $tr/tracing_on
}

# wait_for SECONDS CMD...: polls CMD every 50 ms (never a fixed sleep as a
# test condition); false when it never succeeded.
wait_for() {
	n=$(($1 * 20))
	shift
	while [ $n -gt 0 ]; do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

finish() {
	echo "[${PH_SUITE:-e2e}] $e2e_passed passed, $e2e_failed failed"
	[ $e2e_failed -eq 0 ]
}
