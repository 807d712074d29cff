# SPDX-License-Identifier: Apache-2.0
"""ask.py PORTHOLE TOOL DETAIL ARGS [--session FILE] [--app RECORDING]

One MCP answer for a golden case, from a fixed input, never a live app:

  --session FILE   a recorded session (NDJSON, the wire as it came) put
                   where `porthole mcp --no-link` finds it on disk;
  --app RECORDING  a fake app replaying recorded answers: each line of
                   RECORDING is {"request":{...},"response":{...}} as the
                   real porthole-sample answered them; a request is matched
                   on method and params, the answer gets the request's id.
                   `timeline` (the host's backfill) gets an empty page: the
                   recording starts with no backlog.

The server runs in a fresh directory /tmp/ph-golden-mcp-XXXXXXXX (a fixed
length, so the byte counts below do not depend on where it ran).  The call
is `tools/call TOOL` with ARGS (a JSON object) and `detail: DETAIL`.

Printed: the answer's text with that directory written as
/tmp/ph-golden-mcp-XXXXXXXX, isError, structuredContent (when the text carries the JSON payload,
whether the two are equal), then the size
note checked against real byte counts: N must equal the bytes returned
(text, plus any image); M ("full ≈ M") is compared with the bytes of the
same question asked at detail full in a fresh server (within 5%; at
detail full, M must equal N).  Exit 1 when a check
fails.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

porthole, tool, detail, args = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
opts = dict(zip(sys.argv[5::2], sys.argv[6::2]))
NOTE = re.compile(r" \[(\d+) returned; full \u2248 (\d+)\]")


def fake_app(name, recording):
    """Serves the recorded answers on the abstract socket `name`."""
    answers = []
    for line in open(recording, encoding="utf-8"):
        o = json.loads(line)
        answers.append((o["request"]["method"], o["request"].get("params", {}),
                        o["response"]))
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind("\0" + name)
    ls.listen(4)

    def serve(conn):
        f = conn.makefile("rwb")
        for raw in f:
            req = json.loads(raw)
            found = None
            for m, p, resp in answers:
                if m == req.get("method") and p == req.get("params", {}):
                    found = dict(resp, id=req["id"])
            if found is None and req.get("method") == "timeline":
                found = {"id": req["id"], "ok": True,
                         "result": {"events": [], "droppedBefore": 0}}
            if found is None:
                found = {"id": req["id"], "ok": False,
                         "error": "the recording has no answer to %s %s"
                         % (req.get("method"), json.dumps(req.get("params")))}
            f.write((json.dumps(found, separators=(",", ":")) + "\n").encode())
            f.flush()

    def accept():
        while True:
            conn, _ = ls.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def session_id(path):
    """package_deviceId_startedAt, from the recording's hello."""
    for line in open(path, encoding="utf-8"):
        r = json.loads(line).get("result", {})
        if "protocol" in r:
            return "%s_%s_%s" % (r["packageName"], r["deviceId"], r["startedAt"])
    return "recorded"


def ask(a, app_id):
    """One fresh server, one call: the result object."""
    d = tempfile.mkdtemp(prefix="ph-golden-mcp-", dir="/tmp")
    try:
        if "--session" in opts:
            s = os.path.join(d, ".porthole", "sessions", session_id(opts["--session"]))
            os.makedirs(s)
            shutil.copy(opts["--session"], os.path.join(s, "events.ndjson"))
        env = {k: v for k, v in os.environ.items()
               if k not in ("PORTHOLE_PROJECT_ROOT", "PORTHOLE_APPLICATION_ID")}
        env["PORTHOLE_SESSIONS"] = "0"
        argv = [porthole, "mcp"] + (["--application-id", app_id] if app_id else ["--no-link"])
        p = subprocess.Popen(argv, cwd=d, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        n = [0]

        def rpc(method, params):
            n[0] += 1
            p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n[0], "method": method,
                                       "params": params}) + "\n").encode())
            p.stdin.flush()
            return json.loads(p.stdout.readline())

        rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "golden", "version": "1"}})
        p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        # The link connects on its own thread: wait for it, not a fixed time.
        for _ in range(200 if app_id else 0):
            st = rpc("tools/call", {"name": "porthole_status", "arguments": {}})
            if st["result"]["content"][0]["text"].startswith("connected"):
                break
            time.sleep(0.05)
        res = rpc("tools/call", {"name": tool, "arguments": a})["result"]
        p.stdin.close()
        p.wait()
        return res, d
    finally:
        shutil.rmtree(d, ignore_errors=True)


app_id = None
if "--app" in opts:
    app_id = "golden-mcp-%d" % os.getpid()
    fake_app("porthole." + app_id, opts["--app"])

res, d = ask(dict(args, detail=detail), app_id)
text = "".join(c["text"] for c in res["content"] if c["type"] == "text")
image = "".join(c["data"] for c in res["content"] if c["type"] == "image")
print(text.replace(d, "/tmp/ph-golden-mcp-XXXXXXXX"))
print("isError: %s" % json.dumps(res.get("isError")))
failed = False
sc = res.get("structuredContent")
if sc is None:
    print("structuredContent: none")
elif "\n{" not in text:
    print("structuredContent: an object, sinceLast %s" % json.dumps(sc.get("sinceLast")))
elif sc == json.loads(text[text.index("\n{") + 1:]):
    print("structuredContent: the payload in the text")
else:
    print("structuredContent: differs from the payload in the text: MISMATCH")
    failed = True
m = NOTE.search(text)
if not m:
    print("size note: MISSING")
    sys.exit(1)
returned, full = int(m.group(1)), int(m.group(2))
real = len(text.encode("utf-8")) + len(image.encode("ascii"))
if returned == real:
    print("size note: %d returned = the bytes returned" % returned)
else:
    print("size note: %d returned, but %d bytes were returned: MISMATCH" % (returned, real))
    failed = True
fres, _ = ask(dict(args, detail="full"), app_id)
ftext = "".join(c["text"] for c in fres["content"] if c["type"] == "text")
fbytes = len(ftext.encode("utf-8"))
off = abs(full - fbytes) / max(fbytes, 1)
if detail == "full" and full != returned:
    print("size note: full \u2248 %d at detail full, but %d returned: MISMATCH" % (full, returned))
    failed = True
elif off <= 0.05:
    print("size note: full \u2248 %d; the full answer is %d bytes (within 5%%)" % (full, fbytes))
else:
    print("size note: full \u2248 %d; the full answer is %d bytes: MISMATCH (%.0f%% off)"
          % (full, fbytes, off * 100))
    failed = True
sys.exit(1 if failed else 0)
