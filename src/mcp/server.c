/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c: the JSON-RPC side of `porthole mcp` (see mcp.h, docs/mcp.md);
 * the tools' schemas and the argument check are in schema.c.
 *
 * One request line in, one response line out.  Calls run on the thread
 * that reads stdin, one at a time, answered in order; except a tool marked
 * PH_TOOL_BACKGROUND (capture_system_trace), which runs on a thread of its
 * own while the others are answered, sends its progress and its answer
 * itself when done, and stops unanswered on `notifications/cancelled`.
 * Lines from both threads go out whole, one at a time (m->mu).  A
 * cancellation naming any other request names one answered already: it is
 * ignored, as the MCP spec allows.
 */
#include "ph_common.h"
#include "mcp.h"
#include "mcp/server_int.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_log.h"
#include "host/session.h"
#include "porthole.h"

#include <poll.h>
#include <unistd.h>

#define ANSWER_CAP ((size_t)64 << 20)
/*
 * The most a call waits for the link's first answers (hello, then the
 * backfill of what the app's ring holds); generous, since a loaded machine
 * parses a big backfill slowly, and paid only while they are on the way.
 */
#define BACKFILL_WAIT_MS 15000

static const char *const versions[] = { "2025-11-25", "2025-06-18",
					"2025-03-26", "2024-11-05" };

const char *ph_mcp_negotiate(const char *client, size_t n)
{
	for (size_t i = 0; client && i < PH_ARRAY_SIZE(versions); i++)
		if (strlen(versions[i]) == n && !memcmp(versions[i], client, n))
			return versions[i];
	return PH_MCP_PROTOCOL;
}

static const char instructions[] =
	"Porthole sees inside the running app (a debug build linked with "
	"libporthole). Start with the `findings` tool: it ranks what went "
	"wrong since your last call and names, for each finding, the tool "
	"that shows its evidence (blocking, frames, inflight, logs, "
	"timeline, recompositions...). Every tool answers one summary line "
	"by default (detail: summary); ask detail: normal for compact JSON "
	"and detail: full for everything. Windows are on the app's clock in "
	"ms: pass since:\"all\", sinceMs, or from/to (every summary quotes "
	"the window it covered). If a tool says the app is not connected, "
	"call porthole_status for why and the fix.";

/* --- JSON-RPC envelopes --------------------------------------------------- */

static void put_id(struct ph_jw *jw, const struct ph_json *id)
{
	ph_jw_key(jw, "id");
	if (id && (id->type == PH_JSON_INT || id->type == PH_JSON_STRING))
		ph_jw_value(jw, id);
	else
		ph_jw_null(jw);
}

static void rpc_error(struct ph_buf *out, const struct ph_json *id, int code,
		      const char *fmt, ...) PH_PRINTF(4, 5);

static void rpc_error(struct ph_buf *out, const struct ph_json *id, int code,
		      const char *fmt, ...)
{
	struct ph_jw jw;
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ph_jw_init(&jw, out);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "jsonrpc", "2.0");
	put_id(&jw, id);
	ph_jw_key(&jw, "error");
	ph_jw_obj_begin(&jw);
	ph_jw_kv_int(&jw, "code", code);
	ph_jw_kv_str(&jw, "message", msg);
	ph_jw_obj_end(&jw);
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw) || ph_buf_addch(out, '\n'))
		ph_log(PH_LOG_ERROR, "mcp: could not build an error answer");
}

/* Opens {"jsonrpc":"2.0","id":..,"result": and leaves the writer there. */
static void result_begin(struct ph_jw *jw, struct ph_buf *out,
			 const struct ph_json *id)
{
	ph_jw_init(jw, out);
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "jsonrpc", "2.0");
	put_id(jw, id);
	ph_jw_key(jw, "result");
}

static void result_end(struct ph_jw *jw, struct ph_buf *out, size_t start,
		       const struct ph_json *id)
{
	ph_jw_obj_end(jw);
	if (ph_jw_finish(jw) || ph_buf_addch(out, '\n')) {
		ph_buf_setlen(out, start);
		rpc_error(out, id, -32603,
			  "the answer did not fit in %zu bytes", out->cap);
	}
}

