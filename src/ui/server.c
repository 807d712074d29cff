/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c: the civetweb glue of `porthole ui` (see ui.h for the routes).
 *
 * Threads: civetweb's workers answer requests, each asking the engine on
 * its own (the store and the link are thread-safe); the link's reader
 * hands every line to ph_ui_line, which only appends it to `pending`
 * under a short lock, so a slow browser never slows the link; one
 * broadcaster thread swaps `pending` out every BROADCAST_MS and writes it
 * to each WebSocket as one NDJSON text frame, and sends a status frame
 * every second.
 *
 * A new WebSocket gets a snapshot of the store first, taken while the
 * client list is locked, then the batches broadcast in the last
 * RECENT_MS: the link hands a line to the store's parser thread and to
 * pending at the same moment, so a line can be broadcast before the
 * parser has stored it, and a page that connects in between would miss
 * it in both.  Replaying the recent batches closes that gap; a line may
 * then come twice, and the page drops repeated (seq, t) pairs.
 *
 * Host-made events (seq -1: io events `porthole iotrace attach` adds,
 * leaks from `porthole heap dump --session`) never pass the link: another
 * process appends them to the session and the session writer reads them
 * back into the store (session.h).  The broadcaster finds them there
 * (send_host_made) and sends them like the link's lines.
 */
#include "ph_common.h"
#include "ph_clock.h"
#include "ph_json.h"
#include "ph_log.h"
#include "host/env.h"
#include "host/findings.h"
#include "host/session.h"
#include "host/where.h"
#include "ui/assets.h"
#include "ui/ui.h"

#include <civetweb.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define BROADCAST_MS	50
#define PENDING_CAP	(32u << 20) /* lines waiting for the broadcaster */
#define SNAPSHOT_EVENTS 300000	    /* newest events sent to a new page */
#define SNAPSHOT_CAP	(512u << 20)
#define ANSWER_CAP	(64u << 20)
#define RPC_TIMEOUT_MS	5000
#define HELLO_CAP	(64u << 10)
#define RECENT_MS	2000 /* batches replayed to a new page */
#define RECENT_CAP	(16u << 20)
#define RECENT_MAX	64

struct ws_client {
	struct mg_connection *conn;
	struct ws_client *next;
};

struct ph_ui {
	struct mg_context *ctx;
	struct ph_ui_options o;
	struct ph_live *lv;
	int port;
	char token[PH_UI_TOKEN_SIZE]; /* every POST carries it (ui.h) */
	char traces_dir[4200];
	char captures_dir[4200];

	pthread_mutex_t mu; /* pending, overflow, hello */
	struct ph_buf pending;
	bool overflow; /* pending filled: every page gets a new snapshot */
	char *hello;   /* the last hello answer's result, JSON */

	pthread_mutex_t clients_mu; /* clients, their sockets, recent */
	struct ws_client *clients;
	uint64_t store_seen;  /* store version send_host_made has looked at */
	struct ph_buf recent; /* the last batches broadcast, oldest first */
	struct {
		int64_t at; /* uptime ms it went out */
		size_t len;
	} batches[RECENT_MAX];
	int nbatches;

	pthread_mutex_t save_mu; /* one save at a time (it prints) */
	pthread_t thread;
	bool running;
	/* Set by ph_ui_stop while the broadcaster reads it: atomic (as the
	 * link's), since a volatile int read by another thread is a race. */
	_Atomic int stop;
};

#define STR_(x) #x
#define STR(x)	STR_(x)

/* --- responses ------------------------------------------------------------ */

static void send_json(struct mg_connection *c, int status, const char *body,
		      size_t len)
{
	mg_printf(c,
		  "HTTP/1.1 %d %s\r\n"
		  "Content-Type: application/json\r\n"
		  "Content-Length: %zu\r\n"
		  "Cache-Control: no-store\r\n"
		  "X-Content-Type-Options: nosniff\r\n"
		  "\r\n",
		  status, status == 200 ? "OK" : "Error", len);
	mg_write(c, body, len);
}

static int send_error(struct mg_connection *c, int status, const char *why)
{
	struct ph_buf b = PH_BUF_INIT(8192);
	struct ph_jw jw;

	ph_jw_init(&jw, &b);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_int(&jw, "status", status);
	ph_jw_kv_str(&jw, "error", why);
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw))
		send_json(c, status, "{}", 2);
	else
		send_json(c, status, b.buf, b.len);
	ph_buf_release(&b);
	return status;
}

static int send_buf(struct mg_connection *c, struct ph_jw *jw, struct ph_buf *b)
{
	if (ph_jw_finish(jw))
		return send_error(c, 500, "the answer did not fit its cap");
	send_json(c, 200, b->buf, b->len);
	return 200;
}

/* The body, at most PH_UI_MAX_BODY bytes; 0 or the status sent. */
static int read_body(struct mg_connection *c, struct ph_buf *b)
{
	const struct mg_request_info *ri = mg_get_request_info(c);
	char tmp[4096];
	int n;

	if (ri->content_length > PH_UI_MAX_BODY)
		return send_error(c, 413, "request body too large (64 KiB)");
	while ((n = mg_read(c, tmp, sizeof(tmp))) > 0) {
		if (ph_buf_add(b, tmp, (size_t)n))
			return send_error(c, 413,
					  "request body too large (64 KiB)");
	}
	return 0;
}

/* --- the engine's answers ------------------------------------------------- */

