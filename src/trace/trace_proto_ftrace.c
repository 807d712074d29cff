/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_proto_ftrace.c: the Perfetto decoder's ftrace events, the bulk of
 * a system trace: an FtraceEventBundle (TracePacket field 1: cpu 1,
 * event 2, lost_events 3, compact_sched 4) becomes the scheduler,
 * frequency, idle, print, task, binder and thermal events that
 * ph_trace_finish() turns into tables.  The hot path of the whole
 * decoder: every field goes through trace_proto_int.h's inline readers.
 *
 * FtraceEvent (ftrace_event.proto): timestamp 1, pid 2, and one of print 3
 * {buf 2}, sched_switch 4 {prev_comm 1 prev_pid 2 prev_prio 3 prev_state 4
 * next_comm 5 next_pid 6 next_prio 7}, cpu_frequency 11 {state 1 cpu_id 2},
 * cpu_idle 13 (same), sched_wakeup 17, sched_waking 20, sched_wakeup_new
 * 114 {comm 1 pid 2 prio 3 success 4 target_cpu 5}, sched_blocked_reason
 * 18 {pid 1 caller 2 io_wait 3}, block_rq_issue 45, block_rq_complete 125,
 * thermal_temperature 341 {id 1 temp 2 temp_prev 3 thermal_zone 4},
 * cdev_update 342 {target 1 type 2}, binder_transaction 50 {debug_id 1
 * reply 5 flags 7}, binder_transaction_received 51 {debug_id 1},
 * task_newtask 235 {pid 1 comm 2 clone_flags 3}, task_rename 236 {pid 1
 * oldcomm 2 newcomm 3}, sched_process_exit 238 {comm 1 pid 2 tgid 3},
 * sched_process_free 240 {comm 1 pid 2}.
 *
 * CompactSched (ftrace_event_bundle.proto), all packed: switch_timestamp 1
 * (deltas, the first from 0), switch_prev_state 2, switch_next_pid 3,
 * switch_next_prio 4, intern_table 5 (strings), switch_next_comm_index 6;
 * waking_timestamp 7 (deltas), waking_pid 8, waking_target_cpu 9,
 * waking_prio 10, waking_comm_index 11.  The previous task of a switch is
 * the next task of the previous switch on that CPU.
 */
#include "trace/trace_proto_int.h"

/*
 * The hot messages (an FtraceEvent, sched_switch, sched_waking, cpu_idle)
 * come from Perfetto's writer with their fields in field order, each once.
 * take_*() consumes the next field only when it has the expected one-byte
 * key (field number below 16), so a decoder reads them in sequence without
 * a dispatch per field; anything else (another order, another wire type,
 * a repeated or unknown field, a bad varint) is left where it is for the
 * generic walk that every decoder ends with, and that walk assigns exactly
 * what it would have had it seen the whole message: the result is the
 * same, only the common layout is quicker.
 */
PB_INLINE bool take_varint(const uint8_t **pp, const uint8_t *end, uint32_t key,
			   uint64_t *v)
{
	const uint8_t *p = *pp;

	if (p >= end || *p != key)
		return false;
	p++;
	if (!varint(&p, end, v))
		return false;
	*pp = p;
	return true;
}

/* take_varint for a field that is usually long (a timestamp). */
PB_INLINE bool take_wide(const uint8_t **pp, const uint8_t *end, uint32_t key,
			 uint64_t *v)
{
	const uint8_t *p = *pp;

	if (p >= end || *p != key)
		return false;
	p++;
	if (!varint_wide(&p, end, v))
		return false;
	*pp = p;
	return true;
}

PB_INLINE bool take_bytes(const uint8_t **pp, const uint8_t *end, uint32_t key,
			  const uint8_t **s, uint64_t *n)
{
	const uint8_t *p = *pp;

	if (p >= end || *p != key)
		return false;
	p++;
	if (!length(&p, end, n) || *n > (uint64_t)(end - p))
		return false;
	*s = p;
	*pp = p + *n;
	return true;
}

static __attribute__((noinline)) uint32_t comm_miss(struct pstate *ps,
						    struct comm_slot *c,
						    const uint8_t *s, size_t n,
						    uint64_t w0, uint64_t w1)
{
	c->id = ph_trace_intern(ps->t, (const char *)s, n);
	c->w0 = w0;
	c->w1 = w1;
	c->len = c->id ? (uint32_t)n : 0;
	return c->id;
}

