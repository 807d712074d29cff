/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_tools.c: `porthole trace mark`, `names` and `calibrate`, the
 * verbs that help set up an analysis rather than run one:
 *
 *   mark       candidate time ranges for a scenario (the start-up, long
 *              top-level slices, stretches the main thread was busy), each
 *              with the analyze arguments that select it;
 *   names      which detectors' name masks (`name_glob`, as _claimed_name
 *              holds them) see which slice names of the process, and the
 *              names no mask sees;
 *   calibrate  what one detector's numeric thresholds would flag: rows at
 *              a quarter, half, once, twice and four times each value.
 *
 * Each loads the trace, the detector set (with the project's overrides)
 * and the process's context tables as analyze does, then reads them.
 * Exit statuses as the other verbs: 0 ok, 1 the trace loaded in part, 2
 * bad arguments or failure.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_cli.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

/* What every verb here opens; released by tool_close. */
struct tool {
	const char *verb;
	FILE *txt; /* where the verb prints */
	struct ph_trace t;
	struct ph_detset ds;
	sqlite3 *db;
	struct ph_tctx c;
	int load; /* ph_trace_cli_load's status */
	bool have_ds, have_t;
};

static void tool_close(struct tool *x)
{
	sqlite3_close(x->db);
	if (x->have_t)
		ph_trace_release(&x->t);
	if (x->have_ds)
		ph_detset_release(&x->ds);
}

/* The set (overrides checked first), the trace, the process's tables: 0,
 * or 2 with the reason printed. */
static int tool_open(struct tool *x, const char *path, const char *process,
		     const char *ddir)
{
	struct ph_tscope scope = PH_TSCOPE_INIT;
	char err[512];

	if (ph_detset_prepare(&x->ds, ph_trace_detectors_dir(ddir), NULL, NULL,
			      0, err, sizeof(err))) {
		fprintf(stderr, "porthole trace %s: %s\n", x->verb, err);
		return 2;
	}
	x->have_ds = true;
	x->load = ph_trace_cli_load(&x->t, path);
	x->have_t = true;
	if (x->load == 2)
		return 2;
	scope.process = process;
	if (ph_trace_sql_open(&x->t, &x->db) ||
	    ph_tctx_open(x->db, &x->t, &scope, &x->c, err, sizeof(err)) ||
	    ph_tctx_claim_names(x->db, &x->ds, err, sizeof(err))) {
		fprintf(stderr, "porthole trace %s: %s\n", x->verb,
			x->db ? err : "cannot open the trace tables");
		return 2;
	}
	return 0;
}

/* Prints the JSON a verb built, or fails on memory. */
static int put_json(struct ph_jw *w, struct ph_buf *out, FILE *txt)
{
	if (ph_jw_finish(w))
		return 2;
	fprintf(txt, "%s\n", out->buf);
	return 0;
}

static const char *col_text(sqlite3_stmt *st, int c)
{
	const char *s = (const char *)sqlite3_column_text(st, c);

	return s ? s : "";
}

/* --- mark ---------------------------------------------------------------- */

/*
 * Candidates, each: kind, label, from, to, the main thread's CPU time in
 * it, and start/end anchor names when slices bound it.  ?1 min_ms, ?2
 * gap_ms: a busy stretch is the main thread's Running time with no pause
 * longer than gap_ms, at least min_ms from first run to last.
 */
static const char mark_sql[] =
	"WITH su AS (SELECT MIN(ts) AS f, MAX(ts + dur_win) AS t FROM "
	"_slice_win WHERE is_main AND name IN ('bindApplication', "
	"'activityStart', 'activityResume', 'Application.onCreate') HAVING "
	"COUNT(*) > 0), "
	"top AS (SELECT name, COUNT(*) AS n, MIN(ts) AS f, MAX(dur_win) AS m "
	"FROM _slice_win WHERE is_main AND depth = 0 GROUP BY name HAVING "
	"MAX(dur_win) >= ?1 * 1e6), "
	"r AS (SELECT ts, ts + dur AS e FROM _tstate_win WHERE is_main AND "
	"state = 'Running' AND dur > 0), "
	"g AS (SELECT ts, e, CASE WHEN ts - MAX(e) OVER (ORDER BY ts ROWS "
	"BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) > ?2 * 1e6 THEN 1 ELSE "
	"0 END AS brk FROM r), "
	"i AS (SELECT ts, e, SUM(brk) OVER (ORDER BY ts ROWS UNBOUNDED "
	"PRECEDING) AS isl FROM g), "
	"busy AS (SELECT MIN(ts) AS f, MAX(e) AS t, SUM(e - ts) AS cpu FROM "
	"i GROUP BY isl HAVING MAX(e) - MIN(ts) >= ?1 * 1e6 ORDER BY cpu "
	"DESC LIMIT 5), "
	"c AS (SELECT 'start-up' AS kind, 'bindApplication to the last "
	"start-up slice' AS label, f, t, 'bindApplication' AS a, (SELECT "
	"name FROM _slice_win WHERE is_main AND name IN ('activityResume', "
	"'activityStart', 'bindApplication') ORDER BY ts + dur_win DESC "
	"LIMIT 1) AS b FROM su WHERE EXISTS (SELECT 1 FROM _slice_win WHERE "
	"is_main AND name = 'bindApplication') "
	"UNION ALL SELECT 'slice', top.name || printf(' (%d, the longest "
	"%.1f ms)', n, m / 1e6), s.ts, s.ts + s.dur_win, top.name, top.name "
	"FROM top JOIN "
	"_slice_win s ON s.name = top.name AND s.ts = top.f AND s.is_main "
	"AND s.depth = 0 "
	"UNION ALL SELECT 'busy', 'main thread busy' || COALESCE(': ' || "
	"(SELECT group_concat(name, ', ') FROM (SELECT name FROM _slice_win "
	"WHERE is_main AND depth = 0 AND ts < busy.t AND ts + dur_win > "
	"busy.f GROUP BY name ORDER BY SUM(dur_win) DESC LIMIT 3)), ''), f, "
	"t, NULL, NULL FROM busy) "
	"SELECT kind, label, f, t, (SELECT COALESCE(SUM(MIN(r.e, c.t) - "
	"MAX(r.ts, c.f)), 0) FROM r WHERE r.ts < c.t AND r.e > c.f) AS cpu, "
	"a, b FROM c ORDER BY f, kind";

int ph_trace_cmd_mark(const struct ph_trace_mark_opts *o, FILE *txt)
{
	struct tool x = { .verb = "mark", .txt = txt };
	bool json = o->json;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw w;
	sqlite3_stmt *st = NULL;
	int rc, n = 0;

	if ((rc = tool_open(&x, o->path, o->process, o->detectors)))
		goto out;
	rc = 2;
	if (sqlite3_prepare_v2(x.db, mark_sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "porthole trace mark: %s\n",
			sqlite3_errmsg(x.db));
		goto out;
	}
	sqlite3_bind_double(st, 1, o->min_ms);
	sqlite3_bind_double(st, 2, o->gap_ms);
	ph_jw_init(&w, &out);
	ph_jw_obj_begin(&w);
	ph_jw_key(&w, "process");
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "name", x.c.pname);
	ph_jw_kv_int(&w, "pid", x.c.pid);
	ph_jw_obj_end(&w);
	ph_jw_key(&w, "candidates");
	ph_jw_arr_begin(&w);
	if (!json)
		fprintf(txt,
			"scenario candidates in %s (pid %" PRId64
			"), ts in trace ns:\n",
			x.c.pname, x.c.pid);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t f = sqlite3_column_int64(st, 2);
		int64_t t = sqlite3_column_int64(st, 3);
		double cpu = sqlite3_column_double(st, 4) / 1e6;
		char args[600];

		/* anchors when two slices bound it, else the times (a
		 * name as its own end anchor would not say which one) */
		if (sqlite3_column_type(st, 5) != SQLITE_NULL &&
		    strcmp(col_text(st, 5), col_text(st, 6)))
			snprintf(args, sizeof(args), "--start '%s' --end '%s'",
				 col_text(st, 5), col_text(st, 6));
		else
			snprintf(args, sizeof(args),
				 "--from %" PRId64 " --to %" PRId64, f, t);
		n++;
		ph_jw_obj_begin(&w);
		ph_jw_kv_str(&w, "kind", col_text(st, 0));
		ph_jw_kv_str(&w, "label", col_text(st, 1));
		ph_jw_kv_int(&w, "from_ns", f);
		ph_jw_kv_int(&w, "to_ns", t);
		ph_jw_kv_double(&w, "dur_ms", (double)(t - f) / 1e6);
		ph_jw_kv_double(&w, "main_cpu_ms", cpu);
		ph_jw_kv_str(&w, "args", args);
		ph_jw_obj_end(&w);
		if (!json)
			fprintf(txt,
				"  %-8s %.1f ms from %" PRId64
				" (main thread on a CPU %.1f ms): %s\n"
				"           %s\n",
				col_text(st, 0), (double)(t - f) / 1e6, f, cpu,
				col_text(st, 1), args);
	}
	ph_jw_arr_end(&w);
	ph_jw_obj_end(&w);
	if (!json && !n)
		fprintf(txt,
			"  none: no top-level slice of %.0f ms or more, and the "
			"main thread was never busy that long\n",
			o->min_ms);
	rc = json ? put_json(&w, &out, txt) : 0;
