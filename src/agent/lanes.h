/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lanes.h: a queue of its own for each emitting thread, and the writer's
 * merge of them.
 *
 * With one queue for every thread, each event call compare-and-swaps the
 * same enqueue word, and with threads on two cores that line moves between
 * them on nearly every call: at four threads it made most of an event
 * call's p99 (docs/agent.md).  So a thread takes a lane, a small queue of
 * its own, at its first event: its calls then write only lines no other
 * core writes, and the writer reads them.  There are PH_LANES lanes; a
 * thread that finds none free uses the shared queue, as every thread did
 * before.  A thread gives its lane back when it ends (a thread-specific
 * key's destructor) and the writer frees it once it has taken the last of
 * its events.
 *
 * A lane is small (PH_LANE_CELLS), so the shared queue stays what holds a
 * burst: a thread whose lane is full overflows into the shared queue, and
 * comes back to its lane only once the writer has taken the last event it
 * put there, so its events still go out in the order it emitted them.
 * Nothing is dropped while the shared queue has room; drops are counted
 * there, exactly as before (queue.h).
 *
 * The writer merges by the moment each event was emitted (struct
 * ph_rec.at, CLOCK_MONOTONIC ns): of the events at the heads of the
 * queues, the earliest goes first.  So one thread's events keep their
 * order, and an event that happened before another (its thread published
 * it, then signalled the thread that emitted the other) goes out first:
 * see ph_merge_next for why looking at the heads in the right order is
 * enough.  seq is still numbered by the writer in the order it sends.
 */
#ifndef PH_AGENT_LANES_H
#define PH_AGENT_LANES_H

#include "ph_common.h"
#include "queue.h"

#include <stdatomic.h>

#define PH_LANES      16   /* threads with a queue of their own */
#define PH_LANE_CELLS 1024 /* 128 KB each: 2 MB for all */

enum {
	PH_LANE_FREE = 0,
	PH_LANE_ENDED = -1, /* its thread ended; the writer frees it drained */
			    /* otherwise the owner's tid */
};

/* q.enq is its thread's to keep, and stored here only by ph_lane_end. */
struct ph_lane {
	struct ph_queue q;
	_Alignas(64) _Atomic int owner;
};

struct ph_lanes {
	struct ph_queue *shared; /* every thread's without a lane */
	struct ph_lane *lane;	 /* PH_LANES, or NULL: no lanes */
	/* lanes [0, used) have ever been taken: the writer looks at those */
	_Alignas(64) _Atomic int used;
};

/* capacity: the lanes' cells each; PH_ENOMEM. */
int ph_lanes_init(struct ph_lanes *l, struct ph_queue *shared,
		  size_t capacity) PH_WUR;
void ph_lanes_release(struct ph_lanes *l);

/*
 * Emitter: a free lane taken for the thread `tid`, or NULL when every lane
 * is taken.  Its thread is the lane's one producer: it starts at the
 * lane's q.enq, keeps its position itself (struct ph_emitter) and gives
 * the lane back with ph_lane_end when it ends.
 */
struct ph_lane *ph_lane_take(struct ph_lanes *l, int tid);
/*
 * Emitter: its thread is done with the lane (no event goes in after), the
 * next position in it `enq`.
 */
void ph_lane_end(struct ph_lane *lane, uint64_t enq);

/*
 * The writer's merge.  Sources: lanes 0..used-1 and the shared queue
 * (PH_LANES), looked at in that order.  A look at a source with nothing
 * known walks its published records (up to PH_MERGE_RUN); the writer then
 * sends from what it knows until a source must be looked at again
 * (ph_merge_next says when).  Every look at a source is stamped
 * (`stamps`, one per source per look, in look order).  All of it the
 * writer's alone, in a few lines: it is read for every event.
 */
#define PH_MERGE_RUN	64
#define PH_MERGE_SHARED PH_LANES /* the shared queue's source number */
_Static_assert(PH_LANES < 32, "a bit of ph_merge.known for each source");

struct ph_merge {
	struct ph_lanes *lanes;
	uint32_t known; /* sources with records known */
	int taken;	/* the source ph_merge_next returned */
	uint64_t stamps;
	uint64_t avail[PH_LANES + 1];	 /* known: [deq, avail) */
	int64_t at[PH_LANES + 1];	 /* the first known's at */
	uint64_t seen_at[PH_LANES + 1];	 /* the stamp that saw them */
	uint64_t empty_at[PH_LANES + 1]; /* the last stamp that saw it end */
};

void ph_merge_init(struct ph_merge *m, struct ph_lanes *lanes);
/*
 * The next record to send, or NULL when every queue is empty.  *late_drops
 * gets the drops ph_queue_next found with no event to count them after
 * (queue.h), 0 or more, NULL returned or not.
 */
struct ph_rec *ph_merge_next(struct ph_merge *m, uint64_t *late_drops);
/* Frees the record ph_merge_next returned: the drops right after it. */
uint64_t ph_merge_done(struct ph_merge *m);

#endif
