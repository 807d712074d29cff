/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recompose.c: recompose-hotspot.  A component that recomposes at least
 * PEAK_PER_S times within one second, and MIN_TOTAL times in the window,
 * is a note: grouped by component name (every row of a list is one
 * hotspot).  The state keys written within 32 ms before its passes are
 * named as the likely trigger, which is ordering, not proof: the finding is
 * `correlated` and says so.  A runtime's own triggeredBy is used when sent;
 * otherwise the family looks back at the state_write events itself.
 */
#include "ph_common.h"
#include "family.h"

#define PEAK_PER_S 30
#define MIN_TOTAL  60
#define LOOKBACK   32
#define NTRIG	   6
#define RING	   64

struct trig {
	const char *key;
	int64_t n;
};

struct comp {
	int64_t count, from, to, bucket, in_bucket, peak;
	const char *screen;
	struct ph_smap ids; /* instances */
	struct trig trig[NTRIG];
};

struct write {
	int64_t t;
	const char *keys[4];
};

struct recompose_state {
	struct ph_smap comps; /* name -> struct comp */
	struct write ring[RING];
	size_t ring_n;
};

static void count_trigger(struct comp *k, const char *key)
{
	int slot = -1;

	for (int i = 0; i < NTRIG; i++) {
		if (k->trig[i].key && !strcmp(k->trig[i].key, key)) {
			k->trig[i].n++;
			return;
		}
		if (!k->trig[i].key && slot < 0)
			slot = i;
	}
	if (slot >= 0) {
		k->trig[slot].key = key;
		k->trig[slot].n = 1;
	}
}

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct recompose_state *s = p;
	const struct ph_json *tb;
	const char *name, *id;
	size_t n, idn;
	struct comp *k;
	bool created;

	if (ev->kind == PH_KIND_STATE_WRITE) {
		const struct ph_json *keys = ph_ev_get(ev, "keys");
		struct write *w = &s->ring[s->ring_n++ % RING];

		memset(w, 0, sizeof(*w));
		w->t = ev->t;
		for (size_t i = 0;
		     ph_json_is(keys, PH_JSON_ARRAY) && i < keys->n && i < 4;
		     i++)
			if (ph_json_is(&keys->u.items[i], PH_JSON_STRING))
				w->keys[i] = ph_keep(c, keys->u.items[i].u.s,
						     keys->u.items[i].n);
		return;
	}
	if (ev->kind != PH_KIND_RECOMPOSE)
		return;
	if (!ph_ev_str(ev, "name", &name, &n) &&
	    !ph_ev_str(ev, "id", &name, &n))
		return;
	k = ph_smap_get(c, &s->comps, name, n, sizeof(*k), &created);
	if (!k)
		return;
	if (created) {
		k->from = ev->t;
		k->bucket = ev->t / 1000;
		k->screen = ph_keep_field(c, ev, "screen");
	}
	if (ph_ev_str(ev, "id", &id, &idn))
		(void)ph_smap_get(c, &k->ids, id, idn, sizeof(int64_t),
				  &created);
	if (ev->t < k->from)
		k->from = ev->t;
	if (ev->t > k->to)
		k->to = ev->t;
	k->count++;
	if (ev->t / 1000 != k->bucket) {
		k->bucket = ev->t / 1000;
		k->in_bucket = 0;
	}
	if (++k->in_bucket > k->peak)
		k->peak = k->in_bucket;
	/* Triggers: only worth tallying once it looks like a hotspot. */
	tb = ph_ev_get(ev, "triggeredBy");
	if (ph_json_is(tb, PH_JSON_ARRAY) && tb->n) {
		for (size_t i = 0; i < tb->n && i < 4; i++) {
			const struct ph_json *v = &tb->u.items[i];
			bool fresh = true;

			if (!ph_json_is(v, PH_JSON_STRING))
				continue;
			/* A key listed twice in one pass counts once. */
			for (size_t d = 0; d < i && fresh; d++)
				fresh = !ph_json_equal(&tb->u.items[d], v);
			if (!fresh)
				continue;
			for (int j = 0; j < NTRIG && fresh; j++)
				if (k->trig[j].key &&
				    ph_json_streq(v, k->trig[j].key)) {
					k->trig[j].n++;
					fresh = false;
				}
			if (fresh)
				count_trigger(k, ph_keep(c, v->u.s, v->n));
		}
		return;
	}
	{
		const char *seen[16];
		int ns = 0;

		/* Each key counts once per pass, however often it was written.
		 */
		for (size_t i = 0; i < RING && i < s->ring_n; i++) {
			const struct write *w = &s->ring[i];

			if (w->t > ev->t || ev->t - w->t > LOOKBACK)
				continue;
			for (int j = 0; j < 4 && w->keys[j]; j++) {
				bool dup = false;

				for (int q = 0; q < ns && !dup; q++)
					dup = !strcmp(seen[q], w->keys[j]);
				if (dup || ns == 16)
					continue;
				seen[ns++] = w->keys[j];
				count_trigger(k, w->keys[j]);
			}
		}
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct recompose_state *s = p;

	for (size_t i = 0; i < s->comps.n; i++) {
		struct comp *k = s->comps.vals[i];
		const char *name = s->comps.keys[i];
		struct ph_finding *f;
		struct ph_jw *jw;
		char trig[300];
		size_t len = 0;
		int order[NTRIG], no = 0;

		if (k->peak < PEAK_PER_S || k->count < MIN_TOTAL)
			continue;
		f = ph_fnd_new(c, "recompose-hotspot", PH_SEV_NOTE,
			       PH_CONF_CORRELATED, k->from, k->to);
		if (!f)
			return;
		f->count = k->count;
		f->last_from = k->to - 1000 > k->from ? k->to - 1000 : k->from;
		ph_fnd_title(c, f,
			     "%s recomposed %" PRId64 " times (%" PRId64
			     " in its busiest second)",
			     name, k->count, k->peak);
		/* Triggers by count, most first. */
		for (int j = 0; j < NTRIG; j++)
			if (k->trig[j].key)
				order[no++] = j;
		for (int a = 1; a < no; a++)
			for (int b = a;
			     b > 0 &&
			     k->trig[order[b]].n > k->trig[order[b - 1]].n;
			     b--) {
				int t = order[b];

				order[b] = order[b - 1];
				order[b - 1] = t;
			}
		trig[0] = '\0';
		for (int j = 0; j < no && len + 80 < sizeof(trig); j++) {
			snprintf(trig + len, sizeof(trig) - len,
				 "%s%.60s (%" PRId64 ")", j ? ", " : "",
				 k->trig[order[j]].key, k->trig[order[j]].n);
			len = strlen(trig);
		}
		if (no)
			ph_fnd_detail(c, f,
				      "state written within 32 ms before: %s; "
				      "ordering, not proof",
				      trig);
		else
			ph_fnd_detail(c, f,
				      "no state write seen within 32 ms "
				      "before its passes");
		if (k->ids.n > 1)
			ph_fnd_detail(c, f, "%zu instances%s%s", k->ids.n,
				      k->screen && *k->screen ? " on " : "",
				      k->screen ? k->screen : "");
		ph_fnd_key(c, f, "recompose-hotspot:%s", name);
		f->hint.fn = ph_fnd_str(c, name);
		jw = ph_fnd_evidence_begin(c);
		ph_jw_kv_str(jw, "component", name);
		if (k->screen)
			ph_jw_kv_str(jw, "screen", k->screen);
		ph_jw_kv_int(jw, "recompositions", k->count);
		ph_jw_kv_int(jw, "peakPerSecond", k->peak);
		ph_jw_kv_int(jw, "instances", (int64_t)k->ids.n);
		ph_jw_key(jw, "stateWrittenBefore");
		ph_jw_arr_begin(jw);
		for (int j = 0; j < no; j++) {
			ph_jw_obj_begin(jw);
			ph_jw_kv_str(jw, "key", k->trig[order[j]].key);
			ph_jw_kv_int(jw, "count", k->trig[order[j]].n);
			ph_jw_obj_end(jw);
		}
		ph_jw_arr_end(jw);
		ph_fnd_evidence_end(c, f);
	}
}

static void release(void *p)
{
	struct recompose_state *s = p;

	for (size_t i = 0; i < s->comps.n; i++)
		ph_smap_release(&((struct comp *)s->comps.vals[i])->ids);
	ph_smap_release(&s->comps);
}

const struct ph_family ph_family_recompose = {
	.name = "recompose-hotspot",
	.ids = { "recompose-hotspot" },
	.kinds = PH_KIND_BIT(STATE_WRITE) | PH_KIND_BIT(RECOMPOSE),
	.state_size = sizeof(struct recompose_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