out:
	sqlite3_finalize(st);
	ph_buf_release(&out);
	tool_close(&x);
	return rc ? rc : x.load;
}

/* --- names --------------------------------------------------------------- */

/* Every mask with the names it sees (name NULL: it sees none). */
static const char names_masks_sql[] =
	"SELECT g.detector, g.glob, s.name, COUNT(s.name), "
	"COALESCE(SUM(s.dur_win), 0) FROM _claimed_name g LEFT JOIN "
	"_slice_win s ON s.name GLOB g.glob GROUP BY g.detector, g.glob, "
	"s.name ORDER BY g.detector, g.glob, SUM(s.dur_win) DESC";
static const char names_unseen_sql[] =
	"SELECT name, COUNT(*), SUM(dur_win) FROM _slice_win s WHERE NOT "
	"EXISTS (SELECT 1 FROM _claimed_name g WHERE s.name GLOB g.glob) "
	"GROUP BY name ORDER BY SUM(dur_win) DESC, name";

static void name_obj(struct ph_jw *w, sqlite3_stmt *st, int c)
{
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "name", col_text(st, c));
	ph_jw_kv_int(w, "count", sqlite3_column_int64(st, c + 1));
	ph_jw_kv_double(w, "total_ms", sqlite3_column_double(st, c + 2) / 1e6);
	ph_jw_obj_end(w);
}

