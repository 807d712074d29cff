# SPDX-License-Identifier: Apache-2.0
# libcurl through libporthole, held against what went over the wire: the
# probe (tests/agent/http_probe.c) serves HTTP/1.1 on 127.0.0.1 and logs
# each request it answered (connection, bytes each way, body, whether the
# planted secrets arrived); each http_start/http_end pair must agree with
# that log: method, status, phases adding up to elapsedMs, byte counts
# absent (never 0) without a body, reuse, snippets and their reasons,
# protocol.  Secrets never leave the process; an unattached handle makes
# no event.  In the sanitized pass the probe links the sanitized agent.
. tests/lib/e2e.sh

CC=${CC:-gcc}
T=$E2E_TMP
BUILD=${PH_BUILD:-build}
REC=$BUILD/tests/ph-record

LIB=build/lib/libporthole.a
SAN=
if nm "$BUILD/lib/libporthole.a" 2>/dev/null | grep -q __asan_; then
	LIB=$BUILD/lib/libporthole.a
	SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
fi
# libporthole before libcurl: its curl_easy_perform is the one called.
check "the probe builds, libporthole linked before libcurl" \
	$CC -std=c11 -O2 -g -Wall -Wextra -Werror $SAN -Iinclude \
	-o "$T/probe" tests/agent/http_probe.c "$LIB" \
	-lcurl -lsqlite3 -ldw -lz -ldl -lpthread -lm
check "the probe compiles with clang too" \
	${CLANG:-clang} -std=c11 -Wall -Wextra -Werror -Iinclude -c \
	-o "$T/probe-clang.o" tests/agent/http_probe.c

PROBE_HOLD=$T PORTHOLE_ENABLE=1 PORTHOLE_ANNOUNCE="$T/announce" "$T/probe" \
	"porthole.e2e-http.$$" "$T/data" "$T/served.ndjson" \
	> "$T/probe.out" 2> "$T/probe.err" &
PID=$!
$REC --announce "$T/announce" --out "$T/rec.ndjson" --seconds 25 &
RPID=$!
# Once the calls are done, a second client asks inflight (the bodies it
# keeps), then lets the probe end.
for _ in $(seq 200); do test -e "$T/calls-done" && break; sleep 0.1; done
$REC --announce "$T/announce" --out "$T/inflight.ndjson" --seconds 2 \
	--request '{"id":9,"method":"inflight","params":{}}'
touch "$T/asked"
wait $RPID
RRC=$?
wait $PID
PRC=$?
check "the probe got the server's answer to every call and exited 0" sh -c \
	'cat "$1" "$2"; test "$0" = 0' $PRC "$T/probe.out" "$T/probe.err"
check "the recorder connected" test $RRC = 0

# The calls the probe makes, in order; every one but `unattached` is on an
# attached handle.  The checks below read the recording and the server's
# log through this table.
cat > "$T/checks.py" <<'PY'
import json, os, sys
from urllib.parse import urlsplit

CALLS = [  # label, handle, method, path
    ('text', 'bodies', 'GET', '/text'),
    ('binary', 'bodies', 'GET', '/binary'),
    ('empty', 'bodies', 'GET', '/empty'),
    ('post', 'bodies', 'POST', '/echo'),
    ('secret', 'bodies', 'GET', '/secret'),
    ('missing', 'bodies', 'GET', '/missing'),
    ('big', 'bodies', 'POST', '/echo/' + '0' * 385),
    ('plain-text', 'plain', 'GET', '/text'),
    ('plain-post', 'plain', 'POST', '/echo'),
    ('unattached', None, 'GET', '/unattached-zebra-7731'),
    ('refused', 'refused', 'GET', '/refused'),
    ('stall', 'stalled', 'GET', '/stall'),
]
PHASES = {'queued', 'dns', 'connect', 'secureConnect', 'dispatch',
          'requestHeaders', 'requestBody', 'waiting', 'responseBody'}

rec_path, served_path, which = sys.argv[1:4]

# Events arrive streamed and in the backfill answer (id 2): one each by seq.
events = {}
for line in open(rec_path):
    o = json.loads(line)
    batch = [o] if 'event' in o else (
        o['result']['events'] if o.get('id') == 2 and o.get('ok') else [])
    for e in batch:
        events[e['seq']] = e
events = [events[s] for s in sorted(events)]
starts = [e for e in events if e['event'] == 'http_start']
ends = {}
for e in events:
    if e['event'] == 'http_end':
        assert e['data']['id'] not in ends, 'two ends for ' + e['data']['id']
        ends[e['data']['id']] = e

