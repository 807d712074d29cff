#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `porthole capture --systrace` with the app on a device: perfetto over
# adb (src/host/perfetto.c), started before the command and stopped after
# it, pulled, its clock converted through the trace's clock snapshots onto
# the app's, and its answers merged like the tracefs path's.
#
# The "device" is the real sample in its own network namespace, reached
# only through the fake adb (tests/e2e/fake-adb, first on PATH), whose
# perfetto hands back $FAKE_ADB_TRACE.  That trace is written here for
# the sample's pid: a Perfetto protobuf on BOOTTIME, a minute ahead of
# MONOTONIC (the device slept), with snapshots of both clocks and the
# main thread blocked in D and waiting for a CPU every half second.  So
# its findings land inside the run only if the window asked about was
# converted onto BOOTTIME and the answers back onto the app's clock.
. tests/lib/e2e.sh
P="$(pwd)/$BIN/porthole"
S="$(pwd)/$BIN/porthole-sample"
T=$E2E_TMP
ADB="$(pwd)/tests/e2e/fake-adb"
REMOTE=/data/misc/perfetto-traces
CATS="sched freq idle am wm gfx view binder_driver dalvik"

unshare -n sh -c "ip link set lo up && exec '$S' --scenario checkout --seconds 8 --app-id e2e.hostadb --data-dir '$T/appd'" > /dev/null 2>&1 &
APP=$!
wait_for 5 sh -c "nsenter -t $APP -n cat /proc/net/unix | grep -q '@porthole.e2e.hostadb'"

# The device's trace, for this pid, around now.
cat > "$T/gen.py" << 'EOF'
import sys, time

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)

def num(field, v):
    return varint(field << 3) + varint(v)

def msg(field, body):
    return varint(field << 3 | 2) + varint(len(body)) + body

def text(field, s):
    return msg(field, s.encode())

pid, out = int(sys.argv[1]), sys.argv[2]
SLEPT = 60 * 10**9  # BOOTTIME runs this far ahead of MONOTONIC
mono = time.clock_gettime_ns(time.CLOCK_MONOTONIC) - 10**9
boot = mono + SLEPT
clocks = msg(1, num(1, 6) + num(2, boot)) + msg(1, num(1, 3) + num(2, mono))
trace = msg(1, num(8, boot) + msg(6, clocks + num(2, 6)))
tree = msg(1, num(1, pid) + num(2, 1) + text(3, "porthole-sample")) + \
    msg(2, num(1, pid) + text(2, "porthole-sample") + num(3, pid))
trace += msg(1, num(8, boot) + msg(2, tree))

def switch(ts, prev, prev_comm, state, nxt, next_comm):
    sw = text(1, prev_comm) + num(2, prev) + num(3, 120) + num(4, state) + \
        text(5, next_comm) + num(6, nxt) + num(7, 120)
    return msg(2, num(1, ts) + num(2, prev) + msg(4, sw))

MS = 10**6
events = b""
for k in range(80):  # 40 s of it, every 500 ms
    t = boot + k * 500 * MS
    events += switch(t, 0, "swapper/0", 0, pid, "porthole-sample")
    events += switch(t + 300 * MS, pid, "porthole-sample", 2, 0, "swapper/0")  # D
    events += switch(t + 360 * MS, 0, "swapper/0", 0, pid, "porthole-sample")
    events += switch(t + 400 * MS, pid, "porthole-sample", 0, 9999, "kworker")  # R
    events += switch(t + 430 * MS, 9999, "kworker", 1, pid, "porthole-sample")
    events += switch(t + 480 * MS, pid, "porthole-sample", 1, 0, "swapper/0")
trace += msg(1, msg(1, num(1, 0) + events))
open(out, "wb").write(trace)
EOF
python3 "$T/gen.py" $APP "$T/device.pftrace"

