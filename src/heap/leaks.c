/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leaks.c: the leak finder's entry points (`heap leaks`, a path to one
 * object) and the trace to each leaking object: the path that keeps it,
 * each node's status, the suspects and the signature.  leak_inspect.c
 * says what each object is and which are leaking; leak_render.c draws
 * the LeakCanary text Android developers read.
 *
 * The rules follow LeakCanary's shark (square/leakcanary, shark and
 * shark-android: LeakTrace, LeakTraceObject, AndroidObjectInspectors),
 * re-stated in docs/heap.md:
 *
 *  - leaking objects: referents of retained KeyedWeakReference watches,
 *    and objects whose own state says they are done (destroyed
 *    Activities, detached Fragments, detached root Views, destroyed
 *    Windows, ViewRootImpl without a view, quitting MessageQueues,
 *    disposed compositions), plus every instance of --class;
 *  - each object on a path gets YES / NO / UNKNOWN from the inspectors;
 *    everything before the last NO becomes NO ("X↓ is not leaking"),
 *    everything after the first YES becomes YES ("X↑ is leaking");
 *  - the references between the last NO and the first YES are the
 *    suspects: underlined, and hashed (SHA-1) into the signature that
 *    groups traces of the same bug.
 */
#include "ph_common.h"
#include "heap.h"
#include "leaks_int.h"

/* ---- references between path nodes ------------------------------------- */

/* want_name false: an array element's index is not needed (an elided
 * node), so no string is made for it. */
static void describe_ref(struct ph_leak_ctx *x, const struct ph_heap_paths *p,
			 uint32_t from, uint32_t to, struct ph_leak_node *n,
			 bool want_name)
{
	struct ph_heap *h = x->h;
	uint64_t id = ph_heap_id(h, to);

	n->ref_kind = 1;
	n->ref_owner = ph_leak_simple_name(ph_heap_class_name(h, h->cls[from]));
	n->ref_name = "?";
	n->ref_generic = "?";
	if (p && (p->state[to] & PH_PATH_LOCAL)) {
		n->ref_kind = 3;
		n->ref_name = n->ref_generic = "<Java Local>";
		return;
	}
	switch (ph_heap_kind_of(h, from)) {
	case PH_HEAP_CLASS: {
		const struct ph_heap_class *k = &h->classes[h->cls[from]];
		uint64_t q = k->statics_off;

		n->ref_kind = 0;
		n->ref_owner = ph_leak_simple_name(k->name);
		for (uint32_t i = 0; i < k->nstatics; i++) {
			const uint8_t *d = h->data + q;
			unsigned t = d[h->idsz];
			size_t ts = ph_heap_type_size(h, t);
			uint64_t v = 0;

			if (t == PH_HT_OBJECT) {
				for (uint32_t j = 0; j < h->idsz; j++)
					v = v << 8 | d[h->idsz + 1 + j];
				if (v == id) {
					struct ph_heap_field f = { 0 };
					uint64_t sid = 0;

					for (uint32_t j = 0; j < h->idsz; j++)
						sid = sid << 8 | d[j];
					f.name_sid = sid;
					n->ref_name = n->ref_generic =
						ph_heap_field_name(
							h, h->cls[from], &f);
					return;
				}
			}
			q += h->idsz + 1 + ts;
		}
		return;
	}
	case PH_HEAP_INSTANCE: {
		const struct ph_heap_class *k = &h->classes[h->cls[from]];
		uint64_t rec = ph_heap_rec(h, from);
		const uint8_t *d = h->data + rec + 1 + 2 * h->idsz + 8;
		uint32_t len = 0;

		for (int j = 0; j < 4; j++)
			len = len << 8 | d[-4 + j];
		for (uint32_t i = 0; i < k->nfields; i++) {
			const struct ph_heap_field *f =
				&h->fields[k->fields + i];
			uint64_t v = 0;

			if (f->type != PH_HT_OBJECT ||
			    f->offset + h->idsz > len)
				continue;
			for (uint32_t j = 0; j < h->idsz; j++)
				v = v << 8 | d[f->offset + j];
			if (v != id || (uint32_t)f->offset == k->referent_off)
				continue;
			uint32_t decl = h->cls[from];
			for (uint16_t j = 0;
			     j < f->decl && decl != PH_HEAP_NONE; j++)
				decl = h->classes[decl].super;
			if (decl != PH_HEAP_NONE)
				n->ref_owner = ph_leak_simple_name(
					h->classes[decl].name);
			n->ref_name = n->ref_generic =
				ph_heap_field_name(h, h->cls[from], f);
			return;
		}
		return;
	}
	case PH_HEAP_OBJ_ARRAY: {
		uint32_t len = ph_heap_array_length(h, from);

		n->ref_kind = 2;
		n->ref_generic = "[x]";
		if (!want_name)
			return;
		for (uint32_t i = 0; i < len; i++)
			if (ph_heap_array_ref(h, from, i) == id) {
				n->ref_name = ph_leak_afmt(h, "[%u]", i);
				return;
			}
		return;
	}
	default: return;
	}
}