/* --- the banner ------------------------------------------------------------
 */

struct banner {
	char text[300];
	int64_t errors, first_at, last_at;
};

static bool reported_cb(void *ctx, const char *key)
{
	return ph_watermark_reported(ctx, key);
}

/*
 * Errors the live store saw since the last call that nobody reported yet:
 * the banner, and the keys are then marked reported in the watermark (so
 * two chained calls never repeat one; `watch` shares the same list).
 */
static void banner_compute(struct ph_mcp *m, struct banner *bn)
{
	struct ph_watermark wm;
	struct ph_analysis *a;
	const char *dir;
	int64_t now;

	memset(bn, 0, sizeof(*bn));
	if (!m->lv)
		return;
	pthread_mutex_lock(&m->lv->store.lock);
	now = m->lv->store.nevents ? m->lv->store.in.last_t : INT64_MIN;
	pthread_mutex_unlock(&m->lv->store.lock);
	if (now == INT64_MIN || now <= m->banner_from)
		return;
	a = ph_analyze_store(&m->lv->store,
			     (struct ph_window){ m->banner_from == INT64_MIN ?
							 INT64_MIN :
							 m->banner_from + 1,
						 now });
	m->banner_from = now;
	if (!a)
		return;
	dir = ph_mcp_state_dir(m);
	ph_watermark_init(&wm);
	if (dir)
		ph_watermark_load(&wm, dir);
	ph_analysis_banner(a, reported_cb, &wm, bn->text, sizeof(bn->text));
	for (size_t i = 0; i < a->nf; i++) {
		const struct ph_finding *f = &a->f[i];

		if (f->severity != PH_SEV_ERROR ||
		    ph_watermark_reported(&wm, f->key))
			continue;
		if (!bn->errors || f->from < bn->first_at)
			bn->first_at = f->spanning ? bn->first_at : f->from;
		if (!f->spanning && f->to > bn->last_at)
			bn->last_at = f->to;
		bn->errors += f->count;
		if (dir)
			ph_watermark_add_reported(dir, f->key);
	}
	ph_watermark_release(&wm);
	ph_analysis_free(a);
}

/* --- waiting for the backfill ----------------------------------------------
 */

/*
 * Whether the store holds the connection's backfill: the link asks for
 * `hello` then one `timeline` page on every connection, and the store
 * takes them in that order, so each hello it took is followed by a page.
 */
static bool backfilled(struct ph_mcp *m, uint64_t *hellos)
{
	bool done;

	pthread_mutex_lock(&m->lv->store.lock);
	*hellos = m->lv->store.in.hellos;
	done = *hellos > 0 && m->lv->store.in.pages >= *hellos;
	pthread_mutex_unlock(&m->lv->store.lock);
	return done;
}

/*
 * Before a call: while the link is still making its first connection, or
 * is connected but its backfill is not in the store yet, waits for them
 * (at most BACKFILL_WAIT_MS), so that a call made right after the server
 * starts answers from what the app did instead of "nothing received yet".
 * Returns at once when the link has said why it cannot connect (the app is
 * not running, refused), and does not wait twice for one backfill that
 * never came (an app that refuses `timeline`).
 */
static void wait_backfill(struct ph_mcp *m)
{
	int64_t end = ph_clock_uptime_ms() + BACKFILL_WAIT_MS;
	uint64_t hellos = 0;

	if (!m->lv || !m->started)
		return;
	for (;;) {
		enum ph_link_state st;
		bool failed;

		pthread_mutex_lock(&m->lv->link.mu);
		st = m->lv->link.state;
		failed = m->lv->link.error[0] != '\0';
		pthread_mutex_unlock(&m->lv->link.mu);
		if (st == PH_LINK_CONNECTED) {
			if (backfilled(m, &hellos) ||
			    (hellos && hellos == m->backfill_given_up))
				return;
		} else if (failed || st != PH_LINK_CONNECTING) {
			return;
		}
		if (ph_clock_uptime_ms() >= end) {
			if (st == PH_LINK_CONNECTED && hellos)
				m->backfill_given_up = hellos;
			ph_warn("mcp: the app's backfill did not arrive "
				"within %d ms; answering without it",
				BACKFILL_WAIT_MS);
			return;
		}
		usleep(10000);
	}
}

