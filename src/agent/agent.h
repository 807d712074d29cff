/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.h: libporthole's internals, shared by its files (never installed).
 *
 * One agent per process, in the static `ph_agent`.  porthole_start() fills
 * it, starts the writer thread (server.c) and the collectors; event calls
 * (api.c) claim a queue record with ph_emit_begin(), fill it, and publish
 * it with ph_emit_commit().  Everything the writer owns lives in
 * struct ph_server and is touched by the writer thread alone.
 */
#ifndef PH_AGENT_H
#define PH_AGENT_H

#include "ph_common.h"
#include "porthole.h"
#include "platform.h"
#include "lanes.h"
#include "queue.h"
#include "record.h"
#include "tclock.h"

#include <pthread.h>
#include <stdatomic.h>

struct ph_server;

struct ph_agent {
	/*
	 * What every event call reads, together in the first cache line
	 * (the queue, line-aligned, starts the next with its cells and mask;
	 * its enq the one after): an event call after a pause finds its lines
	 * cold, so the fewer the better.  The clock's words are here too, so
	 * stamping an event reads no line of libc's or the vDSO's.
	 */
	_Atomic int running;	/* event calls are live */
	_Atomic int main_tid;	/* the registered main thread, or 0 */
	struct ph_tclock clock; /* what an event's t is read from */
	struct ph_queue queue;	/* kept across stop/start: emitters may race */
	struct ph_lanes lanes; /* the threads' own queues (lanes.h); kept too */
	struct ph_tclock_tuner tuner; /* the writer's, for clock */
	struct porthole_config cfg;
	char app_id[128];
	char socket_name[108];
	char version_name[64];
	char data_dir[400];
	int pid;
	int64_t started_at;	  /* uptime ms at porthole_start */
	double refresh_hz;	  /* display refresh rate */
	int64_t budget_us;	  /* frame budget: 1e6 / refresh_hz */
	_Atomic uint64_t next_id; /* http-N, db-N, span ids */
	struct ph_server *server; /* the writer's state */
	pthread_t writer;
	int wake_fd; /* eventfd: wakes the writer to stop */
	/*
	 * The app closed the agent's descriptors under it (the writer's
	 * epoll fd went): the writer stopped, and from then on nothing of
	 * the agent's long-lived descriptors is closed, written or dup'ed
	 * again, since those numbers may be the app's files now.
	 */
	_Atomic bool fds_lost;
};

_Static_assert(offsetof(struct ph_agent, clock) + sizeof(struct ph_tclock) <=
		       64,
	       "an event call's words in one line");

extern struct ph_agent ph_agent;

/*
 * Each thread's emitting state.  An event is built here, then copied into
 * the queue at commit: the record's size is known only once it is filled,
 * and the queue takes just the cells it needs.  Two scratch records, so an
 * event call from a signal handler that interrupts one on the same thread
 * builds its own (a third level is dropped and counted).
 *
 * A thread with a lane (lanes.h) is its only producer, so it keeps the
 * lane's producer side here, in its own line: an event call after a pause
 * finds where its cell is without first reading the lane's lines, one
 * cache miss after another.
 */
struct ph_emitter {
	/*
	 * On a 128-byte pair of lines, so these words, the first scratch's
	 * head and its first fields (40 + 24 + the rest) come in together.
	 */
	_Alignas(128) int tid; /* kernel tid, 0 until the first event */
	uint16_t depth;	       /* scratch records in use */
	bool ready;	       /* a lane taken, or none to take */
	/*
	 * Its lane's cells, where the next event goes; NULL with no lane, or
	 * while it overflowed into the shared queue.
	 */
	uint8_t *cells;
	uint64_t mask;
	uint64_t enq;	/* its lane's next position */
	uint64_t limit; /* room up to here: its last look at released */
	struct ph_rec rec[2];
	struct ph_lane *lane; /* its own, or NULL */
	/* overflowed: back to the lane once the writer freed this (shared) */
	uint64_t back_at;
};
/* ph_emit_begin keeps the scratch index in the low bit of its pointer. */
_Static_assert(_Alignof(struct ph_emitter) >= 2, "emitter alignment");

