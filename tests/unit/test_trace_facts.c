/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for what ask and stats state about a trace: CPU frequency
 * facts per cluster, the clock only as the trace names it, packets the
 * decoder does not read, and a packet stamped 0 set aside from the span.
 * The traces are written here, as ftrace text and as Perfetto protobuf.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "harness.h"
#include "trace/trace.h"
#include "trace/trace_ask.h"
#include "trace/trace_detect.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

/* --- protobuf writing ---------------------------------------------------- */

static void pb_varint(struct ph_buf *b, uint64_t v)
{
	do {
		uint8_t c = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));

		if (ph_buf_add(b, &c, 1))
			return; /* the test then fails on the trace */
		v >>= 7;
	} while (v);
}

static void pb_int(struct ph_buf *b, uint32_t id, uint64_t v)
{
	pb_varint(b, (uint64_t)id << 3);
	pb_varint(b, v);
}

static void pb_bytes(struct ph_buf *b, uint32_t id, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)id << 3 | 2);
	pb_varint(b, n);
	if (ph_buf_add(b, p, n))
		return;
}

static void pb_msg(struct ph_buf *b, uint32_t id, struct ph_buf *m)
{
	pb_bytes(b, id, m->buf, m->len);
	ph_buf_reset(m);
}

/* A packet with payload field id (and a timestamp unless ts < 0). */
static void packet(struct ph_buf *trace, int64_t ts, uint32_t id,
		   struct ph_buf *payload)
{
	struct ph_buf pkt = PH_BUF_INIT(1 << 16);

	if (ts >= 0)
		pb_int(&pkt, 8, (uint64_t)ts);
	pb_msg(&pkt, id, payload);
	pb_msg(trace, 1, &pkt);
	ph_buf_release(&pkt);
}

/* Process 100 "app" with its main thread, in a process_tree at ts. */
static void process_tree(struct ph_buf *trace, int64_t ts)
{
	struct ph_buf p = PH_BUF_INIT(1 << 16), m = PH_BUF_INIT(1 << 16);

	pb_int(&m, 1, 100);
	pb_bytes(&m, 3, "app", 3);
	pb_msg(&p, 1, &m);
	pb_int(&m, 1, 100);
	pb_bytes(&m, 2, "app", 3);
	pb_int(&m, 3, 100);
	pb_msg(&p, 2, &m);
	packet(trace, ts, 2, &p);
	ph_buf_release(&p);
	ph_buf_release(&m);
}

/* One ftrace bundle on CPU 0: the app runs from `from` to `to`. */
static void app_runs(struct ph_buf *trace, int64_t from, int64_t to)
{
	struct ph_buf b = PH_BUF_INIT(1 << 16), ev = PH_BUF_INIT(1 << 16),
		      sw = PH_BUF_INIT(1 << 16);

	pb_int(&b, 1, 0);
	for (int i = 0; i < 2; i++) {
		pb_bytes(&sw, 1, i ? "app" : "swapper/0", i ? 3 : 9);
		pb_int(&sw, 2, i ? 100 : 0);
		pb_int(&sw, 4, i ? 1 : 0);
		pb_bytes(&sw, 5, i ? "swapper/0" : "app", i ? 9 : 3);
		pb_int(&sw, 6, i ? 0 : 100);
		pb_int(&ev, 1, (uint64_t)(i ? to : from));
		pb_int(&ev, 2, i ? 100 : 0);
		pb_msg(&ev, 4, &sw);
		pb_msg(&b, 2, &ev);
	}
	packet(trace, -1, 1, &b);
	ph_buf_release(&b);
	ph_buf_release(&ev);
	ph_buf_release(&sw);
}

/* A ClockSnapshot naming primary (0: the field left out). */
static void clock_snapshot(struct ph_buf *trace, int64_t ts, int primary)
{
	struct ph_buf p = PH_BUF_INIT(1 << 16), c = PH_BUF_INIT(1 << 16);

	pb_int(&c, 1, PH_CLK_BOOTTIME);
	pb_int(&c, 2, (uint64_t)ts);
	pb_msg(&p, 1, &c);
	pb_int(&c, 1, PH_CLK_MONOTONIC);
	pb_int(&c, 2, (uint64_t)ts - 1000000);
	pb_msg(&p, 1, &c);
	if (primary)
		pb_int(&p, 2, (uint64_t)primary);
	packet(trace, ts, 6, &p);
	ph_buf_release(&p);
	ph_buf_release(&c);
}

