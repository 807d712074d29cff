/* SPDX-License-Identifier: Apache-2.0 */
/*
 * findings.h: the findings engine, the host's judgement over a window.
 *
 * A finding (DESIGN.md §4, docs/findings.md) is {id, severity, confidence,
 * source, title, detail, window | spanning, count, evidence, where?,
 * status?}.  The engine is fed events one at a time (ph_engine_feed) and
 * asked for an analysis at any point (ph_engine_analyze): the families keep
 * small aggregates, never the events, so a 500 MB session on disk streams
 * through in bounded memory, and a live watcher can feed as events arrive
 * and ask again after each batch.  Analyzing does not consume the state.
 *
 * Every family lives in src/host/findings/<family>.c and is listed once in
 * the table in findings.c; the analysis says which checks ran and stayed
 * quiet, so silence means "looked".
 *
 * Ownership: everything an analysis points at lives in its arena and dies
 * with ph_analysis_free().
 */
#ifndef PH_HOST_FINDINGS_H
#define PH_HOST_FINDINGS_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_json.h"
#include "event.h"
#include "ingest.h"
#include "store.h"
#include "coverage.h"

enum ph_severity { PH_SEV_ERROR, PH_SEV_WARNING, PH_SEV_NOTE };
enum ph_confidence { PH_CONF_OBSERVED, PH_CONF_CORRELATED };
enum ph_status {
	PH_STATUS_NONE,
	PH_STATUS_NEW,
	PH_STATUS_ONGOING,
	PH_STATUS_RESOLVED,
};

const char *ph_severity_name(int sev);
/* "error" -> PH_SEV_ERROR ...; -1 for anything else. */
int ph_severity_parse(const char *s);
const char *ph_status_name(int st);

/* What a family knows about where in the code a finding comes from. */
struct ph_where_hint {
	const char *fn;	  /* function or method, or NULL */
	const char *file; /* file name as the stack names it, or NULL */
	int64_t line;	  /* 0 when unknown */
	const char *text; /* a literal to look for (SQL, URL path), or NULL */
	bool app;	  /* the frame is the app's own (not a library) */
	bool synthetic;	  /* made by the runtime, no source to find */
};

struct ph_finding {
	const char *id;	       /* "db-on-main-thread" ... */
	int severity;	       /* enum ph_severity */
	int confidence;	       /* enum ph_confidence */
	const char *source;    /* "porthole" or "trace" */
	const char *title;     /* one line */
	const char *detail[4]; /* one or more detail lines */
	int ndetail;
	bool spanning;	   /* not placed on this session's axis */
	int64_t from, to;  /* window of all occurrences (app clock) */
	int64_t last_from; /* the newest occurrence's window */
	int64_t last_to;
	int64_t count;	      /* occurrences */
	bool open;	      /* the newest is still going on (a stall) */
	const char *evidence; /* a JSON object, encoded */
	const char *key;      /* identity across calls: id + subject */
	struct ph_where_hint hint;
	const char *where;	 /* a JSON object once resolved, or NULL */
	const char *where_short; /* "path:line" when resolved, or NULL */
	int status;		 /* enum ph_status */
	int64_t delta;		 /* count change since the last call */
};

/* Metrics a capture records and compare diffs; docs/findings.md. */
#define PH_METRICS(X)                              \
	X(DURATION_MS, "durationMs")               \
	X(EVENTS, "events")                        \
	X(FRAMES_JANKY, "frames.janky")            \
	X(FRAMES_MISSED, "frames.missedRefreshes") \
	X(FRAMES_WORST_MS, "frames.worstMs")       \
	X(STALLS, "main.stalls")                   \
	X(STALL_MS, "main.stallMs")                \
	X(STALL_WORST_MS, "main.worstStallMs")     \
	X(DB_QUERIES, "db.queries")                \
	X(DB_MAIN, "db.mainThread")                \
	X(DB_ERRORS, "db.errors")                  \
	X(DB_WORST_MS, "db.worstMs")               \
	X(HTTP_CALLS, "http.calls")                \
	X(HTTP_FAILED, "http.failed")              \
	X(HTTP_SLOW, "http.slow")                  \
	X(HTTP_WORST_MS, "http.worstMs")           \
	X(HTTP_OPEN, "http.open")                  \
	X(RECOMPOSITIONS, "recompositions")        \
	X(STARTUP_MS, "startup.coldMs")            \
	X(TAP_WORST_MS, "taps.worstMs")            \
	X(LOG_ERRORS, "logs.errors")               \
	X(WORK_RETRIES, "work.retries")            \
	X(RSS_PEAK_MB, "memory.peakRssMb")         \
	X(IO_APP, "io.appRequests")                \
	X(IO_MAIN, "io.mainThreadRequests")        \
	X(IO_APP_WORST_MS, "io.appWorstMs")        \
	X(IO_APP_MOMENTS, "io.appIoMoments")

