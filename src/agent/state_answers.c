/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state_answers.c: the methods the writer answers from its aggregates
 * (recompositions, nav_state, state, inflight, frames, blocking), each
 * over the window its params name; state.c keeps the aggregates (state.h).
 */
#include "ph_common.h"
#include "state.h"
#include "bodies.h"
#include "ph_clock.h"

#include <time.h>

/* --- answers ------------------------------------------------------------- */

/* The window of a method's params (docs/protocol.md section 2). */
static void window(const struct ph_json *params, int64_t now, int64_t *from,
		   int64_t *to)
{
	int64_t v;

	*from = 0;
	*to = now;
	if (ph_json_as_int(ph_json_get(params, "sinceMs"), &v))
		*from = ph_state_since(now, v);
	if (ph_json_as_int(ph_json_get(params, "from"), &v))
		*from = v;
	if (ph_json_as_int(ph_json_get(params, "to"), &v))
		*to = v;
	if (*from < 0)
		*from = 0;
}

static int64_t param_int(const struct ph_json *params, const char *key,
			 int64_t def)
{
	int64_t v;

	return ph_json_as_int(ph_json_get(params, key), &v) && v > 0 ? v : def;
}

static int cmp_nodes(const void *a, const void *b)
{
	const struct ph_recomp_node *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

void ph_state_recompositions(const struct ph_state *st, struct ph_jw *w,
			     const struct ph_json *params, int64_t now)
{
	int64_t from, to, limit = param_int(params, "limit", 50);
	const struct ph_json *screen = ph_json_get(params, "screen");
	struct ph_recomp_node *sorted;
	size_t n = 0;

	/* "" and "null" count as absent, as in the published runtime. */
	if (!ph_json_is(screen, PH_JSON_STRING) || !screen->n ||
	    ph_json_streq(screen, "null"))
		screen = NULL;
	window(params, now, &from, &to);
	sorted = malloc((st->n_nodes ? st->n_nodes : 1) * sizeof(*sorted));
	for (size_t i = 0; sorted && i < st->n_nodes; i++) {
		const struct ph_recomp_node *nd = &st->nodes[i];

		if (nd->last_at < from || nd->first_at > to)
			continue;
		if (screen && !ph_json_streq(screen, nd->screen))
			continue;
		sorted[n++] = *nd;
	}
	if (sorted)
		qsort(sorted, n, sizeof(*sorted), cmp_nodes);
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "since", st->recomp_since);
	ph_jw_kv_int(w, "now", now);
	ph_jw_key(w, "nodes");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < n && (int64_t)i < limit; i++) {
		const struct ph_recomp_node *nd = &sorted[i];

		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "id", nd->id);
		ph_jw_kv_str(w, "name", nd->name);
		ph_jw_kv_str(w, "screen", nd->screen);
		ph_jw_kv_int(w, "count", (int64_t)nd->count);
		ph_jw_kv_int(w, "firstAt", nd->first_at);
		ph_jw_kv_int(w, "lastAt", nd->last_at);
		ph_jw_key(w, "triggeredBy");
		ph_jw_arr_begin(w);
		for (size_t k = 0; k < nd->n_trig; k++) {
			ph_jw_obj_begin(w);
			ph_jw_kv_str(w, "key", nd->trig[k].key);
			ph_jw_kv_int(w, "count", (int64_t)nd->trig[k].count);
			ph_jw_kv_bool(w, "named",
				      strncmp(nd->trig[k].key, "unnamed#", 8));
			ph_jw_obj_end(w);
		}
		ph_jw_arr_end(w);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_kv_int(w, "totalNodes", (int64_t)n);
	ph_jw_kv_bool(w, "truncated", (int64_t)n > limit);
	ph_jw_key(w, "unattributedWrites");
	ph_jw_arr_begin(w);
	ph_jw_arr_end(w);
	ph_jw_key(w, "notes");
	ph_jw_arr_begin(w);
	ph_jw_str(w, "Counts cover instrumented call sites only.");
	if (!sorted)
		ph_jw_str(w, "out of memory while sorting");
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
	free(sorted);
}

static void nav_entry(struct ph_jw *w, const char *route, const char *label,
		      const char *args, const char *state, int64_t entered)
{
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "route", route);
	ph_jw_kv_str(w, "destinationId", route);
	if (label[0])
		ph_jw_kv_str(w, "label", label);
	/* args: "k=v, k2=v2" into an object of strings */
	ph_jw_key(w, "args");
	ph_jw_obj_begin(w);
	for (const char *p = args; *p;) {
		const char *end = strstr(p, ", ");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);

		if (eq) {
			ph_jw_keyn(w, p, (size_t)(eq - p));
			ph_jw_strn(w, eq + 1, n - (size_t)(eq - p) - 1);
		}
		p += n + (end ? 2 : 0);
	}
	ph_jw_obj_end(w);
	ph_jw_kv_str(w, "lifecycleState", state);
	if (entered >= 0)
		ph_jw_kv_int(w, "enteredAt", entered);
	ph_jw_obj_end(w);
}

