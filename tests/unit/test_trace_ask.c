/*
 * The doctor's fixture, the context built on it (_cpu_in_slice through
 * SPAN_JOIN), the eight questions (ph_trace_ask), the scenario anchors and
 * the fold of repeats.
 */
#include "ph_common.h"
#include "harness.h"
#include "trace/trace_ask.h"
#include "trace/trace_cli.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

static int load_doctor(struct ph_trace *t)
{
	struct ph_buf b = PH_BUF_INIT(1 << 24);
	int rc;

	ph_trace_init(t);
	rc = ph_trace_doctor_fixture(&b);
	if (!rc)
		rc = ph_trace_load_mem(t, b.buf, b.len);
	ph_buf_release(&b);
	return rc;
}

void test_trace__doctor_fixture_context(void)
{
	struct ph_trace t;
	struct ph_tscope s = PH_TSCOPE_INIT;
	struct ph_tctx c;
	sqlite3 *db;
	char err[512];

	CHECK_INT(load_doctor(&t), 0);
	CHECK_INT(ph_trace_sql_open(&t, &db), 0);
	s.process = "com.example.doctor";
	CHECK_INT(ph_tctx_open(db, &t, &s, &c, err, sizeof(err)), 0);
	CHECK_INT(c.pid, 1000);
	CHECK_STR(c.cpu_err, "");
	/* Running 441 ms, of which 296 ms inside top-level slices (worked
	 * out by hand from the fixture's table in trace_doctor.c) */
	CHECK_INT(ph_tsql_int(db,
			      "SELECT SUM(dur) FROM _tstate_win WHERE is_main "
			      "AND state = 'Running'",
			      -1),
		  441000000);
	CHECK_INT(ph_tsql_int(db,
			      "SELECT SUM(cpu_dur) FROM _cpu_in_slice JOIN "
			      "_slice_win USING (id) WHERE depth = 0",
			      -1),
		  296000000);
	/* the binder slice ran 2 of its 15 ms; the rest it slept */
	CHECK_INT(ph_tsql_int(db,
			      "SELECT cpu_dur FROM _cpu_in_slice JOIN "
			      "_slice_win USING (id) WHERE name = 'binder "
			      "transaction'",
			      -1),
		  2000000);
	/* depth 1: Application.onCreate ran all its 40 ms */
	CHECK_INT(ph_tsql_int(db,
			      "SELECT cpu_dur FROM _cpu_in_slice JOIN "
			      "_slice_win USING (id) WHERE name = "
			      "'Application.onCreate'",
			      -1),
		  40000000);
	/* built twice in one session */
	CHECK_INT(ph_tctx_open(db, &t, &s, &c, err, sizeof(err)), 0);
	CHECK_INT(ph_tsql_int(db, "SELECT COUNT(*) FROM _cpu_in_slice", -1),
		  39);
	sqlite3_close(db);
	ph_trace_release(&t);
}

void test_trace__anchors(void)
{
	struct ph_trace t;
	struct ph_tscope s = PH_TSCOPE_INIT;
	struct ph_tctx c;
	sqlite3 *db;
	char err[512];

	CHECK_INT(load_doctor(&t), 0);
	CHECK_INT(ph_trace_sql_open(&t, &db), 0);
	s.process = "com.example.doctor";
	s.start = "loadConfig";
	s.end = "RecyclerView:bind";
	CHECK_INT(ph_tctx_open(db, &t, &s, &c, err, sizeof(err)), 0);
	CHECK_STR(c.source, "anchors");
	CHECK_INT(c.from, 10138000000ll);
	CHECK_INT(c.to, 10450000000ll);
	CHECK(!c.end_unclosed);
	/* an end anchor that never appears: the window runs to the end */
	s.end = "never";
	CHECK_INT(ph_tctx_open(db, &t, &s, &c, err, sizeof(err)), 0);
	CHECK(c.end_unclosed);
	CHECK_INT(c.to, t.last_ts);
	CHECK(strstr(c.note, "never closed") != NULL);
	s.start = "nope";
	CHECK_INT(ph_tctx_open(db, &t, &s, &c, err, sizeof(err)), PH_ENOENT);
	CHECK(strstr(err, "start anchor 'nope'") != NULL);
	sqlite3_close(db);
	ph_trace_release(&t);
}

void test_trace__end_anchor_open_at_trace_end(void)
{
	static const char txt[] =
		"# trace_clock: mono\n"
		"  app-100  [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  [000] .....  1.001000: tracing_mark_write: B|100|start\n"
		"  app-100  [000] .....  1.002000: tracing_mark_write: E|100\n"
		"  app-100  [000] .....  1.003000: tracing_mark_write: B|100|scenario_end\n"
		"  app-100  [000] d..2.  1.500000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
	struct ph_trace t;
	struct ph_tscope s = PH_TSCOPE_INIT;
	struct ph_tctx c;
	sqlite3 *db;
	char err[512];

	ph_trace_init(&t);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	CHECK_INT(ph_trace_sql_open(&t, &db), 0);
	s.start = "start";
	s.end = "scenario_end";
	CHECK_INT(ph_tctx_open(db, &t, &s, &c, err, sizeof(err)), 0);
	CHECK_INT(c.from, 1001000000);
	CHECK_INT(c.to, 1500000000);
	CHECK(c.end_unclosed);
	sqlite3_close(db);
	ph_trace_release(&t);
}

