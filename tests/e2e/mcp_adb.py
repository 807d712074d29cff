# SPDX-License-Identifier: Apache-2.0
"""mcp_adb.py PORTHOLE APP_ID PROJECT_ROOT: the device paths of
system_context, porthole_connect and the system-trace tools (perfetto over
adb), for tests/e2e/mcp.sh.

The app runs in its own network namespace and is reached through the fake
adb (tests/e2e/fake-adb, first on PATH), so `porthole mcp` takes the
device path.  The fake logs every adb command to $FAKE_ADB_LOG; its
device's files are under $FAKE_ADB_DEVICE and every trace it records is
the real $FAKE_ADB_TRACE.  Each check prints "ok NAME" or "not ok NAME:
why"; the exact adb commands are asserted, in order.
"""
import json
import os
import re
import subprocess
import sys
import time

porthole, app, root = sys.argv[1:4]
LOG, DEV, TRACE = (os.environ[k] for k in ("FAKE_ADB_LOG", "FAKE_ADB_DEVICE", "FAKE_ADB_TRACE"))
REMOTE = "/data/misc/perfetto-traces"
CATS = "sched freq idle am wm gfx view binder_driver dalvik"
RING_JSON = os.path.join(root, ".porthole", "traces", "ring.json")
NOTE = re.compile(r" \[(\d+) returned; full \u2248 (\d+)\]")
failed = 0


def check(name, cond, why=""):
    global failed
    if cond:
        print("ok " + name)
    else:
        failed += 1
        print("not ok %s: %s" % (name, why.replace("\n", " | ")[:600]))
    sys.stdout.flush()


class Server:
    """`porthole mcp` on stdio; tools/call answers as (text, isError)."""

    def __init__(self):
        env = dict(os.environ, PORTHOLE_PROJECT_ROOT=root, PORTHOLE_SESSIONS="0")
        # cwd: this checkout, where the trace engine finds detectors/ (a
        # build under build/san finds none beside its binary); the
        # project, and so .porthole/, is PORTHOLE_PROJECT_ROOT.
        self.p = subprocess.Popen([porthole, "mcp", "--application-id", app],
                                  env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.n = 0
        self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "e2e", "version": "1"}})
        self.status = ""
        for _ in range(200):
            self.status, _ = self.call("porthole_status")
            if self.status.startswith("connected"):
                break
            time.sleep(0.05)

    def rpc(self, method, params):
        self.n += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                        "params": params}) + "\n").encode())
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def call(self, tool, args=None):
        r = self.rpc("tools/call", {"name": tool, "arguments": args or {}})["result"]
        return r["content"][0]["text"], r["isError"]

    def close(self):
        self.p.stdin.close()
        return self.p.wait(30)


def log_mark():
    return len(open(LOG).read().splitlines()) if os.path.exists(LOG) else 0


def log_since(mark):
    """The adb commands since mark, minus the link's own (forward, get-state)."""
    lines = open(LOG).read().splitlines()[mark:]
    return [l for l in lines if not re.match(r"adb (get-state|forward|devices)", l)]


def payload(text):
    return json.loads(text[text.index("\n{") + 1:])


def summary(text):
    """The summary line: the one with the size note (a banner may lead)."""
    return next((l for l in text.split("\n") if NOTE.search(l)), "")


def same_bytes(path):
    return os.path.exists(path) and open(path, "rb").read() == open(TRACE, "rb").read()


def device_files():
    out = []
    for d, subdirs, files in os.walk(DEV):
        subdirs[:] = [s for s in subdirs if s != ".perfetto-sessions"]
        out += [os.path.join(d, f)[len(DEV):] for f in files]
    return out


def ring_pid():
    p = os.path.join(DEV, ".perfetto-sessions", "porthole-ring")
    return int(open(p).read()) if os.path.exists(p) else 0


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


s = Server()
check("adb: the server reached the app through adb forward",
      "adb forward" in s.status, s.status)

# --- system_context on the device -----------------------------------------
# The fake device answers each reading with a Pixel's output
# (tests/e2e/fake-adb/device/); the answer must carry those values.
SYSCTX = ["adb shell dumpsys thermalservice",
          "adb shell grep -H . /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor "
          "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq "
          "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/cpuinfo_max_freq",
          "adb shell top -b -n 1 -m 6",
          "adb shell cat /proc/loadavg /proc/meminfo /proc/pressure/memory"]
