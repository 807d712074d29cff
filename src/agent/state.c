/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.c: the writer's aggregates; see state.h.
 */
#include "ph_common.h"
#include "state.h"
#include "bodies.h"
#include "ph_clock.h"

#include <time.h>

/* Temporal attribution: state written this long before a recompose. */
#define ATTRIBUTION_MS 32

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

void ph_state_init(struct ph_state *st)
{
	memset(st, 0, sizeof(*st));
	st->wall_offset_ms = ph_clock_mono_to_real_offset_ns() / 1000000;
}

void ph_state_release(struct ph_state *st)
{
	free(st->nodes);
	ph_state_init(st);
}

/* `reset`: forget recompositions, frames, stalls and main-thread queries. */
void ph_state_reset(struct ph_state *st, int64_t now)
{
	st->n_nodes = 0;
	st->recomp_since = now;
	st->jank_next = st->jank_count = 0;
	st->janky = 0;
	st->stall_count = st->stall_next = 0;
	st->main_db_count = st->main_db_next = 0;
}

static struct ph_recomp_node *find_node(struct ph_state *st, const char *id)
{
	struct ph_recomp_node *n;

	for (size_t i = 0; i < st->n_nodes; i++)
		if (!strcmp(st->nodes[i].id, id))
			return &st->nodes[i];
	if (st->n_nodes == st->cap_nodes) {
		size_t cap = st->cap_nodes ? st->cap_nodes * 2 : 64;

		/* A bound: an app with 4096 distinct components is an outlier.
		 */
		if (cap > 4096)
			return NULL;
		n = realloc(st->nodes, cap * sizeof(*n));
		if (!n)
			return NULL;
		st->nodes = n;
		st->cap_nodes = cap;
	}
	n = &st->nodes[st->n_nodes++];
	memset(n, 0, sizeof(*n));
	copy(n->id, sizeof(n->id), id);
	return n;
}

static void count_key(struct ph_count *arr, size_t *n, size_t max,
		      const char *key)
{
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp(arr[i].key, key)) {
			arr[i].count++;
			return;
		}
	}
	if (*n < max) {
		copy(arr[*n].key, sizeof(arr[*n].key), key);
		arr[(*n)++].count = 1;
	}
}

static void apply_recompose(struct ph_state *st, struct ph_rec *r)
{
	char id[PH_NAME_MAX], buf[PH_NAME_MAX];
	struct ph_recomp_node *n;
	size_t len;
	bool explicit_trig = ph_rec_find(r, PH_KEY_TRIGGERED_BY, &len) != NULL;

	n = find_node(st, ph_rec_get_str(r, PH_KEY_ID, id, sizeof(id)));
	if (n) {
		if (!n->count)
			n->first_at = ph_rec_t(r);
		n->count++;
		n->last_at = ph_rec_t(r);
		copy(n->name, sizeof(n->name),
		     ph_rec_get_str(r, PH_KEY_NAME, buf, sizeof(buf)));
		copy(n->screen, sizeof(n->screen),
		     ph_rec_get_str(r, PH_KEY_SCREEN, buf, sizeof(buf)));
	}
	ph_rec_int(r, PH_KEY_PASS, n ? (int64_t)n->count : 1);
	if (explicit_trig) {
		/* Count the app's own triggers. */
		size_t off = 0;

		while (n && off + 4 <= r->used) {
			const uint8_t *p = r->data + off;
			size_t flen = (size_t)p[2] | (size_t)p[3] << 8;

			if (p[0] == PH_KEY_TRIGGERED_BY && flen < sizeof(buf)) {
				memcpy(buf, p + 4, flen);
				buf[flen] = '\0';
				count_key(n->trig, &n->n_trig, 8, buf);
			}
			off += 4 + flen;
		}
		return;
	}
	/* Temporal: every key written in the 32 ms before this pass. */
	for (unsigned i = 0, found = 0; i < 64 && found < 16; i++) {
		unsigned k = (st->w_next + 63 - i) % 64;

		if (!st->writes[k].key[0])
			continue;
		if (st->writes[k].t > ph_rec_t(r) ||
		    ph_rec_t(r) - st->writes[k].t > ATTRIBUTION_MS)
			continue;
		/* a key written twice in the window is one trigger */
		{
			bool dup = false;

			for (unsigned j = 0; j < i && !dup; j++) {
				unsigned q = (st->w_next + 63 - j) % 64;

				dup = st->writes[q].t <= ph_rec_t(r) &&
				      ph_rec_t(r) - st->writes[q].t <=
					      ATTRIBUTION_MS &&
				      !strcmp(st->writes[q].key,
					      st->writes[k].key);
			}
			if (dup)
				continue;
		}
		ph_rec_arr_str(r, PH_KEY_TRIGGERED_BY, st->writes[k].key,
			       PH_NAME_MAX);
		if (n)
			count_key(n->trig, &n->n_trig, 8, st->writes[k].key);
		found++;
	}
	if (!ph_rec_find(r, PH_KEY_TRIGGERED_BY, &len))
		ph_rec_field(r, PH_KEY_TRIGGERED_BY, PH_F_ARR_EMPTY, 0);
	ph_rec_str(r, PH_KEY_ATTRIBUTION, "temporal", 16);
}

