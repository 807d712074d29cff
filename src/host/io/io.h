/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io.h: the host's `io` view, an iotrace recording joined with an app's
 * session (docs/iotrace.md, "The host's io view").
 *
 * The app's events say when its main thread stalled, which frames were
 * late and when each query ran; the recording (src/iotrace/, schema v3)
 * says which block requests were in flight then, who issued them and how
 * long the device took.  The view puts both on the app's clock and
 * answers: which requests the app itself issued (and which of them its
 * main thread issued, inside which queries), which app moments had block
 * I/O in flight, and findings with source "iotrace".
 *
 * Use: ph_io_view_new(); feed the session (ph_io_feed_event for each
 * event, then ph_io_set_session), the recording's manifest
 * (ph_io_set_manifest), ph_io_align(); then every ds row
 * (ph_io_feed_row); then ph_io_finish().  ph_io_load() does all of it
 * from an events.ndjson file and a recording directory.  Rows outside the
 * window are dropped as they are fed, so a long recording streams through
 * in the memory of the window's requests.
 *
 * Clock: the app's t is CLOCK_MONOTONIC ms (Android: uptimeMillis), and a
 * live recording's mono_ns is the same clock (trace_clock=mono), so on one
 * machine and boot t = mono_ns / 1e6.  The wall-clock offsets on both
 * sides (device:clocks wallMs - uptimeMs; the manifest's
 * clock.mono_to_real_offset_ns) tell whether that holds: when they agree
 * within PH_IO_SAME_CLOCK_NS the clocks are one; otherwise the recording
 * is moved onto the app's clock through the wall clock, and the view says
 * so.  The caller may give the shift instead.
 *
 * Ownership: everything the view points at lives in its arena.
 */
#ifndef PH_HOST_IO_H
#define PH_HOST_IO_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_json.h"
#include "../event.h"
#include "../findings.h"
#include "../store.h"
#include "iotrace/ds_read.h"

/* Wall-clock offsets closer than this: one clock (NTP slews realtime by
 * at most ~0.5 ms/s, so a day of drift stays under it; another boot or
 * device differs by seconds or more). */
#define PH_IO_SAME_CLOCK_NS ((int64_t)1000000000)
/* io-slow-request: an app request at least this slow ... */
#define PH_IO_SLOW_MS 100.0
/* ... or at least this slow and PH_IO_SLOW_FACTOR x the device's p50. */
#define PH_IO_SLOW_MIN_MS 20.0
#define PH_IO_SLOW_FACTOR 10.0
/* io-during-jank: the device's worst latency in a stall or late frame at
 * least this many times its median for the window, and this slow. */
#define PH_IO_JANK_FACTOR 4.0
#define PH_IO_JANK_MIN_MS 5.0
/* At most this many moments and requests are kept in the answers. */
#define PH_IO_MAX_MOMENTS 200
/* The busiest processes the JSON answers list, at most. */
#define PH_IO_MAX_PROCS 20

enum ph_io_align {
	PH_IO_SAME_CLOCK, /* offsets agree: t = mono_ns / 1e6 */
	PH_IO_WALL_CLOCK, /* moved through the wall clock */
	PH_IO_ASSUMED,	  /* the session has no device:clocks: assumed one */
	PH_IO_GIVEN,	  /* the caller's shift */
};

/* One block request, on the app's clock. */
struct ph_io_req {
	int64_t issue_ns; /* app clock ns; done_ns when the issue was unseen */
	int64_t done_ns;  /* completion, app clock ns */
	int64_t latency_ns; /* -1: the issue was not seen */
	int64_t queue_ns;   /* -1: unknown */
	int64_t sector;	    /* -1: none (a flush) */
	uint64_t bytes;
	uint64_t request_id; /* 0: unknown */
	int32_t pid, tid;    /* -1: unknown */
	int32_t cpu;	     /* -1: unknown */
	uint32_t dev;	     /* major << 20 | minor */
	char op[14];	     /* read, write, flush, discard, secure_erase ... */
	char rwbs[8];	     /* rebuilt from op and flags: "WS", "FF", "RA" */
	const char *comm;    /* in the arena; "" when unknown */
	bool app;	     /* pid is the app's */
	bool main;	     /* tid is the app's main thread */
};

