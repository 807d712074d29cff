/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_host: the host's three figures (issue 4, "Performance").
 *
 *  - ingest_events_per_s: a recorded-shape session replayed over a real
 *    abstract socket by a replay runtime (a thread here that answers
 *    `hello` and `timeline` like the agent, then writes the events as
 *    fast as the socket takes them) into a real ph_live: the device link,
 *    the store (every line parsed) and the session file on disk.  Timed
 *    from the first event byte sent to the last event stored and the
 *    session file flushed and closed (bytes checked); best of three
 *    runs, each into a fresh store.
 *  - ingest_copy_events_per_s / ingest_ratio_copy: the floor beside it,
 *    the same replay into a reader that only copies the socket's bytes to
 *    a file (read(2) 64 KiB, write(2), close: no parsing, no store),
 *    timed the same way; the ratio is ingest over copy, what parsing,
 *    storing and the session writer cost over moving the bytes.
 *  - findings_500mb_s / findings_500mb_rss_mb: the findings engine over a
 *    500 MB session on disk (ph_analyze_file, the path `save` and `report`
 *    take), in a fresh process (this binary re-executed), so its peak RSS
 *    is the engine's alone.  The session is generated deterministically
 *    under build/bench-host/ (reused when already there, same size) and is
 *    read from the page cache.
 *  - watch_latency_ms_median: the real `porthole watch` against a replay
 *    runtime that sends background traffic and 100 planted main-thread
 *    stalls; for each, the time from writing the stall's line into the
 *    socket to reading its finding line on watch's stdout.
 *
 * The machine has 2 cores shared by both ends of every socket here.
 * `bench-host ingest|findings|watch` runs one part (for perf record);
 * BENCH_SESSIONS=0 runs the ingest without the session file, to see what
 * the disk costs.
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "host/findings.h"
#include "host/live.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKDIR	      "build/bench-host"
#define BIG_BYTES     ((uint64_t)500 << 20)
#define INGEST_EVENTS 2000000
#define STALLS	      100
#define T0	      1000000 /* app clock of the first event, ms */
#define HELLO_STARTED 999000
#define GEN_VERSION   1

static void emit(const char *name, double value, const char *unit,
		 const char *extra)
{
	printf("{\"name\":\"%s\",\"value\":%.3f,\"unit\":\"%s\"%s%s}\n", name,
	       value, unit, extra ? "," : "", extra ? extra : "");
	fflush(stdout);
}

/* --- the generator: a deterministic session of the sample's shapes ------ */

struct gen {
	bool no_stalls; /* the watch bench plants its own */
	int64_t seq;
	int64_t cycle;
	uint32_t rnd;
};

static uint32_t next_rand(struct gen *g)
{
	g->rnd = g->rnd * 1103515245u + 12345u;
	return g->rnd >> 8;
}

static int line(struct ph_buf *b, const char *fmt, ...) PH_PRINTF(2, 3);

static int line(struct ph_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = ph_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc ? rc : ph_buf_addch(b, '\n');
}

static const char hello_line[] =
	"{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,\"packageName\":"
	"\"dev.porthole.bench\",\"processName\":\"dev.porthole.bench\","
	"\"versionName\":\"1.0\",\"debuggable\":true,\"device\":\"Linux "
	"x86_64\",\"sdkInt\":0,\"startedAt\":999000,\"deviceId\":"
	"\"bench\"}}\n";
static const char timeline_line[] =
	"{\"id\":2,\"ok\":true,\"result\":{\"events\":[],\"droppedBefore\":0,"
	"\"now\":999000}}\n";

static int gen_profile(struct gen *g, struct ph_buf *b)
{
	return line(b,
		    "{\"event\":\"device\",\"t\":%d,\"seq\":%" PRId64
		    ",\"data\":{\"kind\":\"profile\",\"model\":\"vm\","
		    "\"sdkInt\":\"0\",\"abi\":\"x86_64\",\"cores\":\"2\","
		    "\"refreshHz\":\"60\",\"os\":\"linux\"}}",
		    T0, g->seq++);
}