# The server's log, in the order it answered: the calls that reached it.
served = [json.loads(line) for line in open(served_path)]
reached = [c for c in CALLS if c[0] != 'refused']
assert [(s['method'], s['path']) for s in served] == \
    [(c[2], c[3]) for c in reached], 'the server saw other calls'
log = {c[0]: s for c, s in zip(reached, served)}
attached = [c for c in CALLS if c[1]]
assert len(starts) == len(attached), \
    '%d http_start for %d attached calls' % (len(starts), len(attached))

# call label -> (start data, end data), in call order.
pairs = {}
for c, s in zip(attached, starts):
    sid = s['data']['id']
    assert sid in ends, 'no http_end for ' + sid
    pairs[c[0]] = (s['data'], ends[sid]['data'])
    assert s['seq'] < ends[sid]['seq'] and s['t'] <= ends[sid]['t'], sid


def ok(cond, *why):
    if not cond:  # one line, short: check shows only the last 20
        sys.exit('FAILED: ' + ' '.join(str(w) for w in why)[:600])


def pairing():
    ok(len(ends) == len(starts), len(ends), 'ends for', len(starts), 'starts')
    ids = [s['data']['id'] for s in starts]
    ok(len(set(ids)) == len(ids), 'ids repeat', ids)
    for c in attached:
        s, e = pairs[c[0]]
        ok(s['method'] == e['method'] == c[2], c[0], s['method'], e['method'])
        ok(s['url'] == e['url'], c[0], s['url'], e['url'])
        ok(urlsplit(e['url']).path == c[3], c[0], e['url'])


def thread():
    # The writer adds these to the record the emitter filled: they are
    # required of the C agent (docs/protocol-kinds.tsv), so must fit.
    for c in attached:
        for d in pairs[c[0]]:
            ok(isinstance(d.get('thread'), str) and d['thread'], c[0], d)
            ok(isinstance(d.get('mainThread'), bool), c[0], d)


def status():
    for c in attached:
        e = pairs[c[0]][1]
        want = log.get(c[0], {}).get('status', 0)
        if want:
            ok(e.get('status') == str(want) and e['phase'] == 'done',
               c[0], e.get('status'), e['phase'], 'want', want)
        else:
            ok('status' not in e and e['phase'] == 'failed', c[0], e)


def phases():
    # The probe's own clock around each call and curl's total, in call
    # order (its $PROBE_HOLD/times): the phases are curl's timers, each
    # rounded to a ms, and elapsedMs is the agent's clock, inside the
    # probe's (no constant: a loaded machine stretches both).
    timed = [tuple(int(x) for x in l.split())
             for l in open(os.path.dirname(rec_path) + '/times')]
    ok(len(timed) == len(CALLS), 'times for', len(timed), 'of', len(CALLS))
    at = {c[0]: t for c, t in zip(CALLS, timed)}
    for c in attached:
        e = pairs[c[0]][1]
        ph = e.get('phases')
        ok(isinstance(ph, dict) and ph, c[0], 'no phases', e)
        ok(set(ph) <= PHASES, c[0], 'unknown phase', ph)
        ok(all(isinstance(v, int) and v >= 0 for v in ph.values()), c[0], ph)
        total, elapsed = sum(ph.values()), int(e['elapsedMs'])
        wall_us, curl_us = at[c[0]]
        ok(abs(total - curl_us / 1000) <= len(ph), c[0], 'phases add up to',
           total, 'curl said', curl_us, 'us', ph)
        ok(total <= elapsed + len(ph) and elapsed <= wall_us / 1000 + 1,
           c[0], 'phases', total, 'elapsedMs', elapsed, 'probe', wall_us, 'us')


def byte_count(field):
    # The count the server saw, or absent (never "0") when it saw no body.
    for c in attached:
        e = pairs[c[0]][1]
        n = log.get(c[0], {}).get(field, 0)
        if n:
            ok(e.get(field) == str(n), c[0], field, e.get(field), n)
        else:
            ok(field not in e, c[0], field, e.get(field))


def reused():
    # The server's connection numbers say which calls came on a connection
    # used before; reused is "true" for exactly those, absent otherwise.
    seen = set()
    for c in CALLS:
        conn = log.get(c[0], {}).get('conn')
        was = conn in seen
        if conn is not None:
            seen.add(conn)
        if c[1]:
            got = pairs[c[0]][1].get('reused')
            ok(got == ('true' if was else None), c[0], 'reused', got, 'conn', conn)
    ok(any(pairs[c[0]][1].get('reused') for c in attached), 'nothing reused')


