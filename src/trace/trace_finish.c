/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_finish.c: runs the decoded events in time order (as
 * trace_finish_sort.c plans it) through the state machines that build
 * sched, thread_state, slice and counter.
 *
 * Scheduling follows the model the field's trace processor documents:
 *  - sched: one row per stretch a thread ran on a CPU, closed by the next
 *    sched_switch on that CPU, whose prev_state becomes end_state;
 *  - thread_state: a thread is Running between being switched in and out;
 *    after a switch out it is in prev_state (R, R+ when preempted, S, D,
 *    ...); a waking ends a sleep and starts R with waker_utid set to the
 *    thread that woke it; sched_blocked_reason annotates the sleep it
 *    arrives in (io_wait, blocked_function).  sched_wakeup is used only
 *    when the trace has no sched_waking (a trace with both has one
 *    wakeup per waking, later, and it would split the R state).
 * Rows still open at the end of the trace keep dur -1.
 */
#include "ph_common.h"
#include "trace/trace.h"
#include "trace/trace_int.h"
#include "trace/trace_finish_int.h"

/* --- prev_state ---------------------------------------------------------- */

/*
 * The kernel's task state bits as sched_switch reports them.  Values up to
 * 0x20 (EXIT_ZOMBIE) are the same on every kernel; above, 4.14 changed the
 * layout (TASK_REPORT): 0x40 parked, 0x80 idle, 0x100 preempted.  Before
 * it: 0x40 dead, 0x80 wakekill, 0x100 waking, 0x200 parked, 0x400 noload,
 * and preemption is TASK_STATE_MAX: 0x800 before 4.8, 0x1000 from 4.8.
 * Without a kernel version, 4.4 is assumed (old traces carry none).
 */
static uint32_t state_id(struct ph_trace *t, int64_t raw)
{
	char s[16];
	size_t n = 0;
	int major = t->kernel_major ? t->kernel_major : 4;
	int minor = t->kernel_major ? t->kernel_minor : 4;
	bool new_layout = major > 4 || (major == 4 && minor >= 14);
	bool preempt;
	static const char low[] = "SDTtXZ";

	if (raw < 0)
		return (uint32_t)(-1 - raw); /* text: already a string id */
	if (new_layout)
		preempt = raw & 0x100;
	else if (major == 4 && minor >= 8)
		preempt = raw & 0x1000;
	else
		preempt = raw & 0x800;
	if (preempt)
		return ph_trace_intern(t, "R+", 2);
	for (int i = 0; i < 6; i++)
		if (raw & (1 << i))
			s[n++] = low[i];
	if (new_layout) {
		if (raw & 0x40)
			s[n++] = 'P';
		if (raw & 0x80)
			s[n++] = 'I';
	} else {
		if (raw & 0x40)
			s[n++] = 'x';
		if (raw & 0x80)
			s[n++] = 'K';
		if (raw & 0x100)
			s[n++] = 'W';
		if (raw & 0x200)
			s[n++] = 'P';
		if (raw & 0x400)
			s[n++] = 'N';
	}
	if (!n)
		s[n++] = 'R';
	return ph_trace_intern(t, s, n);
}

/* --- per-entity state ---------------------------------------------------- */

/* Makes (*p)[need] valid; the entries it adds are -1 (none yet). */
static int grow_i64(int64_t **p, size_t *n, size_t need)
{
	size_t had = *n;

	if (need < had)
		return 0;
	if (PH_GROW(*p, *n, need + 1, 16))
		return PH_ENOMEM;
	for (size_t i = had; i < *n; i++)
		(*p)[i] = -1;
	return 0;
}

static struct ph_stack *stack_of(struct ph_trace *t, int64_t track)
{
	struct ph_trace_priv *pv = t->priv;

	if (track < 0)
		return NULL;
	if ((size_t)track >= pv->nstacks) {
		size_t had = pv->nstacks;

		if (PH_GROW(pv->stacks, pv->nstacks, (size_t)track + 1, 64))
			return NULL;
		memset(pv->stacks + had, 0,
		       (pv->nstacks - had) * sizeof(*pv->stacks));
	}
	return &pv->stacks[track];
}

