/* SPDX-License-Identifier: Apache-2.0 */
/*
 * logs: the app's log lines over a window, by minimum level.
 *
 * Asked of the app, whose ring keeps only its newest events of every
 * kind; the host's own log events (the live buffer and the session file,
 * as timeline reads them) answer instead when they hold lines of the
 * window the app no longer does, and when the app cannot be asked.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

static const char order[] = "VDIWEF";

/* A level's rank in order, or -1. */
static int level_rank(const char *s, size_t n)
{
	const char *p = n == 1 ? strchr(order, s[0]) : NULL;

	return p && *p ? (int)(p - order) : -1;
}

/* What a line must pass: the `level`, `tag` and `contains` arguments. */
struct filter {
	int min;	 /* minimum rank; 0 takes every line */
	const char *tag; /* substring, case-insensitive, or NULL */
	const char *has; /* substring of the message, or NULL */
};

/* Walks the host's log events of the window: counts, then keeps some. */
struct held {
	struct filter f;
	int64_t n;	   /* lines matched so far */
	int64_t first;	   /* the first index kept (second walk) */
	int64_t matched;   /* from the first walk */
	size_t levels[6];  /* matched lines per level */
	const char **kept; /* entries as JSON text, oldest first */
	size_t *kept_len;
	int64_t nkept, cap; /* kept, and room */
	struct ph_arena *arena;
	struct ph_buf scratch;
};

static bool line_matches(const struct filter *f, const struct ph_event *ev,
			 int *rank)
{
	const char *lv = "", *tag = "", *msg = "";
	size_t lvn = 0, tagn = 0, msgn = 0;
	char tagbuf[256];

	ph_ev_str(ev, "level", &lv, &lvn);
	ph_ev_str(ev, "tag", &tag, &tagn);
	ph_ev_str(ev, "message", &msg, &msgn);
	*rank = level_rank(lv, lvn);
	if (f->min && *rank < f->min)
		return false;
	snprintf(tagbuf, sizeof(tagbuf), "%.*s", (int)tagn, tag);
	if (f->tag && !strcasestr(tagbuf, f->tag))
		return false;
	return !f->has || memmem(msg, msgn, f->has, strlen(f->has));
}

/* One event as a LogPage entry, the app's shape. */
static int keep_entry(struct held *h, const struct ph_event *ev)
{
	static const char *const keys[] = { "wallTime", "level", "tag",
					    "pid",	"tid",	 "message" };
	struct ph_jw jw;
	char *copy;

	ph_buf_reset(&h->scratch);
	ph_jw_init(&jw, &h->scratch);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_int(&jw, "t", ev->t);
	for (size_t i = 0; i < PH_ARRAY_SIZE(keys); i++) {
		const struct ph_json *v = ph_ev_get(ev, keys[i]);

		if (v)
			ph_mcp_json_kv(&jw, keys[i], v);
	}
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw) ||
	    !(copy = ph_arena_strndup(h->arena, h->scratch.buf,
				      h->scratch.len)))
		return -1;
	h->kept[h->nkept] = copy;
	h->kept_len[h->nkept++] = h->scratch.len;
	return 0;
}

static int held_cb(void *ctx, const struct ph_event *ev)
{
	struct held *h = ctx;
	int rank;

	if (!line_matches(&h->f, ev, &rank))
		return 0;
	if (!h->kept) {
		if (rank >= 0)
			h->levels[rank]++;
		h->n++;
		return 0;
	}
	if (h->n++ >= h->first && h->nkept < h->cap)
		return keep_entry(h, ev) ? 1 : 0;
	return 0;
}

/* Counts the window's matching lines the host holds; -1: no source. */
static int64_t held_count(struct ph_mcp_call *c, struct held *h,
			  struct ph_mcp_source *src)
{
	int64_t n = ph_mcp_each(c, c->w, (uint64_t)1 << PH_KIND_LOG, held_cb, h,
				src);

	h->matched = h->n;
	return n < 0 ? -1 : h->matched;
}

/*
 * Answers from the host's log events: the newest `limit` of the window,
 * newest first, as the app's LogPage (`entries`), with where they came
 * from.  why: the line's reason, after the window.
 */
