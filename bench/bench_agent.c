/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_agent: what an event call costs the app, how many events the agent
 * moves, and how much memory it holds.
 *
 *  - emit_ns_median_tN / emit_ns_p99_tN: one porthole_mark() timed on its
 *    own with CLOCK_MONOTONIC around it, from N emitting threads at once,
 *    while a client reads everything; the cost of the empty timing pair
 *    (clock_gettime_ns, measured in the same run) is subtracted.  The
 *    threads sleep 300 us after every 64 calls (so the reader keeps up),
 *    which makes 1 call in 64 the first after a sleep, on caches the
 *    writer and reader used meanwhile: the p99 line also gives the p99 of
 *    the other calls and the median of those first ones, and the p99 of
 *    a stand-in call timed the same way (floor_p99): it reads
 *    clock_gettime and writes a 56-byte record into the next 128-byte
 *    cell of a 4 MB ring of the thread's own, which is about the least an
 *    event call can do, so what it costs is the machine's and not the
 *    agent's.  (The agent's own clock read is now the CPU's counter, some
 *    10 ns cheaper than clock_gettime: the floor is that much higher.)
 *  - emit_ns_median_trace_marker / emit_ratio_trace_marker: what ATrace
 *    does instead, one write(2) of "B|pid|bench" to tracefs's
 *    trace_marker per event, timed the same way on one thread (tracing on
 *    for the run, under /tmp/porthole-tracefs.lock as every tracefs user
 *    here takes it); the ratio is its median over porthole_mark's.  Where
 *    tracefs is not mounted or not writable the figure is null with why.
 *  - emit_ns_median_mutex_t4 / emit_ratio_mutex_t4: the queue an app
 *    would write by hand, a ring of 56-byte records behind one
 *    pthread_mutex with a thread draining it, timed the same way from 4
 *    threads; the ratio is its median over porthole_mark's at 4 threads.
 *  - events_per_s_t4 / events_dropped_t4: events per second delivered to
 *    one client reading as fast as it can, from 4 threads emitting paced
 *    at 1.05 M/s in total, and the drops over that run (target: none),
 *    with the CPU time the agent's writer thread (porthole-writer) spent
 *    per event meanwhile: with 2 cores shared by 4 emitters, the writer
 *    and the reader, that is the headroom left when the machine is busy.
 *  - events_per_s_t4_max: the same 4 threads paced ever faster (x1.5 a
 *    step from 1.5 M/s) and then unpaced, until a run drops: the highest
 *    delivered rate of a run that dropped nothing.  The first dropping
 *    run's delivered rate and drops are its saturated and
 *    saturated_dropped fields (what the agent moves when the app outruns
 *    it).  Where the 1.05 M/s run dropped already, the steps go down
 *    instead (x2/3 from 700k/s, a quarter as many events) to the first
 *    run that drops nothing; 0 when none down to 50k/s does.
 *  - writer_idle_cpu_ms_per_s: the CPU time the writer spends in a second
 *    with no events, and how often it woke (it looks for events, as event
 *    calls wake nothing): what an idle app pays for its agent's writer.
 *  - agent_rss_mb: resident memory the agent added with default settings
 *    (queue 4096, ring 4096), after 100k events went through it.
 *
 * The machine has 2 cores: 4 emitters, the writer and the reader share
 * them, and the numbers say so.
 */
#include "ph_common.h"
#include "ph_client.h"
#include "ph_threads.h"
#include "ph_clock.h"
#include "porthole.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <unistd.h>

#define SAMPLES 200000

static char sock[64];
static _Atomic bool reading = true;
static _Atomic int64_t delivered;
static _Atomic int64_t dropped_seen;

