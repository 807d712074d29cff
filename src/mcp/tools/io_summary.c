/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io_summary: the block I/O of a window, from the `io` events `porthole
 * iotrace attach` (or `capture --iotrace`'s session) put beside the app's
 * own events: each device's latency per operation, the busiest
 * processes, the app's and its main thread's requests, the app's
 * moments (stalls, late frames, queries) with I/O in flight, and the io
 * findings (the view's rules, src/host/io/io.c, through io/events.h).
 * Without io events it says so, and how to record some.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "host/io/events.h"

/* How much of each list an answer carries. */
struct caps {
	size_t devices, procs, moments, findings;
	bool full; /* findings in full, not one line each */
};

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void write_recordings(const struct ph_io_events *e, struct ph_jw *jw)
{
	ph_jw_key(jw, "recordings");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < e->nmarks; i++) {
		const struct ph_io_rec_mark *m = &e->marks[i];

		ph_jw_obj_begin(jw);
		ph_jw_kv_str(jw, "recording", m->id);
		if (m->dir)
			ph_jw_kv_str(jw, "dir", m->dir);
		if (m->alignment)
			ph_jw_kv_str(jw, "alignment", m->alignment);
		ph_jw_key(jw, "totalLost");
		if (m->lost >= 0)
			ph_jw_int(jw, m->lost);
		else
			ph_jw_null(jw);
		ph_jw_kv_int(jw, "from", m->t);
		ph_jw_kv_int(jw, "to", m->to);
		ph_jw_kv_int(jw, "requestsInWindow", (int64_t)m->in_window);
		ph_jw_kv_int(jw, "leftOut", (int64_t)m->left_out);
		if (m->app_only)
			ph_jw_kv_bool(jw, "appOnly", true);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
}

/*
 * The payload's members after sinceLast, with lists cut to k.  The
 * view's members are written as `porthole io --json` writes them
 * (io.h), so the two answers read alike.
 */
static void write_payload(const struct ph_io_view *v,
			  const struct ph_io_events *e, const char *source,
			  struct caps k, struct ph_jw *jw)
{
	size_t nlisted;

	ph_io_write_window(v, jw);
	ph_jw_kv_str(jw, "source", source);
	ph_io_write_app(v, jw);
	write_recordings(e, jw);
	ph_io_write_requests(v, jw);
	ph_io_write_devices(v, k.devices, jw);
	ph_io_write_processes(v, k.procs, jw);
	nlisted = ph_io_write_moments(v, k.moments, jw);
	ph_jw_kv_int(jw, "momentsWithAppIo", (int64_t)nlisted);
	ph_jw_key(jw, "findings");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < v->nf && i < k.findings; i++) {
		const struct ph_finding *f = &v->f[i];

		if (k.full) {
			ph_finding_write(f, jw);
			continue;
		}
		ph_jw_obj_begin(jw);
		ph_jw_kv_str(jw, "id", f->id);
		ph_jw_kv_str(jw, "severity", ph_severity_name(f->severity));
		ph_jw_kv_str(jw, "title", f->title);
		if (f->ndetail)
			ph_jw_kv_str(jw, "detail", f->detail[0]);
		if (!f->spanning) {
			ph_jw_kv_int(jw, "from", f->from);
			ph_jw_kv_int(jw, "to", f->to);
		}
		ph_jw_kv_int(jw, "count", f->count);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	ph_io_write_quiet(v, jw);
	ph_io_write_notes(v, jw);
}

/* The summary line: the headline numbers and the next call. */
static void summary(struct ph_mcp_call *c, const struct ph_io_view *v,
		    const struct ph_io_events *e)
{
	const struct ph_io_dev_op *slow = NULL;
	const struct ph_io_moment *worst = NULL;
	size_t nlisted = 0;
	char ws[80];

	ph_mcp_line(c,
		    "block I/O in t=%s: %zu request%s (%" PRIu64
		    " by the app, %.1f KiB; %" PRIu64
		    " on its main thread; %" PRIu64 " by %" PRIu64
		    " other process%s)",
		    ph_mcp_wstr(v->w, ws, sizeof(ws)), v->nreq,
		    v->nreq == 1 ? "" : "s", v->app_n,
		    (double)v->app_bytes / 1024, v->main_n, v->others_n,
		    v->other_procs, v->other_procs == 1 ? "" : "es");
	for (size_t i = 0; i < v->nops; i++)
		if (!slow || v->ops[i].p99_ns > slow->p99_ns)
			slow = &v->ops[i];
	if (slow && slow->p99_ns >= 0)
		ph_mcp_more(c,
			    "; slowest %u:%u %s p50 %.3f / p99 %.3f / max "
			    "%.3f ms",
			    slow->dev >> 20, slow->dev & 0xfffff, slow->op,
			    ms(slow->p50_ns), ms(slow->p99_ns),
			    ms(slow->max_ns));
	for (size_t i = 0; i < v->nprocs; i++)
		if (v->procs[i].pid != v->pid || v->pid <= 0) {
			ph_mcp_more(c, "; busiest other %.24s (%" PRIu64 ")",
				    v->procs[i].comm[0] ? v->procs[i].comm :
							  "issue unseen",
				    v->procs[i].n);
			break;
		}
	for (size_t i = 0; i < v->nmom; i++)
		if (ph_io_moment_listed(&v->mom[i])) {
			nlisted++;
			if (!worst ||
			    v->mom[i].app_worst_ns > worst->app_worst_ns)
				worst = &v->mom[i];
		}
	if (worst)
		ph_mcp_more(c,
			    "; %zu app moment%s with I/O in flight (worst: "
			    "%s at t=%" PRId64 ")",
			    nlisted, nlisted == 1 ? "" : "s",
			    ph_io_moment_name(worst->kind), worst->t);
	if (v->nf) {
		ph_mcp_more(c, "; findings:");
		for (size_t i = 0; i < v->nf; i++)
			ph_mcp_more(c, "%s %s %s (x%" PRId64 ")", i ? "," : "",
				    ph_severity_name(v->f[i].severity),
				    v->f[i].id, v->f[i].count);
	} else {
		ph_mcp_more(c, "; no io finding (%zu checks quiet)", v->nquiet);
	}
	if (e->nmarks && e->marks[0].left_out)
		ph_mcp_more(c,
			    "; attach left out %" PRIu64 " requests of "
			    "its window",
			    e->marks[0].left_out);
	ph_mcp_more(c, ". Next: findings ranks them with the rest; timeline "
		       "{kinds:[\"io\"]} lists the requests");
}

static int io_summary_call(struct ph_mcp_call *c)
{
	struct caps normal = { 20, 5, 10, 4, false },
		    full = { SIZE_MAX, PH_IO_MAX_PROCS, PH_IO_MAX_MOMENTS, 4,
			     true };
	struct ph_mcp_source src;
	struct ph_analysis *a;
	struct ph_io_events e;
	struct ph_io_view *v;
	int64_t limit = ph_mcp_limit(c, "limit", 10, 200);
	size_t at;

	if (ph_mcp_window_refused(c))
		return 0;
	v = ph_mcp_io_view(c, true, &e, &a, &src);
	if (!v)
		goto out;
	summary(c, v, &e);
	if (src.note[0])
		ph_mcp_more(c, " (%s)", src.note);
	normal.moments = (size_t)limit;
	full.moments = (size_t)ph_mcp_full_limit(c, "limit", 200);
	at = c->payload.len;
	ph_jw_kv_bool(&c->jw, "recorded", true);
	write_payload(v, &e, src.live ? "live" : src.path,
		      c->detail == PH_DETAIL_FULL ? full : normal, &c->jw);
	if (c->detail != PH_DETAIL_FULL) {
		/* M: the members detail full writes, written aside.  Here
		 * they follow sinceLast (",\"recorded\":true,..."); aside
		 * they open an object ("{\"recorded\":true,...}"): the same
		 * bytes but the first, and the aside has the closing }. */
		struct ph_buf b = PH_BUF_INIT((size_t)64 << 20);
		struct ph_jw jw;

		ph_jw_init(&jw, &b);
		ph_jw_obj_begin(&jw);
		ph_jw_kv_bool(&jw, "recorded", true);
		write_payload(v, &e, src.live ? "live" : src.path, full, &jw);
		ph_jw_obj_end(&jw);
		if (!ph_jw_finish(&jw))
			c->full_payload = at + b.len;
		ph_buf_release(&b);
	}
	ph_mcp_mark(c, c->w.to);
out:
	ph_io_view_free(v);
	ph_io_events_release(&e);
	ph_analysis_free(a);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_io_summary = {
	.name = "io_summary",
	.title = "Block I/O over a window",
	.description =
		"Disk (block) I/O beside the app's own events over a window, "
		"once an iotrace recording was attached to the session "
		"(`porthole iotrace attach`, or `porthole capture "
		"--iotrace`): latency per device and operation (p50/p99/"
		"max), the busiest processes, the requests the app and its "
		"main thread issued, the app's stalls, late frames and "
		"queries with I/O in flight, and the io findings "
		"(io-on-main-thread, io-slow-request, io-during-jank, "
		"io-lost-events). Says plainly when no block I/O was "
		"recorded, and how to record it.",
	.props = "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "1000,\"description\":\"most app moments with I/O in flight "
		 "listed; default 10 (200 at detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = io_summary_call,
};
