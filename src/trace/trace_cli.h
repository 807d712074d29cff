/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_cli.h: the engines of the `porthole trace` subcommands.
 * src/cmd/cmd-trace.c parses the command line into one options struct
 * per verb and calls the verb's function here, which writes its output
 * to out and its errors to stderr, and returns the exit status (0 ok,
 * 1 found something / partial input, 2 bad input or failure); none of
 * them exits.  Strings in the options are borrowed for the call.
 */
#ifndef PH_TRACE_CLI_H
#define PH_TRACE_CLI_H

#include "trace/trace.h"
#include "trace/trace_run.h"

#include <sqlite3.h>

/* The detectors and their parameters, for the verbs that run them. */
struct ph_trace_det_opts {
	const char *dir;	 /* the detectors' SQL; NULL: the built-in */
	const char *config;	 /* a parameters file; NULL: the default */
	const char *const *sets; /* "k=v" parameters, nsets of them */
	size_t nsets;
};

struct ph_trace_stats_opts {
	const char *path;
	bool json;
};
int ph_trace_cmd_stats(const struct ph_trace_stats_opts *o, FILE *out);

/* How query prints rows (ph_trace_cli_run_sql's mode). */
enum { PH_TRACE_ROWS_TEXT, PH_TRACE_ROWS_CSV, PH_TRACE_ROWS_JSON };

struct ph_trace_query_opts {
	const char *path;
	const char *sql;
	int mode; /* PH_TRACE_ROWS_* */
};
int ph_trace_cmd_query(const struct ph_trace_query_opts *o, FILE *out);

struct ph_trace_analyze_opts {
	const char *const *paths; /* the repeats of one run, npaths >= 1 */
	size_t npaths;
	struct ph_tscope scope;
	struct ph_trace_det_opts det;
	const char *out; /* the report's directory */
};
int ph_trace_cmd_analyze(const struct ph_trace_analyze_opts *o, FILE *out);

struct ph_trace_ask_opts {
	const char *path;
	const char *process;	      /* NULL: the busiest */
	int64_t from, to;	      /* PH_NULL_I64: not given */
	const char *const *questions; /* nquestions of them; 0: all */
	size_t nquestions;
	bool json;
	struct ph_trace_det_opts det;
};
int ph_trace_cmd_ask(const struct ph_trace_ask_opts *o, FILE *out);

struct ph_trace_compare_opts {
	const char *base, *new_path; /* two analyze report.json files */
	double floor_ms, floor_pct;  /* the noise floor, both >= 0 */
	bool json;
};
int ph_trace_cmd_compare(const struct ph_trace_compare_opts *o, FILE *out);

struct ph_trace_record_opts {
	double seconds;	   /* 0..86400 */
	const char *out;   /* the trace file */
	const char *appid; /* NULL, or the app whose processes are named */
	const int *pids;   /* processes to name, npids <= 64 */
	size_t npids;
};
int ph_trace_cmd_record(const struct ph_trace_record_opts *o, FILE *out);

struct ph_trace_doctor_opts {
	bool json;
	struct ph_trace_det_opts det;
	const char *write; /* NULL, or where the fixture is also written */
};
int ph_trace_cmd_doctor(const struct ph_trace_doctor_opts *o, FILE *out);

/* trace_tools.c: scenario candidates, name masks, thresholds */
struct ph_trace_mark_opts {
	const char *path, *process, *detectors;
	double min_ms, gap_ms; /* both >= 0 */
	bool json;
};
int ph_trace_cmd_mark(const struct ph_trace_mark_opts *o, FILE *out);

struct ph_trace_names_opts {
	const char *path, *process, *detectors;
	bool json;
};
int ph_trace_cmd_names(const struct ph_trace_names_opts *o, FILE *out);

struct ph_trace_calibrate_opts {
	const char *path, *process, *detectors;
	const char *detector; /* the detector's id */
	const char *param;    /* NULL: every numeric parameter */
	bool json;
};
int ph_trace_cmd_calibrate(const struct ph_trace_calibrate_opts *o, FILE *out);

/* The doctor's built-in fixture (a Perfetto protobuf trace), into out. */
int ph_trace_doctor_fixture(struct ph_buf *out) PH_WUR;

/* Loads path into t (initialised here): 0, 1 partial (warned), 2 failed. */
int ph_trace_cli_load(struct ph_trace *t, const char *path);
/* Prints the rows of every statement in sql to out, in a PH_TRACE_ROWS_*
 * mode: 0, or 2 with the error on stderr. */
int ph_trace_cli_run_sql(sqlite3 *db, const char *sql, int mode, FILE *out);

#endif
