/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the host engine: ingest and store over the published runtime's
 * recorded stream, the findings over it, and the status classification.
 */
#include "ph_common.h"
#include "harness.h"
#include "host/capture.h"
#include "host/findings.h"
#include "host/ingest.h"
#include "host/session.h"
#include "host/report.h"
#include "host/store.h"

#include <unistd.h>

void test_host__store_takes_every_kind_once(void)
{
	struct ph_store s;
	const char *wire = FIXTURE("porthole-wire/received.ndjson");

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(ph_store_load_file(&s, wire), 0);
	CHECK(s.in.ident.have);
	CHECK_STR(s.in.ident.package, "com.example.shop");
	CHECK_STR(s.in.ident.device_id, "unknown");
	/* 986 streamed + 41 backfilled (seq 0..40); the second timeline
	 * page repeats streamed seqs and is deduplicated. */
	CHECK_INT(s.in.events, 986 + 41);
	CHECK_INT(s.in.counts[PH_KIND_DB_END], 57);
	CHECK_INT(s.in.counts[PH_KIND_HTTP_END], 22);
	CHECK_INT(s.in.malformed, 0);
	CHECK_INT(s.in.gaps, 0);
	ph_store_release(&s);
}

/*
 * host_made_at moves with host-made events (seq -1: leaks, io requests)
 * and only with them, so a reader after those can skip the app's.
 */
void test_host__store_marks_where_host_made_events_are(void)
{
	struct ph_store s;
	static const char app[] =
		"{\"event\":\"mark\",\"t\":1,\"seq\":%d,\"data\":{\"name\":\"m\"}}";
	static const char host[] =
		"{\"event\":\"leak\",\"t\":2,\"seq\":-1,\"data\":{}}";
	char line[128];

	CHECK_INT(ph_store_init(&s, 0), 0);
	for (int i = 0; i < 3; i++) {
		int n = snprintf(line, sizeof(line), app, i);

		CHECK_INT(ph_store_add_line(&s, line, (size_t)n), 0);
	}
	CHECK_INT(s.version, 3);
	CHECK_INT(s.host_made_at, 0);
	CHECK_INT(ph_store_add_line(&s, host, strlen(host)), 0);
	CHECK_INT(s.host_made_at, 4);
	for (int i = 3; i < 5; i++) {
		int n = snprintf(line, sizeof(line), app, i);

		CHECK_INT(ph_store_add_line(&s, line, (size_t)n), 0);
	}
	CHECK_INT(s.version, 6);
	CHECK_INT(s.host_made_at, 4);
	ph_store_release(&s);
}

