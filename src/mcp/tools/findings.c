/* SPDX-License-Identifier: Apache-2.0 */
/*
 * findings: the start.  The host's findings engine over a window (since
 * the last call by default, the session watermark shared with `watch`),
 * ranked, each with the tool that shows its evidence, new/ongoing/resolved
 * against the previous call, and `where` when the project root is set.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "host/env.h"
#include "host/session.h"

/* Which tool shows a finding's evidence. */
static const char *evidence_tool(const char *id)
{
	static const struct {
		const char *id, *tool;
	} map[] = {
		{ "db-on-main-thread", "blocking" },
		{ "main-thread-stall", "blocking" },
		{ "http-failed", "inflight" },
		{ "http-call-slow", "inflight" },
		{ "frames-dropped", "frames" },
		{ "recompose-hotspot", "recompositions" },
		{ "db-error", "timeline" },
		{ "tap-slow", "frames" },
		{ "work-retried", "inflight" },
		{ "exit", "porthole_status" },
		{ "thermal-throttling", "system_context" },
		{ "memory-pressure", "system_context" },
		{ "strict-violation", "timeline" },
		{ "gc-blocking", "timeline" },
		{ "leak", "timeline" },
		{ "startup-slow", "timeline" },
		{ "startup-not-fully-drawn", "timeline" },
		{ "io-on-main-thread", "io_summary" },
		{ "io-slow-request", "io_summary" },
		{ "io-during-jank", "io_summary" },
		{ "io-lost-events", "io_summary" },
	};

	for (size_t i = 0; i < PH_ARRAY_SIZE(map); i++)
		if (!strcmp(map[i].id, id))
			return map[i].tool;
	return "what_was_happening";
}

/* One finding into out, with evidenceTool added. */
static void write_one(struct ph_jw *out, const struct ph_finding *f, bool brief)
{
	struct ph_buf b = PH_BUF_INIT((size_t)16 << 20);
	struct ph_jw jw;

	if (brief) {
		ph_jw_obj_begin(out);
		ph_jw_kv_str(out, "id", f->id);
		ph_jw_kv_str(out, "severity", ph_severity_name(f->severity));
		ph_jw_kv_str(out, "title", f->title);
		if (f->ndetail)
			ph_jw_kv_str(out, "detail", f->detail[0]);
		if (!f->spanning) {
			ph_jw_kv_int(out, "from", f->from);
			ph_jw_kv_int(out, "to", f->to);
		}
		ph_jw_kv_int(out, "count", f->count);
		if (ph_status_name(f->status))
			ph_jw_kv_str(out, "status", ph_status_name(f->status));
		if (f->where_short)
			ph_jw_kv_str(out, "where", f->where_short);
		ph_jw_kv_str(out, "evidenceTool", evidence_tool(f->id));
		ph_jw_obj_end(out);
		return;
	}
	ph_jw_init(&jw, &b);
	ph_finding_write(f, &jw);
	if (!ph_jw_finish(&jw) && b.len > 2 && b.buf[b.len - 1] == '}') {
		ph_buf_setlen(&b, b.len - 1);
		if (!ph_buf_addf(&b, ",\"evidenceTool\":\"%s\"}",
				 evidence_tool(f->id)))
			ph_jw_raw(out, b.buf, b.len);
	}
	ph_buf_release(&b);
}

