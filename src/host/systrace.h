/* SPDX-License-Identifier: Apache-2.0 */
/*
 * systrace.h: a system trace recorded over the same window as the app's
 * events, its answers merged into the findings (`capture --systrace`).
 *
 * The trace engine (src/trace/) asks its questions (trace_ask.h) about
 * the app's process over the window; each answer becomes a finding with
 * source "trace", its window on the app's clock (the Linux recorder uses
 * trace_clock=mono, the app's clock; a device's perfetto trace is on its
 * BOOTTIME clock, and the window asked about and the answers' windows are
 * converted through the trace's clock snapshots).  What the trace could
 * not answer becomes a note, so a quiet trace is not mistaken for a clean
 * one.
 */
#ifndef PH_HOST_SYSTRACE_H
#define PH_HOST_SYSTRACE_H

#include "ph_common.h"
#include "findings.h"

/*
 * Loads the trace at path and merges the answers about process pid (0:
 * the process named by a->ident.process, else the busiest) over
 * [from_ms, to_ms] on the app clock into a.  Returns the number of
 * findings added, or -1 with why (the trace not loading, the process not
 * in it); a note in a says so either way.
 */
int ph_systrace_merge(struct ph_analysis *a, const char *path, int64_t pid,
		      int64_t from_ms, int64_t to_ms, char *why,
		      size_t why_size);

#endif
