#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# mcp.sh: `porthole mcp` driven by the official MCP SDK (tests/node/
# mcp.test.mjs) against a running porthole-sample, one check per node
# test; by the MCP Inspector's CLI (@modelcontextprotocol/inspector,
# pinned in package.json); and the device paths of system_context,
# porthole_connect and the system-trace tools (a fake adb,
# tests/e2e/mcp_adb.py).
. tests/lib/e2e.sh
PH_SUITE=${PH_SUITE:-e2e-mcp}
P="$(pwd)/$BIN/porthole"
S="$(pwd)/$BIN/porthole-sample"
T=$E2E_TMP

check "sdk installed (make deps)" test -d node_modules/@modelcontextprotocol/sdk
# Its system-trace test records with tracefs, which is machine-wide: one
# live trace at a time (tests/e2e/trace_record.sh).
PH_BIN=$BIN flock /tmp/porthole-tracefs.lock \
	node --test --test-reporter=tap tests/node/mcp.test.mjs > "$T/tap" 2>&1
tap_checks "mcp.test.mjs" "$T/tap" $?

# --- the tools' windows and parameters (tests/node/mcp_tools.test.mjs) -----
# Its own sample and server; one check per node test, as above.
PH_BIN=$BIN node --test --test-reporter=tap tests/node/mcp_tools.test.mjs \
	> "$T/tap-tools" 2>&1
tap_checks "mcp_tools.test.mjs" "$T/tap-tools" $?

# --- the MCP Inspector's CLI -----------------------------------------------
# Against `porthole mcp --no-link` reading a recorded checkout session from
# disk (tests/golden/report/checkout.ndjson, the sample's own recording).
INSP=node_modules/.bin/mcp-inspector
mkdir -p "$T/insp/.porthole/sessions/rec"
cp tests/golden/report/checkout.ndjson "$T/insp/.porthole/sessions/rec/events.ndjson"
check "inspector installed (make deps)" test -x "$INSP"
"$INSP" --cli -e PORTHOLE_PROJECT_ROOT="$T/insp" -e PORTHOLE_SESSIONS=0 \
	"$P" mcp --no-link --method tools/list > "$T/insp.list" 2> "$T/insp.err"
check "inspector: tools/list names every tool, each with a schema" python3 -c '
import json, sys
tools = json.load(open(sys.argv[1]))["tools"]
names = {t["name"] for t in tools}
want = set(sys.argv[2].split())
assert want <= names, want - names
assert all(t["inputSchema"]["type"] == "object" for t in tools)
print(len(tools), "tools")' "$T/insp.list" "findings recompositions \
semantics_tree accessibility nav_state state inflight frames blocking logs \
timeline what_was_happening io_summary io_requests system_context \
capture_system_trace \
system_trace_start system_trace_snapshot system_trace_stop ask_system_trace \
save_moment open_timeline porthole_status porthole_connect setup screenshot"
"$INSP" --cli -e PORTHOLE_PROJECT_ROOT="$T/insp" -e PORTHOLE_SESSIONS=0 \
	"$P" mcp --no-link --method tools/call --tool-name findings \
	--tool-arg since=all --tool-arg detail=normal > "$T/insp.call" 2>> "$T/insp.err"
check "inspector: tools/call findings answers from the session on disk" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["isError"] is False, r
t = r["content"][0]["text"]
assert "answered from session rec on disk" in t, t
p = json.loads(t[t.index("\n{") + 1:])
ids = [f["id"] for f in p["findings"]]
assert "db-on-main-thread" in ids and "http-failed" in ids, ids
print(ids)' "$T/insp.call"

# --- the device paths: a fake adb --------------------------------------------
# The app in its own network namespace, as a phone is: only the fake adb's
# forward reaches it, so the server takes the device path.
unshare -n sh -c "ip link set lo up && exec '$S' --scenario checkout --seconds 120 --app-id e2e.mcpadb --data-dir '$T/adbd'" > /dev/null 2>&1 &
APP=$!
n=100
while [ $n -gt 0 ] && ! nsenter -t $APP -n cat /proc/net/unix 2> /dev/null |
	grep -q '@porthole.e2e.mcpadb'; do
	sleep 0.05
	n=$((n - 1))
done
mkdir -p "$T/adbroot" "$T/device"
PATH="$(pwd)/tests/e2e/fake-adb:$PATH" FAKE_ADB_LOG="$T/adb.log" \
	FAKE_ADB_PID=$APP FAKE_ADB_DEVICE="$T/device" \
	FAKE_ADB_PACKAGES="e2e.mcpadb com.example.nolauncher" \
	FAKE_ADB_TRACE="$(realpath "$(fixture perfetto/simple_perfetto_2026-03-05_00-54_1338.pftrace)")" \
	python3 tests/e2e/mcp_adb.py "$P" e2e.mcpadb "$T/adbroot" > "$T/adb.results" 2>&1
kill $APP 2> /dev/null
wait $APP 2> /dev/null
# A failed run may leave a fake ring session behind: end it.
for f in "$T"/device/.perfetto-sessions/*; do
	[ -f "$f" ] && kill "$(cat "$f")" 2> /dev/null
done
grep -E '^(not )?ok ' "$T/adb.results" > "$T/adb.checks"
[ -s "$T/adb.checks" ] || { tail -30 "$T/adb.results"; check "mcp_adb.py ran" false; }
while IFS= read -r line; do
	case $line in
	"not ok"*) name=${line#not ok }
		check "${name%%: *}" sh -c "tail -12 '$T/adb.log'; echo \"\$1\"; false" _ "$line" ;;
	*) check "${line#ok }" true ;;
	esac
done < "$T/adb.checks"
grep -q Traceback "$T/adb.results" && check "mcp_adb.py finished" sh -c "cat '$T/adb.results'; false"
finish
