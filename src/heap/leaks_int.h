/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leaks_int.h: what the leak finder's parts share, and no one else uses:
 * leak_inspect.c (what an object is, which objects are leaking) and
 * leaks.c (the traces to them).
 */
#ifndef PH_HEAP_LEAKS_INT_H
#define PH_HEAP_LEAKS_INT_H

#include "ph_common.h"
#include "heap.h"

/* One leak search: the heap, and what each of its classes is. */
struct ph_leak_ctx {
	struct ph_heap *h;
	uint32_t *traits; /* per class */
	uint32_t watch;	  /* --class, or NONE */
};

/* What the inspectors say about one object: reasons for each status. */
struct ph_leak_verdict {
	const char *yes[8];
	size_t nyes;
	const char *no[8];
	size_t nno;
	const char *labels[16];
	size_t nlabels;
};

/* Appends s to arr (of cap entries) when there is room; NULL is skipped. */
void ph_leak_verdict_add(const char **arr, size_t *n, size_t cap,
			 const char *s);
#define YES(v, s)   ph_leak_verdict_add((v)->yes, &(v)->nyes, 8, (s))
#define NO(v, s)    ph_leak_verdict_add((v)->no, &(v)->nno, 8, (s))
#define LABEL(v, s) ph_leak_verdict_add((v)->labels, &(v)->nlabels, 16, (s))

/* A leaking object and why. */
struct ph_leak_cand {
	uint32_t obj;
	const char *reason;
	const char *labels[4];
	size_t nlabels;
};

struct ph_leak_cands {
	struct ph_leak_cand *p;
	size_t n, cap;
};

/* printf into the heap's arena; "" when out of memory. */
const char *ph_leak_afmt(struct ph_heap *h, const char *fmt, ...)
	PH_PRINTF(2, 3);
/* A class name without its package. */
const char *ph_leak_simple_name(const char *name);
/* Fills x->traits, one bit set per known Android class an object is. */
int ph_leak_traits_build(struct ph_leak_ctx *x);
/* Everything the inspectors say about obj, into v. */
void ph_leak_inspect(struct ph_leak_ctx *x, uint32_t obj,
		     struct ph_leak_verdict *v);
/*
 * Resolves a verdict into n's status and reason.  On the leaking object
 * itself (leaking_wins), a YES wins a conflict; elsewhere a NO does.
 */
void ph_leak_resolve(struct ph_heap *h, const struct ph_leak_verdict *v,
		     bool leaking_wins, struct ph_leak_node *n);
/* Referents of retained KeyedWeakReference watches, into cs. */
void ph_leak_find_watched(struct ph_leak_ctx *x, struct ph_leak_cands *cs);
/* Objects whose own state says they are done with, and --class's. */
void ph_leak_find_inspected(struct ph_leak_ctx *x, struct ph_leak_cands *cs);

#endif