int ph_trace_cmd_names(const struct ph_trace_names_opts *o, FILE *txt)
{
	struct tool x = { .verb = "names", .txt = txt };
	bool json = o->json, open_mask = false;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf last = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw w;
	sqlite3_stmt *st = NULL;
	int rc, n = 0;

	if ((rc = tool_open(&x, o->path, o->process, o->detectors)))
		goto out;
	rc = 2;
	ph_jw_init(&w, &out);
	ph_jw_obj_begin(&w);
	ph_jw_key(&w, "process");
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "name", x.c.pname);
	ph_jw_kv_int(&w, "pid", x.c.pid);
	ph_jw_obj_end(&w);
	if (!json)
		fprintf(txt,
			"slice names of %s (pid %" PRId64
			") each detector's name masks see:\n",
			x.c.pname, x.c.pid);
	ph_jw_key(&w, "masks");
	ph_jw_arr_begin(&w);
	if (sqlite3_prepare_v2(x.db, names_masks_sql, -1, &st, NULL) !=
	    SQLITE_OK)
		goto sqlerr;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *det = col_text(st, 0), *glob = col_text(st, 1);
		bool none = sqlite3_column_type(st, 2) == SQLITE_NULL;

		/* a new mask: "detector\0glob" differs from the last one */
		if (!open_mask || strcmp(last.buf, det) ||
		    strcmp(last.buf + strlen(last.buf) + 1, glob)) {
			if (open_mask) {
				ph_jw_arr_end(&w);
				ph_jw_obj_end(&w);
			}
			ph_buf_reset(&last);
			if (ph_buf_add(&last, det, strlen(det) + 1) ||
			    ph_buf_add(&last, glob, strlen(glob) + 1))
				goto out;
			ph_jw_obj_begin(&w);
			ph_jw_kv_str(&w, "detector", det);
			ph_jw_kv_str(&w, "glob", glob);
			ph_jw_key(&w, "names");
			ph_jw_arr_begin(&w);
			open_mask = true;
			if (!json)
				fprintf(txt, "  %s %s:%s\n", det, glob,
					none ? " sees no slice" : "");
		}
		if (none)
			continue;
		name_obj(&w, st, 2);
		if (!json)
			fprintf(txt, "    %s (%" PRId64 ", %.1f ms)\n",
				col_text(st, 2),
				(int64_t)sqlite3_column_int64(st, 3),
				sqlite3_column_double(st, 4) / 1e6);
	}
	if (open_mask) {
		ph_jw_arr_end(&w);
		ph_jw_obj_end(&w);
	}
	ph_jw_arr_end(&w);
	sqlite3_finalize(st);
	st = NULL;
	ph_jw_key(&w, "unseen");
	ph_jw_arr_begin(&w);
	if (sqlite3_prepare_v2(x.db, names_unseen_sql, -1, &st, NULL) !=
	    SQLITE_OK)
		goto sqlerr;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (!json && !n)
			fprintf(txt, "names no mask sees (by total time):\n");
		n++;
		name_obj(&w, st, 0);
		if (!json)
			fprintf(txt, "  %s (%" PRId64 ", %.1f ms)\n",
				col_text(st, 0),
				(int64_t)sqlite3_column_int64(st, 1),
				sqlite3_column_double(st, 2) / 1e6);
	}
	ph_jw_arr_end(&w);
	ph_jw_obj_end(&w);
	if (!json && !n)
		fprintf(txt, "every slice name is seen by a mask\n");
	rc = json ? put_json(&w, &out, txt) : 0;
	goto out;
