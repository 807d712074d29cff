/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_analyze.c: `porthole trace analyze`: runs the detector set over
 * one or more traces of one scenario and writes report.md and
 * report.json.  The phases (scenario, context) are in trace_run.c; this
 * file adds the report and the merge of repeats; the environment phase is
 * trace_env.c.
 *
 * Repeats: `analyze A B C` runs each trace on its own (one trace in
 * memory at a time) and folds the rows of each detector on its identity
 * columns, numbers by their median over the repeats that had the row
 * (trace_merge.c); the environment and scenario shown are the first
 * trace's.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_cli.h"
#include "trace/trace_detect.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

#include <sys/stat.h>

struct one {
	const char *path;
	int load;
	struct ph_tctx c;
	struct ph_detrun *runs; /* one per detector of the set */
	double coverage_ms;
	char format[32], clock[64]; /* copies: the trace is freed first */
	char err[320];
};

/* Copies every member of the object in js into the object being written. */
static void copy_members(struct ph_jw *w, const char *js)
{
	struct ph_arena a;
	struct ph_json *root;

	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	if (js && !ph_json_parse(&a, js, strlen(js), &root, NULL) &&
	    root->type == PH_JSON_OBJECT) {
		for (uint32_t i = 0; i < root->n; i++) {
			ph_jw_keyn(w, root->u.members[i].key.u.s,
				   root->u.members[i].key.n);
			ph_jw_value(w, &root->u.members[i].value);
		}
	}
	ph_arena_release(&a);
}

/* One detector over the repeats: rows (merged when n > 1) into w. */
static size_t detector_json(struct ph_jw *w, const struct ph_detector *d,
			    struct one *reps, size_t n, size_t i,
			    double window_ns, double *covered_ms)
{
	size_t rows = 0, nok = 0;
	const char *err = NULL;
	double cov[64];

	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "id", d->id);
	ph_jw_kv_str(w, "title", d->title);
	ph_jw_kv_str(w, "identity", d->identity);
	for (size_t k = 0; k < n; k++) {
		if (reps[k].runs[i].ok)
			cov[nok++] = reps[k].runs[i].covered_ms;
		else if (!err)
			err = reps[k].runs[i].err;
	}
	ph_jw_kv_bool(w, "ok", !err);
	*covered_ms = ph_trace_median(cov, nok);
	if (err) {
		ph_jw_kv_str(w, "error", err);
	} else if (n == 1) {
		rows = reps[0].runs[i].nrows;
		ph_jw_kv_int(w, "row_count", (int64_t)rows);
		ph_jw_kv_double(w, "covered_ms", *covered_ms);
		ph_jw_kv_double(w, "coverage", *covered_ms * 1e6 / window_ns);
		ph_jw_key(w, "rows");
		ph_jw_raw(w, reps[0].runs[i].rows.buf,
			  reps[0].runs[i].rows.len);
	} else {
		const char *arrays[64];

		for (size_t k = 0; k < n; k++)
			arrays[k] = reps[k].runs[i].rows.buf;
		ph_jw_kv_double(w, "covered_ms", *covered_ms);
		ph_jw_kv_double(w, "coverage", *covered_ms * 1e6 / window_ns);
		ph_jw_key(w, "rows");
		rows = ph_trace_rows_fold(w, arrays, n, d->identity);
		ph_jw_kv_int(w, "row_count", (int64_t)rows);
	}
	ph_jw_obj_end(w);
	return rows;
}

/* The slice names of the window on the process's threads: the markers. */
static void markers(sqlite3 *db, struct ph_jw *w)
{
	sqlite3_stmt *st;

	ph_jw_key(w, "markers");
	ph_jw_arr_begin(w);
	if (sqlite3_prepare_v2(
		    db,
		    "SELECT name, COUNT(*), ROUND(SUM(dur_win) / 1e6, 3), "
		    "ROUND(MAX(dur_win) / 1e6, 3), SUM(is_main) FROM _slice_win "
		    "GROUP BY name ORDER BY SUM(dur_win) DESC LIMIT 50",
		    -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			ph_jw_obj_begin(w);
			ph_jw_kv_str(w, "name",
				     (const char *)sqlite3_column_text(st, 0));
			ph_jw_kv_int(w, "count", sqlite3_column_int64(st, 1));
			ph_jw_kv_double(w, "total_ms",
					sqlite3_column_double(st, 2));
			ph_jw_kv_double(w, "max_ms",
					sqlite3_column_double(st, 3));
			ph_jw_kv_int(w, "on_main_thread",
				     sqlite3_column_int64(st, 4));
			ph_jw_obj_end(w);
		}
		sqlite3_finalize(st);
	}
	ph_jw_arr_end(w);
}

