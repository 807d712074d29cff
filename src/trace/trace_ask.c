/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_ask.c: ph_trace_ask() and `porthole trace ask` (see trace_ask.h).
 *
 * Each asked question runs its detector over the same context the
 * analyzer builds; a row becomes a finding.  A question whose @unanswered
 * query returns a row is reported unanswered with that reason and its
 * rows are not run: silence would claim "looked, found nothing" about
 * data the trace never had.
 *
 * The answer states the environment of its window before the findings,
 * as analyze's report does (trace_env.c), and every finding carries the
 * environment of its own stretch in evidence.environment: a duration is
 * read against the CPU frequency, the throttling and the memory it ran
 * under.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_ask.h"
#include "trace/trace_cli.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

const char *const ph_trace_questions[8] = {
	"jank",	   "thread_states",	 "binder", "render", "slices",
	"startup", "monitor_contention", "cpu",
};

struct ask {
	struct ph_trace *t;
	sqlite3 *db;
	struct ph_jw *w;     /* the findings array */
	bool mono;	     /* windows converted to MONOTONIC */
	const char *win_env; /* the whole window's environment, one line */
};

static const char *col_text(sqlite3_stmt *st, int ncol, const char *name)
{
	for (int c = 0; c < ncol; c++)
		if (!strcmp(sqlite3_column_name(st, c), name))
			return (const char *)sqlite3_column_text(st, c);
	return NULL;
}

static bool col_int(sqlite3_stmt *st, int ncol, const char *name, int64_t *v)
{
	for (int c = 0; c < ncol; c++) {
		if (strcmp(sqlite3_column_name(st, c), name))
			continue;
		if (sqlite3_column_type(st, c) == SQLITE_NULL)
			return false;
		*v = sqlite3_column_int64(st, c);
		return true;
	}
	return false;
}

/* A number column as a member of w; a column the detector does not fill
 * stays absent (not every detector fills every contract column). */
static void kv_col_dbl(struct ph_jw *w, sqlite3_stmt *st, int ncol,
		       const char *name)
{
	for (int c = 0; c < ncol; c++)
		if (!strcmp(sqlite3_column_name(st, c), name)) {
			ph_jw_kv_double(w, name, sqlite3_column_double(st, c));
			return;
		}
}

/* A trace-clock ns on the app's clock, in ms. */
static double app_ms(const struct ask *a, int64_t ts)
{
	int64_t m = a->mono ? ph_trace_to_clock(a->t, ts, PH_CLK_MONOTONIC) :
			      ts;

	return (double)(m == PH_NULL_I64 ? ts : m) / 1e6;
}

static void one_of(const char *v, const char *const *allowed, size_t n,
		   const char **out)
{
	*out = allowed[0];
	for (size_t i = 0; v && i < n; i++)
		if (!strcmp(v, allowed[i]))
			*out = allowed[i];
}

