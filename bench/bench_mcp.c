/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_mcp: the MCP server's two figures (issue 5, "Performance").
 *
 *  - mcp_summary_bytes_checkout: the real porthole-sample runs its
 *    checkout scenario; a real live host (device link, store, session on
 *    disk) and the MCP server are connected to it, and once the scenario
 *    is over every read-only tool is called once at detail summary (the
 *    default), as an agent would, first `findings` (which carries the
 *    banner).  The figure is the largest answer's text in bytes (what
 *    lands in the agent's context: the size note's N); `findings` is
 *    printed beside it.  Target 1 KB.
 *  - mcp_findings_p95_ms: `tools/call findings` (ph_mcp_handle, the whole
 *    request: parse, banner, findings engine, answer) over a live store
 *    holding one hour of the sample's events.  The hour is the session
 *    just recorded, replayed back to back on the app clock: each copy
 *    shifted by the recording's span (t) and by its seq range (seq), so
 *    the store sees one process running its cart flow for an hour
 *    (startup and profile once, the exit once at the end).  The figure is
 *    the p95 of 30 calls with since:"all" (the whole hour each time)
 *    after the first; the first call (which also computes the banner over
 *    the hour) and chained calls (since:"last" with 10 s of new events
 *    appended before each, an agent polling a running app) are printed
 *    beside it.  Target 20 ms.
 *
 * The machine has 2 cores, shared with whatever else runs.  `bench-mcp
 * bytes|findings` runs one part (findings records its hour first).
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "host/ingest.h"
#include "host/live.h"
#include "mcp/mcp.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKDIR	     "build/bench-mcp"
#define HOUR_MS	     3600000
#define CALLS	     30
#define SCENARIO_END 9600 /* ms after start: the checkout's last call ended */