/* The library-leak pattern a path reference matches, or NULL. */
static const char *library_desc(struct ph_leak_ctx *x,
				const struct ph_leak_node *n)
{
	for (size_t l = 0; l < ph_heap_nlibrefs; l++) {
		const struct ph_heap_libref *lr = &ph_heap_librefs[l];

		if ((n->ref_kind == 0) == lr->is_static && n->ref_kind <= 1 &&
		    !strcmp(ph_leak_simple_name(lr->cls), n->ref_owner) &&
		    !strcmp(lr->field, n->ref_name))
			return ph_leak_afmt(x->h, "%s %s#%s: %s",
					    lr->is_static ? "static field" :
							    "instance field",
					    lr->cls, lr->field, lr->desc);
	}
	return NULL;
}

static uint8_t root_kind_of(const struct ph_heap *h, uint32_t obj)
{
	static const uint8_t pref[] = {
		PH_ROOT_STICKY_CLASS,
		PH_ROOT_THREAD_OBJECT,
		PH_ROOT_JNI_GLOBAL,
		PH_ROOT_MONITOR_USED,
	};
	uint8_t best = 0;
	int best_rank = 99;

	for (size_t i = 0; i < h->nroots; i++) {
		int rank = 4;

		if (h->roots[i].obj != obj ||
		    h->roots[i].kind == PH_ROOT_UNREACHABLE)
			continue;
		for (int k = 0; k < 4; k++)
			if (pref[k] == h->roots[i].kind)
				rank = k;
		if (rank < best_rank) {
			best_rank = rank;
			best = h->roots[i].kind;
		}
	}
	return best ? best : PH_ROOT_UNKNOWN;
}

/*
 * The whole path while a trace is built: what the kept nodes do not hold.
 * Lives only until finish_trace() is done (a few bytes per reference).
 */
struct path_work {
	uint32_t *chain;      /* object at each position, root first */
	uint8_t *status;      /* enum ph_leak_status at each position */
	const char **generic; /* the reference's generic name (signature) */
	size_t n;
};

static void path_work_release(struct path_work *w)
{
	free(w->chain);
	free(w->status);
	free(w->generic);
	memset(w, 0, sizeof(*w));
}

/* The kept node at path position i, or NULL when it was elided. */
static struct ph_leak_node *kept(const struct ph_leak_trace *t, size_t i)
{
	if (!t->elided || i < t->elided_at)
		return &t->nodes[i];
	if (i >= t->elided_at + t->elided)
		return &t->nodes[i - t->elided];
	return NULL;
}

/*
 * Builds the trace to obj from the path search.  leak_reason (may be NULL)
 * makes the last node YES with that reason added.  Every position is
 * inspected, but only the kept ones (struct ph_leak_trace) become nodes;
 * w gets the rest, for finish_trace().
 */
static int build_trace(struct ph_leak_ctx *x, const struct ph_heap_paths *p,
		       uint32_t obj, const char *leak_reason,
		       const char **leak_labels, size_t nleak_labels,
		       struct ph_leak_trace *t, struct path_work *w)
{
	struct ph_heap *h = x->h;
	size_t n = 0, cap = 0;
	uint32_t *chain = NULL;
	struct ph_leak_verdict v;