enum ph_metric {
#define X(id, name) PH_M_##id,
	PH_METRICS(X)
#undef X
		PH_M_COUNT
};

const char *ph_metric_name(int m);
/* The metric named name, or -1. */
int ph_metric_find(const char *name, size_t n);

/* Lanes of the HTML timeline. */
enum ph_lane {
	PH_LANE_MAIN,
	PH_LANE_FRAMES,
	PH_LANE_HTTP,
	PH_LANE_DB,
	PH_LANE_WORK,
	PH_LANE_NAV,
	PH_LANE_INPUT,
	PH_LANE_LOG,
	PH_LANE_COUNT
};
const char *ph_lane_name(int lane);

struct ph_lane_item {
	int lane;	   /* enum ph_lane */
	int64_t from, to;  /* app clock */
	const char *label; /* short, for the tooltip */
	int level;	   /* 0 normal, 1 warning, 2 error */
};

struct ph_mark {
	int64_t t;
	const char *label;
	const char *detail; /* or NULL */
};

/*
 * One launch, from a startup event and any later fully_drawn event for it
 * (matched by originMs).  Times are uptime ms; -1 when not reported.
 */
struct ph_launch {
	int64_t t;	     /* the startup event's */
	int64_t origin;	     /* originMs */
	int64_t first_frame; /* firstFrameMs */
	int64_t fully_drawn; /* reportFullyDrawnMs */
	const char *cls;     /* classification */
};

struct ph_exit_note {
	int64_t t;
	const char *reason;
	const char *description; /* or NULL */
};

struct ph_analysis {
	struct ph_arena arena;
	struct ph_ident ident;
	struct ph_profile profile;
	struct ph_window window; /* the window asked for */
	int64_t first_t, last_t; /* events seen in it; 0 when none */
	int64_t clipped_ms;	 /* of the window, not covered by data */

	struct ph_finding *f; /* ranked: severity, then time */
	size_t nf, af;
	/*
	 * The ids checked that found nothing (looked) are quiet when the
	 * coverage is complete, and not seen otherwise (ph_analysis_cover).
	 */
	struct ph_coverage cov;
	const char *looked[48];
	size_t nlooked;
	const char *quiet[48];
	size_t nquiet;
	const char *not_seen[48];
	size_t nnot_seen;

	double metric[PH_M_COUNT];
	bool metric_set[PH_M_COUNT];
	uint64_t counts[PH_KIND_COUNT]; /* events in the window by kind */
	uint64_t malformed, dropped, gaps;
	uint64_t repaired; /* lines read after a UTF-8 repair */
	struct ph_ingest_issue issues[PH_INGEST_ISSUES]; /* the first */
	unsigned nissues;

	struct ph_exit_note *exits; /* alsoInWindow */
	size_t nexits;
	uint64_t device_events, memory_events, gc_events;

	struct ph_lane_item *lanes;
	size_t nlanes, alanes;
	struct ph_mark *marks;
	size_t nmarks, amarks;
	struct ph_launch *launches; /* in event order, at most 256 */
	size_t nlaunches;

	const char *notes[8]; /* caveats the answer must carry */
	size_t nnotes;
	const char *status_note; /* why status is unclassified, or NULL */
};

struct ph_engine;

/*
 * A new engine over window w.  src (may be NULL) is the ingest feeding it:
 * the engine reads the session's identity and profile from it, so a
 * window that lacks the profile event still has the session's budget.
 */
struct ph_engine *ph_engine_new(struct ph_window w,
				const struct ph_ingest *src);
void ph_engine_free(struct ph_engine *e);
/* Feeds one event; events outside the window are ignored. */
int ph_engine_feed(struct ph_engine *e, const struct ph_event *ev);
/* Adapter for ph_ingest's on_event. */
int ph_engine_feed_cb(void *engine, const struct ph_event *ev);
/* The findings so far; the engine can be fed and asked again. */
struct ph_analysis *ph_engine_analyze(struct ph_engine *e);
void ph_analysis_free(struct ph_analysis *a);

