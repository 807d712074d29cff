/* SPDX-License-Identifier: Apache-2.0 */
/* system_trace_start: a detached ring-buffer trace session. */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "mcp/systrace.h"

static int system_trace_start_call(struct ph_mcp_call *c)
{
	struct ph_systrace_ring r;
	char why[500];

	if (ph_systrace_ring_start(c->m, &r, why, sizeof(why)))
		return ph_mcp_fail(c, "no ring session: %s", why);
	ph_mcp_line(c,
		    "ring session started (%s, pid %" PRId64 "); take "
		    "system_trace_snapshot after the problem shows, "
		    "system_trace_stop when done",
		    r.device ? "perfetto on the device" : "tracefs here",
		    r.pid);
	ph_jw_kv_int(&c->jw, "pid", r.pid);
	ph_jw_kv_str(&c->jw, "writing", r.out);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_system_trace_start = {
	.name = "system_trace_start",
	.title = "Start a ring-buffer system trace",
	.description = "Starts a system trace that keeps running detached "
		       "(tracefs here; perfetto --background on a device) so "
		       "that a snapshot can be taken right after a problem "
		       "shows. It survives a restart of this server and is "
		       "stopped and cleaned up by system_trace_stop.",
	.flags = PH_TOOL_OPENWORLD,
	.call = system_trace_start_call,
};