/* --- asking -------------------------------------------------------------- */

struct answer {
	struct ph_arena a;
	struct ph_json *root;
	struct ph_buf out;
};

/* Loads the trace and asks question q (NULL: all) of process "app". */
static int ask(struct answer *ans, struct ph_trace *t, const void *data,
	       size_t n, const char *q)
{
	struct ph_jw w;
	char err[512];
	const char *qs[1] = { q };
	int rc;

	ans->out = (struct ph_buf)PH_BUF_INIT(PH_BUF_NO_CAP);
	ph_arena_init(&ans->a, 1 << 16, SIZE_MAX);
	ans->root = NULL;
	if ((rc = ph_trace_init(t)) || (rc = ph_trace_load_mem(t, data, n)))
		return rc;
	ph_jw_init(&w, &ans->out);
	rc = ph_trace_ask(t, "app", PH_NULL_I64, PH_NULL_I64, q ? qs : NULL,
			  q ? 1 : 0, "detectors", &w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ask: %s\n", err);
		return rc;
	}
	if ((rc = ph_jw_finish(&w)))
		return rc;
	return ph_json_parse(&ans->a, ans->out.buf, ans->out.len, &ans->root,
			     NULL);
}

static void answer_release(struct answer *ans, struct ph_trace *t)
{
	ph_arena_release(&ans->a);
	ph_buf_release(&ans->out);
	ph_trace_release(t);
}

static const struct ph_json *finding(const struct answer *ans, const char *id)
{
	const struct ph_json *f = ph_json_get(ans->root, "findings");

	for (uint32_t i = 0; f && i < f->n; i++)
		if (ph_json_streq(ph_json_get(&f->u.items[i], "id"), id))
			return &f->u.items[i];
	return NULL;
}

/* --- CPU clusters -------------------------------------------------------- */

#define FREQ(t, cpu, khz)                            \
	"  <idle>-0  (-----) [00" #cpu "] d..2.  " t \
	": cpu_frequency: state=" #khz " cpu_id=" #cpu "\n"
#define RUN(cpu, from, to)                                           \
	"  <idle>-0  (-----) [00" #cpu "] d..2.  " from              \
	": sched_switch: prev_comm=swapper/" #cpu " prev_pid=0 "     \
	"prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 " \
	"next_prio=120\n"                                            \
	"  app-100  (  100) [00" #cpu "] d..2.  " to                 \
	": sched_switch: prev_comm=app prev_pid=100 prev_prio=120 "  \
	"prev_state=S ==> next_comm=swapper/" #cpu " next_pid=0 "    \
	"next_prio=120\n"

void test_trace__low_frequency_is_stated_per_cluster(void)
{
	/* little cores 0-1 peak at 1804800 kHz, big ones 4-5 at 2419200;
	 * the app runs 50 ms on each kind while it is low */
	static const char txt[] = "# trace_clock: mono\n" FREQ(
		"0.100000", 0, 1804800) FREQ("0.100000", 1, 1804800)
		FREQ("0.100000", 4, 2419200) FREQ("0.100000", 5, 2419200)
			FREQ("0.500000", 0, 691200) FREQ("0.500000", 4, 1000000)
				RUN(0, "1.000000", "1.050000")
					RUN(4, "1.100000", "1.150000")
						RUN(1, "2.000000", "2.000001");
	struct ph_trace t;
	struct answer ans;
	const struct ph_json *x;
	const char *detail, *env;

	CHECK_INT(ask(&ans, &t, txt, sizeof(txt) - 1, "cpu"), 0);
	x = finding(&ans, "trace.cpu:main thread at a low CPU frequency");
	CHECK(x != NULL);
	detail = x ? ph_json_strdup(&ans.a, ph_json_get(x, "detail")) : "";
	/* a little core's low against a big core's peak says nothing */
	CHECK(strstr(detail, "of 2419200") == NULL);
	CHECK(strstr(detail, "CPUs 0-1 (peak 1804800 kHz) 50.0 ms, as low as "
			     "691200 kHz; CPUs 4-5 (peak 2419200 kHz) 50.0 "
			     "ms, as low as 1000000 kHz") != NULL);
	/* the finding's environment: each cluster apart */
	env = x ? ph_json_strdup(&ans.a, ph_json_get(ph_json_get(x, "evidence"),
						     "environment")) :
		  "";
	CHECK(strstr(env, "CPU cluster 0-1 (peak 1805 MHz) 691..1805 MHz") !=
	      NULL);
	CHECK(strstr(env, ", cluster 4-5 (peak 2419 MHz) 1000..2419 MHz") !=
	      NULL);
	answer_release(&ans, &t);
}