m = log_mark()
text, err = s.call("system_context", {"detail": "normal"})
cmds = log_since(m)
check("system_context: answered from the device", not err, text)
check("system_context: the four adb shell readings, in order, nothing else",
      cmds == SYSCTX, "\n".join(cmds))
p = payload(text) if not err else {}
check("system_context: source is the device", p.get("source") == "the device, over adb", repr(p))
check("system_context: thermal zones from the HAL's current temperatures, thermal status",
      p.get("thermalStatus") == 1 and p.get("thermal") == [
          {"zone": "battery", "celsius": 30.4, "status": 0},
          {"zone": "BIG", "celsius": 52.6, "status": 0},
          {"zone": "MID", "celsius": 49.1, "status": 0},
          {"zone": "LITTLE", "celsius": 47.3, "status": 0},
          {"zone": "G3D", "celsius": 45.8, "status": 0},
          {"zone": "VIRTUAL-SKIN", "celsius": 39.2, "status": 1}], repr(p.get("thermal")))
cur = [1197000, 738000, 1704000, 930000, 2130000, 1426000, 2802000]
mx = [1803000] * 4 + [2348000] * 2 + [2850000]
check("system_context: governor, current and max frequency per online CPU (cpu7 offline)",
      p.get("cpus") == [{"cpu": i, "governor": "sched_pixel", "curKHz": cur[i], "maxKHz": mx[i]}
                        for i in range(7)], repr(p.get("cpus")))
check("system_context: busiest processes from top, busiest first, top itself left out",
      p.get("busiest") == [
          {"pid": 12345, "name": "dev.porthole.sample", "cpuPercent": 63.3},
          {"pid": 1612, "name": "system_server", "cpuPercent": 18.5},
          {"pid": 785, "name": "surfaceflinger", "cpuPercent": 7.4},
          {"pid": 2203, "name": "com.google.android.gms.persistent", "cpuPercent": 3.7}],
      repr(p.get("busiest")))
check("system_context: load, memory and its pressure",
      p.get("loadavg") == "2.31 2.05 1.87" and p.get("memory") ==
      {"totalMb": 7449, "availableMb": 2793, "pressureSomeAvg10": 0.84} and p.get("unread") == [],
      repr(p))
check("system_context: the summary line carries the headline numbers",
      summary(text).startswith("device over adb: load 2.31 2.05 1.87; governor sched_pixel (7 CPUs "
                      "online); hottest zone BIG 52.6 C, thermal status 1 (throttling); memory "
                      "2793 of 7449 MB available, pressure 0.84%; busiest dev.porthole.sample "
                      "63% ["), text)

# --- porthole_connect on the device ---------------------------------------
m = log_mark()
text, err = s.call("porthole_connect", {"launch": True, "detail": "normal"})
raw = open(LOG).read().splitlines()[m:]
cmds = log_since(m)
check("porthole_connect launch: adb get-state, then pm path, then monkey with one event",
      "adb get-state" in raw and cmds == [
          "adb shell pm path " + app,
          "adb shell monkey -p %s -c android.intent.category.LAUNCHER 1" % app],
      "\n".join(raw))
p = payload(text) if not err else {}
check("porthole_connect launch: connected, installed, launched, on the device",
      not err and summary(text).startswith("connected to %s via adb forward" % app)
      and p.get("device") is True and p.get("runningHere") is False
      and p.get("installed") is True and p.get("launched") is True
      and p.get("connected") is True, text)
m = log_mark()
text, err = s.call("porthole_connect", {"restart": True, "detail": "normal"})
cmds = log_since(m)
check("porthole_connect restart: pm path, am force-stop, then monkey",
      cmds == ["adb shell pm path " + app, "adb shell am force-stop " + app,
               "adb shell monkey -p %s -c android.intent.category.LAUNCHER 1" % app],
      "\n".join(cmds))
check("porthole_connect restart: launched and connected",
      not err and '"launched":true' in text and '"connected":true' in text, text)
m = log_mark()
text, err = s.call("porthole_connect", {"applicationId": "com.example.absent", "launch": True})
cmds = log_since(m)
check("porthole_connect: an app not installed is isError, nothing launched",
      err and "com.example.absent is not installed on the device" in text
      and cmds == ["adb shell pm path com.example.absent"], text + " | " + "\n".join(cmds))
m = log_mark()
text, err = s.call("porthole_connect", {"applicationId": "com.example.nolauncher",
                                        "launch": True})