/* --- tools/call ------------------------------------------------------------
 */

static int digits(size_t v)
{
	int d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* Resolves the shared window arguments into c->w. */
static void resolve_window(struct ph_mcp_call *c)
{
	struct ph_mcp *m = c->m;
	int64_t now = ph_mcp_now(m), last = INT64_MIN;
	const char *since = ph_mcp_arg_str(c, "since", "last");

	c->w = PH_WINDOW_ALL;
	if (ph_mcp_arg_has(c, "from") || ph_mcp_arg_has(c, "to")) {
		c->w.from = ph_mcp_arg_int(c, "from", INT64_MIN);
		c->w.to = ph_mcp_arg_int(c, "to", INT64_MAX);
	} else if (ph_mcp_arg_has(c, "sinceMs")) {
		c->w.from = now - ph_mcp_arg_int(c, "sinceMs", 0);
	} else if (!strcmp(since, "last")) {
		c->w_since_last = true;
		for (size_t i = 0; i < m->nmarks; i++)
			if (!strcmp(m->marks[i].tool, c->tool->name))
				last = m->marks[i].last_to;
		if (last != INT64_MIN)
			c->w.from = last + 1;
	}
	/* An open end is now, so the answer can be quoted and chained. */
	if (c->w.to == INT64_MAX)
		c->w.to = now;
}

/* One tools/call, from its arguments to its answer line. */
struct call {
	struct ph_mcp_call c; /* first: the tools' handle on the rest */
	struct ph_arena arena;
	struct banner bn;
	struct ph_json *params;	  /* the request's params, in the arena */
	const struct ph_json *id; /* in the arena */
	struct ph_buf id_text;	  /* the id as JSON, for cancellations */
	struct ph_buf token;	  /* params._meta.progressToken as JSON */
};

/* v as JSON text into b (reset first). */
static int json_text(const struct ph_json *v, struct ph_buf *b)
{
	struct ph_jw jw;

	ph_buf_reset(b);
	ph_jw_init(&jw, b);
	if (v)
		ph_jw_value(&jw, v);
	else
		ph_jw_null(&jw);
	return ph_jw_finish(&jw);
}

static void call_free(struct call *k)
{
	ph_buf_release(&k->c.line);
	ph_buf_release(&k->c.payload);
	ph_buf_release(&k->id_text);
	ph_buf_release(&k->token);
	ph_arena_release(&k->arena);
	free(k);
}

/*
 * A call of tool t whose id and params live in the arena of one request
 * line: copied into the call's own arena, so that the call may outlive
 * the line (a background call).  NULL when out of memory.
 */
static struct call *call_new(const struct ph_mcp_tool *t, struct ph_mcp *m,
			     const struct ph_json *id,
			     const struct ph_json *params)
{
	struct call *k = calloc(1, sizeof(*k));
	struct ph_buf b = PH_BUF_INIT(PH_MCP_LINE_CAP);
	struct ph_json *idc = NULL;
	char *txt;

	if (!k)
		return NULL;
	ph_arena_init(&k->arena, 1 << 16, (size_t)256 << 20);
	ph_buf_init(&k->id_text, 256);
	ph_buf_init(&k->token, 256);
	ph_buf_init(&k->c.line, 1 << 20);
	ph_buf_init(&k->c.payload, ANSWER_CAP);
	k->c.m = m;
	k->c.tool = t;
	k->c.arena = &k->arena;
	if (json_text(params, &b) ||
	    !(txt = ph_arena_strndup(&k->arena, b.buf, b.len)) ||
	    ph_json_parse(&k->arena, txt, b.len, &k->params, NULL) ||
	    json_text(id, &k->id_text) ||
	    !(txt = ph_arena_strndup(&k->arena, k->id_text.buf,
				     k->id_text.len)) ||
	    ph_json_parse(&k->arena, txt, k->id_text.len, &idc, NULL) ||
	    json_text(ph_json_get(ph_json_get(params, "_meta"),
				  "progressToken"),
		      &k->token)) {
		ph_buf_release(&b);
		call_free(k);
		return NULL;
	}
	k->id = idc;
	ph_buf_release(&b);
	return k;
}

/* Runs the tool (when its arguments passed) and closes the payload. */
static void call_run(struct call *k, bool args_ok)
{
	struct ph_mcp_call *c = &k->c;

	if (args_ok && c->tool->call(c) && !c->is_error)
		ph_mcp_fail(c, "%s failed inside the server; see its stderr",
			    c->tool->name);
	ph_jw_obj_end(&c->jw);
	if (ph_jw_finish(&c->jw)) {
		ph_buf_reset(&c->payload);
		if (ph_buf_addstr(&c->payload,
				  "{\"error\":\"payload too big\"}"))
			ph_buf_reset(&c->payload);
		/* Not the answer the schema promises: say so, as an error. */
		ph_mcp_fail(c,
			    "the answer of %s did not fit in %zu bytes; ask "
			    "with a smaller window or limit",
			    c->tool->name, ANSWER_CAP);
	}
}

/* The answer line of a call that ran, appended to out. */
static void call_answer(struct call *k, struct ph_buf *out)
{
	struct ph_mcp_call *c = &k->c;
	struct ph_buf text = PH_BUF_INIT(ANSWER_CAP);
	struct ph_jw jw;
	size_t start = out->len, head, n, full, ret, m_full;

	/* The text: banner, summary line with its size note, payload. */
	if (k->bn.text[0] &&
	    (ph_buf_addstr(&text, k->bn.text) || ph_buf_addch(&text, '\n')))
		goto toobig;
	if (ph_buf_addstr(&text, c->line.len ? c->line.buf : "(no answer)"))
		goto toobig;
	head = text.len;
	full = head + (c->full_payload ? c->full_payload : c->payload.len) + 1 +
	       c->image_len;
	ret = head +
	      (c->detail != PH_DETAIL_SUMMARY && !c->is_error ?
		       c->payload.len + 1 :
		       0) +
	      c->image_len;
	/*
	 * The note counts itself: grow until the digits settle.  M is the
	 * answer at detail full with its own note, where N = M.
	 */
	m_full = full + 24;
	for (int i = 0; i < 4; i++)
		m_full = full + strlen(" [ returned; full \u2248 ]") +
			 2 * (size_t)digits(m_full);
	n = ret + 24;
	for (int i = 0; i < 4; i++)
		n = ret + strlen(" [ returned; full \u2248 ]") +
		    (size_t)digits(n) + (size_t)digits(m_full);
	if (ph_buf_addf(&text, " [%zu returned; full \u2248 %zu]", n, m_full))
		goto toobig;
	if (c->detail != PH_DETAIL_SUMMARY && !c->is_error &&
	    (ph_buf_addch(&text, '\n') ||
	     ph_buf_add(&text, c->payload.buf, c->payload.len)))
		goto toobig;

	result_begin(&jw, out, k->id);
	ph_jw_obj_begin(&jw);
	ph_jw_key(&jw, "content");
	ph_jw_arr_begin(&jw);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "type", "text");
	ph_jw_key(&jw, "text");
	ph_jw_strn(&jw, text.buf, text.len);
	ph_jw_obj_end(&jw);
	if (c->image && !c->is_error) {
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "type", "image");
		ph_jw_key(&jw, "data");
		ph_jw_strn(&jw, c->image, c->image_len);
		ph_jw_kv_str(&jw, "mimeType", c->image_mime);
		ph_jw_obj_end(&jw);
	}
	ph_jw_arr_end(&jw);
	/*
	 * The payload itself, as the tool's outputSchema declares it (the
	 * spec: a tool with one returns conforming structuredContent on
	 * every result that is not an error); an error has none, its
	 * payload being whatever the tool had written when it failed.
	 */
	if (!c->is_error) {
		ph_jw_key(&jw, "structuredContent");
		ph_jw_raw(&jw, c->payload.buf, c->payload.len);
	}
	ph_jw_kv_bool(&jw, "isError", c->is_error);
	ph_jw_obj_end(&jw);
	result_end(&jw, out, start, k->id);
	goto out;
