/* SPDX-License-Identifier: Apache-2.0 */
/*
 * graph_paths.c: over the graph graph.c builds, the shortest strong path
 * from a GC root to each object asked for (breadth-first, library-leak
 * references and thread-local roots last, as LeakCanary's shark does),
 * and ahat's reachability classes (strong, soft, finalizer, weak,
 * phantom) for every object.
 */
#include "ph_common.h"
#include "heap.h"
#include "graph_int.h"

/* ---- shortest paths ------------------------------------------------- */

bool ph_heap_root_counts(const struct ph_heap *h, const struct ph_heap_root *r)
{
	if (r->obj == PH_HEAP_NONE || r->kind == PH_ROOT_UNREACHABLE)
		return false;
	return !(h->perflib_no_thread_roots &&
		 r->kind == PH_ROOT_THREAD_OBJECT);
}

enum {
	ST_SEEN = 1 << 0,
	ST_EXPANDED = 1 << 4,
	ST_LOW = 1 << 5, /* queued at low priority */
};

static bool is_thread_local(unsigned kind)
{
	return kind == PH_ROOT_JAVA_FRAME || kind == PH_ROOT_JNI_LOCAL ||
	       kind == PH_ROOT_NATIVE_STACK || kind == PH_ROOT_THREAD_BLOCK ||
	       kind == PH_ROOT_JNI_MONITOR;
}

static uint32_t thread_obj(const struct ph_heap *h, uint32_t serial)
{
	size_t lo = 0, hi = h->nthreads;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->thread_serials[mid] < serial)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->nthreads && h->thread_serials[lo] == serial ?
		       h->thread_objs[lo] :
		       PH_HEAP_NONE;
}

/* Root kinds in the order their objects enter the search. */
static int root_rank(unsigned kind)
{
	switch (kind) {
	case PH_ROOT_STICKY_CLASS: return 0;
	case PH_ROOT_THREAD_OBJECT: return 1;
	case PH_ROOT_JNI_GLOBAL: return 2;
	case PH_ROOT_MONITOR_USED: return 3;
	default: return 4;
	}
}

void ph_heap_paths_release(struct ph_heap_paths *p)
{
	ph_heap_big_free(p->parent);
	ph_heap_big_free(p->state);
	memset(p, 0, sizeof(*p));
}

