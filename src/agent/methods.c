/* SPDX-License-Identifier: Apache-2.0 */
/*
 * methods.c: one request line in, one response line out (writer thread).
 *
 *	{"id":1,"method":"timeline","params":{"limit":100}}
 *	{"id":1,"ok":true,"result":{...}}  |  {"id":1,"ok":false,"error":"..."}
 *
 * A line that is not a request gets an error with id -1 and the byte
 * offset of what was wrong; the connection stays open.  The method table
 * is at the bottom; docs/protocol.md section 2 lists every method.
 */
#include "ph_common.h"
#include "server.h"
#include "collectors/collectors.h"
#include "ph_clock.h"
#include "ph_log.h"

struct method {
	const char *name;
	/* Writes the result value; returns NULL, or an error message. */
	const char *(*run)(struct ph_server *s, const struct ph_json *params,
			   struct ph_jw *w);
};

static const char *m_hello(struct ph_server *s, const struct ph_json *params,
			   struct ph_jw *w)
{
	(void)params;
	ph_collectors_hello(s->agent, w);
	return NULL;
}

static int64_t param_int(const struct ph_json *params, const char *key,
			 int64_t def)
{
	int64_t v;

	return ph_json_as_int(ph_json_get(params, key), &v) ? v : def;
}

static bool kind_wanted(const struct ph_json *kinds, uint16_t kind)
{
	const char *name = ph_wire_kind_name((enum ph_kind)kind);

	if (!ph_json_is(kinds, PH_JSON_ARRAY))
		return true;
	for (uint32_t i = 0; i < kinds->n; i++)
		if (ph_json_streq(&kinds->u.items[i], name))
			return true;
	return false;
}

/* What one timeline request selects; the ring is walked against it. */
struct tl_filter {
	const struct ph_json *kinds;
	bool cursor, windowed;
	int64_t since_seq, from, to;
};

static bool tl_match(const struct tl_filter *f, const struct ph_ring_entry *e)
{
	return (!f->cursor || (int64_t)e->seq >= f->since_seq) &&
	       kind_wanted(f->kinds, e->kind) &&
	       (!f->windowed || (e->t >= f->from && e->t <= f->to));
}

/*
 * timeline: by seq cursor (the first `limit` from sinceSeq), by time window
 * (the newest `limit` inside it), or neither (the newest `limit`).
 */
static const char *m_timeline(struct ph_server *s, const struct ph_json *params,
			      struct ph_jw *w)
{
	int64_t limit = param_int(params, "limit", 1000);
	int64_t now = ph_clock_uptime_ms(), v;
	struct tl_filter f = {
		.kinds = ph_json_get(params, "kinds"),
		.windowed = ph_json_get(params, "sinceMs") ||
			    ph_json_get(params, "from") ||
			    ph_json_get(params, "to"),
		.to = now,
	};
	size_t n = ph_ring_count(&s->ring), first = 0, last = n, taken = 0;

	if (limit <= 0)
		return "EINVAL: limit must be positive";
	f.cursor = ph_json_as_int(ph_json_get(params, "sinceSeq"), &v);
	f.since_seq = f.cursor ? v : 0;
	if (ph_json_as_int(ph_json_get(params, "sinceMs"), &v))
		f.from = ph_state_since(now, v);
	if (ph_json_as_int(ph_json_get(params, "from"), &v))
		f.from = v;
	if (ph_json_as_int(ph_json_get(params, "to"), &v))
		f.to = v;
	if (f.cursor) {
		/* oldest first from the cursor: find the end of the page */
		for (size_t i = 0; i < n; i++) {
			const struct ph_ring_entry *e = ph_ring_at(&s->ring, i);

			if (!tl_match(&f, e))
				continue;
			if (!taken)
				first = i;
			last = i + 1;
			if ((int64_t)++taken == limit)
				break;
		}
		if (!taken)
			first = last = 0;
	} else {
		/* the newest `limit` that match, still sent oldest first */
		for (size_t i = n; i-- > 0;) {
			const struct ph_ring_entry *e = ph_ring_at(&s->ring, i);

			if (!tl_match(&f, e))
				continue;
			first = i;
			if (!taken)
				last = i + 1;
			if ((int64_t)++taken == limit)
				break;
		}
		if (!taken)
			first = last = 0;
	}
	ph_jw_obj_begin(w);
	ph_jw_key(w, "events");
	ph_jw_arr_begin(w);
	for (size_t i = first; i < last; i++) {
		const struct ph_ring_entry *e = ph_ring_at(&s->ring, i);

		if (!tl_match(&f, e))
			continue;
		ph_jw_raw(w, "", 0); /* the comma */
		if (ph_ring_copy(&s->ring, e, w->out))
			w->err = PH_ETOOBIG;
	}
	ph_jw_arr_end(w);
	ph_jw_kv_int(w, "droppedBefore",
		     (int64_t)ph_ring_oldest_seq(&s->ring, s->next_seq));
	ph_jw_kv_int(w, "now", now);
	ph_jw_obj_end(w);
	return NULL;
}

