#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the host under faults, with the real porthole-sample:
# the app restarting under one `watch`, two hosts on one app (the reader
# takes over the session when the writer goes away), `kill -9` of a host,
# a disk that fills, the adb path (a fake adb on PATH whose "device" is
# the sample in its own network namespace), and watch's exit codes on real
# signals.
. tests/lib/e2e.sh
P="$(pwd)/$BIN/porthole"
S="$(pwd)/$BIN/porthole-sample"
ADB="$(pwd)/tests/e2e/fake-adb"
T=$E2E_TMP

# seqs_ok FILE: every complete line parses; streamed event lines carry
# each seq once, and with the timeline pages (the backfill, which may
# repeat streamed events: the file is the wire verbatim) the seqs run
# 0..max without a hole.  A `dropped` frame is not an event: it copies
# the seq of the event after it (protocol.md, Loss), so it is left out,
# and that event must follow it.
seqs_ok() {
	python3 - "$1" << 'EOF'
import collections, json, sys
streamed, paged, frames, after = [], [], 0, None
for l in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    o = json.loads(l)
    if "event" in o:
        if after is not None:
            assert o["seq"] == after, ("a dropped frame's seq is not the next event's", after, o)
            after = None
        if o["event"] == "dropped":
            frames += 1
            after = o["seq"]
            continue
        streamed.append(o["seq"])
    elif isinstance(o.get("result"), dict):
        paged += [e["seq"] for e in o["result"].get("events", [])]
twice = [s for s, n in collections.Counter(streamed).items() if n > 1]
assert not twice, ("streamed twice", twice[:10])
seqs = set(streamed) | set(paged)
want = set(range(max(seqs) + 1))
assert seqs == want, ("a hole in the seqs", sorted(want - seqs)[:10], sorted(seqs - want)[:10])
print(len(seqs), "events, seq 0 ..", max(seqs), ",", frames, "dropped frames")
EOF
}
# lines_ok FILE: every complete line parses (a torn last line may not).
lines_ok() {
	python3 -c '
import json, sys
d = open(sys.argv[1], "rb").read().split(b"\n")
[json.loads(l) for l in d[:-1]]
print(len(d) - 1, "complete lines")' "$1"
}

# --- the app restarts under one watch --------------------------------------
mkdir -p "$T/r"
(cd "$T/r" && PORTHOLE_PROJECT_ROOT=$T/r exec "$P" watch --application-id e2e.rc \
	--severity error --json > "$T/rc.out" 2> "$T/rc.err") &
W=$!
"$S" --scenario checkout --seconds 2 --app-id e2e.rc --data-dir "$T/rc1" > /dev/null 2>&1
"$S" --scenario checkout --seconds 2 --app-id e2e.rc --data-dir "$T/rc2" > /dev/null 2>&1
wait_for 5 sh -c "[ \$(grep -c '\"id\":\"db-on-main-thread\"' $T/rc.out) -ge 2 ]"
kill -INT $W
wait $W
echo $? > "$T/rc.rc"
check "restart: watch reports the second process's findings too" sh -c \
	"[ \$(grep -c '\"id\":\"db-on-main-thread\"' $T/rc.out) -ge 2 ]"
check "restart: one session per process, each with its startup" sh -c \
	"[ \$(ls $T/r/.porthole/sessions | wc -l) -eq 2 ] && [ \$(grep -l '\"event\":\"startup\"' $T/r/.porthole/sessions/*/events.ndjson | wc -l) -eq 2 ]"