toobig:
	ph_buf_setlen(out, start);
	rpc_error(out, k->id, -32603,
		  "the answer of %s is too big; ask with a "
		  "smaller window or limit",
		  c->tool->name);
out:
	ph_buf_release(&text);
}

static int write_all(int fd, const char *p, size_t n);

/* Sends one line (with its '\n') to the client, whole, among the others. */
static void send_line(struct ph_mcp *m, const struct ph_buf *b)
{
	pthread_mutex_lock(&m->mu);
	if (b->len && write_all(m->out_fd, b->buf, b->len))
		ph_warn("mcp: could not write to the client");
	pthread_mutex_unlock(&m->mu);
}

/* A background call's thread: the tool, then its answer unless cancelled. */
static void *call_thread(void *arg)
{
	struct call *k = arg;
	struct ph_mcp *m = k->c.m;
	struct ph_buf out = PH_BUF_INIT(ANSWER_CAP + 4096);

	call_run(k, true);
	/* The spec: a cancelled request gets no response. */
	if (!ph_mcp_cancelled(&k->c)) {
		call_answer(k, &out);
		send_line(m, &out);
	}
	ph_buf_release(&out);
	/* Freed before the server can see it gone and exit: nothing of the
	 * call outlives the loop in ph_mcp_serve. */
	pthread_mutex_lock(&m->mu);
	m->bg = NULL;
	call_free(k);
	pthread_cond_broadcast(&m->idle);
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

bool ph_mcp_cancelled(struct ph_mcp_call *c)
{
	return c->cancelled != 0;
}

void ph_mcp_progress(struct ph_mcp_call *c, double progress, double total,
		     const char *message)
{
	struct call *k = (struct call *)c;
	struct ph_buf b = PH_BUF_INIT(1 << 16);
	struct ph_jw jw;

	if (!c->m->serving || !k->token.len || !strcmp(k->token.buf, "null"))
		return;
	ph_jw_init(&jw, &b);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "jsonrpc", "2.0");
	ph_jw_kv_str(&jw, "method", "notifications/progress");
	ph_jw_key(&jw, "params");
	ph_jw_obj_begin(&jw);
	ph_jw_key(&jw, "progressToken");
	ph_jw_raw(&jw, k->token.buf, k->token.len);
	ph_jw_key(&jw, "progress");
	ph_jw_double(&jw, progress);
	if (total > 0) {
		ph_jw_key(&jw, "total");
		ph_jw_double(&jw, total);
	}
	if (message)
		ph_jw_kv_str(&jw, "message", message);
	ph_jw_obj_end(&jw);
	ph_jw_obj_end(&jw);
	if (!ph_jw_finish(&jw) && !ph_buf_addch(&b, '\n'))
		send_line(c->m, &b);
	ph_buf_release(&b);
}

