/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live.h: a live host: the link feeding the store and the session on disk.
 *
 * The one wiring every long-running face shares (capture, watch, status,
 * and the MCP server and UI): lines from the link go to the store (parsed
 * once) and to the session writer (verbatim), on the link's reader thread;
 * the first hello of each process opens its session, and a new process
 * (another startedAt) closes the old session and opens the next.
 *
 * A session an earlier host recorded (this host attached after the fact,
 * or restarted while the app ran on) is loaded into the store first: the
 * parser thread reads what the file held at the open with
 * ph_store_load_prefix before it stores another queued line, so every
 * face answers for the whole recording, not only for the app's ring of
 * recent events; seqs the backfill brings again are skipped as already
 * seen.  Lines that arrive meanwhile wait in the queue (store.loading is
 * set until the load ends, and answers say so).
 */
#ifndef PH_HOST_LIVE_H
#define PH_HOST_LIVE_H

#include "ph_common.h"
#include "findings.h"
#include "link.h"
#include "session.h"
#include "store.h"

struct ph_live {
	struct ph_store store;
	struct ph_link link;
	struct ph_session_writer session;
	bool session_open;
	bool sessions; /* PORTHOLE_SESSIONS != 0 */
	char sessions_dir[4096];
	int64_t started_at;	 /* of the open session */
	char session_path[4300]; /* the newest session's events.ndjson */
	pthread_mutex_t mu;
	void (*on_line)(void *ctx); /* after lines were stored; may be NULL */
	/* after each hello, with what the link connected to; may be NULL */
	void (*on_hello)(void *ctx, const struct ph_ident *id,
			 const char *target);
	void *ctx;

	/*
	 * Lines on their way to the store.  The link's reader only queues
	 * each line (and appends it to the session); the parser thread
	 * parses them into the store in batches, so reading the socket and
	 * parsing run on two cores.  The queue is bounded: a reader that
	 * gets too far ahead waits (backpressure to the socket; the runtime
	 * drops and counts, never the host).
	 */
	pthread_mutex_t qmu;
	pthread_cond_t qcv;   /* lines queued, or stopping */
	pthread_cond_t qroom; /* the parser took a batch */
	struct ph_buf q, qwork;
	pthread_t parser;
	bool parser_running;
	bool qstop;
	/* A session file to load before the next queued line (under qmu);
	 * preload_bytes 0: none.  preload_of: the session's startedAt. */
	char preload_path[4300];
	uint64_t preload_bytes;
	int64_t preload_of;
};

/*
 * The findings over window w: the store, falling back to the newest
 * session's file on disk (also after ph_live_stop) for what the store
 * evicted (ph_analyze_window).
 */
struct ph_analysis *ph_live_analyze(struct ph_live *lv, struct ph_window w);

/* Fill live->link's target fields after init, then start. */
int ph_live_init(struct ph_live *lv) PH_WUR;
int ph_live_start(struct ph_live *lv) PH_WUR;
/* Stops the link, stores every queued line, closes the session. */
void ph_live_stop(struct ph_live *lv);
void ph_live_release(struct ph_live *lv);

#endif
