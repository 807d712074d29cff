/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lanes.c: each emitting thread's own queue, taken at its first event and
 * given back when the thread ends, and the writer's merge of the lanes
 * and the shared queue by emit time (the design is in lanes.h).
 */
#include "ph_common.h"
#include "lanes.h"
#include "ph_error.h"

int ph_lanes_init(struct ph_lanes *l, struct ph_queue *shared, size_t capacity)
{
	memset(l, 0, sizeof(*l));
	l->shared = shared;
	l->lane = aligned_alloc(64, PH_LANES * sizeof(*l->lane));
	if (!l->lane)
		return PH_ENOMEM;
	memset(l->lane, 0, PH_LANES * sizeof(*l->lane));
	for (int i = 0; i < PH_LANES; i++) {
		if (ph_queue_init(&l->lane[i].q, capacity)) {
			ph_lanes_release(l);
			return PH_ENOMEM;
		}
		atomic_init(&l->lane[i].owner, PH_LANE_FREE);
	}
	return 0;
}

void ph_lanes_release(struct ph_lanes *l)
{
	if (l->lane)
		for (int i = 0; i < PH_LANES; i++)
			ph_queue_release(&l->lane[i].q);
	free(l->lane);
	l->lane = NULL;
}

struct ph_lane *ph_lane_take(struct ph_lanes *l, int tid)
{
	if (!l->lane)
		return NULL;
	for (int i = 0; i < PH_LANES; i++) {
		struct ph_lane *lane = &l->lane[i];
		int free_ = PH_LANE_FREE, used;

		/* acquire: the writer's last frees of its cells come first */
		if (!atomic_compare_exchange_strong_explicit(
			    &lane->owner, &free_, tid, memory_order_acquire,
			    memory_order_relaxed))
			continue;
		/*
		 * Raised before this thread's first event goes in: a writer
		 * that has seen an event which one of this thread's happened
		 * before then looks at the lane too (ph_merge_next).
		 */
		used = atomic_load_explicit(&l->used, memory_order_relaxed);
		while (used < i + 1 &&
		       !atomic_compare_exchange_weak_explicit(
			       &l->used, &used, i + 1, memory_order_relaxed,
			       memory_order_relaxed))
			;
		return lane;
	}
	return NULL;
}

void ph_lane_end(struct ph_lane *lane, uint64_t enq)
{
	atomic_store_explicit(&lane->q.enq, enq, memory_order_relaxed);
	/* release: that, and every event it put in, are published before */
	atomic_store_explicit(&lane->owner, PH_LANE_ENDED,
			      memory_order_release);
}

static struct ph_queue *source(const struct ph_merge *m, int i)
{
	return i < PH_LANES ? &m->lanes->lane[i].q : m->lanes->shared;
}

void ph_merge_init(struct ph_merge *m, struct ph_lanes *lanes)
{
	memset(m, 0, sizeof(*m));
	m->lanes = lanes;
}

/* Sources 0..n-1 (the lanes looked at) and the shared queue. */
static uint32_t active(int n)
{
	return (uint32_t)((1ull << n) - 1) | 1u << PH_MERGE_SHARED;
}

static bool published(struct ph_queue *q, uint64_t pos)
{
	return atomic_load_explicit(ph_queue_turn(q, pos),
				    memory_order_acquire) == pos + 1;
}

/* A lane found empty whose thread has ended is free for another thread. */
static void free_if_done(struct ph_lane *lane, int owner)
{
	if (owner != PH_LANE_ENDED)
		return;
	if (atomic_load_explicit(&lane->q.enq, memory_order_relaxed) !=
	    lane->q.deq)
		return; /* its last events are not taken yet */
	atomic_store_explicit(&lane->owner, PH_LANE_FREE, memory_order_release);
}

/*
 * Looks at source i, which has nothing known: walks the records published
 * from its deq on.  Lanes never drop (a full lane overflows), so only the
 * shared queue has drops to sweep (ph_queue_next).
 */
