/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.h: the live event store, the host engine's memory.
 *
 * Lines from a runtime go in (ph_store_add_line, from the link's reader
 * thread); windowed questions come out (ph_store_each, ph_store_timeline,
 * ph_store_analyze), from any thread: one mutex guards it all, held only
 * for the length of one line or one question.  The MCP server, the UI and
 * the CLI ask the same questions of the same store.
 *
 * Events are parsed once, on the way in, into chunks: each chunk owns an
 * arena holding its lines and their trees.  When the store passes its byte
 * cap the oldest chunk is dropped whole, and `covered_from` says from which
 * app time on the store is still complete, so a question about an older
 * window knows to go to the session on disk instead (see session.h).
 */
#ifndef PH_HOST_STORE_H
#define PH_HOST_STORE_H

#include "ph_common.h"
#include "ph_json.h"
#include "event.h"
#include "ingest.h"

#include <pthread.h>

struct ph_store_chunk;

struct ph_store {
	pthread_mutex_t lock;
	struct ph_ingest in;	       /* identity, profile, counters */
	struct ph_store_chunk *oldest; /* chunks, oldest first */
	struct ph_store_chunk *newest;
	/* The last chunk evicted, its blocks kept for the next chunk: a
	 * store at its cap refills memory it already touched. */
	struct ph_store_chunk *spare;
	size_t bytes;	      /* arena bytes held by all chunks */
	size_t cap;	      /* most bytes before evicting */
	size_t nevents;	      /* events held */
	int64_t covered_from; /* INT64_MIN while nothing evicted */
	uint64_t version;     /* bumped on every stored event */
	/*
	 * s->version just after the newest host-made event (seq < 0: a leak,
	 * an io request, a marker; made by another process, not the app)
	 * was stored, 0 while there is none: a reader after those alone
	 * skips looking when it has not moved.
	 */
	uint64_t host_made_at;
	/*
	 * A session file an earlier host recorded is being loaded (live.h):
	 * until it is, answers lack what the app sent before this host came,
	 * and say so.
	 */
	bool loading;

	/*
	 * A question's memory of the store, kept across questions under the
	 * lock (findings.c keeps an engine fed with every stored event here,
	 * so asking about all of it again costs only the new events); freed
	 * with the store by cache_free.
	 */
	void *cache;
	void (*cache_free)(void *cache);
};

/* A window on the app clock, both ends inclusive. */
struct ph_window {
	int64_t from; /* INT64_MIN: from the beginning */
	int64_t to;   /* INT64_MAX: up to now */
};

#define PH_WINDOW_ALL                \
	(struct ph_window)           \
	{                            \
		INT64_MIN, INT64_MAX \
	}

/* cap: bytes of events to hold (0 means 256 MiB). */
int ph_store_init(struct ph_store *s, size_t cap) PH_WUR;
void ph_store_release(struct ph_store *s);

/* Takes one wire line (no '\n'); thread-safe.  See ingest.h. */
int ph_store_add_line(struct ph_store *s, const char *line, size_t len);
/*
 * Takes every '\n'-terminated line of buf, taking the lock per slice of
 * lines (so questions are not kept waiting behind a big batch).
 */
int ph_store_add_lines(struct ph_store *s, const char *buf, size_t len);
/* Every line of an NDJSON file (a recorded session, a fixture). */
int ph_store_load_file(struct ph_store *s, const char *path) PH_WUR;
/*
 * The whole lines among the first `bytes` bytes of an NDJSON file, read
 * a slice at a time (bounded memory whatever the file's size) and taken
 * as ph_store_add_lines takes them: seqs the store holds already are
 * skipped, and a store that passes its cap evicts as it does live.  A
 * host that joins a session an earlier host recorded loads it this way
 * (live.h).  0, PH_ENOENT, PH_EIO or PH_ENOMEM.
 */
int ph_store_load_prefix(struct ph_store *s, const char *path,
			 uint64_t bytes) PH_WUR;

/*
 * Calls fn for every stored event whose span (ph_ev_span) overlaps w, in
 * arrival order, with the store locked; kinds is a bit mask of
 * (1 << enum ph_kind), 0 for all.  fn returning non-zero stops the walk.
 * Returns the number of events visited.
 */
size_t ph_store_each(struct ph_store *s, struct ph_window w, uint64_t kinds,
		     int (*fn)(void *ctx, const struct ph_event *ev),
		     void *ctx);

/*
 * For a caller holding s->lock.  ph_store_each_since_locked calls fn for
 * every event stored after the store's first `since` events (an earlier
 * value of s->version), in arrival order, until fn returns non-zero;
 * false, calling nothing, when some of those were evicted already.  The
 * events the store held then and holds still are the same ones exactly
 * when s->version - s->nevents has not changed.
 * ph_store_covers_all_locked says whether every held event's span
 * overlaps w (so that w's answer is the answer over the whole store).
 */
bool ph_store_each_since_locked(struct ph_store *s, uint64_t since,
				int (*fn)(void *ctx, const struct ph_event *ev),
				void *ctx);
bool ph_store_covers_all_locked(const struct ph_store *s, struct ph_window w);

/*
 * For the disk fallbacks, which read a live store's session file first and
 * then the store's events the file does not hold: whether ev is among
 * those the file holds, when it was just read up to seq file_max_seq.
 * Every app event up to there, and every host-made one (seq < 0: leaks,
 * io requests, markers), which reach a live store only by being read back
 * from that file.  (One appended between that read and the store's walk
 * is in the next answer.)
 */
static inline bool ph_store_ev_in_file(const struct ph_event *ev,
				       int64_t file_max_seq)
{
	return ev->seq < 0 || ev->seq <= file_max_seq;
}

/*
 * The timeline over a window, as the agent's `timeline` answers it
 * (docs/protocol.md §2): {"events":[...],"count":N,"truncated":bool,
 * "clippedMs":N} with the newest `limit` events oldest first.  clippedMs
 * is how much of the window the store no longer covers.
 */
int ph_store_timeline(struct ph_store *s, struct ph_window w, uint64_t kinds,
		      size_t limit, struct ph_jw *jw);

/* The bit for kinds given by name, comma-separated ("frame,blocked"). */
uint64_t ph_kinds_mask(const char *names);

#endif
