/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the trace detectors count: a frame once, a scenario anchor not as a
 * stall, a dropped-in detector's missing columns, the names other
 * detectors claim.
 */
#include "ph_common.h"
#include "harness.h"
#include "trace/trace.h"
#include "trace/trace_detect.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

#include <sys/stat.h>
#include <unistd.h>

/* Detector `id` of the set in dir on a loaded trace, for `process`. */
static int run_set(struct ph_trace *t, const char *process, const char *dir,
		   const char *const *sets, size_t nsets, const char *id,
		   struct ph_detrun *r)
{
	struct ph_tscope scope = PH_TSCOPE_INIT;
	struct ph_tctx c;
	struct ph_detset ds;
	sqlite3 *db = NULL;
	char err[256];
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = ph_detset_prepare(&ds, dir, NULL, sets, nsets, err,
				    sizeof(err))))
		return rc;
	for (i = 0; i < ds.n && strcmp(ds.d[i].id, id); i++)
		;
	scope.process = process;
	rc = i < ds.n ? ph_trace_sql_open(t, &db) : PH_ENOENT;
	if (!rc)
		rc = ph_tctx_open(db, t, &scope, &c, err, sizeof(err));
	if (!rc)
		rc = ph_tctx_claim_names(db, &ds, err, sizeof(err));
	if (!rc) {
		r->d = &ds.d[i];
		ph_detrun_run(db, r);
		r->d = NULL; /* the set dies here */
	}
	sqlite3_close(db);
	ph_detset_release(&ds);
	return rc;
}

static int run_one(struct ph_trace *t, const char *process, const char *dir,
		   const char *id, struct ph_detrun *r)
{
	return run_set(t, process, dir, NULL, 0, id, r);
}

/* The sum of one numeric member over a rows array (a JSON text). */
static double sum_of(const char *rows, const char *key)
{
	char pat[64];
	double s = 0;
	const char *p = rows;
	int n = snprintf(pat, sizeof(pat), "\"%s\":", key);

	while ((p = strstr(p, pat))) {
		p += n;
		s += strtod(p, NULL);
	}
	return s;
}

static int64_t q1(struct ph_trace *t, const char *sql)
{
	sqlite3 *db = NULL;
	int64_t v = -1;

	if (!ph_trace_sql_open(t, &db))
		v = ph_tsql_int(db, sql, -1);
	sqlite3_close(db);
	return v;
}

