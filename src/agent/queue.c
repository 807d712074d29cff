#include "ph_common.h"
#include "queue.h"
#include "ph_error.h"

int ph_queue_init(struct ph_queue *q, size_t capacity)
{
	size_t n = 64;

	while (n < capacity)
		n <<= 1;
	memset(q, 0, sizeof(*q));
	q->cells = aligned_alloc(64, n * sizeof(*q->cells));
	q->drops_after = calloc(n, sizeof(*q->drops_after));
	if (!q->cells || !q->drops_after) {
		ph_queue_release(q);
		return PH_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		atomic_init(&q->cells[i].turn, i);
	q->mask = n - 1;
	return 0;
}

void ph_queue_release(struct ph_queue *q)
{
	free(q->cells);
	free((void *)q->drops_after);
	q->cells = NULL;
	q->drops_after = NULL;
}

/* Drops recorded after this position, taken (and zeroed). */
static uint64_t take_drops(struct ph_queue *q, uint64_t pos)
{
	uint64_t n = atomic_exchange_explicit(&q->drops_after[pos & q->mask], 0,
					      memory_order_relaxed);

	q->drops_taken += n;
	return n;
}

struct ph_rec *ph_queue_next(struct ph_queue *q, uint64_t *late_drops)
{
	struct ph_cell *c = &q->cells[q->deq & q->mask];
	uint64_t turn = atomic_load_explicit(&c->turn, memory_order_acquire);

	*late_drops = 0;
	if (turn == q->deq + 1)
		return &c->rec;
	/*
	 * Idle.  A producer that found the queue full, then was preempted
	 * while the consumer drained past the event it meant to count after,
	 * leaves its count a lap early in drops_after[].  Sweep those up when
	 * the totals disagree, so the count is exact even if no event ever
	 * lands in that cell again.
	 */
	if (atomic_load_explicit(&q->dropped, memory_order_acquire) >
		    q->drops_taken &&
	    atomic_load_explicit(&q->enq, memory_order_relaxed) == q->deq) {
		for (uint64_t i = 0; i <= q->mask; i++)
			*late_drops += take_drops(q, i);
	}
	return NULL;
}

uint64_t ph_queue_done(struct ph_queue *q)
{
	struct ph_cell *c = &q->cells[q->deq & q->mask];
	uint64_t after = take_drops(q, q->deq);

	atomic_store_explicit(&c->turn, q->deq + q->mask + 1,
			      memory_order_release);
	q->deq++;
	return after;
}