cmds = log_since(m)
check("porthole_connect: monkey finding no launcher activity is isError with its words",
      err and "could not launch com.example.nolauncher: ** No activities found to run, "
      "monkey aborted." in text and cmds == [
          "adb shell pm path com.example.nolauncher",
          "adb shell monkey -p com.example.nolauncher -c android.intent.category.LAUNCHER 1"],
      text + " | " + "\n".join(cmds))
text, err = s.call("porthole_status")
check("porthole_connect: after the failures the server is still on its app",
      summary(text).startswith("connected") and app in text, text)

# --- one-shot: perfetto -o, pull, rm -------------------------------------
m = log_mark()
text, err = s.call("capture_system_trace", {"seconds": 1, "detail": "normal"})
cmds = log_since(m)
check("capture_system_trace: answered", not err, text)
path = payload(text).get("trace", "") if not err else ""
want = [r"adb shell perfetto -o %s/porthole-(\d+)\.pftrace -t 1s %s" % (REMOTE, CATS)]
mo = re.fullmatch(want[0], cmds[0]) if cmds else None
check("capture_system_trace: adb shell perfetto -o REMOTE -t 1s CATEGORIES",
      mo is not None, "\n".join(cmds))
if mo:
    remote = "%s/porthole-%s.pftrace" % (REMOTE, mo.group(1))
    check("capture_system_trace: then adb pull REMOTE LOCAL, adb shell rm -f REMOTE, nothing else",
          cmds[1:] == ["adb pull %s %s" % (remote, path), "adb shell rm -f " + remote],
          "\n".join(cmds))
check("capture_system_trace: the pulled trace is the device's, under .porthole/traces",
      same_bytes(path) and path.startswith(os.path.join(root, ".porthole", "traces") + "/"),
      path)
check("capture_system_trace: nothing left on the device", device_files() == [],
      repr(device_files()))
# The fake perfetto's trace is a real phone's (the fixture): the attached
# app is not in it, which is said rather than answered for another process.
text, err = s.call("ask_system_trace", {"trace": path})
check("ask_system_trace: the attached app is not in the pulled trace: said",
      err and "neither its pid" in text, text)
text, err = s.call("ask_system_trace", {"trace": path, "process": "557"})
check("ask_system_trace: reads the pulled trace", not err and "asked" in text, text)

# --- the ring: --background-wait, --clone-by-name -------------------------
m = log_mark()
text, err = s.call("system_trace_start", {"detail": "normal"})
cmds = log_since(m)
pid = ring_pid()
check("system_trace_start: answered", not err, text)
check("system_trace_start: adb shell perfetto --background-wait --unique-session-name "
      "porthole-ring -b 64mb -o REMOTE -t 3600s CATEGORIES",
      cmds == ["adb shell perfetto --background-wait --unique-session-name porthole-ring "
               "-b 64mb -o %s/porthole-ring.pftrace -t 3600s %s" % (REMOTE, CATS)],
      "\n".join(cmds))
check("system_trace_start: the pid perfetto printed is the session's",
      not err and pid > 0 and payload(text).get("pid") == pid, "%s vs %d" % (text, pid))
ring = json.load(open(RING_JSON)) if os.path.exists(RING_JSON) else {}
check("system_trace_start: ring.json says device, that pid",
      ring.get("mode") == "device" and ring.get("pid") == pid, repr(ring))

m = log_mark()
text, err = s.call("system_trace_start")
check("system_trace_start: a second one is refused, nothing sent",
      err and "already running" in text and log_since(m) == [], text)


def snapshot(server, name):
    m = log_mark()
    text, err = server.call("system_trace_snapshot", {"detail": "normal"})
    cmds = log_since(m)
    check(name + ": answered", not err, text)
    local = payload(text).get("trace", "") if not err else ""
    mo = re.fullmatch(r"adb shell perfetto --clone-by-name porthole-ring -o "
                      r"%s/porthole-snap-(\d+)\.pftrace" % REMOTE, cmds[0] if cmds else "")
    remote = "%s/porthole-snap-%s.pftrace" % (REMOTE, mo.group(1)) if mo else "?"
    check(name + ": --clone-by-name, pull, rm -f, nothing else",
          mo is not None and cmds[1:] == ["adb pull %s %s" % (remote, local),
                                          "adb shell rm -f " + remote],
          "\n".join(cmds))
    check(name + ": the snapshot is the ring's buffer; the ring runs on",
          same_bytes(local) and alive(pid), local)


snapshot(s, "system_trace_snapshot")

