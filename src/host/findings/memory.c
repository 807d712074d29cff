/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memory.c: memory-pressure.  The system asked the app for memory back
 * (device:trimMemory while running, or device:lowMemory).  A warning when
 * it was urgent (lowMemory, `running critical`, `complete`, raw level >=
 * 15), a note otherwise: the app should release caches either way.
 */
#include "ph_common.h"
#include "family.h"

struct memory_state {
	int64_t count, from, to, last_t, worst_raw;
	bool urgent, low_memory;
	const char *worst_level;
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct memory_state *s = p;
	int64_t raw = 0;
	bool low;

	if (ev->kind != PH_KIND_DEVICE)
		return;
	low = ph_ev_streq(ev, "kind", "lowMemory");
	if (!low && !ph_ev_streq(ev, "kind", "trimMemory"))
		return;
	/* ui hidden / background levels are housekeeping, not pressure. */
	if (!low && (ph_ev_streq(ev, "level", "ui hidden") ||
		     ph_ev_streq(ev, "level", "background")))
		return;
	if (!s->count++ || ev->t < s->from)
		s->from = ev->t;
	if (ev->t > s->to)
		s->to = ev->t;
	s->last_t = ev->t;
	if (low) {
		s->low_memory = s->urgent = true;
		raw = 80;
	} else {
		ph_ev_int(ev, "raw", &raw);
		if (raw >= 15 || ph_ev_streq(ev, "level", "running critical") ||
		    ph_ev_streq(ev, "level", "complete"))
			s->urgent = true;
	}
	if (!s->worst_level || raw > s->worst_raw) {
		s->worst_raw = raw;
		s->worst_level = low ? "lowMemory" :
				       ph_keep_field(c, ev, "level");
		if (!s->worst_level)
			s->worst_level = "unknown";
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct memory_state *s = p;
	struct ph_finding *f;
	struct ph_jw *jw;

	if (!s->count)
		return;
	f = ph_fnd_new(c, "memory-pressure",
		       s->urgent ? PH_SEV_WARNING : PH_SEV_NOTE,
		       PH_CONF_OBSERVED, s->from, s->to);
	if (!f)
		return;
	f->count = s->count;
	f->last_from = f->last_to = s->last_t;
	ph_fnd_title(c, f, "The system asked for memory back (%s)",
		     s->worst_level);
	ph_fnd_detail(c, f,
		      "%" PRId64 " request%s; release caches and "
		      "bitmaps when asked",
		      s->count, s->count == 1 ? "" : "s");
	jw = ph_fnd_evidence_begin(c);
	ph_jw_kv_int(jw, "count", s->count);
	ph_jw_kv_str(jw, "worstLevel", s->worst_level);
	ph_jw_kv_bool(jw, "lowMemory", s->low_memory);
	ph_fnd_evidence_end(c, f);
}

const struct ph_family ph_family_memory = {
	.name = "memory-pressure",
	.ids = { "memory-pressure" },
	.kinds = PH_KIND_BIT(DEVICE),
	.state_size = sizeof(struct memory_state),
	.event = on_event,
	.emit = emit,
};
