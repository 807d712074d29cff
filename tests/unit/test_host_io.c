/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_host_io.c: the host's `io` view (src/host/io/io.c) from fixed input:
 * session events as wire lines, ds rows as the reader hands them over.
 * tests/golden/io/ runs the same through the command line, and
 * tests/e2e/io_live.sh on a real recording beside porthole-sample.
 */
#include "ph_common.h"
#include "harness.h"
#include "host/ingest.h"
#include "host/io/io.h"

#define HELLO                                                               \
	"{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,\"packageName\":" \
	"\"app\",\"processName\":\"app\",\"startedAt\":1000,\"pid\":100}}"
#define CLOCKS(wall)                                                     \
	"{\"event\":\"device\",\"t\":1000,\"seq\":0,\"data\":{\"kind\":" \
	"\"clocks\",\"uptimeMs\":\"1000\",\"wallMs\":\"" wall "\"}}"
#define MARK(t, seq)                                                     \
	"{\"event\":\"mark\",\"t\":" #t ",\"seq\":" #seq ",\"data\":{\"" \
	"label\":\"x\"}}"

/* The manifest's offset that agrees with CLOCKS("1000001000"): 1e15 ns. */
#define SAME_OFFSET "1000000000000000"

struct fixture {
	struct ph_io_view *v;
	struct ph_ingest in;
	struct ph_arena ar;
};

/* A view fed lines (the session) and a manifest (or NULL), aligned. */
static struct ph_io_view *view_of(struct fixture *fx, const char *const *lines,
				  size_t n, const char *manifest,
				  struct ph_io_opts o)
{
	struct ph_json *m = NULL;

	if (!o.w.from && !o.w.to)
		o.w = PH_WINDOW_ALL;
	fx->v = ph_io_view_new(&o);
	ph_arena_init(&fx->ar, PH_ARENA_DEFAULT_BLOCK, (size_t)64 << 20);
	ph_ingest_init(&fx->in, ph_io_feed_event, fx->v);
	for (size_t i = 0; i < n; i++)
		if (ph_ingest_line(&fx->in, &fx->ar, lines[i],
				   strlen(lines[i])))
			return NULL;
	ph_io_set_session(fx->v, &fx->in.ident, &fx->in.profile, fx->in.first_t,
			  fx->in.last_t);
	if (manifest &&
	    !ph_json_parse(&fx->ar, manifest, strlen(manifest), &m, NULL))
		ph_io_set_manifest(fx->v, m);
	ph_io_align(fx->v);
	return fx->v;
}

static void fixture_release(struct fixture *fx)
{
	ph_ingest_release(&fx->in);
	ph_arena_release(&fx->ar);
	ph_io_view_free(fx->v);
}

/* A ds row issued at issue_ms (mono) taking lat_ms; lat_ms < 0: issue
 * not seen, completing at issue_ms. */
static int row(struct ph_io_view *v, double issue_ms, double lat_ms, int pid,
	       int tid, const char *comm, const char *op, const char *flags)
{
	struct ph_iot_ds_rec r = { 0 };

	r.op = op;
	r.op_n = strlen(op);
	r.dev = "254:0";
	r.dev_n = 5;
	r.comm = comm;
	r.comm_n = strlen(comm);
	r.flags = flags;
	r.flags_n = strlen(flags);
	r.pid = pid;
	r.tid = tid;
	r.ppid = -1;
	r.cpu = 1;
	r.sector = strcmp(op, "flush") ? 8 : -1;
	r.size = 4096;
	r.queue_ns = -1;
	r.latency_ns = lat_ms < 0 ? -1 : (int64_t)(lat_ms * 1e6 + 0.5);
	r.mono_ns = (int64_t)(issue_ms * 1e6 + 0.5) +
		    (r.latency_ns < 0 ? 0 : r.latency_ns);
	r.request_id = 7;
	return ph_io_feed_row(v, &r);
}

static const struct ph_finding *finding(const struct ph_io_view *v,
					const char *id)
{
	for (size_t i = 0; i < v->nf; i++)
		if (!strcmp(v->f[i].id, id))
			return &v->f[i];
	return NULL;
}

