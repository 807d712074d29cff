/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leak.c: leak, from `leak` events (the heap engine's, or LeakCanary's in
 * the Kotlin runtime).  An application leak (app code holds it) is a
 * warning titled with what leaked, its retained size and the suspect
 * reference ("MainActivity leaked (46.3 kB) via Foo.sInstance"), with the
 * head of its reference path as a detail; a library leak (a known
 * framework pattern) is a note.  One finding per signature.
 */
#include "ph_common.h"
#include "family.h"

struct lk {
	int64_t t, count, retained;
	bool app;
	const char *desc, *cls, *head, *trace;
};

struct leak_state {
	struct ph_smap sigs;
};

/*
 * The head of the path from a LeakCanary-format trace (both producers
 * write one): its GC root and first references, one line,
 * "GC Root: System class → static Foo.sInstance → ...".
 */
static const char *path_head(struct ph_fctx *c, const char *tr, size_t n)
{
	static const char root_mark[] = "GC Root: ",
			  ref_mark[] = "\xe2\x86\x93 ";
	char out[400];
	size_t len = 0, at = 0;
	int refs = 0;
	const char *nl;

	while (at < n && refs < 3) {
		const char *line = tr + at, *m;
		size_t ln, k;

		nl = memchr(line, '\n', n - at);
		ln = nl ? (size_t)(nl - line) : n - at;
		at += ln + 1;
		if ((m = memmem(line, ln, root_mark, 9))) {
			k = (size_t)(m - line);
		} else if ((m = memmem(line, ln, ref_mark, 4))) {
			k = (size_t)(m - line) + 4; /* after "↓ " */
			refs++;
		} else {
			continue;
		}
		if (len + (ln - k) + 8 >= sizeof(out))
			break;
		if (len) {
			memcpy(out + len, " \xe2\x86\x92 ", 5); /* " → " */
			len += 5;
		}
		memcpy(out + len, line + k, ln - k);
		len += ln - k;
	}
	if (len)
		return ph_keep(c, out, len);
	nl = memchr(tr, '\n', n); /* not a trace we know: its first line */
	return ph_keep(c, tr, nl ? (size_t)(nl - tr) : n);
}

/* LeakCanary's sizes: "999 B", "46.3 kB", "1.3 MB". */
static void human(int64_t b, char *buf, size_t size)
{
	if (b < 1000)
		snprintf(buf, size, "%" PRId64 " B", b);
	else if (b < 1000000)
		snprintf(buf, size, "%.1f kB", (double)b / 1e3);
	else if (b < 1000000000)
		snprintf(buf, size, "%.1f MB", (double)b / 1e6);
	else
		snprintf(buf, size, "%.1f GB", (double)b / 1e9);
}

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct leak_state *s = p;
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
		x->head = path_head(c, tr, tn);
		x->trace = ph_keep(c, tr, tn);
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct leak_state *s = p;

	for (size_t i = 0; i < s->sigs.n; i++) {
		struct lk *x = s->sigs.vals[i];
		struct ph_finding *f;
		struct ph_jw *jw;

		f = ph_fnd_new(c, "leak", x->app ? PH_SEV_WARNING : PH_SEV_NOTE,
			       PH_CONF_OBSERVED, x->t, x->t);
		if (!f)
			return;
		f->count = x->count ? x->count : 1;
		if (x->cls) {
			/* "MainActivity leaked (46.3 kB) via Foo.sInstance" */
			const char *dot = strrchr(x->cls, '.');
			char h[24], size[32] = "";

			if (x->retained) {
				human(x->retained, h, sizeof(h));
				snprintf(size, sizeof(size), "(%s) ", h);
			}
			ph_fnd_title(c, f, "%.80s leaked %svia %.120s%s",
				     dot ? dot + 1 : x->cls, size,
				     x->desc ? x->desc : "?",
				     x->app ? "" : " (a library leak)");
		} else {
			ph_fnd_title(c, f, "%s leak: %.160s",
				     x->app ? "Application" : "Library",
				     x->desc ? x->desc : s->sigs.keys[i]);
		}
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
	ph_smap_release(&((struct leak_state *)p)->sigs);
}

const struct ph_family ph_family_leak = {
	.name = "leak",
	.ids = { "leak" },
	.kinds = PH_KIND_BIT(LEAK),
	.state_size = sizeof(struct leak_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
