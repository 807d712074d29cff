/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dominators.c: immediate dominators over the strong edges of the graph
 * graph.c builds, and from them every object's retained size.
 * Lengauer-Tarjan, the "simple" version (path compression without
 * balancing: O(E log N)); docs/heap.md says why not Cooper-Harvey-Kennedy:
 * heap graphs have very long chains (linked lists, message queues), on
 * which CHK's finger walks go quadratic.
 */
#include "ph_common.h"
#include "heap.h"
#include "graph_int.h"

/* ---- dominators ------------------------------------------------------- */

/*
 * Lengauer and Tarjan, "A Fast Algorithm for Finding Dominators in a
 * Flowgraph" (TOPLAS 1979), with simple path compression.  Vertices are
 * renumbered in depth-first preorder; 0 is a virtual root whose children
 * are the GC roots.  The arrays in struct lt are indexed by that number.
 *
 * Peak memory is what decides whether a phone-sized dump fits on a
 * laptop, and this step sets the peak, so its arrays are few and reused:
 *  - the predecessors are one array of blocks, vertex by vertex, each
 *    block opening with the vertex's DFS parent marked PRED_FIRST: the
 *    main loop walks the blocks backwards and needs neither block offsets
 *    nor a parent array;
 *  - a bucket is a list threaded through idom (a vertex's idom is written
 *    only as it leaves its bucket), and the bucket heads live in the
 *    object -> preorder map, which is dead by then;
 *  - eval's path stack grows on demand (paths are short in practice);
 *  - the result is written per object into that same map's memory.
 */
#define PRED_FIRST (1u << 31)

struct lt {
	uint32_t *semi, *label, *ancestor, *idom;
	uint32_t *stk; /* eval's path */
	size_t nstk;
};

static int lt_eval(struct lt *t, uint32_t v, uint32_t *out)
{
	size_t sp = 0;
	uint32_t u;

	if (t->ancestor[v] == PH_HEAP_NONE) {
		*out = v;
		return 0;
	}
	/* compress: collect the path whose ancestors have ancestors */
	for (u = v; t->ancestor[t->ancestor[u]] != PH_HEAP_NONE;
	     u = t->ancestor[u]) {
		if (PH_UNLIKELY(sp == t->nstk) &&
		    PH_GROW(t->stk, t->nstk, sp + 1, 4096))
			return PH_ENOMEM;
		t->stk[sp++] = u;
	}
	while (sp) {
		u = t->stk[--sp];
		uint32_t a = t->ancestor[u];

		if (t->semi[t->label[a]] < t->semi[t->label[u]])
			t->label[u] = t->label[a];
		t->ancestor[u] = t->ancestor[a];
	}
	*out = t->label[v];
	return 0;
}

/*
 * Depth-first preorder from the virtual root (vertex 0) over the strong
 * edges: dfn[obj] and vertex[number] map both ways, parent[number] is the
 * DFS tree parent (parent may be NULL).  dfn must be all NONE; sv and sc
 * are the stack (vertices, edge cursors), as long as the vertex count.
 * Deterministic, so a second run numbers every object the same.  Returns
 * the number of vertices, the virtual root included.
 */
static uint32_t dfs(const struct ph_heap *h, const uint32_t *rl, uint32_t nroot,
		    uint32_t *dfn, uint32_t *vertex, uint32_t *parent,
		    uint32_t *sv, uint32_t *sc)
{
	const uint32_t N = h->nobj;
	uint32_t nv = 1;
	size_t sp = 0;

	vertex[0] = N;
	if (parent)
		parent[0] = 0;
	sv[sp] = 0;
	sc[sp++] = 0;
	while (sp) {
		uint32_t v = sv[sp - 1], c = sc[sp - 1];
		uint32_t x = vertex[v], y;

		if (x == N) {
			if (c >= nroot) {
				sp--;
				continue;
			}
			y = rl[c];
		} else {
			if (c >= h->eoff[x + 1] - h->eoff[x]) {
				sp--;
				continue;
			}
			y = h->edst[h->eoff[x] + c] & EDGE_MASK;
		}
		sc[sp - 1] = c + 1;
		if (dfn[y] != PH_HEAP_NONE)
			continue;
		dfn[y] = nv;
		vertex[nv] = y;
		if (parent)
			parent[nv] = v;
		sv[sp] = nv;
		sc[sp++] = 0;
		nv++;
	}
	return nv;
}