static void write_status(struct ph_ui *ui, struct ph_jw *jw)
{
	struct ph_link *l = &ui->lv->link;
	static const char *const states[] = { "connecting", "connected",
					      "refused", "stopped" };
	int64_t events, covered, first_t, last_t;
	uint64_t version;

	ph_jw_obj_begin(jw);
	pthread_mutex_lock(&l->mu);
	ph_jw_key(jw, "link");
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "state",
		     (unsigned)l->state < 4 ? states[l->state] : "unknown");
	ph_jw_kv_str(jw, "target", l->target);
	ph_jw_kv_str(jw, "error", l->error);
	ph_jw_kv_str(jw, "warning", l->warning);
	ph_jw_kv_int(jw, "connects", (int64_t)l->connects);
	/* Connections the app answered: a socket that closed before its
	 * hello (the app still starting) is no reconnect to a person. */
	ph_jw_kv_int(jw, "hellos", (int64_t)l->hellos);
	/* The app's clock is this machine's CLOCK_MONOTONIC only when the
	 * app runs here (an abstract socket), not through adb or TCP. */
	ph_jw_kv_bool(jw, "clockShared",
		      !l->host && l->state == PH_LINK_CONNECTED);
	ph_jw_obj_end(jw);
	pthread_mutex_unlock(&l->mu);
	pthread_mutex_lock(&ui->lv->store.lock);
	events = (int64_t)ui->lv->store.nevents;
	covered = ui->lv->store.covered_from;
	version = ui->lv->store.version;
	first_t = ui->lv->store.in.first_t;
	last_t = ui->lv->store.in.last_t;
	pthread_mutex_unlock(&ui->lv->store.lock);
	ph_jw_key(jw, "store");
	ph_jw_obj_begin(jw);
	ph_jw_kv_int(jw, "events", events);
	ph_jw_kv_int(jw, "version", (int64_t)version);
	ph_jw_kv_int(jw, "firstT", first_t);
	ph_jw_kv_int(jw, "lastT", last_t);
	ph_jw_key(jw, "coveredFrom");
	if (covered == INT64_MIN)
		ph_jw_null(jw);
	else
		ph_jw_int(jw, covered);
	ph_jw_obj_end(jw);
	ph_jw_kv_int(jw, "now", ph_clock_uptime_ms());
	ph_jw_kv_bool(jw, "canRestart", ui->o.restart != NULL);
	ph_jw_kv_int(jw, "requestTimeoutMs", PH_UI_REQUEST_TIMEOUT_MS);
	pthread_mutex_lock(&ui->lv->mu);
	ph_jw_kv_bool(jw, "sessions", ui->lv->sessions);
	ph_jw_kv_str(jw, "session",
		     ui->lv->session_open ? ui->lv->session.id : "");
	pthread_mutex_unlock(&ui->lv->mu);
	ph_jw_obj_end(jw);
}

/* One member of a parsed object, or NULL. */
static const struct ph_json *member(const struct ph_json *o, const char *k)
{
	return o ? ph_json_get(o, k) : NULL;
}

/*
 * The engines were written for a program's main thread: resolving `where`
 * walks the project tree recursively with path buffers on the stack, and
 * the trace engine runs SQLite.  civetweb's workers have small stacks, so
 * that work runs on a thread of its own with a main-thread-sized stack.
 */
#define ENGINE_STACK (16u << 20)

struct engine_job {
	struct ph_ui *ui;
	struct ph_window w;
	const char *trace;
	int64_t pid; /* the app's, asked about in the trace */
	struct ph_buf *fb, *tb;
	char *why;
	size_t why_size;
	int status; /* 0, or the HTTP status to answer with */
};

static void *engine_run(void *arg)
{
	struct engine_job *j = arg;
	struct ph_analysis *a = ph_analyze_store(&j->ui->lv->store, j->w);
	struct ph_jw jw;

	if (!a) {
		snprintf(j->why, j->why_size, "the findings engine failed");
		j->status = 500;
		return NULL;
	}
	ph_analysis_resolve_where(a, ph_env_project_root());
	{
		struct ph_link *l = &j->ui->lv->link;
		char why[300];
		int64_t first_t;
		bool up;

		pthread_mutex_lock(&l->mu);
		up = l->state == PH_LINK_CONNECTED;
		snprintf(why, sizeof(why), "%s",
			 l->error[0] ? l->error : "not connected");
		pthread_mutex_unlock(&l->mu);
		pthread_mutex_lock(&j->ui->lv->store.lock);
		first_t = j->ui->lv->store.in.first_t;
		pthread_mutex_unlock(&j->ui->lv->store.lock);
		ph_analysis_link(a, up, why, first_t);
	}
	/* The engine writes the members; the window is the caller's, as in
	 * a capture: what was asked, and what the store held of it. */
	ph_jw_init(&jw, j->fb);
	ph_jw_obj_begin(&jw);
	ph_jw_key(&jw, "window");
	ph_jw_obj_begin(&jw);
	ph_jw_kv_int(&jw, "from",
		     j->w.from == INT64_MIN ? a->first_t : j->w.from);
	ph_jw_kv_int(&jw, "to", j->w.to == INT64_MAX ? a->last_t : j->w.to);
	ph_jw_obj_end(&jw);
	ph_jw_kv_int(&jw, "clippedMs", a->clipped_ms);
	ph_analysis_write_findings(a, &jw);
	ph_jw_obj_end(&jw);
	ph_analysis_free(a);
	if (ph_jw_finish(&jw)) {
		snprintf(j->why, j->why_size, "findings did not fit");
		j->status = 500;
		return NULL;
	}
	j->why[0] = '\0';
	if (j->trace[0] && ph_ui_trace_ask(j->ui->traces_dir, j->trace, j->w,
					   j->pid, j->tb, j->why, j->why_size))
		j->status = 422;
	return NULL;
}

static void *traces_run(void *arg)
{
	struct engine_job *j = arg;
	struct ph_jw jw;

	ph_jw_init(&jw, j->fb);
	if (ph_ui_traces_write(j->ui->traces_dir, &jw) || ph_jw_finish(&jw))
		j->status = 500;
	return NULL;
}

/* fn(job) on a thread with ENGINE_STACK; false when none could start. */
static bool on_big_stack(void *(*fn)(void *), struct engine_job *job)
{
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, ENGINE_STACK);
	rc = pthread_create(&th, &attr, fn, job);
	pthread_attr_destroy(&attr);
	if (rc)
		return false;
	pthread_join(th, NULL);
	return true;
}

/*
 * A stack frame's place in the project, as a finding's `where` is found
 * (host/where.h): GET /api/where?fn=&file=&line=&app=1 answers the same
 * JSON object, for the frames the detail panel lists.  The tree walk
 * needs a main-thread-sized stack, so it runs on the engine's thread.
 */
struct where_job {
	struct ph_where_hint h;
	struct ph_buf *b;
	bool found;
};

static void *where_run(void *arg)
{
	struct where_job *j = arg;
	struct ph_where_index *ix = ph_where_index_new(ph_env_project_root());
	char sh[512];

	j->found = ix && ph_where_resolve(ix, &j->h, j->b, sh, sizeof(sh));
	ph_where_index_free(ix);
	return NULL;
}

