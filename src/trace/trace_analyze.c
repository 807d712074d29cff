/*
 * trace_analyze.c: `porthole trace analyze`: the context phases and the
 * detector runner, and report.md / report.json.
 *
 * Phases:
 *  1. scenario: the process (--process NAME, else the one whose threads ran
 *     longest) and the window (--from/--to, else the process's life inside
 *     the trace);
 *  2. context: temp tables built on literal window numbers, dropped and
 *     rebuilt on every run so a session can analyse twice:
 *     _proc, _window, _threads, _slice_win (dur_win clipped, unfinished),
 *     _aslice_win (async, kept apart), _tstate_win (clipped), _child_sum,
 *     _cpu_in_slice (Running time inside each main-thread slice);
 *  3. environment: CPU frequency and available memory over the window,
 *     stated in the report beside every duration;
 *  4. detectors, each on its own: a failure is reported and the rest run.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_cli.h"
#include "trace/trace_detect.h"
#include "trace/trace_sql.h"

#include <sys/stat.h>
#include <unistd.h>

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

struct ctx {
	int64_t upid, pid, from, to;
	char pname[256];
	bool window_given;
};

static int exec_sql(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *e = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK) {
		snprintf(err, errlen, "%s", e ? e : sqlite3_errmsg(db));
		sqlite3_free(e);
		return PH_EINVAL;
	}
	return 0;
}

static int64_t one_int(sqlite3 *db, const char *sql, int64_t dflt)
{
	sqlite3_stmt *st;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return dflt;
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int pick_process(sqlite3 *db, struct ph_trace *t, const char *name,
			struct ctx *c)
{
	sqlite3_stmt *st;
	const char *sql =
		name ? "SELECT p.upid, p.pid, p.name FROM process p "
		       "LEFT JOIN thread th USING (upid) "
		       "LEFT JOIN sched s ON s.utid = th.utid "
		       "WHERE p.name = ?1 OR p.name LIKE '%' || ?1 || '%' "
		       "GROUP BY p.upid ORDER BY (p.name = ?1) DESC, "
		       "SUM(s.dur) DESC LIMIT 1" :
		       "SELECT p.upid, p.pid, p.name FROM sched s "
		       "JOIN thread th USING (utid) JOIN process p USING "
		       "(upid) WHERE p.pid > 0 AND s.dur > 0 "
		       "GROUP BY p.upid ORDER BY SUM(s.dur) DESC LIMIT 1";
	int rc = PH_ENOENT;

	(void)t;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return PH_EINVAL;
	if (name)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(st, 2);

		c->upid = sqlite3_column_int64(st, 0);
		c->pid = sqlite3_column_int64(st, 1);
		snprintf(c->pname, sizeof(c->pname), "%s", n ? n : "?");
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The context tables, on literal numbers; see the file comment. */
static int build_context(sqlite3 *db, const struct ctx *c, char *err,
			 size_t errlen)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	int rc;
	static const char *const drops[] = {
		"_proc",      "_window",       "_threads",
		"_slice_win", "_aslice_win",   "_tstate_win",
		"_child_sum", "_cpu_in_slice", "_claimed_name",
	};

	for (size_t i = 0; i < PH_ARRAY_SIZE(drops); i++)
		if (ph_buf_addf(&b, "DROP TABLE IF EXISTS temp.%s;", drops[i]))
			goto nomem;
	if (ph_buf_addf(
		    &b,
		    "CREATE TEMP TABLE _proc AS SELECT upid, pid, name FROM "
		    "process WHERE upid = %" PRId64 ";"
		    "CREATE TEMP TABLE _window AS SELECT %" PRId64
		    " AS ts, %" PRId64 " AS dur, %" PRId64 " AS end_ts;"
		    "CREATE TEMP TABLE _threads AS SELECT utid, tid, name, "
		    "(tid = %" PRId64 ") AS is_main FROM thread WHERE upid = "
		    "%" PRId64 ";",
		    c->upid, c->from, c->to - c->from, c->to, c->pid, c->upid))
		goto nomem;
	/* slices on the process's thread tracks, clipped to the window */
	if (ph_buf_addf(
		    &b,
		    "CREATE TEMP TABLE _slice_win AS SELECT s.id, s.ts, "
		    "CASE WHEN s.dur < 0 THEN %" PRId64
		    " - s.ts ELSE s.dur END "
		    "AS dur, MIN(%" PRId64 ", CASE WHEN s.dur < 0 THEN %" PRId64
		    " ELSE s.ts + s.dur END) - MAX(%" PRId64 ", s.ts) AS "
		    "dur_win, s.dur < 0 AS unfinished, s.name, s.category, "
		    "s.depth, s.parent_id, s.track_id, th.utid, th.tid, "
		    "th.is_main, th.name AS thread_name FROM slice s JOIN "
		    "thread_track tt ON s.track_id = tt.id JOIN _threads th ON "
		    "th.utid = tt.utid WHERE s.ts < %" PRId64
		    " AND (s.dur < 0 OR s.ts + s.dur > %" PRId64 ");"
		    "CREATE INDEX temp._slice_win_id ON _slice_win(id);"
		    "CREATE INDEX temp._slice_win_p ON _slice_win(parent_id);",
		    c->to, c->to, c->to, c->from, c->to, c->from))
		goto nomem;
	if (ph_buf_addf(
		    &b,
		    "CREATE TEMP TABLE _aslice_win AS SELECT s.id, s.ts, "
		    "CASE WHEN s.dur < 0 THEN %" PRId64
		    " - s.ts ELSE s.dur END "
		    "AS dur, s.dur < 0 AS unfinished, s.name, s.track_id FROM "
		    "slice s JOIN process_track pt ON s.track_id = pt.id WHERE "
		    "pt.upid = %" PRId64 " AND s.ts < %" PRId64
		    " AND (s.dur < 0 OR s.ts + s.dur > %" PRId64 ");",
		    c->to, c->upid, c->to, c->from))
		goto nomem;
	if (ph_buf_addf(
		    &b,
		    "CREATE TEMP TABLE _tstate_win AS SELECT ts.id, "
		    "MAX(ts.ts, %" PRId64 ") AS ts, MIN(%" PRId64
		    ", CASE WHEN ts.dur < 0 THEN %" PRId64
		    " ELSE ts.ts + ts.dur END) - MAX(ts.ts, %" PRId64
		    ") AS dur, ts.state, ts.io_wait, ts.blocked_function, "
		    "ts.waker_utid, ts.cpu, th.utid, th.tid, th.is_main, "
		    "th.name AS thread_name FROM thread_state ts JOIN _threads "
		    "th USING (utid) WHERE ts.ts < %" PRId64
		    " AND (ts.dur < 0 OR ts.ts + ts.dur > %" PRId64 ");"
		    "CREATE INDEX temp._tstate_win_u ON _tstate_win(utid, ts);",
		    c->from, c->to, c->to, c->from, c->to, c->from))
		goto nomem;
	if (ph_buf_addstr(
		    &b,
		    "CREATE TEMP TABLE _child_sum AS SELECT parent_id AS id, "
		    "SUM(dur_win) AS child_dur FROM _slice_win WHERE parent_id "
		    "IS NOT NULL GROUP BY parent_id;"
		    "CREATE INDEX temp._child_sum_id ON _child_sum(id);"
		    /* Running time inside each main-thread slice of depth <= 1:
		     * thread_state rows of one thread never overlap, so the
		     * sum of overlaps is the time on CPU */
		    "CREATE TEMP TABLE _cpu_in_slice AS SELECT s.id, "
		    "SUM(MAX(0, MIN(s.ts + s.dur_win, t.ts + t.dur) - "
		    "MAX(s.ts, t.ts))) AS cpu_dur FROM _slice_win s JOIN "
		    "_tstate_win t ON t.utid = s.utid AND t.ts < s.ts + "
		    "s.dur_win AND t.ts + t.dur > s.ts WHERE s.is_main AND "
		    "s.depth <= 1 AND t.state = 'Running' GROUP BY s.id;"
		    "CREATE TEMP TABLE _claimed_name AS SELECT DISTINCT name "
		    "FROM _slice_win;"))
		goto nomem;
	rc = exec_sql(db, b.buf, err, errlen);
	ph_buf_release(&b);
	return rc;