static int64_t slice_begin(struct ph_trace *t, int64_t ts, int64_t track,
			   uint32_t cat, uint32_t name)
{
	struct ph_table *sl = &t->tables[PH_T_SLICE];
	struct ph_stack *st = stack_of(t, track);
	int64_t r;

	if (!st)
		return -1;
	if (st->n == st->cap && PH_GROW(st->rows, st->cap, st->n + 1, 8))
		return -1;
	r = ph_table_add(sl);
	if (r < 0)
		return -1;
	ph_col_i64(sl, SL_TS)[r] = ts;
	ph_col_i64(sl, SL_DUR)[r] = -1;
	ph_col_i64(sl, SL_TRACK)[r] = track;
	ph_col_str(sl, SL_CAT)[r] = cat;
	ph_col_str(sl, SL_NAME)[r] = name;
	ph_col_i32(sl, SL_DEPTH)[r] = (int32_t)st->n;
	ph_col_i64(sl, SL_PARENT)[r] = st->n ? st->rows[st->n - 1] :
					       PH_NULL_I64;
	st->rows[st->n++] = r;
	return r;
}

static void slice_end(struct ph_trace *t, int64_t ts, int64_t track)
{
	struct ph_table *sl = &t->tables[PH_T_SLICE];
	struct ph_stack *st = stack_of(t, track);
	int64_t r;

	if (!st || !st->n) {
		ph_trace_stat(t, "slice_end_without_begin", 1);
		return;
	}
	r = st->rows[--st->n];
	ph_col_i64(sl, SL_DUR)[r] = ph_ts_span(ts, ph_col_i64(sl, SL_TS)[r]);
}

/* A slice that never opens or closes anything: dur 0 at the current depth */
static int64_t slice_instant(struct ph_trace *t, int64_t ts, int64_t track,
			     uint32_t cat, uint32_t name)
{
	int64_t r = slice_begin(t, ts, track, cat, name);

	if (r >= 0) {
		struct ph_stack *st = stack_of(t, track);

		st->n--;
		ph_col_i64(&t->tables[PH_T_SLICE], SL_DUR)[r] = 0;
	}
	return r;
}

static uint64_t async_key(int64_t track, uint32_t name, int64_t cookie)
{
	return ((uint64_t)track * 0x9e3779b97f4a7c15ull) ^
	       ((uint64_t)name << 20) ^ ((uint64_t)cookie * 0xff51afd7ull);
}

static void async_begin(struct ph_trace *t, int64_t ts, int64_t track,
			uint32_t name, int64_t cookie)
{
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *sl = &t->tables[PH_T_SLICE];
	int64_t r = ph_table_add(sl);

	if (r < 0)
		return;
	ph_col_i64(sl, SL_TS)[r] = ts;
	ph_col_i64(sl, SL_DUR)[r] = -1;
	ph_col_i64(sl, SL_TRACK)[r] = track;
	ph_col_str(sl, SL_NAME)[r] = name;
	ph_col_i32(sl, SL_DEPTH)[r] = 0;
	ph_col_i64(sl, SL_COOKIE)[r] = cookie;
	if (ph_trace_str(t,
			 ph_col_str(&t->tables[PH_T_TRACK], TR_NAME)[track]) &&
	    ph_col_str(&t->tables[PH_T_TRACK], TR_NAME)[track] != name)
		name = 0; /* G: the key is (track, cookie) as for H */
	if (!pv->async_open)
		pv->async_open = ph_intmap_new();
	if (pv->async_open)
		(void)ph_intmap_put(pv->async_open,
				    async_key(track, name, cookie),
				    (uint32_t)r);
}

static void async_end(struct ph_trace *t, int64_t ts, int64_t track,
		      uint32_t name, int64_t cookie)
{
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *sl = &t->tables[PH_T_SLICE];
	uint64_t key = async_key(track, name, cookie);
	uint32_t r;

	if (!pv->async_open || !ph_intmap_get(pv->async_open, key, &r) ||
	    r == UINT32_MAX - 1 || ph_col_i64(sl, SL_DUR)[r] != -1) {
		ph_trace_stat(t, "async_end_without_begin", 1);
		return;
	}
	ph_col_i64(sl, SL_DUR)[r] = ph_ts_span(ts, ph_col_i64(sl, SL_TS)[r]);
	ph_intmap_del(pv->async_open, key);
}