sqlerr:
	fprintf(stderr, "porthole trace names: %s\n", sqlite3_errmsg(x.db));
out:
	sqlite3_finalize(st);
	ph_buf_release(&out);
	ph_buf_release(&last);
	tool_close(&x);
	return rc ? rc : x.load;
}

/* --- calibrate ----------------------------------------------------------- */

/* Sums self_ms over the rows as they are read. */
static void sum_self(void *arg, const struct ph_detrun *r, sqlite3_stmt *st)
{
	(void)r;
	for (int c = 0; c < sqlite3_column_count(st); c++)
		if (!strcmp(sqlite3_column_name(st, c), "self_ms"))
			*(double *)arg += sqlite3_column_double(st, c);
}

/* The detector with param set to v: rows into *rows, self ms into *self;
 * 0, or 2 with the reason printed. */
static int run_at(struct tool *x, struct ph_detector *d, const char *param,
		  const char *v, size_t *rows, double *self)
{
	struct ph_detrun r;
	char kv[256], err[512];
	int rc = 0;

	snprintf(kv, sizeof(kv), "%s.%s=%s", d->id, param, v);
	if (ph_detset_set(&x->ds, kv, err, sizeof(err))) {
		fprintf(stderr, "porthole trace calibrate: %s\n", err);
		return 2;
	}
	memset(&r, 0, sizeof(r));
	*self = 0;
	r.d = d;
	r.on_row = sum_self;
	r.arg = self;
	ph_detrun_run(x->db, &r);
	if (!r.ok) {
		fprintf(stderr, "porthole trace calibrate: %s failed: %s\n",
			d->id, r.err);
		rc = 2;
	}
	*rows = r.nrows;
	ph_detrun_release(&r);
	return rc;
}

