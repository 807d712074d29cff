/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coverage.h: what an answer covers, so that silence is never taken for an
 * all-clear (DESIGN.md §4, docs/findings.md "Coverage").
 *
 * A findings answer calls a check "quiet" only when the host observed the
 * whole window it was asked about: it holds events in it, no seq is
 * missing between them, none the app emitted before the first one held
 * was lost (a host that attached late, or whose backfill did not reach
 * back far enough), no part was evicted without a session file to read,
 * and the host was connected.  Otherwise every check that found nothing
 * is "not seen", with the reason, and what was found is still reported.
 *
 * Seqs are tracked as runs of consecutive numbers.  Events reach an
 * engine nearly in seq order (a backfill fills a hole at once), so a few
 * runs describe millions of events, and the holes between runs are the
 * missing seqs, with the app times on either side.  A process that starts
 * again numbers from 0: each stream (ph_event.stream) has runs of its own.
 */
#ifndef PH_HOST_COVERAGE_H
#define PH_HOST_COVERAGE_H

#include "ph_common.h"
#include "ph_json.h"
#include "event.h"
#include "ingest.h"
#include "store.h"

struct ph_seq_run {
	int64_t lo, hi;	    /* seqs lo..hi all held */
	int64_t lo_t, hi_t; /* their events' app times */
};

/* The seqs an engine was fed, in runs. */
struct ph_seq_runs {
	struct ph_seq_run *v; /* sorted by lo, never overlapping */
	size_t n, alloc;
	size_t last;	   /* the run the previous seq joined */
	uint32_t stream;   /* of the runs in v */
	bool have;	   /* v describes a stream */
	bool overflow;	   /* past the cap: holes counted at least */
	uint64_t missing;  /* holes of the streams before this one */
	int64_t miss_from; /* their earliest and latest times */
	int64_t miss_to;
};

void ph_seq_runs_release(struct ph_seq_runs *r);
/* Notes an app event (seq >= 0) of the given stream at app time t. */
void ph_seq_runs_add(struct ph_seq_runs *r, uint32_t stream, int64_t seq,
		     int64_t t);

enum ph_cov_link {
	PH_COV_LINK_UNKNOWN, /* read from a file: the recording said */
	PH_COV_LINK_CONNECTED,
	PH_COV_LINK_NOT_CONNECTED,
};

struct ph_coverage {
	bool held;		    /* the host holds events in the window */
	int64_t held_from, held_to; /* their span, app clock */
	uint64_t events;	    /* app events held in the window */
	uint64_t missing;	    /* seqs missing between held events */
	bool at_least;		    /* too many holes kept: a lower bound */
	int64_t missing_from;	    /* the app time span of those holes */
	int64_t missing_to;
	uint64_t missing_before; /* seqs emitted before the first held one,
				    never received */
	int64_t before_to;	 /* the first held event's time */
	uint64_t dropped;	 /* the app's `dropped` frames said so */
	int64_t clipped_ms;	 /* of the window, held by nothing */
	int link;		 /* enum ph_cov_link */
	int64_t link_since;	 /* not connected: the last event's time */
	char link_why[160];	 /* not connected: why */
	bool complete;		 /* every check may be called quiet */
	char reason[400];	 /* why not complete, one line; "" if it is */
};

/*
 * Fills cov from the runs an engine kept over window w, what it saw
 * (first_t/last_t, events), and src (may be NULL): its seen seqs tell a
 * hole before the first held event from events that lie before the
 * window.  clipped_ms and the link are the caller's (ph_coverage_judge
 * then decides).
 */
void ph_coverage_from_runs(struct ph_coverage *cov, const struct ph_seq_runs *r,
			   struct ph_window w, int64_t first_t, int64_t last_t,
			   uint64_t events, const struct ph_ingest *src);

/* Decides complete and writes the reason; call after any change. */
void ph_coverage_judge(struct ph_coverage *cov);

/*
 * The answer's "coverage" member: {complete, window{from,to}, held{from,
 * to} | null, events, missingSeqs, missingBefore, droppedByApp,
 * clippedMs, connected?, reason?}.  Open window ends are null.
 */
void ph_coverage_write(const struct ph_coverage *cov, struct ph_window w,
		       struct ph_jw *jw);

#endif
