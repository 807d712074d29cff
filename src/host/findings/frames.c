/* SPDX-License-Identifier: Apache-2.0 */
/*
 * frames.c: frames-dropped.  Runtimes send only late frames.  Each late
 * frame's missed refreshes are counted in refreshes of the session's own
 * display: ceil(totalMs / budget) - 1, so a 400 ms freeze at 60 Hz is ~24
 * missed, not the 1 some runtimes report.  The budget comes from the
 * session's device profile, never from a 60 Hz default; only a session
 * with no profile at all falls back to the frames' own budgetMs.
 *
 * A late frame or two happens on any loaded machine, so the finding needs
 * an episode: at least MIN_FRAMES late frames missing MIN_MISSED refreshes
 * between them, or one frame that froze the screen for FREEZE_MS.  The
 * first frame of a window is expected to be slow and is not counted.
 */
#include "ph_common.h"
#include "family.h"

#include <math.h>

#define MIN_FRAMES 3
#define MIN_MISSED 12
#define FREEZE_MS  250

struct frames_state {
	int64_t janky, missed, from, to, last_t;
	int64_t worst_ms, worst_at, worst_missed;
	const char *worst_phase;
	double budget; /* the budget used, ms */
	bool budget_from_frame;
	struct ph_smap phases; /* worstPhase -> int64 count */
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct frames_state *s = p;
	int64_t total = 0, reported = 0, missed;
	double budget = ph_profile_budget_ms(c->profile), fb;
	char phase[32];
	int64_t *n;
	bool created;

	if (ev->kind != PH_KIND_FRAME || ph_ev_true(ev, "firstDraw"))
		return;
	if (!ph_ev_int(ev, "totalMs", &total))
		return;
	ph_ev_int(ev, "missedFrames", &reported);
	if (budget <= 0 && ph_ev_num(ev, "budgetMs", &fb) && fb > 0) {
		budget = fb;
		s->budget_from_frame = true;
	}
	missed = budget > 0 ? ph_missed_frames(total, budget) : reported;
	if (missed < 1)
		missed = 1; /* a frame sent as late missed at least one */
	s->budget = budget;
	if (!s->janky++ || ev->t < s->from)
		s->from = ev->t;
	if (ev->t + total > s->to)
		s->to = ev->t + total;
	s->missed += missed;
	s->last_t = ev->t;
	ph_ev_strcpy(ev, "worstPhase", phase, sizeof(phase));
	if (!phase[0])
		snprintf(phase, sizeof(phase), "unknown");
	n = ph_smap_get(c, &s->phases, phase, strlen(phase), sizeof(*n),
			&created);
	if (n)
		(*n)++;
	if (total > s->worst_ms) {
		s->worst_ms = total;
		s->worst_at = ev->t;
		s->worst_missed = missed;
		s->worst_phase = ph_keep(c, phase, strlen(phase));
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct frames_state *s = p;
	const char *common = "unknown";
	int64_t common_n = 0;
	struct ph_finding *f;
	struct ph_jw *jw;
	char hz[32];

	if (!s->janky ||
	    (!(s->janky >= MIN_FRAMES && s->missed >= MIN_MISSED) &&
	     s->worst_ms < FREEZE_MS))
		return;
	for (size_t i = 0; i < s->phases.n; i++) {
		int64_t n = *(int64_t *)s->phases.vals[i];

		if (n > common_n) {
			common_n = n;
			common = s->phases.keys[i];
		}
	}
	f = ph_fnd_new(c, "frames-dropped", PH_SEV_WARNING, PH_CONF_OBSERVED,
		       s->from, s->to);
	if (!f)
		return;
	f->count = s->janky;
	f->last_from = s->last_t;
	f->last_to = s->to;
	ph_fnd_title(c, f,
		     "%" PRId64 " frame%s late, %" PRId64 " refreshes missed",
		     s->janky, s->janky == 1 ? "" : "s", s->missed);
	if (c->profile->refresh_hz > 0)
		snprintf(hz, sizeof(hz), "%g Hz", c->profile->refresh_hz);
	else
		snprintf(hz, sizeof(hz), "no profile");
	ph_fnd_detail(c, f,
		      "worst: %" PRId64 " ms at t=%" PRId64 " (%" PRId64
		      " missed, %s); budget %.1f ms (%s)",
		      s->worst_ms, s->worst_at, s->worst_missed, s->worst_phase,
		      s->budget, hz);
	ph_fnd_detail(c, f,
		      "most common worst phase: %s (%" PRId64 " of %" PRId64
		      ")",
		      common, common_n, s->janky);
	jw = ph_fnd_evidence_begin(c);
	ph_jw_kv_int(jw, "lateFrames", s->janky);
	ph_jw_kv_int(jw, "missedRefreshes", s->missed);
	ph_jw_kv_double(jw, "budgetMs", round(s->budget * 1000) / 1000);
	if (c->profile->refresh_hz > 0)
		ph_jw_kv_double(jw, "refreshHz", c->profile->refresh_hz);
	ph_jw_kv_str(jw, "budgetSource",
		     s->budget_from_frame ? "frame" : "profile");
	ph_jw_key(jw, "worst");
	ph_jw_obj_begin(jw);
	ph_jw_kv_int(jw, "at", s->worst_at);
	ph_jw_kv_int(jw, "totalMs", s->worst_ms);
	ph_jw_kv_int(jw, "missedRefreshes", s->worst_missed);
	ph_jw_kv_str(jw, "worstPhase", s->worst_phase);
	ph_jw_obj_end(jw);
	ph_jw_kv_str(jw, "commonWorstPhase", common);
	ph_fnd_evidence_end(c, f);
}

static void release(void *p)
{
	ph_smap_release(&((struct frames_state *)p)->phases);
}

const struct ph_family ph_family_frames = {
	.name = "frames-dropped",
	.ids = { "frames-dropped" },
	.kinds = PH_KIND_BIT(FRAME),
	.state_size = sizeof(struct frames_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
