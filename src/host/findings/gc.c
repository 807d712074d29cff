/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gc.c: gc-blocking.  A garbage collection that paused the app (ART's
 * blocking collections, sent by the Kotlin runtime's 1 s samples) for at
 * least a frame's budget: a note, a warning from 100 ms, when a person
 * sees it.
 */
#include "ph_common.h"
#include "family.h"

#define WARN_MS 100

struct gc_state {
	int64_t count, paused, worst, from, to, last_t;
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct gc_state *s = p;
	int64_t blocking = 0, ms = 0;
	double budget = ph_profile_budget_ms(c->profile);

	if (ev->kind != PH_KIND_GC || !ph_ev_int(ev, "pausedMs", &ms))
		return;
	ph_ev_int(ev, "blocking", &blocking);
	if (budget <= 0)
		budget = 16; /* the threshold only, never a frame budget */
	if (blocking <= 0 || (double)ms < budget)
		return;
	if (!s->count || ev->t < s->from)
		s->from = ev->t;
	if (ev->t > s->to)
		s->to = ev->t;
	s->count += blocking;
	s->paused += ms;
	s->last_t = ev->t;
	if (ms > s->worst)
		s->worst = ms;
}

static void emit(struct ph_fctx *c, void *p)
{
	struct gc_state *s = p;
	struct ph_finding *f;
	struct ph_jw *jw;

	if (!s->count)
		return;
	f = ph_fnd_new(c, "gc-blocking",
		       s->worst >= WARN_MS ? PH_SEV_WARNING : PH_SEV_NOTE,
		       PH_CONF_OBSERVED, s->from, s->to);
	if (!f)
		return;
	f->count = s->count;
	f->last_from = f->last_to = s->last_t;
	ph_fnd_title(c, f,
		     "Garbage collection paused the app for %" PRId64 " ms",
		     s->paused);
	ph_fnd_detail(c, f,
		      "%" PRId64 " blocking collection%s; worst sample %" PRId64
		      " ms",
		      s->count, s->count == 1 ? "" : "s", s->worst);
	jw = ph_fnd_evidence_begin(c);
	ph_jw_kv_int(jw, "blockingCollections", s->count);
	ph_jw_kv_int(jw, "pausedMs", s->paused);
	ph_jw_kv_int(jw, "worstMs", s->worst);
	ph_fnd_evidence_end(c, f);
}

const struct ph_family ph_family_gc = {
	.name = "gc-blocking",
	.ids = { "gc-blocking" },
	.kinds = PH_KIND_BIT(GC),
	.state_size = sizeof(struct gc_state),
	.event = on_event,
	.emit = emit,
};