enum ph_io_moment_kind {
	PH_IO_STALL, /* blocked */
	PH_IO_FRAME, /* a late frame */
	PH_IO_QUERY, /* db_end */
};

/* A span of the app's own, and the block I/O in flight during it. */
struct ph_io_moment {
	int kind;	  /* enum ph_io_moment_kind */
	int64_t t;	  /* the event's t */
	int64_t from, to; /* its span, ms, widened by 1 ms each side */
	const char *id;	  /* db id, or NULL */
	const char *what; /* SQL, top frame or worst phase, or "" */
	bool main;	  /* on the main thread (stalls and frames are) */
	bool error;	  /* a query that failed */
	bool jank;	  /* io-during-jank counted it */
	/* filled by ph_io_finish */
	uint64_t app_n, main_n, app_bytes;
	int64_t app_worst_ns; /* -1 when none */
	uint64_t dev_n;	      /* every request in flight, any process */
	int64_t dev_worst_ns;
	uint32_t dev_worst_dev; /* the device of that request */
	int32_t other_pid;	/* the busiest other process then, or -1 */
	const char *other_comm;
	uint64_t other_n;
};

/* Per device and operation, over the window. */
struct ph_io_dev_op {
	uint32_t dev;
	char op[14];
	uint64_t n, bytes;
	int64_t p50_ns, p99_ns, max_ns; /* -1 without latencies */
};

/*
 * Latencies of one device over the whole recording, in log buckets (8 a
 * doubling from 1 us): its median is what "slow for this device" is
 * measured against, so a short window does not judge itself.
 */
#define PH_IO_HIST_BUCKETS 224
struct ph_io_dev_hist {
	uint32_t dev;
	uint64_t total;
	uint32_t n[PH_IO_HIST_BUCKETS];
};
/* The median bucket's middle, in ns (what the rules measure against);
 * -1 when the histogram is empty. */
int64_t ph_io_hist_median(const struct ph_io_dev_hist *h);

/* Per process, over the window. */
struct ph_io_proc {
	int32_t pid;
	const char *comm;
	uint64_t n, bytes;
	int64_t device_ns; /* summed latency */
};

struct ph_io_opts {
	int64_t pid;	    /* the app's; 0: the session's hello */
	bool have_shift;    /* shift_ns given by the caller */
	int64_t shift_ns;   /* app t (ns) = mono_ns + shift_ns */
	struct ph_window w; /* app clock; PH_WINDOW_ALL: the session */
};

struct ph_io_view {
	struct ph_arena arena;
	struct ph_io_opts o;
	/* the session */
	struct ph_ident ident;
	struct ph_profile profile;
	int64_t first_t, last_t;
	bool have_app_offset;
	int64_t app_offset_ns; /* wall - uptime, from device:clocks */
	int64_t pid;	       /* the app's, 0 when unknown */
	/* the recording */
	const char *rec_dir; /* as given to ph_io_load, or NULL */
	bool have_rec_offset;
	int64_t rec_offset_ns; /* clock.mono_to_real_offset_ns */
	int64_t lost;	       /* ftrace_loss.total_lost, -1 unknown */
	const char *rec_mode;  /* manifest mode, or NULL */
	/* alignment */
	int align;		/* enum ph_io_align */
	int64_t shift_ns;	/* app ns = mono_ns + shift_ns */
	int64_t offset_diff_ns; /* rec - app wall offsets, when both known */
	struct ph_window w;	/* the window in force, ms */
	int64_t rec_first_ns, rec_last_ns; /* completions seen, app clock */
	uint64_t rows, rows_outside, rows_no_time;
	bool no_overlap;     /* rows, none of them in the window */
	int64_t max_span_ns; /* the longest done - issue kept, after finish */
	struct ph_io_dev_hist *hist; /* per device, every row */
	size_t nhist;
	/* what was kept */
	struct ph_io_req *req; /* by issue time after finish */
	size_t nreq, areq;
	struct ph_io_moment *mom; /* by time after finish */
	size_t nmom, amom;
	size_t stall_at; /* mom[] index of the newest stall, + 1; 0 none */
	/* the answer, after ph_io_finish */
	uint64_t app_n, main_n, app_bytes, main_bytes, others_n, other_procs;
	uint64_t unseen_n; /* of others_n: completions whose issue was unseen */
	struct ph_io_dev_op *ops;
	size_t nops;
	struct ph_io_proc *procs; /* busiest first */
	size_t nprocs;
	struct ph_finding f[4];
	size_t nf;
	const char *quiet[4];
	size_t nquiet;
	const char *notes[8];
	size_t nnotes;
	const char *recent_comm[8]; /* ph_io_keep_comm's last comms */
	unsigned recent_next;
	double budget_ms;	   /* the frame budget used */
	const char *budget_source; /* "profile", "frame events", "assumed" */
};