void ph_state_nav(const struct ph_state *st, struct ph_jw *w, int64_t now)
{
	int top = st->nav_depth - 1;

	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "capturedAt", now);
	ph_jw_kv_str(w, "graph", "app");
	if (top >= 0) {
		ph_jw_key(w, "current");
		nav_entry(w, st->nav[top].route, st->nav[top].label,
			  st->nav[top].args, "RESUMED",
			  st->nav[top].entered_at);
	}
	ph_jw_key(w, "backStack");
	ph_jw_arr_begin(w);
	for (int i = 0; i <= top; i++)
		nav_entry(w, st->nav[i].route, st->nav[i].label,
			  st->nav[i].args, i == top ? "RESUMED" : "CREATED",
			  -1);
	ph_jw_arr_end(w);
	if (st->deep_link[0]) {
		ph_jw_key(w, "deepLink");
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "uri", st->deep_link);
		ph_jw_kv_str(w, "action", "VIEW");
		ph_jw_key(w, "extras");
		ph_jw_obj_begin(w);
		ph_jw_obj_end(w);
		ph_jw_kv_int(w, "at", st->deep_link_at);
		ph_jw_obj_end(w);
	}
	if (top < 0)
		ph_jw_kv_str(w, "error", "the app has reported no navigation");
	ph_jw_obj_end(w);
}

void ph_state_state(const struct ph_state *st, struct ph_jw *w, int64_t now)
{
	/*
	 * The C agent sees state writes by key, not the values behind them:
	 * owners are the key prefixes ("Cart" of "Cart.items"), fields the
	 * keys with how often they were written.
	 */
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "capturedAt", now);
	ph_jw_key(w, "owners");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < st->n_keys; i++) {
		const char *key = st->keys[i].key;
		const char *dot = strchr(key, '.');
		size_t olen = dot ? (size_t)(dot - key) : strlen(key);
		bool first = true;

		/* one owner per distinct prefix, at its first key */
		for (size_t j = 0; j < i && first; j++)
			if (!strncmp(st->keys[j].key, key, olen) &&
			    (st->keys[j].key[olen] == '.' ||
			     !st->keys[j].key[olen]))
				first = false;
		if (!first)
			continue;
		ph_jw_obj_begin(w);
		ph_jw_key(w, "name");
		ph_jw_strn(w, key, olen);
		ph_jw_kv_str(w, "type", "registered");
		ph_jw_key(w, "fields");
		ph_jw_arr_begin(w);
		for (size_t j = i; j < st->n_keys; j++) {
			const char *k = st->keys[j].key;

			if (strncmp(k, key, olen) ||
			    (k[olen] != '.' && k[olen]))
				continue;
			ph_jw_obj_begin(w);
			ph_jw_kv_str(w, "key", k);
			ph_jw_kv_str(w, "kind", "plain");
			ph_jw_kv_str(w, "type", "unknown");
			ph_jw_key(w, "value");
			ph_jw_obj_begin(w);
			ph_jw_kv_int(w, "writes", (int64_t)st->keys[j].count);
			ph_jw_obj_end(w);
			ph_jw_kv_bool(w, "attributable", true);
			ph_jw_obj_end(w);
		}
		ph_jw_arr_end(w);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "notes");
	ph_jw_arr_begin(w);
	ph_jw_str(w, "The C agent records which state keys were written and "
		     "how often, not their values.");
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
}

/* "Name: value\n" lines (redacted by curl.c) as an object of strings. */
static void headers_json(struct ph_jw *w, const char *key, const char *h,
			 size_t n)
{
	struct ph_header line;
	char name[72];

	ph_jw_key(w, key);
	ph_jw_obj_begin(w);
	for (const char *p = h, *end = h + n; p < end;) {
		p = ph_header_next(p, end, &line);
		if (line.name_n >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)line.name_n,
			 line.name);
		ph_jw_key(w, name);
		ph_jw_strn(w, line.value, line.value_n);
	}
	ph_jw_obj_end(w);
}