/* --- thread_state -------------------------------------------------------- */

static inline int64_t *ts_slot(struct ph_trace *t, int64_t utid)
{
	struct ph_trace_priv *pv = t->priv;

	if (utid >= 0 && (size_t)utid < pv->nts_open)
		return &pv->ts_open[utid];
	if (utid < 0 || grow_i64(&pv->ts_open, &pv->nts_open, (size_t)utid))
		return NULL;
	return &pv->ts_open[utid];
}

/* ph_trace_utid with the direct table's answer inline (read per event) */
static inline int64_t utid_of(struct ph_trace *t, int64_t tid)
{
	int64_t u = ph_utid_known(t->priv, tid);

	return u >= 0 ? u : ph_trace_utid(t, tid);
}

static void ts_close(struct ph_trace *t, int64_t *slot, int64_t ts)
{
	struct ph_table *tb = &t->tables[PH_T_TSTATE];

	if (*slot >= 0)
		ph_col_i64(tb, TS_DUR)[*slot] =
			ph_ts_span(ts, ph_col_i64(tb, TS_TS)[*slot]);
	*slot = -1;
}

static inline __attribute__((always_inline)) void
ts_open(struct ph_trace *t, int64_t *slot, int64_t ts, int64_t utid,
	uint32_t state, int32_t cpu, int64_t waker)
{
	struct ph_table *tb = &t->tables[PH_T_TSTATE];
	int64_t r = ph_table_add_full(tb);
	void *const *d;

	if (r < 0)
		return;
	/* the columns once, before the stores (which, without strict
	 * aliasing, would make the compiler reload them after each) */
	d = tb->data;
	{
		int64_t *c_ts = d[TS_TS], *c_dur = d[TS_DUR];
		int32_t *c_utid = d[TS_UTID], *c_waker = d[TS_WAKER];
		int32_t *c_cpu = d[TS_CPU], *c_iowait = d[TS_IOWAIT];
		uint32_t *c_state = d[TS_STATE], *c_blocked = d[TS_BLOCKED];

		c_ts[r] = ts;
		c_dur[r] = -1;
		c_cpu[r] = cpu;
		c_utid[r] = (int32_t)utid;
		c_state[r] = state;
		c_iowait[r] = PH_NULL_I32;
		c_blocked[r] = 0;
		c_waker[r] = waker == PH_NULL_I64 ? PH_NULL_I32 :
						    (int32_t)waker;
	}
	*slot = r;
}

/* prev_state values below this are turned into a string id once */
#define STATE_CACHE 8192

struct fin {
	uint32_t running, runnable, runnable_p;
	uint32_t cpufreq, cpuidle;
	uint32_t *state_cache;	  /* raw prev_state -> id + 1; NULL: none */
	struct ph_intmap *binder; /* transaction id -> BINDER_*, until taken */
};

static uint32_t state_id(struct ph_trace *t, int64_t raw);

/* state_id through the cache: one intern per distinct value, not per
 * switch (the intern's hash showed in profiles). */
static uint32_t state_of(struct ph_trace *t, struct fin *f, int64_t raw)
{
	uint32_t id;

	if (!f->state_cache || raw < 0 || raw >= STATE_CACHE)
		return state_id(t, raw);
	if (!f->state_cache[raw]) {
		id = state_id(t, raw);
		if (!id)
			return 0; /* no memory: not cached */
		f->state_cache[raw] = id + 1;
	}
	return f->state_cache[raw] - 1;
}

static bool is_runnable(const struct fin *f, uint32_t s)
{
	return s == f->running || s == f->runnable || s == f->runnable_p;
}

/* ph_trace_thread_set_name, inline: twice per switch */
static inline void set_name(struct ph_trace *t, int64_t utid, uint32_t s)
{
	struct ph_table *th = &t->tables[PH_T_THREAD];

	if (utid >= 0 && (size_t)utid < th->rows && s)
		ph_col_str(th, TH_NAME)[utid] = s;
}

