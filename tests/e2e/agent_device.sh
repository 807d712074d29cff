# SPDX-License-Identifier: Apache-2.0
# The device and memory-pressure collectors (src/agent/collectors/
# sampler.c) seeing real changes while porthole-sample runs:
#   - network: the sample in a network namespace of its own, where a
#     default route comes (a veth), moves (a tun) and goes (the recorder
#     runs there too: abstract sockets belong to a namespace);
#   - lowMemory: the sample in a memory cgroup that then hits its limit
#     (another process of the cgroup fills the page cache past it);
#   - thermal and power: this VM has no thermal zones and no battery, so
#     those two read a tree of sysfs's own files ($PORTHOLE_SYSFS) that the
#     test changes: trip points passed one by one, charging started and
#     stopped, the level falling to low and back.
#   - trimMemory: real memory pressure (PSI), from a cgroup thrashing its
#     page cache beside the sample.
. tests/lib/e2e.sh

T=$E2E_TMP
APP=e2e.device.$$
REC=$(pwd)/build/tests/ph-record
SAMPLE=$(cd "$BIN" && pwd)/porthole-sample

# device_lines KIND FILE: that device kind's events, one data object each.
device_lines() {
	grep -o '"event":"device","t":[0-9]*,"seq":[0-9]*,"data":{"kind":"'"$1"'"[^}]*}' "$2" |
		sed 's/.*"data"://' | uniq
}

# same_lines FILE LINE...: FILE holds these lines and no others (it is
# shown, for a failure's output).
same_lines() {
	f=$1
	shift
	printf '%s\n' "$@" > "$f.want"
	cat "$f"
	cmp -s "$f" "$f.want"
}

# 1. Network, in a namespace with only loopback at first.  Each change
# once the app has reported the one before (the sampler looks once a
# second; on a loaded machine, later): the recording is on disk as it
# comes (ph-record flushes when the app pauses).
unshare -n sh -c '
	# seen AFTER WHAT: a line with WHAT at or after the first with AFTER
	# (an event can come twice, in the backfill and streamed, so counting
	# lines would not do)
	seen() {
		i=0
		until awk -v a="$1" -v w="$2" "index(\$0, a) { on = 1 }
			on && index(\$0, w) { f = 1 } END { exit !f }" \
			"$T/net.ndjson" 2> /dev/null || [ $i -ge 600 ]; do
			sleep 0.05
			i=$((i + 1))
		done
	}
	T=$1
	ip link set lo up
	PORTHOLE_ANNOUNCE=$T/net.announce "$2" --scenario startup --seconds 60 \
		--app-id "$3" --data-dir "$T/net.data" > /dev/null 2>&1 &
	app=$!
	"$4" --announce "$T/net.announce" --out "$T/net.ndjson" --seconds 60 &
	seen "\"kind\":\"network\"" "\"transport\":\"none\""
	ip link add eth7 type veth peer name eth8 && ip link set eth8 up &&
		ip link set eth7 up && ip route add default dev eth7
	seen "\"transport\":\"none\"" "\"transport\":\"ethernet\""
	ip tuntap add dev tun7 mode tun && ip link set tun7 up &&
		ip route replace default dev tun7
	seen "\"transport\":\"ethernet\"" "\"transport\":\"vpn\""
	ip route del default
	seen "\"transport\":\"vpn\"" "\"transport\":\"none\""
	kill $app
	wait' sh "$T" "$SAMPLE" "$APP" "$REC" > "$T/net.out" 2>&1
device_lines network "$T/net.ndjson" > "$T/net"
check "network: none; ethernet, then vpn, as the default route moved; none" \
	same_lines "$T/net" \
	'{"kind":"network","transport":"none"}' \
	'{"kind":"network","transport":"ethernet","metered":"false"}' \
	'{"kind":"network","transport":"vpn","metered":"false"}' \
	'{"kind":"network","transport":"none"}'

