/* frames: late frames over a window, asked of the app. */
#include "ph_common.h"
#include "mcp/mcp.h"

static int frames_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *worst;
	int64_t limit = ph_mcp_limit(c, "limit", 10, 100);
	int64_t janky = 0, interval = 0;
	char ws[80];

	if (ph_mcp_window_refused(c))
		return 0;
	if (!ph_mcp_connected(c->m))
		return ph_mcp_events_instead(c, "frames", "frame", limit,
					     ph_mcp_full_limit(c, "limit",
							       100));
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
