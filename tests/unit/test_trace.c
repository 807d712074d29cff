/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the trace engine: counts on the real fixtures (README
 * "counted" facts, and where we disagree, which side is right), the
 * invariants of the derived tables, atrace parsing, detectors.
 */
#include "ph_common.h"
#include "harness.h"
#include "trace/trace.h"
#include "trace/trace_detect.h"
#include "trace/trace_sql.h"

#include <zlib.h>

static struct ph_trace tr;

static int load(const char *path)
{
	int rc;

	ph_trace_release(&tr);
	rc = ph_trace_init(&tr);
	return rc ? rc : ph_trace_load_file(&tr, path);
}

static int64_t q1(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -12345;

	if (ph_trace_sql_open(&tr, &db))
		return v;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	} else {
		fprintf(stderr, "sql: %s\n", sqlite3_errmsg(db));
	}
	sqlite3_close(db);
	return v;
}

/* Every slice's depth is its parent's + 1; thread_state of one thread
 * never overlaps; sched of one CPU never overlaps. */
static void check_invariants(void)
{
	CHECK_INT(q1("SELECT COUNT(*) FROM slice c JOIN slice p ON "
		     "c.parent_id = p.id WHERE c.depth != p.depth + 1"),
		  0);
	CHECK_INT(q1("SELECT COUNT(*) FROM slice WHERE parent_id IS NULL "
		     "AND depth != 0 AND cookie IS NULL"),
		  0);
	CHECK_INT(q1("SELECT COUNT(*) FROM (SELECT utid, ts, dur, LEAD(ts) "
		     "OVER (PARTITION BY utid ORDER BY ts) AS nts FROM "
		     "thread_state) WHERE nts IS NOT NULL AND (dur < 0 OR "
		     "ts + dur > nts)"),
		  0);
	CHECK_INT(q1("SELECT COUNT(*) FROM (SELECT cpu, ts, dur, LEAD(ts) "
		     "OVER (PARTITION BY cpu ORDER BY ts) AS nts FROM sched) "
		     "WHERE nts IS NOT NULL AND ts + dur > nts"),
		  0);
}

void test_trace__android12_counts(void)
{
	CHECK_INT(load(FIXTURE(
			  "perfetto/perfetto_android12_cpuschedstack.pftrace")),
		  0);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.sched_switch"), 23536);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.sched_waking"), 13907);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.sched_wakeup"), 13907);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.cpu_idle"), 12853);
	CHECK_INT(tr.tables[PH_T_SCHED].rows, 23536);
	CHECK_INT(ph_trace_stat_get(&tr, "frame_timeline.expected_display"),
		  90);
	CHECK_INT(ph_trace_stat_get(&tr, "frame_timeline.actual_display"), 90);
	CHECK_INT(ph_trace_stat_get(&tr, "frame_timeline.expected_surface"),
		  87);
	CHECK_INT(ph_trace_stat_get(&tr, "frame_timeline.actual_surface"), 87);
	CHECK_INT(ph_trace_stat_get(&tr, "frame_timeline.frame_end"), 353);
	CHECK_INT(tr.tables[PH_T_AFRAME].rows, 177);
	CHECK_INT(ph_trace_stat_get(&tr, "perf_sample"), 7977);
	/* README (counted): 265 processes / 1354 threads.  The trace holds
	 * two process_tree packets whose entries add to 266 / 1356 records;
	 * the distinct pids are what the README counted. */
	CHECK_INT(q1("SELECT COUNT(DISTINCT pid) FROM process WHERE pid > 0 "
		     "AND cmdline IS NOT NULL"),
		  265);
	CHECK(tr.tables[PH_T_LOG].rows > 0);
	CHECK_STR(tr.clock_name, "BOOTTIME");
	/* the jank bitmasks the README saw: 4, 68, 132, 256, 512 */
	CHECK(q1("SELECT COUNT(*) FROM actual_frame_timeline_slice WHERE "
		 "jank_type = 'Prediction Error, App Deadline Missed'") > 0);
	CHECK(q1("SELECT COUNT(*) FROM actual_frame_timeline_slice WHERE "
		 "jank_type = 'SurfaceFlinger Stuffing'") > 0);
	/* 354 frame starts, 353 frame_end in the file: one actual surface
	 * frame never ends and stays open (dur -1), as the README's counts
	 * imply */
	CHECK_INT(q1("SELECT COUNT(*) FROM actual_frame_timeline_slice "
		     "WHERE dur < 0 AND is_surface"),
		  1);
	check_invariants();
}