/*
 * A short string (a comm) through the cache, else interned.  The key is
 * the length and two words that, for that length, cover every byte
 * (overlapping when shorter than 16): no byte-wise copy.
 */
static inline uint32_t comm_bytes(struct pstate *ps, const uint8_t *s, size_t n)
{
	uint64_t w0, w1 = 0;
	struct comm_slot *c;

	if (n > 16 || !n || !ps->comms)
		return ph_trace_intern(ps->t, (const char *)s, n);
	if (n >= 8) {
		memcpy(&w0, s, 8);
		memcpy(&w1, s + n - 8, 8);
	} else if (n >= 4) {
		uint32_t lo, hi;

		memcpy(&lo, s, 4);
		memcpy(&hi, s + n - 4, 4);
		w0 = lo | (uint64_t)hi << 32;
	} else {
		w0 = s[0] | (uint32_t)s[n >> 1] << 8 | (uint32_t)s[n - 1] << 16;
	}
	c = &ps->comms[((w0 * 0x9e3779b97f4a7c15ull) ^
			(w1 * 0xc2b2ae3d27d4eb4full) ^ n) >>
		       54];
	if (c->len == n && c->w0 == w0 && c->w1 == w1)
		return c->id;
	return comm_miss(ps, c, s, n, w0, w1);
}

static uint32_t comm_of(struct pstate *ps, const struct pbf *f)
{
	return f->wt == 2 ? comm_bytes(ps, f->p, f->v) : 0;
}

static struct lastsw *last_of(struct pstate *ps, uint32_t cpu)
{
	if (cpu >= 4096)
		return NULL;
	if (cpu >= ps->nlast) {
		size_t had = ps->nlast;

		if (PH_GROW(ps->last, ps->nlast, (size_t)cpu + 1, 16))
			return NULL;
		memset(ps->last + had, 0,
		       (ps->nlast - had) * sizeof(*ps->last));
	}
	return &ps->last[cpu];
}

/*
 * cpu_idle, written by the CPU it is about (cpu_id = the bundle's CPU),
 * arrives in time order for its track: its counter row is written here
 * rather than through the time sort, which it does not need (a fifth of
 * an Android trace's events).  The counter table is not kept in global
 * time order (trace_sql.c does not assume it is).  true when done.
 */
static bool cpu_idle_direct(struct pstate *ps, uint32_t cpu, int64_t ts,
			    const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	const uint8_t *q = p, *end = p + n;
	struct pbf g;
	uint64_t v;
	int64_t state = 0, id = -1;

	if (take_varint(&q, end, KEY(1, 0), &v))
		state = (int64_t)(uint32_t)v;
	if (take_varint(&q, end, KEY(2, 0), &v))
		id = (int64_t)v;
	while (next_field(&q, end, &g) > 0) {
		if (g.key == KEY(1, 0))
			state = (int64_t)(uint32_t)g.v;
		else if (g.key == KEY(2, 0))
			id = (int64_t)g.v;
	}
	if (id != (int64_t)cpu)
		return false;
	if (cpu >= PH_ARRAY_SIZE(ps->idle_track))
		return false;
	if (!ps->idle_track[cpu]) {
		uint32_t name = ph_trace_intern(t, "cpuidle", 7);

		ps->idle_track[cpu] = ph_trace_keyed_track(t, PH_TK_CPU_COUNTER,
							   name, PH_NULL_I64,
							   (int64_t)cpu) +
				      1;
	}
	ph_trace_see_ts(t, ts);
	ph_trace_counter(t, ts, ps->idle_track[cpu] - 1, (double)state);
	return true;
}