static int answer_where(struct mg_connection *c, const char *q)
{
	char fn[256], file[256], num[32];
	struct ph_buf b = PH_BUF_INIT(1 << 16);
	struct where_job j = { .b = &b };
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	if (!ph_ui_query_get(q, "fn", fn, sizeof(fn)))
		fn[0] = '\0';
	if (!ph_ui_query_get(q, "file", file, sizeof(file)))
		file[0] = '\0';
	if (!fn[0] && !file[0])
		return send_error(c, 400, "fn= or file= is required");
	if (ph_ui_query_get(q, "line", num, sizeof(num)) && num[0] &&
	    (sscanf(num, "%" SCNd64, &j.h.line) != 1 || j.h.line < 0))
		return send_error(c, 400, "line: an integer >= 0");
	j.h.fn = fn[0] ? fn : NULL;
	j.h.file = file[0] ? file : NULL;
	j.h.app = ph_ui_query_get(q, "app", num, sizeof(num)) &&
		  !strcmp(num, "1");
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, ENGINE_STACK);
	rc = pthread_create(&th, &attr, where_run, &j);
	pthread_attr_destroy(&attr);
	if (rc) {
		ph_buf_release(&b);
		return send_error(c, 500, "cannot start the lookup");
	}
	pthread_join(th, NULL);
	if (!j.found) {
		ph_buf_release(&b);
		return send_error(
			c, 422,
			"no project to look in (PORTHOLE_PROJECT_ROOT)");
	}
	send_json(c, 200, b.buf, b.len);
	ph_buf_release(&b);
	return 200;
}

/*
 * GET /api/trace/system?trace=ID&from=&to=: the app's main thread's
 * scheduling states and the CPU frequencies in a listed trace (traces.c),
 * for the page's system lanes.  Loading a trace runs on the engine's
 * stack, as the findings do.
 */
struct system_job {
	struct ph_ui *ui;
	struct ph_window w;
	const char *trace;
	int64_t pid;
	struct ph_buf *b;
	char *why;
	size_t why_size;
	int rc;
};

static void *system_run(void *arg)
{
	struct system_job *j = arg;

	j->rc = ph_ui_trace_system(j->ui->traces_dir, j->trace, j->w, j->pid,
				   j->b, j->why, j->why_size);
	return NULL;
}

static int answer_system(struct ph_ui *ui, struct mg_connection *c,
			 const char *query)
{
	struct system_job j = { .ui = ui };
	struct ph_buf b = PH_BUF_INIT(ANSWER_CAP);
	char trace[256], why[400];
	pthread_attr_t attr;
	pthread_t th;
	int status;

	status = ph_ui_parse_window(query, &j.w, trace, sizeof(trace), why,
				    sizeof(why));
	if (status)
		return send_error(c, status, why);
	if (!trace[0])
		return send_error(c, 400, "trace= is required");
	if (!ph_ui_trace_listed(ui->traces_dir, trace)) {
		snprintf(why, sizeof(why),
			 "trace '%s' is not one of GET /api/traces", trace);
		return send_error(c, 404, why);
	}
	pthread_mutex_lock(&ui->lv->link.mu);
	j.pid = ui->lv->link.ident.pid;
	pthread_mutex_unlock(&ui->lv->link.mu);
	j.trace = trace;
	j.b = &b;
	j.why = why;
	j.why_size = sizeof(why);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, ENGINE_STACK);
	status = pthread_create(&th, &attr, system_run, &j);
	pthread_attr_destroy(&attr);
	if (status) {
		ph_buf_release(&b);
		return send_error(c, 500, "cannot start a thread");
	}
	pthread_join(th, NULL);
	if (j.rc) {
		ph_buf_release(&b);
		return send_error(c, j.rc == PH_ENOMEM ? 500 : 422, why);
	}
	send_json(c, 200, b.buf, b.len);
	ph_buf_release(&b);
	return 200;
}

static int answer_findings(struct ph_ui *ui, struct mg_connection *c,
			   const char *query)
{
	struct ph_window w;
	char trace[256], why[400];
	struct ph_buf fb = PH_BUF_INIT(ANSWER_CAP),
		      tb = PH_BUF_INIT(ANSWER_CAP),
		      out = PH_BUF_INIT(ANSWER_CAP);
	struct ph_arena arena;
	struct ph_json *fa = NULL, *ta = NULL;
	struct ph_err perr = { 0 };
	struct ph_jw jw;
	uint64_t version;
	int64_t pid;
	int status;

	status = ph_ui_parse_window(query, &w, trace, sizeof(trace), why,
				    sizeof(why));
	if (status)
		return send_error(c, status, why);
	/* The id is checked against the listing before anything runs. */
	if (trace[0] && !ph_ui_trace_listed(ui->traces_dir, trace)) {
		snprintf(why, sizeof(why),
			 "trace '%s' is not one of GET /api/traces", trace);
		return send_error(c, 404, why);
	}
	pthread_mutex_lock(&ui->lv->store.lock);
	version = ui->lv->store.version;
	pthread_mutex_unlock(&ui->lv->store.lock);
	pthread_mutex_lock(&ui->lv->link.mu);
	pid = ui->lv->link.ident.pid;
	pthread_mutex_unlock(&ui->lv->link.mu);
	{
		struct engine_job job = { .ui = ui,
					  .w = w,
					  .trace = trace,
					  .pid = pid,
					  .fb = &fb,
					  .tb = &tb,
					  .why = why,
					  .why_size = sizeof(why) };

		if (!on_big_stack(engine_run, &job)) {
			snprintf(why, sizeof(why), "cannot start a thread");
			job.status = 500;
		}
		if (job.status) {
			ph_buf_release(&fb);
			ph_buf_release(&tb);
			return send_error(c, job.status, why);
		}
	}
	ph_arena_init(&arena, 1 << 16, (size_t)ANSWER_CAP * 4);
	if (ph_json_parse(&arena, fb.buf, fb.len, &fa, &perr) ||
	    (tb.len && ph_json_parse(&arena, tb.buf, tb.len, &ta, &perr))) {
		snprintf(
			why, sizeof(why),
			"an engine's answer did not parse: %s at byte %" PRIu64,
			perr.msg, perr.offset);
		status = send_error(c, 500, why);
		goto out;
	}
	/* The engine's answer as it is, with the trace's findings merged
	 * into `findings` and what was asked of the trace alongside. */
	ph_jw_init(&jw, &out);
	ph_jw_obj_begin(&jw);
	for (uint32_t i = 0; i < fa->n; i++) {
		const struct ph_json_member *m = &fa->u.members[i];

		ph_jw_keyn(&jw, m->key.u.s, m->key.n);
		if (ta && ph_json_streq(&m->key, "findings") &&
		    ph_json_is(&m->value, PH_JSON_ARRAY)) {
			const struct ph_json *tf = member(ta, "findings");

			ph_jw_arr_begin(&jw);
			for (uint32_t k = 0; k < m->value.n; k++)
				ph_jw_value(&jw, &m->value.u.items[k]);
			for (uint32_t k = 0; tf && k < tf->n; k++)
				ph_jw_value(&jw, ph_json_at(tf, k));
			ph_jw_arr_end(&jw);
		} else {
			ph_jw_value(&jw, &m->value);
		}
	}
	ph_jw_kv_int(&jw, "storeVersion", (int64_t)version);
	if (ta) {
		static const char *const keep[] = { "process",	  "window",
						    "clock",	  "skipped",
						    "unanswered", "ruled_out" };

		ph_jw_key(&jw, "asked");
		if (member(ta, "asked"))
			ph_jw_value(&jw, member(ta, "asked"));
		else
			ph_jw_null(&jw);
		ph_jw_key(&jw, "trace");
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "id", trace);
		if (why[0]) /* asked about another process than the app's */
			ph_jw_kv_str(&jw, "processNote", why);
		for (size_t k = 0; k < PH_ARRAY_SIZE(keep); k++)
			if (member(ta, keep[k])) {
				ph_jw_key(&jw, keep[k]);
				ph_jw_value(&jw, member(ta, keep[k]));
			}
		ph_jw_obj_end(&jw);
	}
	ph_jw_obj_end(&jw);
	status = send_buf(c, &jw, &out);