# --- a server restart: the ring outlives it and is stopped by the next ---
check("restart: the server exits on EOF", s.close() == 0)
check("restart: the ring session survives the server", alive(pid) and ring_pid() == pid)
s = Server()
snapshot(s, "restart: system_trace_snapshot")
m = log_mark()
text, err = s.call("system_trace_stop", {"detail": "normal"})
cmds = log_since(m)
local = payload(text).get("trace") if not err else None
check("system_trace_stop: answered", not err, text)
ring_file = "%s/porthole-ring.pftrace" % REMOTE
check("system_trace_stop: kill -TERM, wait for it to exit (kill -0), pull, rm -f",
      len(cmds) >= 4 and cmds[0] == "adb shell kill -TERM %d" % pid
      and all(c == "adb shell kill -0 %d" % pid for c in cmds[1:-2])
      and cmds[-2:] == ["adb pull %s %s" % (ring_file, local), "adb shell rm -f " + ring_file],
      "\n".join(cmds))
check("system_trace_stop: the trace perfetto flushed on SIGTERM is returned",
      local is not None and same_bytes(local), repr(local))
check("system_trace_stop: the session is gone, no file left, ring.json removed",
      not alive(pid) and device_files() == [] and not os.path.exists(RING_JSON),
      "%s %s" % (alive(pid), device_files()))
m = log_mark()
text, err = s.call("system_trace_stop")
check("system_trace_stop: again is isError, nothing sent",
      err and "nothing to stop" in text and log_since(m) == [], text)

# --- a ring this server did not write down (ring.json lost) ---------------
other = subprocess.run(["adb", "shell", "perfetto", "--background-wait", "--unique-session-name",
                        "porthole-ring", "-o", REMOTE + "/other.pftrace", "-t", "60s"],
                       capture_output=True, text=True)
opid = int(other.stdout.split()[-1])
text, err = s.call("system_trace_start")
check("system_trace_start: a ring already on the device is an error, not a dead pid",
      err and "already active" in text, text)
check("system_trace_start: nothing written down for it", not os.path.exists(RING_JSON))
subprocess.run(["adb", "shell", "kill", "-TERM", str(opid)], capture_output=True)
for _ in range(100):
    if not alive(opid):
        break
    time.sleep(0.05)
subprocess.run(["adb", "shell", "rm", "-f", REMOTE + "/other.pftrace"], capture_output=True)

# --- size notes against the live app: M is what detail full returns -------
# A closed window in the past (the app's clock is this machine's
# CLOCK_MONOTONIC), so the three answers cover the same events.
to = int(time.monotonic() * 1000) - 300
grew, lines = [], []
for tool in ("recompositions", "frames", "blocking", "logs", "inflight"):
    w = {"from": 0, "to": to}
    # An error the sample makes meanwhile leads one answer with a banner
    # that the others lack: ask again then.
    for _ in range(5):
        s.call("porthole_status")
        texts = [s.call(tool, dict(w, detail=d)) for d in ("summary", "normal", "full")]
        if all(NOTE.search(t.split("\n")[0]) for t, _ in texts):
            break
    notes = [NOTE.search(t) for t, _ in texts]
    if any(e for _, e in texts) or not all(notes):
        check(tool + ": size notes", False, " | ".join(t for t, _ in texts))
        continue
    full = len(texts[2][0].encode())
    ms = [int(n.group(2)) for n in notes]
    check("%s: full \u2248 M within 5%% of the full answer at every level" % tool,
          all(abs(m - full) <= full * 0.05 for m in ms),
          "M %s, full answer %d bytes: %s" % (ms, full, " | ".join(t[:300] for t, _ in texts)))
    lines.append(summary(texts[0][0]))
    # Any growth: detail normal left something out that full returns
    # (how much depends on what the sample did in the window).
    if full > len(texts[1][0].encode()):
        grew.append(tool)
check("size notes: some tool's full answer outgrew its normal one (a cap was exercised)",
      len(grew) > 0, "none grew: " + " | ".join(lines))
print("# size notes: full answers that outgrew normal ones: %s" % grew)

# --- the device goes away: every adb command fails -------------------------
open(os.path.join(DEV, ".offline"), "w").close()
text, err = s.call("system_context")
check("system_context: a device that answers nothing is isError, saying adb failed",
      err and "cannot read the device's context over adb" in text
      and "device offline" in text, text)
text, err = s.call("porthole_connect", {"launch": True})
check("porthole_connect: no device over adb is isError, nothing launched",
      err and "no device is attached over adb" in text, text)
os.remove(os.path.join(DEV, ".offline"))
s.close()
sys.exit(1 if failed else 0)
