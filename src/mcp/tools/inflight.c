/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inflight: what is running now (open HTTP with its phase, queries, work)
 * and the recent finished calls, windowed, asked of the app.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

static int inflight_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *http, *q, *work, *recent;
	int64_t limit = ph_mcp_limit(c, "limit", 25, 200);
	char ws[80];

	if (ph_mcp_window_refused(c))
		return 0;
	if (ph_mcp_app(c, "inflight", ph_mcp_window_params(c, limit, NULL), &r))
		return 0;
	http = ph_json_get(r, "http");
	q = ph_json_get(r, "queries");
	work = ph_json_get(r, "work");
	recent = ph_json_get(r, "recentHttp");
	ph_mcp_line(c, "now: %u open HTTP, %u running quer%s, %u work job%s",
		    http ? http->n : 0, q ? q->n : 0,
		    q && q->n == 1 ? "y" : "ies", work ? work->n : 0,
		    work && work->n == 1 ? "" : "s");
	for (uint32_t i = 0; http && i < http->n && i < 2; i++) {
		const struct ph_json *h = &http->u.items[i];
		const struct ph_json *u = ph_json_get(h, "url");
		const struct ph_json *ph = ph_json_get(h, "phase");
		int64_t el = 0;

		ph_json_as_int(ph_json_get(h, "elapsedMs"), &el);
		ph_mcp_more(c, "%s %.*s in phase %.*s for %" PRId64 " ms",
			    i ? ";" : ":",
			    ph_json_is(u, PH_JSON_STRING) ? (int)u->n : 0,
			    ph_json_is(u, PH_JSON_STRING) ? u->u.s : "",
			    ph_json_is(ph, PH_JSON_STRING) ? (int)ph->n : 1,
			    ph_json_is(ph, PH_JSON_STRING) ? ph->u.s : "?", el);
	}
	for (uint32_t i = 0; work && i < work->n && i < 2; i++) {
		const struct ph_json *n =
			ph_json_get(&work->u.items[i], "name");
		const struct ph_json *s =
			ph_json_get(&work->u.items[i], "state");
		int64_t at = 0;

		ph_json_as_int(
			ph_json_get(&work->u.items[i], "runAttemptCount"), &at);
		ph_mcp_more(c, "; job %.*s %.*s (attempt %" PRId64 ")",
			    ph_json_is(n, PH_JSON_STRING) ? (int)n->n : 1,
			    ph_json_is(n, PH_JSON_STRING) ? n->u.s : "?",
			    ph_json_is(s, PH_JSON_STRING) ? (int)s->n : 1,
			    ph_json_is(s, PH_JSON_STRING) ? s->u.s : "?", at);
	}
	ph_mcp_more(c,
		    "; %u recent finished call%s in t=%s (limit %" PRId64
		    " of a buffer of 200; bodies only on the newest 25)",
		    recent ? recent->n : 0, recent && recent->n == 1 ? "" : "s",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)), limit);
	ph_mcp_put(c, "inflight", r);
	ph_mcp_mark(c, c->w.to);
	if (recent && (int64_t)recent->n >= limit && ph_mcp_capped(c, "limit"))
		ph_mcp_full_app(c, "inflight",
				ph_mcp_window_params(c, 200, NULL), r);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_inflight = {
	.name = "inflight",
	.title = "In flight now",
	.description =
		"What the app is doing right now: open HTTP calls with their "
		"current phase (dns, connecting, waiting, body...), running "
		"database queries, background work; plus `recentHttp`, the "
		"finished calls in the window, newest first (limit 25 of a "
		"buffer of 200; bodies are kept only for the newest 25). Asked "
		"of the running app.",
	.props = "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "200,\"default\":25,\"description\":\"most recentHttp "
		 "entries\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = inflight_call,
};
