/*
 * leak.c: leak, from `leak` events (the heap engine's, or LeakCanary's in
 * the Kotlin runtime).  An application leak (app code holds it) is a
 * warning with its retained size and the head of its reference path; a
 * library leak (a known framework pattern) is a note.  One finding per
 * signature.
 */
#include "ph_common.h"
#include "family.h"

struct lk {
	int64_t t, count, retained;
	bool app;
	const char *desc, *cls, *head, *trace;
};

struct st {
	struct ph_smap sigs;
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct st *s = p;
	const char *sig, *tr;
	size_t n, tn;
	struct lk *x;
	bool created;
	int64_t v;

	if (ev->kind != PH_KIND_LEAK)
		return;
	if (!ph_ev_str(ev, "signature", &sig, &n) &&
	    !ph_ev_str(ev, "shortDescription", &sig, &n))
		return;
	x = ph_smap_get(c, &s->sigs, sig, n, sizeof(*x), &created);
	if (!x)
		return;
	x->t = ev->t;
	x->app = !ph_ev_streq(ev, "kind", "library");
	x->count = ph_ev_int(ev, "leakCount", &v) ? v : x->count + 1;
	if (ph_ev_int(ev, "retainedHeapByteSize", &v))
		x->retained = v;
	x->desc = ph_keep_field(c, ev, "shortDescription");
	x->cls = ph_keep_field(c, ev, "leakingClass");
	if (ph_ev_str(ev, "traceText", &tr, &tn)) {
		size_t cut = 0;

		/* The head of the path: its first three lines. */
		for (int l = 0; l < 3 && cut < tn; l++) {
			const char *nl = memchr(tr + cut, '\n', tn - cut);

			cut = nl ? (size_t)(nl - tr) + 1 : tn;
		}
		x->head = ph_keep(c, tr, cut);
		x->trace = ph_keep(c, tr, tn);
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct st *s = p;

	for (size_t i = 0; i < s->sigs.n; i++) {
		struct lk *x = s->sigs.vals[i];
		struct ph_finding *f;
		struct ph_jw *jw;

		f = ph_fnd_new(c, "leak", x->app ? PH_SEV_WARNING : PH_SEV_NOTE,
			       PH_CONF_OBSERVED, x->t, x->t);
		if (!f)
			return;
		f->count = x->count ? x->count : 1;
		ph_fnd_title(c, f, "%s leak: %.160s",
			     x->app ? "Application" : "Library",
			     x->desc ? x->desc : s->sigs.keys[i]);
		if (x->retained)
			ph_fnd_detail(c, f, "retains %" PRId64 " bytes%s%s",
				      x->retained, x->cls ? " through " : "",
				      x->cls ? x->cls : "");
		if (x->head)
			ph_fnd_detail(c, f, "%.300s", x->head);
		ph_fnd_key(c, f, "leak:%s", s->sigs.keys[i]);
		if (x->cls)
			f->hint.fn = ph_fnd_str(c, x->cls);
		jw = ph_fnd_evidence_begin(c);
		ph_jw_kv_str(jw, "signature", s->sigs.keys[i]);
		ph_jw_kv_str(jw, "kind", x->app ? "application" : "library");
		if (x->desc)
			ph_jw_kv_str(jw, "shortDescription", x->desc);
		if (x->cls)
			ph_jw_kv_str(jw, "leakingClass", x->cls);
		if (x->retained)
			ph_jw_kv_int(jw, "retainedHeapByteSize", x->retained);
		ph_jw_kv_int(jw, "leakCount", f->count);
		if (x->trace)
			ph_jw_kv_str(jw, "traceText", x->trace);
		ph_fnd_evidence_end(c, f);
	}
}

static void release(void *p)
{
	ph_smap_release(&((struct st *)p)->sigs);
}

const struct ph_family ph_family_leak = {
	.name = "leak",
	.ids = { "leak" },
	.state_size = sizeof(struct st),
	.event = on_event,
	.emit = emit,
	.release = release,
};
