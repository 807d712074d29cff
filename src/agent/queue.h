/*
 * queue.h: the emit queue, many producers and one consumer, lock-free.
 *
 * Every event call in every app thread goes through here, so the producer
 * side is the agent's hot path: claim a slot with one compare-and-swap,
 * fill the record in place, publish it with one release store.  No lock,
 * no allocation, no system call, nothing a slow client can hold up.  The
 * design is Dmitry Vyukov's bounded MPMC queue (a sequence number per cell
 * says whose turn the cell is), used with a single consumer: the writer.
 *
 * When the queue is full the event is dropped and counted, exactly, after
 * the last event that did get in (drops_after[] of that event's cell).  The
 * writer numbers events as it takes them, in queue order, and skips one seq
 * per drop right where it happened: so seq order is delivery order, every
 * client and the ring see the same seq for the same event, and a drop is a
 * visible gap (docs/protocol.md section 1.6).
 */
#ifndef PH_AGENT_QUEUE_H
#define PH_AGENT_QUEUE_H

#include "ph_common.h"
#include "record.h"

#include <stdatomic.h>

struct ph_cell {
	_Alignas(64) _Atomic uint64_t turn; /* pos: free; pos+1: published */
	struct ph_rec rec;
};

struct ph_queue {
	struct ph_cell *cells;
	_Atomic uint64_t *drops_after; /* drops right after the event at pos */
	uint64_t mask;		       /* capacity - 1 */
	_Alignas(64) _Atomic uint64_t enq;
	_Alignas(64) _Atomic uint64_t dropped; /* every drop, for stats */
	_Alignas(64) uint64_t deq;	       /* the consumer's alone */
	uint64_t drops_taken;		       /* drops the consumer took */
};

/* capacity is rounded up to a power of two; PH_ENOMEM on failure. */
int ph_queue_init(struct ph_queue *q, size_t capacity) PH_WUR;
void ph_queue_release(struct ph_queue *q);

/*
 * Producer: a record to fill, or NULL when the queue is full (the drop is
 * already counted).  *pos identifies the claim for ph_queue_publish().
 */
static inline struct ph_rec *ph_queue_claim(struct ph_queue *q, uint64_t *pos)
{
	uint64_t p = atomic_load_explicit(&q->enq, memory_order_relaxed);

	for (;;) {
		struct ph_cell *c = &q->cells[p & q->mask];
		uint64_t turn =
			atomic_load_explicit(&c->turn, memory_order_acquire);
		int64_t dif = (int64_t)(turn - p);

		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(
				    &q->enq, &p, p + 1, memory_order_relaxed,
				    memory_order_relaxed)) {
				*pos = p;
				return &c->rec;
			}
		} else if (dif < 0) {
			/* Full: the consumer has not freed this cell yet. */
			atomic_fetch_add_explicit(
				&q->drops_after[(p - 1) & q->mask], 1,
				memory_order_relaxed);
			atomic_fetch_add_explicit(&q->dropped, 1,
						  memory_order_release);
			return NULL;
		} else {
			p = atomic_load_explicit(&q->enq, memory_order_relaxed);
		}
	}
}

static inline void ph_queue_publish(struct ph_queue *q, uint64_t pos)
{
	atomic_store_explicit(&q->cells[pos & q->mask].turn, pos + 1,
			      memory_order_release);
}

/*
 * Consumer: the next published record, or NULL.  With NULL, *late_drops is
 * the count of drops that could not be placed after an event (see
 * queue.c); otherwise 0.
 */
struct ph_rec *ph_queue_next(struct ph_queue *q, uint64_t *late_drops);
/*
 * Consumer: frees the record ph_queue_next() returned and says how many
 * events were dropped right after it.
 */
uint64_t ph_queue_done(struct ph_queue *q);

#endif
