/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the trace engine's project config (porthole-trace.yml),
 * its environment phase (thermal), the main_thread_stall detector, the
 * scope by pid, and the tables' lazy NULL fill.
 */
#include "ph_common.h"
#include "harness.h"
#include "trace/trace.h"
#include "trace/trace_detect.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

#include <sys/stat.h>

static int write_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(s, f);
	return fclose(f);
}

/* A set with one detector, as the shipped ones declare parameters. */
static void demo_set(struct ph_detset *s)
{
	static const char det[] =
		"-- @id demo\n-- @param: min_ms = 16\n"
		"-- @param: label = 'x'\n-- @param: on = true\n"
		"SELECT {{min_ms}} AS location\n";
	char err[256];

	memset(s, 0, sizeof(*s));
	s->d = calloc(1, sizeof(*s->d));
	if (s->d && !ph_detector_parse(&s->d[0], det, sizeof(det) - 1,
				       "demo.sql", err, sizeof(err)))
		s->n = 1;
}

/* The config's error for text, or "" when it was accepted. */
static const char *config_error(const char *text)
{
	static char err[512];
	char path[400];
	struct ph_detset s;
	const char *dir = ph_test_tmpdir();

	err[0] = 0;
	if (!dir)
		return "no tmpdir";
	snprintf(path, sizeof(path), "%s/porthole-trace.yml", dir);
	if (write_text(path, text))
		return "cannot write";
	demo_set(&s);
	if (!ph_detset_load_config(&s, path, false, err, sizeof(err)))
		err[0] = 0;
	ph_detset_release(&s);
	/* the path differs per test: keep what follows it */
	return strstr(err, ".yml:") ? strstr(err, ".yml:") + 5 : err;
}

void test_trace__config_errors_name_the_place(void)
{
	/* line:column (byte offset) of the offending node, then why */
	CHECK_STR(config_error("params:\n  demo: { min_ms: \"20\" }\n"),
		  "2:19 (byte 26): demo.min_ms wants a number, not the string "
		  "'20'");
	CHECK_STR(config_error("params:\n  nope: { min_ms: 20 }\n"),
		  "2:3 (byte 10): unknown detector 'nope'");
	CHECK_STR(config_error("params:\n  demo: { max_ms: 20 }\n"),
		  "2:11 (byte 18): unknown parameter 'demo.max_ms'");
	CHECK_STR(config_error("params:\n  min_ms: 1\n  min_ms: 2\n"),
		  "3:3 (byte 22): 'min_ms' given twice");
	CHECK_STR(config_error("parms: {}\n"),
		  "1:1 (byte 0): unknown key 'parms' (the one key is params)");
	CHECK_STR(config_error("- a\n"), "1:1 (byte 0): the config is a "
					 "mapping with one key, params");
	CHECK_STR(config_error("params: 5\n"),
		  "1:9 (byte 8): params wants a mapping (detector: {param: "
		  "value} or param: value)");
	CHECK_STR(config_error("params:\n  min_ms: [1]\n"),
		  "2:11 (byte 18): 'min_ms' wants a single value here");
	CHECK_STR(config_error("params: {}\n---\nparams: {}\n"),
		  "3:1 (byte 15): a second document; the config is one");
	/* a YAML syntax error: libyaml's own mark */
	CHECK_STR(config_error("params:\n  demo: { min_ms: 20\n"),
		  "3:1 (byte 29): did not find expected ',' or '}' while "
		  "parsing a flow mapping");
	/* numbers are plain decimals: nan, hex and blanks are not */
	CHECK(strstr(config_error("params:\n  min_ms: nan\n"),
		     "wants a number") != NULL);
	CHECK(strstr(config_error("params:\n  min_ms: 0x10\n"),
		     "wants a number") != NULL);
	CHECK(strstr(config_error("params:\n  on: yes\n"), "wants a bool") !=
	      NULL);
	/* fine: empty, empty params, flat and per detector, quoted string */
	CHECK_STR(config_error(""), "");
	CHECK_STR(config_error("params:\n"), "");
	CHECK_STR(config_error("params:\n  min_ms: 2.5e1\n  demo: { label: "
			       "'it''s', on: false }\n"),
		  "");
}