static void on_row(void *arg, const struct ph_detrun *r, sqlite3_stmt *st)
{
	static const char *const sev[] = { "warning", "error", "note" };
	static const char *const conf[] = { "observed", "correlated" };
	struct ask *a = arg;
	struct ph_jw *w = a->w;
	int ncol = sqlite3_column_count(st);
	const char *loc = col_text(st, ncol, "location");
	const char *s, *c;
	int64_t from, to, count = 0;
	char id[512];

	one_of(col_text(st, ncol, "severity"), sev, 3, &s);
	one_of(col_text(st, ncol, "confidence"), conf, 2, &c);
	snprintf(id, sizeof(id), "trace.%s:%s", r->d->question,
		 loc ? loc : "?");
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "id", id);
	ph_jw_kv_str(w, "question", r->d->question);
	ph_jw_kv_str(w, "severity", s);
	ph_jw_kv_str(w, "confidence", c);
	ph_jw_kv_str(w, "source", "trace");
	ph_jw_kv_str(w, "title",
		     col_text(st, ncol, "title") ? col_text(st, ncol, "title") :
						   r->d->title);
	ph_jw_kv_str(w, "detail", col_text(st, ncol, "detail"));
	if (col_int(st, ncol, "from_ts", &from) &&
	    col_int(st, ncol, "to_ts", &to)) {
		ph_jw_key(w, "window");
		ph_jw_obj_begin(w);
		ph_jw_kv_double(w, "from", app_ms(a, from));
		ph_jw_kv_double(w, "to", app_ms(a, to));
		ph_jw_obj_end(w);
	} else {
		ph_jw_kv_bool(w, "spanning", true);
	}
	col_int(st, ncol, "count", &count);
	ph_jw_kv_int(w, "count", count);
	ph_jw_key(w, "evidence");
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "location", loc);
	kv_col_dbl(w, st, ncol, "self_ms");
	kv_col_dbl(w, st, ncol, "total_ms");
	kv_col_dbl(w, st, ncol, "max_ms");
	ph_jw_kv_str(w, "detector", r->d->id);
	if (col_int(st, ncol, "from_ts", &from))
		ph_jw_kv_int(w, "trace_from_ns", from);
	if (col_int(st, ncol, "to_ts", &to))
		ph_jw_kv_int(w, "trace_to_ns", to);
	/* what this stretch ran under; a spanning finding, the window */
	if (col_int(st, ncol, "from_ts", &from) &&
	    col_int(st, ncol, "to_ts", &to)) {
		struct ph_buf env = PH_BUF_INIT(PH_BUF_NO_CAP);

		if (!ph_trace_env_summary(a->db, from, to, &env))
			ph_jw_kv_str(w, "environment", env.buf);
		ph_buf_release(&env);
	} else {
		ph_jw_kv_str(w, "environment", a->win_env);
	}
	ph_jw_obj_end(w);
	ph_jw_obj_end(w);
}

/*
 * What the kernel dropped before the trace was written (`lost`: what,
 * count, why): a ring buffer that overran leaves holes, and a thread or
 * a state absent from the tables may have been in one.  Absent when
 * nothing was reported lost.
 */
static const struct {
	const char *stat, *what;
} lost_kinds[] = {
	{ "ftrace_text_lost_events", "ftrace events (trace_pipe's LOST "
				     "lines)" },
	{ "ftrace_lost_events", "ftrace bundles that lost events" },
};

bool ph_trace_lost_any(struct ph_trace *t)
{
	for (size_t i = 0; i < PH_ARRAY_SIZE(lost_kinds); i++)
		if (ph_trace_stat_get(t, lost_kinds[i].stat) > 0)
			return true;
	return false;
}

static void lost_notes(struct ph_trace *t, struct ph_jw *w)
{
	bool any = false;

	for (size_t i = 0; i < PH_ARRAY_SIZE(lost_kinds); i++) {
		int64_t n = ph_trace_stat_get(t, lost_kinds[i].stat);

		if (n <= 0)
			continue;
		if (!any) {
			ph_jw_key(w, "lost");
			ph_jw_arr_begin(w);
			any = true;
		}
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "what", lost_kinds[i].what);
		ph_jw_kv_int(w, "count", n);
		ph_jw_kv_str(w, "why",
			     "the kernel's ring buffer overran while "
			     "recording: the trace has holes, and what is "
			     "not in it may still have happened");
		ph_jw_obj_end(w);
	}
	if (any)
		ph_jw_arr_end(w);
}

/*
 * What the decoder left out of the tables, so that an answer never reads
 * as complete when it is not: packets of kinds it does not decode
 * (`not_decoded`: what, packets) and packets set aside from the trace's
 * span (`set_aside`: what, count, why).  Absent when there are none.
 */
static void decoder_notes(struct ph_trace *t, struct ph_jw *w)
{
	struct ph_table *st = &t->tables[PH_T_STATS];
	int64_t ts0 = ph_trace_stat_get(t, "packets_ts0_set_aside");
	bool any = false;

	for (size_t r = 0; r < st->rows; r++) {
		const char *name = ph_trace_str(t, ph_col_str(st, ST_NAME)[r]);

		if (strncmp(name, "not_decoded.", 12))
			continue;
		if (!any) {
			ph_jw_key(w, "not_decoded");
			ph_jw_arr_begin(w);
			any = true;
		}
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "what", name + 12);
		ph_jw_kv_int(w, "packets", ph_col_i64(st, ST_VALUE)[r]);
		ph_jw_obj_end(w);
	}
	if (any)
		ph_jw_arr_end(w);
	lost_notes(t, w);
	if (ts0 <= 0)
		return;
	ph_jw_key(w, "set_aside");
	ph_jw_arr_begin(w);
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "what", "packets stamped 0");
	ph_jw_kv_int(w, "count", ts0);
	ph_jw_kv_str(w, "why",
		     "a timestamp of 0 far before the rest of the trace is "
		     "one never set; it is left out of the trace's span");
	ph_jw_obj_end(w);
	ph_jw_arr_end(w);
}