static void do_switch(struct ph_trace *t, struct fin *f, const struct ph_tev *e)
{
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *sc = &t->tables[PH_T_SCHED];
	int64_t prev = e->a > 0 ? utid_of(t, e->a) : 0;
	int64_t next = utid_of(t, e->b);
	uint32_t state = state_of(t, f, e->v.d);
	int64_t r, *slot;

	if (e->a > 0 && e->s1)
		set_name(t, prev, e->s1);
	if (e->b && e->s2)
		set_name(t, next, e->s2);
	if (e->cpu >= pv->ncpu && grow_i64(&pv->cpu_sched, &pv->ncpu, e->cpu))
		return;
	r = pv->cpu_sched[e->cpu];
	if (r >= 0) {
		ph_col_i64(sc, SC_DUR)[r] =
			ph_ts_span(e->ts, ph_col_i64(sc, SC_TS)[r]);
		ph_col_str(sc, SC_END_STATE)[r] = state;
	}
	r = ph_table_add_full(sc);
	if (r < 0)
		return;
	{
		void *const *d = sc->data;
		int64_t *c_ts = d[SC_TS], *c_dur = d[SC_DUR];
		int32_t *c_utid = d[SC_UTID];
		int32_t *c_cpu = d[SC_CPU], *c_prio = d[SC_PRIO];
		uint32_t *c_end = d[SC_END_STATE];

		c_ts[r] = e->ts;
		c_dur[r] = -1;
		c_cpu[r] = e->cpu;
		c_utid[r] = (int32_t)next;
		c_end[r] = 0;
		c_prio[r] = e->c;
	}
	pv->cpu_sched[e->cpu] = r;

	if (e->a > 0 && (slot = ts_slot(t, prev))) {
		ts_close(t, slot, e->ts);
		ts_open(t, slot, e->ts, prev, state, PH_NULL_I32, PH_NULL_I64);
	}
	if (e->b && (slot = ts_slot(t, next))) {
		ts_close(t, slot, e->ts);
		ts_open(t, slot, e->ts, next, f->running, e->cpu, PH_NULL_I64);
	}
}

static void do_waking(struct ph_trace *t, struct fin *f, const struct ph_tev *e)
{
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *tb = &t->tables[PH_T_TSTATE];
	int64_t utid, *slot, waker = PH_NULL_I64;

	if (e->a <= 0)
		return;
	if (e->c == -2) { /* compact_sched: whoever runs on that CPU */
		if (e->cpu < pv->ncpu && pv->cpu_sched[e->cpu] >= 0)
			waker = ph_col_i32(&t->tables[PH_T_SCHED],
					   SC_UTID)[pv->cpu_sched[e->cpu]];
	} else if (e->c > 0) {
		waker = utid_of(t, e->c);
	}
	utid = utid_of(t, e->a);
	if (e->s1 && !ph_col_str(&t->tables[PH_T_THREAD], TH_NAME)[utid])
		ph_trace_thread_set_name(t, utid, e->s1);
	slot = ts_slot(t, utid);
	if (!slot)
		return;
	if (*slot >= 0 && is_runnable(f, ph_col_str(tb, TS_STATE)[*slot]))
		return;
	ts_close(t, slot, e->ts);
	ts_open(t, slot, e->ts, utid, f->runnable, PH_NULL_I32, waker);
}

static void do_blocked(struct ph_trace *t, struct fin *f,
		       const struct ph_tev *e)
{
	struct ph_table *tb = &t->tables[PH_T_TSTATE];
	int64_t *slot = ts_slot(t, utid_of(t, e->a));

	if (!slot || *slot < 0 ||
	    is_runnable(f, ph_col_str(tb, TS_STATE)[*slot]))
		return;
	ph_col_i32(tb, TS_IOWAIT)[*slot] = e->b;
	ph_col_str(tb, TS_BLOCKED)[*slot] = e->s1;
}

