# SPDX-License-Identifier: Apache-2.0
"""Checks a recording of our agent against docs/protocol-kinds.tsv.

For every event of a kind the table lists: each field the table knows has
the table's JSON type, and every field the table says the C agent always
sends (producer c or both, required yes) is there.  Device events are
looked up as device:<kind>.  Usage: protocol_contract.py TSV RECORDING
"""
import json
import sys

TYPES = {
    'string': lambda v: isinstance(v, str),
    'int': lambda v: isinstance(v, int) and not isinstance(v, bool),
    'number': lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    'bool': lambda v: isinstance(v, bool),
    'array': lambda v: isinstance(v, list),
    'object': lambda v: isinstance(v, dict),
    'null': lambda v: v is None,
}

table = {}
for i, line in enumerate(open(sys.argv[1])):
    if i == 0 or not line.strip():
        continue
    kind, field, jtype, producer, required = line.rstrip('\n').split('\t')[:5]
    table.setdefault(kind, {})[field] = (jtype, producer, required)

events = []
for line in open(sys.argv[2]):
    o = json.loads(line)
    if 'event' in o:
        events.append(o)
    elif o.get('id') == 2 and o.get('ok'):
        events.extend(o['result']['events'])

problems, checked = [], 0
for e in events:
    kind = e['event']
    data = e['data']
    if kind == 'device':
        kind = 'device:' + data.get('kind', '?')
    fields = table.get(kind)
    if fields is None:
        continue
    for name, value in data.items():
        if name in fields:
            checked += 1
            if not TYPES[fields[name][0]](value):
                problems.append('%s.%s: %r is not %s' % (kind, name, value, fields[name][0]))
    for name, (jtype, producer, required) in fields.items():
        if required == 'yes' and producer in ('c', 'both') and name not in data:
            problems.append('%s: required field %s missing' % (kind, name))
for p in sorted(set(problems)):
    print(p)
print('checked %d fields of %d events' % (checked, len(events)))
sys.exit(1 if problems or checked < 1000 else 0)