/* One cycle: 100 ms of a busy app, ~27 events. */
static int gen_cycle(struct gen *g, struct ph_buf *b)
{
	int64_t t = T0 + g->cycle * 100, c = g->cycle++;
	int rc = 0;

	for (int i = 0; i < 3 && !rc; i++) {
		int64_t ms = 17 + next_rand(g) % 40;

		rc = line(b,
			  "{\"event\":\"frame\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64 ",\"data\":{\"totalMs\":%" PRId64
			  ",\"missedFrames\":%" PRId64
			  ",\"worstPhase\":\"layoutMeasure\",\"firstDraw\":"
			  "false,\"phases\":{\"input\":0,\"animation\":1,"
			  "\"layoutMeasure\":%" PRId64
			  ",\"draw\":1},\"budgetMs\":16.666}}",
			  t + i * 33, g->seq++, ms, ms / 17, ms - 2);
	}
	for (int i = 0; i < 4 && !rc; i++)
		rc = line(b,
			  "{\"event\":\"state_write\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64
			  ",\"data\":{\"keys\":[\"Cart.total\"],\"named\":["
			  "\"Cart.total\"],\"unnamed\":0}}",
			  t + i * 25, g->seq++);
	for (int i = 0; i < 14 && !rc; i++)
		rc = line(b,
			  "{\"event\":\"recompose\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64
			  ",\"data\":{\"id\":\"Cart.ItemRow#%d\",\"name\":"
			  "\"Cart.ItemRow\",\"screen\":\"Cart\",\"pass\":%d,"
			  "\"triggeredBy\":[\"Cart.total\"],\"attribution\":"
			  "\"temporal\"}}",
			  t + i * 7 + 1, g->seq++, i % 4, 1 + i / 4);
	if (!rc)
		rc = line(b,
			  "{\"event\":\"db_start\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64 ",\"data\":{\"id\":\"db-%" PRId64
			  "\",\"sql\":\"SELECT * FROM cart_items WHERE "
			  "cart_id = ?\",\"kind\":\"read\",\"thread\":\"%s\","
			  "\"mainThread\":%s}}",
			  t + 10, g->seq++, c, c % 10 ? "db" : "main",
			  c % 10 ? "false" : "true");
	if (!rc)
		rc = line(b,
			  "{\"event\":\"db_end\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64 ",\"data\":{\"id\":\"db-%" PRId64
			  "\",\"sql\":\"SELECT * FROM cart_items WHERE "
			  "cart_id = ?\",\"kind\":\"read\",\"elapsedMs\":\"%u"
			  "\",\"result\":\"0\",\"changes\":0,\"thread\":\"%s\","
			  "\"mainThread\":%s}}",
			  t + 14, g->seq++, c, 1 + next_rand(g) % 6,
			  c % 10 ? "db" : "main", c % 10 ? "false" : "true");
	if (!rc)
		rc = line(b,
			  "{\"event\":\"http_start\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64
			  ",\"data\":{\"id\":\"http-%" PRId64
			  "\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:"
			  "8080/v1/cart/%" PRId64
			  "\",\"thread\":\"net\",\"mainThread\":false}}",
			  t + 20, g->seq++, c, c % 7);
	if (!rc) {
		int status = c % 20 == 19 ? 500 : 200;
		unsigned ms = c % 50 == 49 ? 3400 : 20 + next_rand(g) % 60;

		rc = line(b,
			  "{\"event\":\"http_end\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64
			  ",\"data\":{\"id\":\"http-%" PRId64
			  "\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:"
			  "8080/v1/cart/%" PRId64
			  "\",\"phase\":\"done\",\"elapsedMs\":\"%u\","
			  "\"status\":\"%d\",\"protocol\":\"http/1.1\","
			  "\"responseBytes\":\"87\",\"phases\":{\"dns\":0,"
			  "\"connect\":1,\"waiting\":%u,\"dispatch\":0,"
			  "\"responseBody\":1},\"thread\":\"net\","
			  "\"mainThread\":false}}",
			  t + 20 + ms, g->seq++, c, c % 7, ms, status, ms - 2);
	}
	if (!rc)
		rc = line(b,
			  "{\"event\":\"log\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64
			  ",\"data\":{\"level\":\"%s\",\"tag\":\"Cart\","
			  "\"message\":\"cart has %" PRId64
			  " items\",\"pid\":4242,\"tid\":4243}}",
			  t + 50, g->seq++, c % 30 == 29 ? "E" : "I", c % 9);
	if (!rc && c % 10 == 0)
		rc = line(b,
			  "{\"event\":\"memory\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64
			  ",\"data\":{\"heapUsedMb\":3,\"heapMaxMb\":64,"
			  "\"nativeMb\":12,\"threads\":9,\"rssMb\":%" PRId64
			  ",\"fds\":20}}",
			  t + 60, g->seq++, 40 + c % 17);
	if (!rc && c % 100 == 50 && !g->no_stalls)
		rc = line(b,
			  "{\"event\":\"blocked\",\"t\":%" PRId64
			  ",\"seq\":%" PRId64
			  ",\"data\":{\"durationMs\":250,\"top\":"
			  "\"apply_coupon(main.c:37)\",\"stack\":"
			  "\"apply_coupon(main.c:37)\\nmain(main.c:200)\","
			  "\"frames\":[{\"fn\":\"apply_coupon\",\"file\":"
			  "\"main.c\",\"line\":37,\"app\":true}]}}",
			  t + 70, g->seq++);
	return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The 500 MB session: written once, reused while its size matches. */
static int make_big(const char *path, uint64_t *events)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct gen g = { .rnd = 42 };
	char sizef[300];
	uint64_t total = 0;
	struct stat st;
	FILE *f;
	int fd, rc = 0;

	snprintf(sizef, sizeof(sizef), "%s.v%d", path, GEN_VERSION);
	f = fopen(sizef, "r");
	if (f && fscanf(f, "%" SCNu64, events) == 1 && !stat(path, &st) &&
	    (uint64_t)st.st_size >= BIG_BYTES) {
		fclose(f);
		return 0;
	}
	if (f)
		fclose(f);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	rc = ph_buf_add(&b, hello_line, sizeof(hello_line) - 1) ||
	     ph_buf_add(&b, timeline_line, sizeof(timeline_line) - 1) ||
	     gen_profile(&g, &b);
	while (!rc && total < BIG_BYTES) {
		rc = gen_cycle(&g, &b);
		if (!rc && (b.len > (4 << 20) || total + b.len >= BIG_BYTES)) {
			rc = write_all(fd, b.buf, b.len);
			total += b.len;
			ph_buf_reset(&b);
		}
	}
	if (close(fd))
		rc = -1;
	ph_buf_release(&b);
	*events = (uint64_t)g.seq;
	if (!rc && (f = fopen(sizef, "w"))) {
		fprintf(f, "%" PRIu64 "\n", *events);
		fclose(f);
	}
	return rc;
}