/* --- the clock ----------------------------------------------------------- */

void test_trace__clock_named_only_when_the_trace_says(void)
{
	static const char text[] = RUN(0, "1.000000", "1.050000");
	struct ph_buf tr = PH_BUF_INIT(1 << 20), p = PH_BUF_INIT(1 << 16),
		      m = PH_BUF_INIT(1 << 16);
	struct ph_trace t;
	struct answer ans;

	/* ftrace text without a trace_clock line: no clock said */
	CHECK_INT(ask(&ans, &t, text, sizeof(text) - 1, "cpu"), 0);
	CHECK(ph_json_get(ans.root, "clock") == NULL);
	CHECK(ph_json_get(ans.root, "trace_clock") == NULL);
	answer_release(&ans, &t);

	/* Perfetto without a snapshot or config naming it: BOOTTIME is
	 * only the format's default, so it is not said either */
	process_tree(&tr, 5000000000);
	app_runs(&tr, 5000000000, 5100000000);
	CHECK_INT(ask(&ans, &t, tr.buf, tr.len, "cpu"), 0);
	CHECK_STR(t.clock_name, "unknown");
	CHECK(ph_json_get(ans.root, "clock") == NULL);
	CHECK(ph_json_get(ans.root, "trace_clock") == NULL);
	answer_release(&ans, &t);

	/* a snapshot without primary_trace_clock: still not named */
	clock_snapshot(&tr, 5000000000, 0);
	CHECK_INT(ask(&ans, &t, tr.buf, tr.len, "cpu"), 0);
	CHECK(ph_json_get(ans.root, "trace_clock") == NULL);
	answer_release(&ans, &t);

	/* one that names BOOTTIME: named, and windows convert to MONOTONIC */
	clock_snapshot(&tr, 5000000000, PH_CLK_BOOTTIME);
	CHECK_INT(ask(&ans, &t, tr.buf, tr.len, "cpu"), 0);
	CHECK(ph_json_streq(ph_json_get(ans.root, "trace_clock"), "BOOTTIME"));
	CHECK(ph_json_streq(ph_json_get(ans.root, "clock"), "MONOTONIC"));
	answer_release(&ans, &t);

	/* the trace config's builtin_data_sources.primary_trace_clock */
	ph_buf_reset(&tr);
	pb_int(&m, 5, PH_CLK_MONOTONIC);
	pb_msg(&p, 20, &m);
	packet(&tr, -1, 33, &p);
	process_tree(&tr, 5000000000);
	app_runs(&tr, 5000000000, 5100000000);
	CHECK_INT(ask(&ans, &t, tr.buf, tr.len, "cpu"), 0);
	CHECK_STR(t.clock_name, "MONOTONIC");
	CHECK(ph_json_streq(ph_json_get(ans.root, "trace_clock"), "MONOTONIC"));
	CHECK(ph_json_streq(ph_json_get(ans.root, "clock"), "MONOTONIC"));
	answer_release(&ans, &t);
	ph_buf_release(&tr);
	ph_buf_release(&p);
	ph_buf_release(&m);
}

/* --- what the decoder leaves out ----------------------------------------- */