/* sched_switch; l: the bundle CPU's last switch, for compact_sched. */
static void sched_switch(struct pstate *ps, struct ph_tev *e, struct lastsw *l,
			 const uint8_t *p, size_t n)
{
	const uint8_t *q = p, *end = p + n, *s;
	uint64_t v, sn;
	struct pbf g;

	e->kind = PH_EV_SWITCH;
	if (take_bytes(&q, end, KEY(1, 2), &s, &sn))
		e->s1 = comm_bytes(ps, s, sn);
	if (take_varint(&q, end, KEY(2, 0), &v))
		e->a = (int32_t)v;
	(void)take_varint(&q, end, KEY(3, 0), &v); /* prev_prio: unused */
	if (take_varint(&q, end, KEY(4, 0), &v))
		e->v.d = (int64_t)v;
	if (take_bytes(&q, end, KEY(5, 2), &s, &sn))
		e->s2 = comm_bytes(ps, s, sn);
	if (take_varint(&q, end, KEY(6, 0), &v))
		e->b = (int32_t)v;
	if (take_varint(&q, end, KEY(7, 0), &v))
		e->c = (int32_t)v;
	while (next_field(&q, end, &g) > 0) {
		switch (g.id) {
		case 1: e->s1 = comm_of(ps, &g); break;
		case 2: e->a = (int32_t)g.v; break;
		case 4: e->v.d = (int64_t)g.v; break;
		case 5: e->s2 = comm_of(ps, &g); break;
		case 6: e->b = (int32_t)g.v; break;
		case 7: e->c = (int32_t)g.v; break;
		}
	}
	if (l) {
		l->pid = e->b;
		l->prio = e->c;
		l->comm = e->s2;
		l->set = true;
	}
}

/* sched_waking, sched_wakeup, sched_wakeup_new: the same fields. */
static void sched_wake(struct pstate *ps, struct ph_tev *e, const uint8_t *p,
		       size_t n)
{
	const uint8_t *q = p, *end = p + n, *s;
	uint64_t v, sn;
	struct pbf g;

	if (take_bytes(&q, end, KEY(1, 2), &s, &sn))
		e->s1 = comm_bytes(ps, s, sn);
	if (take_varint(&q, end, KEY(2, 0), &v))
		e->a = (int32_t)v;
	(void)take_varint(&q, end, KEY(3, 0), &v); /* prio */
	(void)take_varint(&q, end, KEY(4, 0), &v); /* success */
	if (take_varint(&q, end, KEY(5, 0), &v))
		e->b = (int32_t)v;
	while (next_field(&q, end, &g) > 0) {
		if (g.id == 1)
			e->s1 = comm_of(ps, &g);
		else if (g.id == 2)
			e->a = (int32_t)g.v;
		else if (g.id == 5)
			e->b = (int32_t)g.v;
	}
}