static void *reader(void *arg)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);

	(void)arg;
	if (ph_client_connect(&c, sock, 5000))
		return NULL;
	ph_client_send(&c, "{\"id\":1,\"method\":\"hello\"}\n");
	while (atomic_load(&reading)) {
		if (ph_client_line(&c, &line, 100) != 1)
			continue;
		if (!strncmp(line.buf, "{\"event\":\"mark\"", 15))
			atomic_fetch_add(&delivered, 1);
		else if (!strncmp(line.buf, "{\"event\":\"dropped\"", 18)) {
			const char *p = strstr(line.buf, "\"count\":");

			if (p)
				atomic_fetch_add(&dropped_seen,
						 strtoll(p + 8, NULL, 10));
		}
	}
	ph_client_close(&c);
	ph_buf_release(&line);
	return NULL;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

enum what { TIME_NOTHING, TIME_MARK, TIME_FLOOR, TIME_MARKER, TIME_MUTEX };

struct timing {
	int64_t *ns;
	int n;
	enum what what; /* nothing: the clock's own cost */
};

#define FLOOR_CELLS 32768

/* ATrace's way: one write(2) to trace_marker per event. */
static int marker_fd = -1;
static _Atomic int64_t marker_failed;
static char marker_msg[32];

static __attribute__((noinline)) void marker_call(void)
{
	if (write(marker_fd, marker_msg, strlen(marker_msg)) < 0)
		atomic_fetch_add(&marker_failed, 1); /* counted, reported */
}

/* The hand-written alternative: a mutex-guarded ring and a drainer. */
#define MQ_CELLS 4096
static struct {
	pthread_mutex_t lock;
	uint64_t head, tail; /* written, taken */
	uint64_t dropped;    /* full when pushed */
	uint8_t cells[MQ_CELLS][64];
	_Atomic bool stop;
} mq = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __attribute__((noinline)) void mutex_call(const char *name)
{
	int64_t t = ph_clock_mono_ns();

	pthread_mutex_lock(&mq.lock);
	if (mq.head - mq.tail == MQ_CELLS) {
		mq.dropped++;
	} else {
		uint8_t *cell = mq.cells[mq.head % MQ_CELLS];

		memset(cell, 0, 56);
		memcpy(cell, &t, sizeof(t));
		memcpy(cell + 8, name, strlen(name));
		mq.head++;
	}
	pthread_mutex_unlock(&mq.lock);
}

/* Takes the ring's records out a batch at a time, as a writer would. */
static void *mutex_drainer(void *arg)
{
	static uint8_t out[MQ_CELLS][64];
	uint64_t sum = 0;

	(void)arg;
	while (!atomic_load(&mq.stop)) {
		size_t n = 0;

		pthread_mutex_lock(&mq.lock);
		while (mq.tail != mq.head)
			memcpy(out[n++], mq.cells[mq.tail++ % MQ_CELLS], 64);
		pthread_mutex_unlock(&mq.lock);
		for (size_t i = 0; i < n; i++)
			sum += out[i][0];
		if (!n)
			usleep(50);
	}
	return (void *)(uintptr_t)sum;
}

/* The stand-in event call: a clock read and a record in a ring cell. */
static __attribute__((noinline)) void floor_call(uint8_t *ring, uint64_t i,
						 const char *name)
{
	uint8_t *cell = ring + (i % FLOOR_CELLS) * 128;
	int64_t t = ph_clock_mono_ns() / 1000000;

	memset(cell + 8, 0, 56);
	memcpy(cell + 8, &t, sizeof(t));
	memcpy(cell + 16, name, strlen(name));
	atomic_store_explicit((_Atomic uint64_t *)(void *)cell, i + 1,
			      memory_order_release);
}