static const struct ph_detector *find_question(const struct ph_detset *ds,
					       const char *q)
{
	for (size_t i = 0; i < ds->n; i++)
		if (ds->d[i].question && !strcmp(ds->d[i].question, q))
			return &ds->d[i];
	return NULL;
}

int ph_trace_ask(struct ph_trace *t, const char *process, int64_t from,
		 int64_t to, const char *const *questions, size_t n,
		 const char *detectors, struct ph_jw *w, char *err,
		 size_t errlen)
{
	struct ph_detset ds;
	int rc = ph_detset_prepare(&ds, ph_trace_detectors_dir(detectors), NULL,
				   NULL, 0, err, errlen);

	if (rc)
		return rc == PH_EINVAL ? PH_EINVAL : PH_EIO;
	rc = ph_trace_ask_with(t, &ds, process, from, to, questions, n, w, err,
			       errlen);
	ph_detset_release(&ds);
	return rc;
}

int ph_trace_ask_with(struct ph_trace *t, const struct ph_detset *ds,
		      const char *process, int64_t from, int64_t to,
		      const char *const *questions, size_t n, struct ph_jw *w,
		      char *err, size_t errlen)
{
	struct ph_tscope scope = PH_TSCOPE_INIT;
	struct ph_detrun *runs = NULL;
	struct ph_tctx c;
	struct ask a;
	struct ph_buf win_env = PH_BUF_INIT(PH_BUF_NO_CAP);
	sqlite3 *db = NULL;
	int rc;

	if (!n) {
		questions = ph_trace_questions;
		n = PH_ARRAY_SIZE(ph_trace_questions);
	}
	if ((rc = ph_trace_sql_open(t, &db))) {
		snprintf(err, errlen, "cannot open the trace tables");
		goto out;
	}
	scope.process = process;
	scope.from = from;
	scope.to = to;
	if ((rc = ph_tctx_open(db, t, &scope, &c, err, errlen)) ||
	    (rc = ph_tctx_claim_names(db, ds, err, errlen)))
		goto out;
	runs = calloc(n, sizeof(*runs));
	if (!runs) {
		rc = PH_ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (ph_trace_env_summary(db, c.from, c.to, &win_env)) {
		rc = PH_ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	a.t = t;
	a.db = db;
	a.w = w;
	a.win_env = win_env.buf;
	/* a trace that names no clock cannot be converted from one */
	a.mono = t->trace_clock && t->trace_clock != PH_CLK_MONOTONIC &&
		 ph_trace_to_clock(t, c.from, PH_CLK_MONOTONIC) != PH_NULL_I64;
	ph_jw_obj_begin(w);
	ph_jw_key(w, "process");
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "name", c.pname);
	ph_jw_kv_int(w, "pid", c.pid);
	ph_jw_obj_end(w);
	ph_jw_key(w, "window");
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "from_ns", c.from);
	ph_jw_kv_int(w, "to_ns", c.to);
	ph_jw_kv_str(w, "source", c.source);
	if (c.note[0])
		ph_jw_kv_str(w, "note", c.note);
	ph_jw_obj_end(w);
	/*
	 * The clocks only as the trace states them: windows converted
	 * through its snapshots are on MONOTONIC; a trace that names no
	 * clock gets no clock said for it (its timestamps are as recorded).
	 */
	if (t->clock_stated)
		ph_jw_kv_str(w, "trace_clock", t->clock_name);
	if (a.mono || (t->clock_stated && t->trace_clock == PH_CLK_MONOTONIC))
		ph_jw_kv_str(w, "clock", "MONOTONIC");
	else if (t->clock_stated)
		ph_jw_kv_str(w, "clock", t->clock_name);
	decoder_notes(t, w);
	if (c.cpu_err[0] || c.env_err[0]) {
		ph_jw_key(w, "context_warnings");
		ph_jw_arr_begin(w);
		if (c.cpu_err[0])
			ph_jw_str(w, c.cpu_err);
		if (c.env_err[0])
			ph_jw_str(w, c.env_err);
		ph_jw_arr_end(w);
	}
	/* before the findings: what every duration below ran under */
	ph_trace_env_phase(db, w, NULL, a.win_env);
	ph_jw_key(w, "findings");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < n; i++) {
		runs[i].d = find_question(ds, questions[i]);
		if (!runs[i].d)
			continue;
		runs[i].on_row = on_row;
		runs[i].arg = &a;
		ph_detrun_run(db, &runs[i]);
		if (!runs[i].ok)
			ph_warn("question %s failed: %s", questions[i],
				runs[i].err);
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "asked");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < n; i++)
		if (runs[i].d && runs[i].ok)
			ph_jw_str(w, questions[i]);
	ph_jw_arr_end(w);
	ph_jw_key(w, "skipped");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < n; i++) {
		if (runs[i].d && runs[i].ok)
			continue;
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "question", questions[i]);
		if (!runs[i].d)
			ph_jw_kv_str(w, "reason", "not a known question");
		else
			ph_jw_kv_str(w, "reason", runs[i].err);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "unanswered");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < n; i++) {
		if (!runs[i].d || !runs[i].ok || !runs[i].unanswered)
			continue;
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "question", questions[i]);
		ph_jw_kv_str(w, "reason", runs[i].reason);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "ruled_out");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < n; i++) {
		struct ph_arena ar;
		struct ph_json *arr;

		if (!runs[i].d || !runs[i].ok || !runs[i].nruled)
			continue;
		ph_arena_init(&ar, 1 << 14, SIZE_MAX);
		if (!ph_json_parse(&ar, runs[i].ruled.buf, runs[i].ruled.len,
				   &arr, NULL)) {
			for (uint32_t k = 0; k < arr->n; k++) {
				ph_jw_obj_begin(w);
				ph_jw_kv_str(w, "question", questions[i]);
				ph_jw_key(w, "cause");
				ph_jw_value(w, &arr->u.items[k]);
				ph_jw_obj_end(w);
			}
		}
		ph_arena_release(&ar);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
	rc = 0;
out:
	for (size_t i = 0; runs && i < n; i++)
		ph_detrun_release(&runs[i]);
	free(runs);
	ph_buf_release(&win_env);
	sqlite3_close(db);
	return rc;
}