/*
 * tools/call: the banner and the argument check here, on the thread that
 * reads stdin; then the tool, here too, or for a PH_TOOL_BACKGROUND tool
 * while serving, on a thread of its own that sends the answer itself.
 */
static void tools_call(struct ph_mcp *m, const struct ph_json *id,
		       const struct ph_json *params, struct ph_buf *out)
{
	const struct ph_json *name = ph_json_get(params, "name");
	static const struct ph_json empty = { .type = PH_JSON_OBJECT };
	const struct ph_mcp_tool *t;
	const struct ph_json *args;
	struct ph_mcp_call *c;
	struct call *k;
	const char *why, *det;
	bool args_ok = false, busy = false;
	char busy_id[64] = "";
	pthread_t th;

	if (!ph_json_is(name, PH_JSON_STRING)) {
		rpc_error(out, id, -32602,
			  "tools/call needs params.name, a "
			  "string naming a tool");
		return;
	}
	t = ph_mcp_tool_find(name->u.s, name->n);
	if (!t) {
		rpc_error(out, id, -32602,
			  "unknown tool '%.*s'; call tools/list for the tools "
			  "(start with 'findings')",
			  (int)(name->n > 80 ? 80 : name->n), name->u.s);
		return;
	}
	k = call_new(t, m, id, params);
	if (!k) {
		rpc_error(out, id, -32603, "out of memory for the call");
		return;
	}
	c = &k->c;
	args = ph_json_get(k->params, "arguments");
	m->calls++;
	wait_backfill(m);
	c->args = args ? args : &empty;
	ph_jw_init(&c->jw, &c->payload);
	banner_compute(m, &k->bn);
	ph_jw_obj_begin(&c->jw);
	ph_jw_key(&c->jw, "sinceLast");
	if (k->bn.errors) {
		ph_jw_obj_begin(&c->jw);
		ph_jw_kv_int(&c->jw, "errors", k->bn.errors);
		ph_jw_kv_int(&c->jw, "firstAt", k->bn.first_at);
		ph_jw_kv_int(&c->jw, "lastAt", k->bn.last_at);
		ph_jw_obj_end(&c->jw);
	} else {
		ph_jw_null(&c->jw);
	}
	if (m->serving) {
		pthread_mutex_lock(&m->mu);
		busy = m->bg != NULL;
		if (busy)
			snprintf(busy_id, sizeof(busy_id), "%.60s",
				 ((struct call *)m->bg)->id_text.buf);
		pthread_mutex_unlock(&m->mu);
	}
	if (!ph_json_is(c->args, PH_JSON_OBJECT)) {
		ph_mcp_fail(c, "arguments must be a JSON object");
	} else if ((why = ph_mcp_check_args(&k->arena, c->tool, c->args))) {
		ph_mcp_fail(c, "%s (see the inputSchema in tools/list)", why);
	} else if (busy && ((t->flags & PH_TOOL_BACKGROUND) ||
			    !strcmp(t->name, "system_trace_start"))) {
		/* tracefs is one per machine: one recorder at a time */
		ph_mcp_fail(c,
			    "a system trace is being recorded (request %s); "
			    "wait for its answer, or cancel it "
			    "(notifications/cancelled), then call %s again",
			    busy_id, t->name);
	} else {
		det = ph_mcp_arg_str(c, "detail", "summary");
		c->detail = !strcmp(det, "full")   ? PH_DETAIL_FULL :
			    !strcmp(det, "normal") ? PH_DETAIL_NORMAL :
						     PH_DETAIL_SUMMARY;
		if (c->tool->flags & PH_TOOL_WINDOW)
			resolve_window(c);
		args_ok = true;
	}
	if (args_ok && (t->flags & PH_TOOL_BACKGROUND) && m->serving) {
		pthread_attr_t at;
		int rc;

		pthread_mutex_lock(&m->mu);
		m->bg = k;
		pthread_mutex_unlock(&m->mu);
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&th, &at, call_thread, k);
		pthread_attr_destroy(&at);
		if (!rc)
			return; /* it answers when done */
		pthread_mutex_lock(&m->mu);
		m->bg = NULL;
		pthread_mutex_unlock(&m->mu);
		ph_warn("mcp: no thread for %s; it runs in line", t->name);
	}
	call_run(k, args_ok);
	call_answer(k, out);
	call_free(k);
}

