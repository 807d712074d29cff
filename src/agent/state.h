/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.h: what the writer remembers beyond the ring, to answer methods
 * (recompositions, nav_state, state, inflight, frames, blocking) and to
 * complete events before they are encoded (a recompose's pass count and
 * temporal triggers, a span's name and duration).  Writer thread only.
 */
#ifndef PH_AGENT_STATE_H
#define PH_AGENT_STATE_H

#include "ph_common.h"
#include "ph_json.h"
#include "record.h"

#define PH_NAME_MAX 64
#define PH_TEXT_MAX 512
/*
 * What the writer appends to an http or db record (add_thread in state.c:
 * thread, mainThread, and onMainThread on a query), each after a 4-byte
 * field head.  An emitter that fills such a record to the brim leaves
 * this much, or those fields are dropped.
 */
#define PH_STATE_THREAD_ROOM (4 + PH_NAME_MAX + 4 + 1 + 4 + 4)

struct ph_count {
	char key[PH_NAME_MAX];
	uint64_t count;
};

struct ph_recomp_node {
	char id[PH_NAME_MAX], name[PH_NAME_MAX], screen[PH_NAME_MAX];
	uint64_t count;
	int64_t first_at, last_at;
	struct ph_count trig[8]; /* busiest triggers */
	size_t n_trig;
};

struct ph_call {
	char id[24];
	char method[16];
	char url[PH_TEXT_MAX];
	char thread[PH_NAME_MAX];
	char phase[16];
	char error[256];
	int64_t started_at, elapsed_ms;
	int status; /* 0: none */
	bool main;
	bool done;
	/* as curl.c sent them, redacted: "Name: value\n" lines */
	char req_h[384], resp_h[384];
	uint16_t req_h_len, resp_h_len;
};

struct ph_query {
	char id[24];
	char sql[PH_TEXT_MAX];
	char args[PH_TEXT_MAX];
	char thread[PH_NAME_MAX];
	char kind[8];
	int64_t started_at, elapsed_ms;
	bool main, done;
};

struct ph_job {
	char work_id[PH_NAME_MAX], name[PH_NAME_MAX], state[16];
	int attempt;
	int64_t started_at; /* the current attempt's start */
};

struct ph_stall {
	int64_t at, duration_ms;
	bool ongoing; /* the main thread was still stuck at the last event */
	char top[256];
};

struct ph_jank {
	int64_t at, total_ms, missed;
	char worst_phase[24];
	bool first_draw;
};

struct ph_state {
	struct ph_recomp_node *nodes;
	size_t n_nodes, cap_nodes;
	int64_t recomp_since;
	struct {
		int64_t t;
		char key[PH_NAME_MAX];
	} writes[64]; /* recent state writes, for temporal attribution */
	unsigned w_next;
	struct ph_count keys[64]; /* writes per key, for `state` */
	size_t n_keys;
	uint64_t anon_writes;

	struct {
		char route[PH_NAME_MAX], label[PH_NAME_MAX];
		char args[PH_TEXT_MAX];
		int64_t entered_at;
	} nav[32];
	int nav_depth;
	char deep_link[PH_TEXT_MAX];
	int64_t deep_link_at;

	struct ph_call open_http[32];
	struct ph_call recent_http[200]; /* ring, newest at recent_next-1 */
	size_t recent_next, recent_count;
	struct ph_query open_db[32];
	struct ph_query main_db[20]; /* main-thread queries, ring */
	size_t main_db_next, main_db_count;
	struct ph_job jobs[16];
	size_t n_jobs;

	struct ph_jank jank[256]; /* recent late frames, ring */
	size_t jank_next, jank_count;
	uint64_t janky; /* every late frame since start or reset */
	struct ph_stall stalls[20];
	size_t stall_next, stall_count;

	struct {
		uint64_t id;
		char name[PH_NAME_MAX];
		int64_t t;
	} spans[64];
	size_t n_spans;

	struct {
		char tag[PH_NAME_MAX];
		uint64_t seq;
	} last_log[8]; /* per tag: what a log_append extends */
	unsigned last_log_next;
	uint64_t logs;		/* log lines put in the ring since start */
	int64_t wall_offset_ms; /* realtime - monotonic, for wallTime */
};

/*
 * The i-th newest entry's index in a ring array whose next write goes to
 * next (i = 0 is the newest); i must be below the array's size.
 */
#define PH_RING_BACK(arr, next, i) \
	(((next) + PH_ARRAY_SIZE(arr) - 1 - (i)) % PH_ARRAY_SIZE(arr))

void ph_state_init(struct ph_state *st);
void ph_state_release(struct ph_state *st);
void ph_state_reset(struct ph_state *st, int64_t now);

/*
 * Completes a record before it is encoded, and folds it into the
 * aggregates.  thread is the emitting thread's name ("main" for the
 * registered main thread).
 */
void ph_state_apply(struct ph_state *st, struct ph_rec *r, uint64_t seq,
		    const char *thread);

/* The newest stall's top frame, from its encoded event. */
void ph_state_stall_top(struct ph_state *st, const char *top, size_t n);

/*
 * A window's floor for params.sinceMs: now - since_ms.  A client may send
 * any integer; one so negative that the floor passes INT64_MAX is a floor
 * after every event (an empty window), never a signed overflow.
 */
static inline int64_t ph_state_since(int64_t now, int64_t since_ms)
{
	int64_t from;

	return __builtin_sub_overflow(now, since_ms, &from) ? INT64_MAX : from;
}

/* Method answers, written as the `result` value. */
void ph_state_recompositions(const struct ph_state *st, struct ph_jw *w,
			     const struct ph_json *params, int64_t now);
void ph_state_nav(const struct ph_state *st, struct ph_jw *w, int64_t now);
void ph_state_state(const struct ph_state *st, struct ph_jw *w, int64_t now);
void ph_state_inflight(const struct ph_state *st, struct ph_jw *w,
		       const struct ph_json *params, int64_t now);
void ph_state_frames(const struct ph_state *st, struct ph_jw *w,
		     const struct ph_json *params, uint64_t total_frames,
		     double refresh_hz);
void ph_state_blocking(const struct ph_state *st, struct ph_jw *w,
		       const struct ph_json *params, int64_t stall_ms);

#endif
