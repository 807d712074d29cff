/* SPDX-License-Identifier: Apache-2.0 */
/*
 * what_was_happening: the narrative for one instant, from the events
 * around it: the screen, the work in flight, what the main thread was
 * doing, and the state written just before.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

#define BEFORE_MS 2000 /* how far back state writes count as "just" */

struct at_ctx {
	struct ph_mcp_call *c;
	int64_t at;
	char screen[160];
	int64_t screen_t;
	int http, db, work, main_events, writes;
	char main_what[300];
	int64_t stall_t; /* the stall last counted (its start), or INT64_MIN */
	char writes_s[300];
	size_t wo;
	int64_t first_t; /* the oldest event the walk saw */
	int64_t seen;	 /* events the walk saw */
};

/* The keys a state_write names (the wire's `keys`, an array of strings),
 * appended to writes_s while it has room. */
static void note_keys(struct at_ctx *x, const struct ph_json *keys)
{
	for (uint32_t i = 0; ph_json_is(keys, PH_JSON_ARRAY) && i < keys->n;
	     i++) {
		const struct ph_json *k = &keys->u.items[i];

		if (!ph_json_is(k, PH_JSON_STRING) ||
		    x->wo >= sizeof(x->writes_s) - 1)
			continue;
		x->wo += (size_t)snprintf(x->writes_s + x->wo,
					  sizeof(x->writes_s) - x->wo, "%s%.*s",
					  x->wo ? ", " : "",
					  (int)(k->n > 64 ? 64 : k->n), k->u.s);
	}
	if (x->wo >= sizeof(x->writes_s))
		x->wo = sizeof(x->writes_s) - 1;
}

static int cb(void *ctx, const struct ph_event *ev)
{
	struct at_ctx *x = ctx;
	int64_t f, t, v;
	char buf[200];

	ph_ev_span(ev, &f, &t);
	x->seen++;
	if (ev->t < x->first_t)
		x->first_t = ev->t;
	switch (ev->kind) {
	case PH_KIND_NAV:
		if (ev->t <= x->at && ev->t >= x->screen_t) {
			x->screen_t = ev->t;
			ph_ev_strcpy(ev, "route", x->screen, sizeof(x->screen));
		}
		return 0;
	case PH_KIND_STATE_WRITE:
		if (ev->t <= x->at && ev->t >= x->at - BEFORE_MS) {
			x->writes++;
			note_keys(x, ph_ev_get(ev, "keys"));
			break;
		}
		return 0;
	default: break;
	}
	if (f > x->at || t < x->at)
		return 0; /* not covering the instant */
	switch (ev->kind) {
	case PH_KIND_HTTP_END: x->http++; break;
	case PH_KIND_DB_END: x->db++; break;
	case PH_KIND_WORK_END: x->work++; break;
	case PH_KIND_BLOCKED:
		/* A stall's events (ongoing ones, then the closing one) share
		 * its start as t: one stall, told by its newest. */
		if (ev->t != x->stall_t)
			x->main_events++;
		x->stall_t = ev->t;
		ph_ev_int(ev, "durationMs", &v);
		snprintf(x->main_what, sizeof(x->main_what),
			 "blocked %" PRId64 " ms in %s", v,
			 ph_ev_strcpy(ev, "top", buf, sizeof(buf)));
		break;
	case PH_KIND_FRAME:
		x->main_events++;
		if (!x->main_what[0] && ph_ev_int(ev, "totalMs", &v))
			snprintf(x->main_what, sizeof(x->main_what),
				 "drawing a %" PRId64
				 " ms frame (worst phase %s)",
				 v,
				 ph_ev_strcpy(ev, "worstPhase", buf,
					      sizeof(buf)));
		break;
	default: return 0;
	}
	ph_jw_value(&x->c->jw, ev->frame ? ev->frame : ev->data);
	return 0;
}

/*
 * An instant before the oldest event the source holds (never recorded, or
 * evicted with no session file to fall back on), or after the app's now,
 * is not held: nothing is known of it, which is not the same as nothing
 * happening.  Says so and returns true.
 */
static int first_cb(void *ctx, const struct ph_event *ev)
{
	struct at_ctx *x = ctx;

	/* arrival order is not time order (a backfill, a session file) */
	x->seen++;
	if (ev->t < x->first_t)
		x->first_t = ev->t;
	return 0;
}