	memset(t, 0, sizeof(*t));
	memset(w, 0, sizeof(*w));
	t->first_suspect = PH_HEAP_NONE;
	for (uint32_t y = obj; y != PH_HEAP_NONE; y = p->parent[y]) {
		if (n == cap && PH_GROW(chain, cap, n + 1, 32)) {
			free(chain);
			return PH_ENOMEM;
		}
		chain[n++] = y;
		if (n > h->nobj) {
			free(chain);
			return PH_EINVAL; /* a cycle: cannot happen */
		}
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t tmp = chain[i];

		chain[i] = chain[n - 1 - i];
		chain[n - 1 - i] = tmp;
	}
	w->chain = chain;
	w->n = n;
	w->status = calloc(n ? n : 1, 1);
	w->generic = calloc(n ? n : 1, sizeof(*w->generic));
	t->length = n;
	if (n > PH_LEAK_KEEP_ROOT + PH_LEAK_KEEP_LEAK) {
		t->elided_at = PH_LEAK_KEEP_ROOT;
		t->elided = n - PH_LEAK_KEEP_ROOT - PH_LEAK_KEEP_LEAK;
	}
	t->nnodes = n - t->elided;
	t->nodes = ph_arena_alloc(&h->arena, t->nnodes * sizeof(*t->nodes));
	if (!t->nodes || !w->status || !w->generic) {
		path_work_release(w);
		return PH_ENOMEM;
	}
	memset(t->nodes, 0, t->nnodes * sizeof(*t->nodes));
	for (size_t i = 0; i < n; i++)
		if (kept(t, i))
			kept(t, i)->obj = chain[i];
	t->root_kind = root_kind_of(h, chain[0]);
	if (n > 1 && (p->state[chain[1]] & PH_PATH_LOCAL)) {
		for (size_t i = 0; i < h->nroots; i++)
			if (h->roots[i].obj == chain[1] && h->roots[i].thread) {
				t->root_kind = h->roots[i].kind;
				break;
			}
	}
	for (size_t i = 0; i < n; i++) {
		struct ph_leak_node tmp = { .obj = chain[i] };
		struct ph_leak_node *nd = kept(t, i);
		bool last = i + 1 == n;

		if (!nd)
			nd = &tmp;
		if (!last) {
			describe_ref(x, p, chain[i], chain[i + 1], nd,
				     nd != &tmp);
			w->generic[i] = nd->ref_generic;
			if (!t->library &&
			    (p->state[chain[i + 1]] & PH_PATH_LIBRARY)) {
				const char *d = library_desc(x, nd);

				if (d) {
					t->library = true;
					t->library_desc = d;
				}
			}
		}
		ph_leak_inspect(x, chain[i], &v);
		if (last && leak_reason)
			YES(&v, leak_reason);
		for (size_t k = 0; last && k < nleak_labels; k++)
			LABEL(&v, leak_labels[k]);
		ph_leak_resolve(h, &v, last && leak_reason, nd);
		w->status[i] = nd->status;
	}
	if (h->retained) {
		t->retained = h->retained[obj];
		t->retained_count = h->retained_count[obj];
	}
	return 0;
}

static const char *obj_simple(struct ph_heap *h, uint32_t obj)
{
	return ph_leak_simple_name(ph_heap_class_name(h, h->cls[obj]));
}

/*
 * shark's propagation, then suspects and the signature, over the whole
 * path in w; reasons are written only on the kept nodes.
 */