int ph_heap_dominators(struct ph_heap *h)
{
	const uint32_t N = h->nobj;
	uint32_t *dfn = NULL, *vertex = NULL, *parent = NULL, *pe = NULL;
	uint32_t *rl = NULL, *bhead;
	struct lt t = { 0 };
	uint32_t nv = 1, nroot = 0;
	uint64_t np = 0, k;
	int rc = PH_ENOMEM;

	if (h->idom)
		return 0;
	dfn = ph_heap_big_alloc(((size_t)N + 1) * 4);
	rl = malloc((h->nroots + 1) * 4);
	vertex = ph_heap_big_alloc(((size_t)N + 2) * 4);
	parent = ph_heap_big_alloc(((size_t)N + 2) * 4);
	t.semi = ph_heap_big_alloc(((size_t)N + 2) * 4);
	t.label = ph_heap_big_alloc(((size_t)N + 2) * 4);
	if (!dfn || !rl || !vertex || !parent || !t.semi || !t.label)
		goto out;
	memset(dfn, 0xff, ((size_t)N + 1) * 4);
	for (size_t i = 0; i < h->nroots; i++) {
		uint32_t o = h->roots[i].obj;

		if (ph_heap_root_counts(h, &h->roots[i]))
			rl[nroot++] = o;
	}
	nv = dfs(h, rl, nroot, dfn, vertex, parent, t.semi, t.label);
	h->reachable = nv - 1;

	/* predecessor counts into semi, then each block's start (in label)
	 * and fill cursor (in semi) */
	memset(t.semi, 0, ((size_t)nv + 1) * 4);
	for (uint32_t i = 0; i < nroot; i++)
		t.semi[dfn[rl[i]] + 1]++;
	np = nroot;
	for (uint32_t v = 1; v < nv; v++) {
		uint32_t x = vertex[v];

		for (uint32_t e = h->eoff[x]; e < h->eoff[x + 1]; e++)
			t.semi[dfn[h->edst[e] & EDGE_MASK] + 1]++;
		np += h->eoff[x + 1] - h->eoff[x];
	}
	for (uint32_t v = 0; v < nv; v++)
		t.semi[v + 1] += t.semi[v];
	pe = ph_heap_big_alloc((np + 1) * 4);
	if (!pe)
		goto out;
	for (uint32_t w = 1; w < nv; w++) {
		t.label[w] = t.semi[w];
		pe[t.semi[w]++] = PH_HEAP_NONE; /* the parent's slot */
	}
	/*
	 * The DFS tree edge into w (the first edge from its parent) takes
	 * the block's first slot; every other edge the next free one.  Each
	 * block is exactly its vertex's in-degree long.
	 */
#define PUT_PRED(w, v)                                                  \
	do {                                                            \
		if (parent[w] == (v) && pe[t.label[w]] == PH_HEAP_NONE) \
			pe[t.label[w]] = (v) | PRED_FIRST;              \
		else                                                    \
			pe[t.semi[w]++] = (v);                          \
	} while (0)
	for (uint32_t i = 0; i < nroot; i++)
		PUT_PRED(dfn[rl[i]], 0u);
	for (uint32_t v = 1; v < nv; v++) {
		uint32_t x = vertex[v];

		for (uint32_t e = h->eoff[x]; e < h->eoff[x + 1]; e++)
			PUT_PRED(dfn[h->edst[e] & EDGE_MASK], v);
	}
#undef PUT_PRED
	/* the loop needs no map back to objects: a second DFS remakes it */
	ph_heap_big_free(parent);
	ph_heap_big_free(vertex);
	parent = vertex = NULL;

	bhead = dfn; /* object -> preorder is dead: bucket heads */
	t.ancestor = ph_heap_big_alloc((size_t)nv * 4);
	t.idom = ph_heap_big_alloc((size_t)nv * 4);
	if (!t.ancestor || !t.idom)
		goto out;
	for (uint32_t v = 0; v < nv; v++) {
		t.semi[v] = v;
		t.label[v] = v;
		t.ancestor[v] = PH_HEAP_NONE;
		bhead[v] = PH_HEAP_NONE;
	}
	t.idom[0] = 0;
	k = np;
	for (uint32_t w = nv - 1; w >= 1; w--) {
		uint32_t pw = PH_HEAP_NONE, v, u;

		/* w's block, backwards: it opens with the parent */
		while (pw == PH_HEAP_NONE && k > 0) {
			v = pe[--k];
			if (v & PRED_FIRST) {
				v &= ~PRED_FIRST;
				pw = v;
			}
			if (lt_eval(&t, v, &u))
				goto out;
			if (t.semi[u] < t.semi[w])
				t.semi[w] = t.semi[u];
		}
		if (pw == PH_HEAP_NONE) {
			rc = PH_EINVAL; /* cannot happen: every block has one */
			goto out;
		}
		t.idom[w] = bhead[t.semi[w]];
		bhead[t.semi[w]] = w;
		t.ancestor[w] = pw;
		for (v = bhead[pw]; v != PH_HEAP_NONE;) {
			uint32_t next = t.idom[v];

			if (lt_eval(&t, v, &u))
				goto out;
			t.idom[v] = t.semi[u] < t.semi[v] ? u : pw;
			v = next;
		}
		bhead[pw] = PH_HEAP_NONE;
	}
	ph_heap_big_free(pe);
	pe = NULL;
	free(t.stk);
	t.stk = NULL;
	for (uint32_t w = 1; w < nv; w++)
		if (t.idom[w] != t.semi[w])
			t.idom[w] = t.idom[t.idom[w]];
	ph_heap_big_free(t.semi);
	t.semi = NULL;

	/* preorder -> object again, the stack in label and ancestor */
	vertex = ph_heap_big_alloc(((size_t)nv + 1) * 4);
	if (!vertex)
		goto out;
	memset(dfn, 0xff, ((size_t)N + 1) * 4);
	if (dfs(h, rl, nroot, dfn, vertex, NULL, t.label, t.ancestor) != nv) {
		rc = PH_EINVAL; /* cannot happen: the same walk twice */
		goto out;
	}
	ph_heap_big_free(t.ancestor);
	ph_heap_big_free(t.label);
	t.ancestor = t.label = NULL;

	/* per object: immediate dominators, then retained sizes, children
	 * before parents (reverse preorder) */
	h->idom = dfn;
	dfn = NULL;
	memset(h->idom, 0xff, ((size_t)N + 1) * 4);
	for (uint32_t w = 1; w < nv; w++)
		h->idom[vertex[w]] = t.idom[w] ? vertex[t.idom[w]] :
						 PH_HEAP_NONE;
	h->retained = ph_heap_big_alloc(((size_t)N + 1) * 8);
	h->retained_count = ph_heap_big_alloc(((size_t)N + 1) * 4);
	if (!h->retained || !h->retained_count)
		goto out;
	for (uint32_t w = nv - 1; w >= 1; w--) {
		uint32_t x = vertex[w];

		h->retained[x] += h->shallow[x];
		h->retained_count[x] += 1;
		if (t.idom[w]) {
			uint32_t y = vertex[t.idom[w]];

			h->retained[y] += h->retained[x];
			h->retained_count[y] += h->retained_count[x];
		}
	}
	/* per class: instances not dominated by one of their own class */
	for (uint32_t x = 0; x < N; x++) {
		uint32_t d = h->idom[x];

		if (!h->retained_count[x] ||
		    ph_heap_kind_of(h, x) == PH_HEAP_CLASS)
			continue;
		if (d == PH_HEAP_NONE || h->cls[d] != h->cls[x] ||
		    ph_heap_kind_of(h, d) == PH_HEAP_CLASS)
			h->classes[h->cls[x]].retained += h->retained[x];
	}
	rc = 0;
out:
	ph_heap_big_free(dfn);
	free(rl);
	ph_heap_big_free(vertex);
	ph_heap_big_free(parent);
	ph_heap_big_free(pe);
	ph_heap_big_free(t.semi);
	ph_heap_big_free(t.label);
	ph_heap_big_free(t.ancestor);
	ph_heap_big_free(t.idom);
	free(t.stk);
	if (rc) {
		ph_heap_big_free(h->idom);
		ph_heap_big_free(h->retained);
		ph_heap_big_free(h->retained_count);
		h->idom = NULL;
		h->retained = NULL;
		h->retained_count = NULL;
	}
	return rc;
}

