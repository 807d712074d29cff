# SPDX-License-Identifier: Apache-2.0
"""relay.py NAME PID PORTFILE: what `adb forward` does for a device.

Listens on 127.0.0.1:<free port> in this network namespace (the port goes
to PORTFILE), then enters the network namespace of PID and, for every TCP
connection, connects to the abstract socket NAME there and copies bytes
both ways.  Exits when the first connection ends (a forward per link).
"""
import ctypes
import os
import socket
import sys
import threading

name, pid, portfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
lsock.bind(("127.0.0.1", 0))
lsock.listen(4)
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/proc/%d/ns/net" % pid, os.O_RDONLY)
if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
    sys.exit("relay: setns: %s" % os.strerror(ctypes.get_errno()))
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % lsock.getsockname()[1])
os.rename(portfile + ".tmp", portfile)


def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


conn, _ = lsock.accept()
app = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    app.connect("\0" + name)
except OSError as e:
    sys.exit("relay: %s: %s" % (name, e))
t = threading.Thread(target=pump, args=(app, conn), daemon=True)
t.start()
pump(conn, app)
t.join(2)
