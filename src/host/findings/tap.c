/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tap.c: tap-slow.  From a tap (down and up) to the first frame presented
 * after it: over 100 ms a person notices (a note), over 500 ms they tap
 * again (a warning).  The frame that answered and its worst phase are
 * named, because that phase is what to fix.  That frame is named by the
 * time it ended (was presented): the tap's t plus tapMs.  Its frameT is
 * when it began, which may be before the tap itself.
 */
#include "ph_common.h"
#include "family.h"

#define NOTE_MS 100
#define WARN_MS 500

struct tap_state {
	int64_t count, from, to, last_from, last_to;
	int64_t worst_ms, worst_at, worst_frame_t, worst_frame_end;
	const char *target, *phase;
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct tap_state *s = p;
	int64_t ms;

	(void)c;
	if (ev->kind != PH_KIND_INPUT || !ph_ev_streq(ev, "action", "tap") ||
	    !ph_ev_int(ev, "tapMs", &ms) || ms <= NOTE_MS)
		return;
	if (!s->count++ || ev->t < s->from)
		s->from = ev->t;
	if (ev->t + ms > s->to)
		s->to = ev->t + ms;
	s->last_from = ev->t;
	s->last_to = ev->t + ms;
	if (ms > s->worst_ms) {
		s->worst_ms = ms;
		s->worst_at = ev->t;
		s->worst_frame_end = ev->t + ms;
		if (!ph_ev_int(ev, "frameT", &s->worst_frame_t))
			s->worst_frame_t = 0;
		s->target = ph_keep_field(c, ev, "target");
		s->phase = ph_keep_field(c, ev, "worstPhase");
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct tap_state *s = p;
	struct ph_finding *f;
	struct ph_jw *jw;

	if (!s->count)
		return;
	f = ph_fnd_new(c, "tap-slow",
		       s->worst_ms > WARN_MS ? PH_SEV_WARNING : PH_SEV_NOTE,
		       PH_CONF_OBSERVED, s->from, s->to);
	if (!f)
		return;
	f->count = s->count;
	f->last_from = s->last_from;
	f->last_to = s->last_to;
	ph_fnd_title(c, f, "A tap took %" PRId64 " ms to show on screen",
		     s->worst_ms);
	ph_fnd_detail(c, f,
		      "tap%s%s at t=%" PRId64
		      "; answered by the frame that ended at t=%" PRId64
		      ", worst phase %s",
		      s->target ? " on " : "", s->target ? s->target : "",
		      s->worst_at, s->worst_frame_end,
		      s->phase ? s->phase : "unknown");
	if (s->count > 1)
		ph_fnd_detail(c, f, "%" PRId64 " slow taps", s->count);
	jw = ph_fnd_evidence_begin(c);
	ph_jw_kv_int(jw, "tapMs", s->worst_ms);
	ph_jw_kv_int(jw, "at", s->worst_at);
	if (s->worst_frame_t)
		ph_jw_kv_int(jw, "frameT", s->worst_frame_t);
	ph_jw_kv_int(jw, "frameEndT", s->worst_frame_end);
	if (s->phase)
		ph_jw_kv_str(jw, "worstPhase", s->phase);
	if (s->target)
		ph_jw_kv_str(jw, "target", s->target);
	ph_jw_kv_int(jw, "count", s->count);
	ph_fnd_evidence_end(c, f);
}

const struct ph_family ph_family_tap = {
	.name = "tap-slow",
	.ids = { "tap-slow" },
	.kinds = PH_KIND_BIT(INPUT),
	.state_size = sizeof(struct tap_state),
	.event = on_event,
	.emit = emit,
};
