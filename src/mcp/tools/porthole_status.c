/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole_status: connected or not and why not, with the fix; the last
 * exits the app reported (with exitTrace when the app still has it) and
 * the sessions on disk.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "host/env.h"
#include "host/session.h"

struct exits {
	struct ph_mcp_call *c;
	int n;
	int64_t last_ts;
	char last_reason[64];
};

static int exit_cb(void *ctx, const struct ph_event *ev)
{
	struct exits *x = ctx;
	int64_t ts = 0;

	if (x->n < 5) {
		ph_jw_value(&x->c->jw, ev->frame ? ev->frame : ev->data);
	}
	x->n++;
	if (ph_ev_int(ev, "timestamp", &ts))
		x->last_ts = ts;
	ph_ev_strcpy(ev, "reason", x->last_reason, sizeof(x->last_reason));
	return 0;
}

static const char *fix_for(const char *why, bool have_app_id)
{
	if (!have_app_id || strstr(why, "app id") || strstr(why, "socket name"))
		return "start the server with --application-id ID or set "
		       "PORTHOLE_APPLICATION_ID, or call porthole_connect "
		       "{applicationId}";
	if (strstr(why, "refused"))
		return ph_link_fix(why);
	return "start the app (a debug build linked with libporthole) and "
	       "check the app id; on a device, call porthole_connect "
	       "{launch:true}";
}

static int porthole_status_call(struct ph_mcp_call *c)
{
	struct ph_mcp *m = c->m;
	const char *app = ph_mcp_app_id(m);
	struct exits x = { c, 0, 0, "" };
	char why[400], dir[4200];
	struct ph_session_info *v;
	size_t n;
	bool ok = ph_mcp_connected(m);

	ph_jw_kv_bool(&c->jw, "connected", ok);
	ph_jw_kv_str(&c->jw, "applicationId", app);
	if (m->lv) {
		pthread_mutex_lock(&m->lv->link.mu);
		ph_jw_kv_str(&c->jw, "target", m->lv->link.target);
		if (m->lv->link.warning[0])
			ph_jw_kv_str(&c->jw, "warning", m->lv->link.warning);
		if (m->lv->link.ident.have) {
			ph_jw_key(&c->jw, "app");
			ph_jw_obj_begin(&c->jw);
			ph_jw_kv_str(&c->jw, "packageName",
				     m->lv->link.ident.package);
			ph_jw_kv_str(&c->jw, "versionName",
				     m->lv->link.ident.version);
			ph_jw_kv_str(&c->jw, "device",
				     m->lv->link.ident.device);
			ph_jw_kv_int(&c->jw, "startedAt",
				     m->lv->link.ident.started_at);
			ph_jw_kv_int(&c->jw, "protocol",
				     m->lv->link.ident.protocol);
			ph_jw_obj_end(&c->jw);
		}
		ph_jw_kv_int(&c->jw, "connects", (int64_t)m->lv->link.connects);
		pthread_mutex_unlock(&m->lv->link.mu);
	}
	if (ok) {
		pthread_mutex_lock(&m->lv->link.mu);
		ph_mcp_line(c, "connected to %s (%s %s on %s) via %s",
			    m->lv->link.ident.package,
			    m->lv->link.ident.package,
			    m->lv->link.ident.version, m->lv->link.ident.device,
			    m->lv->link.target);
		if (m->lv->link.warning[0])
			ph_mcp_more(c, "; warning: %s", m->lv->link.warning);
		pthread_mutex_unlock(&m->lv->link.mu);
	} else {
		ph_mcp_why_not(m, why, sizeof(why));
		ph_mcp_line(c, "not connected: %s; fix: %s", why,
			    fix_for(why, app != NULL));
		ph_jw_kv_str(&c->jw, "why", why);
		ph_jw_kv_str(&c->jw, "fix", fix_for(why, app != NULL));
	}
	/* the exits the runtime reported, live or from the last session */
	ph_jw_key(&c->jw, "exits");
	ph_jw_arr_begin(&c->jw);
	if (m->lv) /* ph_store_each locks: nevents is the parser's */
		ph_store_each(&m->lv->store, PH_WINDOW_ALL,
			      ph_kinds_mask("exit"), exit_cb, &x);
	ph_jw_arr_end(&c->jw);
	if (x.n) {
		ph_mcp_more(c, "; %d exit%s reported, the last: %s", x.n,
			    x.n == 1 ? "" : "s", x.last_reason);
		if (ok && x.last_ts) {
			const struct ph_json *r;
			char p[64];

			snprintf(p, sizeof(p), "{\"timestamp\":%" PRId64 "}",
				 x.last_ts);
			if (!ph_mcp_app(c, "exit_trace", p, &r)) {
				ph_mcp_put(c, "exitTrace", r);
				if (ph_json_is(ph_json_get(r, "found"),
					       PH_JSON_TRUE))
					ph_mcp_more(c, " (exitTrace in the "
						       "JSON: detail normal)");
			} else {
				c->is_error = false; /* the status stands */
			}
		}
	} else {
		ph_mcp_more(c, "; no exits reported");
	}
	ph_env_sessions_dir(dir, sizeof(dir));
	if (!ph_sessions_list(dir, &v, &n)) {
		size_t shown = 0;

		ph_jw_key(&c->jw, "sessions");
		ph_jw_arr_begin(&c->jw);
		for (size_t i = 0; i < n && shown < 5; i++) {
			if (app && strcmp(v[i].package, app))
				continue;
			if (!shown)
				ph_mcp_more(c,
					    "; last session %s (%" PRIu64
					    " events%s)",
					    v[i].id, v[i].events,
					    v[i].recording ? ", recording" :
							     "");
			shown++;
			ph_jw_obj_begin(&c->jw);
			ph_jw_kv_str(&c->jw, "id", v[i].id);
			ph_jw_kv_str(&c->jw, "path", v[i].path);
			ph_jw_kv_int(&c->jw, "events", (int64_t)v[i].events);
			ph_jw_kv_int(&c->jw, "firstT", v[i].first_t);
			ph_jw_kv_int(&c->jw, "lastT", v[i].last_t);
			ph_jw_kv_bool(&c->jw, "recording", v[i].recording);
			ph_jw_obj_end(&c->jw);
		}
		ph_jw_arr_end(&c->jw);
		free(v);
	}
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_porthole_status = {
	.name = "porthole_status",
	.title = "Connection status",
	.description = "Whether Porthole is connected to the app and, when "
		       "not, why (no app id, not running, no device, protocol "
		       "refused...) with the fix; the exits the app reported "
		       "(crash, ANR...) with exitTrace when the app still "
		       "holds it; the sessions recorded on disk.",
	.flags = PH_TOOL_READONLY | PH_TOOL_IDEMPOTENT,
	.call = porthole_status_call,
};