void test_trace__config_applies_in_order(void)
{
	struct ph_detset s;
	const char *dir = ph_test_tmpdir(), *sets[] = { "demo.min_ms=30" };
	char path[600], dets[400], err[512];
	struct ph_buf out = PH_BUF_INIT(1 << 16);

	CHECK(dir != NULL);
	snprintf(dets, sizeof(dets), "%s/det", dir);
	CHECK_INT(mkdir(dets, 0700), 0);
	snprintf(path, sizeof(path), "%s/demo.sql", dets);
	CHECK_INT(write_text(path, "-- @id demo\n-- @param: min_ms = 16\n"
				   "-- @param: other = 1\n"
				   "SELECT {{min_ms}} AS location\n"),
		  0);
	snprintf(path, sizeof(path), "%s/porthole-trace.yml", dir);
	CHECK_INT(write_text(path, "params:\n  min_ms: 20\n"), 0);
	/* the config, then --set: the later wins */
	CHECK_INT(ph_detset_prepare(&s, dets, path, sets, 1, err, sizeof(err)),
		  0);
	CHECK_INT(ph_detector_render(&s.d[0], s.d[0].sql, &out), 0);
	CHECK(strstr(out.buf, "SELECT 30 AS location") != NULL);
	CHECK(s.d[0].params[0].overridden);
	CHECK(!s.d[0].params[1].overridden);
	ph_detset_release(&s);
	/* a config named on the command line must exist */
	snprintf(path, sizeof(path), "%s/missing.yml", dir);
	CHECK_INT(ph_detset_prepare(&s, dets, path, NULL, 0, err, sizeof(err)),
		  PH_ENOENT);
	CHECK(strstr(err, "missing.yml") != NULL);
	/* a bad --set after a good config: refused, set released */
	sets[0] = "demo.min_ms=abc";
	CHECK_INT(ph_detset_prepare(&s, dets, NULL, sets, 1, err, sizeof(err)),
		  PH_EINVAL);
	CHECK_INT(s.n, 0);
	ph_buf_release(&out);
}

/* --- thermal -------------------------------------------------------------- */

static void pb_varint(struct ph_buf *b, uint64_t v)
{
	do {
		uint8_t c = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));

		if (ph_buf_add(b, &c, 1))
			return; /* the test then fails on the trace */
		v >>= 7;
	} while (v);
}

static void pb_key(struct ph_buf *b, uint32_t id, int wt)
{
	pb_varint(b, (uint64_t)id << 3 | (uint64_t)wt);
}

static void pb_bytes(struct ph_buf *b, uint32_t id, const void *p, size_t n)
{
	pb_key(b, id, 2);
	pb_varint(b, n);
	if (ph_buf_add(b, p, n))
		return;
}

/* A Trace of one ftrace bundle on CPU 0 with one event (kind, payload). */
static void ftrace_packet(struct ph_buf *trace, uint64_t ts, uint32_t kind,
			  const struct ph_buf *payload)
{
	struct ph_buf ev = PH_BUF_INIT(1 << 16), bundle = PH_BUF_INIT(1 << 16),
		      pkt = PH_BUF_INIT(1 << 16);

	pb_key(&ev, 1, 0);
	pb_varint(&ev, ts);
	pb_bytes(&ev, kind, payload->buf, payload->len);
	pb_key(&bundle, 1, 0);
	pb_varint(&bundle, 0);
	pb_bytes(&bundle, 2, ev.buf, ev.len);
	pb_bytes(&pkt, 1, bundle.buf, bundle.len);
	pb_bytes(trace, 1, pkt.buf, pkt.len);
	ph_buf_release(&ev);
	ph_buf_release(&bundle);
	ph_buf_release(&pkt);
}

