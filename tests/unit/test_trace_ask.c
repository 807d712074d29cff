/* SPDX-License-Identifier: Apache-2.0 */
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

#include <unistd.h>

static int load_doctor(struct ph_trace *t)
{
	struct ph_buf b = PH_BUF_INIT(1 << 24);
	int rc;

	rc = ph_trace_init(t);
	if (!rc)
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
		  40);
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

	CHECK_INT(ph_trace_init(&t), 0);
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

	CHECK_INT(ph_trace_init(&t), 0);
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
	CHECK(!ph_json_get(root, "lost")); /* nothing was lost */
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

/* ph_trace_ask about process over [from, to), parsed; NULL when it
 * failed (err, when given, says why). */
static struct ph_json *ask_json(struct ph_trace *t, const char *process,
				int64_t from, int64_t to, const char *const *qs,
				size_t nq, struct ph_buf *out,
				struct ph_arena *a)
{
	struct ph_json *root = NULL;
	struct ph_jw w;
	char err[512];

	ph_jw_init(&w, out);
	if (ph_trace_ask(t, process, from, to, qs, nq, "detectors", &w, err,
			 sizeof(err)) ||
	    ph_jw_finish(&w) ||
	    ph_json_parse(a, out->buf, out->len, &root, NULL))
		return NULL;
	return root;
}

/*
 * trace_pipe's "CPU:N [LOST M EVENTS]" lines are the kernel saying the
 * ring buffer overran: they are counted, not unparsed, and every answer
 * says the trace has holes.
 */
void test_trace__lost_events_are_counted_and_said(void)
{
	static const char txt[] =
		"# trace_clock: mono\n"
		"  app-100  (  100) [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"CPU:1 [LOST 42 EVENTS]\n"
		"  app-100  (  100) [000] d..2.  1.200000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
		"CPU:0 [LOST 8 EVENTS]\n";
	struct ph_trace t;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *lost;

	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	CHECK_INT(ph_trace_stat_get(&t, "ftrace_text_lost_events"), 50);
	CHECK_INT(ph_trace_stat_get(&t, "ftrace_text_unparsed_lines"), 0);
	CHECK_INT(t.tables[PH_T_SCHED].rows, 2);
	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	root = ask_json(&t, NULL, PH_NULL_I64, PH_NULL_I64, NULL, 0, &out, &a);
	CHECK(root != NULL);
	lost = ph_json_get(root, "lost");
	CHECK(lost && lost->n == 1);
	if (lost && lost->n == 1) {
		const struct ph_json *l = ph_json_at(lost, 0);
		const char *why = ph_json_strdup(&a, ph_json_get(l, "why"));
		int64_t n = -1;

		CHECK(ph_json_as_int(ph_json_get(l, "count"), &n));
		CHECK_INT(n, 50);
		CHECK(why && strstr(why, "the trace has holes"));
	}
	ph_arena_release(&a);
	ph_buf_release(&out);
	ph_trace_release(&t);
}

/*
 * A window asked past a trace's ends is answered over the part the trace
 * holds, and says so: a state open at the last event must not read as
 * lasting to a window's end the trace never reached.  A window wholly
 * outside is an error naming both.
 */