static void call_json(struct ph_jw *w, const struct ph_call *c, int64_t now)
{
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "id", c->id);
	ph_jw_kv_str(w, "method", c->method);
	ph_jw_kv_str(w, "url", c->url);
	ph_jw_kv_int(w, "startedAt", c->started_at);
	ph_jw_kv_int(w, "elapsedMs",
		     c->done ? c->elapsed_ms : now - c->started_at);
	ph_jw_kv_str(w, "phase", c->phase);
	ph_jw_kv_bool(w, "onMainThread", c->main);
	ph_jw_kv_str(w, "thread", c->thread);
	if (c->status)
		ph_jw_kv_int(w, "status", c->status);
	headers_json(w, "requestHeaders", c->req_h, c->req_h_len);
	headers_json(w, "responseHeaders", c->resp_h, c->resp_h_len);
	if (c->done)
		ph_bodies_json(w, c->id); /* the newest 25 keep them */
	if (c->error[0])
		ph_jw_kv_str(w, "error", c->error);
	ph_jw_obj_end(w);
}

static void query_json(struct ph_jw *w, const struct ph_query *q, int64_t now)
{
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "id", q->id);
	ph_jw_kv_str(w, "sql", q->sql);
	ph_jw_key(w, "args");
	ph_jw_arr_begin(w);
	for (const char *p = q->args; *p;) {
		const char *end = strstr(p, ", ");
		size_t n = end ? (size_t)(end - p) : strlen(p);

		ph_jw_strn(w, p, n);
		p += n + (end ? 2 : 0);
	}
	ph_jw_arr_end(w);
	ph_jw_kv_int(w, "startedAt", q->started_at);
	ph_jw_kv_int(w, "elapsedMs",
		     q->done ? q->elapsed_ms : now - q->started_at);
	ph_jw_kv_str(w, "thread", q->thread);
	ph_jw_kv_bool(w, "done", q->done);
	ph_jw_kv_bool(w, "onMainThread", q->main);
	ph_jw_kv_str(w, "kind", q->kind);
	ph_jw_obj_end(w);
}

void ph_state_inflight(const struct ph_state *st, struct ph_jw *w,
		       const struct ph_json *params, int64_t now)
{
	int64_t from, to, limit = param_int(params, "limit", 25);
	int64_t sent = 0;

	window(params, now, &from, &to);
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "capturedAt", now);
	ph_jw_key(w, "http");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < 32; i++)
		if (st->open_http[i].id[0])
			call_json(w, &st->open_http[i], now);
	ph_jw_arr_end(w);
	ph_jw_key(w, "queries");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < 32; i++)
		if (st->open_db[i].id[0])
			query_json(w, &st->open_db[i], now);
	ph_jw_arr_end(w);
	ph_jw_key(w, "work");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < st->n_jobs; i++) {
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "id", st->jobs[i].work_id);
		ph_jw_kv_str(w, "name", st->jobs[i].name);
		ph_jw_kv_str(w, "state", st->jobs[i].state);
		ph_jw_key(w, "tags");
		ph_jw_arr_begin(w);
		ph_jw_arr_end(w);
		ph_jw_kv_int(w, "runAttemptCount", st->jobs[i].attempt);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "recentHttp");
	ph_jw_arr_begin(w);
	/* newest first, windowed by overlap, at most limit */
	for (size_t i = 0; i < st->recent_count && sent < limit; i++) {
		const struct ph_call *c = &st->recent_http[PH_RING_BACK(
			st->recent_http, st->recent_next, i)];

		if (c->started_at > to || c->started_at + c->elapsed_ms < from)
			continue;
		call_json(w, c, now);
		sent++;
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "notes");
	ph_jw_arr_begin(w);
	ph_jw_str(w, "Headers are redacted in the app before they leave "
		     "curl's callback; values are cut at 128 bytes and each "
		     "way's headers at 384. Bodies, when a handle asked for "
		     "them: the first 4 KiB of text types, kept for the "
		     "newest 25 finished calls; http_end events carry a "
		     "512-char snippet.");
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
}

/* Whether the span [at, at + ms] overlaps the window (both ends in). */
static bool overlaps(int64_t at, int64_t ms, int64_t from, int64_t to)
{
	return at <= to && at + (ms > 0 ? ms : 0) >= from;
}

static int cmp_jank(const void *a, const void *b)
{
	const struct ph_jank *x = *(const struct ph_jank *const *)a;
	const struct ph_jank *y = *(const struct ph_jank *const *)b;

	if (x->total_ms != y->total_ms)
		return x->total_ms < y->total_ms ? 1 : -1;
	return x->at < y->at ? 1 : x->at > y->at ? -1 : 0; /* newer first */
}

