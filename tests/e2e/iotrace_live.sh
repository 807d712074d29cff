#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of `porthole iotrace record` on this machine, for real:
# dd with O_DIRECT on a file on a real block device, every request dd
# caused found in the CSV with a positive latency (binary and text
# readers), tracefs exactly as before after a SIGTERM mid-run, tracefs
# mounted and unmounted when it was not there, snapshot-only when tracefs
# cannot be used, and CPU percentages that are real.
#
# It runs in a private mount namespace (unshare -m), so mounting and
# unmounting tracefs here never touches the machine's own mounts; tracefs
# itself, its instances and switches, are the kernel's and shared, so it
# holds /tmp/porthole-tracefs.lock while it runs, and when the state
# differs it looks again once, in case another tracer changed the top
# level meanwhile.
# When tracefs or root is not available every check fails with the
# reason: a live test never passes by not running.
set -u
. tests/lib/tracefs_ns.sh
enter_tracefs_ns "live iotrace" "$@"
. tests/lib/e2e.sh
P="$(cd "$BIN" && pwd)/porthole"
T=$E2E_TMP
TR=/sys/kernel/tracing

# Can tracefs be used at all?  The answer is a check of its own, and the
# reason is printed when it cannot.
usable() {
	[ -e $TR/trace_pipe ] || mount -t tracefs nodev $TR ||
		{ echo "cannot mount tracefs at $TR"; return 1; }
	[ -e $TR/events/block/block_rq_issue/enable ] ||
		{ echo "no block tracepoints in $TR/events/block"; return 1; }
	mkdir $TR/instances/porthole-e2e-probe 2>/dev/null &&
		rmdir $TR/instances/porthole-e2e-probe ||
		{ echo "cannot make tracefs instances"; return 1; }
	src=$(findmnt -n -o SOURCE --target "$T")
	case $src in
	/dev/*) ;;
	*) echo "$T is on '$src', not a real block device"; return 1 ;;
	esac
}
check "live: tracefs and a real disk are usable" usable

# Everything record could touch, at the top level, and every instance.
# (POSIX sh has no local variables: names here are snap's own.)
snap() {
	for snap_f in trace_clock buffer_size_kb buffer_subbuf_size_kb \
		tracing_on set_event current_tracer tracing_cpumask \
		set_event_pid trace_options; do
		printf '%s: %s\n' $snap_f \
			"$(cat $TR/$snap_f 2>/dev/null | tr '\n' ' ')"
	done
	for snap_f in $TR/options/* $TR/events/enable $TR/events/block/enable \
		$TR/events/block/*/enable $TR/events/block/*/filter; do
		printf '%s: %s\n' "${snap_f#$TR/}" \
			"$(cat "$snap_f" | tr '\n' ' ')"
	done
	ls $TR/instances
}

# stop PID: ends a recorder that a failing check leaves behind
stop() {
	kill -INT "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 1
}

# wait_tracing PID LOG: until record says it is tracing (at most 10 s).
# (A new instance's tracing_on is 1 before record has set anything up.)
wait_tracing() {
	for _ in $(seq 100); do
		grep -q 'info: recording block I/O' "$2" && return 0
		sleep 0.1
	done
	echo "record $1 never started tracing"
	cat "$2"
	return 1
}

# The rows of a recording that touch FILE's blocks, and what dd did: a
# request dd caused is one whose sectors lie in the file's extents.
cat > "$T/dd_rows.py" <<'EOF'
import csv, glob, gzip, json, re, subprocess, sys
import os
rec, path, dev, wpid, rpid, writes = sys.argv[1:7]
wpid, rpid, writes = int(wpid), int(rpid), int(writes)
# Requests name the whole disk: a partition's sectors start further on.
sysdev = os.path.realpath("/sys/dev/block/" + dev)
start = 0
if os.path.exists(sysdev + "/partition"):
    start = int(open(sysdev + "/start").read())
    dev = open(os.path.dirname(sysdev) + "/dev").read().strip()
# filefrag -v: "File size of F is N (B blocks of S bytes)", then
# "   0:        0..     511:   12345..  12856:    512: ..."
out = subprocess.run(["filefrag", "-v", path], capture_output=True,
                     text=True, check=True).stdout
per = int(re.search(r"blocks of (\d+) bytes", out)[1]) // 512
ext = []
for line in out.splitlines():
    m = re.match(r"\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.\s*(\d+):", line)
    if m:
        ext.append((start + int(m[1]) * per, start + (int(m[2]) + 1) * per))
assert ext, "no extents for " + path
def inside(s, n):
    return any(a <= s and s + n <= b for a, b in ext)
rows = []
for f in glob.glob(rec + "/ds/ds_*.csv.gz"):
    with gzip.open(f, "rt", newline="") as fh:
        rows += list(csv.DictReader(fh))
mine = [r for r in rows if r["device"] == dev and r["sector"] and
        inside(int(r["sector"]), int(r["size"]) // 512)]
m = json.load(open(rec + "/manifest.json"))
def why(what):
    by = {}
    for r in rows:
        k = (r["command"], r["operation"], r["pid"] in (str(wpid), str(rpid)))
        by[k] = by.get(k, 0) + 1
    return (what, "rows", len(rows), "in extents", len(mine), "extents", ext,
            "by command", by, "pairing", m["pairing"], "parse",
            m.get("parse"), "loss", m["ftrace_loss"])
w = [r for r in mine if r["operation"] == "write"]
rd = [r for r in mine if r["operation"] == "read"]
assert len(w) == writes, why(("writes", len(w), writes))
assert all(int(r["size"]) == 4096 for r in w), "write sizes"
assert len({int(r["sector"]) for r in w}) == writes, "a block twice"
assert sum(int(r["size"]) for r in rd) == writes * 4096, \
    ("read bytes", sum(int(r["size"]) for r in rd))
for r in w + rd:
    assert r["latency_ms"] and float(r["latency_ms"]) > 0, r
    assert r["request_id"] and r["mono_ns"], r
by_dd = sum(1 for r in w if int(r["pid"]) == wpid and r["command"] == "dd")
by_dd += sum(1 for r in rd if int(r["pid"]) == rpid and r["command"] == "dd")
assert by_dd >= 0.9 * len(w + rd), ("issued by dd", by_dd, len(w + rd))
assert m["mode"] == "ftrace", m["mode"]
assert m["tracefs"]["state_restored"] is True
assert m["ftrace_loss"]["total_lost"] == 0, m["ftrace_loss"]
assert len(m["ftrace_loss"]["per_cpu"]) >= 1
if "binary" in m["tracefs"]["reader"]:
    # the kernel's count of events handed to the reader, beside the
    # reader's count of events it decoded: nothing fell between them
    fl = m["ftrace_loss"]
    assert fl["kernel_read_events"] == fl["events_decoded"], fl
assert m["pairing"]["paired"] >= len(w + rd)
print(len(w), len(rd), by_dd, m["tracefs"]["reader"])
EOF

# live_dd TAG OPTIONS...: record while dd overwrites 500 blocks of a file
# with O_DIRECT, then reads them back
live_dd() {
	tag=$1
	shift
	out=$T/$tag ddf=$T/$tag.dd
	# Allocated and on disk before recording, so the recording holds
	# dd's overwrites alone, not the filesystem's allocation for them.
	dd if=/dev/zero of="$ddf" bs=4k count=500 2>/dev/null && sync "$ddf" ||
		return 1
	snap > "$T/$tag.before"
	"$P" iotrace record --out "$out" --no-snapshots "$@" > "$T/$tag.log" 2>&1 &
	rp=$!
	wait_tracing $rp "$T/$tag.log" || stop $rp || return 1
	dd if=/dev/zero of="$ddf" bs=4k count=500 oflag=direct conv=notrunc \
		2>/dev/null &
	wp=$!
	wait $wp || stop $rp || return 1
	dd if="$ddf" of=/dev/null bs=64k iflag=direct 2>/dev/null &
	dp=$!
	wait $dp || stop $rp || return 1
	sleep 0.3
	kill -INT $rp
	wait $rp || { cat "$T/$tag.log"; return 1; }
	snap > "$T/$tag.after"
	diff -u "$T/$tag.before" "$T/$tag.after" || return 1
	dev=$(findmnt -n -o MAJ:MIN --target "$ddf" | tr -d ' ')
	python3 "$T/dd_rows.py" "$out" "$ddf" "$dev" $wp $dp 500
}
check "record: every request dd caused, positive latency (binary reader)" \
	live_dd binary
check "record --text: the same through trace_pipe's text" live_dd text --text

sigterm() {
	sigterm_once && return 0
	echo "(state differed; once more, in case another tracer moved it)"
	sigterm_once
}

sigterm_once() {
	rm -rf "$T/term"
	snap > "$T/term.before"
	( while :; do
		dd if=/dev/zero of="$T/term.dd" bs=4k count=64 oflag=direct \
			2>/dev/null
	done ) &
	load=$!
	"$P" iotrace record --out "$T/term" > "$T/term.log" 2>&1 &
	rp=$!
	wait_tracing $rp "$T/term.log" || { kill $load; stop $rp; return 1; }
	sleep 1.5
	kill -TERM $rp
	wait $rp
	st=$?
	kill $load
	wait $load 2>/dev/null
	snap > "$T/term.after"
	diff -u "$T/term.before" "$T/term.after" || return 1
	[ $st -eq 0 ] || { echo "exit status $st"; cat "$T/term.log"; return 1; }
	[ ! -e $TR/instances/porthole-$rp ] || return 1
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
assert m["mode"] == "ftrace" and m["tracefs"]["state_restored"], m
assert m["rows_written"]["ds"] > 0, m["rows_written"]
assert m["tracefs"]["instance"] == "porthole-" + sys.argv[2]' \
		"$T/term/manifest.json" $rp
}
check "SIGTERM mid-run: tracefs exactly as before, manifest written" sigterm

unmounted() {
	umount $TR || { echo "cannot unmount tracefs in the namespace"; return 1; }
	"$P" iotrace record --seconds 1 --no-snapshots --out "$T/mnt" > /dev/null
	st=$?
	if findmnt $TR > /dev/null; then
		echo "tracefs left mounted"
		return 1
	fi
	mount -t tracefs nodev $TR
	[ $st -eq 0 ] &&
		grep -q '"mounted_by_porthole": true' "$T/mnt/manifest.json" &&
		grep -q '"mode": "ftrace"' "$T/mnt/manifest.json"
}
check "tracefs not mounted: record mounts it, then unmounts it" unmounted

snapshot_only() {
	"$P" iotrace record --seconds 1 --tracefs /no/tracefs/here \
		--out "$T/snap" > "$T/snap.out" 2> "$T/snap.err" || return 1
	grep -q 'snapshots only' "$T/snap.err" &&
		grep -q '^mode       snapshots only: /no/tracefs/here' "$T/snap.out" &&
		grep -q '"mode": "snapshot-only"' "$T/snap/manifest.json" &&
		grep -q '"snapshot_only_reason": "/no/tracefs/here is not' \
			"$T/snap/manifest.json" &&
		[ -z "$(ls "$T/snap/ds")" ] &&
		[ "$(ls "$T/snap/process" | wc -l)" -eq 2 ] &&
		[ "$(ls "$T/snap/system_spec")" = "cpu_info.json
disk_info.json
memory_info.json
os_info.json" ]
}
check "no usable tracefs: snapshots only, and it says why" snapshot_only

# A spinning shell and a sleeping one, recorded together: the spinner's
# share depends on what else the machine runs (other sessions' builds can
# leave it a fifth of a CPU), so it is judged against the sleeper's, taken
# in the same snapshots, not against a fixed figure.
cpu_pct() {
	( while :; do :; done ) &
	spin=$!
	sleep 60 &
	idle=$!
	"$P" iotrace record --seconds 6 --out "$T/cpu" > /dev/null 2>&1
	st=$?
	kill $spin $idle
	[ $st -eq 0 ] || return 1
	python3 -c 'import csv, glob, gzip, sys
files = sorted(glob.glob(sys.argv[1] + "/process/process_*.csv.gz"))
assert len(files) == 2, files
first = list(csv.DictReader(gzip.open(files[0], "rt")))
last = list(csv.DictReader(gzip.open(files[-1], "rt")))
assert all(r["cpu_5s"] == "" for r in first), "the first has seen no interval"
spin = [r for r in last if r["pid"] == sys.argv[2]]
idle = [r for r in last if r["pid"] == sys.argv[3]]
assert spin and idle, "the spinning or the sleeping shell is missing"
c, z = float(spin[0]["cpu_5s"]), float(idle[0]["cpu_5s"])
assert 5 < c <= 101, c
assert z < 1 and c > 10 * z, (c, z)
assert float(spin[0]["cpu_1h"]) > 5, spin[0]
assert spin[0]["status"] == "running", spin[0]
assert idle[0]["status"] == "sleeping", idle[0]
print(c, z)' "$T/cpu" $spin $idle
}
check "process snapshots: CPU percentages over what was seen" cpu_pct
finish