/* --- a replay runtime: answers hello and timeline, then sends ----------- */

struct replay {
	char name[108];
	int lfd;
	const char *payload; /* event lines to send after the handshake */
	size_t len;
	int64_t sent_ns; /* when the first payload byte went out */
	bool keep_open;	 /* the watch bench drives the socket itself */
	char hello[600]; /* the hello answer, "" for hello_line */
	int cfd;
	volatile int ready;
};

static int listen_abstract(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path + 1, name, n);
	if (fd < 0 ||
	    bind(fd, (struct sockaddr *)&sa,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) ||
	    listen(fd, 4)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reads until both requests (two lines) arrived. */
static int handshake(int fd, const char *hello)
{
	char buf[4096];
	int lines = 0;

	while (lines < 2) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			return -1;
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	}
	if (!hello[0])
		hello = hello_line;
	if (write_all(fd, hello, strlen(hello)) ||
	    write_all(fd, timeline_line, sizeof(timeline_line) - 1))
		return -1;
	return 0;
}

static void *replay_run(void *arg)
{
	struct replay *r = arg;
	int fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0 || handshake(fd, r->hello)) {
		if (fd >= 0)
			close(fd);
		r->ready = -1;
		return NULL;
	}
	if (r->keep_open) {
		r->cfd = fd;
		r->ready = 1;
		return NULL;
	}
	r->sent_ns = ph_clock_mono_ns();
	r->ready = 1;
	if (write_all(fd, r->payload, r->len))
		r->ready = -1;
	close(fd);
	return NULL;
}

static void run_sh(const char *cmd)
{
	if (system(cmd))
		fprintf(stderr, "bench-host: '%s' failed\n", cmd);
}

/* --- ingest ------------------------------------------------------------- */

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/*
 * The copy-only reader: connects to the replay at name, asks what the
 * host asks (two lines), then copies every byte to path until the replay
 * closes.  0 with the bytes copied in *copied, or -1.
 */
