/* SPDX-License-Identifier: Apache-2.0 */
/* recompositions: which components re-render, how often, and why. */
#include "ph_common.h"
#include "mcp/mcp.h"

static int recompositions_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *nodes, *notes;
	int64_t limit = ph_mcp_limit(c, "limit", 10, 50);
	const char *screen = ph_mcp_arg_str(c, "screen", NULL);
	struct ph_buf x = PH_BUF_INIT(1 << 12);
	const char *extra = NULL;
	int64_t total = 0;
	char ws[80];

	if (ph_mcp_window_refused(c))
		return 0;
	if (screen) {
		if (!ph_buf_addstr(&x, "\"screen\":") &&
		    !ph_json_escape(&x, screen, strlen(screen)))
			extra = ph_arena_strndup(c->arena, x.buf, x.len);
		ph_buf_release(&x);
	}
	if (!ph_mcp_connected(c->m))
		return ph_mcp_events_instead(c, "recompositions", "recompose",
					     limit,
					     ph_mcp_full_limit(c, "limit", 50));
	if (ph_mcp_app(c, "recompositions",
		       ph_mcp_window_params(c, limit, extra), &r))
		return 0;
	nodes = ph_json_get(r, "nodes");
	/* totalNodes is the runtime's count before its limit; a runtime
	 * without it has told us only the list. */
	if (!ph_json_as_int(ph_json_get(r, "totalNodes"), &total))
		total = nodes ? nodes->n : 0;
	ph_mcp_line(c, "t=%s: %" PRId64 " component%s recomposed",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)), total,
		    total == 1 ? "" : "s");
	for (uint32_t i = 0; nodes && i < nodes->n && i < 3; i++) {
		const struct ph_json *n = &nodes->u.items[i];
		const struct ph_json *name = ph_json_get(n, "name");
		const struct ph_json *tb = ph_json_get(n, "triggeredBy");
		const struct ph_json *k =
			tb && tb->n ? ph_json_get(&tb->u.items[0], "key") :
				      NULL;
		int64_t cnt = 0;

		ph_json_as_int(ph_json_get(n, "count"), &cnt);
		ph_mcp_more(c, "%s %.*s x%" PRId64 "%s%.*s", i ? ";" : ":",
			    ph_json_is(name, PH_JSON_STRING) ? (int)name->n : 1,
			    ph_json_is(name, PH_JSON_STRING) ? name->u.s : "?",
			    cnt, ph_json_is(k, PH_JSON_STRING) ? " after " : "",
			    ph_json_is(k, PH_JSON_STRING) ? (int)k->n : 0,
			    ph_json_is(k, PH_JSON_STRING) ? k->u.s : "");
	}
	if (nodes && (int64_t)nodes->n < total)
		ph_mcp_more(c, " (%" PRId64 " matched, busiest %u returned)",
			    total, nodes->n);
	notes = ph_json_get(r, "notes");
	if (!total && notes && notes->n &&
	    ph_json_is(&notes->u.items[0], PH_JSON_STRING))
		ph_mcp_more(c, " (%.*s)", (int)notes->u.items[0].n,
			    notes->u.items[0].u.s);
	ph_mcp_put(c, "recompositions", r);
	ph_mcp_mark(c, c->w.to);
	if (nodes && (int64_t)nodes->n >= limit && ph_mcp_capped(c, "limit"))
		ph_mcp_full_app(c, "recompositions",
				ph_mcp_window_params(c, 50, extra), r);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_recompositions = {
	.name = "recompositions",
	.title = "Recompositions",
	.description = "Which UI components re-rendered over a window, how "
		       "many times, and which state writes came just before "
		       "(triggeredBy: ordering, not proof). Busiest first. "
		       "Asked of the app.",
	.props = "\"screen\":{\"type\":\"string\",\"description\":\"only "
		 "this screen (route)\"},"
		 "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "1000,\"description\":\"busiest components listed; default "
		 "10 (50 at detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = recompositions_call,
};