/* The union of every detector's stretches, in ns. */
static int64_t covered_all(sqlite3 *db)
{
	return ph_tsql_int(
		db,
		"WITH o AS (SELECT s, e, MAX(e) OVER (ORDER BY s ROWS BETWEEN "
		"UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe FROM _cover WHERE "
		"e > s) SELECT COALESCE(SUM(CASE WHEN pe IS NULL OR pe <= s "
		"THEN e - s WHEN pe >= e THEN 0 ELSE e - pe END), 0) FROM o",
		0);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double ph_trace_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int write_report(const char *out, const struct ph_detset *ds,
			struct one *reps, size_t n, const char *env_js,
			const char *env_md, FILE *f)
{
	struct ph_buf js = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf md = PH_BUF_INIT(PH_BUF_NO_CAP);
	const struct ph_tctx *c = &reps[0].c;
	double window_ns = (double)(c->to - c->from);
	size_t fired = 0, total = 0, *nrows;
	double *cov, cover_all[64];
	struct ph_jw w;
	char p[4096];
	int rc = 0, status = 0;
	bool partial = false;

	nrows = calloc(ds->n ? ds->n : 1, sizeof(*nrows));
	cov = calloc(ds->n ? ds->n : 1, sizeof(*cov));
	if (!nrows || !cov) {
		free(nrows);
		free(cov);
		return 2;
	}
	for (size_t k = 0; k < n; k++) {
		cover_all[k] = reps[k].coverage_ms;
		partial |= reps[k].load != 0;
	}
	ph_jw_init(&w, &js);
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "trace", reps[0].path);
	ph_jw_key(&w, "traces");
	ph_jw_arr_begin(&w);
	for (size_t k = 0; k < n; k++)
		ph_jw_str(&w, reps[k].path);
	ph_jw_arr_end(&w);
	ph_jw_kv_int(&w, "repeats", (int64_t)n);
	ph_jw_kv_str(&w, "format", reps[0].format);
	ph_jw_kv_str(&w, "clock", reps[0].clock);
	ph_jw_kv_bool(&w, "complete", !partial);
	ph_jw_key(&w, "process");
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "name", c->pname);
	ph_jw_kv_int(&w, "pid", c->pid);
	ph_jw_obj_end(&w);
	ph_jw_key(&w, "window");
	ph_jw_obj_begin(&w);
	ph_jw_kv_int(&w, "from", c->from);
	ph_jw_kv_int(&w, "to", c->to);
	ph_jw_kv_str(&w, "source", c->source);
	ph_jw_kv_bool(&w, "end_unclosed", c->end_unclosed);
	if (c->note[0])
		ph_jw_kv_str(&w, "note", c->note);
	ph_jw_obj_end(&w);
	copy_members(&w, env_js);
	ph_jw_key(&w, "context_warnings");
	ph_jw_arr_begin(&w);
	for (size_t k = 0; k < n; k++) {
		if (reps[k].c.cpu_err[0])
			ph_jw_str(&w, reps[k].c.cpu_err);
		if (reps[k].c.env_err[0])
			ph_jw_str(&w, reps[k].c.env_err);
	}
	ph_jw_arr_end(&w);
	ph_jw_key(&w, "detectors");
	ph_jw_arr_begin(&w);
	for (size_t i = 0; i < ds->n; i++) {
		if (ds->d[i].question)
			continue;
		total++;
		nrows[i] = detector_json(&w, &ds->d[i], reps, n, i, window_ns,
					 &cov[i]);
		fired += nrows[i] > 0;
	}
	ph_jw_arr_end(&w);
	ph_jw_kv_int(&w, "detectors_total", (int64_t)total);
	ph_jw_kv_int(&w, "detectors_fired", (int64_t)fired);
	ph_jw_kv_double(&w, "covered_ms", ph_trace_median(cover_all, n));
	ph_jw_kv_double(&w, "coverage",
			ph_trace_median(cover_all, n) * 1e6 / window_ns);
	ph_jw_key(&w, "silent");
	ph_jw_arr_begin(&w);
	for (size_t i = 0; i < ds->n; i++)
		if (!ds->d[i].question && !nrows[i])
			ph_jw_str(&w, ds->d[i].id);
	ph_jw_arr_end(&w);
	ph_jw_obj_end(&w);

	rc |= ph_buf_addf(&md, "# Trace report\n\n");
	for (size_t k = 0; k < n; k++)
		rc |= ph_buf_addf(&md, "- trace: %s (%s)%s%s\n", reps[k].path,
				  reps[k].format,
				  reps[k].load ? ": loaded in part, " : "",
				  reps[k].err);
	if (n > 1)
		rc |= ph_buf_addf(&md,
				  "- repeats: %zu, rows folded on identity, "
				  "numbers are medians\n",
				  n);
	rc |= ph_buf_addf(&md, "- clock: %s; every time below is on it\n",
			  reps[0].clock);
	rc |= ph_buf_addf(&md, "- process: %s (pid %" PRId64 ")\n", c->pname,
			  c->pid);
	rc |= ph_buf_addf(&md,
			  "- window: %" PRId64 " .. %" PRId64
			  " ns (%.1f ms), %s\n",
			  c->from, c->to, window_ns / 1e6, c->source);
	if (c->note[0])
		rc |= ph_buf_addf(&md, "- note: %s\n", c->note);
	for (size_t k = 0; k < n; k++) {
		if (reps[k].c.cpu_err[0])
			rc |= ph_buf_addf(&md, "- warning: %s\n",
					  reps[k].c.cpu_err);
		if (reps[k].c.env_err[0])
			rc |= ph_buf_addf(&md, "- warning: %s\n",
					  reps[k].c.env_err);
	}
	rc |= ph_buf_addf(&md,
			  "- detectors fired: %zu of %zu; findings cover "
			  "%.1f ms of the window (%.1f%%)\n",
			  fired, total, ph_trace_median(cover_all, n),
			  100 * ph_trace_median(cover_all, n) * 1e6 /
				  window_ns);
	rc |= ph_buf_addf(&md, "\n## Environment\n\n%s", env_md);
	rc |= ph_buf_addstr(&md, "\n## Findings\n");
	for (size_t i = 0; i < ds->n; i++) {
		const struct ph_detector *d = &ds->d[i];

		if (d->question || !nrows[i])
			continue;
		rc |= ph_buf_addf(&md,
				  "\n### %s (%s)\n\n%s\n\n%zu row(s), "
				  "covering %.1f ms of the window. Rows: see "
				  "report.json.\n",
				  d->title, d->id, d->why ? d->why : "",
				  nrows[i], cov[i]);
	}
	rc |= ph_buf_addstr(&md, "\n## Silent detectors\n\n");
	for (size_t i = 0; i < ds->n; i++) {
		const char *e = NULL;

		if (ds->d[i].question || nrows[i])
			continue;
		for (size_t k = 0; k < n && !e; k++)
			if (!reps[k].runs[i].ok)
				e = reps[k].runs[i].err;
		if (e)
			rc |= ph_buf_addf(&md, "- %s: FAILED: %s\n",
					  ds->d[i].id, e);
		else
			rc |= ph_buf_addf(&md, "- %s: looked, found nothing\n",
					  ds->d[i].id);
	}
	if (rc || ph_jw_finish(&w) || ph_buf_addch(&js, '\n')) {
		status = 2;
		goto out;
	}
	if (mkdir(out, 0777) && errno != EEXIST) {
		ph_warn("mkdir %s: %s", out, strerror(errno));
		status = 2;
		goto out;
	}
	snprintf(p, sizeof(p), "%s/report.md", out);
	if (ph_trace_write_file(p, md.buf, md.len))
		status = 2;
	snprintf(p, sizeof(p), "%s/report.json", out);
	if (ph_trace_write_file(p, js.buf, js.len))
		status = 2;
	if (!status)
		fprintf(f,
			"%s/report.md: %s (pid %" PRId64 "), %zu of %zu "
			"detectors fired\n",
			out, c->pname, c->pid, fired, total);