void test_trace__test_trace_counts(void)
{
	CHECK_INT(load(FIXTURE("perfetto/test_trace.perfetto-trace")), 0);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.sched_switch"), 15267);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.sched_wakeup"), 8743);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.cpu_idle"), 11687);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.cpu_frequency"), 168);
	CHECK_INT(q1("SELECT COUNT(*) FROM counter c JOIN cpu_counter_track "
		     "t ON c.track_id = t.id WHERE t.name = 'cpufreq'"),
		  168);
	check_invariants();
}

void test_trace__memory_counts(void)
{
	CHECK_INT(load(FIXTURE("perfetto/androidBasicMemory.pftrace")), 0);
	CHECK_INT(ph_trace_stat_get(&tr, "process_stats"), 46);
	CHECK_INT(ph_trace_stat_get(&tr, "sys_stats"), 45);
	CHECK_INT(tr.tables[PH_T_SCHED].rows, 0);
	CHECK(q1("SELECT COUNT(*) FROM counter c JOIN process_counter_track "
		 "t ON c.track_id = t.id WHERE t.name = 'mem.rss'") > 0);
}

void test_trace__chrome_gzip_track_event(void)
{
	CHECK_INT(load(FIXTURE("perfetto/chrome.pftrace")), 0);
	CHECK_INT(ph_trace_stat_get(&tr, "track_descriptor"), 864);
	/* README (counted): 292k track_event; BEGIN 142164 + INSTANT 3969
	 * = 146133 slices.  We make 146127: the 6 missing begins sit on
	 * tracks whose descriptor never appears in the file. */
	CHECK(tr.tables[PH_T_SLICE].rows >= 146100 &&
	      tr.tables[PH_T_SLICE].rows <= 146133);
	CHECK(q1("SELECT COUNT(*) FROM slice WHERE name IS NOT NULL") > 140000);
	check_invariants();
}

void test_trace__compact_sched(void)
{
	CHECK_INT(
		load(FIXTURE(
			"perfetto/simple_perfetto_2026-03-04_23-32_14ce.pftrace")),
		0);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.compact_sched_switch"), 2747);
	CHECK_INT(tr.tables[PH_T_SCHED].rows, 2747);
	check_invariants();
	CHECK_INT(
		load(FIXTURE(
			"perfetto/simple_perfetto_2026-03-05_00-54_1338.pftrace")),
		0);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.compact_sched_switch"), 1612);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.print"), 1771);
	CHECK_INT(tr.tables[PH_T_SLICE].rows, 805);
	CHECK_INT(tr.tables[PH_T_COUNTER].rows, 161);
	check_invariants();
}

void test_trace__atrace_async(void)
{
	CHECK_INT(
		load(FIXTURE(
			"perfetto/simple_perfetto_2026-03-09_23-28_b8c6.pftrace")),
		0);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.compact_sched_switch"), 24641);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.print"), 6408);
	CHECK_INT(ph_trace_stat_get(&tr, "atrace_events"), 6408);
	/* 2911 B slices + 2 G async slices; C 582 counters */
	CHECK_INT(tr.tables[PH_T_SLICE].rows, 2913);
	CHECK_INT(tr.tables[PH_T_COUNTER].rows, 582);
	CHECK_INT(q1("SELECT COUNT(*) FROM slice WHERE cookie IS NOT NULL "
		     "AND dur >= 0"),
		  2);
	check_invariants();
}

void test_trace__systrace_html_zip(void)
{
	CHECK_INT(
		load(FIXTURE(
			"systrace/trace_input_blog_launcher_scroll.html.zip")),
		0);
	CHECK_STR(tr.format, "systrace");
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.sched_switch"), 16397);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.print"), 10444);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.cpu_frequency"), 268);
	/* B 4690 + S 36, and the binder slices: 458 binder_transaction
	 * lines (counted: 190 calls, 78 one-way, 190 replies), each call a
	 * "binder transaction" and a "binder reply", each one-way call an
	 * instant on either side */
	CHECK_INT(tr.tables[PH_T_SLICE].rows, 4726 + 2 * 190 + 2 * 78);
	CHECK_INT(ph_trace_stat_get(&tr, "ftrace.binder_transaction"), 458);
	CHECK_INT(q1("SELECT COUNT(*) FROM slice WHERE name = 'binder "
		     "transaction'"),
		  190);
	CHECK_INT(q1("SELECT COUNT(*) FROM slice WHERE name = 'binder "
		     "transaction async' AND dur = 0"),
		  78);
	/* C 839 */
	CHECK_INT(q1("SELECT COUNT(*) FROM counter c JOIN track t ON "
		     "c.track_id = t.id WHERE t.type = 'counter'"),
		  839);
	/* E 4840 - B 4690 = 150 ends whose begins predate the trace */
	CHECK(ph_trace_stat_get(&tr, "slice_end_without_begin") >= 150);
	CHECK(ph_trace_stat_get(&tr, "systrace.process_dump") > 0);
	CHECK(q1("SELECT COUNT(*) FROM process WHERE name = "
		 "'surfaceflinger'") >= 1);
	check_invariants();
}

