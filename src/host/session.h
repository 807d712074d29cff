/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.h: sessions on disk.
 *
 * A session is one run of one app process, named
 * <packageName>_<deviceId>_<startedAt>, in <project root>/.porthole/
 * sessions/<id>/:
 *
 *   events.ndjson   the wire, verbatim: every line the runtime sent,
 *                   appended by a flusher thread every FLUSH_MS, never by
 *                   the socket's reader; a host killed mid-write leaves it
 *                   readable up to its last complete line; plus host-made
 *                   events (seq -1), see ph_session_add_events
 *   meta.json       identity, profile, first/last t, counts by kind, bytes
 *   watermark.json  the `since: "last"` watermark and the previous call's
 *                   findings (for new/ongoing/resolved), and the error keys
 *                   already reported to a person or an agent
 *   lock            the advisory lock file
 *
 * One host writes a session at a time: it holds an OFD lock on byte 0 of
 * `lock` for as long as it writes.  Another host connected to the same app
 * reads live and does not write; it retries the lock on every flush and
 * takes over when the writer goes away, appending only the events the file
 * does not have yet (by seq).  Watermark updates take the same lock file's
 * byte 1, briefly, so any host may update it while another is the writer.
 * Host-made events (the heap engine's leaks) are appended under byte 2,
 * by whichever process made them (ph_session_add_events); the writer
 * takes byte 2 for its own appends too, and on every flush reads back
 * the lines others appended since its last write into its live store, so
 * live answers and meta.json count them (a host reading live, not
 * writing, does not see them).
 *
 * A host that opens a session an earlier host recorded (it attached after
 * the fact, or restarted) loads the file's events into its live store
 * first (live.h), so its answers and meta.json count the whole recording,
 * not only the app's ring; meta.json is not written until it has.
 *
 * Retention prunes whole sessions, oldest first, by total size and by age,
 * and never one whose lock is held.
 */
#ifndef PH_HOST_SESSION_H
#define PH_HOST_SESSION_H

#include "ph_common.h"
#include "ph_buf.h"
#include "event.h"
#include "findings.h"
#include "store.h"

#include <pthread.h>

#define PH_SESSION_FLUSH_MS 100
/* The flusher also wakes when this much is pending (a busy app). */
#define PH_SESSION_FLUSH_BYTES ((size_t)1 << 20)

struct ph_session_writer {
	char dir[4096]; /* the session's directory */
	char id[400];	/* its name */
	int lock_fd;	/* -1 when none */
	int fd;		/* events.ndjson, -1 while not the writer */
	bool writer;	/* holds the lock */
	bool failed;	/* a write failed (disk full): writing stopped */
	pthread_mutex_t mu;
	pthread_cond_t wake;	/* pending passed FLUSH_BYTES, or stop */
	struct ph_buf pending;	/* lines not yet written */
	struct ph_buf out;	/* the flusher's half of the swap */
	struct ph_store *store; /* for meta.json; may be NULL */
	pthread_t thread;
	bool running;
	_Atomic int stop;
	uint64_t bytes;	    /* bytes in events.ndjson: up to here this
			     * writer has written or read every byte */
	uint64_t foreign;   /* events other processes appended, stored */
	uint64_t lost;	    /* bytes dropped because pending was full */
	bool lost_warned;   /* the one warning about it was given */
	int64_t meta_at_ms; /* when meta.json was last written */
	/*
	 * What an earlier host recorded: the bytes events.ndjson held when
	 * this host opened it, which the host loads into its store (live.h)
	 * before its counts may stand for the file's.  Until it says so
	 * (ph_session_store_complete), meta.json is left as the earlier
	 * writer wrote it: a store that holds only the app's ring must not
	 * replace the counts of the whole recording.
	 */
	uint64_t preload_bytes;
	_Atomic bool meta_ready; /* the store holds the file's events */
};

/* The session name for an identity, into buf ("_" for unsafe chars). */
const char *ph_session_name(const struct ph_ident *id, char *buf, size_t size);

/*
 * Creates (or reopens) the session directory under sessions_dir, takes the
 * writer lock if free, prunes old sessions, and starts the flusher.
 * Returns 0 (also when another host is the writer) or PH_EIO.
 */
int ph_session_open(struct ph_session_writer *w, const char *sessions_dir,
		    const struct ph_ident *id, struct ph_store *store);
/*
 * Says that w->store now holds what events.ndjson held at the open (the
 * w->preload_bytes loaded): meta.json is written from the store from then
 * on.  A session opened on an empty file needs no such call.
 */
void ph_session_store_complete(struct ph_session_writer *w);
/* Queues one wire line (no '\n'); never blocks on the disk. */
void ph_session_append(struct ph_session_writer *w, const char *line,
		       size_t len);
/* Flushes, writes meta.json, stops the flusher and releases the lock. */
void ph_session_close(struct ph_session_writer *w);

/* --- host-made events --------------------------------------------------- */

/*
 * Appends host-made event lines (seq -1: the heap engine's `leak` events,
 * docs/heap.md) to the session in dir, from any process, also while a
 * host is writing it.  lines are whole lines, each ending in '\n'.  They
 * go in one O_APPEND write(2) under byte 2 of the lock file (appenders
 * queue, and the writer takes it for its own appends), so they never
 * interleave with the writer's lines; a takeover ignores them, as they
 * carry no device seq.  A torn last line (a host killed mid-write) is
 * ended first, so it cannot swallow the first new line.  The host
 * writing the session reads them back into its store on its next flush
 * (within PH_SESSION_FLUSH_MS); a host reading live does not.
 * 0; PH_ENOENT when dir holds no events.ndjson; PH_EINVAL; PH_EIO.
 */
int ph_session_add_events(const char *dir, const char *lines, size_t len);

/*
 * The app uptime (ms) at a wall-clock time (epoch ms), through the
 * session's device:clocks event nearest to it (docs/protocol.md §1.5).
 * False when there is none, or when the time falls before the process
 * started (a dump from another run): then the time is unknown.
 */
bool ph_session_uptime_at(const char *dir, int64_t wall_ms, int64_t *uptime);

/* --- the watermark -------------------------------------------------------- */

struct ph_watermark {
	int64_t last_to; /* where the last answer ended; INT64_MIN: none */
	struct ph_prev_call prev;
	size_t nreported;
	char **reported; /* error keys already surfaced */
	struct ph_arena arena;
};

void ph_watermark_init(struct ph_watermark *wm);
void ph_watermark_release(struct ph_watermark *wm);
/* Reads <dir>/watermark.json; a missing or corrupt file is an empty one. */
int ph_watermark_load(struct ph_watermark *wm, const char *dir);
/* Records an answer (window, findings) and the keys it surfaced. */
int ph_watermark_record(const char *dir, const struct ph_analysis *a,
			bool mark_errors_reported);
/* Adds one reported key, under the lock (for `watch`). */
int ph_watermark_add_reported(const char *dir, const char *key);
bool ph_watermark_reported(void *wm, const char *key);

/* --- listing and retention ------------------------------------------------ */

struct ph_session_info {
	char id[400];
	char path[4096];
	char package[128];
	char device_id[64];
	int64_t started_at;
	int64_t first_t, last_t;
	uint64_t bytes;	  /* all files of the session */
	int64_t mtime_ms; /* events.ndjson's, epoch ms */
	bool recording;	  /* another process holds the writer lock */
	bool meta_ok;	  /* meta.json read and parsed */
	char note[160];	  /* why meta is missing or corrupt */
	uint64_t events;
	uint64_t malformed, repaired; /* lines skipped, read after repair */
	struct ph_ingest_issue issues[PH_INGEST_ISSUES]; /* the first */
	unsigned nissues;
};

/* All sessions, newest activity first; *n of them, free() the array. */
int ph_sessions_list(const char *sessions_dir, struct ph_session_info **out,
		     size_t *n);
/*
 * The session a host is recording now for the app `package` (the newest
 * whose writer lock is held), its directory into buf; false when none.
 */
bool ph_sessions_live(const char *sessions_dir, const char *package, char *buf,
		      size_t size);
/*
 * Deletes sessions, oldest first, until the total is <= max_bytes and none
 * is older than max_age_ms; skips `keep` and any being recorded.  Returns
 * how many were removed.
 */
int ph_sessions_prune(const char *sessions_dir, uint64_t max_bytes,
		      int64_t max_age_ms, const char *keep);

#endif
