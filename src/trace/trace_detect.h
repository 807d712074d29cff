/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_detect.h: detectors, one .sql file each, and the runner.
 *
 * A detector file starts with a header of `-- @key value` lines:
 *   @id, @title, @why, @param: name = default (repeatable), @identity:
 *   cols (default "location"; must include location), @module (the
 *   context views it needs; informational).
 * Then the rows query; optionally `-- @intervals` and a query returning
 * (ts, dur) stretches the rows stand for, run with the rows in table
 * `_rows`; optionally `-- @samples` and a query.
 *
 * Question detectors (`@question: jank`, the fixed questions of the MCP
 * tool ask_system_trace, run by ph_trace_ask and not by analyze) add
 * columns severity (error|warning|note), confidence (observed|
 * correlated), title, from_ts and to_ts (NULL: spanning) to their rows,
 * and two sections: `-- @unanswered`, a query returning one row with a
 * column reason when the trace cannot answer the question (then the rows
 * are not run), and `-- @ruled_out`, a query returning a column cause per
 * cause it looked at and found quiet.
 *
 * `@doctor: why` names why the doctor's built-in fixture cannot hold the
 * problem a detector looks for (the doctor then reports it silent with
 * that reason instead of failing).
 *
 * Parameters: `{{name}}` in the SQL is replaced by the value's text.  A
 * default's type (number, bool, string) is the parameter's type; overrides
 * (porthole-trace.yml, --set) must have the same type, and a key no
 * detector declares is refused.
 *
 * Every row has the columns location, count, self_ms, total_ms, max_ms,
 * covered_ms, detail.  A detector that fails is reported and skipped.
 */
#ifndef PH_TRACE_DETECT_H
#define PH_TRACE_DETECT_H

#include "ph_common.h"
#include "ph_buf.h"

#include <sqlite3.h>

enum ph_param_type { PH_PARAM_NUMBER, PH_PARAM_BOOL, PH_PARAM_STRING };

struct ph_param {
	char *name;
	char *value;	 /* text substituted into the SQL */
	int type;	 /* enum ph_param_type, from the default */
	bool overridden; /* set by porthole-trace.yml or --set */
};

struct ph_detector {
	char *path;
	char *id, *title, *why, *identity, *module;
	struct ph_param *params;
	size_t nparams, capparams;
	char *sql, *intervals, *samples; /* NULL when absent */
	char *ruled_out;  /* @ruled_out query: causes looked at, quiet */
	char *unanswered; /* @unanswered query: a row = cannot answer */
	char *question;	  /* @question: one of ask_system_trace's eight */
	char *doctor;	  /* @doctor: why the doctor fixture cannot fire it */
};

struct ph_detset {
	struct ph_detector *d;
	size_t n;
};

/* Reads every *.sql in dir, sorted by name; 0, or PH_E* with a message. */
/* dir NULL: the detectors built into the binary (detectors/ at build). */
int ph_detset_load(struct ph_detset *s, const char *dir);

/* The .sql files of detectors/ as they were at build time
 * (scripts/embed.sh). */
struct ph_builtin_sql {
	const char *name;
	const char *text;
	size_t len;
};
extern const struct ph_builtin_sql ph_builtin_detectors[];
extern const size_t ph_builtin_detectors_n;
/* Parses one detector from text (kept copies); 0 or PH_ECORRUPT. */
int ph_detector_parse(struct ph_detector *d, const char *text, size_t n,
		      const char *path, char *err, size_t errlen);
void ph_detset_release(struct ph_detset *s);

/*
 * Applies `key=value` where key is `id.param` or `param` (every detector
 * that declares it).  0, or PH_EINVAL with why in err (unknown key, wrong
 * type).
 */
int ph_detset_set(struct ph_detset *s, const char *kv, char *err,
		  size_t errlen);

/* The project's config file, read from the working directory. */
#define PH_TRACE_CONFIG "porthole-trace.yml"

/*
 * Applies a porthole-trace.yml (read with libyaml):
 *
 *   params:
 *     main_thread_block: { min_ms: 20 }   # one detector's parameter
 *     min_count: 3                        # every detector declaring it
 *
 * Nothing else is allowed: an unknown top-level key, an unknown detector
 * or parameter, a value of the wrong type (a quoted scalar is a string;
 * true/false a bool; a plain decimal number a number), a nested value
 * where a scalar belongs, a key given twice or a second document is an
 * error.  Every error names the file, line:column and byte offset.  A
 * missing file is no overrides when optional, an error otherwise.
 * 0, PH_EINVAL (the file is wrong) or PH_EIO, with why in err.
 */
int ph_detset_load_config(struct ph_detset *s, const char *path, bool optional,
			  char *err, size_t errlen);
/* The same on text in memory (borrowed); name is for the messages. */
int ph_detset_config_mem(struct ph_detset *s, const char *name,
			 const char *text, size_t n, char *err, size_t errlen);

/*
 * The set a command runs, checked before any trace is opened: the
 * detectors in dir (see ph_trace_detectors_dir), then config (NULL:
 * PH_TRACE_CONFIG in the working directory, optional), then each of sets[]
 * (`--set k=v`) in order, the later winning.  0, or PH_E* with why in err; s is
 * released on error.
 */
int ph_detset_prepare(struct ph_detset *s, const char *dir, const char *config,
		      const char *const *sets, size_t nsets, char *err,
		      size_t errlen);
/* The SQL of one section with {{params}} substituted, into out. */
int ph_detector_render(const struct ph_detector *d, const char *sql,
		       struct ph_buf *out) PH_WUR;

#endif
