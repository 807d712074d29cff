/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strict.c: strict-violation, from runtimes that report StrictMode (the
 * published Kotlin runtime, opt-in).  Disk and network on the main thread
 * are errors, leaked closeables and cursors warnings, anything else a note.
 * The runtime sends the 1st and every 50th violation at a site with the
 * running count, so one finding per call site carries the highest count.
 */
#include "ph_common.h"
#include "family.h"

struct site {
	int64_t count, from, to, last_t;
	const char *category, *type, *stack;
};

struct strict_state {
	struct ph_smap sites;
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct strict_state *s = p;
	const char *site;
	size_t n;
	struct site *x;
	bool created;
	int64_t count = 1;

	if (ev->kind != PH_KIND_STRICT_VIOLATION ||
	    !ph_ev_str(ev, "site", &site, &n))
		return;
	x = ph_smap_get(c, &s->sites, site, n, sizeof(*x), &created);
	if (!x)
		return;
	if (created) {
		x->from = ev->t;
		x->category = ph_keep_field(c, ev, "category");
		x->type = ph_keep_field(c, ev, "type");
		x->stack = ph_keep_field(c, ev, "stack");
	}
	if (ev->t < x->from)
		x->from = ev->t;
	if (ev->t > x->to)
		x->to = ev->t;
	x->last_t = ev->t;
	ph_ev_int(ev, "count", &count);
	if (count > x->count)
		x->count = count;
}

static int severity(const char *cat)
{
	if (!cat)
		return PH_SEV_NOTE;
	if (!strcmp(cat, "main_thread_disk") ||
	    !strcmp(cat, "main_thread_network"))
		return PH_SEV_ERROR;
	if (!strcmp(cat, "leak"))
		return PH_SEV_WARNING;
	return PH_SEV_NOTE;
}

static void emit(struct ph_fctx *c, void *p)
{
	struct strict_state *s = p;

	for (size_t i = 0; i < s->sites.n; i++) {
		struct site *x = s->sites.vals[i];
		const char *site = s->sites.keys[i];
		struct ph_finding *f;
		struct ph_jw *jw;

		f = ph_fnd_new(c, "strict-violation", severity(x->category),
			       PH_CONF_OBSERVED, x->from, x->to);
		if (!f)
			return;
		f->count = x->count;
		f->last_from = f->last_to = x->last_t;
		ph_fnd_title(c, f, "StrictMode: %s at %.160s",
			     x->type ? x->type : "violation", site);
		ph_fnd_detail(c, f, "%s, %" PRId64 " time%s at this site",
			      x->category ? x->category : "other", x->count,
			      x->count == 1 ? "" : "s");
		ph_fnd_key(c, f, "strict-violation:%s", site);
		/* "Class.method:line": the where resolver reads it as a frame.
		 */
		{
			const char *colon = strrchr(site, ':');

			f->hint.fn = ph_fnd_str(c, site);
			if (colon) {
				f->hint.line = strtoll(colon + 1, NULL, 10);
				((char *)f->hint.fn)[colon - site] = '\0';
			}
			f->hint.app = true;
		}
		jw = ph_fnd_evidence_begin(c);
		ph_jw_kv_str(jw, "site", site);
		if (x->category)
			ph_jw_kv_str(jw, "category", x->category);
		if (x->type)
			ph_jw_kv_str(jw, "type", x->type);
		ph_jw_kv_int(jw, "count", x->count);
		if (x->stack)
			ph_jw_kv_str(jw, "stack", x->stack);
		ph_fnd_evidence_end(c, f);
	}
}

static void release(void *p)
{
	ph_smap_release(&((struct strict_state *)p)->sites);
}

const struct ph_family ph_family_strict = {
	.name = "strict-violation",
	.ids = { "strict-violation" },
	.kinds = PH_KIND_BIT(STRICT_VIOLATION),
	.state_size = sizeof(struct strict_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
