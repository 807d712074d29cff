/* SPDX-License-Identifier: Apache-2.0 */
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

/* The attached app's pid and process name, from its newest hello. */
static bool attached_app(struct ph_mcp *m, int64_t *pid, char *name,
			 size_t size)
{
	bool have = false;

	*pid = 0;
	name[0] = '\0';
	if (!m->lv || !m->started)
		return false;
	pthread_mutex_lock(&m->lv->link.mu);
	if (m->lv->link.ident.have && m->lv->link.ident.pid > 0) {
		*pid = m->lv->link.ident.pid;
		snprintf(name, size, "%s", m->lv->link.ident.process);
		have = true;
	}
	pthread_mutex_unlock(&m->lv->link.mu);
	return have;
}

/*
 * Loads the trace at path into t; 0, or the call failed with why the
 * engine cannot read it and what to do instead.  *partial receives why
 * only part of it was read ("" when all was).
 */
static int load(struct ph_mcp_call *c, struct ph_trace *t, const char *path,
		char *partial, size_t psize)
{
	char msg[320];
	int rc;

	partial[0] = '\0';
	rc = ph_trace_init(t);
	if (!rc)
		rc = ph_trace_load_file(t, path);
	if (rc == PH_ECORRUPT || t->truncated) {
		/* What was read before the damage is still asked. */
		snprintf(partial, psize, "%s",
			 ph_err_format(&t->err, msg, sizeof(msg)));
		return 0;
	}
	if (!rc)
		return 0;
	ph_mcp_fail(c,
		    "cannot ask %s: the trace engine cannot read it (%s%s%s). "
		    "It reads Perfetto traces (.pftrace, .perfetto-trace) "
		    "and the ftrace text of `porthole trace record`; pass "
		    "trace: another file, or record one with "
		    "capture_system_trace",
		    path, ph_strerror(rc), t->err.msg[0] ? ": " : "",
		    t->err.msg);
	ph_trace_release(t);
	return rc;
}

static int ask_system_trace_call(struct ph_mcp_call *c)
{
	const char *trace = ph_mcp_arg_str(c, "trace", NULL);
	const char *proc = ph_mcp_arg_str(c, "process", NULL);
	const struct ph_json *qs = ph_json_get(c->args, "questions");
	int64_t from = ph_mcp_arg_int(c, "fromNs", PH_NULL_I64);
	int64_t to = ph_mcp_arg_int(c, "toNs", PH_NULL_I64);
	const char *q[16];
	size_t nq = 0;
	char path[4500], err[400], partial[400], app_name[160], pidbuf[24];
	char chose[300] = "";
	int64_t app_pid = 0;
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
		return ph_mcp_fail(c,
				   "cannot read the trace %s: %s; pass trace: "
				   "a readable file (default: the newest under "
				   "%s), or record one with "
				   "capture_system_trace",
				   path, strerror(errno), c->m->trace_dir);
	for (uint32_t i = 0; qs && i < qs->n && nq < PH_ARRAY_SIZE(q); i++) {
		if (!ph_json_is(&qs->u.items[i], PH_JSON_STRING))
			return ph_mcp_fail(c, "questions must be strings");
		q[nq++] = ph_json_strdup(c->arena, &qs->u.items[i]);
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return ph_mcp_fail(c, "out of memory");
	if (load(c, t, path, partial, sizeof(partial))) {
		free(t);
		return 0;
	}
	/*
	 * No process named: the attached app (its pid from hello, then its
	 * name), never silently some other process.  Only with no app
	 * attached is it the busiest one, and the line says so.
	 */
	if (!proc && attached_app(c->m, &app_pid, app_name, sizeof(app_name)))
		snprintf(pidbuf, sizeof(pidbuf), "%" PRId64, app_pid);
	else if (!proc)
		snprintf(chose, sizeof(chose),
			 "no app attached, so the busiest process; ");
	ph_jw_init(&jw, &b);
	err[0] = '\0';
	rc = ph_trace_ask(t,
			  proc	  ? proc :
			  app_pid ? pidbuf :
				    NULL,
			  from, to, q, nq, NULL, &jw, err, sizeof(err));
	if (rc && !proc && app_pid && app_name[0] &&
	    !strncmp(err, "no process", 10)) {
		/* Not in it by pid (another run of the app): by name. */
		ph_buf_reset(&b);
		ph_jw_init(&jw, &b);
		err[0] = '\0';
		rc = ph_trace_ask(t, app_name, from, to, q, nq, NULL, &jw, err,
				  sizeof(err));
		if (!rc)
			snprintf(chose, sizeof(chose),
				 "the attached app's pid %" PRId64
				 " is not in it: its process by name %s; ",
				 app_pid, app_name);
	}
	if (rc && !proc && app_pid && !strncmp(err, "no process", 10)) {
		ph_trace_release(t);
		free(t);
		ph_buf_release(&b);
		return ph_mcp_fail(
			c,
			"cannot ask %s about the attached app: neither its pid "
			"%" PRId64 " nor its process name '%s' is in it (a "
			"trace of another run, or of another machine%s%s); "
			"record one while it runs with capture_system_trace, "
			"or pass process: the process to ask about; `porthole "
			"trace stats FILE` shows what a trace holds",
			path, app_pid, app_name,
			partial[0] ? "; it was read only in part: " : "",
			partial);
	}
	ph_trace_release(t);
	free(t);
	if (rc) {
		ph_buf_release(&b);
		return ph_mcp_fail(
			c,
			"cannot ask %s: %s%s%s%s; `porthole trace "
			"stats FILE` shows what a trace holds; pass "
			"another trace, or record one with "
			"capture_system_trace",
			path, err[0] ? err : "the trace engine failed",
			partial[0] ? " (it was read only in part: " : "",
			partial, partial[0] ? ")" : "");
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
			    "%s, %sprocess %.*s: %u finding%s; asked %u, "
			    "skipped %u, unanswered %u, ruled out %u",
			    path, chose,
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
		if (partial[0])
			ph_mcp_more(c, "; the trace was read only in part: %s",
				    partial);
		/* what every duration in the answer ran under */
		if (ph_json_is(env, PH_JSON_STRING))
			ph_mcp_more(c, "; environment: %.*s", (int)env->n,
				    env->u.s);
	}
	ph_mcp_put(c, "answer", ans);
	ph_jw_kv_str(&c->jw, "process",
		     proc    ? "as asked" :
		     app_pid ? "the attached app" :
			       "the busiest (no app attached)");
	ph_jw_key(&c->jw, "readInPart");
	if (partial[0])
		ph_jw_str(&c->jw, partial);
	else
		ph_jw_null(&c->jw);
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
		 "name or pid; default: the attached app (its pid from "
		 "hello, else its name), the busiest only when no app is "
		 "attached\"},"
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