/* "LABEL: COUNT WHAT: WHY" for each {what, count, why} of root[key]. */
static void counted_lines(FILE *txt, struct ph_arena *a,
			  const struct ph_json *root, const char *key,
			  const char *label)
{
	const struct ph_json *x = ph_json_get(root, key);

	for (uint32_t i = 0; x && i < x->n; i++) {
		double k = 0;

		ph_json_as_double(ph_json_get(&x->u.items[i], "count"), &k);
		fprintf(txt, "%s: %.0f %s: %s\n", label, k,
			ph_json_strdup(a, ph_json_get(&x->u.items[i], "what")),
			ph_json_strdup(a, ph_json_get(&x->u.items[i], "why")));
	}
}

/* The answer as text, for people. */
static void print_text(const char *js, FILE *txt)
{
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *f, *x;

	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	if (ph_json_parse(&a, js, strlen(js), &root, NULL)) {
		ph_arena_release(&a);
		return;
	}
	x = ph_json_get(root, "process");
	if (ph_json_get(root, "clock"))
		fprintf(txt, "process %s, windows in ms on %s\n",
			ph_json_strdup(&a, ph_json_get(x, "name")),
			ph_json_strdup(&a, ph_json_get(root, "clock")));
	else
		fprintf(txt,
			"process %s, windows in ms of the trace's timestamps\n",
			ph_json_strdup(&a, ph_json_get(x, "name")));
	x = ph_json_get(root, "not_decoded");
	for (uint32_t i = 0; x && i < x->n; i++) {
		double k = 0;

		ph_json_as_double(ph_json_get(&x->u.items[i], "packets"), &k);
		fprintf(txt,
			"not decoded: %s (%.0f packets): not in any table\n",
			ph_json_strdup(&a, ph_json_get(&x->u.items[i], "what")),
			k);
	}
	counted_lines(txt, &a, root, "lost", "lost");
	counted_lines(txt, &a, root, "set_aside", "set aside");
	x = ph_json_get(ph_json_get(root, "environment"), "lines");
	fprintf(txt, "environment (every duration below ran under it):\n");
	for (uint32_t i = 0; x && i < x->n; i++)
		fprintf(txt, "  - %s\n", ph_json_strdup(&a, &x->u.items[i]));
	f = ph_json_get(root, "findings");
	for (uint32_t i = 0; f && i < f->n; i++) {
		const struct ph_json *it = &f->u.items[i];
		const struct ph_json *win = ph_json_get(it, "window");
		double from = 0, to = 0;

		ph_json_as_double(ph_json_get(win, "from"), &from);
		ph_json_as_double(ph_json_get(win, "to"), &to);
		fprintf(txt, "%-7s %-10s %-18s %s: %s",
			ph_json_strdup(&a, ph_json_get(it, "severity")),
			ph_json_strdup(&a, ph_json_get(it, "confidence")),
			ph_json_strdup(&a, ph_json_get(it, "question")),
			ph_json_strdup(&a, ph_json_get(it, "title")),
			ph_json_strdup(&a, ph_json_get(it, "detail")));
		if (win)
			fprintf(txt, " [%.3f .. %.3f]\n", from, to);
		else
			fprintf(txt, " [spanning]\n");
		x = ph_json_get(ph_json_get(it, "evidence"), "environment");
		if (win && x)
			fprintf(txt, "        under: %s\n",
				ph_json_strdup(&a, x));
	}
	x = ph_json_get(root, "unanswered");
	for (uint32_t i = 0; x && i < x->n; i++)
		fprintf(txt, "unanswered %s: %s\n",
			ph_json_strdup(&a,
				       ph_json_get(&x->u.items[i], "question")),
			ph_json_strdup(&a,
				       ph_json_get(&x->u.items[i], "reason")));
	x = ph_json_get(root, "skipped");
	for (uint32_t i = 0; x && i < x->n; i++)
		fprintf(txt, "skipped %s: %s\n",
			ph_json_strdup(&a,
				       ph_json_get(&x->u.items[i], "question")),
			ph_json_strdup(&a,
				       ph_json_get(&x->u.items[i], "reason")));
	x = ph_json_get(root, "ruled_out");
	for (uint32_t i = 0; x && i < x->n; i++)
		fprintf(txt, "ruled out (%s): %s\n",
			ph_json_strdup(&a,
				       ph_json_get(&x->u.items[i], "question")),
			ph_json_strdup(&a,
				       ph_json_get(&x->u.items[i], "cause")));
	ph_arena_release(&a);
}