/* --- dispatch --------------------------------------------------------------
 */

/*
 * notifications/cancelled: the background call of that id stops (its
 * tool sees ph_mcp_cancelled) and is never answered.  Any other id names
 * a request answered already, or unknown: ignored, as the spec allows.
 */
static void cancel(struct ph_mcp *m, const struct ph_json *request_id)
{
	struct ph_buf b = PH_BUF_INIT(256);

	if (!m->serving || !request_id || json_text(request_id, &b))
		goto out;
	pthread_mutex_lock(&m->mu);
	if (m->bg) {
		struct call *k = m->bg;

		if (k->id_text.len == b.len &&
		    !memcmp(k->id_text.buf, b.buf, b.len))
			k->c.cancelled = 1;
	}
	pthread_mutex_unlock(&m->mu);
out:
	ph_buf_release(&b);
}

void ph_mcp_handle(struct ph_mcp *m, const char *line, size_t len,
		   struct ph_buf *out)
{
	struct ph_arena a;
	struct ph_json_reader reader;
	struct ph_json *req = NULL;
	struct ph_err err = { 0 };
	const struct ph_json *id, *method, *params;
	struct ph_jw jw;
	size_t start = out->len;
	char ebuf[256];
	int rc;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return;
	ph_arena_init(&a, 1 << 14, PH_MCP_LINE_CAP * 8);
	/* A huge integer argument is the tool's to refuse, with this
	 * request's id: a parse error could name none (ph_json.h). */
	ph_json_reader_init(&reader);
	reader.big_ints_as_doubles = true;
	rc = ph_json_read(&reader, &a, line, len, &req, &err);
	ph_json_reader_release(&reader);
	if (rc) {
		rpc_error(out, NULL, -32700, "parse error: %s",
			  ph_err_format(&err, ebuf, sizeof(ebuf)));
		goto out;
	}
	if (req->type == PH_JSON_ARRAY) {
		rpc_error(out, NULL, -32600,
			  "JSON-RPC batches are not supported: send one "
			  "request per line");
		goto out;
	}
	id = ph_json_get(req, "id");
	method = ph_json_get(req, "method");
	params = ph_json_get(req, "params");
	if (!ph_json_is(req, PH_JSON_OBJECT) ||
	    !ph_json_streq(ph_json_get(req, "jsonrpc"), "2.0") ||
	    !ph_json_is(method, PH_JSON_STRING)) {
		/* A response from the client (we send no requests): ignore. */
		if (ph_json_is(req, PH_JSON_OBJECT) && !method &&
		    (ph_json_get(req, "result") || ph_json_get(req, "error")))
			goto out;
		rpc_error(out, id, -32600,
			  "invalid request: need {\"jsonrpc\":\"2.0\", "
			  "\"method\": string, \"id\"?, \"params\"?}");
		goto out;
	}
	if (id && id->type != PH_JSON_INT && id->type != PH_JSON_STRING) {
		rpc_error(out, NULL, -32600,
			  "invalid request: id must be a string or an integer");
		goto out;
	}
	if (!id) {
		/* Notifications: initialized, cancelled (see the top), others;
		 * never answered, not even a bad one. */
		if (ph_json_streq(method, "notifications/cancelled"))
			cancel(m, ph_json_get(params, "requestId"));
		goto out;
	}
	if (ph_json_streq(method, "initialize")) {
		const struct ph_json *pv =
			ph_json_get(params, "protocolVersion");
		const char *v = ph_mcp_negotiate(
			ph_json_is(pv, PH_JSON_STRING) ? pv->u.s : NULL,
			ph_json_is(pv, PH_JSON_STRING) ? pv->n : 0);

		snprintf(m->client_version, sizeof(m->client_version), "%s", v);
		result_begin(&jw, out, id);
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "protocolVersion", v);
		ph_jw_key(&jw, "capabilities");
		ph_jw_obj_begin(&jw);
		ph_jw_key(&jw, "tools");
		ph_jw_obj_begin(&jw);
		ph_jw_kv_bool(&jw, "listChanged", false);
		ph_jw_obj_end(&jw);
		ph_jw_obj_end(&jw);
		ph_jw_key(&jw, "serverInfo");
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "name", "porthole");
		ph_jw_kv_str(&jw, "title", "Porthole");
		ph_jw_kv_str(&jw, "version", PORTHOLE_VERSION);
		ph_jw_obj_end(&jw);
		ph_jw_kv_str(&jw, "instructions", instructions);
		ph_jw_obj_end(&jw);
		result_end(&jw, out, start, id);
	} else if (ph_json_streq(method, "ping")) {
		result_begin(&jw, out, id);
		ph_jw_obj_begin(&jw);
		ph_jw_obj_end(&jw);
		result_end(&jw, out, start, id);
	} else if (ph_json_streq(method, "tools/list")) {
		result_begin(&jw, out, id);
		ph_jw_obj_begin(&jw);
		ph_jw_key(&jw, "tools");
		ph_jw_arr_begin(&jw);
		for (size_t i = 0; ph_mcp_tools[i]; i++)
			ph_mcp_write_tool(&jw, ph_mcp_tools[i]);
		ph_jw_arr_end(&jw);
		ph_jw_obj_end(&jw);
		result_end(&jw, out, start, id);
	} else if (ph_json_streq(method, "tools/call")) {
		if (params && !ph_json_is(params, PH_JSON_OBJECT))
			rpc_error(out, id, -32602, "params must be an object");
		else
			tools_call(m, id, params, out);
	} else {
		rpc_error(out, id, -32601,
			  "method '%.*s' not found; this server answers "
			  "initialize, ping, tools/list, tools/call",
			  (int)(method->n > 80 ? 80 : method->n), method->u.s);
	}
