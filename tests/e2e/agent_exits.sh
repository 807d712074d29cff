# SPDX-License-Identifier: Apache-2.0
# Deaths explained by the next start (src/agent/collectors/exit_report.c),
# with the real sample:
#   - a native crash (--crash-at, a write through a NULL struct pointer):
#     the signal by name, the fault address, and the crashed stack
#     symbolized to function(file:line) from the raw addresses its handler
#     wrote; a module file replaced since the crash is not symbolized (its
#     build id differs) and is given as module+offset, saying why;
#   - an app's own handlers, installed before porthole_start, keep
#     working (tests/agent/signal_chain.c): its SIGSEGV handler runs after
#     the agent's with the fault's own siginfo and the process still dies
#     of SIGSEGV; the watchdog leaves a real-time signal the app handles
#     alone, taking the next free one, or sampling no stacks when none is;
# and deaths that leave no crash behind:
#   - hung on its main thread (--hang-at) and killed: REASON_ANR, with the
#     function it hung in and how long it had not answered;
#   - grown past a memory cgroup's limit (--hog-at) until the kernel's
#     out-of-memory killer ended it: REASON_LOW_MEMORY, the kernel's words;
#   - killed with neither: REASON_SIGNALED.
# The record and its state file end as one .seen file, which `exits` lists
# and `exit_trace` returns.
. tests/lib/e2e.sh

T=$E2E_TMP
APP=e2e.exits.$$
DATA=$T/data
REC=build/tests/ph-record
mkdir -p "$DATA"

# until N CMD...: CMD, tried every 0.1 s up to N times.
until_ok() {
	n=$1
	shift
	for _ in $(seq "$n"); do "$@" 2> /dev/null && return 0; sleep 0.1; done
	return 1
}

# 1. Hung: killed once the agent has written down that main is stuck
# (after 5 s without an answer: Android's ANR threshold).
"$BIN/porthole-sample" --hang-at 300 --app-id "$APP" --data-dir "$T/hang" > /dev/null 2>&1 &
HPID=$!
check "the hung sample's state file says since when it has not answered" \
	until_ok 150 grep -q '^unresponsive_since=' "$T/hang/exit-$HPID.state"
check "and where its main thread is stuck" \
	grep -q '^wait_for_settings_sync(ends.c:' "$T/hang/exit-$HPID.state"
kill -9 $HPID
wait $HPID 2> /dev/null
HANG_TS=$(sed -n 's/^timestamp=//p' "$T/hang/exit-$HPID.state")

# 2. Killed outright, neither stuck nor short of memory.
"$BIN/porthole-sample" --scenario startup --seconds 30 --app-id "$APP" \
	--data-dir "$T/killed" > /dev/null 2>&1 &
KPID=$!
check "a running sample keeps a state file beside its record" \
	until_ok 100 test -s "$T/killed/exit-$KPID.state"
kill -9 $KPID
wait $KPID 2> /dev/null

# 3. Out of memory: a memory cgroup of its own, limited to what the sample
# uses once started plus 96 MB; its image cache grows 4 MB a frame from
# 1.5 s.  cgroup v1 where the memory controller is there (this machine),
# else v2.
if [ -d /sys/fs/cgroup/memory ]; then
	CG=/sys/fs/cgroup/memory/porthole-e2e-$$ LIMIT=memory.limit_in_bytes USAGE=memory.usage_in_bytes
else
	CG=/sys/fs/cgroup/porthole-e2e-$$ LIMIT=memory.max USAGE=memory.current
fi
check "a memory cgroup can be made (root)" mkdir "$CG"
sh -c 'echo $$ > "$0/cgroup.procs" && exec "$1/porthole-sample" --hog-at 1500 \
	--app-id "$2" --data-dir "$3"' "$CG" "$BIN" "$APP" "$T/oom" > /dev/null 2>&1 &
