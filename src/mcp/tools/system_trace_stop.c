/* SPDX-License-Identifier: Apache-2.0 */
/* system_trace_stop: stops the ring session and cleans up after it. */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "mcp/systrace.h"

static int system_trace_stop_call(struct ph_mcp_call *c)
{
	char path[4500], why[500] = "";

	if (ph_systrace_ring_stop(c->m, path, sizeof(path), why, sizeof(why)))
		return ph_mcp_fail(c, "nothing to stop: %s", why);
	ph_mcp_line(c, "ring session stopped and cleaned up%s%s%s%s",
		    path[0] ? "; its trace is " : "", path, why[0] ? "; " : "",
		    why);
	ph_jw_kv_str(&c->jw, "trace", path[0] ? path : NULL);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_system_trace_stop = {
	.name = "system_trace_stop",
	.title = "Stop the ring-buffer trace",
	.description = "Stops the ring session started by system_trace_start "
		       "(also one started before this server restarted), "
		       "restores the tracing settings, removes its files "
		       "from the device, and returns the trace it kept.",
	.flags = PH_TOOL_DESTRUCTIVE | PH_TOOL_IDEMPOTENT | PH_TOOL_OPENWORLD,
	.call = system_trace_stop_call,
};
