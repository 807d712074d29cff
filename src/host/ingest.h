/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ingest.h: wire lines in, events out.
 *
 * The one place that turns what a runtime sends into events, shared by the
 * live store, the session scanner and replays of recorded files, so a
 * session on disk reads exactly as it did live.  It takes every line a
 * runtime sends, in order:
 *
 *  - an event frame becomes an event, unless its seq was already seen (the
 *    `timeline` backfill and the stream overlap; seq is authoritative,
 *    docs/protocol.md §1.6);
 *  - a `dropped` control frame is counted, never stored, never deduplicated;
 *  - a response that looks like `hello` sets the identity (a hello from
 *    another process, a restart, starts its seqs afresh); one that carries
 *    `events` (a timeline page) yields each event in it;
 *  - a process that restarted with the same identity (the same startedAt,
 *    as after a reboot) is a new stream too, not its seqs merged into the
 *    old one's: after a hello of the same identity with another pid, or
 *    when the first device event after such a hello carries a seq below
 *    the lowest the stream has, or that lowest seq again but another
 *    event (t, kind or data differ).  A reconnect to the same process
 *    sends the same events again (the backfill), which are skipped.  A
 *    new process with the same identity and pid whose first events were
 *    lost (it emitted more than the ring holds before a host came) cannot
 *    be told from a reconnect;
 *  - a line with bytes that are not UTF-8 is read again with each such
 *    byte replaced by U+FFFD, and counted as repaired;
 *  - anything else that is not JSON is counted as malformed and skipped.
 *    The first PH_INGEST_ISSUES repaired or skipped lines are kept with
 *    their line number and byte offset, for the notes of report, capture
 *    and sessions.
 *
 * Events and their trees go into the arena the caller passes per line; the
 * line must outlive the tree (strings are borrowed, see ph_json.h).
 */
#ifndef PH_HOST_INGEST_H
#define PH_HOST_INGEST_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_json.h"
#include "event.h"

#define PH_INGEST_ISSUES 16

/* A line read only after repair, or skipped. */
struct ph_ingest_issue {
	uint64_t line;	 /* 1-based, counting every line of the stream */
	uint64_t offset; /* byte offset of its first byte in the stream */
	bool repaired;	 /* taken with bytes replaced; false: skipped */
	char why[120];
};

struct ph_ingest {
	struct ph_json_reader reader;
	struct ph_ident ident;	   /* from the newest process's hello */
	struct ph_profile profile; /* from the newest device:profile */
	int (*on_event)(void *ctx, const struct ph_event *ev);
	void *ctx;

	uint64_t *seen;	    /* bitmap of seqs seen, bit per seq */
	size_t seen_words;  /* length of seen in 64-bit words */
	int64_t max_seq;    /* highest seq seen, -1 before any */
	uint64_t lines;	    /* lines taken, blank ones excluded */
	uint64_t bytes;	    /* bytes taken */
	uint64_t events;    /* events passed to on_event */
	uint64_t dups;	    /* events skipped as already seen */
	uint64_t malformed; /* lines skipped as not a frame */
	uint64_t dropped;   /* sum of `dropped` frames' count */
	uint64_t gaps;	    /* seqs missing between seen ones */
	uint64_t hellos;    /* hello answers seen */
	uint64_t pages;	    /* timeline answers (events arrays) seen */
	bool restarted;	    /* a later hello named another process */
	int64_t min_seq;    /* the stream's lowest seq seen, -1 before any */
	uint64_t min_print; /* that event's fingerprint (t, kind, data) */
	bool rehello;	    /* a hello of the same identity came since; the
			     * next device event says whether it restarted */
	uint32_t streams;   /* seq numberings begun again (restarts) */
	uint64_t counts[PH_KIND_COUNT]; /* events by kind */
	int64_t first_t, last_t;	/* over all events; 0 before any */
	char first_error[200];		/* the first malformed line, why */
	uint64_t repaired;		/* lines taken after a UTF-8 repair */
	uint64_t line_no;		/* the last line's number, blank too */
	uint64_t line_at;		/* its byte offset in the stream */
	uint64_t next_at;		/* where the next line starts */
	struct ph_ingest_issue issues[PH_INGEST_ISSUES]; /* the first */
	unsigned nissues;
};

/* on_event may be NULL; a non-zero return from it stops ph_ingest_line. */
void ph_ingest_init(struct ph_ingest *in,
		    int (*on_event)(void *, const struct ph_event *),
		    void *ctx);
void ph_ingest_release(struct ph_ingest *in);

/*
 * Takes one line (no '\n').  Returns 0 (also for skipped lines), the
 * non-zero value on_event returned, or PH_ENOMEM / PH_ETOOBIG when the
 * arena is full.
 */
int ph_ingest_line(struct ph_ingest *in, struct ph_arena *arena,
		   const char *line, size_t len);

/*
 * Writes "lines": [{line, byte, action: "repaired"|"skipped", why}] for
 * the issues v[0..n), the shape capture.json, meta.json, `report --json`
 * and `sessions --json` share.
 */
void ph_ingest_write_issues(const struct ph_ingest_issue *v, unsigned n,
			    struct ph_jw *jw);

/* Counts the line just taken as malformed, why (and keeps it as an issue). */
void ph_ingest_malformed(struct ph_ingest *in, const char *why);

/* Counts a line of len bytes the caller could not pass to ph_ingest_line
 * (too big for any arena): it moves the position past it, then as above. */
void ph_ingest_skip_line(struct ph_ingest *in, size_t len, const char *why);

/*
 * Reads a whole NDJSON stream from fd through ph_ingest_line, in batches:
 * the arena is reset between batches, so events are only valid inside
 * on_event.  Bounded memory whatever the file's size.  Returns 0 or
 * PH_EIO; a last line without '\n' (a host killed mid-write) is taken
 * only when it parses.
 */
int ph_ingest_fd(struct ph_ingest *in, int fd);
int ph_ingest_file(struct ph_ingest *in, const char *path);

/*
 * The seqs of the current stream (ph_event.stream == ph_ingest_stream):
 * whether seq was taken, and the highest taken below seq (-1 when none).
 * Seqs past the bitmap's reach count as taken.
 */
static inline uint32_t ph_ingest_stream(const struct ph_ingest *in)
{
	return in->streams;
}
bool ph_ingest_seq_seen(const struct ph_ingest *in, int64_t seq);
int64_t ph_ingest_seen_below(const struct ph_ingest *in, int64_t seq);

/* The identity's fields from a hello `result` object. */
void ph_ident_from_hello(struct ph_ident *id, const struct ph_json *result);
/* The profile's fields from a device:profile event. */
void ph_profile_from_event(struct ph_profile *p, const struct ph_event *ev);

#endif
