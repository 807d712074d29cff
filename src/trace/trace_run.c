/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_run.c: the phases shared by analyze, ask and doctor (see
 * trace_run.h): the scenario, the context tables and one detector's run.
 *
 * Scenario: the process (--process NAME, else the one whose threads ran
 * longest) and the window: --from/--to as given; else the anchors (the
 * first slice of the process named START, to the end of the first slice
 * named END that starts at or after it; an END still open at the trace
 * end, or never seen, ends the window at the trace end and the note says
 * so); else the process's life inside the trace.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

#include <sys/stat.h>
#include <unistd.h>

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

int ph_tsql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *e = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK) {
		snprintf(err, errlen, "%s", e ? e : sqlite3_errmsg(db));
		sqlite3_free(e);
		return PH_EINVAL;
	}
	return 0;
}

int64_t ph_tsql_int(sqlite3 *db, const char *sql, int64_t dflt)
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
			struct ph_tctx *c)
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
	/* all digits: a pid first (the last process that had it: pids are
	 * reused), so two processes of one name can be told apart */
	if (name && *name && strspn(name, "0123456789") == strlen(name) &&
	    strlen(name) < 10) {
		char q[160];

		snprintf(q, sizeof(q),
			 "SELECT upid FROM process WHERE pid = %s ORDER BY "
			 "upid DESC LIMIT 1",
			 name);
		c->upid = ph_tsql_int(db, q, -1);
		if (c->upid >= 0) {
			c->pid = strtoll(name, NULL, 10);
			snprintf(
				q, sizeof(q),
				"SELECT name FROM process WHERE upid = %" PRId64,
				c->upid);
			if (sqlite3_prepare_v2(db, q, -1, &st, NULL) ==
			    SQLITE_OK) {
				const char *n = NULL;

				if (sqlite3_step(st) == SQLITE_ROW)
					n = (const char *)sqlite3_column_text(
						st, 0);
				snprintf(c->pname, sizeof(c->pname), "%s",
					 n ? n : "?");
				sqlite3_finalize(st);
			}
			return 0;
		}
	}
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

/*
 * _cpu_in_slice(id, cpu_dur): Running time inside each main-thread slice
 * of depth <= 1, by SPAN_JOIN of the slices with the Running stretches.
 * The partition is (track, depth), because slices of one depth on one
 * track never overlap while depth 0 and 1 do; the Running stretches are
 * repeated for each (track, depth) they meet.  Should the slices break
 * that precondition after all, the join's error is kept in c->cpu_err,
 * the table is left empty and the run goes on: the detectors that read it
 * then see no CPU time rather than time counted twice.
 */
static int build_cpu_in_slice(sqlite3 *db, struct ph_tctx *c, char *err,
			      size_t errlen)
{
	char sql[2048];

	snprintf(sql, sizeof(sql),
		 "DROP TABLE IF EXISTS temp._sj_cpu;"
		 "DROP VIEW IF EXISTS temp._sj_slice;"
		 "DROP VIEW IF EXISTS temp._sj_run;"
		 "CREATE TEMP VIEW _sj_slice AS SELECT MAX(ts, %" PRId64
		 ") AS ts, dur_win AS dur, track_id * 2 + depth AS sj_part, "
		 "id AS slice_id FROM _slice_win WHERE is_main AND depth <= 1;"
		 "CREATE TEMP VIEW _sj_run AS SELECT t.ts, t.dur, k.track_id * "
		 "2 + d.depth AS sj_part FROM _tstate_win t JOIN (SELECT "
		 "DISTINCT track_id, utid FROM _slice_win WHERE is_main) k "
		 "USING (utid), (SELECT 0 AS depth UNION ALL SELECT 1) d WHERE "
		 "t.state = 'Running';"
		 "CREATE VIRTUAL TABLE temp._sj_cpu USING SPAN_JOIN(_sj_slice "
		 "PARTITIONED sj_part, _sj_run PARTITIONED sj_part);"
		 "CREATE TEMP TABLE _cpu_in_slice AS SELECT slice_id AS id, "
		 "SUM(dur) AS cpu_dur FROM _sj_cpu GROUP BY slice_id;",
		 c->from);
	c->cpu_err[0] = 0;
	if (!ph_tsql_exec(db, sql, c->cpu_err, sizeof(c->cpu_err)))
		return 0;
	ph_warn("_cpu_in_slice: %s", c->cpu_err);
	return ph_tsql_exec(
		db,
		"DROP TABLE IF EXISTS temp._cpu_in_slice;"
		"CREATE TEMP TABLE _cpu_in_slice(id INTEGER, cpu_dur "
		"INTEGER);",
		err, errlen);
}