static int copy_reader(const char *name, const char *path, uint64_t *copied)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static const char asks[] = "{\"id\":1,\"method\":\"hello\"}\n"
				   "{\"id\":2,\"method\":\"timeline\"}\n";
	static char buf[1 << 16];
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t got;
	int rc = 0;

	memcpy(sa.sun_path + 1, name, n);
	*copied = 0;
	if (fd < 0 || out < 0 ||
	    connect(fd, (struct sockaddr *)&sa,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				n)) ||
	    write_all(fd, asks, sizeof(asks) - 1))
		rc = -1;
	while (!rc && (got = read(fd, buf, sizeof(buf))) > 0) {
		if (write_all(out, buf, (size_t)got))
			rc = -1;
		*copied += (uint64_t)got;
	}
	if (fd >= 0)
		close(fd);
	if (out >= 0 && close(out))
		rc = -1;
	return rc;
}

/* The copy-only floor over the same payload; events per second, or -1. */
static double ingest_copy_rate(const struct ph_buf *b, uint64_t want)
{
	struct replay r = { 0 };
	pthread_t th;
	uint64_t copied = 0;
	char path[] = WORKDIR "/copy.ndjson";
	int rc;
	int64_t t1;

	snprintf(r.name, sizeof(r.name), "porthole.bench-copy-%d",
		 (int)getpid());
	r.lfd = listen_abstract(r.name);
	r.payload = b->buf;
	r.len = b->len;
	if (r.lfd < 0)
		return -1;
	pthread_create(&th, NULL, replay_run, &r);
	rc = copy_reader(r.name, path, &copied);
	t1 = ph_clock_mono_ns();
	pthread_join(th, NULL);
	close(r.lfd);
	unlink(path);
	if (rc || r.ready < 0 ||
	    copied != b->len + sizeof(hello_line) - 1 + sizeof(timeline_line) -
			      1) {
		fprintf(stderr,
			"bench-host: copy-only reader: %" PRIu64
			" bytes of %zu\n",
			copied, b->len);
		return -1;
	}
	return (double)want / ((double)(t1 - r.sent_ns) / 1e9);
}

/*
 * One ingest of the payload b (want events) into a fresh ph_live and its
 * session file: seconds from the first event byte sent to the file
 * closed, or -1 when a byte or an event is missing.
 */
static double ingest_once(const struct ph_buf *b, uint64_t want)
{
	struct replay r = { 0 };
	struct ph_live lv;
	pthread_t th;
	char path[4400];
	int64_t t1;
	uint64_t lost;
	double s = -1;

	snprintf(r.name, sizeof(r.name), "porthole.bench-ingest-%d",
		 (int)getpid());
	r.lfd = listen_abstract(r.name);
	r.payload = b->buf;
	r.len = b->len;
	if (r.lfd < 0)
		return -1;
	run_sh("rm -rf " WORKDIR "/ingest");
	if (ph_live_init(&lv)) {
		close(r.lfd);
		return -1;
	}
	lv.link.socket = r.name;
	lv.link.host = NULL;
	lv.link.once = true;
	pthread_create(&th, NULL, replay_run, &r);
	if (ph_live_start(&lv)) {
		shutdown(r.lfd, SHUT_RDWR); /* wakes the replay's accept */
		pthread_join(th, NULL);
		goto out;
	}
	for (;;) {
		uint64_t n;

		pthread_mutex_lock(&lv.store.lock);
		n = lv.store.in.events;
		pthread_mutex_unlock(&lv.store.lock);
		if (n >= want || r.ready < 0)
			break;
		usleep(1000);
	}
	pthread_join(th, NULL);
	snprintf(path, sizeof(path), "%s/events.ndjson", lv.session.dir);
	lost = lv.session.lost;
	ph_live_stop(&lv); /* the last flush, meta.json, the lock */
	t1 = ph_clock_mono_ns();
	lost += lv.session.lost;
	if (getenv("BENCH_SESSIONS"))
		fprintf(stderr, "ingest: %.3f s\n",
			(double)(t1 - r.sent_ns) / 1e9);
	if (r.ready < 0 || lv.store.in.events != want ||
	    file_size(path) != b->len + sizeof(hello_line) - 1 +
				       sizeof(timeline_line) - 1) {
		fprintf(stderr,
			"bench-host: ingest: stored %" PRIu64 " of %" PRIu64
			" events, session file %" PRIu64
			" bytes of %zu, %" PRIu64 " lost\n",
			lv.store.in.events, want, file_size(path),
			b->len + sizeof(hello_line) - 1 +
				sizeof(timeline_line) - 1,
			lost);
	} else {
		s = (double)(t1 - r.sent_ns) / 1e9;
	}
out:
	ph_live_release(&lv);
	close(r.lfd);
	return s;
}

/*
 * Best of three, as the other engines' load figures: each run starts a
 * fresh store, whose first 256 MiB are new pages (this VM's first touch
 * of a page varies several-fold from run to run), and writes a fresh
 * session file.
 */