/* Lanes a thread holds now (lanes.h): the rest are free or being drained. */
static int64_t lanes_taken(const struct ph_lanes *l)
{
	int64_t n = 0;

	for (int i = 0; l->lane && i < PH_LANES; i++)
		n += atomic_load_explicit(&l->lane[i].owner,
					  memory_order_relaxed) > 0;
	return n;
}

static const char *m_stats(struct ph_server *s, const struct ph_json *params,
			   struct ph_jw *w)
{
	int clients = 0;
	size_t unsent = 0;

	(void)params;
	for (int i = 0; i < PH_MAX_CLIENTS; i++) {
		const struct ph_client *c = &s->clients[i];

		clients += c->fd >= 0;
		unsent += c->fd >= 0 ? c->out.len - c->out_off : 0;
	}
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "emitted", (int64_t)s->next_seq);
	ph_jw_kv_int(w, "dropped", (int64_t)s->dropped);
	ph_jw_kv_int(w, "ringCapacity", (int64_t)s->ring.slots);
	ph_jw_kv_int(w, "ringUsed", (int64_t)ph_ring_count(&s->ring));
	ph_jw_kv_int(w, "oldestSeq",
		     (int64_t)ph_ring_oldest_seq(&s->ring, s->next_seq));
	ph_jw_kv_int(w, "queueCapacity", (int64_t)s->agent->queue.mask + 1);
	ph_jw_kv_int(w, "lanes", lanes_taken(&s->agent->lanes));
	ph_jw_kv_int(w, "laneCapacity",
		     s->agent->lanes.lane ?
			     (int64_t)s->agent->lanes.lane[0].q.mask + 1 :
			     0);
	ph_jw_kv_int(w, "clients", clients);
	ph_jw_kv_int(w, "unsentBytes", (int64_t)unsent);
	ph_jw_obj_end(w);
	return NULL;
}

/* stats for the asking client itself: what it was sent and lost. */
static struct ph_client *current;

static const char *m_client_stats(struct ph_server *s,
				  const struct ph_json *params, struct ph_jw *w)
{
	(void)params;
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "firstSeq", (int64_t)current->first_seq);
	ph_jw_kv_int(w, "delivered", (int64_t)current->delivered);
	ph_jw_kv_int(w, "droppedForClient", (int64_t)current->lagged);
	ph_jw_kv_int(w, "droppedInQueue", (int64_t)current->queue_lost);
	ph_jw_kv_bool(w, "lagging", current->lagging);
	ph_jw_kv_int(w, "clients", s->nclients);
	ph_jw_kv_int(w, "shareBytes", (int64_t)ph_server_client_share(s));
	ph_jw_obj_end(w);
	return NULL;
}

static const char *m_recompositions(struct ph_server *s,
				    const struct ph_json *params,
				    struct ph_jw *w)
{
	ph_state_recompositions(&s->state, w, params, ph_clock_uptime_ms());
	return NULL;
}

static const char *m_nav_state(struct ph_server *s,
			       const struct ph_json *params, struct ph_jw *w)
{
	(void)params;
	ph_state_nav(&s->state, w, ph_clock_uptime_ms());
	return NULL;
}

static const char *m_state(struct ph_server *s, const struct ph_json *params,
			   struct ph_jw *w)
{
	(void)params;
	ph_state_state(&s->state, w, ph_clock_uptime_ms());
	return NULL;
}

