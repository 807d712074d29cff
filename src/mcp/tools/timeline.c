/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timeline: the events themselves, as the wire sent them, over a window,
 * from the live buffer or a session on disk; filtered by kind.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "ph_wire.h"

/* Every kind the wire knows, from its one table, so the list a refusal
 * gives cannot miss a kind added later. */
static const char *known_kinds(char *out, size_t cap)
{
	size_t o = 0;

	out[0] = '\0';
	for (int kd = PH_KIND_UNKNOWN + 1; kd < PH_KIND_COUNT && o < cap; kd++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? ", " : "",
				      ph_wire_kind_name((enum ph_kind)kd));
	return out;
}

static int timeline_call(struct ph_mcp_call *c)
{
	const struct ph_json *kinds = ph_json_get(c->args, "kinds");
	struct ph_mcp_source src;
	uint64_t mask = 0;
	int64_t limit = ph_mcp_limit(c, "limit", 100, 500);
	int64_t matched = 0, returned = 0;
	char names[512] = "", ws[80];
	size_t o = 0, extra = 0;
	int64_t full_limit;

	if (ph_mcp_window_refused(c))
		return 0;
	for (uint32_t i = 0; kinds && i < kinds->n; i++) {
		const struct ph_json *k = &kinds->u.items[i];
		enum ph_kind kd;

		if (!ph_json_is(k, PH_JSON_STRING))
			return ph_mcp_fail(c, "kinds must be strings");
		kd = ph_wire_kind(k->u.s, k->n);
		if (kd == PH_KIND_UNKNOWN) {
			char known[512];

			return ph_mcp_fail(c,
					   "unknown event kind '%.*s'; kinds "
					   "are the wire's: %s",
					   (int)(k->n > 40 ? 40 : k->n), k->u.s,
					   known_kinds(known, sizeof(known)));
		}
		mask |= (uint64_t)1 << kd;
		if (o < sizeof(names))
			o += (size_t)snprintf(names + o, sizeof(names) - o,
					      "%s%.*s", o ? "," : "", (int)k->n,
					      k->u.s);
	}
	/* What detail full would return: the explicit limit, else 500. */
	full_limit = ph_mcp_arg_has(c, "limit") ? limit : 500;
	if (ph_mcp_write_events(c, c->w, mask, limit, full_limit, &matched,
				&returned, &extra, &src))
		return 0;
	ph_jw_kv_int(&c->jw, "matched", matched);
	ph_jw_kv_int(&c->jw, "returned", returned);
	ph_jw_key(&c->jw, "window");
	ph_jw_obj_begin(&c->jw);
	ph_jw_kv_int(&c->jw, "from", c->w.from == INT64_MIN ? 0 : c->w.from);
	ph_jw_kv_int(&c->jw, "to", c->w.to);
	ph_jw_obj_end(&c->jw);
	ph_jw_kv_str(&c->jw, "source", src.live ? "live" : src.path);
	ph_mcp_line(c, "timeline t=%s%s%s: %" PRId64 " events matched, ",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)),
		    names[0] ? " kinds " : "", names, matched);
	if (returned < matched)
		ph_mcp_more(c,
			    "newest %" PRId64 " returned (limit %" PRId64
			    "; narrow with from/to or kinds)",
			    returned, limit);
	else
		ph_mcp_more(c, "all returned");
	if (src.note[0])
		ph_mcp_more(c, " (%s)", src.note);
	if (extra)
		c->full_payload = c->payload.len + extra + 1; /* and the } */
	ph_mcp_mark(c, c->w.to);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_timeline = {
	.name = "timeline",
	.title = "Events over a window",
	.description =
		"The app's events exactly as its runtime sent them (frame, "
		"blocked, http_*, db_*, log, nav, state_write, recompose, "
		"input, work_*, device, memory, exit, mark, startup, io...) "
		"over a window, oldest first, the newest `limit` of them. "
		"Filter with kinds. Reads the live buffer, or the session on disk "
		"when the app is gone or the window is older than the buffer.",
	.props = "\"kinds\":{\"type\":\"array\",\"items\":{\"type\":"
		 "\"string\"},\"description\":\"event kinds to keep, e.g. "
		 "[\\\"blocked\\\",\\\"db_end\\\"]; all when absent\"},"
		 "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "100000,\"description\":\"most events returned; default 100 "
		 "(500 at detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = timeline_call,
};
