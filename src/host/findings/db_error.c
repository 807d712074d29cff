/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db_error.c: db-error.  A statement the database refused (a constraint,
 * a syntax error, a locked database) is a warning: the app went on, but
 * the write it meant to make did not happen.  One finding per error text.
 */
#include "ph_common.h"
#include "family.h"

struct grp {
	int64_t count, from, to, last_from, last_to;
	const char *sql;
	bool main;
};

struct db_error_state {
	struct ph_smap by_error; /* error text -> struct grp */
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct db_error_state *s = p;
	const char *err;
	size_t n;
	bool created;
	struct grp *g;
	int64_t from, to;

	if (ev->kind != PH_KIND_DB_END || !ph_ev_str(ev, "error", &err, &n))
		return;
	g = ph_smap_get(c, &s->by_error, err, n, sizeof(*g), &created);
	if (!g)
		return;
	from = c->from;
	to = c->to;
	if (created || from < g->from)
		g->from = from;
	if (to > g->to)
		g->to = to;
	g->last_from = from;
	g->last_to = to;
	g->count++;
	if (created) {
		g->sql = ph_keep_field(c, ev, "sql");
		g->main = ph_ev_on_main(ev);
	}
}

static void emit(struct ph_fctx *c, void *p)
{
	struct db_error_state *s = p;

	for (size_t i = 0; i < s->by_error.n; i++) {
		struct grp *g = s->by_error.vals[i];
		const char *err = s->by_error.keys[i];
		struct ph_finding *f;
		struct ph_jw *jw;

		f = ph_fnd_new(c, "db-error", PH_SEV_WARNING, PH_CONF_OBSERVED,
			       g->from, g->to);
		if (!f)
			return;
		f->count = g->count;
		f->last_from = g->last_from;
		f->last_to = g->last_to;
		ph_fnd_title(c, f, "Database error: %.160s", err);
		ph_fnd_detail(c, f, "%" PRId64 " time%s: %.200s", g->count,
			      g->count == 1 ? "" : "s", g->sql ? g->sql : "?");
		ph_fnd_key(c, f, "db-error:%.200s", err);
		f->hint.text = ph_fnd_str(c, g->sql);
		jw = ph_fnd_evidence_begin(c);
		ph_jw_kv_str(jw, "error", err);
		ph_jw_kv_str(jw, "sql", g->sql);
		ph_jw_kv_int(jw, "count", g->count);
		ph_jw_kv_bool(jw, "onMainThread", g->main);
		ph_fnd_evidence_end(c, f);
	}
}

static void release(void *p)
{
	ph_smap_release(&((struct db_error_state *)p)->by_error);
}

const struct ph_family ph_family_db_error = {
	.name = "db-error",
	.ids = { "db-error" },
	.kinds = PH_KIND_BIT(DB_END),
	.state_size = sizeof(struct db_error_state),
	.event = on_event,
	.emit = emit,
	.release = release,
};