static void do_print(struct ph_trace *t, const struct ph_tev *e)
{
	const char *buf = ph_trace_str(t, e->s1);
	struct ph_atrace at;
	int64_t utid, upid, track;
	uint32_t name;

	if (!buf)
		return;
	if (ph_atrace_parse(buf, strlen(buf), &at)) {
		/* not atrace: kernel prints, clock sync markers, ... */
		if (buf[0] && buf[1] == '|')
			ph_trace_stat(t, "atrace_malformed", 1);
		else
			ph_trace_stat(t, "print_not_atrace", 1);
		return;
	}
	ph_trace_stat(t, "atrace_events", 1);
	utid = ph_trace_utid(t, e->a);
	if (at.tgid > 0)
		ph_trace_thread_set_pid(t, utid, at.tgid);
	upid = at.tgid > 0 ? ph_trace_upid(t, at.tgid) : PH_NULL_I64;
	name = at.name ? ph_trace_intern(t, at.name, at.name_len) : 0;
	switch (at.op) {
	case PH_AT_B:
		slice_begin(t, e->ts, ph_trace_thread_track(t, utid), 0, name);
		break;
	case PH_AT_E:
		slice_end(t, e->ts, ph_trace_thread_track(t, utid));
		break;
	case PH_AT_I:
		slice_instant(t, e->ts, ph_trace_thread_track(t, utid), 0,
			      name);
		break;
	case PH_AT_C:
		track = ph_trace_keyed_track(t, PH_TK_COUNTER, name, upid,
					     PH_NULL_I64);
		ph_trace_counter(t, e->ts, track, at.value);
		break;
	case PH_AT_S:
	case PH_AT_F:
		track = ph_trace_keyed_track(t, PH_TK_PROCESS, name, upid,
					     PH_NULL_I64);
		if (at.op == PH_AT_S)
			async_begin(t, e->ts, track, name, at.cookie);
		else
			async_end(t, e->ts, track, name, at.cookie);
		break;
	case PH_AT_N:
	case PH_AT_G:
	case PH_AT_H:
		track = ph_trace_keyed_track(t, PH_TK_PROCESS,
					     ph_trace_intern(t, at.track,
							     at.track_len),
					     upid, PH_NULL_I64);
		/* G and H pair on (track, cookie): H carries no name */
		if (at.op == PH_AT_N)
			slice_instant(t, e->ts, track, 0, name);
		else if (at.op == PH_AT_G)
			async_begin(t, e->ts, track, name, at.cookie);
		else
			async_end(t, e->ts, track, 0, at.cookie);
		break;
	}
}

/* What a binder transaction id was sent as, until a thread receives it. */
enum { BINDER_CALL = 1, BINDER_ONEWAY, BINDER_REPLY };

/* Ends the innermost slice of track if it is named name; else counts it
 * (a binder event the trace lost its partner of must not close an atrace
 * slice). */
static void slice_end_named(struct ph_trace *t, int64_t ts, int64_t track,
			    uint32_t name)
{
	struct ph_stack *st = stack_of(t, track);

	if (!st || !st->n ||
	    ph_col_str(&t->tables[PH_T_SLICE], SL_NAME)[st->rows[st->n - 1]] !=
		    name) {
		ph_trace_stat(t, "binder_unmatched", 1);
		return;
	}
	slice_end(t, ts, track);
}

/*
 * Binder ftrace events as the field's trace processor slices them: a call
 * opens "binder transaction" on the caller's thread; the thread that
 * receives it opens "binder reply" until it sends the reply; the caller's
 * "binder transaction" ends when it receives the reply.  A one-way call
 * (flags & TF_ONE_WAY, 0x01) is an instant "binder transaction async" on
 * the caller and "binder async rcv" on the receiver.
 */
