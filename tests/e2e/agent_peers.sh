# SPDX-License-Identifier: Apache-2.0
# Who may use an app's socket: its own uid and root (and on Android the
# shell); any other local user is refused on accept with a one-line reason
# and takes no slot, and the host prints that reason.  A host that finds
# every slot taken is told so, too.  The second uid is a real one
# (nobody, 65534), through setpriv: these tests run as root.
. tests/lib/e2e.sh

T=$E2E_TMP
APP=e2e.peers.$$
SOCK=porthole.$APP
"$BIN/porthole-sample" --scenario clean --seconds 120 --app-id "$APP" \
	--data-dir "$T/data" > "$T/sample.out" 2>&1 &
PID=$!
for i in $(seq 300); do
	grep -q "@$SOCK\$" /proc/net/unix && break
	sleep 0.1
done

check "the app's own uid (root here) is let in" sh -c \
	'"$0/porthole" status --application-id "$1" | grep "^connected: "' \
	"$BIN" "$APP"
check "another uid is refused, and porthole status says why" sh -c '
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
		env HOME=/nonexistent "$0/porthole" status --application-id "$1" 2>&1)
	echo "$out"
	echo "$out" | grep -q "^not connected: refused by the app: EACCES: uid 65534 may not use this app.s socket; only the app.s uid (0) and root may" &&
	echo "$out" | grep -q "fix: run porthole as the app.s user or as root"' \
	"$BIN" "$APP"

# A second copy of the app, started by a capture while the first holds
# @porthole.APP (two CI jobs at once): it serves a name with its pid, and
# the capture, told the name, reaches it.
PORTHOLE_SESSIONS=0 "$BIN/porthole" capture --scenario clean --out "$T/second.json" -- \
	"$BIN/porthole-sample" --scenario clean --seconds 2 --app-id "$APP" \
	--data-dir "$T/data2" > /dev/null 2> "$T/second.err"
echo $? > "$T/second.rc"
check "a second copy under capture serves @porthole.APP.PID and is reached" \
	sh -c 'cat "$0.err"; [ "$(cat "$0.rc")" = 0 ] &&
	grep -q "socket @$1 is held by another process of this app; serving @$1\.[0-9]*," "$0.err" &&
	grep -q "^porthole capture: connected to $2 (pid [0-9]*) on @$1\.[0-9]*\$" "$0.err"' \
	"$T/second" "$SOCK" "$APP"

# The raw frame, and no slot taken: 40 strangers, each told and closed,
# while the app's own user still gets in.
cat > "$T/strangers.py" <<'PY'
import socket, sys
name = sys.argv[1]
for i in range(40):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect('\0' + name)
    try:  # the agent may have closed already: the frame is still there
        s.sendall(b'{"id":1,"method":"db_tables"}\n')
    except OSError:
        pass
    got = b''
    while True:
        try:
            b = s.recv(4096)
        except ConnectionResetError:
            b = b''  # closed with our request unread: the frame came first
        if not b:
            break
        got += b
    lines = got.decode().splitlines()
    if len(lines) != 1 or not lines[0].startswith('{"id":-1,"ok":false,"error":"EACCES: uid 65534 '):
        sys.exit('stranger %d got %r' % (i, got))
    s.close()
print(lines[0])
PY
check "a stranger gets one error frame, then end of file, every time" \
	sh -c 'setpriv --reuid=65534 --regid=65534 --clear-groups \
		/usr/bin/python3 - "$1" < "$0"' "$T/strangers.py" "$SOCK"
check "and the app's own user still gets in" sh -c \
	'"$0/porthole" status --application-id "$1" | grep "^connected: "' \
	"$BIN" "$APP"

# Every slot taken (by the app's own user): the next host is told why.
cat > "$T/hold.py" <<'PY'
import socket, sys, time
held = []
for i in range(16):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect('\0' + sys.argv[1])
    s.sendall(b'{"id":1,"method":"hello"}\n')
    held.append(s)
for s in held:  # each has its slot once its hello is answered
    s.settimeout(30)
    got = b''
    while b'"id":1' not in got:
        got += s.recv(65536)
print('held', flush=True)
sys.stdin.read()  # until the test closes our stdin
PY
mkfifo "$T/hold.in"
python3 "$T/hold.py" "$SOCK" < "$T/hold.in" > "$T/hold.out" 2>&1 &
HOLD=$!
exec 8> "$T/hold.in"
for i in $(seq 300); do grep -q held "$T/hold.out" && break; sleep 0.1; done
check "a host that gets no slot prints why" sh -c '
	out=$("$0/porthole" status --application-id "$1" 2>&1)
	echo "$out"
	echo "$out" | grep -q "^not connected: refused by the app: too many clients: all 16 slots are in use" &&
	echo "$out" | grep -q "fix: close another client of this app"' \
	"$BIN" "$APP"
exec 8>&-
wait $HOLD
kill $PID 2>/dev/null
wait $PID 2>/dev/null
finish