static bool quiet(const struct ph_io_view *v, const char *id)
{
	for (size_t i = 0; i < v->nquiet; i++)
		if (!strcmp(v->quiet[i], id))
			return true;
	return false;
}

void test_host_io__rwbs_is_rebuilt_in_the_kernels_order(void)
{
	static const char *const lines[] = { HELLO, MARK(1000, 1),
					     MARK(2000, 2) };
	static const struct {
		const char *op, *flags, *rwbs, *wire;
	} cases[] = {
		{ "flush", "preflush", "FF", "flush" },
		{ "write", "preflush|fua|sync", "FWFS", "write" },
		{ "read", "ahead", "RA", "read" },
		{ "write", "sync|meta", "WSM", "write" },
		{ "secure_erase", "", "DE", "other" },
		{ "none", "", "N", "other" },
		{ "discard", "sync", "DS", "discard" },
	};
	struct fixture fx;
	struct ph_io_view *v =
		view_of(&fx, lines, 3, NULL, (struct ph_io_opts){ 0 });

	CHECK(v);
	for (size_t i = 0; i < PH_ARRAY_SIZE(cases); i++)
		CHECK_INT(row(v, 1100 + (double)i, 0.1, 100, 100, "app",
			      cases[i].op, cases[i].flags),
			  0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(v->nreq, PH_ARRAY_SIZE(cases));
	for (size_t i = 0; i < PH_ARRAY_SIZE(cases); i++) {
		struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
		struct ph_jw jw;
		char want[64];

		CHECK_STR(v->req[i].rwbs, cases[i].rwbs);
		ph_jw_init(&jw, &b);
		ph_io_event_write(&v->req[i], &jw);
		CHECK_INT(ph_jw_finish(&jw), 0);
		snprintf(want, sizeof(want), "\"op\":\"%s\"", cases[i].wire);
		CHECK(strstr(b.buf, want));
		/* a flush has no sector: 2^64-1 is never sent */
		CHECK(!strcmp(cases[i].op, "flush") ==
		      !strstr(b.buf, "\"sector\""));
		ph_buf_release(&b);
	}
	fixture_release(&fx);
}

void test_host_io__clock_alignment(void)
{
	static const char *const lines[] = { HELLO, CLOCKS("1000001000"),
					     MARK(2000, 1) };
	static const char *const no_clocks[] = { HELLO, MARK(1000, 0),
						 MARK(2000, 1) };
	struct fixture fx;
	struct ph_io_view *v;

	/* offsets 0.4 s apart: one clock (NTP drift, not another boot) */
	v = view_of(&fx, lines, 3,
		    "{\"clock\":{\"mono_to_real_offset_ns\":"
		    "1000000400000000}}",
		    (struct ph_io_opts){ 0 });
	CHECK(v);
	CHECK_INT(v->align, PH_IO_SAME_CLOCK);
	CHECK_INT(v->shift_ns, 0);
	CHECK_INT(v->offset_diff_ns, 400000000);
	fixture_release(&fx);

	/* 5 s apart: another boot; the recording moves by the difference */
	v = view_of(&fx, lines, 3,
		    "{\"clock\":{\"mono_to_real_offset_ns\":"
		    "1000005000000000}}",
		    (struct ph_io_opts){ 0 });
	CHECK(v);
	CHECK_INT(v->align, PH_IO_WALL_CLOCK);
	CHECK_INT(v->shift_ns, 5000000000LL);
	/* mono 1000 ms is app t 6000 ms: outside [1000, 2000] */
	CHECK_INT(row(v, 1500, 1, 100, 100, "app", "read", ""), 0);
	CHECK_INT(row(v, 1500 - 5000 + 0.0, 1, 100, 100, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(v->rows_no_time, 1); /* a negative mono is not a time */
	CHECK_INT(v->nreq, 0);
	CHECK(v->no_overlap);
	fixture_release(&fx);

	/* no device:clocks: assumed, and said */
	v = view_of(&fx, no_clocks, 3,
		    "{\"clock\":{\"mono_to_real_offset_ns\":1}}",
		    (struct ph_io_opts){ 0 });
	CHECK(v);
	CHECK_INT(v->align, PH_IO_ASSUMED);
	fixture_release(&fx);

	/* the caller's shift wins */
	v = view_of(&fx, lines, 3,
		    "{\"clock\":{\"mono_to_real_offset_ns\":"
		    "1000005000000000}}",
		    (struct ph_io_opts){ .have_shift = true,
					 .shift_ns = 250000000 });
	CHECK(v);
	CHECK_INT(v->align, PH_IO_GIVEN);
	CHECK_INT(row(v, 1500, 1, 100, 100, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(v->nreq, 1);
	CHECK_INT(v->req[0].issue_ns, 1750000000LL);
	fixture_release(&fx);
}

/* Main-thread queries back to back share a boundary millisecond. */
void test_host_io__main_thread_requests_belong_to_one_query(void)
{
	static const char *const lines[] = {
		HELLO,
		MARK(1000, 0),
		"{\"event\":\"db_end\",\"t\":1010,\"seq\":1,\"data\":{\"id\":"
		"\"db-1\",\"sql\":\"INSERT\",\"elapsedMs\":\"4\",\"thread\":"
		"\"main\"}}",
		"{\"event\":\"db_end\",\"t\":1012,\"seq\":2,\"data\":{\"id\":"
		"\"db-2\",\"sql\":\"DELETE\",\"elapsedMs\":\"2\",\"thread\":"
		"\"main\"}}",
		"{\"event\":\"db_end\",\"t\":1011,\"seq\":3,\"data\":{\"id\":"
		"\"db-3\",\"sql\":\"SELECT\",\"elapsedMs\":\"5\",\"thread\":"
		"\"worker\",\"mainThread\":false}}",
		MARK(1100, 4),
	};
	struct fixture fx;
	struct ph_io_view *v = view_of(&fx, lines, PH_ARRAY_SIZE(lines), NULL,
				       (struct ph_io_opts){ 0 });
	const struct ph_finding *f;

	CHECK(v);
	CHECK_INT(row(v, 1007.2, 0.3, 100, 100, "app", "write", "sync"), 0);
	CHECK_INT(row(v, 1010.4, 0.2, 100, 100, "app", "write", "sync"), 0);
	CHECK_INT(row(v, 1010.0, 0.2, 100, 100, "app", "write", "sync"), 0);
	CHECK_INT(row(v, 1050.0, 0.2, 100, 100, "app", "write", "sync"), 0);
	/* a worker's request counts for the query only by overlap */
	CHECK_INT(row(v, 1008.0, 0.2, 100, 101, "worker", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(v->main_n, 4);
	CHECK_INT(v->app_n, 5);
	for (size_t k = 0; k < v->nmom; k++) {
		const struct ph_io_moment *m = &v->mom[k];

		if (!strcmp(m->id, "db-1")) {
			/* 1007.2 only: 1010.0 is in db-1's last ms and
			 * db-2's first, and db-2 began later */
			CHECK_INT(m->main_n, 1);
			CHECK_INT(m->app_n, 2); /* with the worker's */
		} else if (!strcmp(m->id, "db-2")) {
			CHECK_INT(m->main_n, 2);
		} else {
			CHECK_STR(m->id, "db-3");
			CHECK(!m->main);
			/* not the main thread's query: by overlap */
			CHECK_INT(m->main_n, 3);
		}
	}
	f = finding(v, "io-on-main-thread");
	CHECK(f);
	CHECK_INT(f->severity, PH_SEV_NOTE); /* fast: a note, not an error */
	CHECK_INT(f->count, 4);
	CHECK(strstr(f->evidence, "\"outsideQueries\":1"));
	fixture_release(&fx);
}

void test_host_io__main_thread_severity_follows_the_frame_budget(void)
{
	static const char *const l60[] = {
		HELLO,
		"{\"event\":\"device\",\"t\":1000,\"seq\":0,\"data\":{\"kind\":"
		"\"profile\",\"refreshHz\":\"60\"}}",
		MARK(2000, 1),
	};
	static const char *const l120[] = {
		HELLO,
		"{\"event\":\"device\",\"t\":1000,\"seq\":0,\"data\":{\"kind\":"
		"\"profile\",\"refreshHz\":\"120\"}}",
		MARK(2000, 1),
	};
	struct fixture fx;
	struct ph_io_view *v;

	v = view_of(&fx, l60, 3, NULL, (struct ph_io_opts){ 0 });
	CHECK(v);
	CHECK_INT(row(v, 1500, 10, 100, 100, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(finding(v, "io-on-main-thread")->severity, PH_SEV_NOTE);
	fixture_release(&fx);

	v = view_of(&fx, l120, 3, NULL, (struct ph_io_opts){ 0 });
	CHECK(v);
	CHECK_INT(row(v, 1500, 10, 100, 100, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(finding(v, "io-on-main-thread")->severity, PH_SEV_ERROR);
	CHECK_STR(v->budget_source, "profile");
	fixture_release(&fx);

	/* another thread of the app: not the main thread's */
	v = view_of(&fx, l120, 3, NULL, (struct ph_io_opts){ 0 });
	CHECK(v);
	CHECK_INT(row(v, 1500, 10, 100, 101, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK(quiet(v, "io-on-main-thread"));
	fixture_release(&fx);
}

void test_host_io__slow_is_absolute_or_relative_to_the_device(void)
{
	static const char *const lines[] = { HELLO, MARK(1000, 0),
					     MARK(2000, 1) };
	struct fixture fx;
	struct ph_io_view *v;

	/* the device's median comes from the whole recording, also rows
	 * outside the window: 1 ms; 25 ms is 25x that */
	v = view_of(&fx, lines, 3, NULL, (struct ph_io_opts){ 0 });
	CHECK(v);
	for (int i = 0; i < 40; i++)
		CHECK_INT(row(v, 3000 + i, 1, 300, 300, "dd", "read", ""), 0);
	CHECK_INT(row(v, 1500, 25, 100, 101, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(v->rows_outside, 40);
	CHECK(finding(v, "io-slow-request"));
	CHECK_INT(finding(v, "io-slow-request")->count, 1);
	fixture_release(&fx);

	/* a device whose median is 10 ms: 25 ms is not slow for it ... */
	v = view_of(&fx, lines, 3, NULL, (struct ph_io_opts){ 0 });
	CHECK(v);
	for (int i = 0; i < 40; i++)
		CHECK_INT(row(v, 3000 + i, 10, 300, 300, "dd", "read", ""), 0);
	CHECK_INT(row(v, 1500, 25, 100, 101, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK(quiet(v, "io-slow-request"));
	fixture_release(&fx);

	/* ... but 100 ms is slow for any, and another process's is not the
	 * app's */
	v = view_of(&fx, lines, 3, NULL, (struct ph_io_opts){ 0 });
	CHECK(v);
	for (int i = 0; i < 40; i++)
		CHECK_INT(row(v, 3000 + i, 10, 300, 300, "dd", "read", ""), 0);
	CHECK_INT(row(v, 1500, 100, 100, 101, "app", "read", ""), 0);
	CHECK_INT(row(v, 1600, 900, 300, 300, "dd", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(finding(v, "io-slow-request")->count, 1);
	CHECK(strstr(finding(v, "io-slow-request")->evidence,
		     "\"latencyMs\":100.0"));
	fixture_release(&fx);
}

void test_host_io__jank_needs_the_main_thread_a_long_request_or_a_slow_disk(void)
{
	static const char *const lines[] = {
		HELLO,
		"{\"event\":\"frame\",\"t\":1100,\"seq\":1,\"data\":{\"totalMs\":"
		"40,\"budgetMs\":16.666}}",
		"{\"event\":\"frame\",\"t\":1300,\"seq\":2,\"data\":{\"totalMs\":"
		"40,\"budgetMs\":16.666}}",
		"{\"event\":\"blocked\",\"t\":1500,\"seq\":3,\"data\":{"
		"\"durationMs\":200,\"top\":\"f(a.c:1)\"}}",
		"{\"event\":\"frame\",\"t\":1800,\"seq\":4,\"data\":{\"totalMs\":"
		"40,\"budgetMs\":16.666}}",
		"{\"event\":\"frame\",\"t\":1900,\"seq\":5,\"data\":{\"totalMs\":"
		"10,\"budgetMs\":16.666}}",
		MARK(2000, 6),
	};
	struct fixture fx;
	struct ph_io_view *v = view_of(&fx, lines, PH_ARRAY_SIZE(lines), NULL,
				       (struct ph_io_opts){ 0 });
	const struct ph_finding *f;

	CHECK(v);
	CHECK_STR(v->budget_source, "frame events");
	for (int i = 0; i < 40; i++)
		CHECK_INT(row(v, 3000 + i, 0.5, 300, 300, "dd", "read", ""), 0);
	/* 1100: a short background write only: not worth naming */
	CHECK_INT(row(v, 1110, 0.5, 100, 101, "app", "write", "sync"), 0);
	/* 1300: the disk, 40x its median, for another process */
	CHECK_INT(row(v, 1290, 20, 200, 200, "kworker/0:1H", "write", ""), 0);
	/* 1500: the main thread's own read during the stall */
	CHECK_INT(row(v, 1600, 2, 100, 100, "app", "read", ""), 0);
	/* 1800: a background read as long as a frame */
	CHECK_INT(row(v, 1790, 30, 100, 101, "app", "read", ""), 0);
	/* 1900: not a late frame (10 ms), whatever is in flight */
	CHECK_INT(row(v, 1901, 2, 100, 100, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	f = finding(v, "io-during-jank");
	CHECK(f);
	CHECK_INT(f->confidence, PH_CONF_CORRELATED);
	CHECK_INT(f->count, 3);
	for (size_t k = 0; k < v->nmom; k++) {
		const struct ph_io_moment *m = &v->mom[k];

		CHECK(m->t != 1900); /* only late frames are moments */
		CHECK_INT(m->jank, m->t != 1100);
		if (m->t == 1300) {
			CHECK_INT(m->other_pid, 200);
			CHECK_STR(m->other_comm, "kworker/0:1H");
		}
	}
	fixture_release(&fx);
}

void test_host_io__window_loss_and_unknown_pid(void)
{
	static const char *const no_pid[] = {
		"{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,"
		"\"packageName\":\"app\",\"startedAt\":1000}}",
		MARK(1000, 0),
		MARK(2000, 1),
	};
	struct fixture fx;
	struct ph_io_view *v;

	v = view_of(&fx, no_pid, 3,
		    "{\"ftrace_loss\":{\"total_lost\":12},\"mode\":\"ftrace\"}",
		    (struct ph_io_opts){ 0 });
	CHECK(v);
	CHECK_INT(row(v, 999.5, 0.8, 100, 100, "app", "read", ""), 0);
	CHECK_INT(row(v, 998, 0.2, 100, 100, "app", "read", ""), 0);
	CHECK_INT(row(v, 2000.9, 0.2, 100, 100, "app", "read", ""), 0);
	CHECK_INT(row(v, 2001.0, 0.2, 100, 100, "app", "read", ""), 0);
	CHECK_INT(row(v, 1500, -1, -1, -1, "", "write", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	/* in flight at 1000.0, and issued within the last ms */
	CHECK_INT(v->nreq, 3);
	CHECK_INT(v->rows_outside, 2);
	CHECK_INT(v->app_n, 0); /* no pid: nobody is the app */
	CHECK_INT(v->unseen_n, 1);
	CHECK(v->nnotes >= 1 && strstr(v->notes[0], "--pid"));
	CHECK(finding(v, "io-lost-events"));
	CHECK(finding(v, "io-lost-events")->spanning);
	CHECK_INT(finding(v, "io-lost-events")->count, 12);
	fixture_release(&fx);

	v = view_of(&fx, no_pid, 3, NULL, (struct ph_io_opts){ .pid = 100 });
	CHECK(v);
	CHECK_INT(row(v, 1500, 0.2, 100, 100, "app", "read", ""), 0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(v->app_n, 1);
	CHECK_INT(v->main_n, 1);
	/* lost unknown (no manifest) is not a loss, and not quiet either:
	 * quiet means looked */
	CHECK(!finding(v, "io-lost-events"));
	CHECK(!quiet(v, "io-lost-events"));
	CHECK_INT(v->lost, -1);
	fixture_release(&fx);
}

/* ds rows spell a device "254:0", wire io events "254,0": one parser. */
void test_host_io__device_spellings(void)
{
	CHECK_INT(ph_io_parse_dev("254:0", 5), 254u << 20);
	CHECK_INT(ph_io_parse_dev("254,0", 5), 254u << 20);
	CHECK_INT(ph_io_parse_dev("8,17", 4), 8u << 20 | 17);
	CHECK_INT(ph_io_parse_dev("254-0", 5), 0);
	CHECK_INT(ph_io_parse_dev(":0", 2), 0);
	CHECK_INT(ph_io_parse_dev("4096:0", 6), 0);
	CHECK_INT(ph_io_parse_dev("8:1048576", 9), 0);
	CHECK_INT(ph_io_parse_dev("8:1x", 4), 0);
}

/*
 * The moments' joins and attach start at ph_io_first_in_flight: against
 * a walk over every request, it never skips one still in flight, and the
 * main thread's bytes add up.
 */
void test_host_io__first_in_flight_skips_only_finished_requests(void)
{
	static const char *const lines[] = { HELLO, MARK(1000, 0),
					     MARK(2000, 1) };
	struct fixture fx;
	struct ph_io_view *v;

	v = view_of(&fx, lines, 3, NULL, (struct ph_io_opts){ 0 });
	CHECK(v);
	for (int i = 0; i < 40; i++)
		CHECK_INT(row(v, 1000 + 23.5 * i, (i % 7) * 3.25, 100,
			      i % 3 ? 101 : 100, "app", "write", "sync"),
			  0);
	CHECK_INT(ph_io_finish(v), 0);
	CHECK_INT(v->max_span_ns, 19500000);
	CHECK_INT(v->main_bytes, 14 * 4096);
	for (int64_t from = 990 * 1000000LL; from < 2010 * 1000000LL;
	     from += 1700000) {
		size_t first = ph_io_first_in_flight(v, from);

		for (size_t i = 0; i < first; i++)
			CHECK(v->req[i].done_ns < from);
		CHECK(first == 0 || first == v->nreq ||
		      v->req[first].done_ns >= from ||
		      v->req[first].issue_ns >= from - v->max_span_ns);
	}
	fixture_release(&fx);
}

/*
 * A stall sent while it lasts (ongoing events, then the closing one, all
 * with its start as t) is one moment of the view, as long as the newest
 * event says, not one per event.
 */
void test_host_io__a_stall_sent_while_it_lasts_is_one_moment(void)
{
	static const char *const lines[] = {
		"{\"event\":\"blocked\",\"t\":5000,\"seq\":0,\"data\":{"
		"\"durationMs\":300,\"ongoing\":true,\"top\":\"f(a.c:1)\"}}",
		"{\"event\":\"blocked\",\"t\":5000,\"seq\":1,\"data\":{"
		"\"durationMs\":1300,\"ongoing\":true,\"top\":\"f(a.c:1)\"}}",
		"{\"event\":\"blocked\",\"t\":5000,\"seq\":2,\"data\":{"
		"\"durationMs\":1720,\"top\":\"f(a.c:1)\"}}",
		"{\"event\":\"blocked\",\"t\":9000,\"seq\":3,\"data\":{"
		"\"durationMs\":250,\"top\":\"g(a.c:2)\"}}",
	};
	struct fixture fx = { 0 };
	struct ph_io_view *v = view_of(&fx, lines, PH_ARRAY_SIZE(lines), NULL,
				       (struct ph_io_opts){ 0 });

	CHECK(v != NULL);
	CHECK_INT(v->nmom, 2);
	CHECK_INT(v->mom[0].t, 5000);
	CHECK_INT(v->mom[0].to, 6720);
	CHECK_INT(v->mom[1].to, 9250);
	fixture_release(&fx);
}