static void do_binder(struct ph_trace *t, struct fin *f, const struct ph_tev *e)
{
	int64_t track = ph_trace_thread_track(t, ph_trace_utid(t, e->a));
	uint32_t cat = ph_trace_intern(t, "binder", 6);
	uint32_t how;

	if (!f->binder && !(f->binder = ph_intmap_new()))
		return;
	if (e->kind == PH_EV_BINDER_TXN) {
		if (e->b) {
			how = BINDER_REPLY;
			slice_end_named(t, e->ts, track,
					ph_trace_intern(t, "binder reply", 12));
		} else if (e->c & 0x01) {
			how = BINDER_ONEWAY;
			slice_instant(
				t, e->ts, track, cat,
				ph_trace_intern(t, "binder transaction async",
						24));
		} else {
			how = BINDER_CALL;
			slice_begin(t, e->ts, track, cat,
				    ph_trace_intern(t, "binder transaction",
						    18));
		}
		(void)ph_intmap_put(f->binder, (uint64_t)e->v.d, how);
		return;
	}
	/* a deleted id reads back as UINT32_MAX - 1: taken already */
	if (!ph_intmap_get(f->binder, (uint64_t)e->v.d, &how) ||
	    how < BINDER_CALL || how > BINDER_REPLY) {
		ph_trace_stat(t, "binder_unmatched", 1);
		return;
	}
	ph_intmap_del(f->binder, (uint64_t)e->v.d);
	if (how == BINDER_CALL)
		slice_begin(t, e->ts, track, cat,
			    ph_trace_intern(t, "binder reply", 12));
	else if (how == BINDER_ONEWAY)
		slice_instant(t, e->ts, track, cat,
			      ph_trace_intern(t, "binder async rcv", 16));
	else
		slice_end_named(t, e->ts, track,
				ph_trace_intern(t, "binder transaction", 18));
}

static void do_event(struct ph_trace *t, struct fin *f, const struct ph_tev *e)
{
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *th = &t->tables[PH_T_THREAD];
	int64_t utid;

	if (e->kind >= PH_EV_TE_BEGIN && e->kind <= PH_EV_TE_INSTANT &&
	    e->a < 0) {
		struct ph_tev copy = *e;
		uint32_t v;

		if (!ph_intmap_get(t->uuid_track, (uint64_t)e->v.d, &v)) {
			ph_trace_stat(t, "track_event_no_track", 1);
			return;
		}
		copy.a = (int32_t)v;
		do_event(t, f, &copy);
		return;
	}
	switch (e->kind) {
	case PH_EV_SWITCH: do_switch(t, f, e); break;
	case PH_EV_WAKEUP:
		if (pv->have_waking)
			break;
		/* fall through */
	case PH_EV_WAKING:
	case PH_EV_WAKEUP_NEW: do_waking(t, f, e); break;
	case PH_EV_BLOCKED: do_blocked(t, f, e); break;
	case PH_EV_PRINT: do_print(t, e); break;
	case PH_EV_BINDER_TXN:
	case PH_EV_BINDER_RECV: do_binder(t, f, e); break;
	case PH_EV_CPUFREQ:
	case PH_EV_CPUIDLE:
		ph_trace_counter(t, e->ts,
				 ph_trace_keyed_track(t, PH_TK_CPU_COUNTER,
						      e->kind == PH_EV_CPUFREQ ?
							      f->cpufreq :
							      f->cpuidle,
						      PH_NULL_I64, e->cpu),
				 (double)e->v.d);
		break;
	case PH_EV_EXIT:
		utid = ph_trace_utid(t, e->a);
		ph_col_i64(th, TH_END)[utid] = e->ts;
		if (e->b > 0)
			ph_trace_thread_set_pid(t, utid, e->b);
		if (ph_col_i64(th, TH_MAIN)[utid] == 1) {
			int64_t upid = ph_col_i64(th, TH_UPID)[utid];

			ph_col_i64(&t->tables[PH_T_PROCESS], P_END)[upid] =
				e->ts;
		}
		break;
	case PH_EV_FREE:
		/* the tid may be reused from here on */
		if (e->a)
			ph_trace_utid_forget(t, e->a);
		break;
	case PH_EV_NEWTASK: {
		int64_t parent = ph_trace_utid(t, e->b), upid;

		upid = ph_col_i64(th, TH_UPID)[parent];
		ph_trace_utid_forget(t, e->a);
		utid = ph_trace_utid(t, e->a);
		ph_col_i64(th, TH_START)[utid] = e->ts;
		ph_trace_thread_set_name(t, utid, e->s1);
		if (e->v.d & 0x10000) { /* CLONE_THREAD */
			if (upid != PH_NULL_I64) {
				ph_col_i64(th, TH_UPID)[utid] = upid;
				ph_col_i64(th, TH_MAIN)[utid] = 0;
			}
		} else {
			int64_t np;

			ph_intmap_del(t->pid_upid, (uint64_t)e->a);
			ph_trace_thread_set_pid(t, utid, e->a);
			np = ph_col_i64(th, TH_UPID)[utid];
			ph_col_i64(&t->tables[PH_T_PROCESS], P_START)[np] =
				e->ts;
			ph_col_i64(&t->tables[PH_T_PROCESS], P_PARENT)[np] =
				upid;
		}
		break;
	}
	case PH_EV_RENAME:
		ph_trace_thread_set_name(t, ph_trace_utid(t, e->a), e->s1);
		break;
	case PH_EV_TE_BEGIN: slice_begin(t, e->ts, e->a, e->s2, e->s1); break;
	case PH_EV_TE_END: slice_end(t, e->ts, e->a); break;
	case PH_EV_TE_INSTANT:
		slice_instant(t, e->ts, e->a, e->s2, e->s1);
		break;
	case PH_EV_TE_COUNTER: ph_trace_counter(t, e->ts, e->a, e->v.f); break;
	case PH_EV_GCOUNTER:
		ph_trace_counter(t, e->ts,
				 ph_trace_keyed_track(t, PH_TK_COUNTER, e->s1,
						      PH_NULL_I64, PH_NULL_I64),
				 e->v.f);
		break;
	default: break;
	}
}

