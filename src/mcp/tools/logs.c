/* logs: the app's log lines over a window, by minimum level. */
#include "ph_common.h"
#include "mcp/mcp.h"

static int logs_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *e;
	int64_t limit = ph_mcp_limit(c, "limit", 20, 200);
	struct ph_buf x = PH_BUF_INIT(1 << 16);
	struct ph_jw jw;
	const char *lv = ph_mcp_arg_str(c, "level", NULL);
	const char *tag = ph_mcp_arg_str(c, "tag", NULL);
	const char *has = ph_mcp_arg_str(c, "contains", NULL);
	const char *extra = NULL;
	size_t levels[6] = { 0 };
	static const char order[] = "VDIWEF";
	char ws[80];

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
	if (!ph_mcp_connected(c->m))
		return ph_mcp_events_instead(c, "logs", "log", limit,
					     ph_mcp_full_limit(c, "limit",
							       200));
	if (ph_mcp_app(c, "logs", ph_mcp_window_params(c, limit, extra), &r))
		return 0;
	e = ph_json_get(r, "entries");
	for (uint32_t i = 0; e && i < e->n; i++) {
		const struct ph_json *l = ph_json_get(&e->u.items[i], "level");
		const char *p;

		if (ph_json_is(l, PH_JSON_STRING) && l->n == 1 &&
		    (p = strchr(order, l->u.s[0])) && *p)
			levels[p - order]++;
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
	ph_mcp_put(c, "logs", r);
	ph_mcp_mark(c, c->w.to);
	if (e && (int64_t)e->n >= limit && ph_mcp_capped(c, "limit"))
		ph_mcp_full_app(c, "logs", ph_mcp_window_params(c, 200, extra),
				r);
	return 0;
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
