#!/bin/sh
# sessions.sh: sessions on disk through hosts that come and go: a host
# that attaches late, one that restarts, and what they leave in meta.json
# (tests/node/sessions.test.mjs, the official MCP SDK as the client, one
# check per node test).
. tests/lib/e2e.sh
PH_SUITE=${PH_SUITE:-e2e-sessions}
T=$E2E_TMP

check "sdk installed (make deps)" test -d node_modules/@modelcontextprotocol/sdk
PH_BIN=$BIN node --test --test-reporter=tap tests/node/sessions.test.mjs \
	> "$T/tap" 2>&1
grep -E '^(not )?ok [0-9]+ - ' "$T/tap" > "$T/results"
[ -s "$T/results" ] || { tail -30 "$T/tap"; check "node suite ran" false; }
while IFS= read -r line; do
	name=${line#*- }
	case $line in
	"not ok"*) grep -F -A30 -- "$line" "$T/tap" > "$T/why"
		check "$name" sh -c "cat '$T/why'; false" ;;
	*) check "$name" true ;;
	esac
done < "$T/results"

finish