nomem:
	ph_buf_release(&b);
	snprintf(err, errlen, "out of memory");
	return PH_ENOMEM;
}

struct run {
	const struct ph_detector *d;
	bool ok;
	char err[512];
	size_t nrows;
	double covered_ms;
	struct ph_buf rows; /* JSON array text */
};

static void json_col(struct ph_jw *w, sqlite3_stmt *st, int c)
{
	switch (sqlite3_column_type(st, c)) {
	case SQLITE_INTEGER: ph_jw_int(w, sqlite3_column_int64(st, c)); break;
	case SQLITE_FLOAT: ph_jw_double(w, sqlite3_column_double(st, c)); break;
	case SQLITE_NULL: ph_jw_null(w); break;
	default: ph_jw_str(w, (const char *)sqlite3_column_text(st, c));
	}
}

static const char *const contract[] = { "location", "count",  "self_ms",
					"total_ms", "max_ms", "covered_ms",
					"detail" };

static void run_detector(sqlite3 *db, struct run *r)
{
	const struct ph_detector *d = r->d;
	struct ph_buf sql = PH_BUF_INIT(1 << 20);
	struct ph_jw w;
	sqlite3_stmt *st = NULL;
	int rc, ncol;

	r->rows = (struct ph_buf)PH_BUF_INIT(PH_BUF_NO_CAP);
	r->ok = false;
	if (ph_detector_render(d, d->sql, &sql))
		goto out;
	exec_sql(db, "DROP TABLE IF EXISTS temp._rows;", r->err,
		 sizeof(r->err));
	{
		struct ph_buf cr = PH_BUF_INIT(PH_BUF_NO_CAP);

		/* the rows go into _rows first, for @intervals */
		if (ph_buf_addf(&cr, "CREATE TEMP TABLE _rows AS %s",
				sql.buf)) {
			ph_buf_release(&cr);
			goto out;
		}
		while (cr.len &&
		       (cr.buf[cr.len - 1] == '\n' ||
			cr.buf[cr.len - 1] == ';' || cr.buf[cr.len - 1] == ' '))
			ph_buf_setlen(&cr, cr.len - 1);
		rc = exec_sql(db, cr.buf, r->err, sizeof(r->err));
		ph_buf_release(&cr);
		if (rc)
			goto out;
	}
	if (sqlite3_prepare_v2(db, "SELECT * FROM _rows", -1, &st, NULL) !=
	    SQLITE_OK) {
		snprintf(r->err, sizeof(r->err), "%s", sqlite3_errmsg(db));
		goto out;
	}
	ncol = sqlite3_column_count(st);
	for (size_t k = 0; k < PH_ARRAY_SIZE(contract); k++) {
		bool found = false;

		for (int c = 0; c < ncol; c++)
			found |= !strcmp(sqlite3_column_name(st, c),
					 contract[k]);
		if (!found) {
			snprintf(r->err, sizeof(r->err),
				 "rows lack the column '%s'", contract[k]);
			goto out;
		}
	}
	ph_jw_init(&w, &r->rows);
	ph_jw_arr_begin(&w);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ph_jw_obj_begin(&w);
		for (int c = 0; c < ncol; c++) {
			ph_jw_key(&w, sqlite3_column_name(st, c));
			json_col(&w, st, c);
		}
		ph_jw_obj_end(&w);
		r->nrows++;
	}
	ph_jw_arr_end(&w);
	if (ph_jw_finish(&w) || rc != SQLITE_DONE) {
		snprintf(r->err, sizeof(r->err), "%s", sqlite3_errmsg(db));
		goto out;
	}
	if (d->intervals && r->nrows) {
		struct ph_buf iv = PH_BUF_INIT(1 << 20);
		struct ph_buf q = PH_BUF_INIT(1 << 20);

		/* the union of the stretches, clipped to the window */
		if (!ph_detector_render(d, d->intervals, &iv)) {
			while (iv.len && (iv.buf[iv.len - 1] == '\n' ||
					  iv.buf[iv.len - 1] == ';' ||
					  iv.buf[iv.len - 1] == ' '))
				ph_buf_setlen(&iv, iv.len - 1);
			if (!ph_buf_addf(
				    &q,
				    "WITH iv AS (SELECT MAX(ts, (SELECT ts FROM "
				    "_window)) AS s, MIN(ts + dur, (SELECT "
				    "end_ts FROM _window)) AS e FROM (%s)), "
				    "o AS (SELECT s, e, MAX(e) OVER (ORDER BY "
				    "s ROWS BETWEEN UNBOUNDED PRECEDING AND 1 "
				    "PRECEDING) AS pe FROM iv WHERE e > s) "
				    "SELECT SUM(CASE WHEN pe IS NULL OR pe <= s "
				    "THEN e - s WHEN pe >= e THEN 0 ELSE e - pe "
				    "END) FROM o",
				    iv.buf)) {
				int64_t ns = one_int(db, q.buf, -1);

				if (ns >= 0)
					r->covered_ms = (double)ns / 1e6;
			}
		}
		ph_buf_release(&iv);
		ph_buf_release(&q);
	}
	r->ok = true;