/* The context tables, on literal numbers; see the file comment. */
static int build_context(sqlite3 *db, struct ph_tctx *c, char *err,
			 size_t errlen)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	int rc;
	static const char *const drops[] = {
		"_proc",	 "_window",	"_threads",   "_slice_win",
		"_aslice_win",	 "_tstate_win", "_child_sum", "_cpu_in_slice",
		"_claimed_name", "_cover",
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
		    "CREATE TEMP TABLE _claimed_name(detector TEXT, glob "
		    "TEXT);"
		    "CREATE TEMP TABLE _cover(s INTEGER, e INTEGER);"))
		goto nomem;
	rc = ph_tsql_exec(db, b.buf, err, errlen);
	ph_buf_release(&b);
	if (!rc)
		rc = build_cpu_in_slice(db, c, err, errlen);
	if (!rc)
		rc = ph_tctx_build_env(db, c, err, errlen);
	return rc;
nomem:
	ph_buf_release(&b);
	snprintf(err, errlen, "out of memory");
	return PH_ENOMEM;
}

int ph_tctx_claim_names(sqlite3 *db, const struct ph_detset *ds, char *err,
			size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = ph_tsql_exec(db, "DELETE FROM temp._claimed_name;", err, errlen);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO temp._claimed_name VALUES (?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < ds->n; i++) {
		const struct ph_detector *d = &ds->d[i];

		for (size_t k = 0; k < d->nparams; k++) {
			const char *m = d->params[k].value;

			if (strcmp(d->params[k].name, "name_glob") || !m)
				continue;
			/* masks separated by '|', which atrace keeps out of
			 * slice names */
			while (*m) {
				size_t n = strcspn(m, "|");

				if (n) {
					sqlite3_reset(st);
					sqlite3_bind_text(st, 1, d->id, -1,
							  SQLITE_STATIC);
					sqlite3_bind_text(st, 2, m, (int)n,
							  SQLITE_TRANSIENT);
					if (sqlite3_step(st) != SQLITE_DONE)
						goto fail;
				}
				m += n + (m[n] == '|');
			}
		}
	}
	sqlite3_finalize(st);
	return 0;
fail:
	snprintf(err, errlen, "_claimed_name: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return PH_EINVAL;
}

static void json_col(struct ph_jw *w, sqlite3_stmt *st, int c)
{
	switch (sqlite3_column_type(st, c)) {
	case SQLITE_INTEGER: ph_jw_int(w, sqlite3_column_int64(st, c)); break;
	case SQLITE_FLOAT: ph_jw_double(w, sqlite3_column_double(st, c)); break;
	case SQLITE_NULL: ph_jw_null(w); break;
	default: ph_jw_str(w, (const char *)sqlite3_column_text(st, c));
	}
}

/* The @ruled_out section: one cause per row, into r->ruled. */
static int ruled_out(sqlite3 *db, struct ph_detrun *r)
{
	struct ph_buf q = PH_BUF_INIT(1 << 20);
	sqlite3_stmt *st = NULL;
	struct ph_jw w;
	int rc = PH_EINVAL;

	if (ph_detector_render(r->d, r->d->ruled_out, &q))
		goto out;
	if (sqlite3_prepare_v2(db, q.buf, -1, &st, NULL) != SQLITE_OK) {
		snprintf(r->err, sizeof(r->err), "@ruled_out: %s",
			 sqlite3_errmsg(db));
		goto out;
	}
	ph_jw_init(&w, &r->ruled);
	ph_jw_arr_begin(&w);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *cause = (const char *)sqlite3_column_text(st, 0);

		if (cause) {
			ph_jw_str(&w, cause);
			r->nruled++;
		}
	}
	ph_jw_arr_end(&w);
	if (rc != SQLITE_DONE) {
		snprintf(r->err, sizeof(r->err), "@ruled_out: %s",
			 sqlite3_errmsg(db));
		rc = PH_EINVAL;
		goto out;
	}
	rc = ph_jw_finish(&w);
out:
	sqlite3_finalize(st);
	ph_buf_release(&q);
	return rc;
}

void ph_detrun_release(struct ph_detrun *r)
{
	ph_buf_release(&r->rows);
	ph_buf_release(&r->ruled);
}