static void apply_state_write(struct ph_state *st, struct ph_rec *r)
{
	char key[PH_NAME_MAX];
	bool named;

	ph_rec_get_str(r, PH_KEY_KEYS, key, sizeof(key));
	named = strncmp(key, "unnamed#", 8) != 0;
	if (named)
		ph_rec_arr_str(r, PH_KEY_NAMED, key, PH_NAME_MAX);
	ph_rec_int(r, PH_KEY_UNNAMED, named ? 0 : 1);
	copy(st->writes[st->w_next].key, PH_NAME_MAX, key);
	st->writes[st->w_next].t = ph_rec_t(r);
	st->w_next = (st->w_next + 1) % 64;
	if (named)
		count_key(st->keys, &st->n_keys, 64, key);
	else
		st->anon_writes++;
}

static void apply_nav(struct ph_state *st, const struct ph_rec *r)
{
	char dir[16];
	int d;

	ph_rec_get_str(r, PH_KEY_DIRECTION, dir, sizeof(dir));
	d = (int)ph_rec_get_int(r, PH_KEY_DEPTH, st->nav_depth);
	if (d < 1)
		d = 1;
	if (d > 32)
		d = 32;
	st->nav_depth = d;
	/* The entry at the new top is this route (push, replace, start). */
	if (strcmp(dir, "pop") || !st->nav[d - 1].route[0]) {
		ph_rec_get_str(r, PH_KEY_ROUTE, st->nav[d - 1].route,
			       PH_NAME_MAX);
		ph_rec_get_str(r, PH_KEY_LABEL, st->nav[d - 1].label,
			       PH_NAME_MAX);
		ph_rec_get_str(r, PH_KEY_ARGS, st->nav[d - 1].args,
			       PH_TEXT_MAX);
		st->nav[d - 1].entered_at = ph_rec_t(r);
	}
	if (ph_rec_get_str(r, PH_KEY_DEEP_LINK, st->deep_link,
			   sizeof(st->deep_link))[0])
		st->deep_link_at = ph_rec_t(r);
}

/* PH_STATE_THREAD_ROOM (state.h) is what this appends at most. */
static void add_thread(struct ph_rec *r, const char *thread, bool db)
{
	bool main = r->flags & PH_REC_MAIN;

	ph_rec_str(r, PH_KEY_THREAD, thread, PH_NAME_MAX);
	ph_rec_bool(r, PH_KEY_MAIN_THREAD, main);
	if (db && main)
		ph_rec_str(r, PH_KEY_ON_MAIN_THREAD, "true", 8);
}

static struct ph_call *find_call(struct ph_call *arr, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (arr[i].id[0] && !strcmp(arr[i].id, id))
			return &arr[i];
	return NULL;
}

/* A header-lines field of r into buf; its length (0 when none). */
static uint16_t copy_headers(const struct ph_rec *r, enum ph_key key, char *buf,
			     size_t cap)
{
	size_t n = 0;
	const uint8_t *p = ph_rec_find(r, key, &n);

	if (!p || n > cap)
		return 0;
	memcpy(buf, p, n);
	return (uint16_t)n;
}

