/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_intern.c: the trace engine's two hash tables: ph_intmap (int64
 * keys to uint32 values: pids, tids, uuids, track keys) and the string
 * table behind ph_trace_intern() (every name and string column is an id
 * into it).  Both are on the decoders' per-event path: open addressing,
 * linear probing, a word-at-a-time hash.
 */
#include "ph_common.h"
#include "trace/trace.h"
#include "trace/trace_int.h"

/* --- int64 -> uint32 map ------------------------------------------------- */

struct ph_intmap {
	uint64_t *keys;
	uint32_t *vals; /* value + 1; 0 = empty */
	size_t n, cap;	/* cap is a power of two */
};

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

struct ph_intmap *ph_intmap_new(void)
{
	return calloc(1, sizeof(struct ph_intmap));
}

void ph_intmap_free(struct ph_intmap *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	free(m);
}

bool ph_intmap_get(const struct ph_intmap *m, uint64_t key, uint32_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	for (i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return false;
		if (m->keys[i] == key) {
			*val = m->vals[i] - 1;
			return true;
		}
	}
}

static int intmap_grow(struct ph_intmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *k = calloc(cap, sizeof(*k));
	uint32_t *v = calloc(cap, sizeof(*v));

	if (!k || !v) {
		free(k);
		free(v);
		return PH_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		for (j = mix64(m->keys[i]) & (cap - 1); v[j];
		     j = (j + 1) & (cap - 1))
			;
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = cap;
	return 0;
}

int ph_intmap_put(struct ph_intmap *m, uint64_t key, uint32_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && intmap_grow(m))
		return PH_ENOMEM;
	for (i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i]) {
			m->keys[i] = key;
			m->vals[i] = val + 1;
			m->n++;
			return 0;
		}
		if (m->keys[i] == key) {
			m->vals[i] = val + 1;
			return 0;
		}
	}
}

/* Removal by tombstone would complicate probing; a dead key maps to ~0. */
void ph_intmap_del(struct ph_intmap *m, uint64_t key)
{
	uint32_t v;

	if (ph_intmap_get(m, key, &v))
		(void)ph_intmap_put(m, key, UINT32_MAX - 1);
}

/* --- strings ------------------------------------------------------------- */

/*
 * A word-at-a-time hash: comm and slice names are 8-30 bytes, and this
 * runs twice per sched_switch, so byte-wise FNV showed in profiles.
 */
uint64_t ph_trace_strhash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;

		memcpy(&w, s, n);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

#define hash_bytes ph_trace_strhash

static int strtab_rehash(struct ph_strtab *st)
{
	uint32_t ns = st->nslots ? st->nslots * 2 : 1024;
	uint32_t *slots = calloc(ns, sizeof(*slots));

	if (!slots)
		return PH_ENOMEM;
	for (uint32_t id = 1; id < st->n; id++) {
		uint64_t h = hash_bytes(st->strs[id], st->len[id]);
		uint32_t i;

		for (i = h & (ns - 1); slots[i]; i = (i + 1) & (ns - 1))
			;
		slots[i] = id;
	}
	free(st->slots);
	st->slots = slots;
	st->nslots = ns;
	return 0;
}

uint32_t ph_trace_intern(struct ph_trace *t, const char *s, size_t n)
{
	struct ph_strtab *st = &t->strs;
	uint64_t h;
	uint32_t i;
	char *copy;

	if (!s)
		return 0;
	if ((st->n + 1) * 2 > st->nslots && strtab_rehash(st))
		return 0;
	h = hash_bytes(s, n);
	for (i = h & (st->nslots - 1); st->slots[i];
	     i = (i + 1) & (st->nslots - 1)) {
		uint32_t id = st->slots[i];

		if (st->len[id] == n && !memcmp(st->strs[id], s, n))
			return id;
	}
	if (st->n >= st->alloc) {
		/* the two arrays in step: each grows from the same count */
		size_t na = st->alloc, nl = st->alloc;

		if (PH_GROW(st->strs, na, (size_t)st->n + 1, 1024) ||
		    PH_GROW(st->len, nl, (size_t)st->n + 1, 1024) ||
		    na > UINT32_MAX)
			return 0;
		if (!st->alloc) {
			st->strs[0] = NULL;
			st->len[0] = 0;
		}
		st->alloc = (uint32_t)na;
	}
	copy = ph_arena_strndup(&st->arena, s, n);
	if (!copy)
		return 0;
	st->strs[st->n] = copy;
	st->len[st->n] = (uint32_t)n;
	st->slots[i] = st->n;
	return st->n++;
}