static int answer_held(struct ph_mcp_call *c, struct held *h, int64_t limit,
		       int64_t full_limit, const char *lv, const char *why)
{
	struct ph_mcp_source src;
	size_t extra = 0;
	char ws[80];

	if (full_limit < limit)
		full_limit = limit;
	h->cap = h->matched < full_limit ? h->matched : full_limit;
	h->first = h->matched - h->cap;
	h->n = 0;
	h->kept = ph_arena_alloc(c->arena,
				 sizeof(*h->kept) * (size_t)(h->cap + 1));
	h->kept_len = ph_arena_alloc(c->arena, sizeof(*h->kept_len) *
						       (size_t)(h->cap + 1));
	if (!h->kept || !h->kept_len)
		return ph_mcp_fail(c, "logs: out of memory");
	if (ph_mcp_each(c, c->w, (uint64_t)1 << PH_KIND_LOG, held_cb, h, &src) <
	    0)
		return 0;
	ph_mcp_line(c,
		    "t=%s%s%s: %" PRId64
		    " log line%s (E %zu, W %zu, I %zu, F %zu), %s",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)), lv ? " level>=" : "",
		    lv ? lv : "", h->matched, h->matched == 1 ? "" : "s",
		    h->levels[4], h->levels[3], h->levels[2], h->levels[5],
		    why);
	if (src.note[0])
		ph_mcp_more(c, " (%s)", src.note);
	if (h->matched > limit)
		ph_mcp_more(c, ", newest %" PRId64 " returned (limit)", limit);
	ph_jw_key(&c->jw, "logs");
	ph_jw_obj_begin(&c->jw);
	ph_jw_key(&c->jw, "entries");
	ph_jw_arr_begin(&c->jw);
	for (int64_t i = h->nkept - 1, k = 0; i >= 0; i--, k++) {
		if (k < limit)
			ph_jw_raw(&c->jw, h->kept[i], h->kept_len[i]);
		else
			extra += h->kept_len[i] + 1; /* and a comma */
	}
	ph_jw_arr_end(&c->jw);
	ph_jw_kv_int(&c->jw, "matched", h->matched);
	ph_jw_kv_str(&c->jw, "source", src.live ? "live" : src.path);
	ph_jw_obj_end(&c->jw);
	ph_mcp_mark(c, c->w.to);
	if (extra)
		c->full_payload = c->payload.len + extra + 1; /* and the } */
	return 0;
}

