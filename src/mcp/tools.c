/* SPDX-License-Identifier: Apache-2.0 */
/* tools.c: the one list of MCP tools, in the order tools/list gives. */
#include "ph_common.h"
#include "mcp.h"

/* clang-format off */
#define TOOLS(X) \
	X(findings) \
	X(recompositions) \
	X(semantics_tree) \
	X(accessibility) \
	X(nav_state) \
	X(state) \
	X(inflight) \
	X(frames) \
	X(blocking) \
	X(logs) \
	X(timeline) \
	X(what_was_happening) \
	X(io_summary) \
	X(io_requests) \
	X(system_context) \
	X(capture_system_trace) \
	X(system_trace_start) \
	X(system_trace_snapshot) \
	X(system_trace_stop) \
	X(ask_system_trace) \
	X(save_moment) \
	X(open_timeline) \
	X(porthole_status) \
	X(porthole_connect) \
	X(setup) \
	X(screenshot)
/* clang-format on */

#define X(n) extern const struct ph_mcp_tool ph_mcp_tool_##n;
TOOLS(X)
#undef X

const struct ph_mcp_tool *const ph_mcp_tools[] = {
#define X(n) &ph_mcp_tool_##n,
	TOOLS(X)
#undef X
		NULL,
};

const struct ph_mcp_tool *ph_mcp_tool_find(const char *name, size_t n)
{
	for (size_t i = 0; ph_mcp_tools[i]; i++)
		if (strlen(ph_mcp_tools[i]->name) == n &&
		    !memcmp(ph_mcp_tools[i]->name, name, n))
			return ph_mcp_tools[i];
	return NULL;
}