OPID=$!
until_ok 100 test -s "$T/oom/exit-$OPID.rec"
sleep 0.5
echo $(($(cat "$CG/$USAGE") + (96 << 20))) > "$CG/$LIMIT"
wait $OPID 2> /dev/null # (the shell says "Killed" otherwise)
ORC=$?
check "the kernel ended it with SIGKILL (status $ORC)" test "$ORC" = 137
check "and its record still says running" grep -q '^state=running' "$T/oom/exit-$OPID.rec"
rmdir "$CG"

# 4. Native crashes: one of the built sample, and one of a copy that is
# then replaced by another program before the next start.
check "the sample dies of its planted SIGSEGV" sh -c \
	'ASAN_OPTIONS=handle_segv=0 "$0/porthole-sample" --scenario startup --seconds 30 \
	--crash-at 300 --app-id "$1" --data-dir "$2" > /dev/null 2>&1; test $? = 139' \
	"$BIN" "$APP" "$T/crash"
CPID=$(sed -n 's/^pid=//p' "$T"/crash/exit-*.rec)
mkdir -p "$T/copy"
cp "$BIN/porthole-sample" "$T/copy/porthole-sample"
ASAN_OPTIONS=handle_segv=0 "$T/copy/porthole-sample" --scenario startup --seconds 30 \
	--crash-at 300 --app-id "$APP" --data-dir "$T/stale" > /dev/null 2>&1
SPID=$(sed -n 's/^pid=//p' "$T"/stale/exit-*.rec)
check "the copy crashed too, and its record names its module" \
	grep -q "^module=.* $T/copy/porthole-sample\$" "$T/stale/exit-$SPID.rec"
cp "$BIN/porthole" "$T/copy/porthole-sample"

# 5. The next start reports all five.
mv "$T"/hang/exit-* "$T"/killed/exit-* "$T"/oom/exit-* "$T"/crash/exit-* \
	"$T"/stale/exit-* "$DATA"/
PORTHOLE_ANNOUNCE=$T/announce "$BIN/porthole-sample" --scenario startup \
	--seconds 3 --app-id "$APP" --data-dir "$DATA" > /dev/null 2>&1 &
PID=$!
$REC --announce "$T/announce" --out "$T/rec.ndjson" --seconds 3 \
	--request '{"id":3,"method":"exits","params":{}}' \
	--request '{"id":4,"method":"exit_trace","params":{"timestamp":'"$HANG_TS"'}}'
wait $PID
# Each process's exit event, one line each.
grep -o '"event":"exit","t":[0-9]*,"seq":[0-9]*,"data":{[^}]*}' "$T/rec.ndjson" | sort -u > "$T/exits"

check "the hung one is an ANR" grep -q '"reason":"REASON_ANR",[^}]*"pid":'"$HPID"',' "$T/exits"
check "that names how long main had not answered (5 s or more)" \
	grep -Eq '"pid":'"$HPID"',"description":"killed while the main thread had not answered for ([5-9][0-9]{3}|[0-9]{5,}) ms"' "$T/exits"
check "and where it was stuck, app frames first" \
	grep -q '"pid":'"$HPID"',.*"mainStack":"wait_for_settings_sync(ends.c:[0-9]*)\\n[^"]*main(main.c:' "$T/exits"
check "its time is when it was last seen alive" \
	grep -q '"timestamp":'"$HANG_TS"',[^}]*"pid":'"$HPID"',' "$T/exits"
check "the out-of-memory kill is REASON_LOW_MEMORY, in the kernel's words" \
	grep -q '"reason":"REASON_LOW_MEMORY",[^}]*"pid":'"$OPID"',"description":"killed by the kernel'"'"'s out-of-memory killer: [^"]*Killed process '"$OPID"' (porthole-sample)' "$T/exits"
check "the plain kill is REASON_SIGNALED" \
	grep -q '"reason":"REASON_SIGNALED",[^}]*"pid":'"$KPID"',"description":"killed: no exit or crash was recorded"' "$T/exits"
check "the crash names its signal and fault address" \
	grep -q '"reason":"REASON_CRASH_NATIVE",[^}]*"pid":'"$CPID"',"description":"SIGSEGV at fault address 0x8","signal":11,"faultAddr":"0x8"' "$T/exits"
