# SPDX-License-Identifier: Apache-2.0
# While a system trace records, the agent writes its own labels into it
# from the thread doing the work: the main-thread query on the main
# thread, the HTTP call on the network thread (docs/agent.md).  Needs root
# and tracefs, like every live trace test; it takes the lock the other
# tracefs tests take so two never record at once.
. tests/lib/e2e.sh

T=$E2E_TMP
exec 9> /tmp/porthole-tracefs.lock
flock 9
"$BIN/porthole" trace record --seconds 8 --out "$T/trace.txt" > "$T/record.out" 2>&1 &
REC=$!
wait_for 30 tracefs_recording
# The `all` scenario's first 5 s: checkout's steps, and a span.
"$BIN/porthole-sample" --scenario all --seconds 5 --app-id e2e.markers.$$ \
	--data-dir "$T/data" > "$T/sample.out" 2>&1 &
APP=$!
# The explicit calls, beside it (their own process).
${PH_BUILD:-build}/tests/explicit-calls "$T/explicit" > "$T/explicit.out" 2>&1
EXPLICIT=$(sed -n 's/^pid //p' "$T/explicit.out")
wait $APP
wait $REC
check "the trace was recorded" grep -q "trace_marker slices" "$T/record.out"
check "the main-thread query is a slice on the main thread" \
	grep -Eq 'porthole-sampl?e?-([0-9]+) +\( *\1\) .*tracing_mark_write: B\|\1\|SELECT sum\(qty \* price_cents\)' "$T/trace.txt"
check "the span is a slice on the main thread, ended there" python3 - "$T/trace.txt" "$APP" <<'PY'
import re, sys
pid, depth, span = sys.argv[2], 0, None
for line in open(sys.argv[1]):
    m = re.search(r'-(\d+)\s+\(\s*(\d+)\).*tracing_mark_write: ([BE])\|(\d+)(\|(.*))?$', line.rstrip())
    if not m or m.group(1) != pid or m.group(4) != pid:
        continue  # the main thread's only (tid = pid)
    if m.group(3) == 'B':
        depth += 1
        if m.group(6) == 'checkout-flow':
            span = depth
    else:
        if span == depth:
            sys.exit(0)
        depth -= 1
sys.exit('no B|checkout-flow closed on the main thread (span depth %r)' % span)
PY
check "the HTTP call is a slice on another thread of the app" python3 - "$T/trace.txt" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.search(r'-(\d+)\s+\(\s*(\d+)\).*tracing_mark_write: B\|(\d+)\|http://127\.0\.0\.1:\d+/v1/cart/', line)
    if m and m.group(2) == m.group(3) and m.group(1) != m.group(2):
        sys.exit(0)
sys.exit(1)
PY
# The planted ~600 ms stall (4 s into checkout): the watchdog writes it as
# an async slice from when it sees the main thread 200 ms without turning
# over until it sees it turn over again, each within a 20 ms poll (more on
# a loaded machine): about 400 ms.
check "the main-thread stall is an async slice of the app" python3 - "$T/trace.txt" "$APP" <<'PY'
import re, sys
begun = {}
for line in open(sys.argv[1]):
    m = re.search(r'\(\s*(\d+)\).* (\d+\.\d+): tracing_mark_write: ([SF])\|(\d+)\|porthole: main thread stalled\|(\d+)', line)
    if not m or m.group(1) != sys.argv[2] or m.group(4) != sys.argv[2]:
        continue
    t, kind, cookie = float(m.group(2)), m.group(3), m.group(5)
    if kind == 'S':
        begun[cookie] = t
    elif cookie in begun and 0.05 <= t - begun[cookie] <= 0.7:
        sys.exit(0)
sys.exit('no S/F pair of 50-700 ms: %r' % begun)
PY
# The explicit calls: async slices, each F with its S's name and cookie,
# the HTTP call's ended on another thread; the URL redacted.
check "the explicit HTTP call and query are async slices, ended by name" python3 - "$T/trace.txt" "$EXPLICIT" <<'PY'
import re, sys
pid, s, f = sys.argv[2], {}, {}
for line in open(sys.argv[1]):
    # The writer's pid is the one inside the marker: the tgid column is
    # "(-------)" for a thread the trace saw too briefly to map (the
    # thread that ends the HTTP call here).
    m = re.search(r'-(\d+)\s+\(\s*([\d-]+)\).*tracing_mark_write: ([SF])\|(\d+)\|(.*)\|(\d+)$', line.rstrip())
    if not m or m.group(4) != pid:
        continue
    (s if m.group(3) == 'S' else f)[(m.group(5), m.group(6))] = m.group(1)
want = {'http://127.0.0.1:9/v1/explicit?token=*', 'SELECT count(*) FROM explicit'}
names = {k[0] for k in s}
if names != want or set(s) != set(f):
    raw = [l.strip() for l in open(sys.argv[1]) if '|%s|' % pid in l]
    sys.exit('S %r F %r; the lines: %r' % (s, f, raw[:8]))
http = [k for k in s if k[0].startswith('http')][0]
if s[http] == f[http]:
    sys.exit('the HTTP call began and ended on one thread: %r' % s)
PY

# Slices nest per thread: no E without its B (a B may stay open when the
# recording stops first, e.g. under a slower sanitized build).  Only this
# sample's threads: tracefs is machine-wide, and another app's markers may
# be in the buffer too.  A "[LOST N EVENTS]" line (the ring buffer overran
# on a busy machine) may have eaten a B, so nesting starts afresh there.
check "every E closes a B on its own thread" python3 - "$T/trace.txt" "$APP" <<'PY'
import re, sys
depth, seen = {}, 0
for line in open(sys.argv[1]):
    if '[LOST ' in line:
        depth = {}
        continue
    m = re.search(r'-(\d+)\s+\(\s*(\d+)\).*tracing_mark_write: ([BE])\|', line)
    if not m or m.group(2) != sys.argv[2]:
        continue
    tid, kind = m.group(1), m.group(3)
    depth[tid] = depth.get(tid, 0) + (1 if kind == 'B' else -1)
    if depth[tid] < 0:
        sys.exit('E without B on thread %s' % tid)
    seen += 1
sys.exit(0 if seen else 'no markers')
PY
finish
