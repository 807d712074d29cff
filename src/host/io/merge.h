/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io/merge.h: an iotrace recording made over the same run as a capture,
 * its `io` view's findings merged into the capture's (`capture
 * --iotrace`; docs/iotrace.md, "In a capture").
 *
 * The view (io.h) is fed the app's events from the live store (or, when
 * the store evicted part of the window, from the session on disk), then
 * the recording; its findings join the analysis with source "iotrace"
 * (reports tag them [iotrace]), its quiet ids join the analysis's quiet
 * list, and a note says what was joined.  The view itself is returned for
 * the capture file's `io` member (ph_io_write_capture).
 */
#ifndef PH_HOST_IO_MERGE_H
#define PH_HOST_IO_MERGE_H

#include "ph_common.h"
#include "../findings.h"
#include "io.h"
#include "../store.h"

/*
 * One of the view's findings added to a, source "iotrace", its strings
 * copied into a's arena (the capture's merge and the io findings family
 * both add them so).  NULL when out of memory, a left as it was.
 */
struct ph_finding *ph_io_add_finding(struct ph_analysis *a,
				     const struct ph_finding *src);

/*
 * The io.* metrics of a (findings.h) from view v, unless a already has
 * them (the io family set them from block I/O attached to the session).
 */
void ph_io_add_metrics(struct ph_analysis *a, const struct ph_io_view *v);

/*
 * Joins the recording at rec_dir with the events of store s (and the
 * session file session_path, may be NULL) over a's window, for the app
 * process pid (0: the session's hello), and merges the findings into a.
 * keep_dir says whether rec_dir outlives the capture (the view names it
 * then).  Returns the view (ph_io_view_free it), or NULL with why; a note
 * in a says so either way.
 */
struct ph_io_view *ph_io_merge(struct ph_analysis *a, struct ph_store *s,
			       const char *session_path, const char *rec_dir,
			       bool keep_dir, int64_t pid, char *why,
			       size_t why_size);

#endif