out:
	ph_arena_release(&arena);
	ph_buf_release(&fb);
	ph_buf_release(&tb);
	ph_buf_release(&out);
	return status;
}

/* Asks the app through the link; sends its result or why not. */
static int answer_rpc(struct ph_ui *ui, struct mg_connection *c,
		      const char *method, const char *params)
{
	struct ph_buf resp = PH_BUF_INIT(ANSWER_CAP);
	struct ph_arena arena;
	struct ph_json *root = NULL;
	const struct ph_json *res;
	char why[400];
	int rc, status;

	rc = ph_link_request(&ui->lv->link, method, params, &resp,
			     RPC_TIMEOUT_MS);
	if (rc) {
		pthread_mutex_lock(&ui->lv->link.mu);
		snprintf(why, sizeof(why), "the app did not answer %s: %s%s%s",
			 method,
			 rc == PH_ECLOSED ? "not connected" :
			 rc == PH_EAGAIN  ? "timed out" :
					    ph_strerror(rc),
			 ui->lv->link.error[0] ? "; " : "", ui->lv->link.error);
		pthread_mutex_unlock(&ui->lv->link.mu);
		ph_buf_release(&resp);
		return send_error(c, rc == PH_ECLOSED ? 503 : 504, why);
	}
	ph_arena_init(&arena, 1 << 16, (size_t)ANSWER_CAP * 4);
	if (ph_json_parse(&arena, resp.buf, resp.len, &root, NULL)) {
		status = send_error(c, 502, "the app's answer is not JSON");
	} else if (!ph_json_is(member(root, "ok"), PH_JSON_TRUE)) {
		res = member(root, "error");
		snprintf(why, sizeof(why), "the app refused %s: %.*s", method,
			 ph_json_is(res, PH_JSON_STRING) ? (int)res->n : 7,
			 ph_json_is(res, PH_JSON_STRING) ? res->u.s : "no why");
		status = send_error(c, 422, why);
	} else {
		struct ph_buf out = PH_BUF_INIT(ANSWER_CAP);
		struct ph_jw jw;

		ph_jw_init(&jw, &out);
		res = member(root, "result");
		if (res)
			ph_jw_value(&jw, res);
		else
			ph_jw_null(&jw);
		status = send_buf(c, &jw, &out);
		ph_buf_release(&out);
	}
	ph_arena_release(&arena);
	ph_buf_release(&resp);
	return status;
}

static int answer_db_page(struct ph_ui *ui, struct mg_connection *c,
			  const char *q)
{
	char table[160], db[256], num[32], why[200];
	int64_t limit = 100, offset = 0;
	struct ph_buf p = PH_BUF_INIT(4096);
	struct ph_jw jw;
	int status;

	if (q && strlen(q) > PH_UI_MAX_QUERY)
		return send_error(c, 400, "query string too long");
	if (!ph_ui_query_get(q, "table", table, sizeof(table)) || !table[0])
		return send_error(c, 400, "table= is required");
	if (ph_ui_query_get(q, "limit", num, sizeof(num)) &&
	    (sscanf(num, "%" SCNd64, &limit) != 1 || limit < 1 || limit > 1000))
		return send_error(c, 400, "limit: an integer 1..1000");
	if (ph_ui_query_get(q, "offset", num, sizeof(num)) &&
	    (sscanf(num, "%" SCNd64, &offset) != 1 || offset < 0))
		return send_error(c, 400, "offset: an integer >= 0");
	ph_jw_init(&jw, &p);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "table", table);
	ph_jw_kv_int(&jw, "limit", limit);
	ph_jw_kv_int(&jw, "offset", offset);
	if (ph_ui_query_get(q, "database", db, sizeof(db)) && db[0])
		ph_jw_kv_str(&jw, "database", db);
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw)) {
		snprintf(why, sizeof(why), "parameters too long");
		ph_buf_release(&p);
		return send_error(c, 400, why);
	}
	status = answer_rpc(ui, c, "db_rows", p.buf);
	ph_buf_release(&p);
	return status;
}

