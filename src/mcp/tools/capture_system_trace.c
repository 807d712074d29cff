/* capture_system_trace: a one-shot system trace of N seconds. */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "mcp/systrace.h"

static int capture_system_trace_call(struct ph_mcp_call *c)
{
	int secs = (int)ph_mcp_arg_int(c, "seconds", 5);
	char path[4500] = "", why[500];

	if (ph_systrace_capture(c->m, secs, path, sizeof(path), why,
				sizeof(why)))
		return ph_mcp_fail(c, "no system trace: %s", why);
	ph_mcp_line(c,
		    "recorded %d s of system trace (%s) to %s; next: "
		    "ask_system_trace {trace:\"%s\"}",
		    secs,
		    ph_mcp_local(c->m) ? "tracefs, this machine" :
					 "perfetto, the device",
		    path, path);
	ph_jw_kv_str(&c->jw, "trace", path);
	ph_jw_kv_int(&c->jw, "seconds", secs);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_capture_system_trace = {
	.name = "capture_system_trace",
	.title = "Record a system trace",
	.description = "Records a system trace for `seconds` while the app "
		       "runs (scheduling, CPU frequency, block I/O, "
		       "trace_marker slices): with tracefs on this machine "
		       "(needs root) or perfetto on the device over adb. "
		       "Saved under .porthole/traces/; then ask it "
		       "questions with ask_system_trace.",
	.props = "\"seconds\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "120,\"default\":5,\"description\":\"how long to record\"}",
	.flags = PH_TOOL_OPENWORLD,
	.call = capture_system_trace_call,
};