int ph_trace_cmd_ask(const struct ph_trace_ask_opts *o, FILE *txt)
{
	struct ph_detset ds;
	struct ph_trace t;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw w;
	char err[512];
	int load, rc;

	/* parameters are checked before the trace is opened */
	if (ph_detset_prepare(&ds, ph_trace_detectors_dir(o->det.dir),
			      o->det.config, o->det.sets, o->det.nsets, err,
			      sizeof(err))) {
		fprintf(stderr, "porthole trace ask: %s\n", err);
		return 2;
	}
	load = ph_trace_cli_load(&t, o->path);
	if (load == 2) {
		ph_trace_release(&t);
		ph_detset_release(&ds);
		return 2;
	}
	ph_jw_init(&w, &out);
	rc = ph_trace_ask_with(&t, &ds, o->process, o->from, o->to,
			       o->questions, o->nquestions, &w, err,
			       sizeof(err));
	ph_detset_release(&ds);
	if (rc) {
		fprintf(stderr, "porthole trace ask: %s\n", err);
	} else if (ph_jw_finish(&w)) {
		rc = PH_ENOMEM;
	} else if (o->json) {
		fprintf(txt, "%s\n", out.buf);
	} else {
		print_text(out.buf, txt);
	}
	ph_buf_release(&out);
	ph_trace_release(&t);
	return rc ? 2 : load;
}