out:
	ph_arena_release(&a);
}

/* --- the loop --------------------------------------------------------------
 */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return PH_EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Writes what ans holds (among a background call's lines), then empties it. */
static int serve_write(struct ph_mcp *m, struct ph_buf *ans)
{
	int rc = 0;

	if (!ans->len)
		return 0;
	pthread_mutex_lock(&m->mu);
	rc = write_all(m->out_fd, ans->buf, ans->len);
	pthread_mutex_unlock(&m->mu);
	ph_buf_reset(ans);
	return rc;
}

int ph_mcp_serve(struct ph_mcp *m, int in, int out)
{
	struct ph_buf b = PH_BUF_INIT(PH_MCP_LINE_CAP + 65536);
	struct ph_buf ans = PH_BUF_INIT(ANSWER_CAP + 4096);
	bool skipping = false; /* inside a line over the cap */
	int rc = 0;

	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->idle, NULL);
	m->out_fd = out;
	m->serving = true;
	for (;;) {
		ssize_t r;
		size_t start = 0;
		char *nl;

		if (ph_buf_grow(&b, 65536)) {
			rc = PH_ENOMEM;
			break;
		}
		r = read(in, b.buf + b.len, 65536);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* A last request without its newline is still one. */
			if (r == 0 && b.len && !skipping) {
				ph_mcp_handle(m, b.buf, b.len, &ans);
				if (serve_write(m, &ans))
					rc = PH_EIO;
			}
			break;
		}
		ph_buf_setlen(&b, b.len + (size_t)r);
		while ((nl = memchr(b.buf + start, '\n', b.len - start))) {
			size_t len = (size_t)(nl - (b.buf + start));

			if (!skipping)
				ph_mcp_handle(m, b.buf + start, len, &ans);
			skipping = false;
			start += len + 1;
			if (serve_write(m, &ans)) {
				rc = PH_EIO;
				goto done;
			}
			ph_buf_reset(&ans);
		}
		ph_buf_consume(&b, start);
		if (b.len > PH_MCP_LINE_CAP) {
			/* Refuse once, then drop bytes up to its newline. */
			if (!skipping) {
				rpc_error(&ans, NULL, -32600,
					  "request line longer than %zu bytes: "
					  "refused",
					  PH_MCP_LINE_CAP);
				if (serve_write(m, &ans)) {
					rc = PH_EIO;
					break;
				}
				ph_buf_reset(&ans);
				ph_warn("mcp: a request line over %zu bytes was "
					"refused",
					PH_MCP_LINE_CAP);
			}
			skipping = true;
			ph_buf_reset(&b);
		}
	}
done:
	/*
	 * The client is gone: a background call still running is cancelled
	 * (a recorder is stopped and restores tracefs) and waited for.
	 */
	pthread_mutex_lock(&m->mu);
	if (m->bg)
		((struct call *)m->bg)->c.cancelled = 1;
	while (m->bg)
		pthread_cond_wait(&m->idle, &m->mu);
	pthread_mutex_unlock(&m->mu);
	m->serving = false;
	pthread_cond_destroy(&m->idle);
	pthread_mutex_destroy(&m->mu);
	ph_buf_release(&b);
	ph_buf_release(&ans);
	return rc;
}