/*
 * Analyses over the live store, and over an NDJSON file streamed.
 *
 * A window that every held event overlaps (the whole store: PH_WINDOW_ALL,
 * or from the beginning up to now) is answered by the store's standing
 * engine, fed each stored event once and asked again (s->cache; rebuilt
 * when the store evicted what it was fed or the profile changed), so it
 * costs the events that arrived since the last question.  Any other
 * window gets a new engine over the chunks that overlap it.  Either way
 * the answer is the same.
 */
struct ph_analysis *ph_analyze_store(struct ph_store *s, struct ph_window w);
struct ph_analysis *ph_analyze_file(const char *path, struct ph_window w,
				    int *rc);

/*
 * A window-taking answer over a live store that falls back to the session
 * on disk (its events.ndjson at session_path, NULL when none) when the
 * store no longer covers the window's start (it evicted older events):
 * the engine is fed the file's events, then the store's events newer than
 * the newest seq the file holds, so nothing is counted twice.  What
 * neither holds (before the recording began, a hole left by a session
 * file that stopped being written, or all of the evicted part when there
 * is no file) is added up in clipped_ms, and a note says where the
 * answer came from and how much was clipped.  When the store covers the
 * window this is ph_analyze_store.
 */
struct ph_analysis *ph_analyze_window(struct ph_store *s,
				      const char *session_path,
				      struct ph_window w);

/*
 * Appends a finding to a finished analysis (from another engine: a system
 * trace's answers); its strings must live in a->arena.  NULL when out of
 * memory.  Call ph_analysis_rank() after adding.
 */
struct ph_finding *ph_analysis_add(struct ph_analysis *a);
/* Ranks the findings again: severity, spanning first, then time. */
void ph_analysis_rank(struct ph_analysis *a);
/* The first finding with this id, or NULL. */
const struct ph_finding *ph_analysis_find(const struct ph_analysis *a,
					  const char *id);
/* Whether id was checked and found nothing (quiet or not seen). */
bool ph_analysis_quiet(const struct ph_analysis *a, const char *id);

/*
 * Judges a->cov again (after clipped_ms or the link changed) and sorts
 * the looked-for ids into quiet or not seen accordingly.
 */
void ph_analysis_cover(struct ph_analysis *a);

/*
 * What a live host knows about its link, for the stretch after the last
 * event held: connected (an idle app sends nothing, and that is seen), or
 * not, and why.  store_first_t is the oldest event the store holds, 0 when
 * none: a connected host holding events from before the window has seen
 * the window even when nothing happened in it.  Calls ph_analysis_cover.
 */
void ph_analysis_link(struct ph_analysis *a, bool connected, const char *why,
		      int64_t store_first_t);

/* Adds a note (copied) to the analysis. */
void ph_analysis_note(struct ph_analysis *a, const char *fmt, ...)
	PH_PRINTF(2, 3);

/*
 * Resolves each finding's where-hint against the project root (see
 * where.h).  With root NULL or "", `where` stays absent.
 */
void ph_analysis_resolve_where(struct ph_analysis *a, const char *root);

/*
 * Status against the previous call on the same session: prev is the
 * previous answer's window and its findings' {key: count}.  Classifies
 * only when the windows are comparable (chained: prev.to within 1 s of
 * w.from, or overlapping by at least half the shorter); otherwise leaves
 * every status NONE and sets status_note.  Resolved findings (in prev, not
 * now) are appended once with count 0.
 */
struct ph_prev_call {
	bool have;
	struct ph_window w;
	size_t n;
	const char **keys;
	const char **ids;
	const char **titles;
	int64_t *counts;
	int *severities;
};
void ph_analysis_classify(struct ph_analysis *a, const struct ph_prev_call *p);

/*
 * The answer as JSON (the shape MCP and `report --json` share):
 * {window, coverage, findings:[...], quiet:[...], notSeen:[...],
 * alsoInWindow?, notes?}.
 */
void ph_analysis_write_findings(const struct ph_analysis *a, struct ph_jw *jw);
void ph_finding_write(const struct ph_finding *f, struct ph_jw *jw);

/*
 * The banner for unreported errors: "N unreported errors: kind, kind …and
 * N more kinds", at most 240 chars; empty when none.  reported(key) says
 * whether a key was already surfaced.
 */
void ph_analysis_banner(const struct ph_analysis *a,
			bool (*reported)(void *ctx, const char *key), void *ctx,
			char *out, size_t size);

#endif