/*
 * This thread's emitter (ph_emitter_tls), its tid looked up and a lane
 * taken at its first event.
 */
extern _Thread_local struct ph_emitter ph_emitter_tls;
struct ph_emitter *ph_emitter_first(void);

static inline struct ph_emitter *ph_emitter(void)
{
	if (PH_UNLIKELY(!ph_emitter_tls.ready))
		return ph_emitter_first();
	return &ph_emitter_tls;
}

/*
 * Into the thread's lane (it is the only producer, so no atomic claim): r
 * at the next position, or false when the lane is full.
 */
static inline bool ph_lane_put(struct ph_emitter *e, struct ph_rec *r)
{
	size_t bytes = PH_REC_HEAD + r->used;
	uint64_t k = ph_queue_cells_for(bytes);
	uint64_t p = e->enq;

	if (PH_UNLIKELY(p + k > e->limit)) {
		e->limit = atomic_load_explicit(&e->lane->q.released,
						memory_order_acquire) +
			   e->mask + 1;
		if (p + k > e->limit)
			return false;
	}
	r->cells = (uint8_t)k;
	ph_cells_write(e->cells, e->mask, p, r, bytes);
	e->enq = p + k;
	return true;
}

/*
 * ph_emit_commit's way for an event that does not go into the thread's
 * lane (agent.c); `nested`: from a signal handler that interrupted an
 * event call on this thread.
 */
void ph_emit_shared(struct ph_emitter *e, struct ph_rec *r, bool nested);

/* The calling thread's kernel tid, cached per thread. */
int ph_tid(void);

static inline bool ph_agent_live(void)
{
	return atomic_load_explicit(&ph_agent.running, memory_order_relaxed);
}

/*
 * A record for an event of this kind, stamped with the thread and the
 * time, or NULL when the agent is off.  Fill it, then ph_emit_commit(pos)
 * with the pos this returned; every non-NULL begin must be committed.
 */
static inline struct ph_rec *ph_emit_begin(enum ph_kind kind, uint64_t *pos)
{
	struct ph_emitter *e;
	struct ph_rec *r;

	if (!ph_agent_live())
		return NULL;
	e = ph_emitter();
	if (PH_UNLIKELY(e->depth >= 2)) {
		ph_queue_drop(&ph_agent.queue,
			      atomic_load_explicit(&ph_agent.queue.enq,
						   memory_order_relaxed));
		return NULL;
	}
	/* The emitter and the scratch, so commit needs no second TLS look-up.
	 */
	*pos = (uint64_t)(uintptr_t)e | (uint64_t)e->depth;
	r = &e->rec[e->depth];
	e->depth++;
	/* a handler on this thread sees the scratch taken before it is used */
	atomic_signal_fence(memory_order_seq_cst);
	ph_rec_head(r, kind,
		    e->tid == atomic_load_explicit(&ph_agent.main_tid,
						   memory_order_relaxed) ?
			    PH_REC_MAIN :
			    0);
	r->tid = e->tid;
	r->at = ph_tclock_ns(&ph_agent.clock);
	return r;
}

/*
 * Puts the record begun with ph_emit_begin into the thread's lane.  An
 * event call from a signal handler (the second scratch) may have cut into
 * one putting into the lane, so it goes to the shared queue.
 */
static inline void ph_emit_commit(uint64_t pos)
{
	struct ph_emitter *e = (struct ph_emitter *)(uintptr_t)(pos & ~7ull);
	struct ph_rec *r = &e->rec[pos & 1];

	if (PH_UNLIKELY(!e->cells || (pos & 1)) ||
	    PH_UNLIKELY(!ph_lane_put(e, r)))
		ph_emit_shared(e, r, pos & 1);
	e->depth--;
}

/* Starts/stops the writer thread and its socket; see server.c. */
int ph_server_start(struct ph_agent *a) PH_WUR;
void ph_server_stop(struct ph_agent *a);
/* In a fork's child: closes its copies of the server's descriptors. */
void ph_server_forked(struct ph_agent *a);

/* Writer side: the JSON line for one record, appended to out. */
struct ph_buf;
int ph_encode_event(const struct ph_rec *r, uint64_t seq,
		    struct ph_buf *out) PH_WUR;

#endif