struct ph_io_view *ph_io_view_new(const struct ph_io_opts *o);
void ph_io_view_free(struct ph_io_view *v);

/* An event of the session (blocked, frame, db_end, device:clocks are
 * kept; the rest ignored).  A ph_ingest on_event callback. */
int ph_io_feed_event(void *view, const struct ph_event *ev);
/* The session's identity, profile and span, once its events are fed. */
void ph_io_set_session(struct ph_io_view *v, const struct ph_ident *id,
		       const struct ph_profile *p, int64_t first_t,
		       int64_t last_t);
/* The recording's manifest (NULL when it has none). */
void ph_io_set_manifest(struct ph_io_view *v, const struct ph_json *m);
/* Decides the clock and the window; call before feeding rows. */
void ph_io_align(struct ph_io_view *v);
/* One ds row; a ph_iot_ds_read callback. */
int ph_io_feed_row(void *view, const struct ph_iot_ds_rec *r);
/* Sorts, joins and judges. */
int ph_io_finish(struct ph_io_view *v);

/*
 * All of the above from a session's NDJSON (events.ndjson, or any file
 * of wire lines) and a recording directory.  0, or non-zero with why.
 */
int ph_io_load(struct ph_io_view *v, const char *events_path,
	       const char *rec_dir, char *why, size_t why_size);

/*
 * The second half of ph_io_load, for a caller that fed the session
 * itself (ph_io_feed_event for each event, then ph_io_set_session): the
 * recording's manifest, the clock, every ds row, ph_io_finish.  v->rec_dir
 * is set to rec_dir unless the caller set it (NULL it afterwards for a
 * recording that will not be kept).  0, or non-zero with why.
 */
int ph_io_load_recording(struct ph_io_view *v, const char *rec_dir, char *why,
			 size_t why_size);

/*
 * One request already on the app's clock (a wire `io` event read back,
 * io/events.h): kept as given, its strings borrowed (they must outlive
 * the view), its latency counted in the device's histogram.  The window
 * is the caller's to apply.
 */
int ph_io_feed_req(struct ph_io_view *v, const struct ph_io_req *r);
/*
 * A device's median latency over a whole recording, as `iotrace attach`
 * writes it down (rows: how many it was taken over): replaces what the
 * device's histogram held, so the slow and jank rules measure against
 * the recording, not against the requests a window kept.
 */
int ph_io_set_device_median(struct ph_io_view *v, uint32_t dev, int64_t p50_ns,
			    uint64_t rows);
/*
 * A new view over src's inputs (requests, moments, histograms, the
 * frames' budget), not yet finished, with options o: finishing it leaves
 * src as it was.  Its strings are src's (src must outlive it).  NULL
 * when out of memory.
 */
struct ph_io_view *ph_io_view_copy(const struct ph_io_view *src,
				   const struct ph_io_opts *o);

/* Adds a note (copied) the answers carry. */
void ph_io_note(struct ph_io_view *v, const char *fmt, ...) PH_PRINTF(2, 3);

/*
 * A comm in v's arena, cut to 63 bytes and shared with the last few kept
 * (a busy process issues runs of requests, so most are not copied
 * again); "" when out of memory.  Rows and read-back events both keep
 * theirs with it.
 */
const char *ph_io_keep_comm(struct ph_io_view *v, const char *s, size_t n);
/* "254:0" (a ds row) or "254,0" (a wire io event, as the kernel's
 * block events print it) -> major << 20 | minor; 0 when it is not one. */