int ph_heap_paths(struct ph_heap *h, struct ph_heap_paths *p,
		  const uint32_t *targets, size_t ntargets)
{
	const uint32_t n = h->nobj;
	uint32_t *qn = NULL, *ql = NULL;
	size_t qn_h = 0, qn_t = 0, ql_h = 0, ql_t = 0;
	uint8_t *want = NULL;
	size_t remaining = 0;
	int rc = PH_ENOMEM;

	memset(p, 0, sizeof(*p));
	p->parent = ph_heap_big_alloc(((size_t)n + 1) * 4);
	p->state = ph_heap_big_alloc((size_t)n + 1);
	/* each object enters each queue at most once (pages that a search
	 * stopped early never touched cost nothing) */
	qn = ph_heap_big_alloc(((size_t)n + 1) * 4);
	ql = ph_heap_big_alloc(((size_t)n + 1) * 4);
	if (!p->parent || !p->state || !qn || !ql)
		goto out;
	memset(p->parent, 0xff, ((size_t)n + 1) * 4);
	if (targets) {
		want = calloc((size_t)n / 8 + 1, 1);
		if (!want)
			goto out;
		for (size_t i = 0; i < ntargets; i++)
			if (targets[i] < n && !(want[targets[i] / 8] &
						(1u << (targets[i] % 8)))) {
				want[targets[i] / 8] |=
					(uint8_t)(1u << (targets[i] % 8));
				remaining++;
			}
		if (!remaining) {
			rc = 0;
			goto out;
		}
	}
	/* roots, by kind rank then in dump order */
	for (int rank = 0; rank <= 4; rank++)
		for (size_t i = 0; i < h->nroots; i++) {
			const struct ph_heap_root *r = &h->roots[i];
			uint32_t o = r->obj;

			if (!ph_heap_root_counts(h, r) ||
			    is_thread_local(r->kind) ||
			    root_rank(r->kind) != rank ||
			    (p->state[o] & ST_SEEN))
				continue;
			p->state[o] = ST_SEEN | PH_PATH_ROOT;
			qn[qn_t++] = o;
		}
	/* then thread locals, at low priority, as children of their thread */
	for (size_t i = 0; i < h->nroots; i++) {
		const struct ph_heap_root *r = &h->roots[i];
		uint32_t o = r->obj, t;

		if (!ph_heap_root_counts(h, r) || !is_thread_local(r->kind) ||
		    (p->state[o] & ST_SEEN))
			continue;
		t = thread_obj(h, r->thread);
		if (t != PH_HEAP_NONE && t != o && (p->state[t] & ST_SEEN)) {
			p->parent[o] = t;
			p->state[o] = ST_SEEN | PH_PATH_LOCAL | ST_LOW;
		} else {
			p->state[o] = ST_SEEN | PH_PATH_ROOT | ST_LOW;
		}
		ql[ql_t++] = o;
	}
	for (;;) {
		uint32_t x;
		bool low;

		if (qn_h < qn_t) {
			x = qn[qn_h++];
			low = false;
		} else if (ql_h < ql_t) {
			x = ql[ql_h++];
			low = true;
		} else {
			break;
		}
		if (p->state[x] & ST_EXPANDED)
			continue;
		p->state[x] |= ST_EXPANDED;
		if (want && (want[x / 8] & (1u << (x % 8))) && !--remaining)
			break;
		for (uint32_t e = h->eoff[x]; e < h->eoff[x + 1]; e++) {
			uint32_t y = h->edst[e] & EDGE_MASK;
			bool ylow = low || (h->edst[e] & EDGE_LIB);
			uint8_t st = p->state[y];

			if (st & ST_SEEN) {
				/* promote a low-priority object still
				 * waiting, when a normal path reaches it */
				if (ylow || !(st & ST_LOW) ||
				    (st & ST_EXPANDED))
					continue;
			}
			p->parent[y] = x;
			p->state[y] = (uint8_t)(ST_SEEN | (ylow ? ST_LOW : 0) |
						(ylow ? (p->state[x] &
							 PH_PATH_LIBRARY) :
							0) |
						((h->edst[e] & EDGE_LIB) ?
							 PH_PATH_LIBRARY :
							 0));
			if (ylow)
				ql[ql_t++] = y;
			else
				qn[qn_t++] = y;
			if (ql_t > n || qn_t > n) {
				/* cannot happen: each object enters a queue
				 * once per priority */
				rc = PH_EINVAL;
				goto out;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++)
		if (p->state[i] & ST_SEEN)
			p->reached++;
	rc = 0;
out:
	ph_heap_big_free(qn);
	ph_heap_big_free(ql);
	free(want);
	if (rc)
		ph_heap_paths_release(p);
	return rc;
}

/* ---- reachability ----------------------------------------------------- */

static void mark_from(struct ph_heap *h, uint8_t *reach, uint32_t *stack,
		      uint32_t start, uint8_t level)
{
	size_t sp = 0;

	reach[start] = level;
	stack[sp++] = start;
	while (sp) {
		uint32_t x = stack[--sp];

		for (uint32_t e = h->eoff[x]; e < h->eoff[x + 1]; e++) {
			uint32_t y = h->edst[e] & EDGE_MASK;

			if (reach[y] != PH_REACH_UNREACHABLE)
				continue;
			reach[y] = level;
			stack[sp++] = y;
		}
	}
}

int ph_heap_reachability(struct ph_heap *h, uint8_t **out)
{
	uint8_t *reach = malloc((size_t)h->nobj + 1);
	uint32_t *stack = ph_heap_big_alloc(((size_t)h->nobj + 1) * 4);

	if (!reach || !stack) {
		free(reach);
		ph_heap_big_free(stack);
		return PH_ENOMEM;
	}
	memset(reach, PH_REACH_UNREACHABLE, (size_t)h->nobj + 1);
	for (size_t i = 0; i < h->nroots; i++) {
		uint32_t o = h->roots[i].obj;

		if (ph_heap_root_counts(h, &h->roots[i]) &&
		    reach[o] == PH_REACH_UNREACHABLE)
			mark_from(h, reach, stack, o, PH_REACH_STRONG);
	}
	for (uint8_t lvl = PH_REACH_SOFT; lvl <= PH_REACH_PHANTOM; lvl++) {
		bool changed = true;

		while (changed) {
			changed = false;
			for (size_t i = 0; i < h->nwrefs; i++) {
				const struct ph_heap_wref *w = &h->wrefs[i];

				if (w->strength > lvl || reach[w->ref] > lvl ||
				    reach[w->referent] != PH_REACH_UNREACHABLE)
					continue;
				mark_from(h, reach, stack, w->referent, lvl);
				changed = true;
			}
		}
	}
	ph_heap_big_free(stack);
	*out = reach;
	return 0;
}