static int answer_db_query(struct ph_ui *ui, struct mg_connection *c)
{
	struct ph_buf body = PH_BUF_INIT(PH_UI_MAX_BODY),
		      p = PH_BUF_INIT(PH_UI_MAX_BODY + 1024);
	struct ph_arena arena;
	struct ph_json *root = NULL;
	const struct ph_json *sql, *db;
	struct ph_jw jw;
	char why[300], *s = NULL;
	int status;

	if ((status = read_body(c, &body)))
		return status;
	ph_arena_init(&arena, 4096, 1 << 20);
	if (ph_json_parse(&arena, body.buf, body.len, &root, NULL) ||
	    !ph_json_is(root, PH_JSON_OBJECT)) {
		status = send_error(c, 400, "body must be a JSON object {sql}");
		goto out;
	}
	sql = member(root, "sql");
	db = member(root, "database");
	if (!ph_json_is(sql, PH_JSON_STRING) || !sql->n ||
	    !(s = strndup(sql->u.s, sql->n)) || strlen(s) != sql->n) {
		status = send_error(c, 400, "sql must be a non-empty string");
		goto out;
	}
	if (!ph_ui_sql_read_only(s, why, sizeof(why))) {
		status = send_error(c, 400, why);
		goto out;
	}
	ph_jw_init(&jw, &p);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "sql", s);
	if (ph_json_is(db, PH_JSON_STRING)) {
		ph_jw_key(&jw, "database");
		ph_jw_strn(&jw, db->u.s, db->n);
	}
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw))
		status = send_error(c, 400, "statement too long");
	else
		status = answer_rpc(ui, c, "db_query", p.buf);
out:
	free(s);
	ph_arena_release(&arena);
	ph_buf_release(&body);
	ph_buf_release(&p);
	return status;
}

static int mkdirs(const char *path)
{
	char tmp[4200];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0755);
			*p = '/';
		}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

static int answer_save(struct ph_ui *ui, struct mg_connection *c)
{
	struct ph_buf body = PH_BUF_INIT(PH_UI_MAX_BODY),
		      out = PH_BUF_INIT(1 << 16);
	struct ph_window w;
	char scenario[80], why[400], session[400] = "", path[4400];
	char from[32], to[32];
	struct ph_jw jw;
	bool sessions;
	int status, rc;

	if ((status = read_body(c, &body)))
		return status;
	status = ph_ui_parse_save(body.buf, body.len, &w, scenario,
				  sizeof(scenario), why, sizeof(why));
	ph_buf_release(&body);
	if (status)
		return send_error(c, status, why);
	pthread_mutex_lock(&ui->lv->mu);
	sessions = ui->lv->sessions;
	if (ui->lv->session_open)
		snprintf(session, sizeof(session), "%s", ui->lv->session.id);
	pthread_mutex_unlock(&ui->lv->mu);
	if (!sessions)
		return send_error(c, 409,
				  "sessions are off (PORTHOLE_SESSIONS=0): "
				  "there is nothing on disk to save from");
	if (!session[0])
		return send_error(c, 409,
				  "no session is being recorded yet (not "
				  "connected to the app)");
	if (mkdirs(ui->captures_dir))
		return send_error(c, 500, "cannot create .porthole/captures");
	snprintf(path, sizeof(path), "%s/%s-%" PRId64 "-%" PRId64 ".json",
		 ui->captures_dir, scenario, w.from, w.to);
	snprintf(from, sizeof(from), "%" PRId64, w.from);
	snprintf(to, sizeof(to), "%" PRId64, w.to);
	/* The session writer appends every PH_SESSION_FLUSH_MS: wait for two
	 * flushes so the window's last events are on disk. */
	usleep(2 * PH_SESSION_FLUSH_MS * 1000);
	pthread_mutex_lock(&ui->save_mu);
	{
		/* `porthole save` itself, so a kept window is byte for byte
		 * what the command line would write. */
		char *argv[] = { "save",   "--session", session, "--scenario",
				 scenario, "--from",	from,	 "--to",
				 to,	   "--out",	path,	 NULL };

		rc = ui->o.save ?
			     ui->o.save((int)PH_ARRAY_SIZE(argv) - 1, argv) :
			     2;
		fflush(stdout);
	}
	pthread_mutex_unlock(&ui->save_mu);
	if (rc)
		return send_error(c, 500,
				  "porthole save failed; see the terminal");
	ph_jw_init(&jw, &out);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "path", path);
	ph_jw_kv_str(&jw, "session", session);
	ph_jw_kv_str(&jw, "scenario", scenario);
	ph_jw_kv_int(&jw, "from", w.from);
	ph_jw_kv_int(&jw, "to", w.to);
	ph_jw_obj_end(&jw);
	status = send_buf(c, &jw, &out);
	ph_buf_release(&out);
	return status;
}

static int answer_restart(struct ph_ui *ui, struct mg_connection *c)
{
	struct ph_buf body = PH_BUF_INIT(PH_UI_MAX_BODY);
	struct ph_arena arena;
	struct ph_json *root = NULL;
	char why[300] = "";
	int status;

	if ((status = read_body(c, &body)))
		return status;
	ph_arena_init(&arena, 4096, 1 << 20);
	if (ph_json_parse(&arena, body.buf, body.len, &root, NULL) ||
	    !ph_json_is(member(root, "confirmed"), PH_JSON_TRUE))
		status = send_error(c, 400,
				    "restart needs {\"confirmed\":true}: the "
				    "page asks the person first");
	else if (!ui->o.restart)
		status = send_error(c, 409,
				    "porthole ui did not start this app; run "
				    "`porthole ui -- CMD...` to restart it "
				    "from the page");
	else if (ui->o.restart(ui->o.restart_ctx, why, sizeof(why)))
		status = send_error(c, 500, why[0] ? why : "restart failed");
	else
		send_json(c, 200, "{\"restarted\":true}", 18);
	ph_arena_release(&arena);
	ph_buf_release(&body);
	return status;
}

static int answer_asset(struct ph_ui *ui, struct mg_connection *c,
			const char *path)
{
	if (!strcmp(path, "/"))
		path = "/index.html";
	for (const struct ph_ui_asset *a = ph_ui_assets; a->path; a++) {
		if (strcmp(a->path, path))
			continue;
		mg_printf(c,
			  "HTTP/1.1 200 OK\r\n"
			  "Content-Type: %s\r\n"
			  "Content-Length: %zu\r\n"
			  "Cache-Control: no-cache\r\n"
			  "X-Content-Type-Options: nosniff\r\n"
			  "X-Frame-Options: DENY\r\n"
			  "Referrer-Policy: no-referrer\r\n"
			  "Content-Security-Policy: default-src 'self'; "
			  "connect-src 'self' ws://127.0.0.1:%d "
			  "ws://localhost:%d; img-src 'self' data:; "
			  "frame-ancestors 'none'\r\n"
			  "\r\n",
			  a->type, a->size, ui->port, ui->port);
		if (strcmp(mg_get_request_info(c)->request_method, "HEAD"))
			mg_write(c, a->data, a->size);
		return 200;
	}
	return send_error(c, 404, "no such page");
}

