#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Adds up every "[suite] N passed, N failed" line of a make test run and
# prints the one closing line.  Exits 1 when anything failed or nothing ran.
set -u
results=$1
[ -f "$results" ] || { echo "0 passed, 1 failed"; exit 1; }
awk '/^\[[^]]*\] [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 }
END {
	if (p + f == 0) f = 1
	printf "%d passed, %d failed\n", p, f
	exit f ? 1 : 0
}' "$results"