static void apply_http(struct ph_state *st, struct ph_rec *r,
		       const char *thread)
{
	char id[24];
	struct ph_call *c;

	ph_rec_get_str(r, PH_KEY_ID, id, sizeof(id));
	if (r->kind == PH_KIND_HTTP_START) {
		c = find_call(st->open_http, 32, "");
		for (size_t i = 0; !c && i < 32; i++)
			if (!st->open_http[i].id[0])
				c = &st->open_http[i];
		if (!c)
			c = &st->open_http[0]; /* a leak of open calls: reuse */
		memset(c, 0, sizeof(*c));
		copy(c->id, sizeof(c->id), id);
		ph_rec_get_str(r, PH_KEY_METHOD, c->method, sizeof(c->method));
		ph_rec_get_str(r, PH_KEY_URL, c->url, sizeof(c->url));
		copy(c->thread, sizeof(c->thread), thread);
		copy(c->phase, sizeof(c->phase), "waiting");
		c->started_at = ph_rec_t(r);
		c->main = r->flags & PH_REC_MAIN;
		c->req_h_len = copy_headers(r, PH_KEY_REQUEST_HEADERS, c->req_h,
					    sizeof(c->req_h));
		add_thread(r, thread, false);
		return;
	}
	c = find_call(st->open_http, 32, id);
	{
		size_t len;

		if (c && !ph_rec_find(r, PH_KEY_METHOD, &len))
			ph_rec_str(r, PH_KEY_METHOD, c->method, 16);
		if (c && !ph_rec_find(r, PH_KEY_URL, &len))
			ph_rec_str(r, PH_KEY_URL, c->url, PH_TEXT_MAX);
		if (c && !ph_rec_find(r, PH_KEY_ELAPSED_MS, &len))
			ph_rec_qint(r, PH_KEY_ELAPSED_MS,
				    ph_rec_t(r) - c->started_at);
	}
	{
		struct ph_call *done = &st->recent_http[st->recent_next];

		if (c) {
			*done = *c;
			c->id[0] = '\0';
		} else {
			memset(done, 0, sizeof(*done));
			copy(done->id, sizeof(done->id), id);
			ph_rec_get_str(r, PH_KEY_METHOD, done->method,
				       sizeof(done->method));
			ph_rec_get_str(r, PH_KEY_URL, done->url,
				       sizeof(done->url));
			copy(done->thread, sizeof(done->thread), thread);
		}
		done->done = true;
		done->elapsed_ms = ph_rec_get_int(r, PH_KEY_ELAPSED_MS, 0);
		done->status = (int)ph_rec_get_int(r, PH_KEY_STATUS, 0);
		ph_rec_get_str(r, PH_KEY_PHASE, done->phase,
			       sizeof(done->phase));
		ph_rec_get_str(r, PH_KEY_DETAIL, done->error,
			       sizeof(done->error));
		done->resp_h_len = copy_headers(r, PH_KEY_RESPONSE_HEADERS,
						done->resp_h,
						sizeof(done->resp_h));
		st->recent_next = (st->recent_next + 1) % 200;
		if (st->recent_count < 200)
			st->recent_count++;
	}
	add_thread(r, thread, false);
}

static void apply_db(struct ph_state *st, struct ph_rec *r, const char *thread)
{
	char id[24];
	struct ph_query *q = NULL;

	ph_rec_get_str(r, PH_KEY_ID, id, sizeof(id));
	add_thread(r, thread, true);
	for (size_t i = 0; i < 32 && !q; i++)
		if (st->open_db[i].id[0] && !strcmp(st->open_db[i].id, id))
			q = &st->open_db[i];
	if (r->kind == PH_KIND_DB_START) {
		for (size_t i = 0; i < 32 && !q; i++)
			if (!st->open_db[i].id[0])
				q = &st->open_db[i];
		if (!q)
			q = &st->open_db[0];
		memset(q, 0, sizeof(*q));
		copy(q->id, sizeof(q->id), id);
		ph_rec_get_str(r, PH_KEY_SQL, q->sql, sizeof(q->sql));
		ph_rec_get_str(r, PH_KEY_ARGS, q->args, sizeof(q->args));
		ph_rec_get_str(r, PH_KEY_KIND, q->kind, sizeof(q->kind));
		copy(q->thread, sizeof(q->thread), thread);
		q->started_at = ph_rec_t(r);
		q->main = r->flags & PH_REC_MAIN;
		return;
	}
	if (q) {
		size_t len;

		if (!ph_rec_find(r, PH_KEY_SQL, &len))
			ph_rec_str(r, PH_KEY_SQL, q->sql, PH_TEXT_MAX);
		if (!ph_rec_find(r, PH_KEY_KIND, &len))
			ph_rec_str(r, PH_KEY_KIND, q->kind, 8);
		if (!ph_rec_find(r, PH_KEY_ELAPSED_MS, &len))
			ph_rec_qint(r, PH_KEY_ELAPSED_MS,
				    ph_rec_t(r) - q->started_at);
		q->done = true;
		q->elapsed_ms = ph_rec_get_int(r, PH_KEY_ELAPSED_MS, 0);
		if (q->main) {
			st->main_db[st->main_db_next] = *q;
			st->main_db_next = (st->main_db_next + 1) % 20;
			if (st->main_db_count < 20)
				st->main_db_count++;
		}
		q->id[0] = '\0';
	}
}