void ph_state_frames(const struct ph_state *st, struct ph_jw *w,
		     const struct ph_json *params, uint64_t total_frames,
		     double refresh_hz)
{
	const size_t cap = PH_ARRAY_SIZE(st->jank);
	const struct ph_jank *in[PH_ARRAY_SIZE(st->jank)];
	const struct ph_jank *oldest =
		&st->jank[st->jank_count < cap ? 0 : st->jank_next];
	int64_t limit = param_int(params, "limit", 20), from, to;
	size_t n = 0;

	window(params, ph_clock_uptime_ms(), &from, &to);
	for (size_t i = 0; i < st->jank_count; i++)
		if (overlaps(st->jank[i].at, st->jank[i].total_ms, from, to))
			in[n++] = &st->jank[i];
	/* Worst first, so any limit lists the window's worst. */
	qsort(in, n, sizeof(in[0]), cmp_jank);
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "totalFrames", (int64_t)total_frames);
	ph_jw_kv_int(w, "jankyFrames", (int64_t)n);
	ph_jw_kv_int(w, "droppedBySystem", 0);
	ph_jw_kv_int(w, "frameIntervalMs", (int64_t)(1000.0 / refresh_hz));
	ph_jw_key(w, "worst");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < n && (int64_t)i < limit; i++) {
		ph_jw_obj_begin(w);
		ph_jw_kv_int(w, "at", in[i]->at);
		ph_jw_kv_int(w, "totalMs", in[i]->total_ms);
		ph_jw_kv_int(w, "missedFrames", in[i]->missed);
		ph_jw_kv_str(w, "worstPhase", in[i]->worst_phase);
		ph_jw_key(w, "phases");
		ph_jw_obj_begin(w);
		ph_jw_obj_end(w);
		ph_jw_kv_bool(w, "firstDraw", in[i]->first_draw);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "notes");
	ph_jw_arr_begin(w);
	ph_jw_str(w, "Per-phase times of each late frame are on its frame "
		     "event.");
	if (st->jank_count == cap && oldest->at > from) {
		char note[160];

		snprintf(note, sizeof(note),
			 "late frames before t=%" PRId64
			 " are no longer held here (the newest %zu are); "
			 "the frame events have them",
			 oldest->at, cap);
		ph_jw_str(w, note);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
}

void ph_state_blocking(const struct ph_state *st, struct ph_jw *w,
		       const struct ph_json *params, int64_t stall_ms)
{
	int64_t limit = param_int(params, "limit", 20),
		now = ph_clock_uptime_ms();
	int64_t from, to, listed = 0;
	char note[200];

	window(params, now, &from, &to);
	ph_jw_obj_begin(w);
	ph_jw_key(w, "stalls");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < st->stall_count && listed < limit; i++) {
		const struct ph_stall *s =
			&st->stalls[PH_RING_BACK(st->stalls, st->stall_next, i)];

		if (!overlaps(s->at, s->duration_ms, from, to))
			continue;
		ph_jw_obj_begin(w);
		ph_jw_kv_int(w, "at", s->at);
		ph_jw_kv_int(w, "durationMs", s->duration_ms);
		ph_jw_kv_str(w, "stack", s->top);
		if (s->ongoing)
			ph_jw_kv_bool(w, "ongoing", true);
		ph_jw_obj_end(w);
		listed++;
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "mainThreadQueries");
	ph_jw_arr_begin(w);
	listed = 0;
	for (size_t i = 0; i < st->main_db_count && listed < limit; i++) {
		const struct ph_query *q = &st->main_db[PH_RING_BACK(
			st->main_db, st->main_db_next, i)];

		if (!overlaps(q->started_at, q->elapsed_ms, from, to))
			continue;
		query_json(w, q, 0);
		listed++;
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "mainThreadHttp");
	ph_jw_arr_begin(w);
	listed = 0;
	for (size_t i = 0; i < st->recent_count && listed < limit; i++) {
		const struct ph_call *c = &st->recent_http[PH_RING_BACK(
			st->recent_http, st->recent_next, i)];

		if (!c->main ||
		    !overlaps(c->started_at, c->elapsed_ms, from, to))
			continue;
		call_json(w, c, 0);
		listed++;
	}
	ph_jw_arr_end(w);
	ph_jw_kv_int(w, "stallThresholdMs", stall_ms);
	ph_jw_key(w, "notes");
	ph_jw_arr_begin(w);
	/* Each list is a ring of the newest: say where a full one starts. */
	if (st->stall_count == PH_ARRAY_SIZE(st->stalls) &&
	    st->stalls[st->stall_next].at > from) {
		snprintf(note, sizeof(note),
			 "stalls before t=%" PRId64
			 " are no longer held here (the newest 20 are); the "
			 "blocked events have them",
			 st->stalls[st->stall_next].at);
		ph_jw_str(w, note);
	}
	if (st->main_db_count == PH_ARRAY_SIZE(st->main_db) &&
	    st->main_db[st->main_db_next].started_at > from) {
		snprintf(note, sizeof(note),
			 "main-thread queries before t=%" PRId64
			 " are no longer held here (the newest 20 are); the "
			 "db_end events have them",
			 st->main_db[st->main_db_next].started_at);
		ph_jw_str(w, note);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
}
