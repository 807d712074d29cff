/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hprof_index.c: the object index of an HPROF dump: the pass's ids sorted
 * (radix or rank sort, whichever the ids' spread allows) into the compact
 * keys ph_heap_find searches and ph_heap_id reverses.
 */
#include "ph_common.h"
#include "heap.h"
#include "hprof_read.h"

/*
 * Sorts ids with metas alongside: LSD radix, 16 bits a pass, over (id,
 * meta) pairs; stable, so duplicate ids (a hostile dump) keep dump order.
 * The general case: build_index avoids it for the usual dumps.
 */
static int radix_sort(uint64_t *ids, uint64_t *metas, size_t n)
{
	uint64_t *tmp, *t2;
	size_t i, *count;

	tmp = malloc(n * 16);
	t2 = malloc(n * 16);
	/* The digit counts, 512 KiB: the caller's own (a static one was
	 * shared by every thread sorting at once). */
	count = malloc(65537 * sizeof(*count));
	if (!tmp || !t2 || !count) {
		free(tmp);
		free(t2);
		free(count);
		return PH_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		tmp[2 * i] = ids[i];
		tmp[2 * i + 1] = metas[i];
	}
	for (unsigned shift = 0; shift < 64; shift += 16) {
		uint64_t all_or = 0, all_and = ~0ull;

		for (i = 0; i < n; i++) {
			all_or |= tmp[2 * i];
			all_and &= tmp[2 * i];
		}
		if (!(((all_or ^ all_and) >> shift) & 0xffff))
			continue; /* this digit is the same everywhere */
		memset(count, 0, 65537 * sizeof(*count));
		for (i = 0; i < n; i++)
			count[((tmp[2 * i] >> shift) & 0xffff) + 1]++;
		for (i = 1; i < 65537; i++)
			count[i] += count[i - 1];
		for (i = 0; i < n; i++) {
			size_t at = count[(tmp[2 * i] >> shift) & 0xffff]++;

			t2[2 * at] = tmp[2 * i];
			t2[2 * at + 1] = tmp[2 * i + 1];
		}
		uint64_t *sw = tmp;
		tmp = t2;
		t2 = sw;
	}
	for (i = 0; i < n; i++) {
		ids[i] = tmp[2 * i];
		metas[i] = tmp[2 * i + 1];
	}
	free(tmp);
	free(t2);
	free(count);
	return 0;
}

/* m[rank of keys[i]] = metas[i]: the rank is the bits set below it */
static inline __attribute__((always_inline)) void
scatter_body(const uint32_t *keys, const uint64_t *metas, uint64_t *m, size_t n,
	     const uint64_t *bm, const uint32_t *before)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t k = keys[i];
		uint64_t below = bm[k >> 6] & ((1ull << (k & 63)) - 1);

		m[before[k >> 6] + (uint32_t)__builtin_popcountll(below)] =
			metas[i];
	}
}

static void scatter(const uint32_t *keys, const uint64_t *metas, uint64_t *m,
		    size_t n, const uint64_t *bm, const uint32_t *before)
{
	scatter_body(keys, metas, m, n, bm, before);
}

/* The same with the popcnt instruction, where the CPU has it (x86-64
 * builds target the baseline, whose popcount is a library call). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PH_HAVE_POPCNT_TARGET 1
__attribute__((target("popcnt"))) static void
scatter_popcnt(const uint32_t *keys, const uint64_t *metas, uint64_t *m,
	       size_t n, const uint64_t *bm, const uint32_t *before)
{
	scatter_body(keys, metas, m, n, bm, before);
}
#else
#define PH_HAVE_POPCNT_TARGET 0
#endif

/*
 * Sorts by rank in a bitmap of the key space: every key sets its bit, a
 * key's place is the number of bits set before it.  O(n), and its writes
 * are sequential within each run of ascending ids, which is how dumps
 * come (a JVM dump is a few hundred address-ordered runs, one per heap
 * region).  Used when the key space is dense (at most 64 slots per
 * object, so the bitmap costs at most 8 bytes per object, briefly).
 * Returns 1, changing nothing, when two objects share an id.
 *
 * On entry keys[i] holds object i's key; on success keys and *metas are
 * in key order (*metas is replaced).
 */
