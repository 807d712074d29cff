/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_finish_int.h: what ph_trace_finish()'s two files share: the
 * plan trace_finish_sort.c makes of the decoded events (as they are,
 * radix-sorted, or merged from their runs) and trace_finish.c runs
 * through the state machines.
 */
#ifndef PH_TRACE_FINISH_INT_H
#define PH_TRACE_FINISH_INT_H

#include "ph_common.h"
#include "trace/trace.h"

/*
 * The events run through the state machines in time order, equal
 * timestamps in the order they were decoded (a stable sort by time).
 *
 * Decoders push runs that are in order already: a Perfetto bundle is one
 * CPU's events in time order, ftrace text is ordered but for a few lines.
 * Runs overlap only a little (the bundles of one read cycle), so the
 * events are merged from their runs through a heap as small as the
 * overlap, straight into the state machines: no sort keys, no order
 * array, and each run is read front to back.  Input with more runs than
 * that pays off for (a shuffled or hostile trace) is radix-sorted.
 *
 * Only the events the state machines will use are run: in a trace with
 * sched_waking, every sched_wakeup is redundant (do_event ignores it) and
 * they are a fifth of a typical Android trace's events.
 */
static inline bool skipped(const struct ph_tev *e, bool have_waking)
{
	return have_waking && e->kind == PH_EV_WAKEUP;
}

/* A stretch of events in time order: [cur, end), ts = ev[cur].ts. */
struct run {
	int64_t ts;
	uint32_t cur, end;
};

/* a before b: by time, then by position (runs never share one) */
static inline bool run_before(const struct run *a, const struct run *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->cur < b->cur);
}

/*
 * What ph_trace_sort_events decided: run the events as they are (neither set),
 * in `order` (radix-sorted), or merged from `runs` (sorted by their first
 * event, each starting at an event that is kept).
 */
struct plan {
	uint32_t *order;
	struct run *runs;
	size_t nruns;
	size_t n; /* events to run */
};

/*
 * The plan for t's events, and how many of each kind there are (kinds:
 * PH_EV_NKINDS counters, added to); sets pv->have_waking and the trace's
 * time bounds.  0 or PH_ENOMEM; the caller frees pl->order and pl->runs.
 */
int ph_trace_sort_events(struct ph_trace *t, size_t *kinds, struct plan *pl);

#endif