void test_trace__jank_counts_a_frame_once(void)
{
	struct ph_trace t;
	struct ph_detrun r;
	int64_t frames, late, late_union;
	static const char *const ids[] = { "frame_jank", "ask_jank" };

	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_file(
			  &t, "../shared/fixtures/perfetto/"
			      "perfetto_android12_cpuschedstack.pftrace"),
		  0);
	/* the janky frames of systemui, by token: a frame drawn on two
	 * layers has two actual rows with one token */
	frames = q1(&t, "SELECT COUNT(DISTINCT a.name || '/' || a.is_surface) "
			"FROM actual_frame_timeline_slice a JOIN process p "
			"USING (upid) WHERE p.name = 'com.android.systemui' "
			"AND a.jank_type NOT IN ('None', 'Unspecified') AND "
			"a.dur > 0");
	CHECK(frames > 0);
	CHECK(q1(&t, "SELECT COUNT(*) FROM actual_frame_timeline_slice a "
		     "JOIN process p USING (upid) WHERE p.name = "
		     "'com.android.systemui' AND a.jank_type NOT IN ('None', "
		     "'Unspecified') AND a.dur > 0") > frames);
	/* frame_jank's: those that ended at or past their deadline */
	late = q1(&t, "SELECT COUNT(*) FROM (SELECT a.name, a.is_surface, "
		      "MAX(a.ts + a.dur) AS e FROM actual_frame_timeline_slice "
		      "a JOIN process p USING (upid) WHERE p.name = "
		      "'com.android.systemui' AND a.jank_type NOT IN ('None', "
		      "'Unspecified') AND a.dur > 0 GROUP BY 1, 2) JOIN "
		      "(SELECT x.name, x.is_surface, MAX(x.ts + x.dur) AS d "
		      "FROM expected_frame_timeline_slice x JOIN process p "
		      "USING (upid) WHERE p.name = 'com.android.systemui' "
		      "GROUP BY 1, 2) USING (name, is_surface) WHERE e >= d");
	CHECK(late > 0 && late <= frames);
	/* the union of the late stretches (deadline to end), in ns */
	late_union = q1(
		&t,
		"WITH fr AS (SELECT a.name, a.is_surface, MAX(a.ts + a.dur) AS e "
		"FROM actual_frame_timeline_slice a JOIN process p USING (upid) "
		"WHERE p.name = 'com.android.systemui' AND a.jank_type NOT IN "
		"('None', 'Unspecified') AND a.dur > 0 GROUP BY 1, 2), ex AS "
		"(SELECT x.name, x.is_surface, MAX(x.ts + x.dur) AS d FROM "
		"expected_frame_timeline_slice x JOIN process p USING (upid) "
		"WHERE p.name = 'com.android.systemui' GROUP BY 1, 2), l AS "
		"(SELECT d AS s, e FROM fr JOIN ex USING (name, is_surface) "
		"WHERE e > d), o AS (SELECT s, e, MAX(e) OVER (ORDER BY s ROWS "
		"BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe FROM l) "
		"SELECT SUM(CASE WHEN pe IS NULL OR pe <= s THEN e - s WHEN pe "
		">= e THEN 0 ELSE e - pe END) FROM o");
	CHECK_INT(late_union, 868542446);
	for (size_t k = 0; k < PH_ARRAY_SIZE(ids); k++) {
		CHECK_INT(run_one(&t, "com.android.systemui", "detectors",
				  ids[k], &r),
			  0);
		CHECK(r.ok);
		CHECK(r.nrows > 0);
		/* each frame once over the rows */
		CHECK_INT((int64_t)sum_of(r.rows.buf, "count"),
			  k == 0 ? late : frames);
		/* a row's time is the time past the deadline */
		CHECK(sum_of(r.rows.buf, "total_ms") ==
		      sum_of(r.rows.buf, "self_ms"));
		CHECK(sum_of(r.rows.buf, "covered_ms") ==
		      sum_of(r.rows.buf, "self_ms"));
		/* and covers the window only where the main thread was
		 * busy in it: less than the late stretches' union (868.5
		 * ms; systemui's main thread is not busy through all of
		 * them), yet some */
		if (k == 0)
			CHECK(r.covered_ms > 0 &&
			      r.covered_ms * 1e6 < (double)late_union);
		ph_detrun_release(&r);
	}
	ph_trace_release(&t);
}

#define SW(ts, pc, pp, st, nc, np)                                      \
	"  " pc "-" pp "  (" pp ") [000] d..2.  " ts ": sched_switch: " \
	"prev_comm=" pc " prev_pid=" pp " prev_prio=120 prev_state=" st \
	" ==> next_comm=" nc " next_pid=" np " next_prio=120\n"
#define MARK(ts, text) \
	"  app-100  (  100) [000] .....  " ts ": tracing_mark_write: " text "\n"

void test_trace__scenario_anchor_is_not_a_stall(void)
{
	/* AppStart spans the 2 s the app was traced; the main thread ran
	 * 25 ms of it (inflate 6 ms inside) and slept the rest */
	static const char txt[] = "# trace_clock: mono\n" MARK("1.000000",
							       "B|100|AppStart")
		SW("1.000000", "swapper", "0", "R", "app", "100") MARK(
			"1.002000", "B|100|inflate") MARK("1.008000", "E|100")
			SW("1.025000", "app", "100", "S", "swapper", "0")
				SW("3.000000", "swapper", "0", "R", "app",
				   "100") MARK("3.000000", "E|100");
	static const char *const ids[] = { "main_thread_block", "anr_risk",
					   "ask_slices" };
	struct ph_trace t;
	struct ph_detrun r;

	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	CHECK_INT(q1(&t, "SELECT dur FROM slice WHERE name = 'AppStart'"),
		  2000000000);
	for (size_t k = 0; k < PH_ARRAY_SIZE(ids); k++) {
		CHECK_INT(run_one(&t, "app", "detectors", ids[k], &r), 0);
		CHECK(r.ok);
		CHECK(strstr(r.rows.buf, "AppStart") == NULL);
		CHECK_INT(r.nrows, 0);
		ph_detrun_release(&r);
	}
	ph_trace_release(&t);
}

