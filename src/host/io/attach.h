/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io/attach.h: `porthole iotrace attach SESSION DIR`, an iotrace
 * recording's block requests added to a recorded session as events
 * (docs/iotrace.md, "In a session").
 *
 * The recording is joined with the session once, by the `io` view (io.h)
 * over the session's window, and what it found is appended to the
 * session's events.ndjson with ph_session_add_events, as the heap
 * engine's leaks are: each request of the window as a wire `io` event
 * (ph_io_event_write), then one `io_recording` event naming the
 * recording and carrying what the events alone cannot (its clock
 * alignment, ftrace's losses, each device's median over the whole
 * recording, the app's pid).  A host recording the session reads them
 * back into its live store within a flush, so the UI, MCP and watch get
 * them like any other event; io/events.h reads them back for findings.
 *
 * Which requests: the app's own, then (unless app_only) other
 * processes': the timeline's io lane and io-during-jank need the
 * writeback, the journal and the neighbour that were in flight while
 * the app was stuck.  At most max in all (0: no cap): the app's first,
 * then others' in flight during one of the app's moments (a stall, a
 * late frame, a query), then the rest by issue time.  A request the
 * session already holds (same device, sector, size, issue and
 * completion ns: the kernel's own timestamps, so the same request read
 * from a second recording of the same moments counts too) is not added
 * again: attaching twice adds nothing the second time.
 */
#ifndef PH_HOST_IO_ATTACH_H
#define PH_HOST_IO_ATTACH_H

#include "ph_common.h"
#include "io.h"

/* The default cap on requests attached (docs/iotrace.md says why). */
#define PH_IO_ATTACH_MAX 20000
/* Appends go in batches of at most this many bytes, a live host's
 * flush apart: it reads back at most 16 MiB another process appended
 * between two of its flushes (host/session.c). */
#define PH_IO_ATTACH_BATCH ((size_t)8 << 20)

struct ph_io_attach_opts {
	const char *session_dir; /* holds events.ndjson */
	const char *rec_dir;	 /* an iotrace recording */
	int64_t pid;		 /* the app's; 0: the session's hello */
	bool have_shift;	 /* shift_ns given (--offset-ms) */
	int64_t shift_ns;	 /* app t (ns) = mono_ns + shift_ns */
	bool app_only;		 /* only the app's own requests */
	uint64_t max;		 /* most requests attached; 0: all */
};

struct ph_io_attach_result {
	struct ph_io_view *v; /* the join; ph_io_view_free it */
	char recording[17];   /* the recording's identity, hex */
	bool seen_before;     /* an io_recording of it was in the session */
	uint64_t selected;    /* requests chosen (app's + others') */
	uint64_t left_out;    /* of the window's, not chosen */
	uint64_t already;     /* chosen, but the session had them */
	uint64_t added_app;   /* io events added: the app's ... */
	uint64_t added_other; /* ... and other processes' */
	size_t bytes;	      /* appended, marker included */
	int batches;	      /* ph_session_add_events calls */
};

/*
 * Joins and appends.  0, or PH_ENOENT (no session, not a recording),
 * PH_EINVAL (the recording does not overlap the session, or has no
 * request in its window), PH_ECORRUPT, PH_ENOMEM, PH_EIO, with why.  On
 * success and on a refusal after the join, r->v holds the view.
 */
int ph_io_attach(const struct ph_io_attach_opts *o,
		 struct ph_io_attach_result *r, char *why, size_t why_size);

#endif