/* One numeric threshold at five values around its own. */
static int calibrate_param(struct tool *x, struct ph_detector *d,
			   struct ph_param *p, struct ph_jw *w, bool json)
{
	static const double scale[] = { 0.25, 0.5, 1, 2, 4 };
	static const double from_zero[] = { 0, 1, 2, 5, 10 };
	char now[64], v[64];
	double base = strtod(p->value, NULL);
	int rc = 0;

	snprintf(now, sizeof(now), "%s", p->value);
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "param", p->name);
	ph_jw_kv_double(w, "current", base);
	ph_jw_key(w, "values");
	ph_jw_arr_begin(w);
	if (!json)
		fprintf(x->txt, "  %s (now %s):", p->name, now);
	for (size_t i = 0; i < PH_ARRAY_SIZE(scale) && !rc; i++) {
		double val = base ? base * scale[i] : from_zero[i];
		size_t rows = 0;
		double self = 0;

		snprintf(v, sizeof(v), "%.6g", val);
		rc = run_at(x, d, p->name, v, &rows, &self);
		ph_jw_obj_begin(w);
		ph_jw_kv_double(w, "value", val);
		ph_jw_kv_int(w, "rows", (int64_t)rows);
		ph_jw_kv_double(w, "self_ms", self);
		ph_jw_obj_end(w);
		if (!json)
			fprintf(x->txt, "%s %s: %zu row%s (%.1f ms)",
				i ? "," : "", v, rows, rows == 1 ? "" : "s",
				self);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
	if (!json)
		fprintf(x->txt, "\n");
	/* the others vary with this one as it was */
	if (!rc)
		rc = run_at(x, d, p->name, now, &(size_t){ 0 }, &(double){ 0 });
	return rc;
}

int ph_trace_cmd_calibrate(const struct ph_trace_calibrate_opts *o, FILE *txt)
{
	struct tool x = { .verb = "calibrate", .txt = txt };
	const char *id = o->detector, *only = o->param;
	bool json = o->json;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw w;
	struct ph_detector *d = NULL;
	size_t n = 0;
	int rc;

	if ((rc = tool_open(&x, o->path, o->process, o->detectors)))
		goto out;
	rc = 2;
	for (size_t i = 0; i < x.ds.n && !d; i++)
		if (!strcmp(x.ds.d[i].id, id))
			d = &x.ds.d[i];
	if (!d) {
		fprintf(stderr, "porthole trace calibrate: no detector '%s'\n",
			id);
		goto out;
	}
	ph_jw_init(&w, &out);
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "detector", d->id);
	ph_jw_key(&w, "process");
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "name", x.c.pname);
	ph_jw_kv_int(&w, "pid", x.c.pid);
	ph_jw_obj_end(&w);
	ph_jw_key(&w, "params");
	ph_jw_arr_begin(&w);
	if (!json)
		fprintf(txt,
			"%s on %s (pid %" PRId64
			"): rows (and their self time) at each value of a "
			"threshold, the others as they are\n",
			d->id, x.c.pname, x.c.pid);
	rc = 0;
	for (size_t i = 0; i < d->nparams && !rc; i++) {
		if (d->params[i].type != PH_PARAM_NUMBER ||
		    (only && strcmp(only, d->params[i].name)))
			continue;
		n++;
		rc = calibrate_param(&x, d, &d->params[i], &w, json);
	}
	ph_jw_arr_end(&w);
	ph_jw_obj_end(&w);
	if (rc)
		goto out;
	if (!n) {
		fprintf(stderr,
			"porthole trace calibrate: %s has no numeric "
			"parameter%s%s\n",
			d->id, only ? " named " : "", only ? only : "");
		rc = 2;
		goto out;
	}
	rc = json ? put_json(&w, &out, txt) : 0;
out:
	ph_buf_release(&out);
	tool_close(&x);
	return rc ? rc : x.load;
}