static void apply_work(struct ph_state *st, struct ph_rec *r)
{
	char wid[PH_NAME_MAX];
	struct ph_job *j = NULL;

	ph_rec_get_str(r, PH_KEY_WORK_ID, wid, sizeof(wid));
	for (size_t i = 0; i < st->n_jobs && !j; i++)
		if (!strcmp(st->jobs[i].work_id, wid))
			j = &st->jobs[i];
	if (!j) {
		if (st->n_jobs == 16)
			memmove(st->jobs, st->jobs + 1, 15 * sizeof(*j));
		else
			st->n_jobs++;
		j = &st->jobs[st->n_jobs - 1];
		memset(j, 0, sizeof(*j));
		copy(j->work_id, sizeof(j->work_id), wid);
	}
	if (r->kind == PH_KIND_WORK_START) {
		ph_rec_get_str(r, PH_KEY_NAME, j->name, sizeof(j->name));
		j->started_at = ph_rec_t(r);
	} else {
		ph_rec_qint(r, PH_KEY_ELAPSED_MS,
			    j->started_at ? ph_rec_t(r) - j->started_at : 0);
	}
	ph_rec_get_str(r, PH_KEY_STATE, j->state, sizeof(j->state));
	j->attempt = (int)ph_rec_get_int(r, PH_KEY_ATTEMPT, 1);
}

static void apply_frame(struct ph_state *st, const struct ph_rec *r)
{
	struct ph_jank *j = &st->jank[st->jank_next];

	st->janky++;
	/* The newest late frames, not the worst ever kept: a window asks
	 * for the worst of its own (ph_state_frames). */
	*j = (struct ph_jank){ .at = ph_rec_t(r) };
	j->total_ms = ph_rec_get_int(r, PH_KEY_TOTAL_MS, 0);
	j->missed = ph_rec_get_int(r, PH_KEY_MISSED_FRAMES, 0);
	ph_rec_get_str(r, PH_KEY_WORST_PHASE, j->worst_phase,
		       sizeof(j->worst_phase));
	st->jank_next = (st->jank_next + 1) % PH_ARRAY_SIZE(st->jank);
	if (st->jank_count < PH_ARRAY_SIZE(st->jank))
		st->jank_count++;
}

/*
 * A stall's events share their t: the ongoing ones while it lasts, then
 * the closing one.  Each updates the stall's one entry.
 */
static void apply_blocked(struct ph_state *st, const struct ph_rec *r)
{
	struct ph_stall *s = &st->stalls[(st->stall_next + 19) % 20];
	size_t n;

	if (!st->stall_count || s->at != ph_rec_t(r) || !s->ongoing) {
		s = &st->stalls[st->stall_next];
		st->stall_next = (st->stall_next + 1) % 20;
		if (st->stall_count < 20)
			st->stall_count++;
	}
	s->at = ph_rec_t(r);
	s->duration_ms = ph_rec_get_int(r, PH_KEY_DURATION_MS, 0);
	s->ongoing = ph_rec_find(r, PH_KEY_ONGOING, &n) != NULL;
	s->top[0] = '\0'; /* ph_state_stall_top() fills it after encoding */
}

static void apply_span(struct ph_state *st, struct ph_rec *r)
{
	char phase[8];
	uint64_t id = (uint64_t)ph_rec_get_int(r, PH_KEY_ID, 0);

	ph_rec_get_str(r, PH_KEY_PHASE, phase, sizeof(phase));
	if (!strcmp(phase, "begin")) {
		if (st->n_spans == 64)
			memmove(st->spans, st->spans + 1,
				63 * sizeof(st->spans[0]));
		else
			st->n_spans++;
		st->spans[st->n_spans - 1].id = id;
		st->spans[st->n_spans - 1].t = ph_rec_t(r);
		ph_rec_get_str(r, PH_KEY_NAME, st->spans[st->n_spans - 1].name,
			       PH_NAME_MAX);
		return;
	}
	for (size_t i = 0; i < st->n_spans; i++) {
		if (st->spans[i].id != id)
			continue;
		ph_rec_str(r, PH_KEY_NAME, st->spans[i].name, PH_NAME_MAX);
		ph_rec_int(r, PH_KEY_START_T, st->spans[i].t);
		ph_rec_int(r, PH_KEY_DURATION_MS, ph_rec_t(r) - st->spans[i].t);
		memmove(&st->spans[i], &st->spans[i + 1],
			(st->n_spans - i - 1) * sizeof(st->spans[0]));
		st->n_spans--;
		return;
	}
}

