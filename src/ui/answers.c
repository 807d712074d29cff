/* SPDX-License-Identifier: Apache-2.0 */
/*
 * answers.c: what `porthole ui` answers each HTTP route (ui.h lists them):
 * the status, findings, `where`, traces, the system view, the app's RPCs
 * and database inspector, save and restart, and the embedded page.  Each
 * request is checked (http.c) before any of it runs.  server.c starts the
 * server and streams events to the page over WebSocket.
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
#include "ui/server_int.h"

#include <civetweb.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define ANSWER_CAP     (64u << 20)
#define RPC_TIMEOUT_MS 5000

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

void ph_ui_write_status(struct ph_ui *ui, struct ph_jw *jw)
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

const struct ph_json *ph_ui_member(const struct ph_json *o, const char *k)
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
			const struct ph_json *tf = ph_ui_member(ta, "findings");

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
		if (ph_ui_member(ta, "asked"))
			ph_jw_value(&jw, ph_ui_member(ta, "asked"));
		else
			ph_jw_null(&jw);
		ph_jw_key(&jw, "trace");
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "id", trace);
		if (why[0]) /* asked about another process than the app's */
			ph_jw_kv_str(&jw, "processNote", why);
		for (size_t k = 0; k < PH_ARRAY_SIZE(keep); k++)
			if (ph_ui_member(ta, keep[k])) {
				ph_jw_key(&jw, keep[k]);
				ph_jw_value(&jw, ph_ui_member(ta, keep[k]));
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
	} else if (!ph_json_is(ph_ui_member(root, "ok"), PH_JSON_TRUE)) {
		res = ph_ui_member(root, "error");
		snprintf(why, sizeof(why), "the app refused %s: %.*s", method,
			 ph_json_is(res, PH_JSON_STRING) ? (int)res->n : 7,
			 ph_json_is(res, PH_JSON_STRING) ? res->u.s : "no why");
		status = send_error(c, 422, why);
	} else {
		struct ph_buf out = PH_BUF_INIT(ANSWER_CAP);
		struct ph_jw jw;

		ph_jw_init(&jw, &out);
		res = ph_ui_member(root, "result");
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
	sql = ph_ui_member(root, "sql");
	db = ph_ui_member(root, "database");
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
	    !ph_json_is(ph_ui_member(root, "confirmed"), PH_JSON_TRUE))
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

int ph_ui_on_request(struct mg_connection *c, void *cbdata)
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
		ph_ui_write_status(ui, &jw);
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
