#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Golden cases as data: tests/golden/<suite>/<case>/cmd is a shell line run
# from the project root with $P (the porthole binary), $FIX (the fixtures)
# and $G (the case's directory) set; its stdout and exit status, as
# "exit N" on the last line, must equal <case>/expected byte for byte.
# Suites with other layouts (heap, iotrace) are skipped here.
# PH_GOLDEN_UPDATE=1 rewrites the expected files.
set -u
cd "$(dirname "$0")/../.."
P=${PH_BUILD:-build}/bin/porthole
FIX=${PORTHOLE_FIXTURES:-../shared/fixtures}
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Debian's python3 first (tests/lib/e2e.sh says why).
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$tmp.bin" && ln -sf /usr/bin/python3 "$tmp.bin/python3"
	PATH="$tmp.bin:$PATH"
	trap 'rm -rf "$tmp" "$tmp.bin"' EXIT
fi
for cmdf in tests/golden/*/*/cmd; do
	[ -e "$cmdf" ] || continue
	G=$(dirname "$cmdf")
	name=${G#tests/golden/}
	(cd "$tmp" && rm -rf ./* ./.porthole 2>/dev/null; true)
	P=$(pwd)/$P FIX=$FIX G=$(pwd)/$G TMP=$tmp PORTHOLE_PROJECT_ROOT= \
		PORTHOLE_SESSIONS=0 sh -c "$(cat "$cmdf")" > "$tmp/out" 2>/dev/null
	echo "exit $?" >> "$tmp/out"
	if [ "${PH_GOLDEN_UPDATE:-0}" = 1 ]; then cp "$tmp/out" "$G/expected"; fi
	if cmp -s "$tmp/out" "$G/expected"; then
		passed=$((passed + 1))
		echo "ok $name"
	else
		failed=$((failed + 1))
		echo "FAIL $name"
		diff -u "$G/expected" "$tmp/out" | head -30
	fi
done
echo "[golden] $passed passed, $failed failed"
[ $failed -eq 0 ]
