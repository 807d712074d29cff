/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io_view.c: the io view of a call's window, shared by io_summary and
 * io_requests (see mcp.h): the session's identity and profile from an
 * analysis, its `io` events and the app's moments read back
 * (host/io/events.h), and the plain answer when none were recorded.
 */
#include "ph_common.h"
#include "mcp.h"
#include "host/io/events.h"

#define KINDS                                                    \
	((1ull << PH_KIND_IO) | (1ull << PH_KIND_IO_RECORDING) | \
	 (1ull << PH_KIND_BLOCKED) | (1ull << PH_KIND_FRAME) |   \
	 (1ull << PH_KIND_DB_END))

struct ph_io_view *ph_mcp_io_view(struct ph_mcp_call *c, bool all_queries,
				  struct ph_io_events *e,
				  struct ph_analysis **a,
				  struct ph_mcp_source *src)
{
	struct ph_mcp_source src2;
	struct ph_io_view *v;
	struct ph_window w;
	char ws[80];

	memset(e, 0, sizeof(*e));
	*a = ph_mcp_analyze(c, c->w, src);
	if (!*a)
		return NULL;
	if (ph_io_events_init(e, all_queries)) {
		ph_mcp_fail(c, "out of memory");
		return NULL;
	}
	if (ph_mcp_each(c, c->w, KINDS, ph_io_events_feed, e, &src2) < 0)
		return NULL;
	if (!ph_io_events_any(e)) {
		ph_mcp_line(c,
			    "no block I/O was recorded for this session in "
			    "t=%s: record it beside the app with `porthole "
			    "iotrace record --out DIR` (root), then `porthole "
			    "iotrace attach SESSION DIR` adds it to the "
			    "session; or run the app under `porthole capture "
			    "--iotrace`",
			    ph_mcp_wstr(c->w, ws, sizeof(ws)));
		if (src->note[0])
			ph_mcp_more(c, " (%s)", src->note);
		ph_jw_kv_bool(&c->jw, "recorded", false);
		ph_jw_kv_str(&c->jw, "source", src->live ? "live" : src->path);
		ph_jw_kv_str(&c->jw, "how",
			     "porthole iotrace record --out DIR; porthole "
			     "iotrace attach SESSION DIR");
		ph_mcp_mark(c, c->w.to);
		return NULL;
	}
	/* an open start is quoted as the first event's t, as findings
	 * does, so the answer names a window that can be asked again */
	w = c->w;
	if (w.from == INT64_MIN && (*a)->first_t)
		w.from = (*a)->first_t;
	v = ph_io_events_view(e, &(*a)->ident, &(*a)->profile, w);
	if (!v)
		ph_mcp_fail(c, "out of memory");
	return v;
}