# 2. lowMemory: the sample's cgroup limited to what it uses plus 48 MB,
# then 256 MB written (and synced, so the cache can be reclaimed) by a
# process in the same cgroup.
if [ -d /sys/fs/cgroup/memory ]; then
	CG=/sys/fs/cgroup/memory/porthole-e2e-dev-$$ LIMIT=memory.limit_in_bytes USAGE=memory.usage_in_bytes
else
	CG=/sys/fs/cgroup/porthole-e2e-dev-$$ LIMIT=memory.max USAGE=memory.current
fi
check "a memory cgroup can be made (root)" mkdir "$CG"
PORTHOLE_ANNOUNCE=$T/mem.announce sh -c 'echo $$ > "$0/cgroup.procs" && exec "$1" \
	--scenario startup --seconds 8 --app-id "$2" --data-dir "$3"' \
	"$CG" "$SAMPLE" "$APP" "$T/mem" > /dev/null 2>&1 &
PID=$!
$REC --announce "$T/mem.announce" --out "$T/mem.ndjson" --seconds 7 &
RPID=$!
sleep 2
echo $(($(cat "$CG/$USAGE") + (48 << 20))) > "$CG/$LIMIT"
sh -c 'echo $$ > "$0/cgroup.procs" && exec dd if=/dev/zero of="$1" bs=1M count=256 oflag=dsync' \
	"$CG" "$T/fill" > "$T/dd.out" 2>&1
wait $RPID
wait $PID
SRC=$?
check "the sample lived through it (status $SRC)" test "$SRC" = 0
check "the cgroup hit its limit" sh -c 'test "$(cat "$0"/memory.failcnt 2>/dev/null || grep -c "^max [1-9]" "$0"/memory.events)" -gt 0' "$CG"
check "lowMemory was sent" grep -q '"event":"device","t":[0-9]*,"seq":[0-9]*,"data":{"kind":"lowMemory"}' "$T/mem.ndjson"
rmdir "$CG"

# 3. Thermal and power, from a sysfs tree of their files.
S=$T/sys
Z=$S/class/thermal/thermal_zone0
B=$S/class/power_supply/BAT0
mkdir -p "$Z" "$B"
set_zone() { echo "$1" > "$Z/temp.new" && mv "$Z/temp.new" "$Z/temp"; }
set_bat() { echo "$1" > "$B/capacity" && echo "$2" > "$B/status"; }
set_zone 41000
echo 60000 > "$Z/trip_point_0_temp"
echo passive > "$Z/trip_point_0_type"
echo 80000 > "$Z/trip_point_1_temp"
echo hot > "$Z/trip_point_1_type"
echo 95000 > "$Z/trip_point_2_temp"
echo critical > "$Z/trip_point_2_type"
set_bat 18 Discharging
PORTHOLE_SYSFS=$S PORTHOLE_ANNOUNCE=$T/dev.announce "$SAMPLE" --scenario startup \
	--seconds 60 --app-id "$APP" --data-dir "$T/dev" > /dev/null 2>&1 &
PID=$!
$REC --announce "$T/dev.announce" --out "$T/dev.ndjson" --seconds 60 &
RPID=$!
# One change at a time, each once the app has reported the one before.
seen() { wait_for 30 grep -q "$1" "$T/dev.ndjson"; }
seen '"temperatureC":"41.0"' && seen '"change":"initial"'
set_zone 61500
set_bat 17 Discharging
seen '"temperatureC":"61.5"'
set_zone 83000
set_bat 15 Discharging
seen '"temperatureC":"83.0"' && seen '"change":"BATTERY_LOW"'
set_zone 97250
set_bat 15 Charging
seen '"temperatureC":"97.2"' && seen '"change":"ACTION_POWER_CONNECTED"'
set_zone 40000
set_bat 21 Charging
seen '"temperatureC":"40.0"' && seen '"change":"BATTERY_OKAY"'
set_bat 21 Discharging
seen '"change":"ACTION_POWER_DISCONNECTED"'
kill $PID
wait $RPID
wait $PID
device_lines thermal "$T/dev.ndjson" > "$T/thermal"
device_lines power "$T/dev.ndjson" > "$T/power"
check "thermal: each trip point passed is a status, with the temperature" \
	same_lines "$T/thermal" \
	'{"kind":"thermal","status":"none","statusCode":"0","zone":"0","temperatureC":"41.0"}' \
	'{"kind":"thermal","status":"moderate","statusCode":"2","zone":"0","temperatureC":"61.5"}' \
	'{"kind":"thermal","status":"severe","statusCode":"3","zone":"0","temperatureC":"83.0"}' \
	'{"kind":"thermal","status":"critical","statusCode":"4","zone":"0","temperatureC":"97.2"}' \
	'{"kind":"thermal","status":"none","statusCode":"0","zone":"0","temperatureC":"40.0"}'
