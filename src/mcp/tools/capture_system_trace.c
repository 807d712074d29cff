/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture_system_trace: a one-shot system trace of N seconds, recorded in
 * the background (PH_TOOL_BACKGROUND): other calls are answered while it
 * records; progress each second when the client asked for it; a
 * cancellation stops the recorder and leaves no file.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "mcp/systrace.h"
#include "ph_clock.h"

struct recording {
	struct ph_mcp_call *c;
	int seconds;
	int64_t started; /* uptime ms */
	int64_t said;	 /* whole seconds last reported */
};

/* Asked every 100 ms while the recorder runs: progress, and whether to stop. */
static bool tick(void *ctx)
{
	struct recording *r = ctx;
	int64_t s = (ph_clock_uptime_ms() - r->started) / 1000;
	char msg[80];

	if (s > r->said && s <= r->seconds) {
		r->said = s;
		snprintf(msg, sizeof(msg), "recording: %" PRId64 " of %d s", s,
			 r->seconds);
		ph_mcp_progress(r->c, (double)s, (double)r->seconds, msg);
	}
	return ph_mcp_cancelled(r->c);
}

static int capture_system_trace_call(struct ph_mcp_call *c)
{
	struct recording r = { c, (int)ph_mcp_arg_int(c, "seconds", 5),
			       ph_clock_uptime_ms(), 0 };
	int64_t pid = ph_systrace_app_pid(c->m);
	char path[4500] = "", why[500], who[96] = "";

	ph_mcp_progress(c, 0, r.seconds, "recording started");
	if (ph_systrace_capture(c->m, r.seconds, tick, &r, path, sizeof(path),
				why, sizeof(why)))
		return ph_mcp_fail(c, "no system trace: %s", why);
	if (pid > 0)
		snprintf(who, sizeof(who), "; the app is pid %" PRId64, pid);
	else
		snprintf(who, sizeof(who),
			 "; no app attached, so no pid is named in it");
	ph_mcp_line(c,
		    "recorded %d s of system trace (%s) to %s%s; next: "
		    "ask_system_trace {trace:\"%s\"}",
		    r.seconds,
		    ph_mcp_local(c->m) ? "tracefs, this machine" :
					 "perfetto, the device",
		    path, who, path);
	ph_jw_kv_str(&c->jw, "trace", path);
	ph_jw_kv_int(&c->jw, "seconds", r.seconds);
	ph_jw_key(&c->jw, "appPid");
	if (pid > 0)
		ph_jw_int(&c->jw, pid);
	else
		ph_jw_null(&c->jw);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_capture_system_trace = {
	.name = "capture_system_trace",
	.title = "Record a system trace",
	.description = "Records a system trace for `seconds` while the app "
		       "runs (scheduling, CPU frequency, block I/O, "
		       "trace_marker slices): with tracefs on this machine "
		       "(needs root) or perfetto on the device over adb; the "
		       "app's pid (from its hello) is named in it. Other "
		       "tools answer while it records; it sends progress "
		       "when asked (progressToken) and stops, leaving no "
		       "file, when cancelled. Saved under .porthole/traces/; "
		       "then ask it questions with ask_system_trace.",
	.props = "\"seconds\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "120,\"default\":5,\"description\":\"how long to record\"}",
	.flags = PH_TOOL_OPENWORLD | PH_TOOL_BACKGROUND,
	.call = capture_system_trace_call,
};