static void finish_trace(struct ph_heap *h, struct ph_leak_trace *t,
			 bool force_last, struct path_work *w)
{
	size_t n = w->n, last_no = 0, first_yes;
	bool any_no = false;
	uint8_t *st = w->status;
	struct ph_heap_sha1 sig;

	if (!n)
		return;
	if (force_last && st[n - 1] != PH_LEAK_YES)
		st[n - 1] = kept(t, n - 1)->status = PH_LEAK_YES;
	for (size_t i = 0; i + 1 < n; i++)
		if (st[i] == PH_LEAK_NO) {
			last_no = i;
			any_no = true;
		}
	first_yes = n - 1;
	for (size_t i = 0; i + 1 < n; i++)
		if (st[i] == PH_LEAK_YES) {
			first_yes = i;
			break;
		}
	if (any_no && first_yes < last_no)
		first_yes = n - 1; /* a YES before a NO does not spread */
	for (size_t i = 0, next = 0; any_no && i < last_no; i++) {
		struct ph_leak_node *nd = kept(t, i);

		if (next <= i)
			for (next = i + 1;
			     next < last_no && st[next] != PH_LEAK_NO; next++)
				;
		if (nd) {
			const char *nn = obj_simple(h, w->chain[next]);

			if (nd->status == PH_LEAK_UNKNOWN)
				nd->reason = ph_leak_afmt(
					h, "%s\xe2\x86\x93 is not leaking", nn);
			else if (nd->status == PH_LEAK_NO)
				nd->reason =
					ph_leak_afmt(h,
						     "%s\xe2\x86\x93 is not "
						     "leaking and %s",
						     nn, nd->reason);
			else
				nd->reason = ph_leak_afmt(
					h,
					"%s\xe2\x86\x93 is not "
					"leaking. Conflicts with %s",
					nn, nd->reason);
			nd->status = PH_LEAK_NO;
		}
		st[i] = PH_LEAK_NO;
	}
	for (size_t i = first_yes + 1; i < n; i++) {
		struct ph_leak_node *nd = kept(t, i);

		/* every node from first_yes on is YES by now: the one
		 * before names the cause */
		if (nd) {
			const char *pn = obj_simple(h, w->chain[i - 1]);

			if (nd->status == PH_LEAK_YES && *nd->reason)
				nd->reason = ph_leak_afmt(
					h,
					"%s\xe2\x86\x91 is leaking "
					"and %s",
					pn, nd->reason);
			else
				nd->reason = ph_leak_afmt(
					h, "%s\xe2\x86\x91 is leaking", pn);
			nd->status = PH_LEAK_YES;
		}
		st[i] = PH_LEAK_YES;
	}
	/* suspects: from the last NO up to the first YES, all hashed */
	ph_heap_sha1_init(&sig);
	t->first_suspect = PH_HEAP_NONE;
	for (size_t i = 0; i + 1 < n; i++) {
		struct ph_leak_node *nd = kept(t, i);
		bool suspect = false;

		if (st[i] == PH_LEAK_UNKNOWN)
			suspect = true;
		else if (st[i] == PH_LEAK_NO)
			suspect = i + 2 == n || st[i + 1] != PH_LEAK_NO;
		if (nd)
			nd->suspect = suspect;
		if (suspect && t->first_suspect == PH_HEAP_NONE) {
			t->first_suspect = w->chain[i];
			t->first_suspect_ref = w->generic[i];
		}
		if (suspect) {
			const char *cn =
				ph_heap_class_name(h, h->cls[w->chain[i]]);

			ph_heap_sha1_update(&sig, cn, strlen(cn));
			ph_heap_sha1_update(&sig, w->generic[i],
					    strlen(w->generic[i]));
		}
	}
	ph_heap_sha1_final_hex(&sig, t->signature);
}

/* ---- entry points ------------------------------------------------------- */

static int cmp_trace(const void *a, const void *b)
{
	const struct ph_leak_trace *x = a, *y = b;

	if (x->library != y->library)
		return x->library ? 1 : -1;
	if (x->retained != y->retained)
		return x->retained > y->retained ? -1 : 1;
	return strcmp(x->signature, y->signature);
}