uint64_t ph_heap_retained_in_heap(struct ph_heap *h, uint32_t obj,
				  uint32_t heap)
{
	uint8_t *in = NULL;
	uint32_t *path = NULL;
	uint64_t sum = 0;

	if (!h->idom || obj >= h->nobj || !h->retained_count[obj])
		return 0;
	in = ph_heap_big_alloc((size_t)h->nobj + 1); /* 0 ?, 1 in, 2 out */
	path = ph_heap_big_alloc(((size_t)h->nobj + 1) * 4);
	if (!in || !path)
		goto out;
	in[obj] = 1;
	for (uint32_t x = 0; x < h->nobj; x++) {
		size_t n = 0;
		uint32_t y = x;
		uint8_t v;

		if (!h->retained_count[x] || in[x])
			continue;
		while (y != PH_HEAP_NONE && !in[y]) {
			path[n++] = y;
			y = h->idom[y];
		}
		v = y == PH_HEAP_NONE ? 2 : in[y];
		while (n)
			in[path[--n]] = v;
	}
	for (uint32_t x = 0; x < h->nobj; x++)
		if (in[x] == 1 && ph_heap_heap_of(h, x) == heap)
			sum += h->shallow[x];
out:
	ph_heap_big_free(in);
	ph_heap_big_free(path);
	return sum;
}
