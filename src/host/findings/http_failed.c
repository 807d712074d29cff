/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http_failed.c: http-failed.  A call answered 4xx/5xx, or that failed
 * with no answer (phase "failed"), is an error: grouped by method, URL path
 * and status, so three declined checkouts are one finding counted three
 * times.
 */
#include "ph_common.h"
#include "family.h"

struct grp {
	int64_t count, from, to, last_from, last_to, status;
	const char *method, *url, *path, *body, *detail;
};

struct http_failed_state {
	struct ph_smap groups; /* "METHOD path status" -> struct grp */
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct http_failed_state *s = p;
	int64_t status = 0, from, to;
	char method[16], url[600], key[700];
	const char *path;
	bool created;
	struct grp *g;

	if (ev->kind != PH_KIND_HTTP_END)
		return;
	if (!ph_ev_int(ev, "status", &status))
		status = 0;
	if (status < 400 && !ph_ev_streq(ev, "phase", "failed"))
		return;
	ph_ev_strcpy(ev, "method", method, sizeof(method));
	ph_ev_strcpy(ev, "url", url, sizeof(url));
	path = ph_url_path(c, url);
	snprintf(key, sizeof(key), "%s %s %" PRId64, method, path, status);
	g = ph_smap_get(c, &s->groups, key, strlen(key), sizeof(*g), &created);
	if (!g)
		return;
	from = c->from;
	to = c->to;
	if (created) {
		g->from = from;
		g->method = ph_keep(c, method, strlen(method));
		g->url = ph_keep(c, url, strlen(url));
		g->path = path;
		g->status = status;
		g->body = ph_keep_field(c, ev, "responseBody");
		g->detail = ph_keep_field(c, ev, "detail");
	}
	if (from < g->from)
		g->from = from;
	if (to > g->to)
		g->to = to;
	g->last_from = from;
	g->last_to = to;
	g->count++;
}

static void emit(struct ph_fctx *c, void *p)
{
	struct http_failed_state *s = p;

	for (size_t i = 0; i < s->groups.n; i++) {
		struct grp *g = s->groups.vals[i];
		struct ph_finding *f;
		struct ph_jw *jw;

		f = ph_fnd_new(c, "http-failed", PH_SEV_ERROR, PH_CONF_OBSERVED,
			       g->from, g->to);
		if (!f)
			return;
		f->count = g->count;
		f->last_from = g->last_from;
		f->last_to = g->last_to;
		if (g->status)
			ph_fnd_title(c, f, "%s %s answered %" PRId64, g->method,
				     g->path, g->status);
		else
			ph_fnd_title(c, f, "%s %s failed with no answer",
				     g->method, g->path);
		ph_fnd_detail(c, f, "%" PRId64 " call%s to %.300s", g->count,
			      g->count == 1 ? "" : "s", g->url);
		if (g->detail)
			ph_fnd_detail(c, f, "%.240s", g->detail);
		else if (g->body)
			ph_fnd_detail(c, f, "response: %.200s", g->body);
		ph_fnd_key(c, f, "http-failed:%s", s->groups.keys[i]);
		f->hint.text = ph_fnd_str(c, g->path);
		jw = ph_fnd_evidence_begin(c);
		ph_jw_kv_str(jw, "method", g->method);
		ph_jw_kv_str(jw, "url", g->url);
		if (g->status)
			ph_jw_kv_int(jw, "status", g->status);
		ph_jw_kv_int(jw, "count", g->count);
		if (g->body)
			ph_jw_kv_str(jw, "responseBody", g->body);
		if (g->detail)
			ph_jw_kv_str(jw, "detail", g->detail);
		ph_fnd_evidence_end(c, f);
	}
}

static void release(void *p)
{
	ph_smap_release(&((struct http_failed_state *)p)->groups);
}

const struct ph_family ph_family_http_failed = {
	.name = "http-failed",
	.ids = { "http-failed" },
	.kinds = PH_KIND_BIT(HTTP_END),
	.state_size = sizeof(struct http_failed_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