void test_trace__undecoded_packets_and_ts0_are_named(void)
{
	struct ph_buf tr = PH_BUF_INIT(1 << 20), p = PH_BUF_INIT(1 << 16);
	struct ph_trace t;
	struct answer ans;
	const struct ph_json *x;
	const int64_t day15 = 1316803000000000; /* 1,316,803 s after boot */

	/* the process tree stamped 0, the rest 15 days after boot */
	process_tree(&tr, 0);
	app_runs(&tr, day15, day15 + 2000000000);
	for (int i = 0; i < 3; i++) {
		/* gpu_counter_event 52 {counters 2 {counter_id 1, int_value
		 * 2}} */
		struct ph_buf c = PH_BUF_INIT(1 << 10);

		pb_int(&c, 1, 7);
		pb_int(&c, 2, 100 + (uint64_t)i);
		pb_msg(&p, 2, &c);
		packet(&tr, day15 + i * 1000000, 52, &p);
		ph_buf_release(&c);
	}
	CHECK_INT(ask(&ans, &t, tr.buf, tr.len, "cpu"), 0);
	/* the span is the trace's two seconds, not 1,316,803 s */
	CHECK_INT(t.first_ts, day15);
	CHECK_INT(t.last_ts, day15 + 2000000000);
	CHECK_INT(ph_trace_stat_get(&t, "packets_ts0_set_aside"), 1);
	CHECK_INT(ph_trace_stat_get(&t, "not_decoded.gpu_counter_event"), 3);
	x = ph_json_get(ans.root, "not_decoded");
	CHECK(x && x->n == 1);
	if (x && x->n == 1) {
		CHECK(ph_json_streq(ph_json_get(&x->u.items[0], "what"),
				    "gpu_counter_event"));
		CHECK_INT(ph_json_get(&x->u.items[0], "packets")->u.i, 3);
	}
	x = ph_json_get(ans.root, "set_aside");
	CHECK(x && x->n == 1);
	if (x && x->n == 1)
		CHECK(ph_json_streq(ph_json_get(&x->u.items[0], "what"),
				    "packets stamped 0"));
	answer_release(&ans, &t);

	/* a trace that really starts near 0 keeps its packet at 0 */
	ph_buf_reset(&tr);
	process_tree(&tr, 0);
	app_runs(&tr, 1000000, 2000000000);
	CHECK_INT(ask(&ans, &t, tr.buf, tr.len, "cpu"), 0);
	CHECK_INT(t.first_ts, 0);
	CHECK_INT(ph_trace_stat_get(&t, "packets_ts0_set_aside"), 0);
	CHECK(ph_json_get(ans.root, "set_aside") == NULL);
	CHECK(ph_json_get(ans.root, "not_decoded") == NULL);
	answer_release(&ans, &t);
	ph_buf_release(&tr);
	ph_buf_release(&p);
}

/* --- composables and main_thread_waits ----------------------------------- */

/* Detector id (the checkout's detectors/) on t for process "app". */
static int run_one(struct ph_trace *t, const char *id, struct ph_detrun *r)
{
	struct ph_tscope scope = PH_TSCOPE_INIT;
	struct ph_tctx c;
	struct ph_detset ds;
	sqlite3 *db = NULL;
	char err[256];
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = ph_detset_prepare(&ds, "detectors", NULL, NULL, 0, err,
				    sizeof(err))))
		return rc;
	for (i = 0; i < ds.n && strcmp(ds.d[i].id, id); i++)
		;
	scope.process = "app";
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

/* ftrace text lines, ts in microseconds after 1 s */
static void line_sw(struct ph_buf *b, int us, const char *prev, int ppid,
		    const char *st, const char *next, int npid)
{
	if (ph_buf_addf(b,
			"  %s-%d  (%5d) [000] d..2.  1.%06d: sched_switch: "
			"prev_comm=%s prev_pid=%d prev_prio=120 "
			"prev_state=%s ==> next_comm=%s next_pid=%d "
			"next_prio=120\n",
			prev, ppid, ppid ? 100 : 0, us, prev, ppid, st, next,
			npid))
		return;
}

static void line_mark(struct ph_buf *b, int us, const char *what)
{
	if (ph_buf_addf(b,
			"  app-100  (  100) [000] .....  1.%06d: "
			"tracing_mark_write: %s\n",
			us, what))
		return;
}

static void line_slice(struct ph_buf *b, int from, int to, const char *name)
{
	char m[128];

	snprintf(m, sizeof(m), "B|100|%s", name);
	line_mark(b, from, m);
	line_mark(b, to, "E|100");
}

/* waker tid 0 is the kernel (an interrupt), else worker-101 of app */
static void line_wake(struct ph_buf *b, int us, int waker)
{
	if (ph_buf_addf(b,
			"  %s-%d  (%5d) [001] d..2.  1.%06d: sched_waking: "
			"comm=app pid=100 prio=120 target_cpu=000\n",
			waker ? "worker" : "<idle>", waker, waker ? 100 : 0,
			us))
		return;
}