void test_trace__systrace_edge_cases(void)
{
	CHECK_INT(load(FIXTURE("systrace/parser__atrace__bad_print.systrace")),
		  0);
	CHECK_INT(tr.tables[PH_T_SLICE].rows, 1);
	CHECK(ph_trace_stat_get(&tr, "ftrace_text_unparsed_lines") == 2);
	CHECK_INT(
		load(FIXTURE(
			"systrace/parser__parsing__sched_blocked_systrace.systrace")),
		0);
	CHECK_INT(q1("SELECT COUNT(*) FROM thread_state WHERE state = 'D' "
		     "AND blocked_function = '__filemap_fdatawait_range' "
		     "AND io_wait = 1"),
		  1);
	CHECK_INT(q1("SELECT COUNT(*) FROM thread_state WHERE "
		     "blocked_function = 'worker_thread' AND io_wait = 0"),
		  1);
	CHECK_INT(
		load(FIXTURE(
			"systrace/parser__process_tracking__unknown_thread_name.systrace")),
		0);
	CHECK_INT(q1("SELECT COUNT(*) FROM thread WHERE tid = 19999 AND "
		     "name = 'real_name'"),
		  1);
}

void test_trace__atrace_parse(void)
{
	struct ph_atrace a;

	CHECK_INT(ph_atrace_parse("B|12|draw|x", 11, &a), 0);
	CHECK_INT(a.op, PH_AT_B);
	CHECK_INT(a.tgid, 12);
	CHECK_INT(a.name_len, 6);
	CHECK_INT(ph_atrace_parse("E|12\n", 5, &a), 0);
	CHECK_INT(a.op, PH_AT_E);
	CHECK_INT(ph_atrace_parse("E", 1, &a), 0);
	CHECK_INT(ph_atrace_parse("C|5|q|42", 8, &a), 0);
	CHECK(a.value == 42);
	CHECK_INT(ph_atrace_parse("S|5|io|77", 9, &a), 0);
	CHECK_INT(a.cookie, 77);
	CHECK_INT(ph_atrace_parse("G|5|trk|nm|9", 12, &a), 0);
	CHECK_INT(a.op, PH_AT_G);
	CHECK_INT(ph_atrace_parse("H|5|trk|9", 9, &a), 0);
	CHECK_INT(a.cookie, 9);
	CHECK_INT(ph_atrace_parse("N|5|trk|nm", 10, &a), 0);
	CHECK_INT(ph_atrace_parse("C|5|q|notanumber", 16, &a), PH_ECORRUPT);
	CHECK_INT(ph_atrace_parse("B|x|y", 5, &a), PH_ECORRUPT);
	CHECK_INT(ph_atrace_parse("trace_event_clock_sync: x", 25, &a),
		  PH_ECORRUPT);
	CHECK_INT(ph_atrace_parse("", 0, &a), PH_ECORRUPT);
}

void test_trace__truncated_proto(void)
{
	struct ph_buf b = PH_BUF_INIT(1 << 26);

	CHECK_INT(ph_buf_read_file(
			  &b, FIXTURE("perfetto/test_trace.perfetto-trace")),
		  0);
	ph_trace_release(&tr);
	CHECK_INT(ph_trace_init(&tr), 0);
	CHECK_INT(ph_trace_load_mem(&tr, b.buf, b.len / 2), PH_ECORRUPT);
	CHECK(tr.truncated);
	CHECK(tr.err.offset > 0 && tr.err.offset <= b.len / 2);
	CHECK(tr.tables[PH_T_SCHED].rows > 1000);
	check_invariants();
	ph_buf_release(&b);
}