int ph_heap_leaks(struct ph_heap *h, const struct ph_leak_opts *opts,
		  struct ph_leak_result *out)
{
	struct ph_leak_ctx x = { .h = h, .watch = PH_HEAP_NONE };
	struct ph_leak_cands cs = { 0 };
	struct ph_heap_paths p = { 0 };
	uint32_t *targets = NULL;
	struct ph_leak_trace *traces = NULL;
	struct path_work w;
	size_t nt = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ph_heap_graph(h);
	if (rc)
		return rc;
	rc = ph_leak_traits_build(&x);
	if (rc)
		return rc;
	if (opts && opts->watch_class) {
		x.watch = ph_heap_class_by_name(h, opts->watch_class);
		if (x.watch == PH_HEAP_NONE) {
			rc = PH_ENOENT;
			goto out;
		}
	}
	ph_leak_find_watched(&x, &cs);
	ph_leak_find_inspected(&x, &cs);
	out->nleaking = cs.n;
	if (!cs.n)
		goto out;
	if (!opts || opts->with_retained) {
		rc = ph_heap_dominators(h);
		if (rc)
			goto out;
	}
	targets = malloc(cs.n * 4);
	traces = calloc(cs.n, sizeof(*traces));
	if (!targets || !traces) {
		rc = PH_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cs.n; i++)
		targets[i] = cs.p[i].obj;
	rc = ph_heap_paths(h, &p, targets, cs.n);
	if (rc)
		goto out;
	/* a leaking object kept by another leaking object is that one's */
	uint8_t *is_cand = calloc((size_t)h->nobj / 8 + 1, 1);
	if (!is_cand) {
		rc = PH_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cs.n; i++)
		is_cand[cs.p[i].obj / 8] |= (uint8_t)(1u << (cs.p[i].obj % 8));
	for (size_t i = 0; i < cs.n; i++) {
		uint32_t o = cs.p[i].obj;
		bool covered = false;

		if (!(p.state[o] & 1)) {
			out->unreachable_leaking++;
			continue;
		}
		for (uint32_t y = p.parent[o], k = 0;
		     y != PH_HEAP_NONE && k <= h->nobj; y = p.parent[y], k++)
			if (is_cand[y / 8] & (1u << (y % 8))) {
				covered = true;
				break;
			}
		if (covered)
			continue;
		rc = build_trace(&x, &p, o, cs.p[i].reason, cs.p[i].labels,
				 cs.p[i].nlabels, &traces[nt], &w);
		if (rc) {
			free(is_cand);
			goto out;
		}
		finish_trace(h, &traces[nt], true, &w);
		path_work_release(&w);
		nt++;
	}
	free(is_cand);
	/* group by signature; keep the shortest trace of each group */
	qsort(traces, nt, sizeof(*traces), cmp_trace);
	size_t ng = 0;
	for (size_t i = 0; i < nt; i++) {
		size_t g;

		for (g = 0; g < ng; g++)
			if (!strcmp(traces[g].signature, traces[i].signature))
				break;
		if (g < ng) {
			traces[g].group_count++;
			if (traces[i].length < traces[g].length) {
				uint32_t cnt = traces[g].group_count;

				traces[g] = traces[i];
				traces[g].group_count = cnt;
			}
			continue;
		}
		traces[ng] = traces[i];
		traces[ng].group_count = 1;
		ng++;
	}
	qsort(traces, ng, sizeof(*traces), cmp_trace);
	out->traces = ph_arena_alloc(&h->arena, (ng + 1) * sizeof(*traces));
	if (!out->traces) {
		rc = PH_ENOMEM;
		goto out;
	}
	memcpy(out->traces, traces, ng * sizeof(*traces));
	out->ntraces = ng;
	for (size_t i = 0; i < ng; i++) {
		if (traces[i].library)
			out->nlib++;
		else
			out->napp++;
	}
out:
	ph_heap_paths_release(&p);
	free(targets);
	free(traces);
	free(cs.p);
	free(x.traits);
	return rc;
}

int ph_heap_path_trace(struct ph_heap *h, uint32_t obj,
		       struct ph_leak_trace *out)
{
	struct ph_leak_ctx x = { .h = h, .watch = PH_HEAP_NONE };
	struct ph_heap_paths p;
	struct path_work w = { 0 };
	int rc;

	if (obj >= h->nobj)
		return PH_ENOENT;
	rc = ph_heap_graph(h);
	if (!rc)
		rc = ph_leak_traits_build(&x);
	if (rc)
		return rc;
	rc = ph_heap_paths(h, &p, &obj, 1);
	if (!rc && !(p.state[obj] & 1))
		rc = PH_ENOENT;
	if (!rc)
		rc = build_trace(&x, &p, obj, NULL, NULL, 0, out, &w);
	if (!rc)
		finish_trace(h, out, false, &w);
	path_work_release(&w);
	ph_heap_paths_release(&p);
	free(x.traits);
	return rc;
}