static void *time_calls(void *arg)
{
	struct timing *t = arg;
	uint8_t *ring = NULL;

	if (t->what == TIME_FLOOR) {
		/* written once first: no page faults in the timed calls */
		ring = aligned_alloc(64, FLOOR_CELLS * 128);
		memset(ring, 0, FLOOR_CELLS * 128);
	}
	for (int i = 0; i < t->n; i++) {
		int64_t a = ph_clock_mono_ns();

		if (t->what == TIME_MARK)
			porthole_mark("bench", NULL);
		else if (t->what == TIME_FLOOR)
			floor_call(ring, (uint64_t)i, "bench");
		else if (t->what == TIME_MARKER)
			marker_call();
		else if (t->what == TIME_MUTEX)
			mutex_call("bench");
		t->ns[i] = ph_clock_mono_ns() - a;
		/* ~200k events/s per thread: the reader keeps up */
		if (i % 64 == 63)
			usleep(300);
	}
	free(ring);
	return NULL;
}

/* Percentile q (0..1) of v[0..n), which it sorts. */
static int64_t pct(int64_t *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp64);
	return v[(int)(n * q)];
}

/* Times SAMPLES calls of `what` on each of `threads` threads into all[]. */
static void time_threads(int threads, enum what what, int64_t *all)
{
	pthread_t t[4];
	struct timing tm[4];

	for (int i = 0; i < threads; i++) {
		tm[i] = (struct timing){ all + (size_t)i * SAMPLES, SAMPLES,
					 what };
		pthread_create(&t[i], NULL, time_calls, &tm[i]);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
}

/* Prints the emit figures for `threads` threads; returns the median. */
static int64_t emit_cost(int threads, int64_t clock_ns)
{
	size_t n = (size_t)threads * SAMPLES;
	int64_t *all = malloc(sizeof(int64_t) * n * 2);
	/* each thread's calls 0, 64, 128 ... are cold */
	int64_t *cold = all + n,
		*warm = cold + (size_t)threads * ((SAMPLES + 63) / 64);
	int ncold = 0, nwarm = 0, med, p99;
	int64_t floor99;

	/* touched first: the timing threads take no page faults storing */
	memset(all, 0, sizeof(int64_t) * n * 2);
	time_threads(threads, TIME_FLOOR, all);
	floor99 = pct(all, (int)n, 0.99);
	time_threads(threads, TIME_MARK, all);
	/* The first call after each sleep apart from the rest. */
	for (size_t k = 0; k < n; k++) {
		if (k % SAMPLES % 64 == 0)
			cold[ncold++] = all[k];
		else
			warm[nwarm++] = all[k];
	}
	int64_t cold50 = pct(cold, ncold, 0.5), warm99 = pct(warm, nwarm, 0.99);

	med = (int)pct(all, (int)n, 0.5);
	p99 = (int)pct(all, (int)n, 0.99);
	printf("{\"name\":\"emit_ns_median_t%d\",\"value\":%" PRId64
	       ",\"unit\":\"ns\",\"raw\":%d}\n",
	       threads, med - clock_ns, med);
	printf("{\"name\":\"emit_ns_p99_t%d\",\"value\":%" PRId64
	       ",\"unit\":\"ns\",\"raw\":%d,\"p99_not_after_sleep\":%" PRId64
	       ",\"median_first_after_sleep\":%" PRId64
	       ",\"floor_p99\":%" PRId64 "}\n",
	       threads, p99 - clock_ns, p99, warm99 - clock_ns,
	       cold50 - clock_ns, floor99 - clock_ns);
	free(all);
	return med - clock_ns;
}

/* The median of SAMPLES calls of `what` on each of `threads` threads. */
static int64_t median_of(int threads, enum what what, int64_t clock_ns)
{
	size_t n = (size_t)threads * SAMPLES;
	int64_t *all = calloc(n, sizeof(int64_t)), med;

	time_threads(threads, what, all);
	med = pct(all, (int)n, 0.5) - clock_ns;
	free(all);
	return med;
}

/* The alternative's median and its ratio over ours, as two figures. */
static void print_alternative(const char *what, const char *suffix, int64_t alt,
			      int64_t ours, const char *extra)
{
	/* a net median can reach 0 on a coarse clock: 1 ns keeps a ratio */
	double ratio =
		(double)(alt > 1 ? alt : 1) / (double)(ours > 1 ? ours : 1);

	printf("{\"name\":\"emit_ns_median_%s\",\"value\":%" PRId64
	       ",\"unit\":\"ns\"%s}\n",
	       suffix, alt, extra);
	printf("{\"name\":\"emit_ratio_%s\",\"value\":%.2f,\"unit\":\"x\","
	       "\"note\":\"%s median call / porthole_mark's\"}\n",
	       suffix, ratio, what);
}

/* The two trace_marker figures as not measured, with why. */
static void marker_not_run(const char *why)
{
	printf("{\"name\":\"emit_ns_median_trace_marker\",\"value\":null,"
	       "\"unit\":\"ns\",\"error\":\"the alternative could not "
	       "run: %s\"}\n",
	       why);
	printf("{\"name\":\"emit_ratio_trace_marker\",\"value\":null,"
	       "\"unit\":\"x\",\"error\":\"the alternative could not "
	       "run: %s\"}\n",
	       why);
}

/*
 * ATrace's alternative: write(2) to trace_marker, tracing on, under the
 * tracefs lock.  Prints its two figures, null with why when it cannot run.
 */
static void trace_marker_cost(int64_t clock_ns, int64_t ours)
{
	static const char dir[] = "/sys/kernel/tracing";
	char path[128], was = '1';
	int lock, on, rc = 0;
	int64_t med;
	char why[300];

	lock = open("/tmp/porthole-tracefs.lock", O_RDWR | O_CREAT, 0666);
	snprintf(path, sizeof(path), "%s/trace_marker", dir);
	if (lock < 0 || flock(lock, LOCK_EX) ||
	    (marker_fd = open(path, O_WRONLY)) < 0) {
		snprintf(why, sizeof(why),
			 "%s: %s (tracefs mounted at %s? root?)", path,
			 strerror(errno), dir);
		marker_not_run(why);
		if (lock >= 0)
			close(lock);
		return;
	}
	/* markers are written only while tracing is on: on for the run,
	 * then as it was */
	snprintf(path, sizeof(path), "%s/tracing_on", dir);
	on = open(path, O_RDWR);
	if (on >= 0 &&
	    (pread(on, &was, 1, 0) != 1 || pwrite(on, "1", 1, 0) != 1))
		rc = -1;
	snprintf(marker_msg, sizeof(marker_msg), "B|%d|bench", (int)getpid());
	med = median_of(1, TIME_MARKER, clock_ns);
	if (on >= 0 && pwrite(on, &was, 1, 0) != 1)
		rc = -1;
	if (on >= 0)
		close(on);
	close(marker_fd);
	flock(lock, LOCK_UN);
	close(lock);
	if (rc)
		fprintf(stderr, "bench-agent: could not set tracing_on\n");
	if (atomic_load(&marker_failed)) {
		/* failed calls would time an error path, not a marker */
		snprintf(why, sizeof(why),
			 "%" PRId64 " of %d writes to trace_marker failed",
			 (int64_t)atomic_load(&marker_failed), SAMPLES);
		marker_not_run(why);
		return;
	}
	print_alternative("trace_marker write(2)", "trace_marker", med, ours,
			  "");
}

/* The mutex-guarded queue's alternative from 4 threads, with a drainer. */
static void mutex_queue_cost(int64_t clock_ns, int64_t ours)
{
	pthread_t d;
	int64_t med;
	char extra[64];

	atomic_store(&mq.stop, false);
	pthread_create(&d, NULL, mutex_drainer, NULL);
	med = median_of(4, TIME_MUTEX, clock_ns);
	atomic_store(&mq.stop, true);
	pthread_join(d, NULL);
	snprintf(extra, sizeof(extra), ",\"dropped\":%" PRIu64, mq.dropped);
	print_alternative("mutex-guarded queue", "mutex_t4", med, ours, extra);
}

struct paced {
	int per_thread;
	int64_t rate; /* events per second, this thread; 0: unpaced */
};

static void *paced_emitter(void *arg)
{
	struct paced *p = arg;
	int64_t start = ph_clock_mono_ns();

	for (int i = 0; i < p->per_thread; i++) {
		porthole_mark("bench", NULL);
		if (p->rate && i % 256 == 255) {
			int64_t due = start + (int64_t)i * 1000000000 / p->rate;
			int64_t now = ph_clock_mono_ns();

			if (due > now)
				usleep((useconds_t)((due - now) / 1000));
		}
	}
	return NULL;
}

struct run {
	double rate;	   /* delivered per second */
	int64_t delivered; /* events the client read */
	int64_t dropped;   /* events the agent reported dropped */
	int64_t writer_ns; /* CPU time of porthole-writer meanwhile */
};

/*
 * 4 threads emit `emitted` events in total at `rate` per second (0:
 * unpaced) while the client reads; the run ends when the client has seen
 * each event delivered or reported dropped (or after 2 s more).
 */
static struct run run_t4(int64_t rate, int64_t emitted)
{
	pthread_t et[4];
	struct paced pc[4];
	struct run r;
	int writer = ph_thread_named("porthole-writer");
	int64_t before_drop, t0, t1;

	usleep(300 * 1000);
	before_drop = atomic_load(&dropped_seen);
	atomic_store(&delivered, 0);
	r.writer_ns = ph_thread_schedstat(writer, 0);
	t0 = ph_clock_mono_ns();
	for (int i = 0; i < 4; i++) {
		pc[i] = (struct paced){ (int)(emitted / 4), rate / 4 };
		pthread_create(&et[i], NULL, paced_emitter, &pc[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(et[i], NULL);
	/* wait for the reader to see the last of them */
	for (int i = 0;
	     i < 200 && atomic_load(&delivered) + atomic_load(&dropped_seen) -
					before_drop <
				emitted;
	     i++)
		usleep(10 * 1000);
	t1 = ph_clock_mono_ns();
	r.writer_ns = writer ? ph_thread_schedstat(writer, 0) - r.writer_ns :
			       -1;
	r.delivered = atomic_load(&delivered);
	r.dropped = atomic_load(&dropped_seen) - before_drop;
	r.rate = (double)r.delivered * 1e9 / (double)(t1 - t0);
	return r;
}

static long rss_kb(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "r");
	long kb = -1;

	while (f && fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "VmRSS:", 6))
			kb = strtol(buf + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

int main(void)
{
	struct porthole_config cfg = {
		.app_id = "bench.agent",
		.data_dir = "/tmp/porthole-bench-agent",
		.flags = PORTHOLE_NO_INTEGRATION_CHECK,
	};
	pthread_t rt;
	struct paced pc[1];
	struct run paced, saturated;
	double best;
	int64_t rate;
	char at[24] = "null"; /* the saturated run's pacing; null: none */
	struct timing empty;
	long rss0 = rss_kb(), rss1;
	int64_t *ns, clock_ns, writer_ns, runs0, runs1, ours_t1, ours_t4;
	int writer;
	int64_t emitted = 4 * 1500000;

	snprintf(sock, sizeof(sock), "porthole.bench-%d", (int)getpid());
	cfg.socket_name = sock;
	if (porthole_start_build(&cfg, 1) != PORTHOLE_OK)
		return 1;
	pthread_create(&rt, NULL, reader, NULL);
	usleep(200 * 1000);
	/* Memory first, before the bench allocates anything of its own. */
	pc[0] = (struct paced){ 100000, 200000 };
	paced_emitter(&pc[0]);
	usleep(1200 * 1000); /* a memory and device sample or two */
	rss1 = rss_kb();
	printf("{\"name\":\"agent_rss_mb\",\"value\":%.1f,\"unit\":\"MB\","
	       "\"note\":\"resident growth from before porthole_start to "
	       "after 100k events, default queue and ring, one client\"}\n",
	       (double)(rss1 - rss0) / 1024.0);
	/* What the agent costs an app that is doing nothing: a second idle. */
	/* schedstat: ns on a CPU, ns waiting, times put on a CPU */
	writer = ph_thread_named("porthole-writer");
	writer_ns = ph_thread_schedstat(writer, 0);
	runs0 = ph_thread_schedstat(writer, 2);
	sleep(1);
	writer_ns = ph_thread_schedstat(writer, 0) - writer_ns;
	runs1 = ph_thread_schedstat(writer, 2);
	printf("{\"name\":\"writer_idle_cpu_ms_per_s\",\"value\":%.2f,"
	       "\"unit\":\"ms\",\"wakeups_per_s\":%" PRId64 "}\n",
	       (double)writer_ns / 1e6, runs1 - runs0);
	ns = malloc(sizeof(int64_t) * SAMPLES);

	empty = (struct timing){ ns, SAMPLES, TIME_NOTHING };
	time_calls(&empty);
	qsort(ns, SAMPLES, sizeof(*ns), cmp64);
	clock_ns = ns[SAMPLES / 2];
	printf("{\"name\":\"clock_gettime_ns\",\"value\":%" PRId64
	       ",\"unit\":\"ns\"}\n",
	       clock_ns);
	ours_t1 = emit_cost(1, clock_ns);
	emit_cost(2, clock_ns);
	ours_t4 = emit_cost(4, clock_ns);

	trace_marker_cost(clock_ns, ours_t1);
	mutex_queue_cost(clock_ns, ours_t4);

	/* Throughput: 4 threads, 1.05 M events/s in total, one reader. */
	paced = run_t4(1050000, emitted);
	printf("{\"name\":\"events_per_s_t4\",\"value\":%.0f,\"unit\":"
	       "\"events/s\",\"delivered\":%" PRId64 ",\"dropped\":%" PRId64
	       ",\"emitted\":%" PRId64 ",\"writer_cpu_ns_per_event\":%.0f}\n",
	       paced.rate, paced.delivered, paced.dropped, emitted,
	       paced.writer_ns >= 0 ?
		       (double)paced.writer_ns / (double)emitted :
		       -1.0);
	printf("{\"name\":\"events_dropped_t4\",\"value\":%" PRId64
	       ",\"unit\":\"events\",\"emitted\":%" PRId64 "}\n",
	       paced.dropped, emitted);
	fflush(stdout);
	/* Headroom: faster and faster, then unpaced, until a run drops;
	 * where the paced run dropped already, slower and slower (shorter
	 * runs) until one does not, down to 50k/s. */
	best = paced.dropped ? 0 : paced.rate;
	saturated = paced;
	for (rate = 700000; paced.dropped && rate >= 50000;
	     rate = rate * 2 / 3) {
		struct run r = run_t4(rate, emitted / 4);

		if (!r.dropped) {
			best = r.rate;
			break;
		}
	}
	for (rate = 1500000; !paced.dropped; rate = rate * 3 / 2) {
		if (rate > 12000000)
			rate = 0; /* the last run: unpaced */
		saturated = run_t4(rate, emitted);
		if (saturated.dropped || !rate)
			break;
		if (saturated.rate > best)
			best = saturated.rate;
	}
	if (!saturated.dropped && saturated.rate > best)
		best = saturated.rate; /* unpaced, and still nothing lost */
	if (paced.dropped)
		snprintf(at, sizeof(at), "1050000");
	else if (rate)
		snprintf(at, sizeof(at), "%" PRId64, rate);
	printf("{\"name\":\"events_per_s_t4_max\",\"value\":%.0f,\"unit\":"
	       "\"events/s\",\"saturated\":%.0f,\"saturated_dropped\":%" PRId64
	       ",\"saturated_paced_at\":%s,\"emitted_per_run\":%" PRId64 "}\n",
	       best, saturated.rate, saturated.dropped, at, emitted);
	atomic_store(&reading, false);
	pthread_join(rt, NULL);
	porthole_stop();
	free(ns);
	return 0;
}