out:
	if (!r->ok && !r->err[0])
		snprintf(r->err, sizeof(r->err), "out of memory");
	sqlite3_finalize(st);
	ph_buf_release(&sql);
}

static void env_phase(sqlite3 *db, struct ph_jw *w, FILE *md)
{
	sqlite3_stmt *st;
	const char *sql =
		"SELECT t.cpu, AVG(c.value), MIN(c.value), MAX(c.value) FROM "
		"counter c JOIN cpu_counter_track t ON c.track_id = t.id WHERE "
		"t.name = 'cpufreq' AND c.ts BETWEEN (SELECT ts FROM _window) "
		"AND (SELECT end_ts FROM _window) GROUP BY t.cpu ORDER BY t.cpu";

	ph_jw_key(w, "environment");
	ph_jw_obj_begin(w);
	ph_jw_key(w, "cpufreq_khz");
	ph_jw_arr_begin(w);
	fprintf(md, "\n## Environment\n\n");
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		bool any = false;

		while (sqlite3_step(st) == SQLITE_ROW) {
			ph_jw_obj_begin(w);
			ph_jw_kv_int(w, "cpu", sqlite3_column_int64(st, 0));
			ph_jw_kv_double(w, "avg", sqlite3_column_double(st, 1));
			ph_jw_kv_double(w, "min", sqlite3_column_double(st, 2));
			ph_jw_kv_double(w, "max", sqlite3_column_double(st, 3));
			ph_jw_obj_end(w);
			fprintf(md,
				"- cpu %lld: %.0f kHz average (%.0f..%.0f)\n",
				sqlite3_column_int64(st, 0),
				sqlite3_column_double(st, 1),
				sqlite3_column_double(st, 2),
				sqlite3_column_double(st, 3));
			any = true;
		}
		if (!any)
			fprintf(md, "- CPU frequency: not in the trace\n");
		sqlite3_finalize(st);
	}
	ph_jw_arr_end(w);
	{
		int64_t mem = one_int(
			db,
			"SELECT MIN(c.value) FROM counter c JOIN track t ON "
			"c.track_id = t.id WHERE t.name = 'mem.available'",
			-1);

		ph_jw_kv_int(w, "mem_available_min_bytes", mem);
		if (mem >= 0)
			fprintf(md, "- memory available: at least %.0f MB\n",
				(double)mem / 1e6);
		else
			fprintf(md, "- memory: not in the trace\n");
	}
	fprintf(md, "- thermal: not read by this version\n");
	ph_jw_obj_end(w);
}

