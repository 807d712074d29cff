/* SPDX-License-Identifier: Apache-2.0 */
/*
 * frames: late frames over a window, asked of the app; from the recorded
 * `frame` events (each one a late frame) when it cannot be asked.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

/* The worst `cap` frame events of a walk, as JankyFrame objects. */
struct worst_walk {
	struct ph_arena *arena;
	int64_t n;   /* late frames seen */
	size_t cap;  /* most kept */
	size_t kept; /* kept, worst first */
	struct kept_frame {
		int64_t total_ms, at;
		const char *json; /* a JankyFrame, in the arena */
		size_t len;
	} * k;
	struct ph_buf scratch;
};

/* A frame event as the app's JankyFrame (docs/protocol.md). */
static const char *janky_json(struct worst_walk *x, const struct ph_event *ev,
			      int64_t total, size_t *len)
{
	static const char *const keys[] = { "missedFrames", "worstPhase",
					    "phases", "firstDraw" };
	struct ph_jw jw;
	char *s;

	ph_buf_reset(&x->scratch);
	ph_jw_init(&jw, &x->scratch);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_int(&jw, "at", ev->t);
	ph_jw_kv_int(&jw, "totalMs", total);
	for (size_t i = 0; i < PH_ARRAY_SIZE(keys); i++) {
		const struct ph_json *v = ph_ev_get(ev, keys[i]);

		if (v)
			ph_mcp_json_kv(&jw, keys[i], v);
	}
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw) ||
	    !(s = ph_arena_strndup(x->arena, x->scratch.buf, x->scratch.len)))
		return NULL;
	*len = x->scratch.len;
	return s;
}

static int worst_cb(void *ctx, const struct ph_event *ev)
{
	struct worst_walk *x = ctx;
	int64_t total = 0;
	size_t at;

	x->n++;
	ph_ev_int(ev, "totalMs", &total);
	/* Insertion into the kept list, worst first (newer first on a tie,
	 * as the agent sorts). */
	for (at = x->kept; at > 0; at--) {
		const struct kept_frame *p = &x->k[at - 1];

		if (p->total_ms > total ||
		    (p->total_ms == total && p->at > ev->t))
			break;
	}
	if (at >= x->cap)
		return 0;
	if (x->kept == x->cap)
		x->kept--; /* the least bad one goes */
	memmove(&x->k[at + 1], &x->k[at], (x->kept - at) * sizeof(x->k[0]));
	x->k[at] = (struct kept_frame){ total, ev->t, NULL, 0 };
	x->k[at].json = janky_json(x, ev, total, &x->k[at].len);
	x->kept++;
	return x->k[at].json ? 0 : 1;
}

/*
 * When the app cannot be asked: the window's frame events, counted, the
 * worst `limit` listed worst first in the app's FrameReport shape, so the
 * answer reads as the app's does.
 */
static int frames_from_events(struct ph_mcp_call *c, int64_t limit,
			      int64_t full_limit)
{
	struct worst_walk x = { .arena = c->arena,
				.scratch = PH_BUF_INIT((size_t)1 << 20) };
	struct ph_mcp_source src;
	size_t extra = 0;
	char why[400], ws[80];

	ph_mcp_why_not(c->m, why, sizeof(why));
	x.cap = (size_t)(full_limit > limit ? full_limit : limit);
	x.k = ph_arena_alloc(c->arena, sizeof(*x.k) * (x.cap + 1));
	if (!x.k) {
		ph_buf_release(&x.scratch);
		return ph_mcp_fail(c, "frames: out of memory");
	}
	if (ph_mcp_each(c, c->w, (uint64_t)1 << PH_KIND_FRAME, worst_cb, &x,
			&src) < 0) {
		ph_buf_release(&x.scratch);
		return ph_mcp_fail(c,
				   "cannot answer frames: the app is not "
				   "connected (%s), and no events of it are "
				   "held here or on disk. Call porthole_status "
				   "for the fix.",
				   why);
	}
	ph_buf_release(&x.scratch);
	c->is_error = false;
	ph_mcp_line(c,
		    "t=%s: %" PRId64 " late frame%s, from the frame events "
		    "recorded in %s (the app cannot be asked: %s)",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)), x.n, x.n == 1 ? "" : "s",
		    src.live ? "the live buffer" : src.path, why);
	if (x.kept)
		ph_mcp_more(c,
			    "; worst %" PRId64 " ms at t=%" PRId64
			    "; what_was_happening {at:%" PRId64 "} explains it",
			    x.k[0].total_ms, x.k[0].at, x.k[0].at);
	if (src.note[0])
		ph_mcp_more(c, " (%s)", src.note);
	ph_jw_kv_str(&c->jw, "source", src.live ? "live" : src.path);
	ph_jw_kv_str(&c->jw, "notConnected", why);
	ph_jw_key(&c->jw, "frames");
	ph_jw_obj_begin(&c->jw);
	ph_jw_kv_int(&c->jw, "jankyFrames", x.n);
	ph_jw_key(&c->jw, "worst");
	ph_jw_arr_begin(&c->jw);
	for (size_t i = 0; i < x.kept; i++) {
		if ((int64_t)i < limit)
			ph_jw_raw(&c->jw, x.k[i].json, x.k[i].len);
		else
			extra += x.k[i].len + 1; /* and a comma */
	}
	ph_jw_arr_end(&c->jw);
	ph_jw_obj_end(&c->jw);
	ph_mcp_mark(c, c->w.to);
	if (extra)
		c->full_payload = c->payload.len + extra + 1; /* and the } */
	return 0;
}