static int on_request(struct mg_connection *c, void *cbdata)
{
	struct ph_ui *ui = cbdata;
	const struct mg_request_info *ri = mg_get_request_info(c);
	const char *path = ri->local_uri ? ri->local_uri : "";
	const char *q = ri->query_string;
	char why[300];
	int status;
	struct ph_buf b = PH_BUF_INIT(1 << 16);
	struct ph_jw jw;
	enum ph_ui_route r;

	status = ph_ui_check_request(ri->request_method,
				     mg_get_header(c, "Host"),
				     mg_get_header(c, "Origin"), ui->port, why,
				     sizeof(why));
	if (status)
		return send_error(c, status, why);
	if (strlen(ri->request_uri ? ri->request_uri : "") > 4096 ||
	    (q && strlen(q) > PH_UI_MAX_QUERY))
		return send_error(c, 414, "request line too long");
	r = ph_ui_route(ri->request_method, path, &status);
	if (status == 404)
		return send_error(c, 404, "no such route");
	if (status == 405)
		return send_error(
			c, 405,
			r == PH_UI_R_DB_QUERY || r == PH_UI_R_SAVE ||
					r == PH_UI_R_RESTART ?
				"this route changes things: POST only" :
				"this route only reads: GET only");
	if (!strcmp(ri->request_method, "POST")) {
		const char *ct = mg_get_header(c, "Content-Type");

		/* Not a type a cross-site form can send without a preflight. */
		if (!ct || strncasecmp(ct, "application/json", 16))
			return send_error(c, 415,
					  "POST bodies are application/json");
		status = ph_ui_check_token(ui->token,
					   mg_get_header(c, "X-Porthole-Token"),
					   why, sizeof(why));
		if (status)
			return send_error(c, status, why);
	}
	switch (r) {
	case PH_UI_R_ASSET: return answer_asset(ui, c, path);
	case PH_UI_R_WS:
		return send_error(c, 400, "/ws is a WebSocket endpoint");
	case PH_UI_R_STATUS:
		ph_jw_init(&jw, &b);
		write_status(ui, &jw);
		status = send_buf(c, &jw, &b);
		ph_buf_release(&b);
		return status;
	case PH_UI_R_TOKEN:
		ph_jw_init(&jw, &b);
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "token", ui->token);
		ph_jw_obj_end(&jw);
		status = send_buf(c, &jw, &b);
		ph_buf_release(&b);
		return status;
	case PH_UI_R_FINDINGS: return answer_findings(ui, c, q);
	case PH_UI_R_WHERE: return answer_where(c, q);
	case PH_UI_R_SYSTEM: return answer_system(ui, c, q);
	case PH_UI_R_TRACES: {
		struct engine_job job = { .ui = ui, .fb = &b };

		if (!on_big_stack(traces_run, &job) || job.status) {
			ph_buf_release(&b);
			return send_error(c, 500, "cannot list traces");
		}
		send_json(c, 200, b.buf, b.len);
		ph_buf_release(&b);
		return 200;
	}
	case PH_UI_R_DB_TABLES: {
		char db[256];

		ph_jw_init(&jw, &b);
		ph_jw_obj_begin(&jw);
		if (ph_ui_query_get(q, "database", db, sizeof(db)) && db[0])
			ph_jw_kv_str(&jw, "database", db);
		ph_jw_obj_end(&jw);
		if (ph_jw_finish(&jw))
			return send_error(c, 400, "database name too long");
		status = answer_rpc(ui, c, "db_tables", b.buf);
		ph_buf_release(&b);
		return status;
	}
	case PH_UI_R_DB_PAGE: return answer_db_page(ui, c, q);
	case PH_UI_R_DB_QUERY: return answer_db_query(ui, c);
	case PH_UI_R_SAVE: return answer_save(ui, c);
	case PH_UI_R_RESTART: return answer_restart(ui, c);
	case PH_UI_R_NONE: break;
	}
	return send_error(c, 404, "no such route");
}

/* --- the WebSocket stream ------------------------------------------------- */

static int ws_connect(const struct mg_connection *c, void *cbdata)
{
	struct ph_ui *ui = cbdata;
	char why[300];

	/* Browsers let any site open a WebSocket to localhost: the Origin
	 * check is the only thing that keeps the stream ours. */
	return ph_ui_check_request("GET", mg_get_header(c, "Host"),
				   mg_get_header(c, "Origin"), ui->port, why,
				   sizeof(why)) != 0;
}

/* {"ui":"snapshot","hello":...,"status":...,"timeline":...} */
static int write_snapshot(struct ph_ui *ui, struct ph_buf *b)
{
	struct ph_jw jw;

	ph_jw_init(&jw, b);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "ui", "snapshot");
	ph_jw_key(&jw, "hello");
	pthread_mutex_lock(&ui->mu);
	if (ui->hello)
		ph_jw_raw(&jw, ui->hello, strlen(ui->hello));
	else
		ph_jw_null(&jw);
	pthread_mutex_unlock(&ui->mu);
	ph_jw_key(&jw, "status");
	write_status(ui, &jw);
	ph_jw_key(&jw, "timeline");
	ph_store_timeline(&ui->lv->store, PH_WINDOW_ALL, 0, SNAPSHOT_EVENTS,
			  &jw);
	ph_jw_obj_end(&jw);
	return ph_jw_finish(&jw);
}

