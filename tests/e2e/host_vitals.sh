#!/bin/sh
# host_vitals.sh: what the vitals say matches the app (docs/findings.md):
# every main-thread query is reported, the launch's own apart, with the
# precision the agent timed it at.
. tests/lib/e2e.sh
PH_SUITE=${PH_SUITE:-e2e-host_vitals}
P="$(pwd)/$BIN/porthole"
S="$(pwd)/$BIN/porthole-sample"
T=$E2E_TMP

# The clean scenario opens and migrates its database on the main thread
# while it launches, and nothing else.
(cd "$T" && "$P" capture --scenario clean --out "$T/clean.json" -- "$S" \
	--scenario clean --seconds 3 --app-id "e2e.vitals.clean.$$" \
	--data-dir "$T/d1" > /dev/null 2>&1)
"$P" report "$T/clean.json" > "$T/clean.txt" 2>&1
check "clean: the launch's main-thread queries are a finding" \
	grep -q "^error    [0-9]* database queries ran on the main thread while the app launched" "$T/clean.txt"
check "clean: keyed apart from the rest" \
	grep -q '"key":"db-on-main-thread:launch"' "$T/clean.json"
check "clean: compare's count and the findings agree" sh -c \
	"grep -q '\"db.mainThread\":4' $T/clean.json && grep -q '\"duringLaunch\"\\|\"launch\":true' $T/clean.json"

# The checkout's planted query on the main thread takes well under 1 ms.
(cd "$T" && "$P" capture --scenario checkout --out "$T/co.json" -- "$S" \
	--scenario checkout --seconds 3 --app-id "e2e.vitals.co.$$" \
	--data-dir "$T/d2" > /dev/null 2>&1)
"$P" report "$T/co.json" > "$T/co.txt" 2>&1
check "checkout: a sub-millisecond query keeps its precision" \
	grep -Eq "^         worst: 0\.[0-9][0-9] ms: SELECT sum\(qty \* price_cents\)" "$T/co.txt"
check "checkout: the planted query and the launch's are two findings" sh -c \
	"[ \$(grep -c 'database quer.* ran on the main thread' $T/co.txt) -eq 2 ]"

finish
