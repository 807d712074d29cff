/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_run.h: the phases every detector run shares (analyze, ask,
 * doctor): the scenario (process and window), the context tables built on
 * it, and one detector's run.
 *
 * The context is a set of temp tables on literal window numbers (_proc,
 * _window, _threads, _slice_win, _aslice_win, _tstate_win, _child_sum,
 * _cpu_in_slice, _claimed_name, and the environment's _env_win,
 * _cpufreq_peak, _throttle, _run_lowfreq: trace_env.c); ph_tctx_open()
 * drops and rebuilds them, so one connection can be analysed again with
 * another scope.
 */
#ifndef PH_TRACE_RUN_H
#define PH_TRACE_RUN_H

#include "ph_common.h"
#include "ph_buf.h"
#include "trace/trace.h"
#include "trace/trace_detect.h"
#include "ph_json.h"

#include <sqlite3.h>

/* What the caller asks for; NULL / PH_NULL_I64 fields are not given. */
struct ph_tscope {
	const char *process; /* name, a part of one, or a pid; NULL: the
				busiest */
	int64_t from, to;    /* window in trace-clock ns */
	const char *start;   /* start anchor slice name */
	const char *end;     /* end anchor slice name */
};

#define PH_TSCOPE_INIT                                     \
	{                                                  \
		NULL, PH_NULL_I64, PH_NULL_I64, NULL, NULL \
	}

/* The scenario as found. */
struct ph_tctx {
	int64_t upid, pid, from, to;
	char pname[256];
	const char *source; /* "given", "anchors", "process life" */
	char note[320];	    /* e.g. the end anchor never closed; or "" */
	bool end_unclosed;  /* the end anchor was open at the trace end */
	char cpu_err[512];  /* why _cpu_in_slice is empty, or "" */
	char env_err[512];  /* why _run_lowfreq is empty, or "" */
};

/*
 * Picks the process and the window and builds the context tables.
 * 0; PH_ENOENT (no such process, anchor not found) or PH_EINVAL (empty
 * window, SQL failure) with why in err.
 */
int ph_tctx_open(sqlite3 *db, struct ph_trace *t, const struct ph_tscope *s,
		 struct ph_tctx *c, char *err, size_t errlen);

/*
 * Fills _claimed_name(detector, glob) from every detector of ds that has a
 * `name_glob` parameter (its value after overrides: masks separated by
 * '|'), so detectors that take any slice name (repeated_work, app_init)
 * can leave out the names another detector reports.  Call after
 * ph_tctx_open(); without it the table is empty.  0, or PH_EINVAL with
 * why in err.
 */
int ph_tctx_claim_names(sqlite3 *db, const struct ph_detset *ds, char *err,
			size_t errlen);

/* One detector's run.  rows is a JSON array of row objects. */
struct ph_detrun {
	const struct ph_detector *d;
	bool ok;
	char err[512];
	size_t nrows;
	double covered_ms;
	struct ph_buf rows;
	bool unanswered;     /* @unanswered returned a row */
	char reason[256];    /* its reason */
	struct ph_buf ruled; /* JSON array of @ruled_out causes */
	size_t nruled;
	/* called for every row while it is read, when set */
	void (*on_row)(void *arg, const struct ph_detrun *r, sqlite3_stmt *st);
	void *arg;
};

/* Runs r->d on db (context built); never fails the caller: r->ok. */
void ph_detrun_run(sqlite3 *db, struct ph_detrun *r);
void ph_detrun_release(struct ph_detrun *r);

/* The detectors directory: given, else ./detectors, else NULL: the set
 * built into the binary (a project may keep its own detectors/). */
const char *ph_trace_detectors_dir(const char *given);

/* Helpers: exec with the error in err; the first column of one row. */
int ph_tsql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);
int64_t ph_tsql_int(sqlite3 *db, const char *sql, int64_t dflt);

/*
 * The environment's context tables (trace_env.c), built by ph_tctx_open()
 * after the others; 0 or PH_EINVAL with why in err.
 */
int ph_tctx_build_env(sqlite3 *db, struct ph_tctx *c, char *err, size_t errlen);
/*
 * The environment phase over the context's window: writes the member
 * "environment" (CPU frequency, thermal, memory, the process's memory,
 * the Markdown lines again as "lines" and the whole as one "summary"
 * sentence) into the object being written to w, and appends the same as
 * Markdown list lines ("- ...\n") to md (NULL: not wanted).  summary is
 * ph_trace_env_summary() over the window when the caller has made it
 * already, else NULL.
 */
void ph_trace_env_phase(sqlite3 *db, struct ph_jw *w, struct ph_buf *md,
			const char *summary);
/*
 * One sentence on what [from, to] (trace ns, inside the context's window)
 * ran under: CPU frequency range and average and the time below half the
 * peak, throttling or not and the hottest zone, the process's RSS and the
 * memory available.  Appended to out; 0 or PH_ENOMEM.
 */
int ph_trace_env_summary(sqlite3 *db, int64_t from, int64_t to,
			 struct ph_buf *out);
/* The median of v[0..n) (sorts v); 0 when n is 0. */
double ph_trace_median(double *v, size_t n);
/*
 * Folds n JSON arrays of rows (one per repeat; NULL entries skipped) on
 * the identity columns (comma-separated), writes the folded array to w
 * and returns its row count (trace_merge.c).
 */
size_t ph_trace_rows_fold(struct ph_jw *w, const char **arrays, size_t n,
			  const char *identity);
/* Writes data to path, checking every step; 0 or PH_EIO (warned). */
int ph_trace_write_file(const char *path, const char *data, size_t n);

#endif