static int rank_sort(uint32_t *keys, uint64_t **metas, size_t n, uint64_t span)
{
	size_t words = (size_t)(span >> 6) + 1;
	/* zeroed, and on huge pages as the index arrays are */
	uint64_t *bm = ph_heap_big_alloc(words * 8);
	uint32_t *before = ph_heap_big_alloc(words * 4);
	uint64_t *m = NULL;
	size_t i, at = 0;
	int rc = PH_ENOMEM;

	if (!bm || !before)
		goto out;
	for (i = 0; i < n; i++) {
		uint64_t bit = 1ull << (keys[i] & 63);

		if (bm[keys[i] >> 6] & bit) {
			rc = 1;
			goto out;
		}
		bm[keys[i] >> 6] |= bit;
	}
	m = ph_heap_big_alloc(n * 8);
	if (!m)
		goto out;
	for (size_t w = 0; w < words; w++) {
		before[w] = (uint32_t)at;
		at += (size_t)__builtin_popcountll(bm[w]);
	}
#if PH_HAVE_POPCNT_TARGET
	if (__builtin_cpu_supports("popcnt"))
		scatter_popcnt(keys, *metas, m, n, bm, before);
	else
#endif
		scatter(keys, *metas, m, n, bm, before);
	/* the sorted keys are the set bits, in order */
	at = 0;
	for (size_t w = 0; w < words; w++)
		for (uint64_t b = bm[w]; b; b &= b - 1)
			keys[at++] = (uint32_t)(w << 6 |
						(unsigned)__builtin_ctzll(b));
	ph_heap_big_free(*metas);
	*metas = m;
	rc = 0;
out:
	ph_heap_big_free(bm);
	ph_heap_big_free(before);
	return rc;
}

/*
 * The index (see heap.h) from the pass's ids and metas, in dump order;
 * takes both arrays.  Ids are addresses: they share an alignment (shift)
 * and usually span less than 2^32 aligned slots, so a 32-bit key per
 * object does; otherwise the raw ids stay (wide).
 */
int ph_hprof_build_index(struct ph_heap *h, uint64_t *ids, uint64_t *metas)
{
	size_t n = h->nobj;
	uint64_t min, max, or_bits = 0, span;
	bool sorted = true;
	uint32_t *keys;
	int rc;

	h->meta = metas;
	if (!n) {
		ph_heap_big_free(ids);
		h->keys = ph_heap_big_alloc(4);
		return h->keys ? 0 : PH_ENOMEM;
	}
	min = max = ids[0];
	for (size_t i = 1; i < n; i++) {
		/* ctz of the OR of differences from any one id is the
		 * alignment they all share */
		or_bits |= ids[i] - ids[0];
		if (ids[i] < ids[i - 1])
			sorted = false;
		if (ids[i] < min)
			min = ids[i];
		if (ids[i] > max)
			max = ids[i];
	}
	h->min_id = min;
	h->shift = or_bits ? (unsigned)__builtin_ctzll(or_bits) : 0;
	if (h->shift > 16)
		h->shift = 16;
	span = (max - min) >> h->shift;
	if (span > UINT32_MAX || (!sorted && span / 64 > n)) {
		/* wide, or sparse keys: the general sort */
		if (!sorted) {
			rc = radix_sort(ids, metas, n);
			if (rc) {
				ph_heap_big_free(ids);
				return rc;
			}
		}
		if (span > UINT32_MAX) {
			h->wide = true;
			h->wide_ids = ids;
			return 0;
		}
		sorted = true;
	}
	/* keys over the ids' own memory, then the rest given back */
	keys = (uint32_t *)ids;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)((ids[i] - min) >> h->shift);

		memcpy((char *)ids + 4 * i, &k, 4);
	}
	h->keys = ph_heap_big_realloc(keys, n * 4);
	if (!h->keys)
		h->keys = keys;
	if (sorted)
		return 0;
	rc = rank_sort(h->keys, &h->meta, n, span);
	if (rc != 1)
		return rc;
	/* duplicate ids: back to wide ids for the stable general sort */
	ids = ph_heap_big_alloc(n * 8);
	if (!ids)
		return PH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		ids[i] = min + ((uint64_t)h->keys[i] << h->shift);
	ph_heap_big_free(h->keys);
	h->keys = NULL;
	rc = radix_sort(ids, h->meta, n);
	if (rc) {
		ph_heap_big_free(ids);
		return rc;
	}
	keys = (uint32_t *)ids;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)((ids[i] - min) >> h->shift);

		memcpy((char *)ids + 4 * i, &k, 4);
	}
	h->keys = keys;
	return 0;
}

uint32_t ph_heap_find(const struct ph_heap *h, uint64_t id)
{
	size_t lo = 0, hi = h->nobj;

	if (!h->nobj || id < h->min_id)
		return PH_HEAP_NONE;
	if (h->wide) {
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (h->wide_ids[mid] < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < h->nobj && h->wide_ids[lo] == id ? (uint32_t)lo :
							       PH_HEAP_NONE;
	} else {
		uint64_t d = id - h->min_id;
		uint32_t key;

		if (d & ((1ull << h->shift) - 1))
			return PH_HEAP_NONE;
		d >>= h->shift;
		if (d > UINT32_MAX)
			return PH_HEAP_NONE;
		key = (uint32_t)d;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (h->keys[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < h->nobj && h->keys[lo] == key ? (uint32_t)lo :
							    PH_HEAP_NONE;
	}
}

uint64_t ph_heap_id(const struct ph_heap *h, uint32_t obj)
{
	if (h->wide)
		return h->wide_ids[obj];
	return h->min_id + ((uint64_t)h->keys[obj] << h->shift);
}
