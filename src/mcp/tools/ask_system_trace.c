/*
 * ask_system_trace: the trace engine's fixed questions (trace_ask.h) about
 * one process over one window of a recorded trace.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "mcp/systrace.h"
#include "trace/trace_ask.h"
#include "trace/trace_cli.h"

#include <unistd.h>

static int ask_system_trace_call(struct ph_mcp_call *c)
{
	const char *trace = ph_mcp_arg_str(c, "trace", NULL);
	const char *proc = ph_mcp_arg_str(c, "process", NULL);
	const struct ph_json *qs = ph_json_get(c->args, "questions");
	int64_t from = ph_mcp_arg_int(c, "fromNs", PH_NULL_I64);
	int64_t to = ph_mcp_arg_int(c, "toNs", PH_NULL_I64);
	const char *q[16];
	size_t nq = 0;
	char path[4500], err[400];
	struct ph_trace *t;
	struct ph_buf b = PH_BUF_INIT((size_t)64 << 20);
	struct ph_jw jw;
	struct ph_json *ans;
	int rc;

	if (trace)
		snprintf(path, sizeof(path), "%s", trace);
	else if (ph_systrace_newest(c->m, path, sizeof(path)))
		return ph_mcp_fail(c,
				   "no trace to ask: none under %s; record "
				   "one with capture_system_trace or "
				   "system_trace_start/snapshot",
				   c->m->trace_dir);
	if (access(path, R_OK))
		return ph_mcp_fail(c, "cannot read the trace %s", path);
	for (uint32_t i = 0; qs && i < qs->n && nq < PH_ARRAY_SIZE(q); i++) {
		if (!ph_json_is(&qs->u.items[i], PH_JSON_STRING))
			return ph_mcp_fail(c, "questions must be strings");
		q[nq++] = ph_json_strdup(c->arena, &qs->u.items[i]);
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return ph_mcp_fail(c, "out of memory");
	rc = ph_trace_cli_load(t, path);
	if (rc == 2) {
		free(t);
		return ph_mcp_fail(c,
				   "the trace %s could not be read (see the "
				   "server's stderr)",
				   path);
	}
	ph_jw_init(&jw, &b);
	err[0] = '\0';
	rc = ph_trace_ask(t, proc, from, to, q, nq, NULL, &jw, err,
			  sizeof(err));
	ph_trace_release(t);
	free(t);
	if (rc) {
		ph_buf_release(&b);
		return ph_mcp_fail(c, "cannot ask %s: %s", path,
				   err[0] ? err : "the trace engine failed");
	}
	if (ph_jw_finish(&jw) ||
	    ph_json_parse(c->arena, ph_arena_strndup(c->arena, b.buf, b.len),
			  b.len, &ans, NULL)) {
		ph_buf_release(&b);
		return ph_mcp_fail(c, "the trace engine's answer is not JSON");
	}
	ph_buf_release(&b);
	{
		const struct ph_json *f = ph_json_get(ans, "findings");
		const struct ph_json *as = ph_json_get(ans, "asked");
		const struct ph_json *sk = ph_json_get(ans, "skipped");
		const struct ph_json *un = ph_json_get(ans, "unanswered");
		const struct ph_json *ro = ph_json_get(ans, "ruled_out");
		const struct ph_json *pn =
			ph_json_get(ph_json_get(ans, "process"), "name");
		const struct ph_json *env =
			ph_json_get(ph_json_get(ans, "environment"), "summary");

		ph_mcp_line(c,
			    "%s, process %.*s: %u finding%s; asked %u, "
			    "skipped %u, unanswered %u, ruled out %u",
			    path,
			    ph_json_is(pn, PH_JSON_STRING) ? (int)pn->n : 1,
			    ph_json_is(pn, PH_JSON_STRING) ? pn->u.s : "?",
			    f ? f->n : 0, f && f->n == 1 ? "" : "s",
			    as ? as->n : 0, sk ? sk->n : 0, un ? un->n : 0,
			    ro ? ro->n : 0);
		for (uint32_t i = 0; f && i < f->n && i < 2; i++) {
			const struct ph_json *ti =
				ph_json_get(&f->u.items[i], "title");

			if (ph_json_is(ti, PH_JSON_STRING))
				ph_mcp_more(c, "%s %.*s", i ? ";" : ":",
					    (int)ti->n, ti->u.s);
		}
		if (un && un->n) {
			const struct ph_json *r0 =
				ph_json_get(&un->u.items[0], "reason");

			if (ph_json_is(r0, PH_JSON_STRING))
				ph_mcp_more(c, "; unanswered because %.*s",
					    (int)(r0->n > 120 ? 120 : r0->n),
					    r0->u.s);
		}
		/* what every duration in the answer ran under */
		if (ph_json_is(env, PH_JSON_STRING))
			ph_mcp_more(c, "; environment: %.*s", (int)env->n,
				    env->u.s);
	}
	ph_mcp_put(c, "answer", ans);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_ask_system_trace = {
	.name = "ask_system_trace",
	.title = "Ask a system trace",
	.description =
		"Asks a recorded system trace the trace engine's fixed "
		"questions (jank, thread_states, binder, render, slices, "
		"startup, monitor_contention, cpu) about one process over "
		"one window. Says which were asked, skipped, unanswered (the "
		"trace lacks the data, and why) and ruled out (causes looked "
		"at and found quiet, thermal throttling and low CPU "
		"frequency included); findings are in the findings "
		"vocabulary with source \"trace\". The environment every "
		"duration ran under (CPU frequency, thermal, memory) comes "
		"first, and again per finding in evidence.environment.",
	.props = "\"trace\":{\"type\":\"string\",\"description\":\"the trace "
		 "file; default: the newest under .porthole/traces\"},"
		 "\"process\":{\"type\":\"string\",\"description\":\"process "
		 "name; default: the busiest\"},"
		 "\"fromNs\":{\"type\":\"integer\",\"description\":\"window "
		 "start, trace clock ns\"},"
		 "\"toNs\":{\"type\":\"integer\",\"description\":\"window end, "
		 "trace clock ns\"},"
		 "\"questions\":{\"type\":\"array\",\"items\":{\"type\":"
		 "\"string\",\"enum\":[\"jank\",\"thread_states\",\"binder\","
		 "\"render\",\"slices\",\"startup\",\"monitor_contention\","
		 "\"cpu\"]},\"description\":\"which to ask; all when absent\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_IDEMPOTENT,
	.call = ask_system_trace_call,
};