static void emit(const char *name, double value, const char *unit,
		 const char *extra)
{
	printf("{\"name\":\"%s\",\"value\":%.3f,\"unit\":\"%s\"%s%s}\n", name,
	       value, unit, extra ? "," : "", extra ? extra : "");
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One tools/call through the server; the answer's text, in out. */
static int call(struct ph_mcp *m, const char *tool, const char *args,
		struct ph_buf *text)
{
	struct ph_buf ans = PH_BUF_INIT((size_t)64 << 20);
	struct ph_buf req = PH_BUF_INIT(1 << 16);
	struct ph_arena a;
	struct ph_json *root = NULL;
	const struct ph_json *t;
	int rc = -1;

	ph_arena_init(&a, 1 << 16, (size_t)256 << 20);
	if (!ph_buf_addf(&req,
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
			 "call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
			 tool, args)) {
		ph_mcp_handle(m, req.buf, req.len, &ans);
		if (!ph_json_parse(&a, ans.buf, ans.len, &root, NULL)) {
			t = ph_json_get(
				ph_json_at(
					ph_json_get(ph_json_get(root, "result"),
						    "content"),
					0),
				"text");
			ph_buf_reset(text);
			if (ph_json_is(t, PH_JSON_STRING)) {
				const char *s = ph_json_strdup(&a, t);

				if (s && !ph_buf_addstr(text, s))
					rc = 0;
			}
		}
	}
	if (rc)
		fprintf(stderr, "bench-mcp: %s answered %.300s\n", tool,
			ans.buf);
	ph_arena_release(&a);
	ph_buf_release(&req);
	ph_buf_release(&ans);
	return rc;
}

/* --- the sample's checkout, live ----------------------------------------- */

static pid_t start_sample(const char *app)
{
	char exe[4096], sample[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(sample, sizeof(sample), "%s/porthole-sample", exe);
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		execl(sample, "porthole-sample", "--scenario", "checkout",
		      "--seconds", "12", "--app-id", app, "--data-dir",
		      WORKDIR "/data", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int64_t store_span(struct ph_live *lv, int64_t *started)
{
	int64_t t;

	pthread_mutex_lock(&lv->store.lock);
	t = lv->store.nevents ? lv->store.in.last_t : 0;
	*started = lv->store.in.ident.have ? lv->store.in.ident.started_at : 0;
	pthread_mutex_unlock(&lv->store.lock);
	return *started ? t - *started : 0;
}

/*
 * Records the checkout live and measures the summary answers; the
 * session's events.ndjson path into session.
 */
static int bench_bytes(char *session, size_t size, bool print)
{
	static const char *const tools[][2] = {
		{ "findings", "{}" },
		{ "recompositions", "{}" },
		{ "semantics_tree", "{}" },
		{ "accessibility", "{}" },
		{ "nav_state", "{}" },
		{ "state", "{}" },
		{ "inflight", "{}" },
		{ "frames", "{}" },
		{ "blocking", "{}" },
		{ "logs", "{}" },
		{ "timeline", "{}" },
		{ "what_was_happening", NULL }, /* at: the stall */
		{ "system_context", "{}" },
		{ "save_moment", "{}" },
		{ "open_timeline", "{}" },
		{ "porthole_status", "{}" },
		{ "setup", "{}" },
	};
	struct ph_buf text = PH_BUF_INIT((size_t)64 << 20);
	struct ph_live lv;
	struct ph_mcp m;
	char app[64], extra[600], args[64];
	size_t max = 0, findings = 0;
	const char *worst = "";
	int64_t started = 0;
	pid_t pid;
	int rc = 0, status;

	snprintf(app, sizeof(app), "bench.mcp.%d", (int)getpid());
	if (ph_live_init(&lv))
		return -1;
	lv.link.app_id = app;
	if (ph_mcp_init(&m, &lv))
		return -1;
	pid = start_sample(app);
	if (pid < 0 || ph_live_start(&lv))
		return -1;
	m.started = true;
	for (int i = 0; i < 400 && store_span(&lv, &started) < SCENARIO_END;
	     i++)
		usleep(50000);
	if (store_span(&lv, &started) < SCENARIO_END || !ph_mcp_connected(&m)) {
		fprintf(stderr, "bench-mcp: the sample's checkout did not "
				"run to its end\n");
		rc = -1;
	}
	for (size_t i = 0; !rc && i < PH_ARRAY_SIZE(tools); i++) {
		const char *a = tools[i][1];

		if (!a) {
			/* the stall is planted 4 s in (sample/main.c) */
			snprintf(args, sizeof(args), "{\"at\":%" PRId64 "}",
				 started + 4100);
			a = args;
		}
		if (call(&m, tools[i][0], a, &text)) {
			rc = -1;
			break;
		}
		if (!strcmp(tools[i][0], "findings"))
			findings = text.len;
		if (text.len > max) {
			max = text.len;
			worst = tools[i][0];
		}
		if (getenv("BENCH_VERBOSE"))
			fprintf(stderr, "%-20s %5zu  %s\n", tools[i][0],
				text.len, text.buf);
	}
	waitpid(pid, &status, 0);
	ph_live_stop(&lv);
	snprintf(session, size, "%s", lv.session_path);
	ph_mcp_release(&m);
	ph_live_release(&lv);
	ph_buf_release(&text);
	if (rc || !print)
		return rc;
	snprintf(extra, sizeof(extra),
		 "\"findings\":%zu,\"largest\":\"%s\",\"tools\":%zu", findings,
		 worst, PH_ARRAY_SIZE(tools));
	emit("mcp_summary_bytes_checkout", (double)max, "bytes", extra);
	return 0;
}

/* --- an hour of it --------------------------------------------------------
 */

/* One recorded event: its t and seq, and the rest of its object. */
struct rec {
	int64_t t, seq;
	bool once_first; /* startup, device:profile: the first copy only */
	bool once_last;	 /* exit: the last copy only */
	char *rest;	 /* the members after t and seq, and the '}' */
};

struct tape {
	struct rec *r;
	size_t n, alloc;
	char hello[4096];
	int64_t first_t, last_t, max_seq;
};

static int take(void *ctx, const struct ph_event *ev)
{
	struct tape *tp = ctx;
	struct ph_buf b = PH_BUF_INIT(1 << 24);
	struct ph_jw jw;
	const struct ph_json *f = ev->frame;
	struct rec *r;

	if (!f || ev->seq < 0)
		return 0;
	if (tp->n == tp->alloc) {
		size_t na = tp->alloc ? tp->alloc * 2 : 1024;
		struct rec *nr = realloc(tp->r, na * sizeof(*nr));

		if (!nr)
			return PH_ENOMEM;
		tp->r = nr;
		tp->alloc = na;
	}
	ph_jw_init(&jw, &b);
	ph_jw_obj_begin(&jw);
	for (uint32_t i = 0; i < f->n; i++) {
		const struct ph_json_member *mb = &f->u.members[i];

		if (ph_json_streq(&mb->key, "t") ||
		    ph_json_streq(&mb->key, "seq"))
			continue;
		ph_jw_keyn(&jw, mb->key.u.s, mb->key.n);
		ph_jw_value(&jw, &mb->value);
	}
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw) || b.len < 2) {
		ph_buf_release(&b);
		return PH_ENOMEM;
	}
	r = &tp->r[tp->n++];
	r->t = ev->t;
	r->seq = ev->seq;
	r->once_first =
		ev->kind == PH_KIND_STARTUP ||
		(ev->kind == PH_KIND_DEVICE &&
		 ph_json_streq(ph_json_get(ev->data, "kind"), "profile"));
	r->once_last = ev->kind == PH_KIND_EXIT;
	r->rest = strdup(b.buf + 1); /* after '{' */
	ph_buf_release(&b);
	if (!r->rest)
		return PH_ENOMEM;
	if (!tp->first_t || ev->t < tp->first_t)
		tp->first_t = ev->t;
	if (ev->t > tp->last_t)
		tp->last_t = ev->t;
	if (ev->seq > tp->max_seq)
		tp->max_seq = ev->seq;
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Copy k of the recording as wire lines into b. */
static int copy_lines(const struct tape *tp, int64_t k, int64_t copies,
		      int64_t period, struct ph_buf *b)
{
	for (size_t i = 0; i < tp->n; i++) {
		const struct rec *r = &tp->r[i];
		bool comma = r->rest[0] != '}';

		if ((r->once_first && k) || (r->once_last && k != copies - 1))
			continue;
		if (ph_buf_addf(
			    b, "{\"t\":%" PRId64 ",\"seq\":%" PRId64 "%s%s\n",
			    r->t + k * period, r->seq + k * (tp->max_seq + 1),
			    comma ? "," : "", r->rest))
			return -1;
	}
	return 0;
}

static int load_tape(const char *session, struct tape *tp)
{
	struct ph_ingest in;
	FILE *f;
	int rc;

	memset(tp, 0, sizeof(*tp));
	ph_ingest_init(&in, take, tp);
	rc = ph_ingest_file(&in, session);
	ph_ingest_release(&in);
	if (rc || !tp->n)
		return -1;
	qsort(tp->r, tp->n, sizeof(*tp->r), by_seq);
	/* The hello, verbatim: the identity of the one process. */
	f = fopen(session, "r");
	while (f && fgets(tp->hello, sizeof(tp->hello), f))
		if (strstr(tp->hello, "\"protocol\":"))
			break;
	if (f)
		fclose(f);
	return strstr(tp->hello, "\"protocol\":") ? 0 : -1;
}

static double ms_since(int64_t t0)
{
	return (double)(ph_clock_mono_ns() - t0) / 1e6;
}

static int bench_findings(const char *session)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf text = PH_BUF_INIT((size_t)64 << 20);
	struct tape tp;
	struct ph_live lv;
	struct ph_mcp m;
	double all[CALLS], chained[CALLS], first;
	int64_t period, copies, t0;
	size_t nevents, bytes;
	char extra[900];
	int rc = 0;

	if (load_tape(session, &tp)) {
		fprintf(stderr, "bench-mcp: cannot read %s\n", session);
		return -1;
	}
	/* Copies back to back, one refresh apart: one app running. */
	period = tp.last_t - tp.first_t + 17;
	copies = (HOUR_MS + period - 1) / period;
	if (ph_live_init(&lv))
		return -1;
	lv.sessions = false;
	if (ph_buf_addstr(&b, tp.hello))
		return -1;
	for (int64_t k = 0; k < copies; k++)
		if (copy_lines(&tp, k, copies, period, &b))
			return -1;
	if (ph_store_add_lines(&lv.store, b.buf, b.len) ||
	    lv.store.covered_from != INT64_MIN) {
		fprintf(stderr, "bench-mcp: the store did not hold the hour "
				"(raise its cap)\n");
		return -1;
	}
	nevents = lv.store.nevents;
	bytes = lv.store.bytes;
	if (ph_mcp_init(&m, &lv))
		return -1;

	t0 = ph_clock_mono_ns();
	rc |= call(&m, "findings", "{\"since\":\"all\"}", &text);
	first = ms_since(t0);
	for (int i = 0; i < CALLS && !rc; i++) {
		t0 = ph_clock_mono_ns();
		rc |= call(&m, "findings", "{\"since\":\"all\"}", &text);
		all[i] = ms_since(t0);
	}
	if (getenv("BENCH_VERBOSE"))
		fprintf(stderr, "%s\n", text.buf);
	/* An agent polling a running app: 10 s of new events per call. */
	for (int i = 0; i < CALLS && !rc; i++) {
		int64_t k = copies + i;

		ph_buf_reset(&b);
		if (copy_lines(&tp, k, INT64_MAX, period, &b) ||
		    ph_store_add_lines(&lv.store, b.buf, b.len))
			rc = -1;
		t0 = ph_clock_mono_ns();
		rc |= call(&m, "findings", "{}", &text);
		chained[i] = ms_since(t0);
	}
	ph_mcp_release(&m);
	ph_live_release(&lv);
	for (size_t i = 0; i < tp.n; i++)
		free(tp.r[i].rest);
	free(tp.r);
	ph_buf_release(&b);
	ph_buf_release(&text);
	if (rc)
		return -1;
	qsort(all, CALLS, sizeof(*all), cmp_double);
	qsort(chained, CALLS, sizeof(*chained), cmp_double);
	snprintf(extra, sizeof(extra),
		 "\"events\":%zu,\"store_mb\":%.1f,\"copies\":%" PRId64
		 ",\"copy_ms\":%" PRId64
		 ",\"hour\":\"the sample's checkout, recorded live here, "
		 "replayed back to back with t and seq shifted\","
		 "\"median\":%.3f,\"first_call_ms\":%.3f,"
		 "\"chained_p95_ms\":%.3f,\"calls\":%d",
		 nevents, (double)bytes / 1048576.0, copies, period,
		 all[CALLS / 2], first, chained[CALLS * 95 / 100], CALLS);
	emit("mcp_findings_p95_ms", all[CALLS * 95 / 100], "ms", extra);
	return 0;
}

int main(int argc, char **argv)
{
	char cwd[4096], root[4200], session[4400] = "";
	int failed = 0;

	signal(SIGPIPE, SIG_IGN);
	mkdir("build", 0755);
	if (system("rm -rf " WORKDIR " && mkdir -p " WORKDIR))
		return 1;
	if (!getcwd(cwd, sizeof(cwd)))
		return 1;
	snprintf(root, sizeof(root), "%s/" WORKDIR, cwd);
	/* The live host writes its session under the bench's own root. */
	setenv("PORTHOLE_PROJECT_ROOT", root, 1);
	setenv("PORTHOLE_SESSIONS", "1", 1);
	unsetenv("PORTHOLE_APPLICATION_ID");
#define PART(name) (argc < 2 || !strcmp(argv[1], name))
	failed |= bench_bytes(session, sizeof(session), PART("bytes")) != 0;
	if (!failed && PART("findings"))
		failed |= bench_findings(session) != 0;
#undef PART
	if (system("rm -rf " WORKDIR))
		failed = 1;
	return failed;
}
