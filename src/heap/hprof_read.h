/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hprof_read.h: what the three hprof files share (hprof.c reads the dump
 * and opens it, hprof_index.c sorts and indexes its objects, hprof_class.c
 * names classes and reads values): the big-endian readers, the growable
 * array of the pass, and the two steps opening calls in the other files.
 */
#ifndef PH_HEAP_HPROF_READ_H
#define PH_HEAP_HPROF_READ_H

#include "ph_common.h"
#include "heap.h"

static inline uint32_t rd4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

static inline uint16_t rd2(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint64_t rd8(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static inline uint64_t rdid(const uint8_t *p, uint32_t idsz)
{
	return idsz == 4 ? rd4(p) : rd8(p);
}

struct ph_hprof_vec {
	void *p;
	size_t n, cap;
	bool big; /* p is ph_heap_big_alloc's */
};

static inline int ph_hprof_vec_push(struct ph_hprof_vec *v, const void *item,
				    size_t sz)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		void *np = v->big ? ph_heap_big_realloc(v->p, cap * sz) :
				    realloc(v->p, cap * sz);

		if (!np)
			return PH_ENOMEM;
		v->p = np;
		v->cap = cap;
	}
	memcpy((char *)v->p + v->n * sz, item, sz);
	v->n++;
	return 0;
}

/* The object index over the pass's ids and metas (hprof_index.c). */
int ph_hprof_build_index(struct ph_heap *h, uint64_t *ids, uint64_t *metas);
/* Class names, fields and reference offsets, once classes are sorted
 * (hprof_class.c). */
int ph_hprof_finish_classes(struct ph_heap *h);

#endif