void test_trace__composables_and_main_thread_waits(void)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	struct ph_trace t;
	struct ph_detrun r;

	CHECK_INT(ph_buf_addstr(&b, "# trace_clock: mono\n"), 0);
	line_sw(&b, 0, "swapper/0", 0, "R", "app", 100);
	/* Recompose:Row 30 times x 1 ms (repeated), Recompose:Header once
	 * for 10 ms (long), Compose:tiny once for 1 ms (neither) */
	for (int i = 0; i < 30; i++)
		line_slice(&b, 10000 + 2000 * i, 11000 + 2000 * i,
			   "Recompose:Row");
	line_slice(&b, 100000, 110000, "Recompose:Header");
	line_slice(&b, 120000, 121000, "Compose:tiny");
	/* doFrame 200-300 ms sleeps 210-240, woken by worker-101 */
	line_mark(&b, 200000, "B|100|doFrame");
	line_sw(&b, 210000, "app", 100, "S", "swapper/0", 0);
	line_wake(&b, 239999, 101);
	line_sw(&b, 240000, "swapper/0", 0, "R", "app", 100);
	line_mark(&b, 300000, "E|100");
	/* asleep in no slice 301-400: the loop waiting, left out */
	line_sw(&b, 301000, "app", 100, "S", "swapper/0", 0);
	line_wake(&b, 399999, 0);
	line_sw(&b, 400000, "swapper/0", 0, "R", "app", 100);
	/* load 400-500 blocks (D) 410-450, woken by an interrupt */
	line_mark(&b, 400001, "B|100|load");
	line_sw(&b, 410000, "app", 100, "D", "swapper/0", 0);
	line_wake(&b, 449999, 0);
	line_sw(&b, 450000, "swapper/0", 0, "R", "app", 100);
	line_mark(&b, 500000, "E|100");
	/* parse 500-600 sleeps 510-530 with no waking in the trace */
	line_mark(&b, 500001, "B|100|parse");
	line_sw(&b, 510000, "app", 100, "S", "swapper/0", 0);
	line_sw(&b, 530000, "swapper/0", 0, "R", "app", 100);
	line_mark(&b, 600000, "E|100");
	line_sw(&b, 600001, "app", 100, "S", "swapper/0", 0);
	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, b.buf, b.len), 0);

	CHECK_INT(run_one(&t, "composables", &r), 0);
	CHECK(r.ok);
	CHECK_INT(r.nrows, 2);
	CHECK(r.rows.buf &&
	      strstr(r.rows.buf,
		     "\"location\":\"Recompose:Row\",\"count\":30") != NULL);
	CHECK(r.rows.buf && strstr(r.rows.buf, "recomposed 30 times") != NULL);
	CHECK(r.rows.buf &&
	      strstr(r.rows.buf,
		     "\"location\":\"Recompose:Header\",\"count\":1") != NULL);
	CHECK(r.rows.buf && strstr(r.rows.buf, "Compose:tiny") == NULL);
	ph_detrun_release(&r);

	CHECK_INT(run_one(&t, "main_thread_waits", &r), 0);
	CHECK(r.ok);
	CHECK_INT(r.nrows, 3);
	CHECK(r.rows.buf &&
	      strstr(r.rows.buf,
		     "\"location\":\"doFrame: woken by thread 101 (app)\",\"count\":"
		     "1,\"self_ms\":29.999") != NULL);
	CHECK(r.rows.buf &&
	      strstr(r.rows.buf,
		     "\"location\":\"load: woken by the kernel "
		     "(an interrupt)\",\"count\":1,\"self_ms\":39.999") !=
		      NULL);
	CHECK(r.rows.buf &&
	      strstr(r.rows.buf, "\"location\":\"parse: waker not seen\"") !=
		      NULL);
	ph_detrun_release(&r);
	ph_trace_release(&t);
	ph_buf_release(&b);
}

/* --- perf samples ----------------------------------------------------------
 */

