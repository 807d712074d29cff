/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.h: the emit queue, many producers and one consumer, lock-free.
 *
 * Every event call in every app thread goes through here, so the producer
 * side is the agent's hot path.  An emitter fills its record in a
 * thread-local scratch (agent.h), then pushes it: claim as many fixed-size
 * 128-byte cells as the record needs with one compare-and-swap on the
 * enqueue position, copy the record's used bytes in, publish it with one
 * release store.  No lock, no allocation, no system call, nothing a slow
 * client can hold up.
 *
 * Cells, not one large slot per event, because most events are small: a
 * mark or a span needs one cell, a log line with a long message a dozen.
 * With 1.5 KB slots every event dirtied a fresh region of a 6 MB queue and
 * the app's threads paid for the cache misses; cells keep consecutive
 * events in consecutive lines and let the queue hold 8x more events in
 * less memory.
 *
 * Layout: cell i starts with its turn word.  The first cell of a record
 * says whose turn it is (pos + 1: published); the record's header and
 * bytes follow it and run on through the record's later cells, over their
 * turn words, which the consumer rewrites when it frees them.  A record
 * that would run past the last cell runs on into a spill area after it
 * (PH_QUEUE_SPILL cells), so every record is contiguous in memory.
 * Producers see free room through `released`, which the consumer
 * advances; the last value a producer read is kept in `seen`, in the line
 * of `enq` that every push writes anyway, so an emitter touches the
 * consumer's line about once per lap, not once per event, and keeps no
 * state of its own.
 *
 * When the queue is full the event is dropped and counted, exactly, after
 * the last event that did get in (drops_after[] at that event's last
 * cell).  The writer numbers events as it takes them (merged from the
 * threads' own queues and the shared one, lanes.h), and skips one seq per
 * drop right where it happened: so seq order is delivery order, every
 * client and the ring see the same seq for the same event, and a drop is
 * a visible gap (docs/protocol.md section 1.6).
 *
 * The same queue serves as a thread's own (a lane: one producer) and as
 * the shared one (any number).
 */
#ifndef PH_AGENT_QUEUE_H
#define PH_AGENT_QUEUE_H

#include "ph_common.h"
#include "record.h"

#include <stdatomic.h>

#define PH_QUEUE_CELL 128
#define PH_QUEUE_TURN 8 /* the turn word at the start of each cell */
/* The most cells one record can take: the largest record, turn included. */
#define PH_QUEUE_SPILL \
	((PH_QUEUE_TURN + PH_REC_SIZE + PH_QUEUE_CELL - 1) / PH_QUEUE_CELL)

struct ph_queue {
	uint8_t *cells;		       /* (mask + 1 + PH_QUEUE_SPILL) cells */
	_Atomic uint64_t *drops_after; /* drops right after the event at pos */
	uint64_t mask;		       /* cells - 1 */
	_Alignas(64) _Atomic uint64_t enq;
	_Atomic uint64_t seen; /* a producer's last look at released */
	_Alignas(64) _Atomic uint64_t released; /* cells before it are free */
	_Alignas(64) _Atomic uint64_t dropped;	/* every drop, for stats */
	_Alignas(64) uint64_t deq;		/* the consumer's alone */
	uint64_t drops_taken;			/* drops the consumer took */
};

/* capacity (cells) is rounded up to a power of two; PH_ENOMEM on failure. */
int ph_queue_init(struct ph_queue *q, size_t capacity) PH_WUR;
void ph_queue_release(struct ph_queue *q);

static inline _Atomic uint64_t *ph_queue_turn(const struct ph_queue *q,
					      uint64_t pos)
{
	return (_Atomic uint64_t *)(void *)(q->cells +
					    (pos & q->mask) * PH_QUEUE_CELL);
}

static inline struct ph_rec *ph_queue_rec(const struct ph_queue *q,
					  uint64_t pos)
{
	return (struct ph_rec *)(void *)(q->cells +
					 (pos & q->mask) * PH_QUEUE_CELL +
					 PH_QUEUE_TURN);
}

/* Producer: counts one event dropped, after the newest one that got in. */
static inline void ph_queue_drop(struct ph_queue *q, uint64_t enq)
{
	atomic_fetch_add_explicit(&q->drops_after[(enq - 1) & q->mask], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&q->dropped, 1, memory_order_release);
}

/*
 * Producer: r's `bytes` (its header and r->used bytes, r->cells set) into
 * the cells claimed at p of a queue's cells and mask, then published.
 */
static inline void ph_cells_write(uint8_t *cells, uint64_t mask, uint64_t p,
				  const struct ph_rec *r, size_t bytes)
{
	uint8_t *cell = cells + (p & mask) * PH_QUEUE_CELL;

	/*
	 * A record that fits in the rest of its cell's first line (a mark, a
	 * span, a short log) goes as one fixed-size copy, a few moves the
	 * compiler writes in place, rather than a call into libc's memcpy.
	 */
	if (bytes <= 64 - PH_QUEUE_TURN)
		memcpy(cell + PH_QUEUE_TURN, r, 64 - PH_QUEUE_TURN);
	else
		memcpy(cell + PH_QUEUE_TURN, r, bytes);
	atomic_store_explicit((_Atomic uint64_t *)(void *)cell, p + 1,
			      memory_order_release);
}

/* The cells a record of `bytes` takes, its turn word included. */
static inline uint64_t ph_queue_cells_for(size_t bytes)
{
	return (PH_QUEUE_TURN + bytes + PH_QUEUE_CELL - 1) / PH_QUEUE_CELL;
}

/*
 * Producer: copies r (its header and r->used bytes) into the queue, or
 * returns false when the queue is full (nothing counted: see
 * ph_queue_push).
 */
static inline bool ph_queue_put(struct ph_queue *q, struct ph_rec *r)
{
	size_t bytes = PH_REC_HEAD + r->used;
	uint64_t k = ph_queue_cells_for(bytes);
	uint64_t p = atomic_load_explicit(&q->enq, memory_order_relaxed);
	/*
	 * Acquire, as seen stands for the acquire load of released some
	 * producer made: the consumer's reads of the cells it freed come
	 * before this producer's writes into them.
	 */
	uint64_t seen = atomic_load_explicit(&q->seen, memory_order_acquire);

	r->cells = (uint8_t)k;
	for (;;) {
		/*
		 * Signed: p may be stale (another producer moved enq on) and
		 * then behind a fresh seen; that is room, not a full queue,
		 * and the compare-and-swap below fails and reloads p.  Another
		 * producer may store an older seen over a newer one: that
		 * only makes the next push look at released again.
		 */
		if (PH_UNLIKELY((int64_t)(p + k - seen) >
				(int64_t)q->mask + 1)) {
			seen = atomic_load_explicit(&q->released,
						    memory_order_acquire);
			atomic_store_explicit(&q->seen, seen,
					      memory_order_release);
			if ((int64_t)(p + k - seen) > (int64_t)q->mask + 1)
				return false; /* the consumer has not freed
						 enough */
		}
		if (atomic_compare_exchange_weak_explicit(&q->enq, &p, p + k,
							  memory_order_relaxed,
							  memory_order_relaxed))
			break;
	}
	ph_cells_write(q->cells, q->mask, p, r, bytes);
	return true;
}

/* Producer: ph_queue_put, or the event dropped and counted when full. */
static inline bool ph_queue_push(struct ph_queue *q, struct ph_rec *r)
{
	if (PH_LIKELY(ph_queue_put(q, r)))
		return true;
	ph_queue_drop(q, atomic_load_explicit(&q->enq, memory_order_relaxed));
	return false;
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