/* gzip of head then n bytes of fill: a bomb when n is large. */
static void gzip_bomb(struct ph_buf *out, const char *head, int fill, size_t n)
{
	static uint8_t chunk[1 << 16];
	z_stream z;
	int flush;

	memset(chunk, fill, sizeof(chunk));
	memset(&z, 0, sizeof(z));
	CHECK_INT(deflateInit2(&z, 9, Z_DEFLATED, 16 + 15, 9,
			       Z_DEFAULT_STRATEGY),
		  Z_OK);
	z.next_in = (Bytef *)head;
	z.avail_in = (uInt)strlen(head);
	do {
		if (!z.avail_in) {
			size_t k = n < sizeof(chunk) ? n : sizeof(chunk);

			n -= k;
			z.next_in = chunk;
			z.avail_in = (uInt)k;
		}
		flush = n ? Z_NO_FLUSH : Z_FINISH;
		do {
			CHECK_INT(ph_buf_grow(out, 1 << 16), 0);
			z.next_out = (Bytef *)out->buf + out->len;
			z.avail_out = 1 << 16;
			deflate(&z, flush);
			ph_buf_setlen(out, out->len + (1 << 16) - z.avail_out);
		} while (z.avail_out == 0);
	} while (flush != Z_FINISH);
	deflateEnd(&z);
}

/*
 * A gzip'd text trace that inflates 1000:1 (the 2 MB of zeros
 * that became 2 GB, smaller) is refused at the ratio cap: the lines
 * before the refusal are read, and the trace says it was read in part.
 */
void test_trace__gzip_bomb_is_read_in_part(void)
{
	struct ph_buf gz = PH_BUF_INIT(PH_BUF_NO_CAP);
	char msg[256];

	gzip_bomb(&gz,
		  "# tracer: nop\n"
		  "  app-100  [000] .....  1.001000: tracing_mark_write: "
		  "B|100|work\n"
		  "  app-100  [000] .....  1.101000: tracing_mark_write: "
		  "E|100\n",
		  '\n', (size_t)96 << 20);
	ph_trace_release(&tr);
	CHECK_INT(ph_trace_init(&tr), 0);
	CHECK_INT(ph_trace_load_mem(&tr, gz.buf, gz.len), PH_ECORRUPT);
	CHECK(tr.truncated);
	CHECK_INT(tr.err.code, PH_ETOOBIG);
	ph_err_format(&tr.err, msg, sizeof(msg));
	CHECK(strstr(msg, "ratio cap") != NULL);
	CHECK(tr.err.offset > 0 && tr.err.offset < gz.len);
	CHECK_INT(q1("SELECT dur FROM slice WHERE name = 'work'"), 100000000);
	ph_buf_release(&gz);
}

/* The same through the Perfetto reader: the refusal is why it ends. */
void test_trace__gzip_proto_bomb_is_read_in_part(void)
{
	struct ph_buf gz = PH_BUF_INIT(PH_BUF_NO_CAP);

	gzip_bomb(&gz, "", 0, (size_t)96 << 20);
	ph_trace_release(&tr);
	CHECK_INT(ph_trace_init(&tr), 0);
	CHECK_INT(ph_trace_load_mem(&tr, gz.buf, gz.len), PH_ECORRUPT);
	CHECK(tr.truncated);
	CHECK_INT(tr.err.code, PH_ETOOBIG);
	CHECK(strstr(tr.err.msg, "ratio cap") != NULL);
	ph_buf_release(&gz);
}

static int add_varint(struct ph_buf *b, uint64_t v)
{
	int rc = 0;

	for (; v >= 0x80 && !rc; v >>= 7)
		rc = ph_buf_addch(b, (char)(v | 0x80));
	return rc ? rc : ph_buf_addch(b, (char)v);
}

