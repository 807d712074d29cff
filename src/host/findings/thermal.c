/* SPDX-License-Identifier: Apache-2.0 */
/*
 * thermal.c: thermal-throttling.  A device at `severe` or worse for at
 * least 10 s while frames were dropped is a warning, correlated: the heat
 * may have slowed the frames, or the same heavy work caused both.
 * Episodes are tracked as device:thermal events arrive; an episode still
 * open at the end of the window runs to its last event (of any kind: the
 * analysis's last_t).
 */
#include "ph_common.h"
#include "family.h"

#define MIN_MS 10000

struct episode {
	int64_t from, to, frames;
	const char *status;
};

struct thermal_state {
	bool hot;
	struct episode cur;
	struct episode best; /* the longest closed episode with frames */
	int64_t episodes;
};

static bool severe(const char *s)
{
	return !strcmp(s, "severe") || !strcmp(s, "critical") ||
	       !strcmp(s, "emergency") || !strcmp(s, "shutdown");
}

static void close_episode(struct thermal_state *s, int64_t t)
{
	s->cur.to = t;
	if (s->cur.to - s->cur.from >= MIN_MS && s->cur.frames > 0) {
		s->episodes++;
		if (s->cur.to - s->cur.from > s->best.to - s->best.from)
			s->best = s->cur;
	}
	s->hot = false;
}

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct thermal_state *s = p;
	char status[32];

	if (ev->kind == PH_KIND_FRAME && s->hot) {
		s->cur.frames++;
		return;
	}
	if (ev->kind != PH_KIND_DEVICE || !ph_ev_streq(ev, "kind", "thermal"))
		return;
	ph_ev_strcpy(ev, "status", status, sizeof(status));
	if (severe(status) && !s->hot) {
		s->hot = true;
		s->cur = (struct episode){ .from = ev->t,
					   .status = ph_keep(c, status,
							     strlen(status)) };
	} else if (!severe(status) && s->hot) {
		close_episode(s, ev->t);
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct thermal_state s = *(struct thermal_state *)p; /* emit must not
								change the state
							      */
	struct ph_finding *f;
	struct ph_jw *jw;

	if (s.hot)
		close_episode(&s, c->a->last_t);
	if (!s.episodes)
		return;
	f = ph_fnd_new(c, "thermal-throttling", PH_SEV_WARNING,
		       PH_CONF_CORRELATED, s.best.from, s.best.to);
	if (!f)
		return;
	f->count = s.episodes;
	ph_fnd_title(c, f,
		     "Device ran %s for %" PRId64 " s while frames were "
		     "dropped",
		     s.best.status, (s.best.to - s.best.from) / 1000);
	ph_fnd_detail(c, f,
		      "%" PRId64 " late frames inside; heat and jank together, "
		      "ordering, not proof",
		      s.best.frames);
	jw = ph_fnd_evidence_begin(c);
	ph_jw_kv_str(jw, "status", s.best.status);
	ph_jw_kv_int(jw, "durationMs", s.best.to - s.best.from);
	ph_jw_kv_int(jw, "lateFrames", s.best.frames);
	ph_fnd_evidence_end(c, f);
}

const struct ph_family ph_family_thermal = {
	.name = "thermal-throttling",
	.ids = { "thermal-throttling" },
	.kinds = PH_KIND_BIT(FRAME) | PH_KIND_BIT(DEVICE),
	.state_size = sizeof(struct thermal_state),
	.event = on_event,
	.emit = emit,
};
