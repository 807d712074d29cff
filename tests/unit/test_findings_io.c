/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_findings_io.c: the findings family `io` (src/host/findings/io.c)
 * over fixed events: a session's stalls, frames and queries, and the
 * block I/O `porthole iotrace attach` adds to it (io events, an
 * io_recording marker); and attach itself (src/host/io/attach.c) on the
 * made-up session and recording of tests/golden/io/data, whose findings
 * read back from the session must be the view's, byte for byte.
 */
#include "ph_common.h"
#include "harness.h"
#include "host/findings.h"
#include "host/io/attach.h"
#include "host/store.h"

#define HELLO                                                               \
	"{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,\"packageName\":" \
	"\"app\",\"processName\":\"app\",\"startedAt\":1000,\"pid\":100}}"
#define EV(kind, t, seq, data)                                                 \
	"{\"event\":\"" kind "\",\"t\":" #t ",\"seq\":" #seq ",\"data\":" data \
	"}"
#define IO(t, data) EV("io", t, -1, data)

/* The app: a main-thread query, a stall, a late frame and one that is
 * not late, and a worker's query (not the main thread's). */
static const char *const app_lines[] = {
	HELLO,
	EV("device", 1000, 0, "{\"kind\":\"profile\",\"refreshHz\":60}"),
	EV("db_end", 1010, 1,
	   "{\"id\":\"db-1\",\"sql\":\"INSERT INTO t VALUES (?)\","
	   "\"elapsedMs\":\"4\",\"thread\":\"main\"}"),
	EV("blocked", 1100, 2, "{\"durationMs\":300,\"top\":\"load(a.c:1)\"}"),
	EV("frame", 1500, 3,
	   "{\"totalMs\":60,\"worstPhase\":\"layoutMeasure\"}"),
	EV("frame", 1700, 4, "{\"totalMs\":10,\"worstPhase\":\"draw\"}"),
	EV("db_end", 1800, 5,
	   "{\"id\":\"db-2\",\"sql\":\"SELECT 1\",\"elapsedMs\":\"50\","
	   "\"thread\":\"worker-1\"}"),
	EV("mark", 2000, 6, "{\"label\":\"end\"}"),
};

/* What attach adds: the app's main thread inside db-1 and during the
 * stall, dd beside it, the writeback during the late frame, a worker's
 * 150 ms read. */
static const char *const io_lines[] = {
	IO(1007, "{\"issueMs\":1007.5,\"dev\":\"254,0\",\"sector\":8,"
		 "\"bytes\":4096,\"rwbs\":\"WS\",\"op\":\"write\","
		 "\"latencyMs\":0.3,\"comm\":\"app\",\"pid\":100,\"tid\":100,"
		 "\"requestId\":1}"),
	IO(1150, "{\"issueMs\":1150.0,\"dev\":\"254,0\",\"sector\":16,"
		 "\"bytes\":16384,\"rwbs\":\"R\",\"op\":\"read\","
		 "\"latencyMs\":20.0,\"comm\":\"app\",\"pid\":100,\"tid\":100,"
		 "\"requestId\":2}"),
	IO(1200, "{\"issueMs\":1200.0,\"dev\":\"254,0\",\"sector\":800,"
		 "\"bytes\":4096,\"rwbs\":\"R\",\"op\":\"read\",\"latencyMs\":"
		 "0.5,\"comm\":\"dd\",\"pid\":300,\"tid\":300,"
		 "\"requestId\":3}"),
	IO(1205, "{\"issueMs\":1205.0,\"dev\":\"254,0\",\"sector\":808,"
		 "\"bytes\":4096,\"rwbs\":\"R\",\"op\":\"read\",\"latencyMs\":"
		 "0.5,\"comm\":\"dd\",\"pid\":300,\"tid\":300,"
		 "\"requestId\":4}"),
	IO(1495, "{\"issueMs\":1495.0,\"dev\":\"254,0\",\"sector\":9000,"
		 "\"bytes\":524288,\"rwbs\":\"W\",\"op\":\"write\","
		 "\"latencyMs\":45.0,\"comm\":\"kworker/0:1H\",\"pid\":200,"
		 "\"tid\":200,\"requestId\":5}"),
	IO(1770,
	   "{\"issueMs\":1770.0,\"dev\":\"254,0\",\"sector\":7000,"
	   "\"bytes\":131072,\"rwbs\":\"RA\",\"op\":\"read\","
	   "\"latencyMs\":150.0,\"comm\":\"worker-1\",\"pid\":100,\"tid\":101,"
	   "\"requestId\":6}"),
};

