#!/bin/sh
# End-to-end test of the host's `io` view on this machine, for real:
# `porthole iotrace record` runs while `porthole capture` runs
# porthole-sample (its SQLite file on a real disk), then `porthole io`
# joins the recording with the session the capture wrote, and every
# number it gives is recomputed here from the CSV and the session file
# (tests/golden/io/ and tests/unit/test_host_io.c do the same from fixed
# input).
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