for f in "$T"/r/.porthole/sessions/*/events.ndjson; do
	check "restart: $(basename "$(dirname "$f")" | cut -c1-40) has no seq twice, none missing" seqs_ok "$f"
done
check "restart: meta.json names each session's own process" sh -c \
	"for d in $T/r/.porthole/sessions/*; do s=\${d##*_}; grep -q \"\\\"startedAt\\\":\$s\" \$d/meta.json || exit 1; done"
check "watch: SIGINT is a clean stop, exit 0" sh -c "[ \$(cat $T/rc.rc) -eq 0 ]"

# --- two hosts on one app: the reader takes over the session --------------
mkdir -p "$T/h"
"$S" --scenario checkout --seconds 5 --app-id e2e.ho --data-dir "$T/hod" > /dev/null 2>&1 &
A_APP=$!
(cd "$T/h" && PORTHOLE_PROJECT_ROOT=$T/h exec "$P" watch --application-id e2e.ho > /dev/null 2> "$T/a.err") &
A=$!
wait_for 5 sh -c "ls $T/h/.porthole/sessions/*/lock"
(cd "$T/h" && PORTHOLE_PROJECT_ROOT=$T/h exec "$P" watch --application-id e2e.ho > "$T/b.out" 2> "$T/b.err") &
B=$!
wait_for 5 grep -q 'another host is writing it' "$T/b.err"
sleep 1
kill -TERM $A
wait $A
echo $? > "$T/a.rc"
wait_for 5 grep -q 'took over writing' "$T/b.err"
wait $A_APP
wait_for 5 sh -c "grep -q '\"writerPid\":$B' $T/h/.porthole/sessions/*/meta.json"
kill -TERM $B
wait $B
echo $? > "$T/b.rc"
HO=$(ls "$T"/h/.porthole/sessions/*/events.ndjson)
check "handover: the second host read live and did not write" grep -q 'another host is writing it' "$T/b.err"
check "handover: it took over when the writer went away" grep -q 'took over writing' "$T/b.err"
check "handover: the second host printed the findings live" grep -q '^error ' "$T/b.out"
check "handover: the session is whole: no seq twice, none missing" seqs_ok "$HO"
check "handover: it has the app's last events (the exit)" sh -c "tail -5 $HO | grep -q '\"event\":\"exit\"\\|\"event\":\"log\\|\"event\":\"frame\\|\"event\":\"memory'"
check "handover: meta.json names the new writer" grep -q "\"writerPid\":$B" "$T"/h/.porthole/sessions/*/meta.json
check "watch: SIGTERM is a clean stop, exit 0" sh -c "[ \$(cat $T/a.rc) -eq 0 ] && [ \$(cat $T/b.rc) -eq 0 ]"

# --- kill -9 of the host ---------------------------------------------------
mkdir -p "$T/k"
"$S" --scenario checkout --seconds 4 --app-id e2e.k9 --data-dir "$T/kd" > /dev/null 2>&1 &
K_APP=$!
(cd "$T/k" && PORTHOLE_PROJECT_ROOT=$T/k exec "$P" watch --application-id e2e.k9 > /dev/null 2>&1) &
K=$!
wait_for 10 sh -c "[ \$(cat $T/k/.porthole/sessions/*/events.ndjson 2>/dev/null | wc -l) -gt 40 ]"
kill -KILL $K
wait $K 2> /dev/null
wait $K_APP
KF=$(ls "$T"/k/.porthole/sessions/*/events.ndjson)
KID=$(basename "$(dirname "$KF")")
check "kill -9: every complete line of the session parses" lines_ok "$KF"
check "kill -9: sessions lists it, no longer recording" sh -c \
	"cd $T/k && '$P' sessions > $T/k.ls && grep -q '$KID' $T/k.ls && ! grep '$KID' $T/k.ls | grep -q recording"
printf '{"event":"frame","t":12' >> "$KF"
check "kill -9: a torn last line is skipped, the rest answers" sh -c \
	"'$P' report --json '$KF' > $T/k.json && grep -q '\"id\":\"db-on-main-thread\"' $T/k.json"
check "kill -9: save turns the session into a capture" sh -c \
	"cd $T/k && PORTHOLE_PROJECT_ROOT=$T/k '$P' save --session '$KID' --out $T/k.cap > /dev/null && '$P' report $T/k.cap > /dev/null"

# --- a disk that fills ---------------------------------------------------------
# A 1 MiB tmpfs (in a mount namespace of its own), filled but for 8 KiB:
# the session stops being written early, with one warning; the capture
# (written elsewhere) still has the findings that came after.
mkdir -p "$T/full"
cat > "$T/full.sh" << EOF
mount -t tmpfs -o size=1m none "$T/full" || exit 97
dd if=/dev/zero of="$T/full/fill" bs=1k count=1016 2> /dev/null
cd "$T/full" && PORTHOLE_PROJECT_ROOT=$T/full "$P" capture --scenario checkout \
	--out "$T/full.json" -- "$S" --scenario checkout --seconds 5 \
	--data-dir "$T/fulld" > /dev/null 2> "$T/full.err"
echo \$? > "$T/full.rc"
cp "$T"/full/.porthole/sessions/*/events.ndjson "$T/full.events"
EOF
unshare -m sh "$T/full.sh" 2> /dev/null || unshare -rm sh "$T/full.sh"
check "disk full: capture still succeeds" sh -c "[ \$(cat $T/full.rc) -eq 0 ]"
check "disk full: one warning that session writing stopped" sh -c \
	"[ \$(grep -c 'writing stopped' $T/full.err) -eq 1 ] && grep -q 'live answers continue' $T/full.err"
check "disk full: findings after the disk filled are still answered" sh -c \
	"grep -q '\"id\":\"main-thread-stall\"' $T/full.json && grep -q '\"id\":\"http-failed\"' $T/full.json"
check "disk full: what was written is readable up to its last whole line" \
	lines_ok "$T/full.events"

# --- the adb path ----------------------------------------------------------
# The app in its own network namespace: its abstract socket is invisible
# here, as a phone's is; the fake adb forwards to it.
unshare -n sh -c "ip link set lo up && exec '$S' --scenario checkout --seconds 6 --app-id e2e.adb --data-dir '$T/adbd'" > /dev/null 2>&1 &
APP=$!
export FAKE_ADB_LOG="$T/adb.log"
export FAKE_ADB_PID=$APP
wait_for 5 sh -c "nsenter -t $APP -n cat /proc/net/unix | grep -q '@porthole.e2e.adb'"
(cd "$T" && PATH="$ADB:$PATH" PORTHOLE_SESSIONS=0 "$P" status --application-id e2e.adb > "$T/adb.status"; echo $? > "$T/adb.status.rc")
(cd "$T" && PATH="$ADB:$PATH" PORTHOLE_SESSIONS=0 "$P" watch --application-id e2e.adb \
	--until-first --severity error --timeout 20 > "$T/adb.out" 2> "$T/adb.err"; echo $? > "$T/adb.rc")
wait $APP
check "adb: the host forwarded the app's socket itself" \
	grep -q '^adb forward tcp:0 localabstract:porthole.e2e.adb$' "$T/adb.log"
check "adb: status says connected through the forward" sh -c \
	"[ \$(cat $T/adb.status.rc) -eq 0 ] && grep -q '^connected: e2e.adb via adb forward tcp:[0-9]* -> localabstract:porthole.e2e.adb' $T/adb.status"
check "adb: watch --until-first found an error through it (exit 1)" sh -c \
	"[ \$(cat $T/adb.rc) -eq 1 ] && grep -q '^error ' $T/adb.out"
# --- a peer that accepts and closes at once ------------------------------------
# What `adb forward` does when the app on the device is dead.  The host
# backs off as when nothing listens: over the same `watch --timeout`, its
# connections to an accept-and-close listener are no more than its
# attempts at a port that refuses (each counted from strace's connect
# calls, in this test, so the machine's speed cancels out).
cat > "$T/backoff.py" << 'EOF'
import os, socket, subprocess, sys, threading
P, T = sys.argv[1], sys.argv[2]

def attempts(port, name):
    out = os.path.join(T, name + ".strace")
    env = dict(os.environ, PORTHOLE_HOST="127.0.0.1", PORTHOLE_PORT=str(port),
               PORTHOLE_SESSIONS="0")
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect", "-o", out,
                    P, "watch", "--timeout", "3"], env=env, cwd=T,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pat = "sin_port=htons(%d)" % port
    return sum(pat in l for l in open(out))

ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(128)
accepted = [0]

def serve():
    while True:
        try:
            c, _ = ls.accept()
        except OSError:
            return
        accepted[0] += 1
        c.close()

threading.Thread(target=serve, daemon=True).start()
closed = attempts(ls.getsockname()[1], "closed")
# bound, never listening: every connect is refused
r = socket.socket()
r.bind(("127.0.0.1", 0))
refused = attempts(r.getsockname()[1], "refused")
print("accept-and-close: %d connections (%d accepted); refused: %d attempts"
      % (closed, accepted[0], refused))
sys.exit(0 if 0 < closed <= refused + 2 and refused > 0 else 1)
EOF
check "a peer that closes at once: the host backs off as for a refused port" \
	python3 "$T/backoff.py" "$P" "$T"
finish