uint32_t ph_io_parse_dev(const char *s, size_t n);
/*
 * The first of a finished view's requests (by issue time) that could
 * still be in flight at from_ns: none took longer than v->max_span_ns,
 * so everything before it completed earlier.  The moments' joins and
 * attach's choice of requests walk from it to the moment's end.
 */
size_t ph_io_first_in_flight(const struct ph_io_view *v, int64_t from_ns);
/* "stall", "late frame", "query". */
const char *ph_io_moment_name(int kind);
/* The moments the answers list: the app's I/O in flight, or jank. */
static inline bool ph_io_moment_listed(const struct ph_io_moment *m)
{
	return m->app_n > 0 || m->jank;
}

/* --- the answers (io/write.c) --------------------------------------------- */

/* For a person: the clock, the totals, findings, quiet, moments. */
int ph_io_write_text(const struct ph_io_view *v, struct ph_buf *out) PH_WUR;
/* The same as one JSON object (docs/iotrace.md gives its shape). */
void ph_io_write_json(const struct ph_io_view *v, struct ph_jw *jw);
/*
 * Members of that object, each its key and value, into an object the
 * caller has open: ph_io_write_json writes them all, MCP's io_summary
 * the ones it carries with its own caps, so a member has one shape
 * wherever it appears.  max: the most list items written (SIZE_MAX: all).
 */
void ph_io_write_app(const struct ph_io_view *v, struct ph_jw *jw);
void ph_io_write_window(const struct ph_io_view *v, struct ph_jw *jw);
void ph_io_write_requests(const struct ph_io_view *v, struct ph_jw *jw);
void ph_io_write_devices(const struct ph_io_view *v, size_t max,
			 struct ph_jw *jw);
void ph_io_write_processes(const struct ph_io_view *v, size_t max,
			   struct ph_jw *jw);
/* The listed moments (ph_io_moment_listed), at most max; returns how
 * many are listed in all. */
size_t ph_io_write_moments(const struct ph_io_view *v, size_t max,
			   struct ph_jw *jw);
void ph_io_write_quiet(const struct ph_io_view *v, struct ph_jw *jw);
void ph_io_write_notes(const struct ph_io_view *v, struct ph_jw *jw);
/*
 * The requests as wire `io` events (docs/protocol.md §4.4), one NDJSON
 * line each, by issue time: the app's own, or every process's with all.
 */
int ph_io_write_events(const struct ph_io_view *v, bool all,
		       struct ph_buf *out) PH_WUR;
/*
 * The view as a capture keeps it (docs/cli.md, the capture's `io`): the
 * JSON answer without format, version and findings (the capture merged
 * those), plus `spans`, the requests by issue time for the report's io
 * lanes — at most max_spans, the app's own first — and `spansOmitted`.
 */
void ph_io_write_capture(const struct ph_io_view *v, size_t max_spans,
			 struct ph_jw *jw);
/* One request as a capture's `spans` item (MCP io_requests lists them so). */
void ph_io_write_span(const struct ph_io_req *r, struct ph_jw *jw);
/* The findings and quiet ids as the text answer prints them. */
int ph_io_write_findings_text(const struct ph_io_view *v,
			      struct ph_buf *out) PH_WUR;
/* The text answer's clock line, and its window line when both ends are
 * closed (`iotrace attach` prints them too). */
int ph_io_write_clock_text(const struct ph_io_view *v,
			   struct ph_buf *out) PH_WUR;
/* The end of the text answer's requests line, from the other processes'
 * count on: "N by M other processes, K whose issue was not seen\n". */
int ph_io_write_others_text(const struct ph_io_view *v,
			    struct ph_buf *out) PH_WUR;
/* The text answer's "lost" line: ftrace's losses, or that they are
 * unknown. */
int ph_io_write_lost_text(const struct ph_io_view *v,
			  struct ph_buf *out) PH_WUR;
/* The clock's alignment in words ("one clock: ..."), into buf. */
void ph_io_clock_note(const struct ph_io_view *v, char *buf, size_t size);
/* "same-clock", "wall-clock", "assumed", "given". */
const char *ph_io_align_name(int align);
/* One request's `io` event. */
void ph_io_event_write(const struct ph_io_req *r, struct ph_jw *jw);

#endif