/* InternedString {iid 1, str 2} as field id of m */
static void interned_str(struct ph_buf *m, uint32_t id, uint64_t iid,
			 const char *s)
{
	struct ph_buf e = PH_BUF_INIT(1 << 10);

	pb_int(&e, 1, iid);
	pb_bytes(&e, 2, s, strlen(s));
	pb_msg(m, id, &e);
	ph_buf_release(&e);
}

/* A message {iid 1, then each of the varint fields f[i] = v[i]} */
static void interned_msg(struct ph_buf *m, uint32_t id, uint64_t iid,
			 const uint32_t *f, const uint64_t *v, size_t n)
{
	struct ph_buf e = PH_BUF_INIT(1 << 10);

	pb_int(&e, 1, iid);
	for (size_t i = 0; i < n; i++)
		pb_int(&e, f[i], v[i]);
	pb_msg(m, id, &e);
	ph_buf_release(&e);
}

void test_trace__perf_samples_name_uninstrumented_cpu(void)
{
	static const char *const fns[] = {
		"android.os.Looper.loop",
		"void com.example.GzipSink.write(byte[])",
		"deflate",
		"com.example.JsonParser.parse",
		"__schedule",
	};
	static const char *const paths[] = {
		"data",	  "app",       "base.apk",
		"system", "lib64",     "libz.so",
		"kernel", "framework", "boot-framework.oat"
	};
	/* mappings: /data/app/base.apk, /system/lib64/libz.so, /kernel,
	 * /system/framework/boot-framework.oat (path_string_ids 7) */
	static const uint64_t maps[4][3] = {
		{ 1, 2, 3 }, { 4, 5, 6 }, { 7, 0, 0 }, { 4, 8, 9 }
	};
	/* frames {function_name_id 2, mapping_id 3} */
	static const uint64_t frames[5][2] = {
		{ 1, 4 }, { 2, 1 }, { 3, 2 }, { 4, 1 }, { 5, 3 }
	};
	static const uint32_t ff[2] = { 2, 3 };
	struct ph_buf tr = PH_BUF_INIT(1 << 20), m = PH_BUF_INIT(1 << 16),
		      e = PH_BUF_INIT(1 << 16), pkt = PH_BUF_INIT(1 << 16);
	struct ph_trace t;
	struct ph_detrun r;

	process_tree(&tr, 1000000000);
	app_runs(&tr, 1000000000, 1200000000);
	for (size_t i = 0; i < 5; i++)
		interned_str(&m, 5, i + 1, fns[i]);
	for (size_t i = 0; i < 9; i++)
		interned_str(&m, 17, i + 1, paths[i]);
	for (size_t i = 0; i < 4; i++) {
		pb_int(&e, 1, i + 1);
		for (size_t k = 0; k < 3 && maps[i][k]; k++)
			pb_int(&e, 7, maps[i][k]);
		pb_msg(&m, 19, &e);
	}
	for (size_t i = 0; i < 5; i++)
		interned_msg(&m, 6, i + 1, ff, frames[i], 2);
	/* callstacks, root first: Looper > GzipSink.write > deflate (libz),
	 * Looper > JsonParser.parse > __schedule (the kernel), packed */
	for (uint64_t i = 0; i < 2; i++) {
		uint8_t ids[3] = { 1, (uint8_t)(i ? 4 : 2),
				   (uint8_t)(i ? 5 : 3) };

		pb_int(&e, 1, i + 1);
		pb_bytes(&e, 2, ids, 3);
		pb_msg(&m, 7, &e);
	}
	pb_int(&pkt, 10, 7);
	pb_int(&pkt, 13, 1);
	pb_msg(&pkt, 12, &m);
	pb_msg(&tr, 1, &pkt);
	/* 15 samples in the first stack, 13 in the second */
	for (int i = 0; i < 28; i++) {
		pb_int(&e, 1, 0);
		pb_int(&e, 2, 100);
		pb_int(&e, 3, 100);
		pb_int(&e, 4, i < 15 ? 1 : 2);
		pb_int(&pkt, 8, 1010000000 + (uint64_t)i * 5000000);
		pb_int(&pkt, 10, 7);
		pb_msg(&pkt, 66, &e);
		pb_msg(&tr, 1, &pkt);
	}
	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, tr.buf, tr.len), 0);
	CHECK_INT(ph_trace_stat_get(&t, "perf_sample"), 28);
	CHECK_INT(t.tables[PH_T_SAMPLE].rows, 28);
	{
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		CHECK_INT(ph_trace_sql_open(&t, &db), 0);
		CHECK_INT(sqlite3_prepare_v2(
				  db,
				  "SELECT leaf, app_frame, stack, COUNT(*) "
				  "FROM perf_sample GROUP BY stack ORDER BY "
				  "stack",
				  -1, &st, NULL),
			  SQLITE_OK);
		CHECK_INT(sqlite3_step(st), SQLITE_ROW);
		CHECK_STR((const char *)sqlite3_column_text(st, 0), "deflate");
		CHECK_STR((const char *)sqlite3_column_text(st, 1),
			  "GzipSink.write");
		CHECK_STR((const char *)sqlite3_column_text(st, 2),
			  "Looper.loop;GzipSink.write;deflate");
		CHECK_INT(sqlite3_column_int(st, 3), 15);
		CHECK_INT(sqlite3_step(st), SQLITE_ROW);
		/* the kernel's frame under it is how it waited */
		CHECK_STR((const char *)sqlite3_column_text(st, 0),
			  "JsonParser.parse");
		CHECK_STR((const char *)sqlite3_column_text(st, 2),
			  "Looper.loop;JsonParser.parse;__schedule");
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	CHECK_INT(run_one(&t, "uninstrumented_cpu", &r), 0);
	CHECK(r.ok);
	CHECK(r.rows.buf && strstr(r.rows.buf, "28 stacks: GzipSink.write 54%, "
					       "JsonParser.parse 46%") != NULL);
	ph_detrun_release(&r);
	ph_trace_release(&t);
	ph_buf_release(&tr);
	ph_buf_release(&m);
	ph_buf_release(&e);
	ph_buf_release(&pkt);
}