#define MARKER(lost)                                                        \
	EV("io_recording", 1000, -1,                                        \
	   "{\"recording\":\"0123456789abcdef\",\"durationMs\":1000,"       \
	   "\"alignment\":\"same-clock\"," lost "\"pid\":100,\"devices\":[" \
	   "{\"dev\":\"254,0\",\"medianMs\":0.490292,\"rows\":30}]}")

static int add_all(struct ph_store *s, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ph_store_add_line(s, lines[i], strlen(lines[i])))
			return -1;
	return 0;
}

static const char *const io_ids[] = { "io-on-main-thread", "io-slow-request",
				      "io-during-jank", "io-lost-events" };

void test_findings_io__silent_without_block_io(void)
{
	struct ph_store s;
	struct ph_analysis *a;

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(add_all(&s, app_lines, PH_ARRAY_SIZE(app_lines)), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	CHECK(ph_analysis_find(a, "main-thread-stall")); /* the session was
							    judged */
	CHECK(ph_analysis_quiet(a, "leak"));
	/* nothing recorded block I/O: not a finding, and not quiet either */
	for (size_t i = 0; i < PH_ARRAY_SIZE(io_ids); i++) {
		CHECK(!ph_analysis_find(a, io_ids[i]));
		CHECK(!ph_analysis_quiet(a, io_ids[i]));
	}
	/* nor a metric of 0: compare must see "not recorded" */
	CHECK(!a->metric_set[PH_M_IO_APP]);
	CHECK(!a->metric_set[PH_M_IO_MAIN]);
	CHECK(!a->metric_set[PH_M_IO_APP_WORST_MS]);
	CHECK(!a->metric_set[PH_M_IO_APP_MOMENTS]);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_findings_io__exact_findings_from_attached_events(void)
{
	static const char *const marker[] = { MARKER("\"totalLost\":0,") };
	const struct ph_finding *f;
	struct ph_store s;
	struct ph_analysis *a;

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(add_all(&s, app_lines, PH_ARRAY_SIZE(app_lines)), 0);
	CHECK_INT(add_all(&s, io_lines, PH_ARRAY_SIZE(io_lines)), 0);
	CHECK_INT(add_all(&s, marker, 1), 0);
	/* host-made events read twice (a session file and the live store
	 * both hold them, ph_analyze_window): each request counts once */
	CHECK_INT(add_all(&s, io_lines, PH_ARRAY_SIZE(io_lines)), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);

	/* the main thread: the write inside db-1, the 20 ms read during the
	 * stall; a frame budget (60 Hz) or more: an error */
	f = ph_analysis_find(a, "io-on-main-thread");
	CHECK(f);
	CHECK_INT(f->severity, PH_SEV_ERROR);
	CHECK_INT(f->confidence, PH_CONF_OBSERVED);
	CHECK_STR(f->source, "iotrace");
	CHECK_INT(f->count, 2);
	CHECK_INT(f->from, 1007);
	CHECK_INT(f->to, 1170);
	CHECK_STR(f->title, "The main thread issued 2 block requests (20 "
			    "KiB), the slowest 20.000 ms");
	CHECK_STR(f->detail[1], "inside the main thread's queries: db-1 "
				"INSERT INTO t VALUES (?) (1)");
	CHECK_STR(f->detail[2], "1 outside any query the app reported");
	CHECK(strstr(f->evidence, "\"outsideQueries\":1"));

	/* slow against the recording's median (0.49 ms): 20 ms is over
	 * 10x it, 150 ms is over 100 ms; the 0.3 ms write is not */
	f = ph_analysis_find(a, "io-slow-request");
	CHECK(f);
	CHECK_INT(f->severity, PH_SEV_WARNING);
	CHECK_INT(f->count, 2);
	CHECK_INT(f->from, 1150);
	CHECK_INT(f->to, 1920);
	CHECK_STR(f->title,
		  "2 slow block requests by the app, the worst 150.000 ms");
	CHECK(strstr(f->detail[0], "by worker-1 (tid 101) at t=1770"));
	CHECK(strstr(f->detail[0], "~0.490 ms"));

	/* the stall had the main thread's read in flight, the late frame
	 * the writeback's 45 ms (over 4x the median); the 10 ms frame is
	 * not late and the worker's query is no moment of jank */
	f = ph_analysis_find(a, "io-during-jank");
	CHECK(f);
	CHECK_INT(f->severity, PH_SEV_WARNING);
	CHECK_INT(f->confidence, PH_CONF_CORRELATED);
	CHECK_INT(f->count, 2);
	CHECK_INT(f->from, 1099);
	CHECK_INT(f->to, 1561);
	CHECK_STR(f->title,
		  "Block I/O in flight during 2 stalls or late frames");
	CHECK_STR(f->detail[0],
		  "worst: late frame at t=1500 (60 ms, layoutMeasure): 0 app "
		  "requests (0 on the main thread) in flight, the device's "
		  "slowest 45.000 ms");
	CHECK_STR(f->detail[1], "busiest other process then: kworker/0:1H "
				"(pid 200, 1 request)");

	/* the marker said ftrace lost nothing: looked, quiet */
	CHECK(!ph_analysis_find(a, "io-lost-events"));
	CHECK(ph_analysis_quiet(a, "io-lost-events"));
	CHECK(!ph_analysis_quiet(a, "io-on-main-thread"));

	/* the metrics compare diffs: the app's 3 requests (2 on the main
	 * thread), the worker's 150 ms read the slowest; app I/O in flight
	 * during db-1 (the write) and the stall (the read), not during the
	 * late frame (the writeback's); db-2 is a worker's query, no
	 * moment of the main thread's */
	CHECK(a->metric_set[PH_M_IO_APP]);
	CHECK(a->metric[PH_M_IO_APP] == 3);
	CHECK(a->metric[PH_M_IO_MAIN] == 2);
	CHECK(a->metric[PH_M_IO_APP_WORST_MS] == 150);
	CHECK(a->metric[PH_M_IO_APP_MOMENTS] == 2);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_findings_io__a_window_judges_what_it_holds(void)
{
	static const char *const marker[] = { MARKER("\"totalLost\":0,") };
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(add_all(&s, app_lines, PH_ARRAY_SIZE(app_lines)), 0);
	CHECK_INT(add_all(&s, io_lines, PH_ARRAY_SIZE(io_lines)), 0);
	CHECK_INT(add_all(&s, marker, 1), 0);
	/* the late frame and the writeback issued before the window starts
	 * and completing inside it */
	a = ph_analyze_store(&s, (struct ph_window){ 1520, 1600 });
	CHECK(a);
	f = ph_analysis_find(a, "io-during-jank");
	CHECK(f && f->count == 1);
	CHECK_STR(f->title, "Block I/O in flight during 1 stall or late frame");
	CHECK(ph_analysis_quiet(a, "io-on-main-thread"));
	CHECK(ph_analysis_quiet(a, "io-slow-request"));
	CHECK(ph_analysis_quiet(a, "io-lost-events"));
	ph_analysis_free(a);
	/* the writeback completed at 1540: a window after it has none */
	a = ph_analyze_store(&s, (struct ph_window){ 1541, 1600 });
	CHECK(a);
	CHECK(!ph_analysis_find(a, "io-during-jank"));
	CHECK(ph_analysis_quiet(a, "io-during-jank"));
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_findings_io__losses_only_from_the_marker(void)
{
	static const char *const lost[] = { MARKER("\"totalLost\":12,") };
	static const char *const unknown[] = { MARKER("") };
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;

	/* io events alone (written by `porthole io --ndjson`, say): the
	 * rules run on the window's own medians; losses are unknown */
	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(add_all(&s, app_lines, PH_ARRAY_SIZE(app_lines)), 0);
	CHECK_INT(add_all(&s, io_lines, PH_ARRAY_SIZE(io_lines)), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	CHECK(ph_analysis_find(a, "io-on-main-thread") &&
	      ph_analysis_find(a, "io-slow-request") &&
	      ph_analysis_find(a, "io-during-jank"));
	CHECK(!ph_analysis_find(a, "io-lost-events") &&
	      !ph_analysis_quiet(a, "io-lost-events"));
	ph_analysis_free(a);
	/* a marker without totalLost: still unknown */
	CHECK_INT(add_all(&s, unknown, 1), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	CHECK(!ph_analysis_find(a, "io-lost-events") &&
	      !ph_analysis_quiet(a, "io-lost-events"));
	ph_analysis_free(a);
	/* the same recording attached again says what it lost */
	CHECK_INT(add_all(&s, lost, 1), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	f = ph_analysis_find(a, "io-lost-events");
	CHECK(f);
	CHECK_INT(f->severity, PH_SEV_NOTE);
	CHECK_INT(f->count, 12);
	CHECK(f->spanning);
	CHECK_STR(f->title, "The recording lost 12 block events");
	ph_analysis_free(a);
	ph_store_release(&s);
}

/* The findings of a as one JSON text, for comparing answers. */
static int findings_text(const struct ph_analysis *a, struct ph_buf *out)
{
	struct ph_jw jw;

	ph_buf_reset(out);
	ph_jw_init(&jw, out);
	ph_analysis_write_findings(a, &jw);
	return ph_jw_finish(&jw);
}

/*
 * The live store's standing engine is fed the app's events first and the
 * block I/O later (a host reads attach's lines back on its next flush):
 * its answers are a new engine's over the same events, and asking twice
 * changes nothing.
 */
void test_findings_io__standing_engine_after_a_late_attach(void)
{
	static const char *const marker[] = { MARKER("\"totalLost\":0,") };
	struct ph_buf b1 = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf b2 = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_store s, fresh;
	struct ph_analysis *a, *b;

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(add_all(&s, app_lines, PH_ARRAY_SIZE(app_lines)), 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a && !ph_analysis_find(a, "io-on-main-thread"));
	ph_analysis_free(a);
	CHECK_INT(add_all(&s, io_lines, PH_ARRAY_SIZE(io_lines)), 0);
	CHECK_INT(add_all(&s, marker, 1), 0);
	CHECK_INT(ph_store_init(&fresh, 0), 0);
	CHECK_INT(add_all(&fresh, app_lines, PH_ARRAY_SIZE(app_lines)), 0);
	CHECK_INT(add_all(&fresh, io_lines, PH_ARRAY_SIZE(io_lines)), 0);
	CHECK_INT(add_all(&fresh, marker, 1), 0);
	for (int k = 0; k < 2; k++) {
		a = ph_analyze_store(&s, PH_WINDOW_ALL);
		b = ph_analyze_store(&fresh, PH_WINDOW_ALL);
		CHECK(a && b);
		CHECK(ph_analysis_find(a, "io-on-main-thread"));
		CHECK_INT(findings_text(a, &b1), 0);
		CHECK_INT(findings_text(b, &b2), 0);
		CHECK_STR(b1.buf, b2.buf);
		ph_analysis_free(a);
		ph_analysis_free(b);
	}
	ph_store_release(&s);
	ph_store_release(&fresh);
	ph_buf_release(&b1);
	ph_buf_release(&b2);
}

/*
 * attach over tests/golden/io/data: what it appends, read back from the
 * session file by the findings engine, gives the view's own findings,
 * byte for byte; a second attach appends nothing.
 */
/* A copy of the made-up session in a fresh directory; its path. */
static const char *session_copy(char *path, size_t size)
{
	struct ph_buf ev = PH_BUF_INIT(PH_BUF_NO_CAP);
	const char *tmp = ph_test_tmpdir();
	FILE *f;
	bool ok;

	if (!tmp ||
	    ph_buf_read_file(&ev, "tests/golden/io/data/events.ndjson")) {
		ph_buf_release(&ev);
		return NULL;
	}
	snprintf(path, size, "%s/events.ndjson", tmp);
	f = fopen(path, "w");
	ok = f && fwrite(ev.buf, 1, ev.len, f) == ev.len;
	ok = f && !fclose(f) && ok;
	ph_buf_release(&ev);
	return ok ? tmp : NULL;
}

void test_findings_io__attach_then_read_back_is_the_view(void)
{
	struct ph_buf want = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf got = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_io_attach_opts o = { .rec_dir = "tests/golden/io/data/rec",
				       .max = PH_IO_ATTACH_MAX };
	struct ph_io_attach_result r;
	struct ph_analysis *a;
	char path[4200], why[600];
	size_t n = 0;
	int rc;

	o.session_dir = session_copy(path, sizeof(path));
	CHECK(o.session_dir);
	rc = ph_io_attach(&o, &r, why, sizeof(why));
	CHECK_STR(why, "");
	CHECK_INT(rc, 0);
	CHECK_INT(r.selected, 30);
	CHECK_INT(r.added_app, 7);
	CHECK_INT(r.added_other, 23);
	CHECK_INT(r.already, 0);
	CHECK_INT(r.batches, 1);
	CHECK_INT(r.v->nf, 3);
	a = ph_analyze_file(path, PH_WINDOW_ALL, &rc);
	CHECK(a);
	for (size_t i = 0; i < r.v->nf; i++) {
		const struct ph_finding *f = ph_analysis_find(a, r.v->f[i].id);
		struct ph_jw jw;

		CHECK(f);
		ph_buf_reset(&want);
		ph_jw_init(&jw, &want);
		ph_finding_write(&r.v->f[i], &jw);
		CHECK_INT(ph_jw_finish(&jw), 0);
		ph_buf_reset(&got);
		ph_jw_init(&jw, &got);
		ph_finding_write(f, &jw);
		CHECK_INT(ph_jw_finish(&jw), 0);
		CHECK_STR(got.buf, want.buf);
		n++;
	}
	CHECK_INT(n, 3);
	CHECK(ph_analysis_quiet(a, "io-lost-events"));
	ph_analysis_free(a);
	ph_io_view_free(r.v);
	/* again: nothing new */
	rc = ph_io_attach(&o, &r, why, sizeof(why));
	CHECK_INT(rc, 0);
	CHECK_INT(r.added_app + r.added_other, 0);
	CHECK_INT(r.already, 30);
	CHECK(r.seen_before);
	CHECK_INT(r.bytes, 0);
	ph_io_view_free(r.v);
	ph_buf_release(&want);
	ph_buf_release(&got);
}

void test_findings_io__attach_refuses(void)
{
	struct ph_io_attach_opts o = { .rec_dir = "tests/golden/io/data/"
						  "rec-otherboot",
				       .have_shift = true };
	struct ph_io_attach_result r;
	char why[600], path[4200];
	struct ph_buf before = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf after = PH_BUF_INIT(PH_BUF_NO_CAP);

	o.session_dir = session_copy(path, sizeof(path));
	CHECK(o.session_dir);
	CHECK_INT(ph_buf_read_file(&before, path), 0);

	/* the other boot's clock, taken as ours: an hour off the session */
	CHECK_INT(ph_io_attach(&o, &r, why, sizeof(why)), PH_EINVAL);
	CHECK(strstr(why, "does not overlap the session"));
	ph_io_view_free(r.v);
	o.rec_dir = "tests/golden/io/data/no-such-recording";
	CHECK(ph_io_attach(&o, &r, why, sizeof(why)) < 0);
	CHECK(strstr(why, "not a recording"));
	ph_io_view_free(r.v);
	/* refused: the session is as it was */
	CHECK_INT(ph_buf_read_file(&after, path), 0);
	CHECK_INT(after.len, before.len);
	CHECK(!memcmp(after.buf, before.buf, before.len));
	o.session_dir = "tests/golden/io/no-such-session";
	CHECK_INT(ph_io_attach(&o, &r, why, sizeof(why)), PH_ENOENT);
	CHECK(strstr(why, "no session at"));
	ph_io_view_free(r.v);
	ph_buf_release(&before);
	ph_buf_release(&after);
}