static int write_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(s, f);
	return fclose(f);
}

void test_trace__dropped_in_detector_fills_some_columns(void)
{
	/* a project's own detector: location, count and detail only */
	static const char txt[] = "# trace_clock: mono\n" SW(
		"1.000000", "swapper", "0", "R", "app", "100")
		MARK("1.002000", "B|100|inflate") MARK("1.008000", "E|100")
			SW("1.025000", "app", "100", "S", "swapper", "0");
	char dir[] = "/tmp/ph-trace-dropin-XXXXXX", path[128];
	struct ph_trace t;
	struct ph_detrun r;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/names.sql", dir);
	CHECK_INT(
		write_text(path,
			   "-- @id names\n"
			   "SELECT name AS location, COUNT(*) AS count, "
			   "'seen' AS detail FROM _slice_win GROUP BY name\n"),
		0);
	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	CHECK_INT(run_one(&t, "app", dir, "names", &r), 0);
	CHECK_STR(r.err, "");
	CHECK(r.ok);
	CHECK_INT(r.nrows, 1);
	CHECK_STR(
		r.rows.buf,
		"[{\"location\":\"inflate\",\"count\":1,\"detail\":\"seen\"}]");
	ph_detrun_release(&r);
	/* location is still required: the rows are paired on it */
	CHECK_INT(write_text(path, "-- @id names\nSELECT 1 AS count\n"), 0);
	CHECK_INT(run_one(&t, "app", dir, "names", &r), 0);
	CHECK(!r.ok);
	CHECK_STR(r.err, "rows lack the column 'location'");
	ph_detrun_release(&r);
	unlink(path);
	rmdir(dir);
	ph_trace_release(&t);
}

void test_trace__repeated_work_leaves_claimed_names(void)
{
	/* 30 waits for a monitor, 3 ms each, inside one top-level slice on
	 * a main thread that never sleeps: monitor_contention's to report */
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	const char *const other[] = {
		"monitor_contention.name_glob=Lock contention*"
	};
	struct ph_trace t;
	struct ph_detrun r;

	CHECK_INT(ph_buf_addstr(
			  &b, "# trace_clock: mono\n" SW("1.000000", "swapper",
							 "0", "R", "app", "100")
				      MARK("1.000000", "B|100|bind")),
		  0);
	for (int i = 0; i < 30; i++)
		CHECK_INT(ph_buf_addf(&b,
				      "  app-100  (  100) [000] .....  "
				      "1.%03d000: tracing_mark_write: "
				      "B|100|monitor contention with owner "
				      "worker (200)\n"
				      "  app-100  (  100) [000] .....  "
				      "1.%03d000: tracing_mark_write: E|100\n",
				      1 + 4 * i, 4 + 4 * i),
			  0);
	CHECK_INT(ph_buf_addstr(&b, MARK("1.200000", "E|100")
					    SW("1.200000", "app", "100", "S",
					       "swapper", "0")),
		  0);
	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, b.buf, b.len), 0);
	CHECK_INT(run_one(&t, "app", "detectors", "monitor_contention", &r), 0);
	CHECK(r.ok);
	CHECK(strstr(r.rows.buf, "monitor contention with owner") != NULL);
	ph_detrun_release(&r);
	CHECK_INT(run_one(&t, "app", "detectors", "repeated_work", &r), 0);
	CHECK(r.ok);
	CHECK_INT(r.nrows, 0);
	ph_detrun_release(&r);
	/* the masks are read with the overrides applied: once
	 * monitor_contention no longer claims the name, repeated_work
	 * reports it */
	CHECK_INT(run_set(&t, "app", "detectors", other, 1, "repeated_work",
			  &r),
		  0);
	CHECK(r.ok);
	CHECK_INT(r.nrows, 1);
	CHECK(strstr(r.rows.buf, "\"count\":30,") != NULL);
	ph_detrun_release(&r);
	CHECK_INT(run_set(&t, "app", "detectors", other, 1,
			  "monitor_contention", &r),
		  0);
	CHECK(r.ok);
	CHECK_INT(r.nrows, 0);
	ph_detrun_release(&r);
	ph_trace_release(&t);
	ph_buf_release(&b);
}

