#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs-check.sh [RESULTS]: the README and docs/ are a manual, in the
# present tense; how they came to be lives in git log.  Fails on a phrase
# that narrates the project's history (numbered sessions or rounds of
# work, "previously", "used to", "before this change", "was reported
# as"), naming the file and line, and appends "[docs] N passed, N failed"
# to RESULTS when given.
set -u
results=${1:-/dev/null}
phrases='session [0-9]|round [0-9]|previously|(^|[^a-z])used to([^a-z]|$)|before this change|was reported as'
passed=0
failed=0
for f in README.md docs/*.md; do
	if grep -inE "$phrases" "$f" > /dev/null; then
		grep -inE "$phrases" "$f" | sed "s|^|$f:|; s|\$| (history: say what it does now)|"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
done
echo "[docs] $passed passed, $failed failed" | tee -a "$results"
[ $failed -eq 0 ]