void ph_detrun_run(sqlite3 *db, struct ph_detrun *r)
{
	const struct ph_detector *d = r->d;
	struct ph_buf sql = PH_BUF_INIT(1 << 20);
	struct ph_jw w;
	sqlite3_stmt *st = NULL;
	int rc, ncol;

	r->rows = (struct ph_buf)PH_BUF_INIT(PH_BUF_NO_CAP);
	r->ruled = (struct ph_buf)PH_BUF_INIT(PH_BUF_NO_CAP);
	r->ok = false;
	if (d->unanswered) {
		struct ph_buf u = PH_BUF_INIT(1 << 20);
		sqlite3_stmt *us = NULL;

		if (ph_detector_render(d, d->unanswered, &u))
			goto out;
		if (sqlite3_prepare_v2(db, u.buf, -1, &us, NULL) != SQLITE_OK) {
			snprintf(r->err, sizeof(r->err), "@unanswered: %s",
				 sqlite3_errmsg(db));
			ph_buf_release(&u);
			goto out;
		}
		if (sqlite3_step(us) == SQLITE_ROW) {
			const char *why =
				(const char *)sqlite3_column_text(us, 0);

			r->unanswered = true;
			snprintf(r->reason, sizeof(r->reason), "%s",
				 why ? why : "the trace lacks the data");
		}
		sqlite3_finalize(us);
		ph_buf_release(&u);
		if (r->unanswered) {
			r->ok = true;
			goto out;
		}
	}
	if (ph_detector_render(d, d->sql, &sql))
		goto out;
	ph_tsql_exec(db, "DROP TABLE IF EXISTS temp._rows;", r->err,
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
		rc = ph_tsql_exec(db, cr.buf, r->err, sizeof(r->err));
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
	/* Only location is required: rows are folded and paired on it.  The
	 * other contract columns (count, self_ms, total_ms, max_ms,
	 * covered_ms, detail) are written when the query has them; not every
	 * detector fills every column, and an absent one stays absent from the
	 * rows rather than reading as 0. */
	{
		bool found = false;

		for (int c = 0; c < ncol; c++)
			found |=
				!strcmp(sqlite3_column_name(st, c), "location");
		if (!found) {
			snprintf(r->err, sizeof(r->err),
				 "rows lack the column 'location'");
			goto out;
		}
	}
	ph_jw_init(&w, &r->rows);
	ph_jw_arr_begin(&w);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (r->on_row)
			r->on_row(r->arg, r, st);
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
				int64_t ns = ph_tsql_int(db, q.buf, -1);
				char e2[64];

				if (ns >= 0)
					r->covered_ms = (double)ns / 1e6;
				/* kept for the coverage of all findings */
				ph_buf_reset(&q);
				if (!ph_buf_addf(
					    &q,
					    "INSERT INTO temp._cover SELECT "
					    "MAX(ts, (SELECT ts FROM "
					    "_window)), MIN(ts + dur, "
					    "(SELECT end_ts FROM _window)) "
					    "FROM (%s)",
					    iv.buf))
					(void)ph_tsql_exec(db, q.buf, e2,
							   sizeof(e2));
			}
		}
		ph_buf_release(&iv);
		ph_buf_release(&q);
	}
	if (d->ruled_out && ruled_out(db, r))
		goto out;
	r->ok = true;
out:
	if (!r->ok && !r->err[0])
		snprintf(r->err, sizeof(r->err), "out of memory");
	sqlite3_finalize(st);
	ph_buf_release(&sql);
}

const char *ph_trace_detectors_dir(const char *given)
{
	struct stat st;

	if (given)
		return given;
	if (!stat("detectors", &st) && S_ISDIR(st.st_mode))
		return "detectors";
	return NULL; /* the copy built into the binary */
}

/*
 * The anchors: the first slice of the process named s->start; the end of
 * the first slice named s->end starting at or after it.  Slices of the
 * process's threads and its async tracks both count.
 */
