/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.h: the writer thread's world (server.c, state.c, state_answers.c,
 * methods.c).
 *
 * One thread owns all of it: it drains the emit queue, numbers and encodes
 * each event once, keeps the ring and the aggregates the methods answer
 * from, and fans the encoded line out to every client.  Because nothing
 * else touches this state, none of it is locked.
 */
#ifndef PH_AGENT_SERVER_H
#define PH_AGENT_SERVER_H

#include "ph_common.h"
#include "agent.h"
#include "ph_buf.h"
#include "ph_json.h"
#include "ring.h"
#include "state.h"

#define PH_MAX_CLIENTS 16
/*
 * Events wait in a client's send buffer while it reads slowly.  The clients
 * share PH_CLIENT_BUDGET of such bytes: each may hold its share, between
 * the floor and the ceiling below, and past it stops getting events (it
 * lags).  One or two clients get 4 MiB each, about 40 ms of events at
 * 1 M/s: enough to ride out a reader that loses its CPU for a while (a
 * virtual machine's steal time stalls a reader 10 ms and more), while
 * sixteen together still hold no more than 8 MiB.
 */
#define PH_CLIENT_BUDGET    ((size_t)8 << 20)
#define PH_CLIENT_SHARE_MIN ((size_t)512 << 10)
#define PH_CLIENT_SHARE_MAX ((size_t)4 << 20)
/*
 * A send buffer's own cap: events up to the share, bytes already sent but
 * not yet compacted away (up to as many again), and an answer of up to
 * 8 MiB on top.
 */
#define PH_CLIENT_HARD_CAP (2 * PH_CLIENT_SHARE_MAX + ((size_t)8 << 20))
#define PH_REQUEST_CAP	   ((size_t)1 << 20) /* one request line */
/*
 * Answers count against the same share: a request from a client holding
 * its share of unsent bytes is refused (EBUSY), and a client refused this
 * many times in a row (malformed lines count too), still not reading, is
 * dropped.
 */
#define PH_CLIENT_REFUSALS_MAX 256

struct ph_client {
	int fd;		    /* -1: slot free */
	uint64_t id;	    /* connection number, for diagnostics */
	struct ph_buf in;   /* partial request line */
	bool skipping;	    /* discarding an over-long line */
	struct ph_buf out;  /* bytes not yet written */
	size_t out_off;	    /* written prefix of out */
	uint64_t delivered; /* events queued for this client */
	uint64_t lagged;    /* events skipped while its buffer was full */
	uint64_t lag_first, lag_last; /* seq range of the current lag */
	uint64_t lag_pending; /* skipped, not yet told in a dropped frame */
	/*
	 * Events lost in the queue (every client's loss) since its first
	 * event, and those it has not been told of yet (it was lagging).
	 */
	uint64_t queue_lost, queue_pending, queue_first, queue_last;
	uint64_t first_seq; /* the first event it was sent */
	bool lagging;
	uint32_t refused; /* requests refused in a row (EBUSY) */
	bool db_waiting;  /* its database request is with the inspector */
	bool held;	  /* its next request waits for the inspector */
};

struct ph_server {
	struct ph_agent *agent;
	_Atomic bool quit; /* set by ph_server_stop */
	int epfd;
	int listen_fd; /* abstract socket */
	int tcp_fd;    /* legacy TCP, or -1 */
	/*
	 * Kept open to be let go when the app has no descriptor left, so
	 * a host can be accepted and told why it cannot be served; while
	 * there is none to let go, listening pauses until listen_resume_ns.
	 */
	int spare_fd;
	int64_t listen_resume_ns; /* 0: listening */
	struct ph_client clients[PH_MAX_CLIENTS];
	int nclients; /* slots in use */
	uint64_t connections;
	struct ph_ring ring;
	struct ph_buf line;    /* the event being encoded */
	struct ph_merge merge; /* the queues, merged (lanes.h) */
	struct ph_rec rec;     /* the record being handled, out of the queue */
	struct ph_buf resp;    /* the response being built */
	struct ph_json_reader reader;
	struct ph_arena arena;
	uint64_t next_seq; /* seq of the next event */
	uint64_t emitted;  /* events numbered (delivered to the ring) */
	uint64_t dropped;  /* events lost in the queue */
	uint64_t queue_drop_pending, queue_drop_first, queue_drop_last;
	struct ph_state state;
};

/*
 * The writer's state for agent a, without its socket or its thread
 * (ph_server_start adds those): ring, buffers and aggregates, sized by
 * a->cfg.  0 or PH_ENOMEM.  ph_server_release frees what it holds, not s.
 * The fuzz target (tests/fuzz/fuzz_agent_methods.c) answers requests on
 * one made this way.
 */
int ph_server_init(struct ph_server *s, struct ph_agent *a) PH_WUR;
void ph_server_release(struct ph_server *s);
/* Takes up to max events off the queues into s; returns how many. */
size_t ph_server_drain(struct ph_server *s, size_t max);
/* The unsent event bytes each client may hold now (server.c). */
size_t ph_server_client_share(const struct ph_server *s);
/* Drops the sent prefix of c's send buffer once it is worth a move. */
void ph_server_compact(struct ph_client *c);
/* Whether c holds its share of unsent bytes: its requests are refused. */
bool ph_server_client_full(const struct ph_server *s,
			   const struct ph_client *c);
/* Queues an answer line for c (past the hard cap, it is lost). */
void ph_server_reply(struct ph_client *c, const char *line, size_t len);

/*
 * methods.c: answers one request line on client c.  PH_EAGAIN: the line
 * must wait (a database request while the inspector is busy, or any
 * request while c's own database request is running), to be handled again
 * once the inspector's answer is delivered; else 0.
 */
int ph_methods_handle(struct ph_server *s, struct ph_client *c,
		      const char *line, size_t len);

#endif