/* logcat's "MM-DD HH:MM:SS.mmm", local time; and the seq per tag. */
static void apply_log(struct ph_state *st, struct ph_rec *r, uint64_t seq)
{
	int64_t wall = ph_rec_t(r) + st->wall_offset_ms;
	time_t secs = (time_t)(wall / 1000);
	struct tm tm;
	char buf[32];
	unsigned i = st->last_log_next;

	localtime_r(&secs, &tm);
	snprintf(buf, sizeof(buf), "%02d-%02d %02d:%02d:%02d.%03d",
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(wall % 1000));
	ph_rec_str(r, PH_KEY_WALL_TIME, buf, sizeof(buf));
	ph_rec_int(r, PH_KEY_TID, r->tid);
	for (unsigned k = 0; k < 8; k++)
		if (!strcmp(st->last_log[k].tag,
			    ph_rec_get_str(r, PH_KEY_TAG, buf, sizeof(buf))))
			i = k;
	if (i == st->last_log_next)
		st->last_log_next = (st->last_log_next + 1) % 8;
	ph_rec_get_str(r, PH_KEY_TAG, st->last_log[i].tag, PH_NAME_MAX);
	st->last_log[i].seq = seq;
	st->logs++;
}

static void apply_log_append(struct ph_state *st, struct ph_rec *r)
{
	char tag[PH_NAME_MAX];

	ph_rec_get_str(r, PH_KEY_TAG, tag, sizeof(tag));
	for (unsigned k = 0; k < 8; k++) {
		if (!strcmp(st->last_log[k].tag, tag)) {
			ph_rec_int(r, PH_KEY_SEQ, (int64_t)st->last_log[k].seq);
			return;
		}
	}
}

void ph_state_apply(struct ph_state *st, struct ph_rec *r, uint64_t seq,
		    const char *thread)
{
	switch (r->kind) {
	case PH_KIND_RECOMPOSE: apply_recompose(st, r); break;
	case PH_KIND_STATE_WRITE: apply_state_write(st, r); break;
	case PH_KIND_NAV: apply_nav(st, r); break;
	case PH_KIND_HTTP_START:
	case PH_KIND_HTTP_END: apply_http(st, r, thread); break;
	case PH_KIND_DB_START:
	case PH_KIND_DB_END: apply_db(st, r, thread); break;
	case PH_KIND_WORK_START:
	case PH_KIND_WORK_END: apply_work(st, r); break;
	case PH_KIND_FRAME: apply_frame(st, r); break;
	case PH_KIND_BLOCKED: apply_blocked(st, r); break;
	case PH_KIND_SPAN: apply_span(st, r); break;
	case PH_KIND_LOG: apply_log(st, r, seq); break;
	case PH_KIND_LOG_APPEND: apply_log_append(st, r); break;
	default: break;
	}
}

void ph_state_stall_top(struct ph_state *st, const char *top, size_t n)
{
	struct ph_stall *s = &st->stalls[(st->stall_next + 19) % 20];

	snprintf(s->top, sizeof(s->top), "%.*s", (int)n, top);
}

/* --- answers ------------------------------------------------------------- */

/* The window of a method's params (docs/protocol.md section 2). */
static void window(const struct ph_json *params, int64_t now, int64_t *from,
		   int64_t *to)
{
	int64_t v;

	*from = 0;
	*to = now;
	if (ph_json_as_int(ph_json_get(params, "sinceMs"), &v))
		*from = now - v;
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
		const struct ph_call *c =
			&st->recent_http[(st->recent_next + 199 - i) % 200];

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
			&st->stalls[(st->stall_next + 19 - i) % 20];

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
		const struct ph_query *q =
			&st->main_db[(st->main_db_next + 19 - i) % 20];

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
		const struct ph_call *c =
			&st->recent_http[(st->recent_next + 199 - i) % 200];

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
	if (st->stall_count == 20 && st->stalls[st->stall_next].at > from) {
		snprintf(note, sizeof(note),
			 "stalls before t=%" PRId64
			 " are no longer held here (the newest 20 are); the "
			 "blocked events have them",
			 st->stalls[st->stall_next].at);
		ph_jw_str(w, note);
	}
	if (st->main_db_count == 20 &&
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
