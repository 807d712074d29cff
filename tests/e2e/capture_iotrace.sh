#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `porthole capture --iotrace` with the real sample on this machine: the
# iotrace collector records block I/O over the capture's run, the io view
# joins it with the captured events, its findings are merged into the
# capture with source "iotrace" (report tags them [iotrace]) and the view
# is kept as the capture's `io`, spans included (report --html draws them
# as io lanes).  Every number is recomputed here from the recording's CSV
# and checked against `porthole io` over the same window.
#
# Like io_live.sh: a private mount namespace holding
# /tmp/porthole-tracefs.lock (tracefs is machine-wide); without root,
# tracefs or a real disk it fails with the reason.
set -u
. tests/lib/tracefs_ns.sh
enter_tracefs_ns "capture --iotrace" "$@"
. tests/lib/e2e.sh
P="$(cd "$BIN" && pwd)/porthole"
S="$(cd "$BIN" && pwd)/porthole-sample"
T=$E2E_TMP
TR=/sys/kernel/tracing

check "live: tracefs and a real disk are usable" block_io_usable $TR "$T"
instances_before=$(ls $TR/instances 2> /dev/null)

capture() {
	PORTHOLE_PROJECT_ROOT=$T "$P" capture --scenario checkout --iotrace \
		--iotrace-out "$T/rec" --out "$T/cap.json" -- "$S" \
		--scenario checkout --seconds 3 --data-dir "$T/data" \
		> "$T/cap.log" 2>&1 || { cat "$T/cap.log"; return 1; }
	! grep -q 'not recorded\|block I/O:\|never connected' "$T/cap.log" ||
		{ cat "$T/cap.log"; return 1; }
	[ -f "$T/rec/manifest.json" ] && [ -d "$T/rec/ds" ]
}
check "capture --iotrace records the sample and exits 0" capture

cat > "$T/check.py" <<'EOF'
import csv, glob, gzip, json, sys
t_dir = sys.argv[1]
cap = json.load(open(t_dir + "/cap.json"))
io = cap["io"]
ev_path = glob.glob(t_dir + "/.porthole/sessions/*/events.ndjson")[0]
pid = None
for line in open(ev_path):
    o = json.loads(line)
    r = o.get("result")
    if isinstance(r, dict) and "packageName" in r and "protocol" in r:
        pid = r["pid"]
assert pid and io["app"]["pid"] == pid, (io["app"], pid)
w = cap["window"]
assert io["window"] == {"from": w["from"], "to": w["to"]}, (io["window"], w)
assert io["clock"]["alignment"] == "same-clock", io["clock"]
assert io["recording"]["dir"] == t_dir + "/rec", io["recording"]
m = json.load(open(t_dir + "/rec/manifest.json"))
assert m["mode"] == "ftrace", m["mode"]
assert m["ftrace_loss"]["total_lost"] == 0 and \
    io["recording"]["totalLost"] == 0, m["ftrace_loss"]
rows = []
for f in sorted(glob.glob(t_dir + "/rec/ds/ds_*.csv.gz")):
    rows += list(csv.DictReader(gzip.open(f, "rt", newline="")))
def span(r):
    done = int(r["mono_ns"]) / 1e6
    lat = float(r["latency_ms"]) if r["latency_ms"] else 0.0
    return done - lat, done
first, last = w["from"], w["to"]
win = [r for r in rows if span(r)[0] < last + 1 and span(r)[1] >= first]
app = [r for r in win if r["pid"] == str(pid)]
main = [r for r in app if r["tid"] == str(pid)]
q = io["requests"]
assert (q["total"], q["app"], q["mainThread"]) == \
    (len(win), len(app), len(main)), (q, len(win), len(app), len(main))
assert main, ("no main-thread request: the sample's SQLite fsyncs on "
              "its main thread caused no block I/O?", q)
# the findings, merged with the app's own, tagged by source
byid = {f["id"]: f for f in cap["findings"] if f["source"] == "iotrace"}
assert "io-on-main-thread" in byid, cap["findings"]
assert byid["io-on-main-thread"]["count"] == len(main), byid
assert any(f["source"] == "porthole" for f in cap["findings"])
ids = {"io-on-main-thread", "io-slow-request", "io-during-jank",
       "io-lost-events"}
