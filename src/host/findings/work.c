/* SPDX-License-Identifier: Apache-2.0 */
/*
 * work.c: work-retried.  A background job that failed and was retried is
 * a note: it may have succeeded in the end, but the user waited for the
 * retry.  One finding per work id, with its attempts and its last state.
 */
#include "ph_common.h"
#include "family.h"

struct job {
	int64_t retries, attempts, from, to;
	const char *name, *last_state, *error;
};

struct work_state {
	struct ph_smap jobs; /* workId -> struct job */
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct work_state *s = p;
	const char *wid;
	size_t n;
	struct job *j;
	bool created;
	int64_t from, to, att;

	if ((ev->kind != PH_KIND_WORK_START && ev->kind != PH_KIND_WORK_END) ||
	    !ph_ev_str(ev, "workId", &wid, &n))
		return;
	j = ph_smap_get(c, &s->jobs, wid, n, sizeof(*j), &created);
	if (!j)
		return;
	from = c->from;
	to = c->to;
	if (created)
		j->from = from;
	if (from < j->from)
		j->from = from;
	if (to > j->to)
		j->to = to;
	if (ph_ev_int(ev, "attempt", &att) && att > j->attempts)
		j->attempts = att;
	if (ev->kind == PH_KIND_WORK_START) {
		if (!j->name)
			j->name = ph_keep_field(c, ev, "name");
		return;
	}
	j->last_state = ph_keep_field(c, ev, "state");
	if (ph_ev_true(ev, "retrying") ||
	    ph_ev_streq(ev, "state", "ENQUEUED")) {
		j->retries++;
		j->error = ph_keep_field(c, ev, "error");
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct work_state *s = p;

	for (size_t i = 0; i < s->jobs.n; i++) {
		struct job *j = s->jobs.vals[i];
		const char *wid = s->jobs.keys[i];
		struct ph_finding *f;
		struct ph_jw *jw;

		if (!j->retries)
			continue;
		f = ph_fnd_new(c, "work-retried", PH_SEV_NOTE, PH_CONF_OBSERVED,
			       j->from, j->to);
		if (!f)
			return;
		f->count = j->retries;
		ph_fnd_title(c, f, "Job %s was retried %" PRId64 " time%s",
			     j->name ? j->name : wid, j->retries,
			     j->retries == 1 ? "" : "s");
		ph_fnd_detail(c, f, "%" PRId64 " attempt%s, last state %s%s%s",
			      j->attempts, j->attempts == 1 ? "" : "s",
			      j->last_state ? j->last_state : "unknown",
			      j->error ? "; failed with: " : "",
			      j->error ? j->error : "");
		ph_fnd_key(c, f, "work-retried:%s", wid);
		if (j->name)
			f->hint.fn = ph_fnd_str(c, j->name);
		jw = ph_fnd_evidence_begin(c);
		ph_jw_kv_str(jw, "workId", wid);
		if (j->name)
			ph_jw_kv_str(jw, "name", j->name);
		ph_jw_kv_int(jw, "attempts", j->attempts);
		ph_jw_kv_int(jw, "retries", j->retries);
		if (j->last_state)
			ph_jw_kv_str(jw, "lastState", j->last_state);
		if (j->error)
			ph_jw_kv_str(jw, "error", j->error);
		ph_fnd_evidence_end(c, f);
	}
}

static void release(void *p)
{
	ph_smap_release(&((struct work_state *)p)->jobs);
}

const struct ph_family ph_family_work = {
	.name = "work-retried",
	.ids = { "work-retried" },
	.kinds = PH_KIND_BIT(WORK_START) | PH_KIND_BIT(WORK_END),
	.state_size = sizeof(struct work_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