static int logs_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *e;
	int64_t limit = ph_mcp_limit(c, "limit", 20, 200);
	int64_t full_limit = ph_mcp_full_limit(c, "limit", 200);
	struct ph_buf x = PH_BUF_INIT(1 << 16);
	struct ph_jw jw;
	const char *lv = ph_mcp_arg_str(c, "level", NULL);
	const char *tag = ph_mcp_arg_str(c, "tag", NULL);
	const char *has = ph_mcp_arg_str(c, "contains", NULL);
	const char *extra = NULL;
	struct held h = { .arena = c->arena,
			  .scratch = PH_BUF_INIT((size_t)1 << 20) };
	struct ph_mcp_source src;
	int64_t have, evicted = 0;
	size_t levels[6] = { 0 };
	char ws[80], why[400], said[200];
	int rc = 0;

	if (ph_mcp_window_refused(c))
		goto out;
	h.f.min = lv ? level_rank(lv, strlen(lv)) : 0;
	if (h.f.min < 0)
		h.f.min = 0;
	h.f.tag = tag && *tag ? tag : NULL;
	h.f.has = has && *has ? has : NULL;
	/* members only: write an object and drop its braces */
	ph_jw_init(&jw, &x);
	ph_jw_obj_begin(&jw);
	if (lv)
		ph_jw_kv_str(&jw, "level", lv);
	if (tag)
		ph_jw_kv_str(&jw, "tag", tag);
	if (has)
		ph_jw_kv_str(&jw, "contains", has);
	ph_jw_obj_end(&jw);
	if (!ph_jw_finish(&jw) && x.len > 2)
		extra = ph_arena_strndup(c->arena, x.buf + 1, x.len - 2);
	ph_buf_release(&x);
	if (!ph_mcp_connected(c->m)) {
		if (held_count(c, &h, &src) < 0) {
			ph_mcp_fail(c,
				    "cannot answer logs: the app is not "
				    "connected (%s), and no log events of it "
				    "are held here or on disk. Call "
				    "porthole_status for the fix.",
				    ph_mcp_why_not(c->m, why, sizeof(why)));
			goto out;
		}
		ph_jw_kv_str(&c->jw, "notConnected",
			     ph_mcp_why_not(c->m, why, sizeof(why)));
		snprintf(said, sizeof(said),
			 "from the log events recorded (the app cannot be "
			 "asked: %.120s)",
			 why);
		rc = answer_held(c, &h, limit, full_limit, lv, said);
		goto out;
	}
	/* What the host holds of the window; no source is not an error while
	 * the app can be asked. */
	have = held_count(c, &h, &src);
	c->is_error = false; /* no source here: the app may still answer */
	if (ph_mcp_app(c, "logs", ph_mcp_window_params(c, limit, extra), &r))
		goto out;
	e = ph_json_get(r, "entries");
	ph_json_as_int(ph_json_get(r, "evicted"), &evicted);
	/*
	 * The app's ring keeps its newest events of every kind, so a burst
	 * of others pushes log lines out of it: when the host holds more of
	 * the window than the app gave (and the app's list was not cut by
	 * the limit), the host's lines answer.
	 */
	if (have > 0 &&
	    (int64_t)(e ? e->n : 0) < (have < limit ? have : limit)) {
		snprintf(said, sizeof(said),
			 "from the log events recorded (the app holds %u of "
			 "them; %" PRId64 " older line%s no longer held there)",
			 e ? e->n : 0, evicted, evicted == 1 ? " is" : "s are");
		rc = answer_held(c, &h, limit, full_limit, lv, said);
		goto out;
	}
	for (uint32_t i = 0; e && i < e->n; i++) {
		const struct ph_json *l = ph_json_get(&e->u.items[i], "level");
		int k = ph_json_is(l, PH_JSON_STRING) ?
				level_rank(l->u.s, l->n) :
				-1;

		if (k >= 0)
			levels[k]++;
	}
	ph_mcp_line(c, "t=%s%s%s: %u log line%s (E %zu, W %zu, I %zu, F %zu)",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)), lv ? " level>=" : "",
		    lv ? lv : "", e ? e->n : 0, e && e->n == 1 ? "" : "s",
		    levels[4], levels[3], levels[2], levels[5]);
	if (e && (int64_t)e->n >= limit)
		ph_mcp_more(c, ", newest %" PRId64 " returned (limit)", limit);
	for (uint32_t i = 0; e && i < e->n; i++) {
		const struct ph_json *l = ph_json_get(&e->u.items[i], "level");
		const struct ph_json *m =
			ph_json_get(&e->u.items[i], "message");
		int64_t t = 0;

		if (!ph_json_is(l, PH_JSON_STRING) || l->n != 1 ||
		    (l->u.s[0] != 'E' && l->u.s[0] != 'F') ||
		    !ph_json_is(m, PH_JSON_STRING))
			continue;
		ph_json_as_int(ph_json_get(&e->u.items[i], "t"), &t);
		ph_mcp_more(c, "; newest error at t=%" PRId64 ": %.*s", t,
			    ph_mcp_first_line(m, 120), m->u.s);
		break;
	}
	ph_mcp_app_notes(c, r, "no longer held");
	ph_mcp_put(c, "logs", r);
	ph_mcp_mark(c, c->w.to);
	if (e && (int64_t)e->n >= limit && ph_mcp_capped(c, "limit"))
		ph_mcp_full_app(c, "logs", ph_mcp_window_params(c, 200, extra),
				r);
out:
	ph_buf_release(&h.scratch);
	return rc;
}

const struct ph_mcp_tool ph_mcp_tool_logs = {
	.name = "logs",
	.title = "App logs",
	.description = "The app's log lines over a window, newest first, "
		       "filtered by minimum level (V D I W E F), tag and text. "
		       "Asked of the app; from its recorded log events when "
		       "it is not connected.",
	.props = "\"level\":{\"type\":\"string\",\"enum\":[\"V\",\"D\",\"I\","
		 "\"W\",\"E\",\"F\"],\"description\":\"minimum level\"},"
		 "\"tag\":{\"type\":\"string\",\"description\":\"tag "
		 "substring, case-insensitive\"},"
		 "\"contains\":{\"type\":\"string\",\"description\":\"text "
		 "the message contains\"},"
		 "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "5000,\"description\":\"most lines; default 20 (200 at "
		 "detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = logs_call,
};