static const struct ph_json *find_by(const struct ph_json *arr, const char *key,
				     const char *val)
{
	for (uint32_t i = 0; arr && i < arr->n; i++)
		if (ph_json_streq(ph_json_get(&arr->u.items[i], key), val))
			return &arr->u.items[i];
	return NULL;
}

void test_trace__ask_all_questions(void)
{
	struct ph_trace t;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *f, *x;
	struct ph_jw w;
	char err[512];
	double from = 0;

	CHECK_INT(load_doctor(&t), 0);
	ph_jw_init(&w, &out);
	CHECK_INT(ph_trace_ask(&t, "com.example.doctor", PH_NULL_I64,
			       PH_NULL_I64, NULL, 0, "detectors", &w, err,
			       sizeof(err)),
		  0);
	CHECK_INT(ph_jw_finish(&w), 0);
	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	CHECK_INT(ph_json_parse(&a, out.buf, out.len, &root, NULL), 0);
	CHECK_INT(ph_json_get(root, "asked")->n, 8);
	CHECK_INT(ph_json_get(root, "skipped")->n, 0);
	CHECK_INT(ph_json_get(root, "unanswered")->n, 0);
	CHECK(ph_json_streq(ph_json_get(root, "clock"), "MONOTONIC"));
	f = ph_json_get(root, "findings");
	/* every question found its planted problem */
	for (size_t q = 0; q < 8; q++)
		CHECK(find_by(f, "question", ph_trace_questions[q]) != NULL);
	x = find_by(f, "id", "trace.binder:example.doctor: binder transaction");
	CHECK(x != NULL);
	CHECK(ph_json_streq(ph_json_get(x, "severity"), "warning"));
	CHECK(ph_json_streq(ph_json_get(x, "confidence"), "observed"));
	CHECK(ph_json_streq(ph_json_get(x, "source"), "trace"));
	/* the window is on the app's clock: BOOTTIME T0 = MONOTONIC T0-2s */
	CHECK(ph_json_as_double(ph_json_get(ph_json_get(x, "window"), "from"),
				&from));
	CHECK(from > 8199.99 && from < 8200.01);
	x = find_by(f, "id", "trace.cpu:main thread outside slices");
	CHECK(x != NULL);
	CHECK(ph_json_get(x, "spanning") &&
	      ph_json_get(x, "spanning")->type == PH_JSON_TRUE);
	/* what was looked at and found quiet */
	CHECK(find_by(ph_json_get(root, "ruled_out"), "question", "jank"));
	ph_arena_release(&a);
	ph_buf_release(&out);
	ph_trace_release(&t);
}

void test_trace__ask_unanswered_and_skipped(void)
{
	static const char txt[] =
		"# trace_clock: mono\n"
		"  app-100  (  100) [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  (  100) [000] d..2.  1.200000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
	const char *qs[] = { "jank", "thread_states", "weather" };
	struct ph_trace t;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena a;
	struct ph_json *root;
	struct ph_jw w;
	char err[512];

	ph_trace_init(&t);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	ph_jw_init(&w, &out);
	CHECK_INT(ph_trace_ask(&t, NULL, PH_NULL_I64, PH_NULL_I64, qs, 3,
			       "detectors", &w, err, sizeof(err)),
		  0);
	CHECK_INT(ph_jw_finish(&w), 0);
	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	CHECK_INT(ph_json_parse(&a, out.buf, out.len, &root, NULL), 0);
	CHECK_INT(ph_json_get(root, "asked")->n, 2);
	CHECK(find_by(ph_json_get(root, "skipped"), "question", "weather"));
	CHECK(find_by(ph_json_get(root, "unanswered"), "question", "jank"));
	/* thread_states had data: answered, quiet, both causes ruled out */
	CHECK(!find_by(ph_json_get(root, "unanswered"), "question",
		       "thread_states"));
	CHECK_INT(ph_json_get(root, "findings")->n, 0);
	CHECK_INT(ph_json_get(root, "ruled_out")->n, 2);
	ph_arena_release(&a);
	ph_buf_release(&out);
	/* no such process: an error, nothing written */
	ph_buf_reset(&out);
	ph_jw_init(&w, &out);
	CHECK_INT(ph_trace_ask(&t, "nope", PH_NULL_I64, PH_NULL_I64, NULL, 0,
			       "detectors", &w, err, sizeof(err)),
		  PH_ENOENT);
	ph_buf_release(&out);
	ph_trace_release(&t);
}

void test_trace__rows_fold_medians(void)
{
	const char *reps[3] = {
		/* one element, split over two lines (parens tell clang) */
		("[{\"location\":\"a\",\"count\":1,\"self_ms\":10.0},"
		 "{\"location\":\"b\",\"count\":2,\"self_ms\":5}]"),
		"[{\"location\":\"a\",\"count\":3,\"self_ms\":30.0}]",
		"[{\"location\":\"a\",\"count\":2,\"self_ms\":20.5}]",
	};
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	struct ph_jw w;

	ph_jw_init(&w, &out);
	CHECK_INT(ph_trace_rows_fold(&w, reps, 3, "location"), 2);
	CHECK_INT(ph_jw_finish(&w), 0);
	CHECK_STR(out.buf, "[{\"location\":\"a\",\"count\":2,\"self_ms\":20.5,"
			   "\"seen_in\":3},{\"location\":\"b\",\"count\":2,"
			   "\"self_ms\":5,\"seen_in\":1}]");
	ph_buf_release(&out);
}