#define BINDER(who, tid, ts, what)                     \
	"  " who "-" tid "  (" tid ") [001] ....  " ts \
	": binder_transaction" what "\n"

void test_trace__binder_from_ftrace_text(void)
{
	/* app's main thread (100) calls system_server (binder thread 1501
	 * of 1500) for 40 ms; the server replies; then a one-way call */
	static const char txt[] = "# trace_clock: mono\n" SW(
		"1.000000", "swapper", "0", "R", "app",
		"100") BINDER("app", "100", "1.010000",
			      ": transaction=77 dest_node=5 dest_proc=1500 "
			      "dest_thread=0 reply=0 flags=0x10 code=0x4")
		SW("1.010100", "app", "100", "S", "swapper", "0") BINDER(
			"binder:1500_1", "1501", "1.012000",
			"_received: transaction=77") BINDER("binder:1500_1",
							    "1501", "1.048000",
							    ": transaction=78 "
							    "dest_node=0 "
							    "dest_proc=100 "
							    "dest_thread=100 "
							    "reply=1 flags=0x0 "
							    "code=0x0")
			SW("1.049000", "swapper", "0", "R", "app",
			   "100") BINDER("app", "100", "1.050000",
					 "_received: "
					 "transaction=78")
				BINDER("app", "100", "1.060000",
				       ": transaction=79 dest_node=5 dest_proc=1500 dest_thread=0 reply=0 flags=0x11 code=0x2")
					SW("1.070000", "app", "100", "S",
					   "swapper", "0");
	struct ph_trace t;
	struct ph_detrun r;

	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	CHECK_INT(ph_trace_stat_get(&t, "ftrace.binder_transaction"), 3);
	CHECK_INT(ph_trace_stat_get(&t, "ftrace.binder_transaction_received"),
		  2);
	/* the call on the caller's thread, the reply on the server's */
	CHECK_INT(q1(&t, "SELECT s.dur FROM slice s JOIN thread_track tt ON "
			 "s.track_id = tt.id JOIN thread USING (utid) WHERE "
			 "tid = 100 AND s.name = 'binder transaction'"),
		  40000000);
	CHECK_INT(q1(&t, "SELECT s.dur FROM slice s JOIN thread_track tt ON "
			 "s.track_id = tt.id JOIN thread USING (utid) WHERE "
			 "tid = 1501 AND s.name = 'binder reply'"),
		  36000000);
	CHECK_INT(q1(&t, "SELECT COUNT(*) FROM slice WHERE name = 'binder "
			 "transaction async' AND dur = 0"),
		  1);
	CHECK_INT(q1(&t, "SELECT COUNT(*) FROM slice WHERE category = "
			 "'binder'"),
		  3);
	/* ask binder sees it: one call of 40 ms on the main thread */
	CHECK_INT(run_one(&t, "app", "detectors", "ask_binder", &r), 0);
	CHECK(r.ok);
	CHECK(!r.unanswered);
	CHECK_INT(r.nrows, 1);
	CHECK(strstr(r.rows.buf, "\"location\":\"app: binder transaction\"") !=
	      NULL);
	CHECK(strstr(r.rows.buf, "Binder call on the main thread") != NULL);
	ph_detrun_release(&r);
	ph_trace_release(&t);
}

void test_trace__binder_unmatched_leaves_atrace_slices(void)
{
	/* a reply whose call the trace lost must not close the atrace
	 * slice open on the replying thread */
	static const char txt[] =
		"# trace_clock: mono\n" MARK("1.000000", "B|100|work")
			BINDER("app", "100", "1.010000",
			       ": transaction=9 dest_node=0 dest_proc=1500 "
			       "dest_thread=1501 reply=1 flags=0x0 code=0x0")
				BINDER("app", "100", "1.011000",
				       "_received: transaction=12345")
					MARK("1.020000", "E|100");
	struct ph_trace t;

	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	CHECK_INT(q1(&t, "SELECT dur FROM slice WHERE name = 'work'"),
		  20000000);
	CHECK_INT(ph_trace_stat_get(&t, "binder_unmatched"), 2);
	ph_trace_release(&t);
}