static int bench_ingest(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct gen g = { .rnd = 7 };
	char extra[200];
	uint64_t want;
	double best = -1;
	int rc = 0;

	if (gen_profile(&g, &b))
		return -1;
	while ((uint64_t)g.seq < INGEST_EVENTS)
		if (gen_cycle(&g, &b))
			return -1;
	want = (uint64_t)g.seq;
	setenv("PORTHOLE_PROJECT_ROOT", WORKDIR "/ingest", 1);
	setenv("PORTHOLE_SESSIONS",
	       getenv("BENCH_SESSIONS") ? getenv("BENCH_SESSIONS") : "1", 1);
	for (int i = 0; i < 3 && !rc; i++) {
		double s = ingest_once(&b, want);

		if (s < 0)
			rc = -1;
		else if (best < 0 || s < best)
			best = s;
	}
	if (!rc) {
		double copy = ingest_copy_rate(&b, want);

		snprintf(extra, sizeof(extra),
			 "\"events\":%" PRIu64
			 ",\"bytes\":%zu,\"seconds\":%.3f,\"runs\":3",
			 want, b.len, best);
		emit("ingest_events_per_s", (double)want / best, "events/s",
		     extra);
		if (copy < 0) {
			rc = -1;
		} else {
			emit("ingest_copy_events_per_s", copy, "events/s",
			     NULL);
			emit("ingest_ratio_copy", (double)want / best / copy,
			     "x", "\"note\":\"ingest / copy-only\"");
		}
	}
	ph_buf_release(&b);
	run_sh("rm -rf " WORKDIR "/ingest");
	return rc;
}

/* --- findings over 500 MB ------------------------------------------------ */

/* The child: analyze, print the seconds and the finding count. */
static int findings_child(const char *path)
{
	int64_t t0 = ph_clock_mono_ns();
	int rc = 0;
	struct ph_analysis *a = ph_analyze_file(path, PH_WINDOW_ALL, &rc);
	double s = (double)(ph_clock_mono_ns() - t0) / 1e9;

	char line[256];
	long hwm_kb = -1;
	FILE *st;

	if (!a)
		return 1;
	/* The peak RSS of this process image: VmHWM is reset by exec,
	 * unlike getrusage's ru_maxrss, which would count the parent's
	 * pages from before the exec. */
	st = fopen("/proc/self/status", "r");
	while (st && fgets(line, sizeof(line), st))
		if (!strncmp(line, "VmHWM:", 6))
			hwm_kb = strtol(line + 6, NULL, 10);
	if (st)
		fclose(st);
	printf("%.4f %zu %.0f %ld\n", s, a->nf, a->metric[PH_M_EVENTS], hwm_kb);
	ph_analysis_free(a);
	return 0;
}

static int bench_findings(void)
{
	char path[300] = WORKDIR "/session-500mb/events.ndjson", out[200],
	     extra[300];
	uint64_t events = 0, size;
	int pfd[2], status;
	double s = 0, nev = 0;
	long hwm_kb = -1;
	size_t nf = 0;
	pid_t pid;
	FILE *f;

	mkdir(WORKDIR "/session-500mb", 0755);
	if (make_big(path, &events))
		return -1;
	size = file_size(path);
	/* Warm the page cache: the figure is the engine, not the disk. */
	{
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		static char buf[1 << 20];

		while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
			;
		if (fd >= 0)
			close(fd);
	}
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl("/proc/self/exe", "bench-host", "--findings", path,
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (!f || !fgets(out, sizeof(out), f) ||
	    sscanf(out, "%lf %zu %lf %ld", &s, &nf, &nev, &hwm_kb) != 4 ||
	    hwm_kb < 0)
		s = -1;
	if (f)
		fclose(f);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || s < 0) {
		fprintf(stderr, "bench-host: the findings child failed\n");
		return -1;
	}
	snprintf(extra, sizeof(extra),
		 "\"bytes\":%" PRIu64 ",\"events\":%.0f,\"findings\":%zu", size,
		 nev, nf);
	emit("findings_500mb_s", s, "s", extra);
	emit("findings_500mb_rss_mb", (double)hwm_kb / 1024.0, "MB", NULL);
	return 0;
}