static void ftrace_event(struct pstate *ps, uint32_t cpu, struct lastsw *l,
			 const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	const uint8_t *q = p, *end = p + n;
	struct pbf f, g;
	uint64_t ts = 0, v;
	int64_t pid = -1;
	const uint8_t *ev = NULL;
	size_t evn = 0;
	uint32_t kind = 0;
	struct ph_tev *e;

	if (take_wide(&q, end, KEY(1, 0), &v))
		ts = v;
	if (take_varint(&q, end, KEY(2, 0), &v))
		pid = (int64_t)v;
	if (q < end) { /* the event itself, normally the last field */
		const uint8_t *r = q;
		uint64_t key, len;

		if (varint(&r, end, &key) && (key & 7) == 2 &&
		    (uint32_t)(key >> 3) != 5 && length(&r, end, &len) &&
		    len == (uint64_t)(end - r)) {
			kind = (uint32_t)(key >> 3);
			ev = r;
			evn = len;
			q = end;
		}
	}
	while (next_field(&q, end, &f) > 0) {
		if (f.key == KEY(1, 0))
			ts = f.v;
		else if (f.key == KEY(2, 0))
			pid = (int64_t)f.v;
		else if (f.wt == 2 && f.id != 5) {
			kind = f.id;
			ev = f.p;
			evn = f.v;
		}
	}
	if (!ev)
		return;
	switch (kind) {
	case 4: /* sched_switch */
		ps->stat[S_SWITCH]++;
		if (!(e = ph_trace_push(t)))
			return;
		sched_switch(ps, e, l, ev, evn);
		break;
	case 17:
	case 20:
	case 114:
		ps->stat[kind == 17 ? S_WAKEUP :
			 kind == 20 ? S_WAKING :
				      S_WAKEUP_NEW]++;
		/* with sched_waking in the trace every sched_wakeup is
		 * ignored (trace_finish.c): once one was seen, they are not
		 * even kept (a fifth of an Android trace's events) */
		if (kind == 17 && ps->stat[S_WAKING])
			return;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 17 ? PH_EV_WAKEUP :
			  kind == 20 ? PH_EV_WAKING :
				       PH_EV_WAKEUP_NEW;
		e->c = (int32_t)pid;
		sched_wake(ps, e, ev, evn);
		break;
	case 18:
		ps->stat[S_BLOCKED]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = PH_EV_BLOCKED;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 1)
				e->a = (int32_t)g.v;
			else if (g.id == 3)
				e->b = (int32_t)g.v;
			else if (g.key == KEY(2, 0)) {
				char buf[32];
				int k = snprintf(buf, sizeof(buf), "0x%" PRIx64,
						 g.v);

				e->s1 = ph_trace_intern(t, buf, (size_t)k);
			}
		}
		break;
	case 3:
		ps->stat[S_PRINT]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = PH_EV_PRINT;
		e->a = (int32_t)pid;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 2)
				e->s1 = str_of(t, &g);
		}
		break;
	case 11:
	case 13:
		ps->stat[kind == 11 ? S_CPUFREQ : S_CPUIDLE]++;
		if (kind == 13 &&
		    cpu_idle_direct(ps, cpu, (int64_t)ts, ev, evn))
			return;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 11 ? PH_EV_CPUFREQ : PH_EV_CPUIDLE;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 1)
				e->v.d = (int64_t)(uint32_t)g.v;
			else if (g.id == 2)
				e->cpu = (uint16_t)g.v;
		}
		break;
	case 238:
	case 240:
		ps->stat[kind == 238 ? S_EXIT : S_FREE]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 238 ? PH_EV_EXIT : PH_EV_FREE;
		e->b = -1;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 1)
				e->s1 = str_of(t, &g);
			else if (g.id == 2)
				e->a = (int32_t)g.v;
			else if (g.id == 3 && kind == 238)
				e->b = (int32_t)g.v;
		}
		break;
	case 235:
	case 236:
		ps->stat[kind == 235 ? S_NEWTASK : S_RENAME]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 235 ? PH_EV_NEWTASK : PH_EV_RENAME;
		e->b = (int32_t)pid;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 1)
				e->a = (int32_t)g.v;
			else if (g.id == 2 && kind == 235)
				e->s1 = str_of(t, &g);
			else if (g.id == 3 && kind == 235)
				e->v.d = (int64_t)g.v;
			else if (g.id == 3 && kind == 236)
				e->s1 = str_of(t, &g);
		}
		break;
	case 45:
	case 125: ps->stat[kind == 45 ? S_RQ_ISSUE : S_RQ_COMPLETE]++; return;
	case 50:
	case 51:
		/* the same events as ftrace text's binder_transaction and
		 * _received (trace_finish.c slices them) */
		ps->stat[kind == 50 ? S_BINDER_TXN : S_BINDER_RECV]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 50 ? PH_EV_BINDER_TXN : PH_EV_BINDER_RECV;
		e->a = (int32_t)pid;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.key == KEY(1, 0))
				e->v.d = (int32_t)g.v;
			else if (kind == 50 && g.key == KEY(5, 0))
				e->b = g.v != 0;
			else if (kind == 50 && g.key == KEY(7, 0))
				e->c = (int32_t)(g.v & 0x7fffffff);
		}
		break;
	case 341:
	case 342: {
		const uint8_t *name = NULL;
		size_t namen = 0;
		int64_t tv = 0;

		ps->stat[kind == 341 ? S_THERMAL : S_CDEV]++;
		FOR_FIELDS(ev, evn, g)
		{
			if (kind == 341 && g.key == KEY(2, 0))
				tv = (int32_t)g.v; /* int32: may be < 0 */
			else if (kind == 342 && g.key == KEY(1, 0))
				tv = (int64_t)g.v;
			else if (g.id == (kind == 341 ? 4u : 2u) && g.wt == 2) {
				name = g.p;
				namen = g.v;
			}
		}
		ph_trace_thermal(t, (int64_t)ts, (const char *)name, namen,
				 kind == 342, (double)tv);
		return;
	}
	default: ps->stat[S_OTHER]++; return;
	}
	e->ts = (int64_t)ts;
	if (kind != 11 && kind != 13)
		e->cpu = (uint16_t)cpu;
}

/* Iterates one packed varint field. */
struct packed {
	const uint8_t *p, *end;
};

PB_INLINE bool packed_next(struct packed *k, uint64_t *v)
{
	if (!k->p || k->p >= k->end)
		return false;
	return varint(&k->p, k->end, v);
}

