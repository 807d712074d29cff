/* SPDX-License-Identifier: Apache-2.0 */
/* blocking: main-thread stalls, queries and HTTP on the main thread. */
#include "ph_common.h"
#include "mcp/mcp.h"

static int blocking_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *st, *q, *h;
	int64_t limit = ph_mcp_limit(c, "limit", 10, 100);
	char ws[80];

	if (ph_mcp_window_refused(c))
		return 0;
	if (!ph_mcp_connected(c->m))
		return ph_mcp_events_instead(
			c, "blocking", "blocked,db_end", limit,
			ph_mcp_full_limit(c, "limit", 100));
	if (ph_mcp_app(c, "blocking", ph_mcp_window_params(c, limit, NULL), &r))
		return 0;
	st = ph_json_get(r, "stalls");
	q = ph_json_get(r, "mainThreadQueries");
	h = ph_json_get(r, "mainThreadHttp");
	ph_mcp_line(c,
		    "t=%s: %u main-thread stall%s, %u main-thread "
		    "quer%s, %u main-thread HTTP",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)), st ? st->n : 0,
		    st && st->n == 1 ? "" : "s", q ? q->n : 0,
		    q && q->n == 1 ? "y" : "ies", h ? h->n : 0);
	if (st && st->n) {
		const struct ph_json *s0 = &st->u.items[0];
		const struct ph_json *stack = ph_json_get(s0, "stack");
		int64_t at = 0, ms = 0;

		ph_json_as_int(ph_json_get(s0, "at"), &at);
		ph_json_as_int(ph_json_get(s0, "durationMs"), &ms);
		ph_mcp_more(
			c, "; stall %" PRId64 " ms at t=%" PRId64 " in %.*s",
			ms, at,
			ph_json_is(stack, PH_JSON_STRING) ?
				ph_mcp_first_line(stack, 120) :
				1,
			ph_json_is(stack, PH_JSON_STRING) ? stack->u.s : "?");
	}
	if (q && q->n) {
		const struct ph_json *sql = ph_json_get(&q->u.items[0], "sql");

		ph_mcp_more(c, "; query on main: %.*s",
			    ph_json_is(sql, PH_JSON_STRING) ?
				    (int)(sql->n > 100 ? 100 : sql->n) :
				    1,
			    ph_json_is(sql, PH_JSON_STRING) ? sql->u.s : "?");
	}
	ph_mcp_app_notes(c, r, "no longer held");
	ph_mcp_put(c, "blocking", r);
	ph_mcp_mark(c, c->w.to);
	if (((st && (int64_t)st->n >= limit) || (q && (int64_t)q->n >= limit) ||
	     (h && (int64_t)h->n >= limit)) &&
	    ph_mcp_capped(c, "limit"))
		ph_mcp_full_app(c, "blocking",
				ph_mcp_window_params(c, 100, NULL), r);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_blocking = {
	.name = "blocking",
	.title = "What blocked the main thread",
	.description = "Main-thread stalls over a window (duration and the "
		       "stack that held the thread), database queries and "
		       "HTTP calls made on the main thread. Asked of the app; "
		       "from its recorded events when it is not connected.",
	.props = "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "1000,\"description\":\"most entries per list; default 10 "
		 "(100 at detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = blocking_call,
};
