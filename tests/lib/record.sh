# SPDX-License-Identifier: Apache-2.0
# Sourced by the suite runners (run-suites.sh, run-cross.sh, run-musl.sh).
# record NAME OUTPUT_FILE EXIT_STATUS: keeps the suite's closing
# "[name] N passed, N failed" line in $results, prefixed by $label: when
# set, and sets status=1 when it failed.  No closing line, or a clean
# count with a failing exit (a sanitizer's report at exit, a crash after
# the count), is a failure.
record() {
	line=$(grep -E '^\[[^]]*\] [0-9]+ passed, [0-9]+ failed$' "$2" | tail -1)
	[ -n "$line" ] || line="[$1] 0 passed, 1 failed"
	if [ "${3:-0}" != 0 ] && echo "$line" | grep -q ' 0 failed$'; then
		echo "  exit status $3 after: $line"
		line="[$1] 0 passed, 1 failed"
	fi
	echo "$line" | sed "s/^\[/[${label:+$label:}/" | tee -a "$results"
	echo "$line" | grep -q ' 0 failed$' || status=1
}
