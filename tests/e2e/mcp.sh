#!/bin/sh
# mcp.sh: `porthole mcp` driven by the official MCP SDK (tests/node/
# mcp.test.mjs) against a running porthole-sample; one check per node test.
. tests/lib/e2e.sh
PH_SUITE=${PH_SUITE:-e2e-mcp}

check "sdk installed (make deps)" test -d node_modules/@modelcontextprotocol/sdk
PH_BIN=$BIN node --test --test-reporter=tap tests/node/mcp.test.mjs \
	> "$E2E_TMP/tap" 2>&1
# "ok N - name" / "not ok N - name" at the top level: one check each.
grep -E '^(not )?ok [0-9]+ - ' "$E2E_TMP/tap" > "$E2E_TMP/results"
[ -s "$E2E_TMP/results" ] || { cat "$E2E_TMP/tap" | tail -30; \
	check "node suite ran" false; }
while IFS= read -r line; do
	name=${line#*- }
	case $line in
	"not ok"*) grep -F -A30 -- "$line" "$E2E_TMP/tap" > "$E2E_TMP/why"
		check "$name" sh -c "cat '$E2E_TMP/why'; false" ;;
	*) check "$name" true ;;
	esac
done < "$E2E_TMP/results"
finish