static void ws_ready(struct mg_connection *c, void *cbdata)
{
	struct ph_ui *ui = cbdata;
	struct ws_client *cl = calloc(1, sizeof(*cl));
	struct ph_buf b = PH_BUF_INIT(SNAPSHOT_CAP);

	if (!cl)
		return;
	cl->conn = c;
	pthread_mutex_lock(&ui->clients_mu);
	if (!write_snapshot(ui, &b))
		mg_websocket_write(c, MG_WEBSOCKET_OPCODE_TEXT, b.buf, b.len);
	if (ui->recent.len)
		mg_websocket_write(c, MG_WEBSOCKET_OPCODE_TEXT, ui->recent.buf,
				   ui->recent.len);
	cl->next = ui->clients;
	ui->clients = cl;
	pthread_mutex_unlock(&ui->clients_mu);
	ph_buf_release(&b);
}

static int ws_data(struct mg_connection *c, int bits, char *data, size_t len,
		   void *cbdata)
{
	(void)c;
	(void)data;
	(void)len;
	(void)cbdata;
	/* The page only sends keep-alives; a close frame ends the socket. */
	return (bits & 0x0f) != MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE;
}

static void ws_close(const struct mg_connection *c, void *cbdata)
{
	struct ph_ui *ui = cbdata;

	pthread_mutex_lock(&ui->clients_mu);
	for (struct ws_client **p = &ui->clients; *p; p = &(*p)->next)
		if ((*p)->conn == c) {
			struct ws_client *dead = *p;

			*p = dead->next;
			free(dead);
			break;
		}
	pthread_mutex_unlock(&ui->clients_mu);
}

static void broadcast(struct ph_ui *ui, const char *s, size_t n)
{
	for (struct ws_client *cl = ui->clients; cl; cl = cl->next)
		mg_websocket_write(cl->conn, MG_WEBSOCKET_OPCODE_TEXT, s, n);
}

/* Keeps batch s as the newest of `recent`, dropping those past RECENT_MS
 * (or the caps); call with clients_mu held. */
static void keep_recent(struct ph_ui *ui, const char *s, size_t n, int64_t now)
{
	while (ui->nbatches && (now - ui->batches[0].at > RECENT_MS ||
				ui->nbatches == RECENT_MAX ||
				ui->recent.len + n > RECENT_CAP)) {
		ph_buf_consume(&ui->recent, ui->batches[0].len);
		memmove(&ui->batches[0], &ui->batches[1],
			sizeof(ui->batches[0]) * (size_t)--ui->nbatches);
	}
	if (ph_buf_add(&ui->recent, s, n)) {
		/* larger than the cap alone: a page gets the snapshot only */
		ph_buf_reset(&ui->recent);
		ui->nbatches = 0;
		return;
	}
	ui->batches[ui->nbatches].at = now;
	ui->batches[ui->nbatches++].len = n;
}

struct host_made {
	struct ph_buf *b;
	bool full; /* the batch passed its cap: send a snapshot instead */
};

static int add_host_made(void *ctx, const struct ph_event *ev)
{
	struct host_made *h = ctx;
	struct ph_jw jw;

	if (ev->seq >= 0)
		return 0; /* the link's: ph_ui_line broadcast it already */
	ph_jw_init(&jw, h->b);
	ph_jw_value(&jw, ev->frame);
	if (ph_jw_finish(&jw) || ph_buf_addch(h->b, '\n')) {
		h->full = true;
		return 1;
	}
	return 0;
}

/*
 * Sends every page the host-made events the store took since the last
 * look (a walk over the new events only, ph_store_each_since_locked, and
 * none at all when s->host_made_at says no host-made one came: at tens of
 * thousands of app events a second that walk held the store's lock, which
 * ingest needs, for nothing every 50 ms).
 * Called with clients_mu held, as ws_ready takes its snapshot: an event
 * stored before this walk is in the snapshot of a page that connects
 * after it, and a page that connected before gets it here.  One stored
 * between a page's snapshot and this walk comes twice; the page drops
 * repeats of host-made events by their content.
 */