static int findings_call(struct ph_mcp_call *c)
{
	struct ph_mcp_source src;
	struct ph_watermark wm;
	struct ph_analysis *a;
	struct ph_window w = c->w;
	const char *dir = ph_mcp_state_dir(c->m);
	const char *root = ph_env_project_root();
	const char *sev = ph_mcp_arg_str(c, "severity", "note");
	int min_sev = ph_severity_parse(sev);
	int64_t limit = ph_mcp_limit(c, "limit", 10, INT64_MAX);
	size_t shown = 0, matched = 0, nsev[3] = { 0 };
	size_t arr_at, arr_len, full_arr = 0;
	char ws[80];

	if (ph_mcp_window_refused(c))
		return 0;
	ph_watermark_init(&wm);
	if (dir)
		ph_watermark_load(&wm, dir);
	/* since:"last" uses the session watermark, shared with `watch`. */
	if (c->w_since_last && wm.last_to != INT64_MIN)
		w.from = wm.last_to + 1;
	if (w.from > w.to)
		w.from = w.to;
	a = ph_mcp_analyze(c, w, &src);
	if (!a) {
		ph_watermark_release(&wm);
		return 0;
	}
	/* An open start is the first event seen: the answer quotes a window
	 * that can be asked again, and that the next call can compare. */
	if (a->window.from == INT64_MIN && a->first_t)
		a->window.from = a->first_t;
	if (root)
		ph_analysis_resolve_where(a, root);
	ph_analysis_classify(a, &wm.prev);
	for (size_t i = 0; i < a->nf; i++)
		if (a->f[i].severity <= min_sev &&
		    a->f[i].status != PH_STATUS_RESOLVED) {
			matched++;
			nsev[a->f[i].severity]++;
		}
	ph_mcp_line(c,
		    "%zu finding%s in t=%s (%zu error, %zu warning, %zu "
		    "note)",
		    matched, matched == 1 ? "" : "s",
		    ph_mcp_wstr(a->window, ws, sizeof(ws)), nsev[0], nsev[1],
		    nsev[2]);
	for (size_t i = 0, k = 0; i < a->nf && k < 3; i++) {
		const struct ph_finding *f = &a->f[i];

		if (f->severity > min_sev || f->status == PH_STATUS_RESOLVED)
			continue;
		ph_mcp_more(c, "%s %s: %s%s%s (x%" PRId64 "%s%s) -> %s",
			    k ? ";" : ":", ph_severity_name(f->severity),
			    f->title, f->where_short ? " at " : "",
			    f->where_short ? f->where_short : "", f->count,
			    ph_status_name(f->status) ? ", " : "",
			    ph_status_name(f->status) ?
				    ph_status_name(f->status) :
				    "",
			    evidence_tool(f->id));
		k++;
	}
	if (matched > 3)
		ph_mcp_more(c, "; +%zu more (detail: normal)", matched - 3);
	{
		size_t resolved = 0;

		for (size_t i = 0; i < a->nf; i++)
			resolved += a->f[i].status == PH_STATUS_RESOLVED;
		if (resolved)
			ph_mcp_more(c, "; %zu resolved since the last call",
				    resolved);
	}
	if (!matched && a->cov.complete)
		ph_mcp_more(c, ": nothing found; %zu checks ran quiet",
			    a->nquiet);
	else if (!matched)
		ph_mcp_more(c, ": nothing found in what was observed");
	if (!a->cov.complete)
		ph_mcp_more(c, ". NOT SEEN (%zu checks): %s", a->nnot_seen,
			    a->cov.reason);
	if (a->status_note)
		ph_mcp_more(c, " (status: %s)", a->status_note);
	if (src.note[0])
		ph_mcp_more(c, " (%s)", src.note);
	ph_mcp_more(c,
		    ". Next: findings {since:\"last\"} continues from "
		    "t=%" PRId64,
		    a->window.to);

	ph_jw_key(&c->jw, "window");
	ph_jw_obj_begin(&c->jw);
	ph_jw_kv_int(&c->jw, "from",
		     a->window.from == INT64_MIN ? a->first_t : a->window.from);
	ph_jw_kv_int(&c->jw, "to", a->window.to);
	ph_jw_obj_end(&c->jw);
	ph_jw_kv_str(&c->jw, "source", src.live ? "live" : src.path);
	ph_coverage_write(&a->cov, a->window, &c->jw);
	ph_jw_key(&c->jw, "findings");
	arr_at = c->payload.len;
	ph_jw_arr_begin(&c->jw);
	for (size_t i = 0; i < a->nf; i++) {
		const struct ph_finding *f = &a->f[i];

		if (f->severity > min_sev)
			continue;
		if ((int64_t)shown >= limit)
			break;
		write_one(&c->jw, f, c->detail != PH_DETAIL_FULL);
		shown++;
	}
	ph_jw_arr_end(&c->jw);
	arr_len = c->payload.len - arr_at;
	if (matched > shown) {
		char note[120];

		snprintf(note, sizeof(note), "%zu matched, top %zu returned",
			 matched, shown);
		ph_jw_kv_str(&c->jw, "truncated", note);
		ph_mcp_more(c, " (%s)", note);
	}
	if (c->detail != PH_DETAIL_FULL) {
		/* Measured, not guessed: the array detail full would write
		 * (an explicit limit holds there too), written aside. */
		struct ph_buf fb = PH_BUF_INIT((size_t)64 << 20);
		struct ph_jw fj;
		int64_t full_limit = ph_mcp_arg_has(c, "limit") ? limit :
								  INT64_MAX;
		int64_t k = 0;

		ph_jw_init(&fj, &fb);
		ph_jw_arr_begin(&fj);
		for (size_t i = 0; i < a->nf && k < full_limit; i++)
			if (a->f[i].severity <= min_sev) {
				write_one(&fj, &a->f[i], false);
				k++;
			}
		ph_jw_arr_end(&fj);
		if (!ph_jw_finish(&fj))
			full_arr = fb.len;
		ph_buf_release(&fb);
	}
	ph_jw_key(&c->jw, "quiet");
	ph_jw_arr_begin(&c->jw);
	for (size_t i = 0; i < a->nquiet; i++)
		ph_jw_str(&c->jw, a->quiet[i]);
	ph_jw_arr_end(&c->jw);
	ph_jw_key(&c->jw, "notSeen");
	ph_jw_arr_begin(&c->jw);
	for (size_t i = 0; i < a->nnot_seen; i++)
		ph_jw_str(&c->jw, a->not_seen[i]);
	ph_jw_arr_end(&c->jw);
	if (a->nnotes) {
		ph_jw_key(&c->jw, "notes");
		ph_jw_arr_begin(&c->jw);
		for (size_t i = 0; i < a->nnotes; i++)
			ph_jw_str(&c->jw, a->notes[i]);
		ph_jw_arr_end(&c->jw);
	}
	if (a->status_note)
		ph_jw_kv_str(&c->jw, "statusNote", a->status_note);
	if (a->nexits) {
		ph_jw_key(&c->jw, "exits");
		ph_jw_arr_begin(&c->jw);
		for (size_t i = 0; i < a->nexits; i++) {
			ph_jw_obj_begin(&c->jw);
			ph_jw_kv_int(&c->jw, "t", a->exits[i].t);
			ph_jw_kv_str(&c->jw, "reason", a->exits[i].reason);
			ph_jw_obj_end(&c->jw);
		}
		ph_jw_arr_end(&c->jw);
	}
	if (full_arr)
		c->full_payload = c->payload.len - arr_len + full_arr + 1;
	/* The answer is recorded: the next since:"last" starts after it. */
	if (dir && ph_watermark_record(dir, a, true))
		ph_mcp_more(c, " (the watermark could not be written)");
	ph_mcp_mark(c, a->window.to);
	ph_analysis_free(a);
	ph_watermark_release(&wm);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_findings = {
	.name = "findings",
	.title = "What is wrong (start here)",
	.description =
		"Start here. Ranks what went wrong in the running app over a "
		"window (by default: since your last call) using Porthole's "
		"findings engine: main-thread database queries and stalls, "
		"failed or slow HTTP calls, dropped frames, recomposition "
		"hotspots, crashes, retries, leaks, slow startup, and block "
		"I/O once a recording is attached to the session. Each "
		"finding has severity (error|warning|note), confidence "
		"(observed = the runtime saw it; correlated = ordering, not "
		"proof), a window on the app clock, its status against your "
		"previous call (new|ongoing|resolved), `where` in the source "
		"when PORTHOLE_PROJECT_ROOT is set, and `evidenceTool`: the "
		"tool to call next for its evidence. `coverage` says what "
		"the answer rests on (events held, seqs missing, the link); "
		"`quiet` lists the checks that found nothing over a fully "
		"observed window, `notSeen` those that found nothing in a "
		"window the host did not fully observe (coverage.reason "
		"says why): not an all-clear.",
	.props = "\"severity\":{\"type\":\"string\",\"enum\":[\"error\","
		 "\"warning\",\"note\"],\"default\":\"note\",\"description\":"
		 "\"the least severe level to list\"},"
		 "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "1000,\"default\":10,\"description\":\"most findings in the "
		 "JSON (all at detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = findings_call,
};