void test_trace__thermal_from_protobuf(void)
{
	struct ph_buf tr = PH_BUF_INIT(1 << 20), p = PH_BUF_INIT(1 << 16);
	struct ph_trace t;
	sqlite3 *db = NULL;

	/* thermal_temperature 341 {temp 2, thermal_zone 4}; a negative
	 * temperature (int32 on the wire as a 10-byte varint) stays one */
	pb_key(&p, 2, 0);
	pb_varint(&p, 41500);
	pb_bytes(&p, 4, "soc", 3);
	ftrace_packet(&tr, 1000, 341, &p);
	ph_buf_reset(&p);
	pb_key(&p, 2, 0);
	pb_varint(&p, (uint64_t)(int64_t)-5000);
	pb_bytes(&p, 4, "battery", 7);
	ftrace_packet(&tr, 2000, 341, &p);
	/* cdev_update 342 {target 1, type 2} */
	ph_buf_reset(&p);
	pb_key(&p, 1, 0);
	pb_varint(&p, 3);
	pb_bytes(&p, 2, "thermal-cpufreq-0", 17);
	ftrace_packet(&tr, 3000, 342, &p);
	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, tr.buf, tr.len), 0);
	CHECK_INT(ph_trace_stat_get(&t, "ftrace.thermal_temperature"), 2);
	CHECK_INT(ph_trace_stat_get(&t, "ftrace.cdev_update"), 1);
	CHECK_INT(ph_trace_sql_open(&t, &db), 0);
	CHECK_INT(ph_tsql_int(db,
			      "SELECT c.value FROM counter c JOIN "
			      "counter_track k ON c.track_id = k.id WHERE "
			      "k.name = 'soc Temperature' AND c.ts = 1000",
			      -1),
		  41500);
	CHECK_INT(ph_tsql_int(db,
			      "SELECT c.value FROM counter c JOIN "
			      "counter_track k ON c.track_id = k.id WHERE "
			      "k.name = 'battery Temperature'",
			      -1),
		  -5000);
	CHECK_INT(ph_tsql_int(db,
			      "SELECT c.value FROM counter c JOIN "
			      "counter_track k ON c.track_id = k.id WHERE "
			      "k.name = 'thermal-cpufreq-0 Cooling Device' AND "
			      "k.upid IS NULL",
			      -1),
		  3);
	sqlite3_close(db);
	ph_trace_release(&t);
	ph_buf_release(&tr);
	ph_buf_release(&p);
}

/* The environment section of a trace over [1 s, 2 s] of process proc:
 * the JSON object into js, the Markdown lines into md. */
static int env_of(const char *txt, size_t n, const char *proc,
		  struct ph_buf *js, struct ph_buf *md)
{
	struct ph_trace t;
	struct ph_tscope scope = PH_TSCOPE_INIT;
	struct ph_tctx c;
	struct ph_jw w;
	sqlite3 *db = NULL;
	char err[256];
	int rc;

	ph_buf_reset(js);
	ph_buf_reset(md);
	rc = ph_trace_init(&t);
	scope.process = proc;
	scope.from = 1000000000;
	scope.to = 2000000000;
	if (!rc)
		rc = ph_trace_load_mem(&t, txt, n);
	if (!rc)
		rc = ph_trace_sql_open(&t, &db);
	if (!rc)
		rc = ph_tctx_open(db, &t, &scope, &c, err, sizeof(err));
	if (!rc) {
		ph_jw_init(&w, js);
		ph_jw_obj_begin(&w);
		ph_trace_env_phase(db, &w, md, NULL);
		ph_jw_obj_end(&w);
		rc = ph_jw_finish(&w);
	}
	if (!rc)
		rc = ph_buf_addch(md, '\0');
	sqlite3_close(db);
	ph_trace_release(&t);
	return rc;
}

#define SW_IN                                                            \
	"  <idle>-0  (-----) [000] d..2.  1.000000: sched_switch: "      \
	"prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> " \
	"next_comm=app next_pid=100 next_prio=120\n"