check "power: initial, low at 15 %, connected, okay over 20 %, disconnected; a point's change is none" \
	same_lines "$T/power" \
	'{"kind":"power","change":"initial","batteryPercent":"18"}' \
	'{"kind":"power","change":"BATTERY_LOW","batteryPercent":"15"}' \
	'{"kind":"power","change":"ACTION_POWER_CONNECTED","batteryPercent":"15"}' \
	'{"kind":"power","change":"BATTERY_OKAY","batteryPercent":"21"}' \
	'{"kind":"power","change":"ACTION_POWER_DISCONNECTED","batteryPercent":"21"}'
# 4. trimMemory from memory pressure (PSI, machine-wide): two readers in a
# 48 MB memory cgroup fault a 192 MB file's pages in at random, so pages
# are reclaimed and read back all the time (measured here: some avg10
# past 10 % after about 10 s).  The sample, outside the cgroup, should
# say "running moderate" once memory PSI's avg10 passes 10 %.
head -c $((192 << 20)) /dev/urandom > "$T/big"
CG=$CG-psi
mkdir "$CG"
echo $((48 << 20)) > "$CG/$LIMIT"
THRASH='
import mmap, os, random, sys, time
f = open(sys.argv[1], "rb")
os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
n, end, s = len(m) // 4096, time.time() + float(sys.argv[2]), 0
while time.time() < end:
    for _ in range(2000):
        s += m[random.randrange(n) * 4096]
'
PORTHOLE_ANNOUNCE=$T/psi.announce "$SAMPLE" --scenario startup --seconds 24 \
	--app-id "$APP" --data-dir "$T/psi" > /dev/null 2>&1 &
PID=$!
$REC --announce "$T/psi.announce" --out "$T/psi.ndjson" --seconds 23 &
RPID=$!
for _ in 1 2; do
	sh -c 'echo $$ > "$0/cgroup.procs" && exec python3 -c "$1" "$2" 21' \
		"$CG" "$THRASH" "$T/big" &
done
# PSI's avg10 while the thrash runs, once a second: read after it ends,
# the average has decayed for as long as the sample outlived it
for _ in $(seq 22); do
	sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' /proc/pressure/memory
	sleep 1
done > "$T/psi.avg10" &
wait
check "memory pressure was real (PSI some avg10 at 10 % or more)" \
	awk '$1 > max { max = $1 }
		END { print "highest avg10 " max; exit !(max >= 10) }' "$T/psi.avg10"
# The first level the app says is the one avg10 had reached when its
# sampler looked: moderate past 10 %, or low or critical straight away when
# a loaded machine's pressure rose past 25 or 50 % within a second.
grep -o '"event":"device","t":[0-9]*,"seq":[0-9]*,"data":{"kind":"trimMemory"[^}]*}' \
	"$T/psi.ndjson" | sed 's/.*"data"://' > "$T/trim"
check "trimMemory: running moderate (or past it), from PSI" sh -c \
	"cat $T/trim; head -1 $T/trim | grep -Eqx '\{\"kind\":\"trimMemory\",\"level\":\"running (moderate\",\"raw\":\"5|low\",\"raw\":\"10|critical\",\"raw\":\"15)\"\}'"
rmdir "$CG"
rm -f "$T/big"
finish
