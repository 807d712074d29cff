/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io_requests: the block requests themselves, from the `io` events an
 * attached recording put in the session (io_summary gives the totals and
 * the findings; this gives the rows behind them): whose (the app's, its
 * main thread's, other processes', all), how slow at least, which
 * operation, slowest first or in time order.  Each request is written as
 * a capture's io span (host/io/write.c), so the two read alike.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "host/io/events.h"

struct filter {
	const char *who; /* app, main, others, all */
	int64_t min_ns;	 /* latency at least; 0: any, unseen issues too */
	const char *op;	 /* NULL: any */
};

static bool wanted(const struct filter *f, const struct ph_io_req *r)
{
	if (!strcmp(f->who, "app")    ? !r->app :
	    !strcmp(f->who, "main")   ? !r->main :
	    !strcmp(f->who, "others") ? r->app :
					false)
		return false;
	if (f->min_ns > 0 && r->latency_ns < f->min_ns)
		return false;
	return !f->op || !strcmp(f->op, r->op);
}

/* Slowest first; a request whose issue was unseen (no latency) last. */
static int slower(const void *x, const void *y)
{
	const struct ph_io_req *a = *(const struct ph_io_req *const *)x;
	const struct ph_io_req *b = *(const struct ph_io_req *const *)y;

	if (a->latency_ns != b->latency_ns)
		return a->latency_ns > b->latency_ns ? -1 : 1;
	return a->issue_ns < b->issue_ns ? -1 : a->issue_ns > b->issue_ns;
}

/* The requests that pass f, in the order asked; NULL when out of memory. */
static const struct ph_io_req **select_reqs(const struct ph_io_view *v,
					    const struct filter *f,
					    bool by_time, size_t *n)
{
	const struct ph_io_req **sel = malloc(sizeof(*sel) * (v->nreq + 1));

	*n = 0;
	if (!sel)
		return NULL;
	/* v->req is in issue order already */
	for (size_t i = 0; i < v->nreq; i++)
		if (wanted(f, &v->req[i]))
			sel[(*n)++] = &v->req[i];
	if (!by_time)
		qsort(sel, *n, sizeof(*sel), slower);
	return sel;
}

static void write_list(const struct ph_io_req *const *sel, size_t n, size_t max,
		       struct ph_jw *jw)
{
	ph_jw_key(jw, "requests");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < n && i < max; i++)
		ph_io_write_span(sel[i], jw);
	ph_jw_arr_end(jw);
}

/* The bytes write_list writes for the first max of sel; 0 on failure. */
static size_t list_bytes(const struct ph_io_req *const *sel, size_t n,
			 size_t max)
{
	struct ph_buf b = PH_BUF_INIT((size_t)64 << 20);
	struct ph_jw jw;
	size_t len;

	ph_jw_init(&jw, &b);
	ph_jw_obj_begin(&jw);
	write_list(sel, n, max, &jw);
	ph_jw_obj_end(&jw);
	len = ph_jw_finish(&jw) ? 0 : b.len;
	ph_buf_release(&b);
	return len;
}

static void summary(struct ph_mcp_call *c, const struct ph_io_view *v,
		    const struct filter *f, const struct ph_io_req *const *sel,
		    size_t n, size_t listed, bool by_time)
{
	char ws[80];

	ph_mcp_line(c, "%zu block request%s in t=%s", n, n == 1 ? "" : "s",
		    ph_mcp_wstr(v->w, ws, sizeof(ws)));
	ph_mcp_more(c, " (%s",
		    !strcmp(f->who, "app")    ? "the app's" :
		    !strcmp(f->who, "main")   ? "its main thread's" :
		    !strcmp(f->who, "others") ? "other processes'" :
						"every process's");
	if (f->op)
		ph_mcp_more(c, ", %s", f->op);
	if (f->min_ns > 0)
		ph_mcp_more(c, ", %.3f ms or slower", (double)f->min_ns / 1e6);
	ph_mcp_more(c, "; of %zu in the window)", v->nreq);
	if (n && !by_time && sel[0]->latency_ns >= 0)
		ph_mcp_more(c, "; slowest %.3f ms, %s %s by %s at t=%.1f",
			    (double)sel[0]->latency_ns / 1e6, sel[0]->op,
			    sel[0]->rwbs,
			    sel[0]->comm[0] ? sel[0]->comm : "issue unseen",
			    (double)sel[0]->issue_ns / 1e6);
	ph_mcp_more(c, "; %zu listed, %s", listed,
		    by_time ? "in issue order" : "slowest first");
	if (!v->app_n && !strcmp(f->who, "app") && v->nreq)
		ph_mcp_more(c, ". The app issued none: who:\"all\" lists the "
			       "others (writeback is kworker's, not the "
			       "app's)");
}

