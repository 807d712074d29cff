#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# porthole trace record on this machine (needs root and tracefs): markers
# written to trace_marker come back as slices on the writing thread, and
# every tracefs setting record touches is the same afterwards, also when a
# SIGTERM stops it mid-run, and also when tracefs was not mounted before.
. tests/lib/e2e.sh
# tracefs is machine-wide: one live trace test at a time (iotrace_live.sh).
exec 9> /tmp/porthole-tracefs.lock
flock 9
TFS=/sys/kernel/tracing
FILES="tracing_on trace_clock current_tracer options/record-tgid options/markers
events/sched/sched_switch/enable events/sched/sched_waking/enable
events/block/block_rq_issue/enable events/block/block_rq_complete/enable
events/power/cpu_frequency/enable events/thermal/thermal_temperature/enable
events/thermal/cdev_update/enable buffer_size_kb"

snapshot() {
	if [ ! -e $TFS/trace_marker ]; then
		echo unmounted
		return
	fi
	for f in $FILES; do
		printf '%s=' "$f"
		cat "$TFS/$f" 2>/dev/null || echo absent
	done
}

# writer NAME: writes B/E pairs of NAME to trace_marker until killed, as
# libporthole does while a trace records; prints nothing.
writer() {
	sh -c 'while :; do
		if [ -w '$TFS'/trace_marker ]; then
			printf "B|%d|%s\n" $$ "$1" > '$TFS'/trace_marker 2>/dev/null
			sleep 0.01
			printf "E|%d\n" $$ > '$TFS'/trace_marker 2>/dev/null
		fi
		sleep 0.02
	done' writer "$1" 2>/dev/null &
	WPID=$!
}

check root sh -c '[ "$(id -u)" -eq 0 ]'

# 1. tracefs as this machine has it (usually unmounted)
before=$(snapshot)
writer e2e_marker
check record-2s sh -c "$BIN/porthole trace record --seconds 2 --out '$E2E_TMP/a.txt' > '$E2E_TMP/a.out' && grep -q 'trace_marker slices' '$E2E_TMP/a.out'"
kill $WPID
wait $WPID 2>/dev/null
check record-settings-kept sh -c "[ '$before' = '$(snapshot)' ]"
check record-marker-slices sh -c "n=\$($BIN/porthole trace query '$E2E_TMP/a.txt' \"SELECT COUNT(*) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread th USING (utid) WHERE s.name = 'e2e_marker' AND th.tid = $WPID AND s.dur > 0\" --csv | tail -1); [ \"\$n\" -ge 10 ]"
check record-clock-mono sh -c "$BIN/porthole trace stats '$E2E_TMP/a.txt' | grep -q '^clock *mono'"
check record-analyze sh -c "$BIN/porthole trace analyze '$E2E_TMP/a.txt' --out '$E2E_TMP/rep' > /dev/null"

# 2. mounted, with settings that are not the defaults: they come back
mounted_here=0
if [ ! -e $TFS/trace_marker ]; then
	mount -t tracefs nodev $TFS && mounted_here=1
fi
old_clock=$(sed 's/.*\[\(.*\)\].*/\1/' $TFS/trace_clock)
old_tgid=$(cat $TFS/options/record-tgid)
echo global > $TFS/trace_clock
echo 0 > $TFS/options/record-tgid
before=$(snapshot)
writer e2e_term
$BIN/porthole trace record --seconds 30 --out "$E2E_TMP/b.txt" > "$E2E_TMP/b.out" 2>&1 &
RPID=$!
wait_for 30 tracefs_recording
sleep 0.5
kill -TERM $RPID
wait $RPID
status=$?
kill $WPID
wait $WPID 2>/dev/null
check record-sigterm-exit-1 sh -c "[ $status -eq 1 ] && grep -q 'stopped early' '$E2E_TMP/b.out'"
check record-sigterm-settings-kept sh -c "[ '$before' = '$(snapshot)' ]"
check record-sigterm-trace-loads sh -c "$BIN/porthole trace stats '$E2E_TMP/b.txt' > /dev/null"
check record-bad-args sh -c "$BIN/porthole trace record --seconds x --out /dev/null 2>/dev/null; [ \$? -eq 2 ]"
check record-bad-pid sh -c "out=\$($BIN/porthole trace record --seconds 1 --out /dev/null --pid 12x 2>&1); [ \$? -eq 2 ] && echo \"\$out\" | grep -q 'wants a process id'"
echo "$old_clock" > $TFS/trace_clock
echo "$old_tgid" > $TFS/options/record-tgid
if [ $mounted_here -eq 1 ]; then
	umount $TFS 2>/dev/null || umount -l $TFS
fi
finish
