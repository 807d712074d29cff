#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""replay_app.py: an app process that speaks the Porthole wire
(docs/protocol.md) on the abstract socket @porthole.APP_ID, replaying the
events of a recorded session as its own: its hello is the recording's
(startedAt, pid and all), and its ring holds every event, seqs from 0.

    replay_app.py RECORDING APP_ID SHIFT_MS DONE_FILE

SHIFT_MS moves every event's t (a later run of the same process identity
does other things at other times).  It answers hello and timeline, streams
nothing more, refuses other methods, and exits once DONE_FILE exists or
after 60 s; a test runs it twice with one identity to be a process that
restarted with the same startedAt (tests/e2e/sessions.sh).
"""
import json
import os
import select
import socket
import sys
import time

rec, app_id, shift, done = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
hello, events = None, {}
for line in open(rec):
    o = json.loads(line)
    res = o.get("result") or {}
    if "protocol" in res:
        hello = hello or res
    for e in [o] if "event" in o else res.get("events") or []:
        if "event" in e and e["event"] != "dropped":
            e["t"] += shift
            events[e["seq"]] = e
hello = dict(hello, packageName=app_id, processName=app_id)
ring = [events[s] for s in sorted(events)]

srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind("\0porthole." + app_id)
srv.listen(4)
clients = {}
end = time.monotonic() + 60
while not os.path.exists(done) and time.monotonic() < end:
    r, _, _ = select.select([srv] + list(clients), [], [], 0.05)
    for s in r:
        if s is srv:
            c, _ = srv.accept()
            clients[c] = b""
            continue
        data = s.recv(65536)
        if not data:
            del clients[s]
            s.close()
            continue
        clients[s] += data
        while b"\n" in clients[s]:
            line, clients[s] = clients[s].split(b"\n", 1)
            req = json.loads(line)
            if req.get("method") == "hello":
                ans = {"id": req["id"], "ok": True, "result": hello}
            elif req.get("method") == "timeline":
                since = (req.get("params") or {}).get("sinceSeq", 0)
                page = [e for e in ring if e["seq"] >= since]
                ans = {"id": req["id"], "ok": True,
                       "result": {"events": page, "droppedBefore": 0}}
            else:
                ans = {"id": req["id"], "ok": False,
                       "error": "unknown method " + str(req.get("method"))}
            s.sendall(json.dumps(ans, separators=(",", ":")).encode() + b"\n")
for c in clients:
    c.close()
srv.close()