#define SW_OUT                                                       \
	"  app-100  (  100) [000] d..2.  2.000000: sched_switch: "   \
	"prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> " \
	"next_comm=swapper/0 next_pid=0 next_prio=120\n"

void test_trace__environment_thermal(void)
{
	static const char hot[] =
		"# trace_clock: mono\n"
		"  <idle>-0  (-----) [000] d..2.  0.500000: "
		"thermal_temperature: thermal_zone=cpu id=0 temp_prev=0 "
		"temp=40000\n" SW_IN
		"  <idle>-0  (-----) [001] d..2.  1.500000: "
		"thermal_temperature: thermal_zone=cpu id=0 temp_prev=40000 "
		"temp=50000\n"
		"  <idle>-0  (-----) [001] d..2.  1.600000: cdev_update: "
		"type=fan target=2\n"
		"  <idle>-0  (-----) [001] d..2.  3.000000: "
		"thermal_temperature: thermal_zone=cpu id=0 temp_prev=50000 "
		"temp=90000\n" SW_OUT;
	static const char none[] = "# trace_clock: mono\n" SW_IN SW_OUT;
	struct ph_buf js = PH_BUF_INIT(1 << 20), md = PH_BUF_INIT(1 << 20);

	CHECK_INT(env_of(hot, sizeof(hot) - 1, "app", &js, &md), 0);
	/* the value in force at the window's start (40 C, sampled before
	 * it) and the one inside; the 90 C after the window is not */
	CHECK(strstr(md.buf, "- thermal zone cpu: 45.0 C average "
			     "(40.0..50.0)\n") != NULL);
	CHECK(strstr(md.buf, "- cooling device fan: state up to 2 "
			     "(throttling), above 0 for 400.0 ms\n") != NULL);
	CHECK(strstr(js.buf, "\"zone\":\"cpu\",\"samples\":2") != NULL);
	CHECK(strstr(js.buf, "\"summary\":\"CPU frequency not in the trace; "
			     "throttled: fan up to state 2 for 400.0 ms, "
			     "hottest zone cpu 50.0 C; RSS not in the "
			     "trace\"") != NULL);
	CHECK_INT(env_of(none, sizeof(none) - 1, "app", &js, &md), 0);
	CHECK(strstr(md.buf, "- thermal: not in the trace") != NULL);
	CHECK(strstr(js.buf, "\"thermal\":[]") != NULL);
	CHECK(strstr(js.buf, "\"thermal_note\"") != NULL);
	CHECK(strstr(js.buf, "no thermal data in the trace") != NULL);
	ph_buf_release(&js);
	ph_buf_release(&md);
}

/* --- main_thread_stall, by pid -------------------------------------------- */

#define SW(t, cpu, pc, pp, st, nc, np, who, tg)                         \
	"  " who "  (" tg ") [00" cpu "] d..2.  " t ": sched_switch: "  \
	"prev_comm=" pc " prev_pid=" pp " prev_prio=120 prev_state=" st \
	" ==> next_comm=" nc " next_pid=" np " next_prio=120\n"

