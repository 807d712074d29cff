/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http_slow.c: http-call-slow.  A call that took 3000 ms or more is a
 * warning, grouped by method and URL path.  The worst call's phases say
 * where the time went: "mostly <phase>" only when one phase is at least
 * half of the call, else "largest phase: <phase> (N of M ms)", because a
 * phase that is a third of the call is not what made it slow.  The network
 * state in force when the call started goes with it.
 */
#include "ph_common.h"
#include "family.h"

#define SLOW_MS 3000

struct grp {
	int64_t count, from, to, last_from, last_to;
	int64_t worst_ms, worst_at;
	const char *method, *url, *path;
	const char *phase; /* the worst call's largest phase, or NULL */
	int64_t phase_ms;
	const char *network;
};

struct http_slow_state {
	struct ph_smap groups;
	const char *network; /* "wifi (metered)", from device:network */
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct http_slow_state *s = p;
	int64_t from, to;
	char method[16], url[600], key[700];
	const char *path;
	struct grp *g;
	bool created;

	if (ev->kind == PH_KIND_DEVICE && ph_ev_streq(ev, "kind", "network")) {
		char tr[32], buf[64];

		ph_ev_strcpy(ev, "transport", tr, sizeof(tr));
		snprintf(buf, sizeof(buf), "%s%s", tr[0] ? tr : "unknown",
			 ph_ev_true(ev, "metered") ? " (metered)" : "");
		s->network = ph_keep(c, buf, strlen(buf));
		return;
	}
	if (ev->kind != PH_KIND_HTTP_END)
		return;
	from = c->from;
	to = c->to;
	if (to - from < SLOW_MS)
		return;
	ph_ev_strcpy(ev, "method", method, sizeof(method));
	ph_ev_strcpy(ev, "url", url, sizeof(url));
	path = ph_url_path(c, url);
	snprintf(key, sizeof(key), "%s %s", method, path);
	g = ph_smap_get(c, &s->groups, key, strlen(key), sizeof(*g), &created);
	if (!g)
		return;
	if (created) {
		g->from = from;
		g->method = ph_keep(c, method, strlen(method));
		g->path = path;
	}
	if (from < g->from)
		g->from = from;
	if (to > g->to)
		g->to = to;
	g->last_from = from;
	g->last_to = to;
	g->count++;
	if (to - from > g->worst_ms) {
		const struct ph_json *ph = ph_ev_get(ev, "phases");

		g->worst_ms = to - from;
		g->worst_at = from;
		g->url = ph_keep(c, url, strlen(url));
		g->network = s->network;
		g->phase = NULL;
		g->phase_ms = 0;
		for (size_t i = 0; ph_json_is(ph, PH_JSON_OBJECT) && i < ph->n;
		     i++) {
			int64_t v;

			if (ph_json_as_int(&ph->u.members[i].value, &v) &&
			    v > g->phase_ms) {
				g->phase_ms = v;
				g->phase = ph_keep(c, ph->u.members[i].key.u.s,
						   ph->u.members[i].key.n);
			}
		}
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct http_slow_state *s = p;

	for (size_t i = 0; i < s->groups.n; i++) {
		struct grp *g = s->groups.vals[i];
		struct ph_finding *f;
		struct ph_jw *jw;

		f = ph_fnd_new(c, "http-call-slow", PH_SEV_WARNING,
			       PH_CONF_OBSERVED, g->from, g->to);
		if (!f)
			return;
		f->count = g->count;
		f->last_from = g->last_from;
		f->last_to = g->last_to;
		ph_fnd_title(c, f, "%s %s took %" PRId64 " ms", g->method,
			     g->path, g->worst_ms);
		if (g->phase && g->phase_ms * 2 >= g->worst_ms)
			ph_fnd_detail(c, f,
				      "mostly %s (%" PRId64 " of %" PRId64
				      " ms)",
				      g->phase, g->phase_ms, g->worst_ms);
		else if (g->phase)
			ph_fnd_detail(c, f,
				      "largest phase: %s (%" PRId64
				      " of %" PRId64 " ms)",
				      g->phase, g->phase_ms, g->worst_ms);
		else
			ph_fnd_detail(c, f,
				      "the runtime sent no phase "
				      "breakdown for this call");
		ph_fnd_detail(c, f, "%" PRId64 " slow call%s; network: %s",
			      g->count, g->count == 1 ? "" : "s",
			      g->network ? g->network : "unknown");
		ph_fnd_key(c, f, "http-call-slow:%s", s->groups.keys[i]);
		f->hint.text = ph_fnd_str(c, g->path);
		jw = ph_fnd_evidence_begin(c);
		ph_jw_kv_str(jw, "method", g->method);
		ph_jw_kv_str(jw, "url", g->url);
		ph_jw_kv_int(jw, "elapsedMs", g->worst_ms);
		ph_jw_kv_int(jw, "at", g->worst_at);
		ph_jw_kv_int(jw, "count", g->count);
		if (g->phase) {
			ph_jw_kv_str(jw, "largestPhase", g->phase);
			ph_jw_kv_int(jw, "largestPhaseMs", g->phase_ms);
		}
		if (g->network)
			ph_jw_kv_str(jw, "network", g->network);
		ph_fnd_evidence_end(c, f);
	}
}

static void release(void *p)
{
	ph_smap_release(&((struct http_slow_state *)p)->groups);
}

const struct ph_family ph_family_http_slow = {
	.name = "http-call-slow",
	.ids = { "http-call-slow" },
	.kinds = PH_KIND_BIT(DEVICE) | PH_KIND_BIT(HTTP_END),
	.state_size = sizeof(struct http_slow_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
