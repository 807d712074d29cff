/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io/events.h: the `io` view (io.h) rebuilt from a session's own events.
 *
 * `porthole iotrace attach SESSION DIR` (io/attach.h) joins a recording
 * with a session once and appends what it found to the session: each
 * block request of the window as a wire `io` event (protocol.md §4.4,
 * with `issueMs`, the exact time), and one `io_recording` event
 * saying which recording it was, how its clock was aligned, what it lost
 * and each device's median latency over the whole recording.  From then
 * on any reader of the session (report, the findings engine, the live
 * store, MCP) has the block I/O without the recording: this module reads
 * those events back, with the app's stalls, late frames and queries, into
 * a view's inputs, and judges them with io.c's own rules, so the findings
 * are the ones `porthole io` gives for the same window (docs/iotrace.md,
 * "In a session").
 *
 * Use: ph_io_events_init; ph_io_events_feed every event (an ingest or
 * store callback; kinds io, io_recording, blocked, frame, db_end: a
 * request fed twice, as a session file and the live store both hold
 * host-made events, counts once); then
 * ph_io_events_view for a window, as often as wanted: each call makes a
 * new view and leaves what was fed as it was (the findings family's emit
 * must not change its state, findings/family.h).
 *
 * Ownership: everything fed is copied; a view borrows the strings of the
 * ph_io_events it came from, which must outlive it.
 */
#ifndef PH_HOST_IO_EVENTS_H
#define PH_HOST_IO_EVENTS_H

#include "ph_common.h"
#include "io.h"

/* One device's median over a whole recording, from io_recording. */
struct ph_io_rec_dev {
	uint32_t dev;
	int64_t p50_ns;
	uint64_t rows;
};

/* An io_recording event: one recording attached to the session. */
struct ph_io_rec_mark {
	const char *id;	       /* the recording's identity (hex) */
	const char *dir;       /* where it was when attached */
	const char *alignment; /* same-clock, wall-clock, assumed, given */
	int64_t t, to;	       /* the window it covered */
	int64_t lost;	       /* ftrace's total_lost; -1 unknown */
	int64_t pid;	       /* the app's pid attach used; 0 unknown */
	uint64_t in_window;    /* its requests in the window */
	uint64_t added;	       /* io events its newest attach added */
	uint64_t left_out;     /* requests of the window not attached */
	bool app_only;	       /* attached with --app-only */
	struct ph_io_rec_dev *dev;
	size_t ndev;
};

struct ph_io_events {
	struct ph_io_view *in; /* the inputs only: never finished */
	struct ph_io_rec_mark *marks;
	size_t nmarks;
	uint64_t io_events; /* io events fed, each request once */
	uint64_t dup_io;    /* io events of a request already fed */
	uint64_t bad_io;    /* io events that were not a request */
	uint64_t *seen;	    /* request keys (ph_io_req_key), 0 empty */
	size_t nseen, aseen;
	bool all_queries; /* every db_end a moment, not only main's */
};

/*
 * all_queries: keep every query as a moment (the view's moments list
 * them), or only the main thread's (all the findings need: the rules
 * read main-thread queries, stalls and late frames).  0 or PH_ENOMEM.
 */
int ph_io_events_init(struct ph_io_events *e, bool all_queries) PH_WUR;
void ph_io_events_release(struct ph_io_events *e);
/* One event (a ph_ingest / ph_store_each callback); others ignored. */
int ph_io_events_feed(void *events, const struct ph_event *ev);
/* Whether block I/O was attached at all: an io or io_recording event. */
static inline bool ph_io_events_any(const struct ph_io_events *e)
{
	return e->io_events > 0 || e->nmarks > 0;
}
/*
 * Whether ftrace's losses are known for what was fed: every recording's
 * marker carries them (io-lost-events is judged only then).
 */
bool ph_io_events_loss_known(const struct ph_io_events *e);
/*
 * A finished view of window w (PH_WINDOW_ALL: everything fed), for the
 * session's identity and profile (the app's pid is the marker's when
 * attach was given one): ph_io_view_free it.  NULL when out of memory.
 */
struct ph_io_view *ph_io_events_view(const struct ph_io_events *e,
				     const struct ph_ident *id,
				     const struct ph_profile *p,
				     struct ph_window w);

/*
 * A request's identity across recordings and reads: device, sector, size
 * and the issue and completion ns (the kernel's own timestamps, so the
 * same request from a second recording of the same moments has it too).
 * Never 0.
 */
uint64_t ph_io_req_key(const struct ph_io_req *q);
/* Whether a request with q's key was fed. */
bool ph_io_events_has(const struct ph_io_events *e, const struct ph_io_req *q);

#endif