static int find_anchors(sqlite3 *db, struct ph_trace *t,
			const struct ph_tscope *s, struct ph_tctx *c, char *err,
			size_t errlen)
{
	static const char q[] =
		"SELECT s.ts, s.dur FROM slice s JOIN track tr ON s.track_id = "
		"tr.id LEFT JOIN thread th ON th.utid = tr.utid WHERE s.name "
		"= ?1 AND s.ts >= ?3 AND (th.upid = ?2 OR tr.upid = ?2) "
		"ORDER BY s.ts LIMIT 1";
	sqlite3_stmt *st;
	int64_t sts = t->first_ts, sdur = -1;
	bool found = false;

	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return PH_EINVAL;
	}
	if (s->start) {
		sqlite3_bind_text(st, 1, s->start, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, c->upid);
		sqlite3_bind_int64(st, 3, INT64_MIN);
		if (sqlite3_step(st) == SQLITE_ROW) {
			sts = sqlite3_column_int64(st, 0);
			sdur = sqlite3_column_int64(st, 1);
			found = true;
		}
		sqlite3_reset(st);
		if (!found) {
			sqlite3_finalize(st);
			snprintf(err, errlen,
				 "start anchor '%s' not found in %s", s->start,
				 c->pname);
			return PH_ENOENT;
		}
	}
	c->from = sts;
	c->to = t->last_ts;
	if (s->end && s->start && !strcmp(s->end, s->start)) {
		/* one slice spans the scenario */
		if (sdur >= 0)
			c->to = sts + sdur;
		else
			c->end_unclosed = true;
	} else if (s->end) {
		sqlite3_bind_text(st, 1, s->end, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, c->upid);
		sqlite3_bind_int64(st, 3, sts);
		if (sqlite3_step(st) == SQLITE_ROW) {
			int64_t ets = sqlite3_column_int64(st, 0);
			int64_t edur = sqlite3_column_int64(st, 1);

			if (edur >= 0)
				c->to = ets + edur;
			else
				c->end_unclosed = true;
		} else {
			c->end_unclosed = true;
		}
	}
	sqlite3_finalize(st);
	if (c->end_unclosed)
		snprintf(c->note, sizeof(c->note),
			 "the end anchor '%s' never closed: the window ends "
			 "at the trace end",
			 s->end);
	c->source = "anchors";
	return 0;
}

/*
 * A given window, cut to what the trace holds: past its first or last
 * event nothing was observed, and a state still open at the trace's end
 * must not read as lasting to a window's end the trace never reached.
 * The window's note says when it was cut; a window wholly outside the
 * trace is an error that names both.
 */
static int clamp_to_trace(const struct ph_trace *t, struct ph_tctx *c,
			  char *err, size_t errlen)
{
	int64_t from = c->from, to = c->to;

	if (from >= t->first_ts && to <= t->last_ts)
		return 0;
	c->from = MAX(from, t->first_ts);
	c->to = MIN(to, t->last_ts);
	if (c->to <= c->from) {
		snprintf(err, errlen,
			 "the window asked (%" PRId64 " .. %" PRId64
			 " ns) lies outside the trace (%" PRId64 " .. %" PRId64
			 " ns)",
			 from, to, t->first_ts, t->last_ts);
		return PH_EINVAL;
	}
	snprintf(c->note, sizeof(c->note),
		 "the window asked (%" PRId64 " .. %" PRId64
		 " ns) reaches past the trace: answered over the part the "
		 "trace holds",
		 from, to);
	return 0;
}

int ph_tctx_open(sqlite3 *db, struct ph_trace *t, const struct ph_tscope *s,
		 struct ph_tctx *c, char *err, size_t errlen)
{
	char q[256];
	int64_t ps, pe;
	int rc;

	memset(c, 0, sizeof(*c));
	if (pick_process(db, t, s->process, c)) {
		snprintf(err, errlen, "no process %s%s%s",
			 s->process ? "named '" : "with scheduling data",
			 s->process ? s->process : "", s->process ? "'" : "");
		return PH_ENOENT;
	}
	snprintf(q, sizeof(q),
		 "SELECT start_ts FROM process WHERE upid = %" PRId64, c->upid);
	ps = ph_tsql_int(db, q, t->first_ts);
	snprintf(q, sizeof(q),
		 "SELECT end_ts FROM process WHERE upid = %" PRId64, c->upid);
	pe = ph_tsql_int(db, q, t->last_ts);
	c->from = MAX(ps, t->first_ts);
	c->to = MIN(pe, t->last_ts);
	c->source = "process life";
	if (s->start || s->end) {
		if ((rc = find_anchors(db, t, s, c, err, errlen)))
			return rc;
	}
	if (s->from != PH_NULL_I64 || s->to != PH_NULL_I64) {
		if (s->from != PH_NULL_I64)
			c->from = s->from;
		if (s->to != PH_NULL_I64)
			c->to = s->to;
		c->source = "given";
		if ((rc = clamp_to_trace(t, c, err, errlen)))
			return rc;
	}
	if (c->to <= c->from) {
		snprintf(err, errlen,
			 "empty window (%" PRId64 " .. %" PRId64 " ns)",
			 c->from, c->to);
		return PH_EINVAL;
	}
	if ((rc = build_context(db, c, err, errlen)))
		return rc;
	return 0;
}

int ph_trace_write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return ph_error(PH_EIO, "%s: %s", path, strerror(errno));
	if (fwrite(data, 1, n, f) != n || fflush(f) || ferror(f)) {
		fclose(f);
		return ph_error(PH_EIO, "%s: %s", path, strerror(errno));
	}
	if (fclose(f))
		return ph_error(PH_EIO, "%s: %s", path, strerror(errno));
	return 0;
}