static int io_requests_call(struct ph_mcp_call *c)
{
	struct filter f = { ph_mcp_arg_str(c, "who", "app"), 0,
			    ph_mcp_arg_str(c, "op", NULL) };
	bool by_time = !strcmp(ph_mcp_arg_str(c, "order", "slowest"), "time");
	int64_t limit = ph_mcp_limit(c, "limit", 20, 200);
	struct ph_mcp_source src;
	struct ph_analysis *a;
	struct ph_io_events e;
	struct ph_io_view *v;
	const struct ph_io_req **sel = NULL;
	double min_ms = 0;
	size_t n = 0, listed;

	if (ph_mcp_window_refused(c))
		return 0;
	/* the schema's maximum, checked here for a fractional value too
	 * (the server checks whole numbers): an hour's ns fit in 64 bits */
	if (ph_json_as_double(ph_json_get(c->args, "minLatencyMs"), &min_ms)) {
		if (!(min_ms <= 3600000))
			return ph_mcp_fail(c,
					   "argument 'minLatencyMs' is %g; the "
					   "most it may be is 3600000",
					   min_ms);
		if (min_ms > 0)
			f.min_ns = (int64_t)(min_ms * 1e6 + 0.5);
	}
	v = ph_mcp_io_view(c, false, &e, &a, &src);
	if (!v)
		goto out;
	sel = select_reqs(v, &f, by_time, &n);
	if (!sel) {
		ph_mcp_fail(c, "out of memory");
		goto out;
	}
	listed = n < (size_t)limit ? n : (size_t)limit;
	summary(c, v, &f, sel, n, listed, by_time);
	if (src.note[0])
		ph_mcp_more(c, " (%s)", src.note);
	ph_jw_kv_bool(&c->jw, "recorded", true);
	ph_io_write_window(v, &c->jw);
	ph_io_write_app(v, &c->jw);
	ph_jw_kv_int(&c->jw, "matched", (int64_t)n);
	ph_jw_kv_int(&c->jw, "inWindow", (int64_t)v->nreq);
	write_list(sel, n, listed, &c->jw);
	if (ph_mcp_capped(c, "limit") && n > listed) {
		/* M: this payload with the list detail full would give */
		size_t full = (size_t)ph_mcp_full_limit(c, "limit", 200);
		size_t more = list_bytes(sel, n, full),
		       now = list_bytes(sel, n, listed);

		/* and the payload's closing brace, as the other tools count */
		if (more > now)
			c->full_payload = c->payload.len + more - now + 1;
	}
	ph_mcp_mark(c, c->w.to);
out:
	free(sel);
	ph_io_view_free(v);
	ph_io_events_release(&e);
	ph_analysis_free(a);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_io_requests = {
	.name = "io_requests",
	.title = "Block I/O requests over a window",
	.description =
		"The disk (block) requests behind io_summary, once an "
		"iotrace recording was attached to the session (`porthole "
		"iotrace attach`, or `porthole capture --iotrace`): each "
		"request's issue and completion time on the app's clock, "
		"latency, device, operation, bytes, and the pid, tid and "
		"command that issued it. Filter by who issued it (the app, "
		"its main thread, other processes, all), a minimum latency "
		"and an operation; slowest first or in issue order. Says "
		"plainly when no block I/O was recorded.",
	.props = "\"who\":{\"type\":\"string\",\"enum\":[\"app\",\"main\","
		 "\"others\",\"all\"],\"description\":\"whose requests; "
		 "default app\"},\"minLatencyMs\":{\"type\":\"number\","
		 "\"minimum\":0,\"maximum\":3600000,\"description\":"
		 "\"only requests at least this slow\"},\"op\":{\"type\":"
		 "\"string\",\"enum\":[\"read\","
		 "\"write\",\"flush\",\"discard\",\"secure_erase\",\"none\"],"
		 "\"description\":\"only this operation\"},\"order\":{"
		 "\"type\":\"string\",\"enum\":[\"slowest\",\"time\"],"
		 "\"description\":\"slowest first (default) or issue "
		 "order\"},\"limit\":{\"type\":\"integer\",\"minimum\":1,"
		 "\"maximum\":1000,\"description\":\"most requests listed; "
		 "default 20 (200 at detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_WINDOW,
	.call = io_requests_call,
};
