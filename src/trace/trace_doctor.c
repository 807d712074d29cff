/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_doctor.c: `porthole trace doctor`: the whole detector set (the
 * analyzer's detectors and the eight questions) on a built-in fixture with
 * planted problems.  Every detector must fire on its planted problem, or
 * be named silent with the reason the fixture cannot hold one (the
 * detector's `@doctor:` header).
 *
 * The fixture is a Perfetto protobuf trace generated here (so it takes
 * the decoder's path, frame timeline and android_log included), ~600 ms of
 * one app, com.example.doctor (pid 1000: main thread 1000, RenderThread
 * 1001, HeapTaskDaemon 1002), and system_server (pid 1500, binder thread
 * 1501), on two CPUs, kernel 5.10 (so prev_state bits read the new way).
 * Times below are ms after the first event.
 *
 *   main thread (CPU 0)           planted for
 *   0-60     bindApplication      app_init, ask startup (60 ms: slow)
 *     5-45   Application.onCreate main_thread_block, ask slices (self
 *                                 40 ms, depth 1)
 *   60-70    D, io_wait, blocked  io_wait, ask thread_states
 *   70-130   Running, no slice    uninstrumented_cpu, ask cpu
 *   70-188   never asleep (Running, main_thread_stall (118 ms from 70,
 *            R+, loadConfig)      in no slice)
 *   130-138  R+ (system_server)   runnable_starvation, ask thread_states
 *   138-188  loadConfig           top level: neither main_thread_block
 *                                 nor ask slices (depth 0 is left out)
 *   200-215  binder transaction   binder_txn, ask binder (S 201-214,
 *                                 woken by binder:1500_1)
 *   220-320  measure x7 (2 ms x6, main_thread_outlier (30 ms vs 2)
 *            then 30 ms)
 *   330-338  monitor contention   monitor_contention, ask monitor_contention
 *   340-450  RecyclerView:bind    anr_risk (110 ms with children)
 *     inflate x25, 3.5 ms each    repeated_work
 *   460-490  Choreographer#doFrame  ask render
 *     150-162 Recompose:CartList composables (12 ms: long; depth 1)
 *   201-214 and 331-337 asleep inside a slice, woken by binder:1500_1 and
 *            HeapTaskDaemon      main_thread_waits
 *   HeapTaskDaemon 100-130: concurrent copying GC    gc_pressure
 *   RenderThread 480-505: DrawFrame                   ask render
 *   frame 11: expected 460-476.6, actual 460-505,     frame_jank, ask jank
 *     App Deadline Missed
 *   log at 550: "ANR in com.example.doctor"           anr
 *
 * The environment (trace_env.c), stated by analyze and ask:
 *   cpufreq: both CPUs at 2000000 kHz, CPU 0 at 500000 kHz 20-100
 *     (below half its peak: the main thread's Running 20-60 in
 *     start-up, 70-100 after)     ask startup and ask cpu at a low
 *                                  frequency (40 and 70 ms)
 *   cooling device thermal-cpufreq-0: 0, state 2 300-400, 0 again
 *                                  ask cpu throttled (main ran 94 ms of
 *                                  it); the start-up was not: ruled out
 *   cooling device thermal-gpu: 0, state 1 470-480, 0 again
 *                                  ask jank: the late frame 11 (460-505)
 *                                  throttled; ask cpu (main ran 10 ms)
 *   zone cpu: 45 C, 72 C at 300, 50 C at 400
 *   process_stats of pid 1000 at 0, 250, 500: RSS 100000, 150000,
 *     120000 kB (anon 60000/110000/80000, file 40000, swap 0/1000/2000);
 *     sys_stats MemAvailable 2000000 kB at 0
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_cli.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

/* --- a protobuf writer, just enough for the fixture ---------------------- */

struct pbw {
	struct ph_buf b;
	int err; /* sticky */
};

static void pb_raw_varint(struct pbw *w, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	if (!w->err)
		w->err = ph_buf_add(&w->b, tmp, n);
}

static void pb_varint(struct pbw *w, uint32_t field, uint64_t v)
{
	pb_raw_varint(w, (uint64_t)field << 3);
	pb_raw_varint(w, v);
}

static void pb_bytes(struct pbw *w, uint32_t field, const void *p, size_t n)
{
	pb_raw_varint(w, (uint64_t)field << 3 | 2);
	pb_raw_varint(w, n);
	if (!w->err)
		w->err = ph_buf_add(&w->b, p, n);
}

static void pb_str(struct pbw *w, uint32_t field, const char *s)
{
	pb_bytes(w, field, s, strlen(s));
}

/* Appends sub as a nested message and empties it. */
static void pb_msg(struct pbw *w, uint32_t field, struct pbw *sub)
{
	if (sub->err && !w->err)
		w->err = sub->err;
	pb_bytes(w, field, sub->b.buf, sub->b.len);
	ph_buf_reset(&sub->b);
}

/* --- the fixture ---------------------------------------------------------- */

#define T0    10000000000ll /* the first event, BOOTTIME ns */
#define MS(x) (T0 + (int64_t)((x)*1e6))

struct fx {
	struct pbw out, pkt, ev, sub;
};

/* One packet with one bundle holding one ftrace event (f->sub as kind). */
static void packet_ftrace(struct fx *f, double ms, int cpu, int pid,
			  uint32_t kind)
{
	struct pbw bundle = { PH_BUF_INIT(1 << 20), 0 };

	pb_varint(&f->ev, 1, (uint64_t)MS(ms));
	pb_varint(&f->ev, 2, (uint64_t)pid);
	pb_msg(&f->ev, kind, &f->sub);
	pb_varint(&bundle, 1, (uint64_t)cpu);
	pb_msg(&bundle, 2, &f->ev);
	pb_varint(&f->pkt, 10, 1);
	pb_msg(&f->pkt, 1, &bundle);
	pb_msg(&f->out, 1, &f->pkt);
	ph_buf_release(&bundle.b);
}

static const char *comm_of(int pid)
{
	switch (pid) {
	case 0: return "swapper/0";
	case 1000: return "example.doctor";
	case 1001: return "RenderThread";
	case 1002: return "HeapTaskDaemon";
	case 1500: return "system_server";
	case 1501: return "binder:1500_1";
	default: return "?";
	}
}

/* prev_state: 0 R, 1 S, 2 D, 0x100 R+ (kernel >= 4.14) */
static void sw(struct fx *f, double ms, int cpu, int prev, int state, int next)
{
	pb_str(&f->sub, 1, comm_of(prev));
	pb_varint(&f->sub, 2, (uint64_t)prev);
	pb_varint(&f->sub, 3, 120);
	pb_varint(&f->sub, 4, (uint64_t)state);
	pb_str(&f->sub, 5, comm_of(next));
	pb_varint(&f->sub, 6, (uint64_t)next);
	pb_varint(&f->sub, 7, 120);
	packet_ftrace(f, ms, cpu, prev, 4);
}

static void wake(struct fx *f, double ms, int cpu, int waker, int pid)
{
	pb_str(&f->sub, 1, comm_of(pid));
	pb_varint(&f->sub, 2, (uint64_t)pid);
	pb_varint(&f->sub, 3, 120);
	pb_varint(&f->sub, 4, 1);
	pb_varint(&f->sub, 5, (uint64_t)cpu);
	packet_ftrace(f, ms, cpu, waker, 20);
}

static void mark(struct fx *f, double ms, int cpu, int tid, int tgid,
		 const char *name)
{
	char buf[512];

	if (name)
		snprintf(buf, sizeof(buf), "B|%d|%s\n", tgid, name);
	else
		snprintf(buf, sizeof(buf), "E|%d\n", tgid);
	pb_varint(&f->sub, 1, 0xffffffff81000000ull);
	pb_str(&f->sub, 2, buf);
	packet_ftrace(f, ms, cpu, tid, 3);
}

static void slice(struct fx *f, double from, double to, int cpu, int tid,
		  int tgid, const char *name)
{
	mark(f, from, cpu, tid, tgid, name);
	mark(f, to, cpu, tid, tgid, NULL);
}

static void frame(struct fx *f, int64_t token, double from, double exp_end,
		  double act_end, uint64_t jank, uint64_t present)
{
	/* expected surface frame 3 {cookie 1, token 2, display token 3, pid
	 * 4, layer 5}; actual 4 {... present 6, on_time 7, gpu 8, jank 9,
	 * prediction 10}; frame_end 5 {cookie 1} */
	struct pbw fr = { PH_BUF_INIT(1 << 16), 0 };

	for (int actual = 0; actual < 2; actual++) {
		int64_t cookie = token * 2 + actual;

		pb_varint(&f->sub, 1, (uint64_t)cookie);
		pb_varint(&f->sub, 2, (uint64_t)token);
		pb_varint(&f->sub, 3, (uint64_t)token + 100);
		pb_varint(&f->sub, 4, 1000);
		pb_str(&f->sub, 5, "com.example.doctor/MainActivity");
		if (actual) {
			pb_varint(&f->sub, 6, present);
			pb_varint(&f->sub, 7, jank == 1);
			pb_varint(&f->sub, 8, 0);
			pb_varint(&f->sub, 9, jank);
			pb_varint(&f->sub, 10, 1);
		}
		pb_msg(&fr, actual ? 4 : 3, &f->sub);
		pb_varint(&f->pkt, 8, (uint64_t)MS(from));
		pb_msg(&f->pkt, 76, &fr);
		pb_msg(&f->out, 1, &f->pkt);
		pb_varint(&f->sub, 1, (uint64_t)cookie);
		pb_msg(&fr, 5, &f->sub);
		pb_varint(&f->pkt, 8, (uint64_t)MS(actual ? act_end : exp_end));
		pb_msg(&f->pkt, 76, &fr);
		pb_msg(&f->out, 1, &f->pkt);
	}
	ph_buf_release(&fr.b);
}

static void process_tree(struct fx *f)
{
	static const struct {
		int pid;
		const char *cmdline;
	} procs[] = { { 1000, "com.example.doctor" },
		      { 1500, "system_server" } };
	static const int tids[][2] = {
		{ 1000, 1000 }, { 1001, 1000 }, { 1002, 1000 },
		{ 1500, 1500 }, { 1501, 1500 },
	};
	struct pbw tree = { PH_BUF_INIT(1 << 16), 0 };

	for (size_t i = 0; i < PH_ARRAY_SIZE(procs); i++) {
		pb_varint(&f->sub, 1, (uint64_t)procs[i].pid);
		pb_varint(&f->sub, 2, 1);
		pb_str(&f->sub, 3, procs[i].cmdline);
		pb_msg(&tree, 1, &f->sub);
	}
	for (size_t i = 0; i < PH_ARRAY_SIZE(tids); i++) {
		pb_varint(&f->sub, 1, (uint64_t)tids[i][0]);
		pb_str(&f->sub, 2, comm_of(tids[i][0]));
		pb_varint(&f->sub, 3, (uint64_t)tids[i][1]);
		pb_msg(&tree, 2, &f->sub);
	}
	pb_varint(&f->pkt, 8, (uint64_t)MS(0));
	pb_msg(&f->pkt, 2, &tree);
	pb_msg(&f->out, 1, &f->pkt);
	ph_buf_release(&tree.b);
}

static void header(struct fx *f)
{
	struct pbw m = { PH_BUF_INIT(1 << 16), 0 };

	/* system_info {utsname {sysname 1, release 3}} */
	pb_str(&f->sub, 1, "Linux");
	pb_str(&f->sub, 3, "5.10.0-doctor");
	pb_msg(&m, 1, &f->sub);
	pb_msg(&f->pkt, 45, &m);
	pb_msg(&f->out, 1, &f->pkt);
	/* clock_snapshot: BOOTTIME T0 is MONOTONIC T0 - 2 s */
	pb_varint(&f->sub, 1, 6);
	pb_varint(&f->sub, 2, (uint64_t)T0);
	pb_msg(&m, 1, &f->sub);
	pb_varint(&f->sub, 1, 3);
	pb_varint(&f->sub, 2, (uint64_t)(T0 - 2000000000ll));
	pb_msg(&m, 1, &f->sub);
	pb_msg(&f->pkt, 6, &m);
	pb_msg(&f->out, 1, &f->pkt);
	ph_buf_release(&m.b);
}

static void anr_log(struct fx *f, double ms)
{
	struct pbw m = { PH_BUF_INIT(1 << 16), 0 };

	pb_varint(&f->sub, 2, 1500);
	pb_varint(&f->sub, 3, 1500);
	pb_varint(&f->sub, 5, (uint64_t)MS(ms));
	pb_str(&f->sub, 6, "ActivityManager");
	pb_varint(&f->sub, 7, 6);
	pb_str(&f->sub, 8,
	       "ANR in com.example.doctor (com.example.doctor/.MainActivity)");
	pb_msg(&m, 1, &f->sub);
	pb_varint(&f->pkt, 8, (uint64_t)MS(ms));
	pb_msg(&f->pkt, 39, &m);
	pb_msg(&f->out, 1, &f->pkt);
	ph_buf_release(&m.b);
}

/* cpu_frequency 11 {state 1, cpu_id 2} */
static void cpufreq(struct fx *f, double ms, int cpu, uint64_t khz)
{
	pb_varint(&f->sub, 1, khz);
	pb_varint(&f->sub, 2, (uint64_t)cpu);
	packet_ftrace(f, ms, cpu, 0, 11);
}

/* thermal_temperature 341 {temp 2, thermal_zone 4}; cdev_update 342
 * {target 1, type 2} */
static void thermal(struct fx *f, double ms, const char *zone, uint64_t mc,
		    const char *dev, uint64_t state)
{
	if (zone) {
		pb_varint(&f->sub, 2, mc);
		pb_str(&f->sub, 4, zone);
		packet_ftrace(f, ms, 1, 0, 341);
	}
	if (dev) {
		pb_varint(&f->sub, 1, state);
		pb_str(&f->sub, 2, dev);
		packet_ftrace(f, ms, 1, 0, 342);
	}
}

/* process_stats 9 {processes 1 {pid 1, vm_rss_kb 3, rss_anon_kb 4,
 * rss_file_kb 5, vm_swap_kb 7}}; with avail_kb, sys_stats 7 {meminfo 1
 * {key 1 (3: MemAvailable), value 2}} */
static void memory(struct fx *f, double ms, int pid, const uint64_t kb[4],
		   uint64_t avail_kb)
{
	static const uint32_t fields[4] = { 3, 4, 5, 7 };
	struct pbw m = { PH_BUF_INIT(1 << 16), 0 };

	pb_varint(&f->sub, 1, (uint64_t)pid);
	for (int i = 0; i < 4; i++)
		pb_varint(&f->sub, fields[i], kb[i]);
	pb_msg(&m, 1, &f->sub);
	pb_varint(&f->pkt, 8, (uint64_t)MS(ms));
	pb_msg(&f->pkt, 9, &m);
	pb_msg(&f->out, 1, &f->pkt);
	if (avail_kb) {
		pb_varint(&f->sub, 1, 3);
		pb_varint(&f->sub, 2, avail_kb);
		pb_msg(&m, 1, &f->sub);
		pb_varint(&f->pkt, 8, (uint64_t)MS(ms));
		pb_msg(&f->pkt, 7, &m);
		pb_msg(&f->out, 1, &f->pkt);
	}
	ph_buf_release(&m.b);
}

static void blocked(struct fx *f, double ms, int pid, uint64_t caller)
{
	pb_varint(&f->sub, 1, (uint64_t)pid);
	pb_varint(&f->sub, 2, caller);
	pb_varint(&f->sub, 3, 1);
	packet_ftrace(f, ms, 0, pid, 18);
}

int ph_trace_doctor_fixture(struct ph_buf *out)
{
	struct fx f;
	const int M = 1000; /* the main thread */
	int err;

	memset(&f, 0, sizeof(f));
	f.out.b = (struct ph_buf)PH_BUF_INIT(1 << 24);
	f.pkt.b = (struct ph_buf)PH_BUF_INIT(1 << 20);
	f.ev.b = (struct ph_buf)PH_BUF_INIT(1 << 20);
	f.sub.b = (struct ph_buf)PH_BUF_INIT(1 << 20);
	header(&f);
	process_tree(&f);
	/* CPU 0: the main thread */
	sw(&f, 0, 0, 0, 0, M);
	slice(&f, 0, 60, 0, M, M, "bindApplication");
	slice(&f, 5, 45, 0, M, M, "Application.onCreate");
	sw(&f, 60, 0, M, 2, 0);
	blocked(&f, 60.001, M, 0xffffffff8123abcdull);
	wake(&f, 69.99, 0, 0, M);
	sw(&f, 70, 0, 0, 0, M);
	sw(&f, 130, 0, M, 0x100, 1500);
	sw(&f, 138, 0, 1500, 1, M);
	slice(&f, 138, 188, 0, M, M, "loadConfig");
	slice(&f, 150, 162, 0, M, M, "Recompose:CartList");
	sw(&f, 188, 0, M, 1, 0);
	wake(&f, 199.99, 0, 0, M);
	sw(&f, 200, 0, 0, 0, M);
	slice(&f, 200, 215, 0, M, M, "binder transaction");
	sw(&f, 201, 0, M, 1, 0);
	wake(&f, 213.99, 1, 1501, M);
	sw(&f, 214, 0, 0, 0, M);
	for (int k = 0; k < 6; k++)
		slice(&f, 220 + 10 * k, 222 + 10 * k, 0, M, M, "measure");
	slice(&f, 290, 320, 0, M, M, "measure");
	slice(&f, 330, 338, 0, M, M,
	      "monitor contention with owner HeapTaskDaemon (1002) at void "
	      "com.example.Cache.get()(Cache.java:42) waiters=0 blocking "
	      "from void com.example.Main.onCreate()(Main.java:7)");
	sw(&f, 331, 0, M, 1, 0);
	wake(&f, 336.99, 1, 1002, M);
	sw(&f, 337, 0, 0, 0, M);
	mark(&f, 340, 0, M, M, "RecyclerView:bind");
	for (int k = 0; k < 25; k++)
		slice(&f, 342 + 4 * k, 345.5 + 4 * k, 0, M, M, "inflate");
	mark(&f, 450, 0, M, M, NULL);
	slice(&f, 460, 490, 0, M, M, "Choreographer#doFrame 11");
	sw(&f, 490, 0, M, 1, 0);
	/* CPU 1: the others */
	sw(&f, 100, 1, 0, 0, 1002);
	slice(&f, 100, 130, 1, 1002, M, "concurrent copying GC");
	sw(&f, 130, 1, 1002, 1, 0);
	sw(&f, 201, 1, 0, 0, 1501);
	slice(&f, 201, 213, 1, 1501, 1500, "binder reply");
	sw(&f, 213, 1, 1501, 1, 0);
	sw(&f, 480, 1, 0, 0, 1001);
	slice(&f, 480, 505, 1, 1001, M, "DrawFrame 11");
	sw(&f, 505, 1, 1001, 1, 0);
	sw(&f, 600, 1, 0, 0, 1500);
	/* frames: 10 on time, 11 late (App Deadline Missed = 1 << 6) */
	frame(&f, 10, 400, 416.6, 416, 1, 1);
	frame(&f, 11, 460, 476.6, 505, 1 << 6, 2);
	anr_log(&f, 550);
	/* the environment */
	cpufreq(&f, 0, 0, 2000000);
	cpufreq(&f, 0, 1, 2000000);
	cpufreq(&f, 20, 0, 500000);
	cpufreq(&f, 100, 0, 2000000);
	thermal(&f, 0, "cpu", 45000, "thermal-cpufreq-0", 0);
	thermal(&f, 300, "cpu", 72000, "thermal-cpufreq-0", 2);
	thermal(&f, 400, "cpu", 50000, "thermal-cpufreq-0", 0);
	thermal(&f, 0, NULL, 0, "thermal-gpu", 0);
	thermal(&f, 470, NULL, 0, "thermal-gpu", 1);
	thermal(&f, 480, NULL, 0, "thermal-gpu", 0);
	memory(&f, 0, M, (const uint64_t[4]){ 100000, 60000, 40000, 0 },
	       2000000);
	memory(&f, 250, M, (const uint64_t[4]){ 150000, 110000, 40000, 1000 },
	       0);
	memory(&f, 500, M, (const uint64_t[4]){ 120000, 80000, 40000, 2000 },
	       0);
	err = f.out.err ? f.out.err :
	      f.pkt.err ? f.pkt.err :
	      f.ev.err	? f.ev.err :
			  f.sub.err;
	if (!err)
		err = ph_buf_add(out, f.out.b.buf, f.out.b.len);
	ph_buf_release(&f.out.b);
	ph_buf_release(&f.pkt.b);
	ph_buf_release(&f.ev.b);
	ph_buf_release(&f.sub.b);
	return err;
}

/* --- the check ----------------------------------------------------------- */

/* What each shipped detector must find in the fixture (a location part). */
static const struct {
	const char *id, *expect;
} planted[] = {
	{ "main_thread_block", "Application.onCreate" },
	{ "main_thread_outlier", "measure" },
	{ "binder_txn", "binder transaction" },
	{ "monitor_contention", "monitor contention with owner" },
	{ "io_wait", "0xffffffff8123abcd" },
	{ "runnable_starvation", "main thread R+" },
	{ "uninstrumented_cpu", "main thread outside slices" },
	{ "main_thread_stall", "main thread, no slice" },
	{ "gc_pressure", "concurrent copying GC" },
	{ "app_init", "bindApplication" },
	{ "repeated_work", "inflate" },
	{ "frame_jank", "App Deadline Missed" },
	{ "anr_risk", "RecyclerView:bind" },
	{ "anr", "ANR in com.example.doctor" },
	{ "composables", "Recompose:CartList" },
	{ "main_thread_waits", "binder transaction: woken by binder:1500_1" },
	{ "ask_jank", "App Deadline Missed" },
	{ "ask_thread_states", "main thread in D" },
	{ "ask_binder", "binder transaction" },
	{ "ask_render", "DrawFrame" },
	{ "ask_slices", "Application.onCreate" },
	{ "ask_startup", "bindApplication" },
	{ "ask_monitor_contention", "monitor contention" },
	{ "ask_cpu", "main thread outside slices" },
};

/* The parameters the project set, into the answer and as text. */
static void overrides(const struct ph_detector *d, struct ph_jw *w, char *text,
		      size_t n)
{
	size_t k = 0;
	bool any = false;

	if (text)
		text[0] = 0;
	for (size_t i = 0; i < d->nparams; i++) {
		if (!d->params[i].overridden)
			continue;
		if (!any) {
			ph_jw_key(w, "overrides");
			ph_jw_obj_begin(w);
		}
		ph_jw_kv_str(w, d->params[i].name, d->params[i].value);
		if (text && k < n)
			k += (size_t)snprintf(text + k, n - k, "%s%s=%s",
					      any ? ", " : " (with ",
					      d->params[i].name,
					      d->params[i].value);
		any = true;
	}
	if (any)
		ph_jw_obj_end(w);
	if (any && text && k < n)
		snprintf(text + k, n - k, ")");
}

static const char *expectation(const char *id)
{
	for (size_t i = 0; i < PH_ARRAY_SIZE(planted); i++)
		if (!strcmp(planted[i].id, id))
			return planted[i].expect;
	return NULL;
}

int ph_trace_cmd_doctor(const struct ph_trace_doctor_opts *o, FILE *f)
{
	struct ph_buf fx = PH_BUF_INIT(1 << 24);
	struct ph_buf js = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_trace t;
	struct ph_tscope scope = PH_TSCOPE_INIT;
	struct ph_detset ds;
	struct ph_tctx c;
	struct ph_jw w;
	sqlite3 *db = NULL;
	char err[512];
	bool json = o->json;
	size_t fired = 0, excused = 0, bad = 0;
	int status = 2;

	/*
	 * The project's parameters (porthole-trace.yml, --set) apply here
	 * too: the doctor then says whether the thresholds the project runs
	 * with still catch the planted problems.  A bad config exits 2.
	 */
	if (ph_detset_prepare(&ds, ph_trace_detectors_dir(o->det.dir),
			      o->det.config, o->det.sets, o->det.nsets, err,
			      sizeof(err))) {
		fprintf(stderr, "porthole trace doctor: %s\n", err);
		ph_buf_release(&fx);
		return 2;
	}
	if (ph_trace_init(&t)) {
		ph_warn("doctor: out of memory");
		goto out;
	}
	if (ph_trace_doctor_fixture(&fx)) {
		ph_warn("doctor: cannot build the fixture");
		goto out;
	}
	if (o->write && ph_trace_write_file(o->write, fx.buf, fx.len))
		goto out;
	if (ph_trace_load_mem(&t, fx.buf, fx.len) ||
	    ph_trace_sql_open(&t, &db)) {
		ph_warn("doctor: the built-in fixture does not load");
		goto out;
	}
	scope.process = "com.example.doctor";
	if (ph_tctx_open(db, &t, &scope, &c, err, sizeof(err)) ||
	    ph_tctx_claim_names(db, &ds, err, sizeof(err))) {
		ph_warn("doctor: %s", err);
		goto out;
	}
	ph_jw_init(&w, &js);
	ph_jw_obj_begin(&w);
	ph_jw_kv_int(&w, "fixture_bytes", (int64_t)fx.len);
	ph_jw_kv_str(&w, "process", c.pname);
	if (c.cpu_err[0])
		ph_jw_kv_str(&w, "context_warning", c.cpu_err);
	ph_jw_key(&w, "detectors");
	ph_jw_arr_begin(&w);
	if (!json)
		fprintf(f,
			"porthole trace doctor: %zu detectors on a built-in "
			"%zu-byte fixture (%s, pid %" PRId64 ")\n",
			ds.n, fx.len, c.pname, c.pid);
	for (size_t i = 0; i < ds.n; i++) {
		struct ph_detrun r;
		const struct ph_detector *d = &ds.d[i];
		const char *expect = expectation(d->id), *verdict, *why = "";
		char why_buf[600], ovr[200];

		memset(&r, 0, sizeof(r));
		r.d = d;
		ph_detrun_run(db, &r);
		if (!r.ok) {
			verdict = "failed";
			why = r.err;
			bad++;
		} else if (r.unanswered) {
			verdict = "unanswered";
			why = r.reason;
			bad++;
		} else if (r.nrows && expect && !strstr(r.rows.buf, expect)) {
			verdict = "missed";
			snprintf(why_buf, sizeof(why_buf),
				 "fired, but not on the planted '%s'", expect);
			why = why_buf;
			bad++;
		} else if (r.nrows) {
			verdict = "fired";
			fired++;
			if (expect) {
				snprintf(why_buf, sizeof(why_buf),
					 "on the planted '%s'", expect);
				why = why_buf;
			}
		} else if (d->doctor) {
			verdict = "silent";
			why = d->doctor;
			excused++;
		} else {
			verdict = "missed";
			snprintf(why_buf, sizeof(why_buf),
				 "silent, and the detector names no reason "
				 "(@doctor) why the fixture cannot hold its "
				 "problem%s%s",
				 expect ? "; planted: " : "",
				 expect ? expect : "");
			why = why_buf;
			bad++;
		}
		ph_jw_obj_begin(&w);
		ph_jw_kv_str(&w, "id", d->id);
		if (d->question)
			ph_jw_kv_str(&w, "question", d->question);
		ph_jw_kv_str(&w, "verdict", verdict);
		ph_jw_kv_int(&w, "rows", (int64_t)r.nrows);
		ph_jw_kv_str(&w, "why", why);
		overrides(d, &w, json ? NULL : ovr, sizeof(ovr));
		ph_jw_obj_end(&w);
		if (!json)
			fprintf(f, "%-10s %-24s %s%s\n", verdict, d->id, why,
				ovr);
		ph_detrun_release(&r);
	}
	ph_jw_arr_end(&w);
	ph_jw_kv_int(&w, "fired", (int64_t)fired);
	ph_jw_kv_int(&w, "silent", (int64_t)excused);
	ph_jw_kv_int(&w, "failed", (int64_t)bad);
	ph_jw_kv_bool(&w, "healthy", !bad);
	ph_jw_obj_end(&w);
	if (ph_jw_finish(&w))
		goto out;
	if (json)
		fprintf(f, "%s\n", js.buf);
	else
		fprintf(f,
			"%zu fired, %zu silent with a reason, %zu failed: %s\n",
			fired, excused, bad, bad ? "UNHEALTHY" : "healthy");
	status = bad ? 1 : 0;
out:
	sqlite3_close(db);
	ph_trace_release(&t);
	ph_detset_release(&ds);
	ph_buf_release(&fx);
	ph_buf_release(&js);
	return status;
}