assert ids <= set(byid) | set(cap["quiet"]), (sorted(byid), cap["quiet"])
assert any(n.startswith("block I/O: ") for n in cap["notes"]), cap["notes"]
# the spans: every request of the window, the CSV's latencies
sp = io["spans"]
assert len(sp) == len(win) and io["spansOmitted"] == 0, (len(sp), len(win))
ms = sorted(x["latencyMs"] for x in sp if x.get("mainThread"))
want = sorted(float(r["latency_ms"]) for r in main if r["latency_ms"])
assert len(ms) == len(want) and \
    all(abs(a - b) < 1e-6 for a, b in zip(ms, want)), (ms[:5], want[:5])
assert sum(1 for x in sp if x.get("app")) == len(app)
# the metrics compare diffs, from the same requests
mt = cap["metrics"]
assert (mt["io.appRequests"], mt["io.mainThreadRequests"]) == \
    (len(app), len(main)), (mt, len(app), len(main))
app_lat = [float(r["latency_ms"]) for r in app if r["latency_ms"]]
assert abs(mt["io.appWorstMs"] - max(app_lat)) < 0.001, \
    (mt["io.appWorstMs"], max(app_lat))
# stalls, late frames and main-thread queries with the app's I/O in flight
want = sum(1 for x in io["moments"] if x["appRequests"] > 0 and
           (x["kind"] != "query" or x["mainThread"]))
assert mt["io.appIoMoments"] == want, (mt, io["moments"])
for x in sp:
    assert x["from"] <= x["to"] and x["to"] >= first and \
        x["from"] < last + 1, x
# the same answer as `porthole io` over the same window
o = json.load(open(t_dir + "/io.json"))
assert o["requests"] == q, (o["requests"], q)
assert sorted(f["id"] for f in o["findings"]) == sorted(byid), \
    (o["findings"], sorted(byid))
print(len(win), "requests,", len(app), "by the app,", len(main),
      "on its main thread")
EOF

joined() {
	ev=$(ls "$T"/.porthole/sessions/*/events.ndjson) ||
		{ find "$T" -maxdepth 4; cat "$T/cap.log"; head -c 600 "$T/cap.json"; return 1; }
		from=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["window"]["from"])' "$T/cap.json") &&
		to=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["window"]["to"])' "$T/cap.json") &&
		"$P" io "$T/rec" --events "$ev" --from "$from" --to "$to" \
			--json > "$T/io.json" &&
		python3 "$T/check.py" "$T"
}
check "the capture's io: counts, findings, spans, as porthole io says" joined

reports() {
	"$P" report "$T/cap.json" > "$T/r.txt" &&
		grep -q '^[a-z]*  *\[iotrace\] ' "$T/r.txt" &&
		grep -q '^block I/O: [1-9][0-9]* requests, [1-9][0-9]* by the app' "$T/r.txt" &&
		"$P" report "$T/cap.json" --json > "$T/r.json" &&
		python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); assert r["io"]["spans"]' "$T/r.json" &&
		"$P" report "$T/cap.json" --html "$T/r.html" &&
		python3 - "$T/r.html" "$T/cap.json" <<'EOF'
import json, re, sys
h = open(sys.argv[1]).read()
cap = json.load(open(sys.argv[2]))
devs = {x["device"] for x in cap["io"]["spans"]}
for d in devs:
    assert ">io %s</text>" % d in h, d
assert "[iotrace] " in h
titles = re.findall(r'<title>t=[0-9.]+\.\.[0-9.]+ [A-Z]+ [0-9]+ B [^<]*'
                    r'\(main thread\)</title>', h)
assert titles, "no main-thread io bar"
EOF
}
check "report tags [iotrace], prints the io line, draws io lanes" reports

# Without --iotrace-out the recording is a temporary, removed after.
temporary() {
	PORTHOLE_SESSIONS=0 "$P" capture --scenario checkout --iotrace \
		--out "$T/cap2.json" -- "$S" --scenario checkout --seconds 1 \
		--data-dir "$T/data2" > "$T/cap2.log" 2>&1 ||
		{ cat "$T/cap2.log"; return 1; }
	python3 -c 'import json,sys
c = json.load(open(sys.argv[1]))
assert c["io"]["recording"]["dir"] is None, c["io"]["recording"]
assert c["io"]["requests"]["mainThread"] > 0, c["io"]["requests"]' \
		"$T/cap2.json" &&
		! ls -d /tmp/porthole-capture-*/iotrace 2> /dev/null | grep -q .
}
check "without --iotrace-out: joined from the store, nothing left" temporary
check "tracefs instances are as they were" \
	sh -c "[ \"\$(ls $TR/instances 2> /dev/null)\" = '$instances_before' ]"
finish
