/* SPDX-License-Identifier: Apache-2.0 */
/*
 * startup.c: startup-slow and startup-not-fully-drawn (docs/protocol.md
 * §6).  A cold launch (cold, or our lukewarm) from fork (originKind absent
 * or "fork", as the published host reads it) that took more than 5000 ms
 * to its first frame is a warning naming the widest phase, and the db and
 * stall findings inside the launch, which are the usual reasons.  A cold
 * launch that never called reportFullyDrawn is a note: without it the
 * launch's real end is unknown.  A report that came after the startup
 * event went out arrives as a fully_drawn event (ours) with the launch's
 * originMs, and counts for that launch.  This family runs last, so the db
 * and stall findings already exist when it emits.
 */
#include "ph_common.h"
#include "family.h"

#define SLOW_MS 5000

struct launch {
	int64_t t, origin, first_frame, total;
	bool fully_drawn, fork;
	const char *cls, *phase;
};

struct startup_state {
	struct launch *v;
	size_t n, alloc;
};

/* A late fully_drawn: the launch it names by originMs is fully drawn. */
static void late_fully_drawn(struct startup_state *s, const struct ph_event *ev)
{
	int64_t origin;

	if (!ph_ev_int(ev, "originMs", &origin) ||
	    !ph_ev_get(ev, "reportFullyDrawnMs"))
		return;
	for (size_t i = s->n; i-- > 0;)
		if (s->v[i].origin == origin) {
			s->v[i].fully_drawn = true;
			return;
		}
}

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct startup_state *s = p;
	struct launch *x;

	if (ev->kind == PH_KIND_FULLY_DRAWN)
		late_fully_drawn(s, ev);
	if (ev->kind != PH_KIND_STARTUP)
		return;
	if (!ph_ev_streq(ev, "classification", "cold") &&
	    !ph_ev_streq(ev, "classification", "lukewarm"))
		return;
	if (s->n == s->alloc && PH_GROW(s->v, s->alloc, s->n + 1, 4))
		return;
	x = &s->v[s->n++];
	memset(x, 0, sizeof(*x));
	x->t = ev->t;
	if (!ph_ev_int(ev, "originMs", &x->origin))
		x->origin = ev->t;
	if (!ph_ev_int(ev, "firstFrameMs", &x->first_frame))
		x->first_frame = 0;
	if (!ph_ev_int(ev, "totalMs", &x->total))
		x->total = x->first_frame ? x->first_frame - x->origin : 0;
	x->fully_drawn = ph_ev_get(ev, "reportFullyDrawnMs") != NULL;
	x->fork = !ph_ev_get(ev, "originKind") ||
		  ph_ev_streq(ev, "originKind", "fork");
	x->cls = ph_keep_field(c, ev, "classification");
	x->phase = ph_keep_field(c, ev, "dominantPhase");
}

static void emit(struct ph_fctx *c, void *p)
{
	struct startup_state *s = p;

	for (size_t i = 0; i < s->n; i++) {
		const struct launch *x = &s->v[i];
		int64_t end = x->first_frame ? x->first_frame :
					       x->origin + x->total;
		struct ph_finding *f;
		struct ph_jw *jw;

		if (x->fork && x->total > SLOW_MS) {
			const struct ph_analysis *a = c->a;
			size_t na = a->nf;
			char refs[300];
			size_t len = 0;

			refs[0] = '\0';
			for (size_t j = 0; j < na && len + 60 < sizeof(refs);
			     j++) {
				const struct ph_finding *g = &a->f[j];

				if ((strcmp(g->id, "db-on-main-thread") &&
				     strcmp(g->id, "main-thread-stall")) ||
				    g->to < x->origin || g->from > end)
					continue;
				snprintf(refs + len, sizeof(refs) - len, "%s%s",
					 len ? ", " : "", g->id);
				len = strlen(refs);
			}
			f = ph_fnd_new(c, "startup-slow", PH_SEV_WARNING,
				       PH_CONF_OBSERVED, x->origin, end);
			if (!f)
				return;
			ph_fnd_title(c, f,
				     "Cold launch took %" PRId64
				     " ms to its first frame",
				     x->total);
			ph_fnd_detail(c, f, "widest phase: %s",
				      x->phase ? x->phase : "unknown");
			if (len)
				ph_fnd_detail(c, f, "inside the launch: %s",
					      refs);
			ph_fnd_key(c, f, "startup-slow:%" PRId64, x->origin);
			jw = ph_fnd_evidence_begin(c);
			ph_jw_kv_str(jw, "classification", x->cls);
			ph_jw_kv_int(jw, "totalMs", x->total);
			ph_jw_kv_int(jw, "originMs", x->origin);
			if (x->phase)
				ph_jw_kv_str(jw, "dominantPhase", x->phase);
			if (len)
				ph_jw_kv_str(jw, "findingsInside", refs);
			ph_fnd_evidence_end(c, f);
		}
		if (!x->fully_drawn) {
			f = ph_fnd_new(c, "startup-not-fully-drawn",
				       PH_SEV_NOTE, PH_CONF_OBSERVED, x->origin,
				       x->t);
			if (!f)
				return;
			ph_fnd_title(c, f,
				     "The %s launch never reported fully "
				     "drawn",
				     x->cls);
			ph_fnd_detail(c, f,
				      "call porthole_report_fully_drawn() "
				      "(reportFullyDrawn) when the first "
				      "screen has its content");
			ph_fnd_key(c, f, "startup-not-fully-drawn:%" PRId64,
				   x->origin);
			jw = ph_fnd_evidence_begin(c);
			ph_jw_kv_str(jw, "classification", x->cls);
			ph_jw_kv_int(jw, "originMs", x->origin);
			ph_jw_kv_int(jw, "totalMs", x->total);
			ph_fnd_evidence_end(c, f);
		}
	}
}

static void release(void *p)
{
	free(((struct startup_state *)p)->v);
}

const struct ph_family ph_family_startup = {
	.name = "startup",
	.ids = { "startup-slow", "startup-not-fully-drawn" },
	.kinds = PH_KIND_BIT(STARTUP) | PH_KIND_BIT(FULLY_DRAWN),
	.state_size = sizeof(struct startup_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