def snippet_of(label, key, body, least):
    s = pairs[label][1].get(key)
    ok(s is not None and s.endswith('...'), label, key, 'not marked cut', s)
    ok(least <= len(s[:-3].encode()) and len(s.encode()) <= 512,
       label, key, len(s.encode()), 'bytes')
    ok(body.startswith(s[:-3]), label, key, 'not the first bytes sent')


def text_snippet():
    snippet_of('text', 'responseBody', log['text']['body'], 500)
    ok(len(log['text']['body'].encode()) > 4096, 'the text is not over 4 KB')


def whole_text():
    for label in ('post', 'secret', 'missing'):
        e = pairs[label][1]
        ok(e.get('responseBody') == log[label]['body'], label, e.get('responseBody'))
    ok(pairs['post'][1].get('requestBody') == log['post']['requestBody'],
       pairs['post'][1].get('requestBody'))


def binary():
    e = pairs['binary'][1]
    want = '<content type not captured, %d bytes>' % log['binary']['responseBytes']
    ok(e.get('responseBody') == want, e.get('responseBody'), 'want', want)


def no_capture():
    t, p = pairs['plain-text'][1], pairs['plain-post'][1]
    ok(t.get('responseBody') == '<bodies not captured, %d bytes>'
       % log['plain-text']['responseBytes'], t.get('responseBody'))
    ok(p.get('requestBody') == '<bodies not captured, %d bytes>'
       % log['plain-post']['requestBytes'], p.get('requestBody'))
    ok(p.get('responseBody') == '<bodies not captured, %d bytes>'
       % log['plain-post']['responseBytes'], p.get('responseBody'))


def no_body():
    for c in attached:
        e = pairs[c[0]][1]
        if not log.get(c[0], {}).get('requestBytes'):
            ok('requestBody' not in e, c[0], e.get('requestBody'))
        if not log.get(c[0], {}).get('responseBytes'):
            ok('responseBody' not in e, c[0], e.get('responseBody'))


def big():
    e = pairs['big'][1]
    ok(len(e['url']) > 400, 'the URL is short', len(e['url']))
    for k in ('reused', 'protocol', 'requestBytes', 'responseBytes',
              'phases', 'thread', 'mainThread'):
        ok(k in e, 'big call lost', k, sorted(e))
    snippet_of('big', 'requestBody', log['big']['requestBody'], 100)
    snippet_of('big', 'responseBody', log['big']['body'], 100)


def protocol():
    for c in attached:
        e = pairs[c[0]][1]
        want = 'http/1.1' if log.get(c[0], {}).get('status') else None
        ok(e.get('protocol') == want, c[0], e.get('protocol'))


def failed():
    for label, why in (('refused', "Couldn't connect to server"),
                       ('stall', 'Timeout was reached')):
        d = pairs[label][1].get('detail', '')
        ok(d.startswith('CURLE') and d.endswith(': ' + why), label, d)
    for c in attached:
        if c[0] not in ('refused', 'stall'):
            ok('detail' not in pairs[c[0]][1], c[0], pairs[c[0]][1].get('detail'))


def stalled():
    e = pairs['stall'][1]
    ph = e['phases']
    ok('responseBody' not in ph, 'a response body that never came', ph)
    ok(ph.get('waiting', -1) * 2 >= int(e['elapsedMs']), 'not waiting', ph, e['elapsedMs'])
    ph = pairs['refused'][1]['phases']
    ok(list(ph)[-1] == 'connect', 'refused: the last phase is not connect', ph)


def query():
    e = pairs['secret'][1]
    ok(e['url'].endswith('/secret?token=*&page=*'), e['url'])


def headers():
    s, e = pairs['secret']
    h = s['requestHeaders']
    ok(h.get('Authorization') == h.get('Cookie') == '*', h)
    ok(h.get('X-Refresh-Token') == '*', 'a name with token in it', h)
    ok(h.get('X-Tag') == 'a, b', 'a repeated header joined', h)
    ok(h.get('Host', '').startswith('127.0.0.1:'), 'an ordinary one kept', h)
    ok('Content-Type' in e['responseHeaders'], e['responseHeaders'])
    ok('responseHeaders' not in pairs['refused'][1], 'no response, none')