void test_trace__main_thread_stall_by_pid(void)
{
	/* two processes named app: 100 sleeps often, 200 is busy for 300 ms
	 * (Running, preempted, runnable, Running) without sleeping */
	static const char txt[] = "# trace_clock: mono\n" SW(
		"1.000000", "0", "swapper/0", "0", "R", "app", "100",
		"<idle>-0",
		"-----") SW("1.010000", "0", "app", "100", "S", "app", "200",
			    "app-100",
			    "  100") SW("1.110000", "0", "app", "200", "R+",
					"kworker", "7", "app-200",
					"  200") SW("1.130000", "0", "kworker",
						    "7", "S", "app", "200",
						    "kworker-7", "    7")
		SW("1.310000", "0", "app", "200", "S", "swapper/0", "0",
		   "app-200",
		   "  200") "  <idle>-0  (-----) [000] d..2.  1.400000: sched_waking: "
			    "comm=app pid=200 prio=120 target_cpu=000\n" SW(
				    "1.450000", "0", "swapper/0", "0", "R",
				    "app", "200", "<idle>-0", "-----")
				    SW("1.460000", "0", "app", "200", "S",
				       "swapper/0", "0", "app-200", "  200");
	struct ph_trace t;
	struct ph_tscope scope = PH_TSCOPE_INIT;
	struct ph_tctx c;
	struct ph_detset ds;
	struct ph_detrun r;
	sqlite3 *db = NULL;
	char err[256];
	size_t i;

	CHECK_INT(ph_detset_load(&ds, "detectors"), 0);
	for (i = 0; i < ds.n && strcmp(ds.d[i].id, "main_thread_stall"); i++)
		;
	CHECK(i < ds.n);
	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, txt, sizeof(txt) - 1), 0);
	CHECK_INT(ph_trace_sql_open(&t, &db), 0);
	scope.process = "200";
	CHECK_INT(ph_tctx_open(db, &t, &scope, &c, err, sizeof(err)), 0);
	CHECK_INT(c.pid, 200);
	memset(&r, 0, sizeof(r));
	r.d = &ds.d[i];
	ph_detrun_run(db, &r);
	CHECK(r.ok);
	CHECK_INT(r.nrows, 1);
	/* 1.010 .. 1.310: 280 ms on a CPU, 20 ms runnable; the 60 ms after
	 * the waking at 1.400 are below min_ms */
	CHECK(strstr(r.rows.buf, "\"location\":\"main thread, no slice\"") !=
	      NULL);
	CHECK(strstr(r.rows.buf, "\"self_ms\":280.0,") != NULL);
	CHECK(strstr(r.rows.buf, "\"max_ms\":300.0,") != NULL);
	CHECK(strstr(r.rows.buf, "\"detail\":\"tid 200: 1 stretch(es)") !=
	      NULL);
	CHECK(strstr(r.rows.buf, "from ts 1010000000;") != NULL);
	CHECK_INT((int64_t)r.covered_ms, 300);
	ph_detrun_release(&r);
	/* the other app, by pid: never busy for 100 ms */
	scope.process = "100";
	CHECK_INT(ph_tctx_open(db, &t, &scope, &c, err, sizeof(err)), 0);
	CHECK_INT(c.pid, 100);
	memset(&r, 0, sizeof(r));
	r.d = &ds.d[i];
	ph_detrun_run(db, &r);
	CHECK(r.ok);
	CHECK_INT(r.nrows, 0);
	ph_detrun_release(&r);
	sqlite3_close(db);
	ph_trace_release(&t);
	ph_detset_release(&ds);
}

/* main_thread_stall's rows on a loaded text trace, for process "app". */
static int stall_rows(const char *txt, size_t n, struct ph_detrun *r)
{
	struct ph_trace t;
	struct ph_tscope scope = PH_TSCOPE_INIT;
	struct ph_tctx c;
	struct ph_detset ds;
	sqlite3 *db = NULL;
	char err[256];
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = ph_detset_load(&ds, "detectors")))
		return rc;
	for (i = 0; i < ds.n && strcmp(ds.d[i].id, "main_thread_stall"); i++)
		;
	rc = ph_trace_init(&t);
	scope.process = "app";
	if (!rc)
		rc = i < ds.n ? ph_trace_load_mem(&t, txt, n) : PH_ENOENT;
	if (!rc)
		rc = ph_trace_sql_open(&t, &db);
	if (!rc)
		rc = ph_tctx_open(db, &t, &scope, &c, err, sizeof(err));
	if (!rc) {
		r->d = &ds.d[i];
		ph_detrun_run(db, r);
		r->d = NULL; /* the set dies here */
	}
	sqlite3_close(db);
	ph_trace_release(&t);
	ph_detset_release(&ds);
	return rc;
}

