/* SPDX-License-Identifier: Apache-2.0 */
/* system_trace_snapshot: what the ring session holds, as a trace file. */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "mcp/systrace.h"

static int system_trace_snapshot_call(struct ph_mcp_call *c)
{
	char path[4500], why[500];

	if (ph_systrace_ring_snapshot(c->m, path, sizeof(path), why,
				      sizeof(why)))
		return ph_mcp_fail(c, "no snapshot: %s", why);
	ph_mcp_line(c,
		    "snapshot of the ring session saved to %s; the "
		    "session keeps running; next: ask_system_trace "
		    "{trace:\"%s\"}",
		    path, path);
	ph_jw_kv_str(&c->jw, "trace", path);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_system_trace_snapshot = {
	.name = "system_trace_snapshot",
	.title = "Snapshot the ring-buffer trace",
	.description = "Saves what the running ring session has recorded "
		       "so far as a trace file under .porthole/traces/ "
		       "(perfetto --clone-by-name on a device); the session "
		       "keeps running.",
	.flags = PH_TOOL_OPENWORLD,
	.call = system_trace_snapshot_call,
};