check "and its stack, symbolized at this start to function(file:line)" \
	grep -q '"pid":'"$CPID"',.*"mainStack":"key(main.c:[0-9]*)\\nmain(main.c:[0-9]*)\\n' "$T/exits"
check "a module rebuilt since the crash is module+offset, saying why" \
	grep -q '"pid":'"$SPID"',.*"mainStack":"porthole-sample+0x[0-9a-f]* \[not symbolized: the module'"'"'s build id differs from the crashed one'"'"'s\]' "$T/exits"
check "none has a stack but the ANR and the crashes" sh -c \
	'! grep -v -e "\"pid\":$1," -e "\"pid\":$2," -e "\"pid\":$3," "$0" | grep -q mainStack' \
	"$T/exits" "$HPID" "$CPID" "$SPID"
check "each record and its state are one .seen file now" sh -c \
	'for p in '"$HPID $KPID $OPID"'; do test -s "$0/exit-$p.seen" && ! test -e "$0/exit-$p.rec" && ! test -e "$0/exit-$p.state" || exit 1; done' "$DATA"
check "exits lists the three as reported, with why" \
	sh -c 'for r in ANR LOW_MEMORY SIGNALED; do grep "\"id\":3,\"ok\":true" "$0" | grep -q "\"reason\":\"REASON_$r\",[^}]*\"description\":\"[^\"]*\",\"reported\":true" || exit 1; done' "$T/rec.ndjson"
check "exit_trace returns the ANR's whole record by its time" \
	grep -q '"id":4,"ok":true,"result":{"timestamp":'"$HANG_TS"',"found":true,"text":"reason=REASON_ANR\\n.*wait_for_settings_sync' "$T/rec.ndjson"

# 6. An app's own handlers (tests/agent/signal_chain.c).
SC=${PH_BUILD:-build}/tests/signal-chain
timeout 60 "$SC" crash "$T/chain" "porthole.$APP.chain" > "$T/chain.out" 2>&1
check "an app's own SIGSEGV handler still runs, and the process dies of SIGSEGV ($?)" \
	test $? = 139
check "its handler got the fault's own siginfo (address 0x10)" \
	grep -qx 'app handler: si_addr=0x10' "$T/chain.out"
check "and the agent's record was written before it" \
	grep -q '^description=SIGSEGV at fault address 0x10$' "$T"/chain/exit-*.rec
timeout 60 "$SC" rt "$T/rt" "porthole.$APP.rt" > "$T/rt.out" 2> "$T/rt.err"
check "an app's own SIGRTMIN+7 handler is left alone by the watchdog" \
	grep -qx 'app rt handler ran=1' "$T/rt.out"
check "which says it samples with another signal" \
	grep -q 'watchdog: SIGRTMIN+7 has a handler of the app.s; the main thread.s stack is sampled with SIGRTMIN+8' "$T/rt.err"
timeout 60 "$SC" rt-all "$T/rtall" "porthole.$APP.rtall" > "$T/rtall.out" 2> "$T/rtall.err"
check "with every real-time signal the app's, the agent signals none" \
	grep -qx 'app rt handlers ran=0' "$T/rtall.out"
check "and says its stalls go without a stack" \
	grep -q 'watchdog: every real-time signal has a handler of the app.s; stalls are sent without the main thread.s stack' "$T/rtall.err"
# 7. A child the app forks (no exec) while the agent serves it
# (tests/agent/forked.c): the app exits cleanly, the child lives on, then
# crashes.  The child holds none of the app's socket, so a host finds the
# app not running rather than waiting on a name no one answers; its
# porthole_start() is refused; and its crash leaves the app's exit record
# as the app's clean exit.
FK=${PH_BUILD:-build}/tests/forked
timeout 60 "$FK" "$T/fk" "e2e.fk.$$" "$T/fk.go" > "$T/fk.out" 2>&1
FRC=$?
FPARENT=$(sed -n 's/^parent \([0-9]*\)$/\1/p' "$T/fk.out")
FCHILD=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$T/fk.out")
check "the forking app exited cleanly ($FRC), its child alive" sh -c \
	'test "$0" = 0 && kill -0 "$1"' "$FRC" "$FCHILD"
