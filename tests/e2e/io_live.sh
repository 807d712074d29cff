#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End-to-end test of the host's `io` view on this machine, for real:
# `porthole iotrace record` runs while `porthole capture` runs
# porthole-sample (its SQLite file on a real disk), then `porthole io`
# joins the recording with the session the capture wrote, and every
# number it gives is recomputed here from the CSV and the session file
# (tests/golden/io/ and tests/unit/test_host_io.c do the same from fixed
# input); then `porthole iotrace attach` adds the recording to the
# session as io events, checked against the CSV, and `report` over the
# session gives the view's io findings.
#
# Like tests/e2e/iotrace_live.sh it runs in a private mount namespace
# holding /tmp/porthole-tracefs.lock (tracefs is machine-wide), and when
# root, tracefs or a real disk is missing it fails with the reason: a
# live test never passes by not running.
set -u
. tests/lib/tracefs_ns.sh
enter_tracefs_ns "live io view" "$@"
. tests/lib/e2e.sh
P="$(cd "$BIN" && pwd)/porthole"
S="$(cd "$BIN" && pwd)/porthole-sample"
T=$E2E_TMP
TR=/sys/kernel/tracing

check "live: tracefs and a real disk are usable" block_io_usable $TR "$T"

# The recording and the session: record, capture the sample, stop.
record_and_capture() {
	"$P" iotrace record --no-snapshots --out "$T/rec" > "$T/rec.log" 2>&1 &
	rp=$!
	for _ in $(seq 100); do
		grep -q 'info: recording block I/O' "$T/rec.log" && break
		sleep 0.1
	done
	grep -q 'info: recording block I/O' "$T/rec.log" ||
		{ kill -INT $rp; wait $rp; cat "$T/rec.log"; return 1; }
	PORTHOLE_PROJECT_ROOT=$T "$P" capture --scenario checkout \
		--out "$T/cap.json" -- "$S" --scenario checkout --seconds 3 \
		--data-dir "$T/data" > "$T/cap.log" 2>&1
	st=$?
	sleep 0.3 # the last completions, then stop
	kill -INT $rp
	wait $rp || { cat "$T/rec.log"; return 1; }
	[ $st -eq 0 ] || { cat "$T/cap.log"; return 1; }
	ls "$T"/.porthole/sessions/*/events.ndjson > /dev/null
}
check "record block I/O while capture runs porthole-sample" record_and_capture

cat > "$T/check.py" <<'EOF'
import csv, glob, gzip, json, sys
t_dir = sys.argv[1]
io = json.load(open(t_dir + "/io.json"))
ev_path = glob.glob(t_dir + "/.porthole/sessions/*/events.ndjson")[0]
events, pid = [], None
for line in open(ev_path):
    o = json.loads(line)
    if "event" in o:
        events.append(o)
    elif isinstance(o.get("result"), dict):
        r = o["result"]
        if "packageName" in r and "protocol" in r:
            pid = r["pid"]
        events += r.get("events", [])
first = min(e["t"] for e in events)
last = max(e["t"] for e in events)
assert io["app"]["pid"] == pid, (io["app"], pid)
assert io["window"] == {"from": first, "to": last}, (io["window"], first, last)
# one machine, one boot: the alignment is checked, not assumed
assert io["clock"]["alignment"] == "same-clock", io["clock"]
assert abs(io["clock"]["offsetDiffNs"]) < 50_000_000, io["clock"]
m = json.load(open(t_dir + "/rec/manifest.json"))
assert m["ftrace_loss"]["total_lost"] == 0, m["ftrace_loss"]
assert io["recording"]["totalLost"] == 0
# the rows, on the app's clock (t = mono_ns / 1e6), in the window
rows = []
for f in sorted(glob.glob(t_dir + "/rec/ds/ds_*.csv.gz")):
    rows += list(csv.DictReader(gzip.open(f, "rt", newline="")))
def span(r):
    done = int(r["mono_ns"]) / 1e6
    lat = float(r["latency_ms"]) if r["latency_ms"] else 0.0
    return done - lat, done
win = [r for r in rows if span(r)[0] < last + 1 and span(r)[1] >= first]
app = [r for r in win if r["pid"] == str(pid)]
main = [r for r in app if r["tid"] == str(pid)]
q = io["requests"]
assert q["total"] == len(win), (q, len(win))
assert q["app"] == len(app), (q, len(app))
assert q["mainThread"] == len(main), (q, len(main))
# the sample opens its database on the main thread: SQLite's fsyncs
# there are the main thread's own block requests
assert main, ("no main-thread request: the sample's db_open wrote "
              "nothing the main thread issued?", q)
f = {x["id"]: x for x in io["findings"]}
assert "io-on-main-thread" in f, io["findings"]
mf = f["io-on-main-thread"]
assert mf["source"] == "iotrace" and mf["count"] == len(main), mf
# the queries they ran inside: the sample's main-thread db_ends, each
# request within 1 ms of one of them (whole-ms times), counted once
dbs = {e["data"]["id"]: e for e in events if e["event"] == "db_end" and
       (e["data"].get("mainThread") is True or
        e["data"].get("onMainThread") == "true" or
        e["data"].get("thread") == "main")}
def inside(r):
    s = span(r)[0]
    for e in dbs.values():
        el = int(e["data"].get("elapsedMs") or 0)
        if e["t"] - el - 1 <= s <= e["t"] + 1:
            return True
    return False
ev = mf["evidence"]
assert ev["queries"], ev
for x in ev["queries"]:
    assert x["id"] in dbs, (x, sorted(dbs))
assert sum(x["requests"] for x in ev["queries"]) == \
    sum(1 for r in main if inside(r)), (ev, len(main))
assert sum(x["requests"] for x in ev["queries"]) + ev["outsideQueries"] == \
    len(main), ev
# the moments list those queries with their requests
mq = [x for x in io["moments"] if x["kind"] == "query" and x["mainThread"]
      and x["mainThreadRequests"]]
assert {x["id"] for x in mq} == {x["id"] for x in ev["queries"]}, (mq, ev)
# the wire events: one per app request, with the CSV's numbers
lines = [json.loads(l) for l in open(t_dir + "/io.ndjson")]
assert len(lines) == len(app), (len(lines), len(app))
want = sorted((int(r["request_id"]), float(r["latency_ms"])) for r in app
              if r["request_id"])
got = sorted((e["data"]["requestId"], e["data"]["latencyMs"]) for e in lines
             if "requestId" in e["data"])
assert want == got, (want[:5], got[:5])
for e in lines:
    assert e["event"] == "io" and e["seq"] == -1 and e["data"]["pid"] == pid
    assert e["data"]["op"] in ("read", "write", "flush", "discard", "other")
print(len(win), "requests,", len(app), "by the app,", len(main),
      "on its main thread, in", [x["id"] for x in ev["queries"]])
EOF

joined() {
	PORTHOLE_PROJECT_ROOT=$T "$P" io "$T/rec" --json > "$T/io.json" &&
		PORTHOLE_PROJECT_ROOT=$T "$P" io "$T/rec" --ndjson \
			> "$T/io.ndjson" &&
		PORTHOLE_PROJECT_ROOT=$T "$P" io "$T/rec" > "$T/io.txt" &&
		grep -q '^  clock      one clock' "$T/io.txt" &&
		python3 "$T/check.py" "$T"
}
check "io: the app's requests, its main thread's inside its queries" joined

# attach: the same recording added to the session as io events, read
# back from events.ndjson and checked against the CSV; the findings
# engine over the session then has the view's io findings.
cat > "$T/attach.py" <<'EOF'
import csv, glob, gzip, json, sys
t_dir = sys.argv[1]
io = json.load(open(t_dir + "/io.json"))
ev_path = glob.glob(t_dir + "/.porthole/sessions/*/events.ndjson")[0]
lines = [json.loads(l) for l in open(ev_path)]
ios = [e for e in lines if e.get("event") == "io"]
marks = [e for e in lines if e.get("event") == "io_recording"]
assert len(marks) == 1, marks
m = marks[0]["data"]
assert marks[0]["seq"] == -1 and m["alignment"] == "same-clock", m
assert m["totalLost"] == 0 and m["pid"] == io["app"]["pid"], m
# every request of the window: the app's and other processes' (the
# sample's run is far below the default cap)
first, last = io["window"]["from"], io["window"]["to"]
assert marks[0]["t"] == first and m["durationMs"] == last - first, m
rows = []
for f in sorted(glob.glob(t_dir + "/rec/ds/ds_*.csv.gz")):
    rows += list(csv.DictReader(gzip.open(f, "rt", newline="")))
def span(r):
    done = int(r["mono_ns"]) / 1e6
    lat = float(r["latency_ms"]) if r["latency_ms"] else 0.0
    return done - lat, done
win = [r for r in rows if span(r)[0] < last + 1 and span(r)[1] >= first]
assert len(ios) == len(win) == io["requests"]["total"], \
    (len(ios), len(win), io["requests"])
assert m["requests"] == len(win) and m["added"] == len(win), m
assert m["leftOut"] == 0 and m["already"] == 0, m
# each request once, with the CSV's request id and latency, and its
# issue time to the ns (t its whole ms)
want = sorted((int(r["request_id"]), float(r["latency_ms"])) for r in win
              if r["request_id"] and r["latency_ms"])
got = sorted((e["data"]["requestId"], e["data"]["latencyMs"]) for e in ios
             if "requestId" in e["data"] and "latencyMs" in e["data"])
assert want == got, (want[:5], got[:5])
by_id = {int(r["request_id"]): r for r in win if r["request_id"]}
for e in ios:
    d = e["data"]
    assert e["seq"] == -1 and e["t"] == int(d["issueMs"] // 1), e
    if "requestId" in d and "latencyMs" in d:
        r = by_id[d["requestId"]]
        issue_ns = int(r["mono_ns"]) - round(float(r["latency_ms"]) * 1e6)
        assert round(d["issueMs"] * 1e6) == issue_ns, (d, r)
        assert d["pid"] == int(r["pid"]) and d["comm"] == r["command"], (d, r)
app = [e for e in ios if e["data"].get("pid") == io["app"]["pid"]]
assert len(app) == io["requests"]["app"], (len(app), io["requests"])
print(len(ios), "io events,", len(app), "the app's")
EOF
attached() {
	sid=$(basename "$(dirname "$(ls "$T"/.porthole/sessions/*/events.ndjson)")")
	PORTHOLE_PROJECT_ROOT=$T "$P" iotrace attach "$sid" "$T/rec" \
		> "$T/attach.txt" || { cat "$T/attach.txt"; return 1; }
	grep -q '^  clock      one clock' "$T/attach.txt" &&
		grep -q '^  added      [0-9]* io events' "$T/attach.txt" &&
		python3 "$T/attach.py" "$T"
}
check "iotrace attach: the window's requests in the session, as the CSV has them" attached

again() {
	ev=$(ls "$T"/.porthole/sessions/*/events.ndjson)
	before=$(wc -c < "$ev")
	PORTHOLE_PROJECT_ROOT=$T "$P" iotrace attach "$(dirname "$ev")" \
		"$T/rec" > "$T/attach2.txt" || return 1
	cat "$T/attach2.txt"
	grep -q '^  added      nothing' "$T/attach2.txt" &&
		[ "$(wc -c < "$ev")" -eq "$before" ]
}
check "iotrace attach: a second attach adds nothing" again

reported() {
	ev=$(ls "$T"/.porthole/sessions/*/events.ndjson)
	"$P" report "$ev" --json > "$T/report.json" &&
		"$P" report "$ev" > "$T/report.txt" &&
		grep -q '\[iotrace\]' "$T/report.txt" &&
		python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
io = json.load(open(sys.argv[2]))
got = {f["id"]: f for f in r["findings"] if f["source"] == "iotrace"}
want = {f["id"]: f for f in io["findings"]}
# the same judgement: ids, counts, windows, titles and evidence
assert got == want, (sorted(got), sorted(want))
assert "io-on-main-thread" in got, sorted(got)
q = [x for x in r["quiet"] if x.startswith("io-")]
assert sorted(q) == sorted(io["quiet"]), (q, io["quiet"])
print(sorted(got), "quiet", q)' "$T/report.json" "$T/io.json"
}
check "report over the session: the io findings, as porthole io gives them" reported

# The same recording said to come from another boot: moved by the wall
# clock, it no longer overlaps the session, and the command says so.
other_boot() {
	mkdir -p "$T/rec2" && cp -r "$T/rec/ds" "$T/rec2/" &&
		python3 -c 'import json, sys
m = json.load(open(sys.argv[1] + "/rec/manifest.json"))
m["clock"]["mono_to_real_offset_ns"] += 3600 * 10**9
json.dump(m, open(sys.argv[1] + "/rec2/manifest.json", "w"))' "$T" || return 1
	PORTHOLE_PROJECT_ROOT=$T "$P" io "$T/rec2" --json > "$T/io2.json"
	[ $? -eq 2 ] || { echo "expected exit 2"; return 1; }
	python3 -c 'import json, sys
io = json.load(open(sys.argv[1]))
assert io["clock"]["alignment"] == "wall-clock", io["clock"]
assert abs(io["clock"]["shiftNs"] - 3600 * 10**9) < 50 * 10**6, io["clock"]
assert io["requests"]["total"] == 0, io["requests"]
assert any("does not overlap" in n for n in io["notes"]), io["notes"]' \
		"$T/io2.json"
}
check "io: a recording of another boot is aligned by wall clock" other_boot
finish
