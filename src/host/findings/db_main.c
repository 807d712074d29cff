/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db_main.c: db-on-main-thread.  A query that ran on the main thread is an
 * error: the frame that had to wait for it is late whatever the query
 * costs on this device.  One finding per window: the worst query, with its
 * SQL, and how many ran there.
 *
 * A query on the main thread is reported however fast.  Those that
 * finished before a cold launch drew its first frame (opening and
 * migrating the database) are a finding of their own, keyed apart
 * ("db-on-main-thread:launch"), so the launch's work and the rest are
 * told apart and each is tracked across calls; startup-slow also names
 * them when the launch was slow.  Durations keep their precision: the
 * agent's elapsedNs where sent.
 */
#include "ph_common.h"
#include "family.h"

struct query {
	int64_t from, to;
	int64_t ns;   /* its duration: elapsedNs, else the span in ms */
	bool have_ns; /* elapsedNs was sent: sub-ms precision is real */
	const char *sql, *args, *thread;
};

struct launch {
	int64_t origin, first_frame;
};

struct db_main_state {
	struct query *q;
	size_t n, alloc;
	struct launch l[8];
	size_t nl;
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct db_main_state *s = p;
	int64_t o, ff;
	struct query *x;

	if (ev->kind == PH_KIND_STARTUP && s->nl < PH_ARRAY_SIZE(s->l) &&
	    (ph_ev_streq(ev, "classification", "cold") ||
	     ph_ev_streq(ev, "classification", "lukewarm")) &&
	    ph_ev_int(ev, "originMs", &o) &&
	    ph_ev_int(ev, "firstFrameMs", &ff)) {
		s->l[s->nl++] = (struct launch){ o, ff };
		return;
	}
	if (ev->kind != PH_KIND_DB_END || !ph_ev_on_main(ev))
		return;
	if (s->n == s->alloc && PH_GROW(s->q, s->alloc, s->n + 1, 32))
		return;
	x = &s->q[s->n++];
	x->from = c->from;
	x->to = c->to;
	x->have_ns = ph_ev_int(ev, "elapsedNs", &x->ns) && x->ns >= 0;
	if (!x->have_ns)
		x->ns = (c->to - c->from) * 1000000;
	x->sql = ph_keep_field(c, ev, "sql");
	if (!x->sql)
		x->sql = "?";
	x->args = ph_keep_field(c, ev, "args");
	x->thread = ph_keep_field(c, ev, "thread");
}

static bool in_launch(const struct db_main_state *s, const struct query *x)
{
	for (size_t i = 0; i < s->nl; i++)
		if (x->to >= s->l[i].origin && x->to <= s->l[i].first_frame)
			return true;
	return false;
}

/*
 * "12 ms", or "0.06 ms" under 10 ms when the agent timed it in ns: a
 * 57 µs query is not "0 ms" (a query on the main thread is reported
 * however fast).  A runtime that sends whole ms gets whole ms.
 */
static void fmt_ms(char *buf, size_t size, const struct query *x)
{
	int64_t ns = x->ns;

	if (x->have_ns && ns < 10 * 1000000LL)
		snprintf(buf, size, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%" PRId64 " ms", (ns + 500000) / 1000000);
}

/* One finding over the queries in or out of a launch (launch). */
static void emit_group(struct ph_fctx *c, struct db_main_state *s, bool launch)
{
	const struct query *worst = NULL;
	int64_t count = 0, from = 0, to = 0, others = 0;
	const char *distinct[10];
	int64_t dcount[10];
	size_t nd = 0, more = 0;
	struct ph_finding *f;
	struct ph_jw *jw;
	char ms[32];

	for (size_t i = 0; i < s->n; i++) {
		const struct query *x = &s->q[i];
		size_t k;

		if (in_launch(s, x) != launch) {
			others++;
			continue;
		}
		if (!count++ || x->from < from)
			from = x->from;
		if (x->to > to)
			to = x->to;
		if (!worst || x->ns > worst->ns)
			worst = x;
		for (k = 0; k < nd && strcmp(distinct[k], x->sql); k++)
			;
		if (k < nd)
			dcount[k]++;
		else if (nd < PH_ARRAY_SIZE(distinct))
			distinct[nd] = x->sql, dcount[nd++] = 1;
		else
			more++;
	}
	if (!count)
		return;
	f = ph_fnd_new(c, "db-on-main-thread", PH_SEV_ERROR, PH_CONF_OBSERVED,
		       from, to);
	if (!f)
		return;
	f->count = count;
	f->last_from = worst->from;
	f->last_to = worst->to;
	if (count == 1)
		ph_fnd_title(c, f, "A database query ran on the main thread%s",
			     launch ? " while the app launched" : "");
	else
		ph_fnd_title(c, f,
			     "%" PRId64 " database queries ran on the main "
			     "thread%s",
			     count, launch ? " while the app launched" : "");
	fmt_ms(ms, sizeof(ms), worst);
	ph_fnd_detail(c, f, "worst: %s: %.200s", ms, worst->sql);
	if (nd > 1)
		ph_fnd_detail(c, f, "%zu distinct statements", nd + more);
	if (launch)
		ph_fnd_detail(c, f,
			      "before the first frame: the launch waited for "
			      "them (startup-slow weighs the launch)");
	else if (others)
		ph_fnd_detail(c, f,
			      "%" PRId64 " more ran while the app launched "
			      "(a finding of their own)",
			      others);
	ph_fnd_key(c, f,
		   launch ? "db-on-main-thread:launch" : "db-on-main-thread");
	f->hint.text = ph_fnd_str(c, worst->sql);
	jw = ph_fnd_evidence_begin(c);
	ph_jw_kv_int(jw, "count", count);
	ph_jw_kv_int(jw, "worstMs", (worst->ns + 500000) / 1000000);
	ph_jw_kv_int(jw, "worstNs", worst->ns);
	ph_jw_kv_str(jw, "sql", worst->sql);
	if (worst->args)
		ph_jw_kv_str(jw, "args", worst->args);
	if (worst->thread)
		ph_jw_kv_str(jw, "thread", worst->thread);
	ph_jw_kv_int(jw, "at", worst->from);
	if (launch)
		ph_jw_kv_bool(jw, "launch", true);
	else if (others)
		ph_jw_kv_int(jw, "duringLaunch", others);
	ph_jw_key(jw, "statements");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < nd; i++) {
		ph_jw_obj_begin(jw);
		ph_jw_kv_str(jw, "sql", distinct[i]);
		ph_jw_kv_int(jw, "count", dcount[i]);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	ph_fnd_evidence_end(c, f);
}

static void emit(struct ph_fctx *c, void *p)
{
	emit_group(c, p, false);
	emit_group(c, p, true);
}

static void release(void *p)
{
	free(((struct db_main_state *)p)->q);
}

const struct ph_family ph_family_db_main = {
	.name = "db-on-main-thread",
	.ids = { "db-on-main-thread" },
	.kinds = PH_KIND_BIT(STARTUP) | PH_KIND_BIT(DB_END),
	.state_size = sizeof(struct db_main_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
