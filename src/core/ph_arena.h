/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_arena.h: a bump allocator for things that live exactly as long as one
 * parse, one request or one report (git's mem-pool).
 *
 * Allocations are never freed one by one: ph_arena_reset() drops them all
 * at once and keeps the first block for the next use, ph_arena_release()
 * gives every block back.  ph_arena_alloc aligns to 16 bytes (which is
 * alignof(max_align_t) on x86_64 and aarch64);
 * ph_arena_alloc_bytes does not align.
 *
 * An arena has a cap on its total size, so hostile input cannot make a
 * parser hold unbounded memory: past the cap, allocation returns NULL and
 * the caller reports PH_ETOOBIG.
 */
#ifndef PH_ARENA_H
#define PH_ARENA_H

#include "ph_common.h"

struct ph_arena_block;

struct ph_arena {
	struct ph_arena_block *head; /* the block being filled */
	char *next;		     /* first free byte in head */
	char *end;		     /* one past head's last byte */
	size_t block_size;	     /* size of a regular block */
	size_t total;		     /* bytes held in all blocks */
	size_t cap;		     /* the most total may become */
	/* Regular blocks ph_arena_recycle kept, handed out again before any
	 * new one is allocated; not counted in total. */
	struct ph_arena_block *spare;
	/* Regular blocks are 2 MiB-aligned huge pages (ph_arena_init_huge). */
	bool huge;
};

#define PH_ARENA_DEFAULT_BLOCK ((size_t)64 * 1024)

void ph_arena_init(struct ph_arena *a, size_t block_size, size_t cap);
/*
 * An arena whose regular blocks are one 2 MiB huge page each, header
 * included, advised MADV_HUGEPAGE: for an arena that fills hundreds of MB
 * (the live store), where a fault per 4 KiB page costs more than the
 * parse that fills it.
 */
void ph_arena_init_huge(struct ph_arena *a, size_t cap);
/* Frees every block. The arena can be used again. */
void ph_arena_release(struct ph_arena *a);
/* Forgets every allocation but keeps one block for reuse. */
void ph_arena_reset(struct ph_arena *a);
/* Forgets every allocation and keeps every regular block, to be filled
 * again before any new block is allocated: an arena refilled at a steady
 * rate (the live store's chunks) then touches no fresh page, whose first
 * write is a page fault. */
void ph_arena_recycle(struct ph_arena *a);

void *ph_arena_alloc_slow(struct ph_arena *a, size_t size, size_t align);

/* size bytes aligned for any type, or NULL past the cap. */
static inline void *ph_arena_alloc(struct ph_arena *a, size_t size)
{
	uintptr_t p = ((uintptr_t)a->next + 15) & ~(uintptr_t)15;

	/* Aligning can step past a full block's end: check both. */
	if (PH_LIKELY(a->next && p <= (uintptr_t)a->end &&
		      size <= (uintptr_t)a->end - p)) {
		a->next = (char *)(p + size);
		return (void *)p;
	}
	return ph_arena_alloc_slow(a, size, 16);
}

/* size bytes with no alignment (strings), or NULL past the cap. */
static inline char *ph_arena_alloc_bytes(struct ph_arena *a, size_t size)
{
	if (PH_LIKELY(a->next && size <= (size_t)(a->end - a->next))) {
		char *p = a->next;

		a->next += size;
		return p;
	}
	return ph_arena_alloc_slow(a, size, 1);
}

/* A NUL-terminated copy of n bytes of s, or NULL past the cap. */
char *ph_arena_strndup(struct ph_arena *a, const char *s, size_t n);

/* Bytes handed out so far (for tests and memory reports). */
size_t ph_arena_used(const struct ph_arena *a);

#endif