static const char *m_inflight(struct ph_server *s, const struct ph_json *params,
			      struct ph_jw *w)
{
	ph_state_inflight(&s->state, w, params, ph_clock_uptime_ms());
	return NULL;
}

static const char *m_frames(struct ph_server *s, const struct ph_json *params,
			    struct ph_jw *w)
{
	ph_state_frames(&s->state, w, params, ph_collectors_frames_total(),
			s->agent->refresh_hz);
	return NULL;
}

static const char *m_blocking(struct ph_server *s, const struct ph_json *params,
			      struct ph_jw *w)
{
	ph_state_blocking(&s->state, w, params,
			  s->agent->cfg.stall_ms ? s->agent->cfg.stall_ms :
						   200);
	return NULL;
}

static const char *m_reset(struct ph_server *s, const struct ph_json *params,
			   struct ph_jw *w)
{
	(void)params;
	ph_state_reset(&s->state, ph_clock_uptime_ms());
	ph_jw_obj_begin(w);
	ph_jw_kv_bool(w, "ok", true);
	ph_jw_obj_end(w);
	return NULL;
}

/* logs: the log events in the ring, filtered. */
static const char *m_logs(struct ph_server *s, const struct ph_json *params,
			  struct ph_jw *w)
{
	return ph_collectors_logs_method(s, params, w);
}

static const char *m_setup(struct ph_server *s, const struct ph_json *params,
			   struct ph_jw *w)
{
	(void)params;
	(void)s;
	ph_collectors_setup(w);
	return NULL;
}

static const char *m_exit_trace(struct ph_server *s,
				const struct ph_json *params, struct ph_jw *w)
{
	(void)s;
	return ph_collectors_exit_trace(params, w);
}

static const char *m_exits(struct ph_server *s, const struct ph_json *params,
			   struct ph_jw *w)
{
	(void)s;
	(void)params;
	return ph_collectors_exits(w);
}

static const char *m_semantics(struct ph_server *s,
			       const struct ph_json *params, struct ph_jw *w)
{
	(void)s;
	return ph_collectors_semantics(params, w);
}

static const char *m_screenshot(struct ph_server *s,
				const struct ph_json *params, struct ph_jw *w)
{
	(void)s;
	return ph_collectors_screenshot(params, w);
}

static const struct method methods[] = {
	{ "hello", m_hello },
	{ "recompositions", m_recompositions },
	{ "semantics_tree", m_semantics },
	{ "nav_state", m_nav_state },
	{ "state", m_state },
	{ "exit_trace", m_exit_trace },
	{ "exits", m_exits },
	{ "setup", m_setup },
	{ "inflight", m_inflight },
	{ "logs", m_logs },
	{ "timeline", m_timeline },
	{ "frames", m_frames },
	{ "blocking", m_blocking },
	{ "reset", m_reset },
	{ "stats", m_stats },
	{ "client_stats", m_client_stats },
	{ "screenshot", m_screenshot },
};

/*
 * The database methods run on the inspector's thread (inspector.c): a
 * query may take up to its deadline, and the writer must not wait for it.
 * Their answers come back through server.c's deliver_db_answer.
 */
static const struct {
	const char *name;
	int which;
} db_methods[] = {
	{ "db_tables", PH_DB_TABLES },
	{ "db_rows", PH_DB_ROWS },
	{ "db_page", PH_DB_ROWS },
	{ "db_query", PH_DB_QUERY },
};

static void respond_error(struct ph_server *s, int64_t id, const char *msg)
{
	struct ph_jw w;

	ph_buf_reset(&s->resp);
	ph_jw_init(&w, &s->resp);
	ph_jw_obj_begin(&w);
	ph_jw_kv_int(&w, "id", id);
	ph_jw_kv_bool(&w, "ok", false);
	ph_jw_kv_str(&w, "error", msg);
	ph_jw_obj_end(&w);
	if (ph_jw_finish(&w) || ph_buf_addch(&s->resp, '\n'))
		ph_buf_reset(&s->resp);
}

/*
 * "unknown method '<name>'", the name as the client sent it up to 100
 * bytes (less the part of a character cut there): a NUL in it shows as
 * \0 rather than ending the name there, and a longer name ends in "...".
 */