static const char *detectors_dir(const char *given)
{
	static char buf[4200];
	struct stat st;
	char exe[4000];
	ssize_t n;

	if (given)
		return given;
	if (!stat("detectors", &st) && S_ISDIR(st.st_mode))
		return "detectors";
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		snprintf(buf, sizeof(buf), "%s/../../detectors", exe);
		if (!stat(buf, &st) && S_ISDIR(st.st_mode))
			return buf;
	}
	return "detectors";
}

int ph_trace_cli_analyze(int argc, char **argv)
{
	const char *path = NULL, *pname = NULL, *out = "trace-report",
		   *ddir = NULL;
	const char *sets[64];
	int nsets = 0, status = 0, load;
	struct ctx c = { 0 };
	struct ph_detset ds;
	struct ph_trace t;
	sqlite3 *db = NULL;
	char err[512];
	struct run *runs = NULL;
	int64_t from = PH_NULL_I64, to = PH_NULL_I64;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;

		if (!strcmp(a, "--process") && more)
			pname = argv[++i];
		else if (!strcmp(a, "--from") && more)
			from = strtoll(argv[++i], NULL, 10);
		else if (!strcmp(a, "--to") && more)
			to = strtoll(argv[++i], NULL, 10);
		else if (!strcmp(a, "--set") && more && nsets < 64)
			sets[nsets++] = argv[++i];
		else if (!strcmp(a, "--out") && more)
			out = argv[++i];
		else if (!strcmp(a, "--detectors") && more)
			ddir = argv[++i];
		else if (a[0] != '-' && !path)
			path = a;
		else {
			fprintf(stderr,
				"porthole trace analyze: unexpected '%s'\n", a);
			return 2;
		}
	}
	if (!path) {
		fprintf(stderr, "usage: porthole trace analyze TRACE "
				"[--process NAME] [--from NS --to NS] "
				"[--set k=v] [--out DIR]\n");
		return 2;
	}
	/* parameters are checked before the trace is opened */
	if (ph_detset_load(&ds, detectors_dir(ddir))) {
		ph_detset_release(&ds);
		return 2;
	}
	if (ph_detset_load_config(&ds, "porthole-trace.yml", err,
				  sizeof(err))) {
		fprintf(stderr, "porthole trace analyze: %s\n", err);
		ph_detset_release(&ds);
		return 2;
	}
	for (int i = 0; i < nsets; i++) {
		if (ph_detset_set(&ds, sets[i], err, sizeof(err))) {
			fprintf(stderr, "porthole trace analyze: %s\n", err);
			ph_detset_release(&ds);
			return 2;
		}
	}
	load = ph_trace_cli_load(&t, path);
	if (load == 2 || ph_trace_sql_open(&t, &db)) {
		ph_trace_release(&t);
		ph_detset_release(&ds);
		return 2;
	}
	if (pick_process(db, &t, pname, &c)) {
		fprintf(stderr, "porthole trace analyze: no process %s%s%s\n",
			pname ? "named '" : "with scheduling data",
			pname ? pname : "", pname ? "'" : "");
		status = 2;
		goto done;
	}
	{
		char q[256];
		int64_t ps, pe;

		snprintf(q, sizeof(q),
			 "SELECT start_ts FROM process WHERE upid = %" PRId64,
			 c.upid);
		ps = one_int(db, q, t.first_ts);
		snprintf(q, sizeof(q),
			 "SELECT end_ts FROM process WHERE upid = %" PRId64,
			 c.upid);
		pe = one_int(db, q, t.last_ts);
		c.from = from != PH_NULL_I64 ? from : MAX(ps, t.first_ts);
		c.to = to != PH_NULL_I64 ? to : MIN(pe, t.last_ts);
		c.window_given = from != PH_NULL_I64 || to != PH_NULL_I64;
		if (c.to <= c.from) {
			fprintf(stderr,
				"porthole trace analyze: empty window\n");
			status = 2;
			goto done;
		}
	}
	if (build_context(db, &c, err, sizeof(err))) {
		fprintf(stderr, "porthole trace analyze: context: %s\n", err);
		status = 2;
		goto done;
	}
	runs = calloc(ds.n ? ds.n : 1, sizeof(*runs));
	if (!runs) {
		status = 2;
		goto done;
	}
	for (size_t i = 0; i < ds.n; i++) {
		runs[i].d = &ds.d[i];
		run_detector(db, &runs[i]);
		if (!runs[i].ok)
			ph_warn("detector %s failed: %s", ds.d[i].id,
				runs[i].err);
	}
	{
		struct ph_buf js = PH_BUF_INIT(PH_BUF_NO_CAP);
		struct ph_jw w;
		char p[4096];
		FILE *md, *jf;
		size_t fired = 0;

		if (mkdir(out, 0777) && errno != EEXIST) {
			ph_warn("mkdir %s: %s", out, strerror(errno));
			status = 2;
			goto done;
		}
		snprintf(p, sizeof(p), "%s/report.md", out);
		md = fopen(p, "w");
		if (!md) {
			status = 2;
			goto done;
		}
		for (size_t i = 0; i < ds.n; i++)
			fired += runs[i].ok && runs[i].nrows;
		fprintf(md, "# Trace report\n\n");
		fprintf(md, "- trace: %s (%s)\n", path, t.format);
		fprintf(md, "- clock: %s; every time below is on it\n",
			t.clock_name);
		fprintf(md, "- process: %s (pid %" PRId64 ")\n", c.pname,
			c.pid);
		fprintf(md,
			"- window: %" PRId64 " .. %" PRId64
			" ns (%.1f ms), %s\n",
			c.from, c.to, (double)(c.to - c.from) / 1e6,
			c.window_given ? "as given" :
					 "the process's life inside the trace");
		if (load)
			fprintf(md,
				"- input: loaded in part, stopped at byte "
				"%" PRIu64 ": %s\n",
				t.err.offset, t.err.msg);
		fprintf(md, "- detectors fired: %zu of %zu\n", fired, ds.n);
		ph_jw_init(&w, &js);
		ph_jw_obj_begin(&w);
		ph_jw_kv_str(&w, "trace", path);
		ph_jw_kv_str(&w, "format", t.format);
		ph_jw_kv_str(&w, "clock", t.clock_name);
		ph_jw_kv_bool(&w, "complete", load == 0);
		ph_jw_key(&w, "process");
		ph_jw_obj_begin(&w);
		ph_jw_kv_str(&w, "name", c.pname);
		ph_jw_kv_int(&w, "pid", c.pid);
		ph_jw_obj_end(&w);
		ph_jw_key(&w, "window");
		ph_jw_obj_begin(&w);
		ph_jw_kv_int(&w, "from", c.from);
		ph_jw_kv_int(&w, "to", c.to);
		ph_jw_kv_str(&w, "source",
			     c.window_given ? "given" : "process life");
		ph_jw_obj_end(&w);
		env_phase(db, &w, md);
		ph_jw_kv_int(&w, "detectors_total", (int64_t)ds.n);
		ph_jw_kv_int(&w, "detectors_fired", (int64_t)fired);
		ph_jw_key(&w, "detectors");
		ph_jw_arr_begin(&w);
		fprintf(md, "\n## Findings\n");
		for (size_t i = 0; i < ds.n; i++) {
			struct run *r = &runs[i];

			ph_jw_obj_begin(&w);
			ph_jw_kv_str(&w, "id", r->d->id);
			ph_jw_kv_str(&w, "title", r->d->title);
			ph_jw_kv_str(&w, "identity", r->d->identity);
			ph_jw_kv_bool(&w, "ok", r->ok);
			if (!r->ok) {
				ph_jw_kv_str(&w, "error", r->err);
			} else {
				ph_jw_kv_int(&w, "row_count",
					     (int64_t)r->nrows);
				ph_jw_kv_double(&w, "covered_ms",
						r->covered_ms);
				ph_jw_kv_double(
					&w, "coverage",
					r->covered_ms * 1e6 /
						(double)(c.to - c.from));
				ph_jw_key(&w, "rows");
				ph_jw_raw(&w, r->rows.buf, r->rows.len);
			}
			ph_jw_obj_end(&w);
			if (r->ok && r->nrows) {
				fprintf(md, "\n### %s (%s)\n\n%s\n\n",
					r->d->title, r->d->id,
					r->d->why ? r->d->why : "");
				fprintf(md,
					"%zu row(s), covering %.1f ms of the "
					"window. Rows: see report.json.\n",
					r->nrows, r->covered_ms);
			}
		}
		ph_jw_arr_end(&w);
		ph_jw_obj_end(&w);
		fprintf(md, "\n## Silent detectors\n\n");
		for (size_t i = 0; i < ds.n; i++)
			if (runs[i].ok && !runs[i].nrows)
				fprintf(md, "- %s: looked, found nothing\n",
					runs[i].d->id);
			else if (!runs[i].ok)
				fprintf(md, "- %s: FAILED: %s\n", runs[i].d->id,
					runs[i].err);
		fclose(md);
		snprintf(p, sizeof(p), "%s/report.json", out);
		jf = fopen(p, "w");
		if (!ph_jw_finish(&w) && jf) {
			fputs(js.buf, jf);
			fputc('\n', jf);
		}
		if (jf)
			fclose(jf);
		ph_buf_release(&js);
		printf("%s/report.md: %s (pid %" PRId64 "), %zu of %zu "
		       "detectors fired\n",
		       out, c.pname, c.pid, fired, ds.n);
	}
done:
	for (size_t i = 0; runs && i < ds.n; i++)
		ph_buf_release(&runs[i].rows);
	free(runs);
	sqlite3_close(db);
	ph_trace_release(&t);
	ph_detset_release(&ds);
	return status ? status : load;
}

int ph_trace_cli_compare(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "porthole trace compare: not implemented yet\n");
	return 2;
}

int ph_trace_cli_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "porthole trace record: not implemented yet\n");
	return 2;
}

int ph_trace_cli_doctor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "porthole trace doctor: not implemented yet\n");
	return 2;
}