void test_trace__main_thread_stall_named_after_where_it_went(void)
{
	/*
	 * The main thread (100) runs 0.900-0.940, sleeps, and is busy
	 * without a break 1.000-1.300 (preempted 1.100-1.120).  That
	 * stretch begins inside `parse` (opened at 0.930, closed at 1.050:
	 * 50 ms of the stretch), then `layout` 1.060-1.290 (230 ms), and 20
	 * ms in no slice.  Named after the slice it began in, it would be
	 * `parse`; it spent most of its time in `layout`.
	 */
	static const char txt[] =
		"# trace_clock: mono\n"
		"  <idle>-0  (-----) [000] d..2.  0.900000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  (  100) [000] .....  0.930000: tracing_mark_write: B|100|parse\n"
		"  app-100  (  100) [000] d..2.  0.940000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
		"  <idle>-0  (-----) [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  (  100) [000] .....  1.050000: tracing_mark_write: E|100\n"
		"  app-100  (  100) [000] .....  1.060000: tracing_mark_write: B|100|layout\n"
		"  app-100  (  100) [000] d..2.  1.100000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=R+ ==> next_comm=kworker next_pid=7 next_prio=120\n"
		"  kworker-7  (    7) [000] d..2.  1.120000: sched_switch: prev_comm=kworker prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  (  100) [000] .....  1.290000: tracing_mark_write: E|100\n"
		"  app-100  (  100) [000] d..2.  1.300000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
		"  <idle>-0  (-----) [000] d..2.  1.500000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n";
	struct ph_detrun r;

	CHECK_INT(stall_rows(txt, sizeof(txt) - 1, &r), 0);
	CHECK(r.ok);
	CHECK_INT(r.nrows, 1);
	CHECK(strstr(r.rows.buf,
		     "\"location\":\"layout\",\"count\":1,"
		     "\"self_ms\":280.0,\"total_ms\":300.0,"
		     "\"max_ms\":300.0,\"covered_ms\":300.0,") != NULL);
	CHECK(strstr(r.rows.buf,
		     "\"detail\":\"tid 100: 1 stretch(es) of at least 100 ms "
		     "without sleeping, the longest 300.0 ms from ts "
		     "1000000000; 93% of it on a CPU, the rest runnable; "
		     "time by top-level slice: layout 230.0 ms, parse 50.0 "
		     "ms, no slice 20.0 ms\"") != NULL);
	ph_detrun_release(&r);
}

/* --- tables ----------------------------------------------------------------
 */

void test_trace__table_rows_are_null_past_reserve_and_trim(void)
{
	struct ph_trace t;
	struct ph_table *tb;
	int64_t r;

	CHECK_INT(ph_trace_init(&t), 0);
	tb = &t.tables[PH_T_SLICE];
	CHECK_INT(ph_table_reserve(tb, 100000), 0);
	CHECK(tb->cap >= 100000);
	for (int i = 0; i < 5000; i++) {
		r = ph_table_add(tb);
		CHECK_INT(r, i);
		CHECK_INT(ph_col_i64(tb, SL_DUR)[r], PH_NULL_I64);
		CHECK_INT(ph_col_i32(tb, SL_DEPTH)[r], PH_NULL_I32);
		CHECK_INT(ph_col_str(tb, SL_NAME)[r], 0);
		ph_col_i64(tb, SL_DUR)[r] = i;
	}
	ph_table_trim(tb);
	CHECK(tb->cap < 100000 && tb->cap >= 5000);
	/* growing again after the trim still hands out NULL rows */
	for (int i = 5000; i < 9000; i++) {
		r = ph_table_add(tb);
		CHECK_INT(r, i);
		CHECK_INT(ph_col_i64(tb, SL_DUR)[r], PH_NULL_I64);
		CHECK_INT(ph_col_i64(tb, SL_PARENT)[r], PH_NULL_I64);
	}
	CHECK_INT(ph_col_i64(tb, SL_DUR)[4999], 4999);
	ph_trace_release(&t);
}