static void unknown_method(const struct ph_json *method, char *msg, size_t size)
{
	size_t at = (size_t)snprintf(msg, size, "unknown method '");
	size_t cut = method->n < 100 ? method->n : 100;

	/* not inside a UTF-8 character: the reply must stay valid JSON */
	while (cut < method->n && cut &&
	       ((uint8_t)method->u.s[cut] & 0xc0) == 0x80)
		cut--;
	for (size_t i = 0; i < cut && at + 8 < size; i++) {
		if (method->u.s[i] == '\0') {
			msg[at++] = '\\';
			msg[at++] = '0';
		} else {
			msg[at++] = method->u.s[i];
		}
	}
	snprintf(msg + at, size - at, "%s'", method->n > cut ? "..." : "");
}

int ph_methods_handle(struct ph_server *s, struct ph_client *c,
		      const char *line, size_t len)
{
	struct ph_json *req;
	const struct ph_json *method, *params;
	struct ph_err err = { 0 };
	int64_t id = -1;
	char msg[256];
	struct ph_jw w;
	const char *fail = NULL;
	size_t i;

	if (c->db_waiting)
		return PH_EAGAIN; /* its answers go out in the order asked */
	ph_arena_reset(&s->arena);
	if (ph_json_read(&s->reader, &s->arena, line, len, &req, &err)) {
		snprintf(msg, sizeof(msg),
			 "malformed request: %s at byte %" PRIu64, err.msg,
			 err.offset);
		respond_error(s, -1, msg);
		/* counted, so that a flood of bad lines is bounded too */
		c->refused += ph_server_client_full(s, c);
		goto send;
	}
	if (!ph_json_as_int(ph_json_get(req, "id"), &id))
		id = -1;
	method = ph_json_get(req, "method");
	params = ph_json_get(req, "params");
	if (!ph_json_is(method, PH_JSON_STRING)) {
		respond_error(s, id, "malformed request: no method");
		c->refused += ph_server_client_full(s, c);
		goto send;
	}
	/*
	 * A client that holds its share of unsent bytes is not reading what
	 * it asked for: its requests are refused (server.c drops it if it
	 * goes on asking), so answers count against the budget as events do.
	 */
	if (ph_server_client_full(s, c)) {
		c->refused++;
		snprintf(msg, sizeof(msg),
			 "EBUSY: %zu bytes wait unsent for this client; read "
			 "them before asking more",
			 c->out.len - c->out_off);
		respond_error(s, id, msg);
		goto send;
	}
	c->refused = 0;
	for (i = 0; i < PH_ARRAY_SIZE(db_methods); i++) {
		int rc;

		if (!ph_json_streq(method, db_methods[i].name))
			continue;
		rc = ph_inspector_submit(db_methods[i].which, line, len, id,
					 c->id, s->agent->wake_fd);
		if (rc == PH_EAGAIN)
			return PH_EAGAIN; /* another client's is running */
		if (rc) {
			respond_error(s, id,
				      "EIO: cannot start the database "
				      "inspector");
			goto send;
		}
		c->db_waiting = true; /* answered by ph_server's writer */
		return 0;
	}
	for (i = 0; i < PH_ARRAY_SIZE(methods); i++)
		if (ph_json_streq(method, methods[i].name))
			break;
	if (i == PH_ARRAY_SIZE(methods)) {
		unknown_method(method, msg, sizeof(msg));
		respond_error(s, id, msg);
		goto send;
	}
	ph_buf_reset(&s->resp);
	ph_jw_init(&w, &s->resp);
	ph_jw_obj_begin(&w);
	ph_jw_kv_int(&w, "id", id);
	ph_jw_kv_bool(&w, "ok", true);
	ph_jw_key(&w, "result");
	current = c;
	fail = methods[i].run(s, params, &w);
	ph_jw_obj_end(&w);
	if (fail) {
		respond_error(s, id, fail);
	} else if (ph_jw_finish(&w) || ph_buf_addch(&s->resp, '\n')) {
		respond_error(s, id,
			      "ETOOBIG: the answer is larger than the "
			      "response cap; ask for less (limit)");
	}
send:
	ph_server_reply(c, s->resp.buf, s->resp.len);
	return 0;
}