mkdir -p "$T/device"
export FAKE_ADB_LOG="$T/adb.log" FAKE_ADB_PID=$APP FAKE_ADB_DEVICE="$T/device"
export FAKE_ADB_TRACE="$T/device.pftrace"
# The command drives the app until its scenario ends, and says when it
# ran in the adb log, so the trace is seen to cover it.
(PATH="$ADB:$PATH" PORTHOLE_SESSIONS=0 "$P" capture --systrace \
	--application-id e2e.hostadb --scenario checkout --out "$T/c.json" -- \
	sh -c "echo 'cmd start' >> '$T/adb.log'; while kill -0 $APP 2> /dev/null; do sleep 0.1; done; echo 'cmd end' >> '$T/adb.log'" \
	> /dev/null 2> "$T/cap.err"; echo $? > "$T/cap.rc")
wait $APP 2> /dev/null

check "capture --systrace on a device exits with the command's status" sh -c "[ \$(cat $T/cap.rc) -eq 0 ]"
check "the exact adb commands, in order" python3 - "$T/adb.log" "$REMOTE" "$CATS" << 'EOF'
import re, sys
log, remote, cats = sys.argv[1:4]
# the commands (the link's own aside), not the relay's complaints
lines = [l for l in open(log).read().splitlines()
         if re.match(r"(adb|cmd) ", l)
         and not re.match(r"adb (get-state|forward|devices)", l)]
print("\n".join(lines[:8]))
start = r"adb shell perfetto --background-wait -b 64mb -o (%s/porthole-capture-\d+\.pftrace) -t 3600s %s" % (remote, cats)
m = re.fullmatch(start, lines[0])
assert m, "perfetto --background-wait first"
dev = m.group(1)
assert lines[1] == "cmd start", "then the command"
assert lines[2] == "cmd end", "nothing while it runs"
m = re.fullmatch(r"adb shell kill -TERM (\d+)", lines[3])
assert m, "then kill -TERM the pid perfetto printed"
pid = m.group(1)
waits = lines[4:-2]
assert waits and all(l == "adb shell kill -0 " + pid for l in waits), "kill -0 until it is gone"
pull = re.fullmatch(r"adb pull %s (/tmp/porthole-capture-\w+/systrace\.pftrace)" % re.escape(dev), lines[-2])
assert pull, "adb pull REMOTE LOCAL"
assert lines[-1] == "adb shell rm -f " + dev, "adb shell rm -f REMOTE, last"
EOF
check "the session is gone and nothing is left on the device or here" sh -c "
	pid=\$(sed -n 's/^adb shell kill -TERM //p' '$T/adb.log');
	! kill -0 \$pid 2> /dev/null &&
	[ -z \"\$(find '$T/device' -type f ! -path '*/.perfetto-sessions/*')\" ] &&
	! ls /tmp/porthole-capture-*/systrace.pftrace 2> /dev/null | grep -q ."
check "the device trace's findings are merged, about the app's process" \
	grep -q 'system trace: [1-9][0-9]* findings* about porthole-sample over the same window' "$T/c.json"
check "they are the planted ones, on the app's clock, inside the run" python3 - "$T/c.json" << 'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
w = c["window"]
tr = [f for f in c["findings"] if f["source"] == "trace"]
print(w, json.dumps(tr)[:2000])
titles = {f["title"] for f in tr}
assert "Main thread blocked in the kernel" in titles, titles
assert "Main thread waiting for a CPU" in titles, titles
placed = [f for f in tr if "window" in f]
assert {f["title"] for f in placed} >= {"Main thread blocked in the kernel",
                                        "Main thread waiting for a CPU"}, placed
for f in placed:
    assert w["from"] - 1 <= f["window"]["from"] <= f["window"]["to"] <= w["to"] + 1, f
EOF
check "the app's own findings are still there" \
	grep -q '"id":"db-on-main-thread","severity":"error","confidence":"observed","source":"porthole"' "$T/c.json"
check "report tags them [trace]" sh -c "'$P' report '$T/c.json' | grep -q '^[a-z]*  *\[trace\] Main thread blocked in the kernel'"
finish