void test_host__findings_over_the_wire_fixture(void)
{
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(ph_store_load_file(&s, FIXTURE("porthole-wire/"
						 "received.ndjson")),
		  0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	f = ph_analysis_find(a, "db-on-main-thread");
	CHECK(f && f->count == 14 && f->severity == PH_SEV_ERROR);
	f = ph_analysis_find(a, "db-error");
	CHECK(f && f->count == 3);
	f = ph_analysis_find(a, "http-failed");
	CHECK(f && f->count == 3);
	CHECK(strstr(f->title, "POST /v1/checkout answered 402"));
	f = ph_analysis_find(a, "http-call-slow");
	CHECK(f && f->count == 6);
	CHECK_INT(a->metric[PH_M_HTTP_CALLS], 22);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_host__quirks_and_plain_forms_agree(void)
{
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;
	static const char *const lines[] = {
		"{\"event\":\"device\",\"t\":1,\"seq\":0,\"data\":{\"kind\":"
		"\"profile\",\"refreshHz\":\"120\"}}",
		"{\"event\":\"http_end\",\"t\":5000,\"seq\":1,\"data\":{\"method\":"
		"\"GET\",\"url\":\"http://x/a\",\"elapsedMs\":\"3500\",\"status\":"
		"\"500\"}}",
		"{\"event\":\"http_end\",\"t\":9000,\"seq\":2,\"data\":{\"method\":"
		"\"GET\",\"url\":\"http://x/a\",\"elapsedMs\":3600,\"status\":500}}",
		"{\"event\":\"frame\",\"t\":100,\"seq\":3,\"data\":{\"totalMs\":"
		"400,\"missedFrames\":1,\"worstPhase\":\"draw\"}}",
		"not json at all",
		"{\"event\":\"dropped\",\"t\":9,\"seq\":4,\"data\":{\"count\":3}}",
	};

	CHECK_INT(ph_store_init(&s, 0), 0);
	for (size_t i = 0; i < PH_ARRAY_SIZE(lines); i++)
		CHECK_INT(ph_store_add_line(&s, lines[i], strlen(lines[i])), 0);
	CHECK_INT(s.in.malformed, 1);
	CHECK_INT(s.in.dropped, 3);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	f = ph_analysis_find(a, "http-failed");
	CHECK(f && f->count == 2);
	f = ph_analysis_find(a, "http-call-slow");
	CHECK(f && f->count == 2);
	/* 400 ms at 120 Hz is 47 missed refreshes, not the 1 reported. */
	f = ph_analysis_find(a, "frames-dropped");
	CHECK(f && strstr(f->title, "47 refreshes missed"));
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_host__status_new_ongoing_resolved(void)
{
	struct ph_store s;
	struct ph_analysis *a;
	const char *keys[] = { "db-on-main-thread", "gone:key" };
	const char *ids[] = { "db-on-main-thread", "leak" };
	const char *titles[] = { "t", "old leak" };
	int64_t counts[] = { 10, 1 };
	int sev[] = { PH_SEV_ERROR, PH_SEV_WARNING };
	struct ph_prev_call p = { .have = true,
				  .w = { 0, 80000 },
				  .n = 2,
				  .keys = keys,
				  .ids = ids,
				  .titles = titles,
				  .counts = counts,
				  .severities = sev };

	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(ph_store_load_file(&s, FIXTURE("porthole-wire/"
						 "received.ndjson")),
		  0);
	a = ph_analyze_store(&s, (struct ph_window){ 10000, 80000 });
	ph_analysis_classify(a, &p);
	CHECK_INT(ph_analysis_find(a, "db-on-main-thread")->status,
		  PH_STATUS_ONGOING);
	CHECK_INT(ph_analysis_find(a, "db-on-main-thread")->delta, 4);
	CHECK_INT(ph_analysis_find(a, "http-failed")->status, PH_STATUS_NEW);
	CHECK_INT(ph_analysis_find(a, "leak")->status, PH_STATUS_RESOLVED);
	ph_analysis_free(a);
	/* A window far from the previous one is not classified. */
	a = ph_analyze_store(&s, (struct ph_window){ 200000, 300000 });
	ph_analysis_classify(a, &p);
	CHECK(a->status_note != NULL);
	ph_analysis_free(a);
	ph_store_release(&s);
}

/* A session's wire: hello, profile, a stall at t=1000, filler, a stall at
 * t=9000; the first `upto` lines only when upto > 0. */
static int write_session(const char *path, int upto)
{
	FILE *f = fopen(path, "w");
	int seq = 0, lines = 0;

	if (!f)
		return -1;
#define LINE(...)                                \
	do {                                     \
		if (upto <= 0 || lines < upto)   \
			fprintf(f, __VA_ARGS__); \
		lines++;                         \
	} while (0)
	LINE("{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,\"packageName\":"
	     "\"t.fallback\",\"startedAt\":400,\"deviceId\":\"d\"}}\n");
	LINE("{\"event\":\"device\",\"t\":500,\"seq\":%d,\"data\":{\"kind\":"
	     "\"profile\",\"refreshHz\":60,\"cores\":2}}\n",
	     seq++);
	LINE("{\"event\":\"blocked\",\"t\":1000,\"seq\":%d,\"data\":{"
	     "\"durationMs\":400,\"top\":\"slow_thing(a.c:3)\"}}\n",
	     seq++);
	for (int i = 0; i < 4000; i++)
		LINE("{\"event\":\"recompose\",\"t\":%d,\"seq\":%d,\"data\":{"
		     "\"id\":\"Row#%d\",\"name\":\"Row\",\"pass\":1}}\n",
		     2000 + i, seq++, i % 8);
	LINE("{\"event\":\"blocked\",\"t\":9000,\"seq\":%d,\"data\":{"
	     "\"durationMs\":400,\"top\":\"slow_thing(a.c:3)\"}}\n",
	     seq++);
#undef LINE
	return fclose(f);
}

static int load(struct ph_store *s, const char *path)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	size_t start = 0;
	int rc = ph_buf_read_file(&b, path);

	while (!rc && start < b.len) {
		char *nl = memchr(b.buf + start, '\n', b.len - start);

		rc = ph_store_add_line(s, b.buf + start,
				       (size_t)(nl - (b.buf + start)));
		start = (size_t)(nl - b.buf) + 1;
	}
	ph_buf_release(&b);
	return rc;
}

static bool has_note(const struct ph_analysis *a, const char *part)
{
	for (size_t i = 0; i < a->nnotes; i++)
		if (strstr(a->notes[i], part))
			return true;
	return false;
}

void test_host__window_falls_back_to_the_session_on_disk(void)
{
	char dir[] = "/tmp/ph-fallback-XXXXXX", path[64], part[64];
	struct ph_window w = { 500, 10000 };
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;
	FILE *f2;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.ndjson", dir);
	snprintf(part, sizeof(part), "%s/part.ndjson", dir);
	CHECK_INT(write_session(path, 0), 0);
	CHECK_INT(write_session(part, 1500), 0);
	/* A host-made event, appended by another process (a heap dump's
	 * leak): the file has it, and the live store read it back. */
	f2 = fopen(path, "a");
	CHECK(f2);
	fputs("{\"event\":\"leak\",\"t\":9500,\"seq\":-1,\"data\":{"
	      "\"signature\":\"s1\",\"shortDescription\":\"Cart leaked\"}}\n",
	      f2);
	CHECK_INT(fclose(f2), 0);
	/* A small store: it evicts the first stall. */
	CHECK_INT(ph_store_init(&s, 64 << 10), 0);
	CHECK_INT(load(&s, path), 0);
	CHECK(s.covered_from > 1400);

	/* The store alone: one stall, and the evicted part clipped. */
	a = ph_analyze_store(&s, w);
	CHECK(a);
	f = ph_analysis_find(a, "main-thread-stall");
	CHECK(f && f->count == 1);
	CHECK_INT(a->clipped_ms, s.covered_from - 500);
	ph_analysis_free(a);

	/* With the session on disk: both stalls, nothing clipped, said so. */
	a = ph_analyze_window(&s, path, w);
	CHECK(a);
	f = ph_analysis_find(a, "main-thread-stall");
	CHECK(f && f->count == 2 && f->from == 1000);
	CHECK_INT(a->clipped_ms, 0);
	CHECK(has_note(a, "read from the session on disk"));
	CHECK_INT(a->metric[PH_M_EVENTS], 4004);
	/* the leak once: from the file, not again from the store */
	f = ph_analysis_find(a, "leak");
	CHECK(f && f->count == 1);
	ph_analysis_free(a);

	/* A session file that stopped early (a full disk): the hole between
	 * its end and the store's oldest event is clipped and named. */
	a = ph_analyze_window(&s, part, w);
	CHECK(a);
	f = ph_analysis_find(a, "main-thread-stall");
	CHECK(f && f->count == 2);
	CHECK(a->clipped_ms > 0);
	CHECK(has_note(a, "neither on disk nor in the live buffer"));
	ph_analysis_free(a);

	/* No file at all: the store's answer, clipped. */
	a = ph_analyze_window(&s, "/nonexistent/events.ndjson", w);
	CHECK(a && a->clipped_ms == s.covered_from - 500);
	ph_analysis_free(a);
	ph_store_release(&s);
	unlink(path);
	unlink(part);
	rmdir(dir);
}

/* The file pipeline (parser and engine on two threads) answers exactly as
 * the store does over the same events, across many batches. */
void test_host__mt_file_analysis_matches_the_store(void)
{
	char dir[] = "/tmp/ph-pipe-XXXXXX", path[64];
	struct ph_store s;
	struct ph_analysis *a, *b;
	FILE *f;
	int rc = 0;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.ndjson", dir);
	f = fopen(path, "w");
	CHECK(f);
	fprintf(f, "{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,"
		   "\"packageName\":\"t.pipe\",\"startedAt\":1}}\n");
	fprintf(f, "{\"event\":\"device\",\"t\":1,\"seq\":0,\"data\":{"
		   "\"kind\":\"profile\",\"refreshHz\":60}}\n");
	/* ~12 MB: three batches and a torn last line. */
	for (int i = 1; i < 120000; i++)
		fprintf(f,
			"{\"event\":\"%s\",\"t\":%d,\"seq\":%d,\"data\":{"
			"\"totalMs\":40,\"durationMs\":300,\"top\":"
			"\"f%d(a.c:1)\",\"worstPhase\":\"draw\",\"pad\":\"%s\"}}"
			"\n",
			i % 1000 ? "frame" : "blocked", 10 + i, i, i % 3,
			"................................................");
	fprintf(f, "{\"event\":\"frame\",\"t\":9");
	CHECK_INT(fclose(f), 0);
	a = ph_analyze_file(path, PH_WINDOW_ALL, &rc);
	CHECK(a && rc == 0);
	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(ph_store_load_file(&s, path), 0);
	b = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(b);
	CHECK_INT(a->nf, b->nf);
	for (size_t i = 0; i < a->nf; i++) {
		CHECK_STR(a->f[i].key, b->f[i].key);
		CHECK_INT(a->f[i].count, b->f[i].count);
	}
	for (int m = 0; m < PH_M_COUNT; m++)
		CHECK(a->metric[m] == b->metric[m]);
	CHECK_INT(a->metric[PH_M_EVENTS], 120000);
	CHECK(a->profile.refresh_hz == 60);
	ph_analysis_free(a);
	ph_analysis_free(b);
	ph_store_release(&s);
	unlink(path);
	rmdir(dir);
}

/* Lines appended while the flusher writes (woken early by volume) all
 * reach the file, in order. */
void test_host__mt_session_writer_keeps_every_line(void)
{
	char dir[] = "/tmp/ph-sess-XXXXXX", path[4400];
	struct ph_session_writer w;
	struct ph_ident id = { .have = true, .started_at = 7 };
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	char line[300];
	size_t want = 0, at = 0;
	int n = 0;

	CHECK(mkdtemp(dir));
	snprintf(id.package, sizeof(id.package), "t.sess");
	CHECK_INT(ph_session_open(&w, dir, &id, NULL), 0);
	CHECK(w.writer);
	for (int i = 0; i < 50000; i++) {
		int len = snprintf(line, sizeof(line),
				   "{\"event\":\"mark\",\"t\":%d,\"seq\":%d,"
				   "\"data\":{\"label\":\"%0200d\"}}",
				   i, i, i);

		ph_session_append(&w, line, (size_t)len);
		want += (size_t)len + 1;
	}
	snprintf(path, sizeof(path), "%s/events.ndjson", w.dir);
	ph_session_close(&w);
	CHECK_INT(ph_buf_read_file(&b, path), 0);
	CHECK_INT(b.len, want);
	while (at < b.len) {
		const char *nl = memchr(b.buf + at, '\n', b.len - at);
		char head[64];
		int hl = snprintf(head, sizeof(head),
				  "{\"event\":\"mark\",\"t\":%d,", n);

		CHECK(nl && !memcmp(b.buf + at, head, (size_t)hl));
		at = (size_t)(nl - b.buf) + 1;
		n++;
	}
	CHECK_INT(n, 50000);
	ph_buf_release(&b);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lock", w.dir);
	unlink(path);
	CHECK_INT(rmdir(w.dir), 0);
	CHECK_INT(rmdir(dir), 0);
}

struct appender {
	const char *dir;
	int n; /* calls to make */
	int rc;
};

/* Another process's `heap dump`: leak lines, one call at a time. */
static void *append_leaks(void *arg)
{
	struct appender *a = arg;
	char line[200];

	for (int i = 0; i < a->n && !a->rc; i++) {
		int len = snprintf(line, sizeof(line),
				   "{\"event\":\"leak\",\"t\":%d,\"seq\":-1,"
				   "\"data\":{\"kind\":\"application\","
				   "\"shortDescription\":\"L%d\"}}\n",
				   i, i);

		a->rc = ph_session_add_events(a->dir, line, (size_t)len);
		usleep(5000);
	}
	return NULL;
}

/*
 * The writer reads back what another process appends to its session
 * while it writes its own lines, into its store: every foreign event
 * once, none of its own twice, a device seq or a non-event never, and
 * meta.json counts them; the file holds every line whole.
 */
void test_host__mt_session_writer_reads_back_appended_events(void)
{
	char dir[] = "/tmp/ph-sess-XXXXXX", path[4400], line[300];
	struct ph_session_writer w;
	struct ph_ident id = { .have = true, .started_at = 9 };
	struct ph_store s;
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct appender ap = { .n = 60 };
	const int own = 30000;
	static const char other[] =
		"{\"event\":\"mark\",\"t\":1,\"seq\":5,\"data\":{}}\nnot json\n";
	pthread_t th;
	size_t at = 0, lines = 0, leaks = 0;
	uint64_t live;
	int rc = 0;
	bool started;

	CHECK(mkdtemp(dir));
	CHECK_INT(ph_store_init(&s, 0), 0);
	snprintf(id.package, sizeof(id.package), "t.foreign");
	CHECK_INT(ph_session_open(&w, dir, &id, &s), 0);
	CHECK(w.writer);
	ap.dir = w.dir;
	started = !pthread_create(&th, NULL, append_leaks, &ap);
	for (int i = 0; i < own; i++) {
		int len = snprintf(line, sizeof(line),
				   "{\"event\":\"mark\",\"t\":%d,\"seq\":%d,"
				   "\"data\":{\"label\":\"%0100d\"}}",
				   i, i, i);

		/* as live.c does: the store and the session each get it */
		rc |= ph_store_add_line(&s, line, (size_t)len);
		ph_session_append(&w, line, (size_t)len);
		if (i % 100 == 0)
			usleep(1000);
	}
	if (started)
		pthread_join(th, NULL);
	rc |= ph_session_add_events(w.dir, other, sizeof(other) - 1);
	/* Live: the flusher brings them in while the session is open. */
	for (int i = 0; i < 5000; i++) {
		uint64_t n;

		pthread_mutex_lock(&s.lock);
		n = s.in.counts[PH_KIND_LEAK] + s.in.malformed;
		pthread_mutex_unlock(&s.lock);
		if (n == (uint64_t)ap.n + 2)
			break;
		usleep(2000);
	}
	pthread_mutex_lock(&s.lock);
	live = s.in.counts[PH_KIND_LEAK];
	pthread_mutex_unlock(&s.lock);
	snprintf(path, sizeof(path), "%s/events.ndjson", w.dir);
	ph_session_close(&w);
	CHECK(started);
	CHECK_INT(rc, 0);
	CHECK_INT(ap.rc, 0);
	CHECK_INT(live, ap.n);
	CHECK_INT(w.foreign, ap.n);
	CHECK_INT(s.in.counts[PH_KIND_LEAK], ap.n);
	CHECK_INT(s.in.counts[PH_KIND_MARK], own);
	CHECK_INT(s.in.events, own + ap.n);
	CHECK_INT(s.in.malformed, 2);
	CHECK_INT(ph_buf_read_file(&b, path), 0);
	CHECK_INT(w.bytes, b.len);
	while (at < b.len) {
		const char *nl = memchr(b.buf + at, '\n', b.len - at);
		size_t n = nl ? (size_t)(nl - (b.buf + at)) : 0;

		CHECK(nl);
		if (memmem(b.buf + at, n, "\"event\":\"leak\"", 14))
			leaks++;
		else if (memmem(b.buf + at, n, "\"label\"", 7))
			/* own lines are whole: one object each */
			CHECK(b.buf[at] == '{' && b.buf[at + n - 1] == '}' &&
			      !memmem(b.buf + at + 1, n - 1, "{\"event\"", 8));
		lines++;
		at = (size_t)(nl - b.buf) + 1;
	}
	CHECK_INT(leaks, ap.n);
	CHECK_INT(lines, own + ap.n + 2);
	ph_buf_reset(&b);
	snprintf(path, sizeof(path), "%s/meta.json", w.dir);
	CHECK_INT(ph_buf_read_file(&b, path), 0);
	snprintf(line, sizeof(line), "\"leak\":%d", ap.n);
	CHECK(strstr(b.buf, line));
	snprintf(line, sizeof(line), "\"events\":%d,", own + ap.n);
	CHECK(strstr(b.buf, line));
	ph_buf_release(&b);
	ph_store_release(&s);
	unlink(path);
	snprintf(path, sizeof(path), "%s/events.ndjson", w.dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lock", w.dir);
	unlink(path);
	CHECK_INT(rmdir(w.dir), 0);
	CHECK_INT(rmdir(dir), 0);
}

/* Everything a capture of a holds, but its notes (where it came from). */
static int capture_text(struct ph_analysis *a, struct ph_buf *out)
{
	struct ph_capture_info info = { .scenario = "s", .driver = "d" };
	struct ph_jw jw;

	/* The engines' answers, without what the store adds about itself
	 * (its notes, and the part it evicted). */
	a->nnotes = 0;
	a->cov.clipped_ms = 0;
	ph_analysis_cover(a);
	ph_buf_reset(out);
	ph_jw_init(&jw, out);
	ph_capture_write(a, &info, &jw);
	return ph_jw_finish(&jw);
}

/* The answer a new engine gives over every event the store holds. */
static struct ph_analysis *fresh(struct ph_store *s, struct ph_window w)
{
	struct ph_engine *e = ph_engine_new(w, &s->in);
	struct ph_analysis *a;

	if (!e)
		return NULL;
	ph_store_each(s, w, 0, ph_engine_feed_cb, e);
	a = ph_engine_analyze(e);
	ph_engine_free(e);
	return a;
}

/* One synthetic line of every kind the families judge, by number. */
static int synth_line(char *buf, size_t size, int i, int seq)
{
	static const char *const ev[][2] = {
		{ "device", "{\"kind\":\"thermal\",\"status\":\"severe\"}" },
		{ "frame", "{\"totalMs\":400,\"worstPhase\":\"draw\","
			   "\"budgetMs\":16.6}" },
		{ "blocked", "{\"durationMs\":300,\"top\":\"slow(a.c:3)\"}" },
		{ "db_end", "{\"sql\":\"SELECT 1\",\"elapsedMs\":\"12\","
			    "\"thread\":\"main\"}" },
		{ "http_end", "{\"id\":\"h\",\"method\":\"POST\",\"url\":"
			      "\"http://x/pay\",\"status\":402,"
			      "\"elapsedMs\":3500}" },
		{ "work_end", "{\"workId\":\"w\",\"state\":\"ENQUEUED\","
			      "\"retrying\":true,\"attempt\":2}" },
		{ "input", "{\"action\":\"tap\",\"tapMs\":700}" },
		{ "gc", "{\"pausedMs\":40,\"blocking\":1}" },
		{ "mark", "{\"label\":\"m\"}" },
		{ "log", "{\"level\":\"E\",\"tag\":\"T\",\"message\":"
			 "\"boom\"}" },
		{ "strict_violation", "{\"site\":\"A.b:1\",\"category\":"
				      "\"DiskWrite\"}" },
		{ "device", "{\"kind\":\"thermal\",\"status\":\"none\"}" },
	};
	size_t k = (size_t)i % PH_ARRAY_SIZE(ev);

	return snprintf(buf, size,
			"{\"event\":\"%s\",\"t\":%d,\"seq\":%d,\"data\":%s}",
			ev[k][0], 200000 + i * 1500, seq, ev[k][1]);
}

/*
 * The live store keeps one engine fed as events arrive and asks it again
 * for every question about the whole store: its answers are a new
 * engine's over the same events, exactly, while the store grows, after a
 * late device profile (which changes every frame's budget), and after the
 * store evicts what the engine was fed.
 */
void test_host__standing_engine_answers_as_a_fresh_one(void)
{
	struct ph_buf want = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf got = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf wire = PH_BUF_INIT(PH_BUF_NO_CAP);
	static const char profile[] =
		"{\"event\":\"device\",\"t\":260000,\"seq\":5000,\"data\":{"
		"\"kind\":\"profile\",\"refreshHz\":120}}";
	struct ph_store s;
	size_t at = 0;
	int n = 0, asked = 0, seq = 4000, lines = 0;
	char line[400];
	bool profiled = false;

	CHECK_INT(ph_buf_read_file(&wire, FIXTURE("porthole-wire/"
						  "received.ndjson")),
		  0);
	/* Small: it evicts, repeatedly, before the end. */
	CHECK_INT(ph_store_init(&s, 160 << 10), 0);
	for (;;) {
		struct ph_analysis *a, *b;
		int len;

		if (at < wire.len) {
			const char *nl =
				memchr(wire.buf + at, '\n', wire.len - at);
			size_t ll = nl ? (size_t)(nl - (wire.buf + at)) :
					 wire.len - at;

			CHECK_INT(ph_store_add_line(&s, wire.buf + at, ll), 0);
			at += ll + 1;
		} else if (n < 400) {
			if (n == 100 && !profiled) {
				CHECK_INT(ph_store_add_line(&s, profile,
							    strlen(profile)),
					  0);
				profiled = true;
			}
			len = synth_line(line, sizeof(line), n++, seq++);
			CHECK_INT(ph_store_add_line(&s, line, (size_t)len), 0);
		} else {
			break;
		}
		if (++lines % 23)
			continue;
		/* Both as `watch` asks (all) and as MCP does (up to now). */
		for (int k = 0; k < 2; k++) {
			struct ph_window w = PH_WINDOW_ALL;

			if (k)
				w.to = s.in.last_t;
			a = ph_analyze_store(&s, w);
			b = fresh(&s, w);
			CHECK(a && b);
			CHECK_INT(capture_text(a, &got), 0);
			CHECK_INT(capture_text(b, &want), 0);
			CHECK_STR(got.buf, want.buf);
			ph_analysis_free(a);
			ph_analysis_free(b);
			asked++;
		}
	}
	CHECK(s.cache != NULL);
	CHECK(s.covered_from != INT64_MIN);
	CHECK(s.in.profile.refresh_hz == 120);
	CHECK(asked > 80);
	ph_store_release(&s);

	/* A profile that arrives after the engine judged frames without one
	 * re-judges them on the session's budget. */
	CHECK_INT(ph_store_init(&s, 0), 0);
	for (int i = 0; i < 48; i++) {
		int len = synth_line(line, sizeof(line), i, seq++);

		CHECK_INT(ph_store_add_line(&s, line, (size_t)len), 0);
	}
	for (int k = 0; k < 2; k++) {
		struct ph_analysis *a = ph_analyze_store(&s, PH_WINDOW_ALL);
		const struct ph_finding *f =
			a ? ph_analysis_find(a, "frames-dropped") : NULL;

		CHECK(f && ph_analysis_find(a, "http-failed") &&
		      ph_analysis_find(a, "main-thread-stall") &&
		      ph_analysis_find(a, "thermal-throttling") &&
		      ph_analysis_find(a, "tap-slow") &&
		      ph_analysis_find(a, "work-retried") &&
		      ph_analysis_find(a, "gc-blocking") &&
		      ph_analysis_find(a, "strict-violation"));
		CHECK(strstr(f->detail[0], k ? "budget 8.3 ms (120 Hz)" :
					       "budget 16.6 ms (no profile)"));
		ph_analysis_free(a);
		CHECK_INT(ph_store_add_line(&s, profile, strlen(profile)), 0);
	}
	ph_buf_release(&want);
	ph_buf_release(&got);
	ph_buf_release(&wire);
	ph_store_release(&s);
}

struct writer {
	struct ph_store *s;
	struct ph_buf *wire;
	int rc;
	_Atomic int done;
};

static void *write_wire(void *arg)
{
	struct writer *w = arg;

	/* A line at a time, as the link's parser stores them. */
	for (size_t at = 0; at < w->wire->len && !w->rc;) {
		const char *l = w->wire->buf + at;
		const char *nl = memchr(l, '\n', w->wire->len - at);
		size_t n = nl ? (size_t)(nl - l) : w->wire->len - at;

		w->rc = ph_store_add_line(w->s, l, n);
		at += n + 1;
	}
	w->done = 1;
	return NULL;
}

/* Questions about the whole store while the link's thread stores lines:
 * the standing engine is fed and asked under the store's lock only, and
 * ends where a new engine over every event ends. */
void test_host__mt_standing_engine_under_a_writer(void)
{
	struct ph_buf wire = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf want = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf got = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_store s;
	struct writer w = { &s, &wire, 0, 0 };
	struct ph_analysis *a, *b;
	bool answered = true;
	pthread_t th;

	CHECK_INT(ph_buf_read_file(&wire, FIXTURE("porthole-wire/"
						  "received.ndjson")),
		  0);
	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(pthread_create(&th, NULL, write_wire, &w), 0);
	while (!w.done) {
		a = ph_analyze_store(&s, PH_WINDOW_ALL);
		answered &= a != NULL;
		ph_analysis_free(a);
	}
	pthread_join(th, NULL);
	CHECK(answered);
	CHECK_INT(w.rc, 0);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	b = fresh(&s, PH_WINDOW_ALL);
	CHECK(a && b);
	CHECK_INT(capture_text(a, &got), 0);
	CHECK_INT(capture_text(b, &want), 0);
	CHECK_STR(got.buf, want.buf);
	CHECK_INT(a->metric[PH_M_EVENTS], 986 + 41);
	ph_analysis_free(a);
	ph_analysis_free(b);
	ph_buf_release(&wire);
	ph_buf_release(&want);
	ph_buf_release(&got);
	ph_store_release(&s);
}

/* One stall as the agent sends it: ongoing while it lasts, then closed. */
static void add_blocked(struct ph_store *s, int64_t t, int64_t seq, int64_t ms,
			bool ongoing, const char *top)
{
	char line[400];
	int n = snprintf(line, sizeof(line),
			 "{\"event\":\"blocked\",\"t\":%" PRId64
			 ",\"seq\":%" PRId64
			 ",\"data\":{\"durationMs\":%" PRId64
			 ",\"top\":\"%s\",\"stack\":\"%s\\nmain(main.c:9)\","
			 "\"tid\":7%s}}",
			 t, seq, ms, top, top,
			 ongoing ? ",\"ongoing\":true" : "");

	CHECK_INT(ph_store_add_line(s, line, (size_t)n), 0);
}

/*
 * A stall the agent sampled inside its own SQLite wrapper: the frames say
 * which are the app's, and the app's (db_open, whose line the debug info
 * did not give: "fn(file)") is blamed, in the title, the key and the
 * where-hint, which finds the function's own line in the file.
 */
void test_host__a_stall_blames_the_app_frame_without_a_line(void)
{
	static const char line[] =
		"{\"event\":\"blocked\",\"t\":1000,\"seq\":1,\"data\":{"
		"\"durationMs\":282,\"top\":\"db_open(db.c)\","
		"\"stack\":\"db_open(db.c)\\nmain(main.c:204)\\n"
		"sqlite3_step(sqlite.c:479)\","
		"\"frames\":[{\"fn\":\"db_open\",\"file\":\"db.c\","
		"\"module\":\"app\",\"offset\":1,\"pc\":\"0x1\",\"app\":true},"
		"{\"fn\":\"main\",\"file\":\"main.c\",\"line\":204,"
		"\"module\":\"app\",\"offset\":2,\"pc\":\"0x2\",\"app\":true},"
		"{\"fn\":\"sqlite3_step\",\"file\":\"sqlite.c\",\"line\":479,"
		"\"module\":\"app\",\"offset\":3,\"pc\":\"0x3\",\"app\":false}],"
		"\"tid\":7}}";
	struct ph_window w = { 0, 100000 };
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;
	const char *root = ph_test_tmpdir();
	char path[4200];
	FILE *src;

	CHECK_INT(ph_store_init(&s, 1 << 20), 0);
	CHECK_INT(ph_store_add_line(&s, line, sizeof(line) - 1), 0);
	a = ph_analyze_store(&s, w);
	CHECK(a);
	f = ph_analysis_find(a, "main-thread-stall");
	CHECK(f && strstr(f->title, "stalled 282 ms in db_open(db.c)"));
	CHECK(f && !strstr(f->title, "-1") && !strstr(f->title, "sqlite"));
	CHECK(f && f->hint.fn && !strcmp(f->hint.fn, "db_open"));
	CHECK(f && f->hint.file && !strcmp(f->hint.file, "db.c"));
	CHECK(f && f->hint.line == 0);

	/* The project's db.c: the function's definition is the line. */
	CHECK(root);
	snprintf(path, sizeof(path), "%s/db.c", root ? root : "");
	src = fopen(path, "w");
	CHECK(src);
	if (src) {
		fputs("#include <x.h>\n\nint db_open(const char *dir)\n{\n"
		      "\treturn 0;\n}\n",
		      src);
		CHECK_INT(fclose(src), 0);
	}
	ph_analysis_resolve_where(a, root);
	f = ph_analysis_find(a, "main-thread-stall");
	CHECK(f && f->where_short && !strcmp(f->where_short, "db.c:3"));
	ph_analysis_free(a);
	ph_store_release(&s);
}

/*
 * A stall's identity across runs is its function and file: the line is
 * where the sample landed in it, which differs run to run (a busy loop's
 * compare, or the call inside it), and compare matches findings by key.
 * Two stalls of one function in one run are one finding, counted twice.
 */
void test_host__a_stalls_key_is_its_function_not_the_line(void)
{
	struct ph_window w = { 0, 100000 };
	const char *top[2] = { "pay(pay.c:3)", "pay(pay.c:9)" };
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;

	for (int i = 0; i < 2; i++) {
		CHECK_INT(ph_store_init(&s, 1 << 20), 0);
		add_blocked(&s, 1000, 1, 600, false, top[i]);
		a = ph_analyze_store(&s, w);
		CHECK(a);
		f = ph_analysis_find(a, "main-thread-stall");
		CHECK(f && f->key &&
		      !strcmp(f->key, "main-thread-stall:pay(pay.c)"));
		/* the title still says where the sample landed */
		CHECK(f && strstr(f->title, top[i]));
		ph_analysis_free(a);
		ph_store_release(&s);
	}
	CHECK_INT(ph_store_init(&s, 1 << 20), 0);
	add_blocked(&s, 1000, 1, 600, false, top[0]);
	add_blocked(&s, 5000, 2, 700, false, top[1]);
	a = ph_analyze_store(&s, w);
	CHECK(a);
	f = ph_analysis_find(a, "main-thread-stall");
	CHECK(f && f->count == 2 && strstr(f->title, "pay(pay.c:9)"));
	CHECK_INT(a->nf, 1);
	ph_analysis_free(a);
	ph_store_release(&s);
}

void test_host__a_stall_sent_while_it_lasts_counts_once(void)
{
	struct ph_window w = { 0, 100000 };
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;

	CHECK_INT(ph_store_init(&s, 1 << 20), 0);
	add_blocked(&s, 1000, 1, 230, true, "pay(pay.c:3)");
	add_blocked(&s, 1000, 2, 1230, true, "pay(pay.c:3)");
	add_blocked(&s, 1000, 3, 1604, false, "pay(pay.c:3)");
	a = ph_analyze_store(&s, w);
	CHECK(a);
	f = ph_analysis_find(a, "main-thread-stall");
	CHECK(f && f->count == 1 && f->from == 1000 && f->to == 2604);
	CHECK(f && strstr(f->title, "stalled 1604 ms in pay(pay.c:3)"));
	CHECK(f && !strstr(f->evidence, "\"open\""));
	CHECK(a->metric[PH_M_STALLS] == 1);
	CHECK(a->metric[PH_M_STALL_MS] == 1604);
	CHECK(a->metric[PH_M_STALL_WORST_MS] == 1604);
	ph_analysis_free(a);

	/* A second stall, still going on when the record ends: open, and
	 * never "quiet". */
	add_blocked(&s, 9000, 4, 210, true, "pay(pay.c:3)");
	add_blocked(&s, 9000, 5, 1210, true, "wait(sync.c:8)");
	a = ph_analyze_store(&s, w);
	CHECK(a);
	CHECK(!ph_analysis_quiet(a, "main-thread-stall"));
	f = ph_analysis_find(a, "main-thread-stall");
	CHECK(f && f->count == 1);
	f = NULL;
	for (size_t i = 0; i < a->nf; i++)
		if (strstr(a->f[i].title, "wait(sync.c:8)"))
			f = &a->f[i];
	CHECK(f && f->count == 1 && f->from == 9000 && f->to == 10210);
	CHECK(f && strstr(f->title, "not answering for 1210 ms"));
	CHECK(f && strstr(f->evidence, "\"open\":true"));
	CHECK(a->metric[PH_M_STALLS] == 2);
	CHECK(a->metric[PH_M_STALL_MS] == 1604 + 1210);
	ph_analysis_free(a);
	ph_store_release(&s);
}

static void add_line(struct ph_store *s, const char *line)
{
	CHECK_INT(ph_store_add_line(s, line, strlen(line)), 0);
}

/* The report a capture of a gives, as text (out) and as HTML (html). */
static void report_of(struct ph_analysis *a, struct ph_buf *out,
		      struct ph_buf *html)
{
	struct ph_buf cap = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena arena;
	const struct ph_json *j = NULL;
	char why[200];

	ph_arena_init(&arena, 0, SIZE_MAX);
	CHECK_INT(capture_text(a, &cap), 0);
	CHECK_INT(ph_capture_parse("t", cap.buf, cap.len, &arena, &j, why,
				   sizeof(why)),
		  0);
	CHECK(j);
	if (j) {
		CHECK_INT(ph_report_text(j, out), 0);
		CHECK_INT(ph_report_html(j, html), 0);
	}
	ph_arena_release(&arena);
	ph_buf_release(&cap);
}

/*
 * A cold launch whose startup event went out before the app reported fully
 * drawn, and the fully_drawn event that came after it: the launch is fully
 * drawn (no note), and the report gives its times from its origin.
 */
void test_host__a_late_fully_drawn_joins_its_launch(void)
{
	struct ph_window w = { 0, 100000 };
	struct ph_buf text = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf html = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_store s;
	struct ph_analysis *a;

	CHECK_INT(ph_store_init(&s, 1 << 20), 0);
	add_line(&s, "{\"event\":\"startup\",\"t\":2600,\"seq\":1,\"data\":{"
		     "\"classification\":\"cold\",\"originMs\":1000,"
		     "\"originAssumed\":false,\"originKind\":\"fork\","
		     "\"firstFrameMs\":1412,\"totalMs\":412,"
		     "\"restoredState\":false,\"launchIndex\":0}}");
	a = ph_analyze_store(&s, w);
	CHECK(a && ph_analysis_find(a, "startup-not-fully-drawn"));
	ph_analysis_free(a);

	add_line(&s, "{\"event\":\"fully_drawn\",\"t\":2512,\"seq\":2,"
		     "\"data\":{\"classification\":\"cold\",\"originMs\":1000,"
		     "\"reportFullyDrawnMs\":2512,\"launchIndex\":0}}");
	a = ph_analyze_store(&s, w);
	CHECK(a && !ph_analysis_find(a, "startup-not-fully-drawn"));
	CHECK(a && a->nlaunches == 1 && a->launches[0].fully_drawn == 2512);
	if (a)
		report_of(a, &text, &html);
	CHECK(strstr(
		text.buf,
		"\nstartup: cold, first frame 412 ms, fully drawn 1512 ms\n"));
	CHECK(strstr(
		html.buf,
		">startup: cold, first frame 412 ms, fully drawn 1512 ms<"));
	ph_analysis_free(a);
	ph_buf_release(&text);
	ph_buf_release(&html);
	ph_store_release(&s);
}

/* A launch the app never reported fully drawn says so in the report. */
void test_host__a_launch_never_fully_drawn_says_so(void)
{
	struct ph_window w = { 0, 100000 };
	struct ph_buf text = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf html = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_store s;
	struct ph_analysis *a;

	CHECK_INT(ph_store_init(&s, 1 << 20), 0);
	add_line(&s, "{\"event\":\"startup\",\"t\":5030,\"seq\":1,\"data\":{"
		     "\"classification\":\"hot\",\"originMs\":5000,"
		     "\"originAssumed\":false,\"originKind\":\"activity\","
		     "\"firstFrameMs\":5030,\"totalMs\":30,"
		     "\"restoredState\":false,\"launchIndex\":1}}");
	/* another launch's report does not count for this one */
	add_line(&s, "{\"event\":\"fully_drawn\",\"t\":5100,\"seq\":2,"
		     "\"data\":{\"classification\":\"cold\",\"originMs\":900,"
		     "\"reportFullyDrawnMs\":5100,\"launchIndex\":0}}");
	a = ph_analyze_store(&s, w);
	CHECK(a && a->nlaunches == 1 && a->launches[0].fully_drawn == -1);
	if (a)
		report_of(a, &text, &html);
	CHECK(strstr(text.buf, "\nstartup: hot, first frame 30 ms, fully "
			       "drawn not reported\n"));
	ph_analysis_free(a);
	ph_buf_release(&text);
	ph_buf_release(&html);
	ph_store_release(&s);
}

/*
 * A slow tap names the frame that answered it by the time that frame ended
 * (was presented: t + tapMs), not by its start (frameT) nor the tap's t.
 */
void test_host__a_slow_tap_names_the_frame_by_its_end(void)
{
	struct ph_window w = { 0, 100000 };
	struct ph_store s;
	struct ph_analysis *a;
	const struct ph_finding *f;

	CHECK_INT(ph_store_init(&s, 1 << 20), 0);
	add_line(&s, "{\"event\":\"input\",\"t\":5000,\"seq\":1,\"data\":{"
		     "\"action\":\"tap\",\"x\":1,\"y\":2,\"downT\":4950,"
		     "\"tapMs\":700,\"frameT\":4990,\"totalMs\":710,"
		     "\"worstPhase\":\"layout\"}}");
	a = ph_analyze_store(&s, w);
	f = a ? ph_analysis_find(a, "tap-slow") : NULL;
	CHECK(f && f->detail[0] &&
	      strstr(f->detail[0], "tap at t=5000; answered by the frame "
				   "that ended at t=5700, worst phase "
				   "layout"));
	CHECK(f && strstr(f->evidence, "\"frameEndT\":5700"));
	ph_analysis_free(a);
	ph_store_release(&s);
}

/*
 * A line with bytes that are not UTF-8 in a string is read with each
 * replaced by U+FFFD, not dropped whole; a line that is not JSON is
 * skipped.  Each is kept with its line number and byte offset (counting
 * blank lines and '\r'), and the analysis names them in its notes.
 */
void test_host__bad_utf8_lines_are_repaired_and_named(void)
{
	static const char file[] =
		"{\"event\":\"mark\",\"t\":1,\"seq\":0,\"data\":{\"name\":\"a\"}}\n"
		"\n"
		"{\"event\":\"mark\",\"t\":2,\"seq\":1,\"data\":{\"name\":\"b\xff\xc3\"}}\r\n"
		"not json\n"
		"{\"event\":\"mark\",\"t\":3,\"seq\":2,\"data\":{\"name\":\"c\"}}\n";
	char path[] = "/tmp/ph-test-utf8-XXXXXX";
	struct ph_store s;
	struct ph_analysis *a;
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	struct ph_jw jw;
	int fd = mkstemp(path);
	size_t n = sizeof(file) - 1;
	bool repaired_note = false, skipped_note = false;

	CHECK(fd >= 0);
	CHECK_INT(write(fd, file, n), (ssize_t)n);
	close(fd);
	CHECK_INT(ph_store_init(&s, 0), 0);
	CHECK_INT(ph_store_load_file(&s, path), 0);
	unlink(path);
	CHECK_INT(s.in.events, 3);
	CHECK_INT(s.in.counts[PH_KIND_MARK], 3);
	CHECK_INT(s.in.repaired, 1);
	CHECK_INT(s.in.malformed, 1);
	CHECK_INT(s.in.nissues, 2);
	CHECK(s.in.issues[0].repaired);
	CHECK_INT(s.in.issues[0].line, 3);
	CHECK_INT(s.in.issues[0].offset, 52);
	CHECK(strstr(s.in.issues[0].why, "2 bytes not UTF-8"));
	CHECK(!s.in.issues[1].repaired);
	CHECK_INT(s.in.issues[1].line, 4);
	CHECK_INT(s.in.issues[1].offset, 106);
	a = ph_analyze_store(&s, PH_WINDOW_ALL);
	CHECK(a);
	for (size_t i = 0; a && i < a->nnotes; i++) {
		repaired_note |= strstr(a->notes[i], "1 line read with bytes "
						     "that are not UTF-8") &&
				 strstr(a->notes[i], "line 3 at byte 52");
		skipped_note |=
			strstr(a->notes[i], "1 malformed line skipped") &&
			strstr(a->notes[i], "line 4 at byte 106 (");
	}
	CHECK(repaired_note);
	CHECK(skipped_note);
	ph_jw_init(&jw, &b);
	ph_jw_obj_begin(&jw);
	ph_ingest_write_issues(s.in.issues, s.in.nissues, &jw);
	ph_jw_obj_end(&jw);
	CHECK_INT(ph_jw_finish(&jw), 0);
	CHECK(strstr(b.buf, "{\"line\":3,\"byte\":52,\"action\":\"repaired\""));
	CHECK(strstr(b.buf, "{\"line\":4,\"byte\":106,\"action\":\"skipped\""));
	ph_buf_release(&b);
	ph_analysis_free(a);
	ph_store_release(&s);
}