out:
	free(nrows);
	free(cov);
	ph_buf_release(&js);
	ph_buf_release(&md);
	return status ? status : partial ? 1 : 0;
}

int ph_trace_cmd_analyze(const struct ph_trace_analyze_opts *opt, FILE *f)
{
	const char *const *paths = opt->paths;
	int npaths = (int)opt->npaths, status = 0;
	struct ph_detset ds;
	char err[512];
	struct one *reps = NULL;
	struct ph_buf env_js = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf markers_js = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf env_md = PH_BUF_INIT(PH_BUF_NO_CAP);
	size_t ndet = 0;

	/* parameters are checked before any trace is opened */
	if (ph_detset_prepare(&ds, ph_trace_detectors_dir(opt->det.dir),
			      opt->det.config, opt->det.sets, opt->det.nsets,
			      err, sizeof(err))) {
		fprintf(stderr, "porthole trace analyze: %s\n", err);
		return 2;
	}
	ndet = ds.n;
	reps = calloc((size_t)npaths, sizeof(*reps));
	if (!reps) {
		ph_detset_release(&ds);
		return 2;
	}
	for (int k = 0; k < npaths; k++) {
		struct one *o = &reps[k];
		struct ph_trace t;
		sqlite3 *db = NULL;

		o->path = paths[k];
		o->load = ph_trace_cli_load(&t, o->path);
		if (o->load == 2 || ph_trace_sql_open(&t, &db)) {
			ph_trace_release(&t);
			status = 2;
			goto done;
		}
		snprintf(o->format, sizeof(o->format), "%s", t.format);
		snprintf(o->clock, sizeof(o->clock), "%s", t.clock_name);
		if (o->load)
			snprintf(o->err, sizeof(o->err),
				 "stopped at byte %" PRIu64 ": %s",
				 t.err.offset, t.err.msg);
		if (ph_tctx_open(db, &t, &opt->scope, &o->c, err,
				 sizeof(err)) ||
		    ph_tctx_claim_names(db, &ds, err, sizeof(err))) {
			fprintf(stderr, "porthole trace analyze: %s: %s\n",
				o->path, err);
			sqlite3_close(db);
			ph_trace_release(&t);
			status = 2;
			goto done;
		}
		o->runs = calloc(ndet ? ndet : 1, sizeof(*o->runs));
		if (!o->runs) {
			sqlite3_close(db);
			ph_trace_release(&t);
			status = 2;
			goto done;
		}
		for (size_t i = 0; i < ndet; i++) {
			o->runs[i].d = &ds.d[i];
			if (ds.d[i].question)
				continue; /* the MCP questions: trace ask */
			ph_detrun_run(db, &o->runs[i]);
			if (!o->runs[i].ok)
				ph_warn("%s: detector %s failed: %s", o->path,
					ds.d[i].id, o->runs[i].err);
		}
		o->coverage_ms = (double)covered_all(db) / 1e6;
		if (k == 0) {
			struct ph_jw w;

			ph_jw_init(&w, &env_js);
			ph_jw_obj_begin(&w);
			ph_trace_env_phase(db, &w, &env_md, NULL);
			markers(db, &w);
			ph_jw_obj_end(&w);
			if (ph_jw_finish(&w))
				status = 2;
		}
		sqlite3_close(db);
		ph_trace_release(&t);
	}
	status = write_report(opt->out, &ds, reps, (size_t)npaths, env_js.buf,
			      env_md.len ? env_md.buf : "", f);
done:
	for (int k = 0; k < npaths; k++) {
		for (size_t i = 0; reps[k].runs && i < ndet; i++)
			ph_detrun_release(&reps[k].runs[i]);
		free(reps[k].runs);
	}
	free(reps);
	ph_buf_release(&env_js);
	ph_buf_release(&env_md);
	ph_buf_release(&markers_js);
	ph_detset_release(&ds);
	return status;
}