static int frames_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *worst;
	int64_t limit = ph_mcp_limit(c, "limit", 10, 100);
	int64_t janky = 0, interval = 0;
	char ws[80];

	if (ph_mcp_window_refused(c))
		return 0;
	if (!ph_mcp_connected(c->m))
		return frames_from_events(c, limit,
					  ph_mcp_full_limit(c, "limit", 100));
	if (ph_mcp_app(c, "frames", ph_mcp_window_params(c, limit, NULL), &r))
		return 0;
	ph_json_as_int(ph_json_get(r, "jankyFrames"), &janky);
	ph_json_as_int(ph_json_get(r, "frameIntervalMs"), &interval);
	worst = ph_json_get(r, "worst");
	/*
	 * The line holds what the window alone decides, the same at every
	 * detail level: its late frames and the worst of them.  The app's
	 * totalFrames counts since it started, so it stays in the payload.
	 */
	ph_mcp_line(c, "t=%s: %" PRId64 " late frame%s (budget %" PRId64 " ms)",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)), janky,
		    janky == 1 ? "" : "s", interval);
	if (worst && worst->n) {
		const struct ph_json *w0 = &worst->u.items[0], *ph;
		int64_t at = 0, ms = 0;

		/* Worst first on the wire; a runtime that does not sort
		 * still gets its worst named. */
		ph_json_as_int(ph_json_get(w0, "totalMs"), &ms);
		for (uint32_t i = 1; i < worst->n; i++) {
			int64_t a = 0;

			ph_json_as_int(
				ph_json_get(&worst->u.items[i], "totalMs"), &a);
			if (a > ms) {
				w0 = &worst->u.items[i];
				ms = a;
			}
		}
		ph = ph_json_get(w0, "worstPhase");
		ph_json_as_int(ph_json_get(w0, "at"), &at);
		ph_mcp_more(c,
			    "; worst %" PRId64 " ms at t=%" PRId64
			    " (phase %.*s); what_was_happening {at:%" PRId64
			    "} explains it",
			    ms, at,
			    ph_json_is(ph, PH_JSON_STRING) ? (int)ph->n : 1,
			    ph_json_is(ph, PH_JSON_STRING) ? ph->u.s : "?", at);
	}
	ph_mcp_app_notes(c, r, "no longer held");
	ph_mcp_put(c, "frames", r);
	ph_mcp_mark(c, c->w.to);
	if (worst && (int64_t)worst->n >= limit && ph_mcp_capped(c, "limit"))
		ph_mcp_full_app(c, "frames", ph_mcp_window_params(c, 100, NULL),
				r);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_frames = {
	.name = "frames",
	.title = "Late frames",
	.description = "Frames over a window: how many, how many were late "
		       "against the display's budget, and the worst ones "
		       "with the phase that ate the time (input, animation, "
		       "layoutMeasure, draw...). Asked of the app; from its "
		       "recorded frame events when it is not connected.",
	.props = "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "1000,\"description\":\"most late frames listed; default 10 "
		 "(100 at detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = frames_call,
};