def secrets_sent():
    s = log['secret']
    ok(s['auth'] == s['cookie'] == s['query'] == 1, s)


def unattached():
    ok(log['unattached']['status'] == 404, 'the server answered it (404)')


def inflight_bodies():
    # The newest finished calls keep the first 4 KiB of each text body
    # (BodyPreview), cut at a character; other bodies only their reason.
    reply = [json.loads(l) for l in open(rec_path.replace('rec.ndjson', 'inflight.ndjson'))]
    reply = [o for o in reply if o.get('id') == 9][0]['result']
    calls = {c['id']: c for c in reply['recentHttp']}
    def of(label):
        return calls[pairs[label][0]['id']]
    body = log['text']['body'].encode()
    r = of('text')['responseBody']
    ok(r['contentType'] == 'text/plain; charset=utf-8' and r['truncated'] is True
       and r['byteCount'] == len(body), 'text', {k: v for k, v in r.items() if k != 'text'})
    ok(r['text'].encode() == body[:4094], 'text: not the first 4094 bytes', len(r['text'].encode()))
    p = of('post')
    ok(p['requestBody']['text'] == log['post']['requestBody'] and p['requestBody']['truncated'] is False,
       'post request', p['requestBody'])
    ok(p['responseBody']['text'] == log['post']['body'], 'post response', p['responseBody'])
    b = of('binary')['responseBody']
    ok(b == {'contentType': 'application/octet-stream', 'byteCount': log['binary']['responseBytes'],
             'truncated': False, 'omittedReason': 'content type not captured'}, 'binary', b)
    n = of('plain-text')['responseBody']
    ok(n.get('omittedReason') == 'bodies not captured' and 'text' not in n, 'plain', n)
    ok('responseBody' not in of('empty') and 'requestBody' not in of('text'), 'no body, no preview')
    ok(any('4 KiB' in x for x in reply['notes']), reply['notes'])


{'pairing': pairing, 'thread': thread, 'status': status, 'phases': phases,
 'request_bytes': lambda: byte_count('requestBytes'),
 'response_bytes': lambda: byte_count('responseBytes'),
 'reused': reused, 'text_snippet': text_snippet, 'whole_text': whole_text,
 'binary': binary, 'no_capture': no_capture, 'no_body': no_body,
 'big': big, 'protocol': protocol, 'failed': failed, 'stalled': stalled,
 'query': query, 'secrets_sent': secrets_sent, 'headers': headers,
 'unattached': unattached, 'inflight_bodies': inflight_bodies}[which]()
PY
ck() { # ck NAME: one function of checks.py over this run
	python3 "$T/checks.py" "$T/rec.ndjson" "$T/served.ndjson" "$1"
}

check "one http_start and one http_end per attached call, paired by id" \
	ck pairing
check "every http_start and http_end names its thread" ck thread
check "method and status are what the server answered; failed calls have none" \
	ck status
check "each phase is >= 0, they add up to curl's total, and elapsedMs lies between them and the app's own clock" ck phases
check "requestBytes: absent on a GET, the body's length on a POST" \
	ck request_bytes
check "responseBytes: absent on the 204 and failures, else the body's length" \
	ck response_bytes
check "reused: true exactly when the server saw the connection before" \
	ck reused
check "a text response over 4 KB: its first bytes, cut at a character, marked ..." \
	ck text_snippet
check "short text bodies arrive whole, request and response" ck whole_text
check "a binary response: the content-type reason with its size" ck binary
check "a handle attached without bodies: the bodies-not-captured reason" \
	ck no_capture
check "no body, no snippet (GET requests, the 204, failures)" ck no_body
check "a long URL with both snippets keeps its counts, phases and thread" \
	ck big
check "protocol is http/1.1 when a response came, absent when none did" \
	ck protocol
check "a failed call says CURLE and libcurl's reason" ck failed
check "a timeout while waiting is waiting, never a response body" ck stalled
check "query values are * with their names kept" ck query
check "headers are sent, secrets \"*\" (by name, or a word in it), repeats joined" \
	ck headers
check "the planted secrets did reach the server" ck secrets_sent
check "no secret left the process" sh -c \
	'! grep -q "do-not-log" "$0"' "$T/rec.ndjson"
check "inflight keeps the first 4 KiB of text bodies, cut at a character; others their reason" \
	ck inflight_bodies
check "the unattached call reached the server" ck unattached
check "and made no event" sh -c \
	'! grep -q "unattached-zebra-7731" "$0"' "$T/rec.ndjson"
finish