static void send_host_made(struct ph_ui *ui)
{
	struct ph_store *s = &ui->lv->store;
	struct ph_buf b = PH_BUF_INIT(PENDING_CAP);
	struct host_made h = { .b = &b };
	bool walked;

	pthread_mutex_lock(&s->lock);
	if (s->host_made_at <= ui->store_seen || !ui->clients) {
		/* none since, or no page open (the next one's snapshot
		 * holds them) */
		ui->store_seen = s->version;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	walked = ph_store_each_since_locked(s, ui->store_seen, add_host_made,
					    &h);
	ui->store_seen = s->version;
	pthread_mutex_unlock(&s->lock);
	if (!walked || h.full) {
		/* Evicted before this look (a store turned over in 50 ms),
		 * or more than a batch holds: the store has them all. */
		struct ph_buf snap = PH_BUF_INIT(SNAPSHOT_CAP);

		if (ui->clients && !write_snapshot(ui, &snap))
			broadcast(ui, snap.buf, snap.len);
		ph_buf_release(&snap);
	} else if (b.len && ui->clients) {
		broadcast(ui, b.buf, b.len);
	}
	ph_buf_release(&b);
}

static void *broadcaster(void *arg)
{
	struct ph_ui *ui = arg;
	struct ph_buf out = PH_BUF_INIT(PENDING_CAP);
	int64_t last_status = 0;

	/* What the store held before: in every page's snapshot. */
	pthread_mutex_lock(&ui->lv->store.lock);
	ui->store_seen = ui->lv->store.version;
	pthread_mutex_unlock(&ui->lv->store.lock);
	while (!ui->stop) {
		struct ph_buf tmp;
		bool overflow;
		int64_t now = ph_clock_uptime_ms();

		usleep(BROADCAST_MS * 1000);
		pthread_mutex_lock(&ui->mu);
		tmp = ui->pending; /* swap: the reader keeps appending */
		ui->pending = out;
		out = tmp;
		overflow = ui->overflow;
		ui->overflow = false;
		pthread_mutex_unlock(&ui->mu);

		pthread_mutex_lock(&ui->clients_mu);
		if (overflow) {
			/* Lines were lost on the way: every page starts
			 * over from the store, which has them all. */
			struct ph_buf s = PH_BUF_INIT(SNAPSHOT_CAP);

			if (ui->clients && !write_snapshot(ui, &s))
				broadcast(ui, s.buf, s.len);
			ph_buf_release(&s);
		} else if (out.len) {
			if (ui->clients)
				broadcast(ui, out.buf, out.len);
			keep_recent(ui, out.buf, out.len, now);
		}
		send_host_made(ui);
		if (now - last_status >= 1000 && ui->clients) {
			struct ph_buf s = PH_BUF_INIT(1 << 16);
			struct ph_jw jw;

			ph_jw_init(&jw, &s);
			ph_jw_obj_begin(&jw);
			ph_jw_kv_str(&jw, "ui", "status");
			ph_jw_key(&jw, "status");
			write_status(ui, &jw);
			ph_jw_obj_end(&jw);
			if (!ph_jw_finish(&jw))
				broadcast(ui, s.buf, s.len);
			ph_buf_release(&s);
			last_status = now;
		}
		pthread_mutex_unlock(&ui->clients_mu);
		ph_buf_reset(&out);
	}
	ph_buf_release(&out);
	return NULL;
}

/* Keeps the hello answer's result: the page names empty lanes from its
 * collectors ("curl not instrumented"). */
static void keep_hello(struct ph_ui *ui, const char *line, size_t len)
{
	struct ph_arena a;
	struct ph_json *root = NULL;
	const struct ph_json *res;
	struct ph_buf b = PH_BUF_INIT(HELLO_CAP);
	struct ph_jw jw;

	if (len > HELLO_CAP || !memmem(line, len, "\"protocol\"", 10))
		return;
	ph_arena_init(&a, 4096, 1 << 20);
	if (!ph_json_parse(&a, line, len, &root, NULL) &&
	    ph_json_is(res = member(root, "result"), PH_JSON_OBJECT) &&
	    member(res, "protocol") && member(res, "packageName")) {
		ph_jw_init(&jw, &b);
		ph_jw_value(&jw, res);
		if (!ph_jw_finish(&jw)) {
			char *copy = strdup(b.buf);

			if (copy) {
				pthread_mutex_lock(&ui->mu);
				free(ui->hello);
				ui->hello = copy;
				pthread_mutex_unlock(&ui->mu);
			}
		}
	}
	ph_buf_release(&b);
	ph_arena_release(&a);
}

void ph_ui_line(struct ph_ui *ui, const char *line, size_t len)
{
	if (!ui || !len)
		return;
	if (line[0] == '{' && len > 6 && !memcmp(line, "{\"id\":", 6))
		keep_hello(ui, line, len);
	pthread_mutex_lock(&ui->mu);
	if (ph_buf_add(&ui->pending, line, len) ||
	    ph_buf_addch(&ui->pending, '\n'))
		ui->overflow = true;
	pthread_mutex_unlock(&ui->mu);
}

/* --- lifecycle ------------------------------------------------------------ */

static int on_log(const struct mg_connection *c, const char *msg)
{
	(void)c;
	ph_log(PH_LOG_DEBUG, "civetweb: %s", msg);
	return 1;
}

struct ph_ui *ph_ui_start(const struct ph_ui_options *o, char *why, size_t size)
{
	struct ph_ui *ui = calloc(1, sizeof(*ui));
	struct mg_callbacks cb = { .log_message = on_log };
	struct mg_server_port ports[4];
	char listen[64];
	const char *root = o->root && o->root[0] ? o->root : ".";
	const char *opts[] = { "listening_ports", listen,
			       /* civetweb holds a worker per connection: one
				* per open page for its WebSocket, and one per
				* request (keep-alive off, so an idle browser
				* connection never starves the API).  A worker
				* waits for a request's bytes at most
				* request_timeout_ms, so connections that send
				* nothing (half-open, or an attack) hold the
				* workers only that long. */
			       "num_threads", "32", "request_timeout_ms",
			       STR(PH_UI_REQUEST_TIMEOUT_MS),
			       "websocket_timeout_ms", "3600000",
			       "enable_keep_alive", "no", NULL };
	uint8_t rnd[16];
	int n;

	if (!ui) {
		snprintf(why, size, "out of memory");
		return NULL;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		snprintf(why, size, "cannot make a write token: %s",
			 strerror(errno));
		free(ui);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(ui->token + 2 * i, 3, "%02x", rnd[i]);
	ui->o = *o;
	ui->lv = o->live;
	snprintf(ui->traces_dir, sizeof(ui->traces_dir), "%s/.porthole/traces",
		 root);
	snprintf(ui->captures_dir, sizeof(ui->captures_dir),
		 "%s/.porthole/captures", root);
	pthread_mutex_init(&ui->mu, NULL);
	pthread_mutex_init(&ui->clients_mu, NULL);
	pthread_mutex_init(&ui->save_mu, NULL);
	ph_buf_init(&ui->pending, PENDING_CAP);
	ph_buf_init(&ui->recent, RECENT_CAP);
	/* Loopback only: the page shows an app's insides. */
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", o->port);
	mg_init_library(0);
	ui->ctx = mg_start(&cb, ui, opts);
	if (!ui->ctx) {
		snprintf(why, size,
			 "cannot listen on 127.0.0.1:%d (in use? try --port)",
			 o->port);
		ph_ui_stop(ui);
		return NULL;
	}
	n = mg_get_server_ports(ui->ctx, (int)PH_ARRAY_SIZE(ports), ports);
	ui->port = n > 0 ? ports[0].port : o->port;
	mg_set_request_handler(ui->ctx, "/", on_request, ui);
	mg_set_websocket_handler(ui->ctx, "/ws", ws_connect, ws_ready, ws_data,
				 ws_close, ui);
	if (pthread_create(&ui->thread, NULL, broadcaster, ui)) {
		snprintf(why, size, "cannot start a thread");
		ph_ui_stop(ui);
		return NULL;
	}
	ui->running = true;
	return ui;
}

int ph_ui_port(const struct ph_ui *ui)
{
	return ui->port;
}

void ph_ui_stop(struct ph_ui *ui)
{
	if (!ui)
		return;
	ui->stop = 1;
	if (ui->running)
		pthread_join(ui->thread, NULL);
	if (ui->ctx)
		mg_stop(ui->ctx); /* closes the sockets; ws_close frees each */
	while (ui->clients) {
		struct ws_client *next = ui->clients->next;

		free(ui->clients);
		ui->clients = next;
	}
	ph_buf_release(&ui->pending);
	ph_buf_release(&ui->recent);
	free(ui->hello);
	pthread_mutex_destroy(&ui->mu);
	pthread_mutex_destroy(&ui->clients_mu);
	pthread_mutex_destroy(&ui->save_mu);
	free(ui);
}
