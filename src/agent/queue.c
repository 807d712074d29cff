/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.c: the lock-free emit queue, many producers and one consumer: a
 * producer claims cells with one compare-and-swap and publishes with one
 * release store; the consumer frees cells in order (layout in queue.h).
 */
#include "ph_common.h"
#include "queue.h"
#include "ph_error.h"

int ph_queue_init(struct ph_queue *q, size_t capacity)
{
	size_t n = 64;

	while (n < capacity)
		n <<= 1;
	memset(q, 0, sizeof(*q));
	q->cells = aligned_alloc(64, (n + PH_QUEUE_SPILL) * PH_QUEUE_CELL);
	q->drops_after = aligned_alloc(64, n * sizeof(*q->drops_after));
	if (!q->cells || !q->drops_after) {
		ph_queue_release(q);
		return PH_ENOMEM;
	}
	q->mask = n - 1;
	/*
	 * Every page is written here, by porthole_start, so no emitter ever
	 * takes a page fault (a trip into the kernel) on its first lap, and
	 * the heap's old bytes can never pass for a published turn: turn i,
	 * not i + 1, as nothing is published yet.  Atomic stores, which the
	 * compiler cannot fold into a calloc whose pages stay untouched.
	 */
	for (size_t i = 0; i < n; i++) {
		atomic_store_explicit(ph_queue_turn(q, i), i,
				      memory_order_relaxed);
		atomic_store_explicit(&q->drops_after[i], 0,
				      memory_order_relaxed);
	}
	memset(q->cells + (n * PH_QUEUE_CELL), 0,
	       PH_QUEUE_SPILL * PH_QUEUE_CELL);
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
	uint64_t turn = atomic_load_explicit(ph_queue_turn(q, q->deq),
					     memory_order_acquire);

	*late_drops = 0;
	if (turn == q->deq + 1)
		return ph_queue_rec(q, q->deq);
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
	uint64_t k = ph_queue_rec(q, q->deq)->cells;
	uint64_t after = take_drops(q, q->deq + k - 1);

	/*
	 * The record's bytes ran over the turn words of its later cells (or
	 * into the spill area): put back a value no publish can ever equal
	 * (a publish at pos stores pos + 1, pos >= this + the lap), so a
	 * record starting there next lap is not mistaken for published.  Its
	 * first cell already holds such a value (deq + 1, a lap old by then)
	 * and is left alone: the consumer never writes the line of a one-cell
	 * record, so the producer that takes the cell next lap does not have
	 * to pull it back from the writer's core.
	 */
	for (uint64_t i = 1; i < k; i++)
		atomic_store_explicit(ph_queue_turn(q, q->deq + i), q->deq + i,
				      memory_order_relaxed);
	q->deq += k;
	atomic_store_explicit(&q->released, q->deq, memory_order_release);
	return after;
}