static bool not_held(struct ph_mcp_call *c, struct at_ctx *x,
		     const struct ph_mcp_source *src)
{
	int64_t now = ph_mcp_now(c->m);
	struct ph_mcp_source first_src;

	if (x->seen && x->at >= x->first_t && x->at <= now)
		return false;
	/* Nothing up to at: where do the events held start? */
	if (!x->seen &&
	    ph_mcp_each(c, PH_WINDOW_ALL, 0, first_cb, x, &first_src) < 0)
		c->is_error = false; /* answered below: nothing is held */
	ph_jw_kv_bool(&c->jw, "held", false);
	if (x->seen)
		ph_jw_kv_int(&c->jw, "heldFrom", x->first_t);
	ph_jw_kv_int(&c->jw, "now", now);
	if (x->at > now)
		ph_mcp_line(c,
			    "at t=%" PRId64 ": not held: it is after the "
			    "app's now (t=%" PRId64 "); nothing is known of it "
			    "yet (screen, main thread, work in flight)",
			    x->at, now);
	else if (x->seen)
		ph_mcp_line(c,
			    "at t=%" PRId64 ": not held: the events held here "
			    "start at t=%" PRId64 ", so the screen, the main "
			    "thread and the work in flight then are not known "
			    "(not seen, not quiet)",
			    x->at, x->first_t);
	else
		ph_mcp_line(c,
			    "at t=%" PRId64 ": not held: no event up to it "
			    "is held here, so the screen, the main thread and "
			    "the work in flight then are not known (not seen, "
			    "not quiet)",
			    x->at);
	if (src->note[0])
		ph_mcp_more(c, " (%s)", src->note);
	return true;
}

static int what_was_happening_call(struct ph_mcp_call *c)
{
	struct at_ctx x = { .c = c,
			    .screen_t = INT64_MIN,
			    .stall_t = INT64_MIN,
			    .first_t = INT64_MAX };
	struct ph_mcp_source src;
	int64_t at = ph_mcp_arg_int(c, "at", 0);
	int64_t around = ph_mcp_arg_int(c, "aroundMs", 0);
	struct ph_window w;

	x.at = at;
	/* nav may be long before: walk from the start, keep the newest */
	w.from = INT64_MIN;
	w.to = at + around;
	ph_jw_kv_int(&c->jw, "at", at);
	ph_jw_key(&c->jw, "covering");
	ph_jw_arr_begin(&c->jw);
	if (ph_mcp_each(c, w, 0, cb, &x, &src) < 0) {
		/* the call has failed with why; close what was opened */
		ph_jw_arr_end(&c->jw);
		return 0;
	}
	ph_jw_arr_end(&c->jw);
	if (not_held(c, &x, &src))
		return 0;
	ph_jw_kv_bool(&c->jw, "held", true);
	ph_jw_kv_str(&c->jw, "screen", x.screen[0] ? x.screen : NULL);
	ph_jw_kv_str(&c->jw, "mainThread", x.main_what[0] ? x.main_what : NULL);
	ph_jw_kv_str(&c->jw, "stateWrittenBefore", x.writes_s);
	ph_mcp_line(c,
		    "at t=%" PRId64 ": screen %s; main thread %s; in "
		    "flight: %d HTTP, %d quer%s, %d job%s; %d state "
		    "write%s in the %d ms before%s%s",
		    at, x.screen[0] ? x.screen : "unknown (no nav event yet)",
		    x.main_what[0] ? x.main_what : "not seen busy", x.http,
		    x.db, x.db == 1 ? "y" : "ies", x.work,
		    x.work == 1 ? "" : "s", x.writes, x.writes == 1 ? "" : "s",
		    BEFORE_MS, x.writes ? ": " : "", x.writes_s);
	if (src.note[0])
		ph_mcp_more(c, " (%s)", src.note);
	ph_mcp_more(c, ". Spans ending after the newest event are not "
		       "known yet");
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_what_was_happening = {
	.name = "what_was_happening",
	.title = "What was happening at t",
	.description = "The story of one instant on the app's clock (take "
		       "`at` from a finding's window or a frame): the screen "
		       "shown, the HTTP calls, queries and jobs in flight, "
		       "what the main thread was doing (a stall, a long "
		       "frame), and the state written just before. From the "
		       "live buffer or the session on disk.",
	.props = "\"at\":{\"type\":\"integer\",\"description\":\"the "
		 "instant, app clock ms\"},"
		 "\"aroundMs\":{\"type\":\"integer\",\"minimum\":0,"
		 "\"maximum\":60000,\"default\":0,\"description\":\"also "
		 "read events that end up to this long after at\"}",
	.required = "[\"at\"]",
	.flags = PH_TOOL_READONLY | PH_TOOL_IDEMPOTENT,
	.call = what_was_happening_call,
};