"$BIN/porthole" status --application-id "e2e.fk.$$" > "$T/fk.status" 2>&1
check "a host finds the app not running, not a socket that never answers" \
	grep -q "^not connected: e2e.fk.$$ is not running on this machine" "$T/fk.status"
touch "$T/fk.go"
for _ in $(seq 300); do kill -0 "$FCHILD" 2> /dev/null || break; sleep 0.1; done
check "the child's porthole_start() was refused, saying why" sh -c \
	'grep -qx "child start=2" "$0" && grep -q "not started: this process was forked from pid $1, where libporthole runs" "$0"' \
	"$T/fk.out" "$FPARENT"
check "after the child's crash, the app's record is still its clean exit" sh -c \
	'grep -qx state=exited "$0" && grep -qx reason=REASON_EXIT_SELF "$0" && grep -qx status=0 "$0"' \
	"$T/fk/exit-$FPARENT.rec"
# cpu_near_quiet FILE STRETCH: the app's CPU ms per second in STRETCH is
# within 5 times (plus 25 ms/s) its rate in its quiet stretch before, both
# as tests/agent/fds.c printed them.  A spinning agent takes ~1000 ms/s.
cpu_near_quiet() {
	q=$(sed -n "s/^quiet //p" "$1")
	v=$(sed -n "s/^$2 //p" "$1")
	echo "CPU: quiet $q ms/s, $2 $v ms/s"
	test -n "$q" && test -n "$v" && test "$v" -le $((5 * q + 25))
}

# 8. An app that leaks file descriptors to its limit (tests/agent/fds.c).  A host that connects is accepted on the
# agent's spare descriptor and told why it cannot be served, with what to
# do; and its waiting connection does not make the agent spin: the app's
# CPU per second while a host tried stays near its rate in the 2 s
# before (the old agent spun on the waiting connection: 1,980 ms of CPU
# in 2 s against 29 ms before).
FDS=${PH_BUILD:-build}/tests/fds
timeout 60 "$FDS" leak "$T/of" "e2e.of.$$" "$T/of.go" > "$T/of.out" 2>&1 &
OPID=$!
for _ in $(seq 300); do grep -q "connect now" "$T/of.out" && break; sleep 0.1; done
"$BIN/porthole" status --application-id "e2e.of.$$" > "$T/of.status" 2>&1
sleep 1 # the waiting connection's time to cost the old agent a core
touch "$T/of.go"
wait $OPID
check "a host is told the app has no file descriptor left" \
	grep -q "^not connected: refused by the app: EMFILE: the app has no file descriptor left (all 64 of its limit are open)" "$T/of.status"
check "and what to do" \
	grep -q "^  fix: the app has run out of file descriptors" "$T/of.status"
check "a host's try costs the app no spinning agent" \
	cpu_near_quiet "$T/of.out" hosted

# 9. An app that closes every descriptor it did not open itself, the
# agent's among them, after porthole_start(): the agent says so and stops
# serving, and does not spin on its lost descriptors (CPU against the
# app's own quiet second before; the old writer took a whole core: 1,999
# ms in 2 s against 7 ms in the second before).
timeout 60 "$FDS" close-all "$T/ca" "e2e.ca.$$" > "$T/ca.out" 2> "$T/ca.err"
CRC=$?
check "an app that closed the agent's descriptors runs on and exits 0 ($CRC)" \
	test "$CRC" = 0
check "the agent says they were closed under it" \
	grep -q "error: the app closed libporthole's descriptors (epoll_wait: " "$T/ca.err"
check "and does not spin on them" cpu_near_quiet "$T/ca.out" closed
check "and porthole_stop() still ends the agent's threads" \
	grep -qx "threads 1" "$T/ca.out"
finish