/* --- binder from protobuf ftrace ------------------------------------------ */

/* One bundle on CPU cpu with one event of kind by pid at ts. */
static void ftrace_ev(struct ph_buf *trace, int cpu, int64_t ts, int pid,
		      uint32_t kind, struct ph_buf *payload)
{
	struct ph_buf b = PH_BUF_INIT(1 << 16), ev = PH_BUF_INIT(1 << 16);

	pb_int(&b, 1, (uint64_t)cpu);
	pb_int(&ev, 1, (uint64_t)ts);
	pb_int(&ev, 2, (uint64_t)pid);
	pb_msg(&ev, kind, payload);
	pb_msg(&b, 2, &ev);
	packet(trace, -1, 1, &b);
	ph_buf_release(&b);
	ph_buf_release(&ev);
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

void test_trace__binder_from_protobuf_ftrace(void)
{
	/* as test_trace__binder_from_ftrace_text: app's main thread (100)
	 * calls system_server's binder thread 1501 for 40 ms, then a
	 * one-way call; binder_transaction 50 {debug_id 1, reply 5, flags
	 * 7}, binder_transaction_received 51 {debug_id 1} */
	struct ph_buf tr = PH_BUF_INIT(1 << 20), p = PH_BUF_INIT(1 << 16);
	struct ph_trace t;

	process_tree(&tr, 1000000000);
	app_runs(&tr, 1000000000, 1100000000);
	pb_int(&p, 1, 77);
	pb_int(&p, 5, 0);
	pb_int(&p, 7, 0x10);
	ftrace_ev(&tr, 0, 1010000000, 100, 50, &p);
	pb_int(&p, 1, 77);
	ftrace_ev(&tr, 1, 1012000000, 1501, 51, &p);
	pb_int(&p, 1, 78);
	pb_int(&p, 5, 1);
	ftrace_ev(&tr, 1, 1048000000, 1501, 50, &p);
	pb_int(&p, 1, 78);
	ftrace_ev(&tr, 0, 1050000000, 100, 51, &p);
	pb_int(&p, 1, 79);
	pb_int(&p, 7, 0x11);
	ftrace_ev(&tr, 0, 1060000000, 100, 50, &p);
	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, tr.buf, tr.len), 0);
	CHECK_INT(ph_trace_stat_get(&t, "ftrace.binder_transaction"), 3);
	CHECK_INT(ph_trace_stat_get(&t, "ftrace.binder_transaction_received"),
		  2);
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
	ph_trace_release(&t);
	ph_buf_release(&tr);
	ph_buf_release(&p);
}