void test_trace__a_window_past_the_trace_is_cut_to_it(void)
{
	static const char txt[] =
		"# trace_clock: mono\n"
		"  app-100  (  100) [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  (  100) [000] d..2.  1.200000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
	struct ph_trace t;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *win;
	struct ph_jw w;
	char err[512];
	int64_t v = -1;
	const char *note;

	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	root = ask_json(&t, "app", 500000000, 2000000000, NULL, 0, &out, &a);
	CHECK(root != NULL);
	win = ph_json_get(root, "window");
	CHECK(ph_json_as_int(ph_json_get(win, "from_ns"), &v));
	CHECK_INT(v, 1000000000);
	CHECK(ph_json_as_int(ph_json_get(win, "to_ns"), &v));
	CHECK_INT(v, 1200000000);
	note = ph_json_strdup(&a, ph_json_get(win, "note"));
	CHECK(note && strstr(note, "(500000000 .. 2000000000 ns) reaches "
				   "past the trace"));
	ph_arena_release(&a);
	ph_buf_reset(&out);
	ph_jw_init(&w, &out);
	CHECK_INT(ph_trace_ask(&t, "app", 3000000000, 4000000000, NULL, 0,
			       "detectors", &w, err, sizeof(err)),
		  PH_EINVAL);
	CHECK(strstr(err, "lies outside the trace (1000000000 .. 1200000000"));
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

/* The answer of ph_trace_ask() on t, parsed into a (root returned). */
static double num(const struct ph_json *v)
{
	double d = -1;

	ph_json_as_double(v, &d);
	return d;
}

static double evidence(const struct ph_json *finding, const char *key)
{
	return num(ph_json_get(ph_json_get(finding, "evidence"), key));
}

void test_trace__ask_states_the_environment(void)
{
	struct ph_trace t;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *env, *f, *x, *ro;

	CHECK_INT(load_doctor(&t), 0);
	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	root = ask_json(&t, "com.example.doctor", PH_NULL_I64, PH_NULL_I64,
			NULL, 0, &out, &a);
	CHECK(root != NULL);
	/* the environment of the window (0-600 ms), before the findings:
	 * the values in trace_doctor.c's table, averages over time */
	env = ph_json_get(root, "environment");
	CHECK(env != NULL);
	x = ph_json_get(env, "cpufreq_khz");
	CHECK_INT(x->n, 2);
	/* (20 x 2000000 + 80 x 500000 + 500 x 2000000) / 600 */
	CHECK(num(ph_json_get(&x->u.items[0], "avg")) == 1800000);
	CHECK(num(ph_json_get(&x->u.items[0], "low_ms")) == 80);
	CHECK(num(ph_json_get(&x->u.items[1], "low_ms")) == 0);
	x = ph_json_get(env, "thermal");
	CHECK_INT(x->n, 1);
	/* (45 x 300 + 72 x 100 + 50 x 200) / 600 */
	CHECK(num(ph_json_get(&x->u.items[0], "avg_c")) > 51.1666 &&
	      num(ph_json_get(&x->u.items[0], "avg_c")) < 51.1667);
	CHECK(num(ph_json_get(&x->u.items[0], "max_c")) == 72);
	x = ph_json_get(env, "cooling_devices");
	CHECK_INT(x->n, 2);
	CHECK(ph_json_streq(ph_json_get(&x->u.items[0], "device"),
			    "thermal-cpufreq-0"));
	CHECK(num(ph_json_get(&x->u.items[0], "max_state")) == 2);
	CHECK(num(ph_json_get(&x->u.items[0], "throttled_ms")) == 100);
	CHECK(num(ph_json_get(&x->u.items[1], "throttled_ms")) == 10);
	CHECK(num(ph_json_get(env, "mem_available_min_bytes")) == 2048000000.0);
	/* the process's memory: kB x 1024 at 0, 250 and 500 ms */
	x = ph_json_get(env, "process_memory");
	CHECK_INT(x->n, 4);
	CHECK(ph_json_streq(ph_json_get(&x->u.items[0], "counter"), "mem.rss"));
	CHECK(num(ph_json_get(&x->u.items[0], "start_bytes")) == 102400000);
	CHECK(num(ph_json_get(&x->u.items[0], "peak_bytes")) == 153600000);
	CHECK(num(ph_json_get(&x->u.items[0], "end_bytes")) == 122880000);
	CHECK(ph_json_streq(ph_json_get(&x->u.items[3], "counter"),
			    "mem.swap"));
	CHECK(num(ph_json_get(&x->u.items[3], "end_bytes")) == 2048000);
	CHECK(ph_json_get(env, "process_memory_note") == NULL);
	x = ph_json_get(env, "lines");
	CHECK(x && x->n == 10);
	CHECK(ph_json_streq(&x->u.items[0],
			    "cpu 0: 1800000 kHz average (500000..2000000); "
			    "80.0 ms below half its peak (2000000 kHz)"));
	CHECK(ph_json_streq(&x->u.items[6],
			    "process RSS: 102.4 MB at the start, 153.6 MB at "
			    "its highest sample, 122.9 MB at the end"));
	/* the summary's average is over both CPUs: (1800 + 2000) / 2 */
	CHECK(ph_json_streq(ph_json_get(env, "summary"),
			    "CPU 500..2000 MHz (average 1900) on 2 CPUs, below "
			    "half its peak on cpu 0 80.0 ms; throttled: "
			    "thermal-cpufreq-0 up to state 2 for 100.0 ms (and "
			    "1 other device), hottest zone cpu 72.0 C; RSS "
			    "102.4..153.6 MB, memory available at least 2048 "
			    "MB"));
	f = ph_json_get(root, "findings");
	/* cpu: ruled in, both */
	x = find_by(f, "id", "trace.cpu:main thread at a low CPU frequency");
	CHECK(x != NULL);
	CHECK(ph_json_streq(ph_json_get(x, "confidence"), "observed"));
	CHECK(evidence(x, "self_ms") == 70); /* 20-60 and 70-100 */
	CHECK(evidence(x, "total_ms") == 441);
	x = find_by(f, "id", "trace.cpu:thermal throttling: thermal-cpufreq-0");
	CHECK(x != NULL);
	CHECK(ph_json_streq(ph_json_get(x, "confidence"), "correlated"));
	CHECK(evidence(x, "self_ms") == 94); /* asleep 331-337 */
	CHECK(evidence(x, "total_ms") == 100);
	/* start-up at a low frequency (20-60 of 0-60), not throttled */
	x = find_by(f, "id", "trace.startup:start-up at a low CPU frequency");
	CHECK(x != NULL);
	CHECK(evidence(x, "self_ms") == 40);
	CHECK(evidence(x, "total_ms") == 60);
	CHECK(!find_by(f, "question", "startup") ||
	      !find_by(f, "id",
		       "trace.startup:start-up throttled: "
		       "thermal-cpufreq-0"));
	/* the late frame 11 overlapped thermal-gpu, not a low frequency */
	x = find_by(f, "id", "trace.jank:late frames while throttled");
	CHECK(x != NULL);
	CHECK(evidence(x, "max_ms") > 28.39 && evidence(x, "max_ms") < 28.41);
	CHECK(!find_by(f, "id",
		       "trace.jank:late frames at a low CPU "
		       "frequency"));
	ro = ph_json_get(root, "ruled_out");
	CHECK(find_by(ro, "cause",
		      "thermal throttling during the start-up: the trace has "
		      "cooling devices, and none was above state 0 while it "
		      "ran"));
	CHECK(find_by(ro, "cause",
		      "a low CPU frequency in the late frames: the trace has "
		      "cpufreq, and none ran mostly below half the CPU's "
		      "peak frequency"));
	/* each finding, the environment of its own stretch: the binder call
	 * ran 200-215 ms, at full speed, before the throttling */
	x = find_by(f, "id", "trace.binder:example.doctor: binder transaction");
	CHECK(x != NULL);
	CHECK(ph_json_streq(ph_json_get(ph_json_get(x, "evidence"),
					"environment"),
			    "CPU at 2000 MHz on 2 CPUs; not throttled (2 "
			    "cooling devices at 0), hottest zone cpu 45.0 C; "
			    "RSS 102.4 MB, memory available at least 2048 "
			    "MB"));
	/* a spanning finding: the window's */
	x = find_by(f, "id", "trace.cpu:main thread outside slices");
	CHECK(x != NULL);
	CHECK(ph_json_streq(ph_json_get(ph_json_get(x, "evidence"),
					"environment"),
			    ph_json_strdup(&a, ph_json_get(env, "summary"))));
	ph_arena_release(&a);
	ph_buf_release(&out);
	/* a window that starts 100 ms before the trace (and its first
	 * memory sample) is cut to the trace, and says so: RSS is as
	 * sampled at the start of what the trace holds */
	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	root = ask_json(&t, "com.example.doctor", 9900000000ll, 10600000000ll,
			NULL, 0, &out, &a);
	CHECK(root != NULL);
	CHECK(num(ph_json_get(ph_json_get(root, "window"), "from_ns")) ==
	      10000000000.0);
	CHECK(ph_json_get(ph_json_get(root, "window"), "note") != NULL);
	x = ph_json_get(ph_json_get(root, "environment"), "lines");
	CHECK(x && x->n == 10);
	CHECK(ph_json_streq(&x->u.items[6],
			    "process RSS: 102.4 MB at the start, 153.6 MB at "
			    "its highest sample, 122.9 MB at the end"));
	ph_arena_release(&a);
	ph_buf_release(&out);
	ph_trace_release(&t);
}

void test_trace__ask_rules_out_throttling_and_low_frequency(void)
{
	/* CPU 0 at its peak throughout, a fan at state 0, a zone at 40 C:
	 * the cpu question rules both out, and the memory is absent */
	static const char txt[] =
		"# trace_clock: mono\n"
		"  <idle>-0  (-----) [000] d..2.  0.500000: cpu_frequency: state=2000000 cpu_id=0\n"
		"  <idle>-0  (-----) [000] d..2.  0.500000: cdev_update: type=fan target=0\n"
		"  <idle>-0  (-----) [000] d..2.  0.500000: thermal_temperature: thermal_zone=cpu id=0 temp_prev=0 temp=40000\n"
		"  app-100  (  100) [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  (  100) [000] d..2.  1.200000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
	const char *qs[] = { "cpu" };
	struct ph_trace t;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *env, *ro;
	struct ph_jw w;
	char err[512];

	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	ph_jw_init(&w, &out);
	CHECK_INT(ph_trace_ask(&t, "app", PH_NULL_I64, PH_NULL_I64, qs, 1,
			       "detectors", &w, err, sizeof(err)),
		  0);
	CHECK_INT(ph_jw_finish(&w), 0);
	ph_arena_init(&a, 1 << 16, SIZE_MAX);
	CHECK_INT(ph_json_parse(&a, out.buf, out.len, &root, NULL), 0);
	ro = ph_json_get(root, "ruled_out");
	CHECK_INT(ro->n, 2); /* main thread outside slices: ruled in */
	CHECK(find_by(ro, "cause",
		      "a low CPU frequency: the trace has cpufreq, and the "
		      "main thread ran under 10 ms on a CPU below half its "
		      "peak frequency"));
	CHECK(find_by(ro, "cause",
		      "thermal throttling: the trace has cooling devices, and "
		      "none went above state 0 during the window"));
	env = ph_json_get(root, "environment");
	CHECK(ph_json_streq(ph_json_get(env, "summary"),
			    "CPU at 2000 MHz on 1 CPU; not throttled (1 "
			    "cooling device at 0), hottest zone cpu 40.0 C; "
			    "RSS not in the trace"));
	CHECK_INT(ph_json_get(env, "process_memory")->n, 0);
	CHECK(ph_json_get(env, "process_memory_note") != NULL);
	CHECK(strstr(out.buf, "\"process memory: not in the trace (no "
			      "process_stats memory counters for this "
			      "process)\"") != NULL);
	ph_arena_release(&a);
	ph_buf_release(&out);
	ph_trace_release(&t);
}

/*
 * The verbs' engines print to the FILE they are given (the bench and the
 * tests pass their own), from an options struct: the doctor writes its
 * fixture and reports, query reads the fixture back as CSV.
 */
void test_trace__engines_print_to_their_file(void)
{
	char dir[] = "/tmp/ph-test-engines-XXXXXX", path[200];
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/fixture.pftrace", dir);
	f = open_memstream(&text, &len);
	CHECK(f != NULL);
	CHECK_INT(ph_trace_cmd_doctor(
			  &(struct ph_trace_doctor_opts){ .json = true,
							  .write = path },
			  f),
		  0);
	fclose(f);
	CHECK(len > 0 && text[0] == '{');
	CHECK(strstr(text, "\"healthy\":true") != NULL);
	free(text);

	text = NULL;
	f = open_memstream(&text, &len);
	CHECK(f != NULL);
	CHECK_INT(ph_trace_cmd_query(
			  &(struct ph_trace_query_opts){
				  .path = path,
				  .sql = "SELECT pid FROM process WHERE "
					 "name = 'com.example.doctor'",
				  .mode = PH_TRACE_ROWS_CSV },
			  f),
		  0);
	fclose(f);
	CHECK_STR(text, "pid\n1000\n");
	free(text);
	unlink(path);
	rmdir(dir);
}
