/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_arena.c: the bump allocator for one parse, request or report: blocks
 * chained newest first, handed out in order, freed all at once, under a
 * cap that hostile input cannot pass (ph_arena.h).
 */
#include "ph_common.h"
#include "ph_arena.h"

#include <sys/mman.h>

struct ph_arena_block {
	struct ph_arena_block *prev;
	size_t size; /* bytes of data[] */
	size_t used; /* bytes of data[] handed out before the block was left */
	_Alignas(16) char data[];
};

#define HUGE_PAGE ((size_t)2 << 20)

void ph_arena_init(struct ph_arena *a, size_t block_size, size_t cap)
{
	memset(a, 0, sizeof(*a));
	a->block_size = block_size ? block_size : PH_ARENA_DEFAULT_BLOCK;
	a->cap = cap;
}

void ph_arena_init_huge(struct ph_arena *a, size_t cap)
{
	ph_arena_init(a, HUGE_PAGE - sizeof(struct ph_arena_block), cap);
	a->huge = true;
}

/* A regular block: in a huge arena, one whole aligned huge page. */
static struct ph_arena_block *block_new(const struct ph_arena *a, size_t want)
{
	struct ph_arena_block *b;

	if (!a->huge || want != a->block_size)
		return malloc(sizeof(*b) + want);
	b = aligned_alloc(HUGE_PAGE, HUGE_PAGE);
#ifdef MADV_HUGEPAGE
	/* Before the first write, so the first fault maps the whole page;
	 * where THP is off this is refused and 4 KiB pages serve. */
	if (b)
		(void)madvise(b, HUGE_PAGE, MADV_HUGEPAGE);
#endif
	return b;
}

static void free_chain(struct ph_arena_block *b)
{
	while (b) {
		struct ph_arena_block *prev = b->prev;

		free(b);
		b = prev;
	}
}

void ph_arena_release(struct ph_arena *a)
{
	bool huge = a->huge;

	free_chain(a->head);
	free_chain(a->spare);
	ph_arena_init(a, a->block_size, a->cap);
	a->huge = huge;
}

void ph_arena_recycle(struct ph_arena *a)
{
	struct ph_arena_block *b = a->head;

	while (b) {
		struct ph_arena_block *prev = b->prev;

		if (b->size == a->block_size) {
			b->prev = a->spare;
			a->spare = b;
		} else {
			free(b);
		}
		b = prev;
	}
	a->head = NULL;
	a->next = a->end = NULL;
	a->total = 0;
}

void ph_arena_reset(struct ph_arena *a)
{
	struct ph_arena_block *b = a->head, *keep = NULL;

	/* Keep the first (oldest, regular-sized) block; free the rest. */
	while (b) {
		struct ph_arena_block *prev = b->prev;

		if (!prev && b->size == a->block_size)
			keep = b;
		else
			free(b);
		b = prev;
	}
	a->head = keep;
	a->total = keep ? sizeof(*keep) + keep->size : 0;
	a->next = keep ? keep->data : NULL;
	a->end = keep ? keep->data + keep->size : NULL;
}

void *ph_arena_alloc_slow(struct ph_arena *a, size_t size, size_t align)
{
	struct ph_arena_block *b;
	size_t want = a->block_size;
	uintptr_t p;

	if (a->next) {
		p = ((uintptr_t)a->next + align - 1) & ~(uintptr_t)(align - 1);
		if (size <= (uintptr_t)a->end - p && p <= (uintptr_t)a->end) {
			a->next = (char *)(p + size);
			return (void *)p;
		}
	}
	/* A large request gets a block of its own, sized to fit. */
	if (size > want / 4)
		want = size;
	if (size > a->cap || sizeof(*b) + want > a->cap - a->total)
		return NULL;
	if (want == a->block_size && a->spare) {
		b = a->spare;
		a->spare = b->prev;
	} else if (!(b = block_new(a, want))) {
		return NULL;
	}
	b->size = want;
	b->used = 0;
	a->total += sizeof(*b) + want;
	if (want != a->block_size && a->head) {
		/*
		 * Slot the oversized block behind the current one so the
		 * space left in the current block is not wasted.
		 */
		b->prev = a->head->prev;
		a->head->prev = b;
		b->used = size;
		return b->data;
	}
	if (a->head)
		a->head->used = (size_t)(a->next - a->head->data);
	b->prev = a->head;
	a->head = b;
	a->next = b->data + size;
	a->end = b->data + want;
	return b->data;
}

char *ph_arena_strndup(struct ph_arena *a, const char *s, size_t n)
{
	char *p = ph_arena_alloc_bytes(a, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

size_t ph_arena_used(const struct ph_arena *a)
{
	size_t n = 0;

	for (const struct ph_arena_block *b = a->head; b; b = b->prev)
		n += b == a->head ? (size_t)(a->next - b->data) : b->used;
	return n;
}