static void compact_sched(struct pstate *ps, uint32_t cpu, struct lastsw *l,
			  const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct packed pk[13];
	uint32_t *intern = NULL;
	size_t nintern = 0, cap = 0, nsw = 0, nwk = 0;
	struct pbf f;
	uint64_t ts = 0, v;

	memset(pk, 0, sizeof(pk));
	FOR_FIELDS(p, n, f)
	{
		if (f.wt != 2 || f.id >= 13)
			continue;
		if (f.id == 5) {
			if (PH_GROW(intern, cap, nintern + 1, 64))
				break;
			intern[nintern++] = comm_of(ps, &f);
		} else {
			pk[f.id].p = f.p;
			pk[f.id].end = f.p + f.v;
		}
	}
	while (packed_next(&pk[1], &v)) {
		struct ph_tev *e = ph_trace_push(t);
		uint64_t x;

		if (!e)
			break;
		ts += v;
		nsw++;
		e->kind = PH_EV_SWITCH;
		e->ts = (int64_t)ts;
		e->cpu = (uint16_t)cpu;
		e->v.d = packed_next(&pk[2], &x) ? (int64_t)x : 0;
		e->b = packed_next(&pk[3], &x) ? (int32_t)x : 0;
		e->c = packed_next(&pk[4], &x) ? (int32_t)x : 0;
		e->s2 = packed_next(&pk[6], &x) && x < nintern ? intern[x] : 0;
		if (l && l->set) {
			e->a = l->pid;
			e->s1 = l->comm;
		} else {
			e->a = -1; /* the first switch on a CPU: unknown */
		}
		if (l) {
			l->pid = e->b;
			l->comm = e->s2;
			l->prio = e->c;
			l->set = true;
		}
	}
	ts = 0;
	while (packed_next(&pk[7], &v)) {
		struct ph_tev *e = ph_trace_push(t);
		uint64_t x;

		if (!e)
			break;
		ts += v;
		nwk++;
		e->kind = PH_EV_WAKING;
		e->ts = (int64_t)ts;
		e->cpu = (uint16_t)cpu;
		e->a = packed_next(&pk[8], &x) ? (int32_t)x : 0;
		e->b = packed_next(&pk[9], &x) ? (int32_t)x : 0;
		(void)packed_next(&pk[10], &x);
		e->s1 = packed_next(&pk[11], &x) && x < nintern ? intern[x] : 0;
		e->c = -2; /* the waker: whoever runs on this CPU then */
	}
	ps->stat[S_SWITCH] += (int64_t)nsw;
	ps->stat[S_COMPACT_SWITCH] += (int64_t)nsw;
	ps->stat[S_WAKING] += (int64_t)nwk;
	free(intern);
}

/*
 * One CPU's events.  The CPU is needed before the first event; Perfetto
 * writes it first, but the last one wins in protobuf, so a first pass
 * skims the bundle for it (an event costs a key and a length there).
 */
void ph_proto_ftrace_bundle(struct pstate *ps, const uint8_t *p, size_t n)
{
	const uint8_t *q, *end = p + n;
	struct pbf f;
	uint32_t cpu = 0;
	struct lastsw *l;

	for (q = p;;) {
		if (q < end && *q == KEY(2, 2)) {
			const uint8_t *r = q + 1;
			uint64_t len;

			if (length(&r, end, &len) &&
			    len <= (uint64_t)(end - r)) {
				q = r + len;
				continue;
			}
		}
		if (next_field(&q, end, &f) <= 0)
			break;
		if (f.key == KEY(1, 0))
			cpu = (uint32_t)f.v;
	}
	if (cpu >= 4096) {
		ph_trace_stat(ps->t, "ftrace_bad_cpu", 1);
		return;
	}
	l = last_of(ps, cpu);
	for (q = p;;) {
		if (q < end && *q == KEY(2, 2)) {
			const uint8_t *r = q + 1;
			uint64_t len;

			if (length(&r, end, &len) &&
			    len <= (uint64_t)(end - r)) {
				ftrace_event(ps, cpu, l, r, len);
				q = r + len;
				continue;
			}
		}
		if (next_field(&q, end, &f) <= 0)
			break;
		if (f.key == KEY(2, 2))
			ftrace_event(ps, cpu, l, f.p, f.v);
		else if (f.key == KEY(4, 2))
			compact_sched(ps, cpu, l, f.p, f.v);
		else if (f.key == KEY(3, 0) && f.v)
			ph_trace_stat(ps->t, "ftrace_lost_events", 1);
	}
}
