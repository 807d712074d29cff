/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_sql.h: a loaded trace as an SQLite database.
 *
 * Every table of struct ph_trace is an eponymous virtual table of the same
 * name (no rows are copied: SQLite reads the columns in place), plus views
 * shaped like Perfetto trace_processor's (thread_track, process_track,
 * counter_track, cpu_counter_track, sched_slice, trace_bounds), functions
 * trace_start(), trace_end(), to_monotonic(ts), and the SPAN_JOIN module.
 *
 * The trace must outlive the connection and must not change while it is
 * open.  An equality constraint on any integer or string column is served
 * from a sorted index built on first use, so joins on ids do not scan.
 */
#ifndef PH_TRACE_SQL_H
#define PH_TRACE_SQL_H

#include "trace/trace.h"

#include <sqlite3.h>

/* Opens an in-memory database over t; 0 or PH_E*.  *db on success. */
int ph_trace_sql_open(struct ph_trace *t, sqlite3 **db);
/*
 * Registers the SPAN_JOIN module on db (trace_spanjoin.c); a row with
 * dur -1 (still open) ends at open_end, the trace end.  0 or PH_ENOMEM.
 */
int ph_trace_spanjoin_register(sqlite3 *db, int64_t open_end);

#endif