static void look_at(struct ph_merge *m, int i, uint64_t stamp,
		    uint64_t *late_drops)
{
	struct ph_queue *q = source(m, i);
	uint64_t pos = q->deq, late;
	int owner = PH_LANE_FREE, n = 0;

	if (i == PH_MERGE_SHARED) {
		if (!ph_queue_next(q, &late)) {
			*late_drops += late;
			m->empty_at[i] = stamp;
			return;
		}
	} else {
		/* acquire: an ended thread's last event is visible after */
		owner = atomic_load_explicit(&m->lanes->lane[i].owner,
					     memory_order_acquire);
		if (owner == PH_LANE_FREE) {
			m->empty_at[i] = stamp;
			return;
		}
	}
	while (n < PH_MERGE_RUN && published(q, pos)) {
		pos += ph_queue_rec(q, pos)->cells;
		n++;
	}
	/* stopped by the cap, not the end: more may be there already */
	m->empty_at[i] = n < PH_MERGE_RUN ? stamp : 0;
	if (n) {
		m->known |= 1u << i;
		m->avail[i] = pos;
		m->seen_at[i] = stamp;
		m->at[i] = ph_queue_rec(q, q->deq)->at;
	} else if (i < PH_LANES) {
		free_if_done(&m->lanes->lane[i], owner);
	}
}

/* One look at every source with nothing known; whether anything is. */
static bool look(struct ph_merge *m, int n, uint64_t *late_drops)
{
	for (int j = 0; j <= n; j++) {
		int i = j < n ? j : PH_MERGE_SHARED;

		m->stamps++;
		if (!(m->known & 1u << i))
			look_at(m, i, m->stamps, late_drops);
	}
	return m->known != 0;
}

/*
 * Why the earliest record known is safe to send once every source with
 * nothing known was seen to end after that record was seen.  Say event X
 * happened before event Y (X's thread published X, then something Y's
 * thread saw made it emit Y).  Then X was emitted earlier (at is one
 * clock), and once the writer has seen Y, any later look at X's queue
 * sees X.  Every event ahead of X in its queue was put there, so emitted,
 * before X was published: earlier than Y too.  So if X's queue has a
 * record known, that record is earlier than Y and goes first; and if it
 * has none, it was looked at after Y was seen and X was in it.  So Y can
 * go before X only if X's queue was last seen to end before Y was seen:
 * then the writer looks again first.  That covers a lane taken while the
 * writer looks, too: passed over as free, or past `used` when the look
 * began (a thread raises `used` before its first event), it was not seen
 * to end after Y.
 */
static bool safe(const struct ph_merge *m, int best, int n)
{
	for (uint32_t u = active(n) & ~m->known; u; u &= u - 1)
		if (m->empty_at[__builtin_ctz(u)] < m->seen_at[best])
			return false;
	return true;
}

struct ph_rec *ph_merge_next(struct ph_merge *m, uint64_t *late_drops)
{
	*late_drops = 0;
	for (;;) {
		int n = atomic_load_explicit(&m->lanes->used,
					     memory_order_relaxed);
		int best = -1;

		for (uint32_t k = m->known; k; k &= k - 1) {
			int i = __builtin_ctz(k);

			if (best < 0 || m->at[i] < m->at[best])
				best = i;
		}
		if (best >= 0 && safe(m, best, n)) {
			m->taken = best;
			return ph_queue_rec(source(m, best),
					    source(m, best)->deq);
		}
		if (!look(m, n, late_drops))
			return NULL;
	}
}

uint64_t ph_merge_done(struct ph_merge *m)
{
	int i = m->taken;
	struct ph_queue *q = source(m, i);
	uint64_t after = ph_queue_done(q);

	if (q->deq == m->avail[i])
		m->known &= ~(1u << i);
	else
		m->at[i] = ph_queue_rec(q, q->deq)->at;
	return after;
}