static void heap_down(struct run *h, size_t n, size_t i)
{
	struct run x = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && run_before(&h[c + 1], &h[c]))
			c++;
		if (!run_before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void heap_up(struct run *h, size_t i)
{
	struct run x = h[i];

	while (i && run_before(&x, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

/*
 * The events of the runs in time order (by timestamp, then position),
 * through a heap of the runs under way; a run joins it when the merge
 * reaches its first event, so the heap holds only the runs that overlap.
 */
static int run_merged(struct ph_trace *t, struct fin *f, struct run *runs,
		      size_t nruns)
{
	const struct ph_tev *ev = t->ev;
	bool hw = ((struct ph_trace_priv *)t->priv)->have_waking;
	struct run *h = malloc(nruns * sizeof(*h));
	size_t hn = 0, np = 0;

	if (!h)
		return PH_ENOMEM;
	for (;;) {
		uint32_t i;

		while (np < nruns && (!hn || run_before(&runs[np], &h[0]))) {
			h[hn] = runs[np++];
			heap_up(h, hn++);
		}
		if (!hn)
			break;
		i = h[0].cur;
		do_event(t, f, &ev[i]);
		do
			i++;
		while (i < h[0].end && skipped(&ev[i], hw));
		if (i < h[0].end) {
			h[0].cur = i;
			h[0].ts = ev[i].ts;
		} else {
			h[0] = h[--hn];
		}
		heap_down(h, hn, 0);
	}
	free(h);
	return 0;
}

/*
 * Room for the rows the events can make, from their kinds, so the big
 * tables grow once instead of doubling (each doubling copied the columns
 * and, before trimming, left up to half of them allocated and unused).
 * Upper bounds: a switch makes one sched row and at most two thread
 * states, a waking at most one.  Untouched capacity costs no pages, and
 * ph_trace_finish trims it at the end.
 */
static void reserve_rows(struct ph_trace *t, const size_t *n)
{
	struct ph_trace_priv *pv = t->priv;

	(void)ph_table_reserve(&t->tables[PH_T_SCHED],
			       t->tables[PH_T_SCHED].rows + n[PH_EV_SWITCH]);
	(void)ph_table_reserve(&t->tables[PH_T_TSTATE],
			       t->tables[PH_T_TSTATE].rows +
				       2 * n[PH_EV_SWITCH] + n[PH_EV_WAKING] +
				       n[PH_EV_WAKEUP_NEW] +
				       (pv->have_waking ? 0 : n[PH_EV_WAKEUP]));
	(void)ph_table_reserve(&t->tables[PH_T_COUNTER],
			       t->tables[PH_T_COUNTER].rows + n[PH_EV_CPUFREQ] +
				       n[PH_EV_CPUIDLE] + n[PH_EV_TE_COUNTER] +
				       n[PH_EV_PRINT] + n[PH_EV_GCOUNTER]);
	(void)ph_table_reserve(&t->tables[PH_T_SLICE],
			       t->tables[PH_T_SLICE].rows + n[PH_EV_TE_BEGIN] +
				       n[PH_EV_TE_INSTANT] + n[PH_EV_PRINT] +
				       n[PH_EV_BINDER_TXN] +
				       n[PH_EV_BINDER_RECV]);
}

/*
 * A process no packet named (ftrace text carries only thread names) is
 * named after its main thread, as the field's trace processor does, so
 * `--process NAME` finds an app in a recording of this machine.
 */
static void name_processes(struct ph_trace *t)
{
	struct ph_table *p = &t->tables[PH_T_PROCESS];
	struct ph_table *th = &t->tables[PH_T_THREAD];

	for (size_t u = 0; u < th->rows; u++) {
		int64_t upid = ph_col_i64(th, TH_UPID)[u];

		if (ph_col_i64(th, TH_MAIN)[u] == 1 && upid >= 0 &&
		    (size_t)upid < p->rows && !ph_col_str(p, P_NAME)[upid] &&
		    ph_col_str(th, TH_NAME)[u])
			ph_col_str(p, P_NAME)[upid] =
				ph_col_str(th, TH_NAME)[u];
	}
}

/*
 * Perfetto packets stamped 0 (t->ts0_packets) were kept out of the bounds:
 * one such packet in a trace recorded 15 days after boot would stretch it
 * to 1,316,803 s.  They join the bounds when the rest of the trace lies
 * nearer to 0 than it is long (a trace that really starts near 0);
 * otherwise they are set aside, and `packets_ts0_set_aside` says so.
 */
static void set_aside_ts0(struct ph_trace *t)
{
	if (!t->ts0_packets)
		return;
	if (t->first_ts == INT64_MAX || t->first_ts <= t->last_ts - t->first_ts)
		ph_trace_see_ts(t, 0);
	else
		ph_trace_stat(t, "packets_ts0_set_aside", t->ts0_packets);
}

int ph_trace_finish(struct ph_trace *t)
{
	struct ph_trace_priv *pv = t->priv;
	struct fin f;
	struct plan pl;
	size_t kinds[PH_EV_NKINDS] = { 0 };
	int rc;

	f.running = ph_trace_intern(t, "Running", 7);
	f.runnable = ph_trace_intern(t, "R", 1);
	f.runnable_p = ph_trace_intern(t, "R+", 2);
	f.cpufreq = ph_trace_intern(t, "cpufreq", 7);
	f.cpuidle = ph_trace_intern(t, "cpuidle", 7);
	f.state_cache = calloc(STATE_CACHE, sizeof(*f.state_cache));
	f.binder = NULL; /* made by the first binder event */
	rc = ph_trace_sort_events(t, kinds, &pl);
	if (rc) {
		free(f.state_cache);
		return rc;
	}
	reserve_rows(t, kinds);
	/* (ph_trace_sort_events saw every timestamp: the bounds are set) */
	if (pl.runs) {
		rc = run_merged(t, &f, pl.runs, pl.nruns);
	} else {
		for (size_t i = 0; i < pl.n; i++)
			do_event(t, &f, &t->ev[pl.order ? pl.order[i] : i]);
	}
	free(pl.order);
	free(pl.runs);
	free(f.state_cache);
	ph_intmap_free(f.binder);
	if (rc)
		return rc;
	ph_trace_big_free(t->ev, t->evcap * sizeof(*t->ev));
	t->ev = NULL;
	t->nev = t->evcap = 0;
	set_aside_ts0(t);
	if (t->first_ts == INT64_MAX)
		t->first_ts = t->last_ts = 0;
	ph_trace_stat(t, "slices_unfinished", 0);
	for (size_t i = 0; i < pv->nstacks; i++)
		if (pv->stacks[i].n)
			ph_trace_stat(t, "slices_unfinished", pv->stacks[i].n);
	name_processes(t);
	for (int i = 0; i < PH_T_COUNT; i++)
		ph_table_trim(&t->tables[i]);
	return 0;
}