/* --- watch latency --------------------------------------------------------
 */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int bench_watch(void)
{
	struct replay r = { .keep_open = true };
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct gen g = { .rnd = 9, .no_stalls = true };
	char porthole[4200], exe[4096], app[64], buf[8192], extra[200];
	double lat[STALLS];
	int pfd[2], nlat = 0, rc = 0;
	ssize_t n;
	pthread_t th;
	pid_t pid;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(porthole, sizeof(porthole), "%s/porthole", exe);
	snprintf(app, sizeof(app), "bench-watch-%d", (int)getpid());
	snprintf(r.name, sizeof(r.name), "porthole.%s", app);
	snprintf(r.hello, sizeof(r.hello),
		 "{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,"
		 "\"packageName\":\"%s\",\"processName\":\"%s\","
		 "\"startedAt\":%d,\"deviceId\":\"bench\"}}\n",
		 app, app, HELLO_STARTED);
	r.lfd = listen_abstract(r.name);
	if (r.lfd < 0 || pipe(pfd))
		return -1;
	pthread_create(&th, NULL, replay_run, &r);
	run_sh("rm -rf " WORKDIR "/watch && mkdir -p " WORKDIR "/watch");
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		setenv("PORTHOLE_PROJECT_ROOT", WORKDIR "/watch", 1);
		execl(porthole, "porthole", "watch", "--application-id", app,
		      "--severity", "error", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	pthread_join(th, NULL);
	if (r.ready != 1) {
		rc = -1;
		goto out;
	}
	if (gen_profile(&g, &b) || write_all(r.cfd, b.buf, b.len)) {
		rc = -1;
		goto out;
	}
	for (int i = 0; i < STALLS && !rc; i++) {
		int64_t sent;
		bool got = false;

		/* Background: 100 ms of a busy app, as it would arrive. */
		ph_buf_reset(&b);
		for (int k = 0; k < 3; k++)
			gen_cycle(&g, &b);
		if (write_all(r.cfd, b.buf, b.len)) {
			rc = -1;
			break;
		}
		usleep(20000);
		ph_buf_reset(&b);
		line(&b,
		     "{\"event\":\"blocked\",\"t\":%" PRId64 ",\"seq\":%" PRId64
		     ",\"data\":{\"durationMs\":300,\"top\":"
		     "\"planted_stall_%d(bench.c:10)\",\"frames\":[{\"fn\":"
		     "\"planted_stall_%d\",\"file\":\"bench.c\",\"line\":10,"
		     "\"app\":true}]}}",
		     T0 + g.cycle * 100, g.seq++, i, i);
		sent = ph_clock_mono_ns();
		if (write_all(r.cfd, b.buf, b.len)) {
			rc = -1;
			break;
		}
		/* Its line: "error ... planted_stall_i(bench.c:10) ...": a
		 * function of its own, so a finding watch has not shown. */
		while (!got) {
			struct pollfd p = { .fd = pfd[0], .events = POLLIN };

			if (poll(&p, 1, 5000) <= 0) {
				rc = -1;
				break;
			}
			n = read(pfd[0], buf, sizeof(buf) - 1);
			if (n <= 0) {
				rc = -1;
				break;
			}
			buf[n] = '\0';
			got = strstr(buf, "planted_stall") != NULL;
		}
		if (got)
			lat[nlat++] = (double)(ph_clock_mono_ns() - sent) / 1e6;
	}
out:
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	if (r.cfd > 0)
		close(r.cfd);
	close(r.lfd);
	close(pfd[0]);
	ph_buf_release(&b);
	if (rc || nlat < STALLS) {
		fprintf(stderr, "bench-host: watch saw %d of %d stalls\n", nlat,
			STALLS);
		return -1;
	}
	qsort(lat, (size_t)nlat, sizeof(*lat), cmp_double);
	snprintf(extra, sizeof(extra),
		 "\"stalls\":%d,\"p90\":%.3f,\"max\":%.3f", nlat,
		 lat[nlat * 9 / 10], lat[nlat - 1]);
	emit("watch_latency_ms_median", lat[nlat / 2], "ms", extra);
	return 0;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc == 3 && !strcmp(argv[1], "--findings"))
		return findings_child(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	mkdir("build", 0755);
	mkdir(WORKDIR, 0755);
	/* One part by name (for profiling), or all three. */
#define PART(name) (argc < 2 || !strcmp(argv[1], name))
	if (PART("ingest"))
		failed |= bench_ingest() != 0;
	if (PART("findings"))
		failed |= bench_findings() != 0;
	if (PART("watch"))
		failed |= bench_watch() != 0;
#undef PART
	return failed;
}