/* A compressed_packets field (TracePacket 50) that is a zlib bomb. */
void test_trace__compressed_packets_bomb_is_refused(void)
{
	struct ph_buf z = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf pkt = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf tr_ = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf zeros = PH_BUF_INIT(PH_BUF_NO_CAP);
	uLongf zn;

	CHECK_INT(ph_buf_grow(&zeros, (size_t)96 << 20), 0);
	memset(zeros.buf, 0, (size_t)96 << 20);
	ph_buf_setlen(&zeros, (size_t)96 << 20);
	zn = compressBound((uLong)zeros.len);
	CHECK_INT(ph_buf_grow(&z, zn), 0);
	CHECK_INT(compress2((Bytef *)z.buf, &zn, (const Bytef *)zeros.buf,
			    (uLong)zeros.len, 9),
		  Z_OK);
	ph_buf_setlen(&z, zn);
	ph_buf_release(&zeros);
	CHECK_INT(add_varint(&pkt, 50 << 3 | 2), 0);
	CHECK_INT(add_varint(&pkt, z.len), 0);
	CHECK_INT(ph_buf_add(&pkt, z.buf, z.len), 0);
	CHECK_INT(add_varint(&tr_, 1 << 3 | 2), 0);
	CHECK_INT(add_varint(&tr_, pkt.len), 0);
	CHECK_INT(ph_buf_add(&tr_, pkt.buf, pkt.len), 0);
	ph_trace_release(&tr);
	CHECK_INT(ph_trace_init(&tr), 0);
	CHECK_INT(ph_trace_load_mem(&tr, tr_.buf, tr_.len), PH_ECORRUPT);
	CHECK(tr.truncated);
	CHECK_INT(ph_trace_stat_get(&tr, "compressed_packets_refused"), 1);
	CHECK_INT(ph_trace_stat_get(&tr, "compressed_packets_bad"), 0);
	CHECK(strstr(tr.err.msg, "ratio cap") != NULL);
	ph_buf_release(&z);
	ph_buf_release(&pkt);
	ph_buf_release(&tr_);
}

void test_trace__ftrace_text_mono(void)
{
	static const char txt[] =
		"# trace_clock: mono\n"
		"  app-100  [000] d..2.  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
		"  app-100  [000] .....  1.001000: tracing_mark_write: B|100|work\n"
		"  app-100  [000] .....  1.101000: tracing_mark_write: E|100\n"
		"  app-100  [000] d..2.  1.200000: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
		"  <idle>-0  [000] d..2.  1.300000: sched_waking: comm=app pid=100 prio=120 target_cpu=000\n";

	ph_trace_release(&tr);
	CHECK_INT(ph_trace_init(&tr), 0);
	CHECK_INT(ph_trace_load_mem(&tr, txt, sizeof(txt) - 1), 0);
	CHECK_STR(tr.clock_name, "mono");
	CHECK_INT(tr.trace_clock, PH_CLK_MONOTONIC);
	CHECK_INT(q1("SELECT dur FROM slice WHERE name = 'work'"), 100000000);
	CHECK_INT(q1("SELECT COUNT(*) FROM thread_state WHERE state = 'D' "
		     "AND dur = 100000000"),
		  1);
	CHECK_INT(q1("SELECT COUNT(*) FROM thread_state WHERE state = 'R' "
		     "AND dur = -1"),
		  1);
	CHECK_INT(q1("SELECT is_main_thread FROM thread WHERE tid = 100"), 1);
}

void test_trace__detector_parse_and_params(void)
{
	static const char det[] =
		"-- @id demo\n-- @title Demo\n-- @param: min_ms = 16\n"
		"-- @param: label = 'x'\n-- @param: on = true\n"
		"SELECT {{min_ms}} AS location\n-- @intervals\nSELECT 1, 2\n";
	struct ph_detset s = { 0 };
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	char err[256];

	s.d = calloc(1, sizeof(*s.d));
	CHECK_INT(ph_detector_parse(&s.d[0], det, sizeof(det) - 1, "demo.sql",
				    err, sizeof(err)),
		  0);
	s.n = 1;
	CHECK_STR(s.d[0].id, "demo");
	CHECK_STR(s.d[0].identity, "location");
	CHECK(s.d[0].intervals != NULL);
	CHECK_INT(s.d[0].nparams, 3);
	CHECK_INT(ph_detset_set(&s, "min_ms=20", err, sizeof(err)), 0);
	CHECK_INT(ph_detset_set(&s, "demo.min_ms=abc", err, sizeof(err)),
		  PH_EINVAL);
	CHECK_INT(ph_detset_set(&s, "nope=1", err, sizeof(err)), PH_EINVAL);
	CHECK_INT(ph_detset_set(&s, "on=1", err, sizeof(err)), PH_EINVAL);
	CHECK_INT(ph_detset_set(&s, "on=false", err, sizeof(err)), 0);
	CHECK_INT(ph_detector_render(&s.d[0], s.d[0].sql, &out), 0);
	CHECK(strstr(out.buf, "SELECT 20 AS location") != NULL);
	ph_buf_release(&out);
	ph_detset_release(&s);
}

void test_trace__shipped_detectors_load(void)
{
	struct ph_detset s;

	CHECK_INT(ph_detset_load(&s, "detectors"), 0);
	CHECK(s.n >= 13);
	ph_detset_release(&s);
	ph_trace_release(&tr);
}
