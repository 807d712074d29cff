/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.c: the writer's aggregates, kept up to date as records pass
 * (see state.h); state_answers.c answers the methods from them.
 */
#include "ph_common.h"
#include "state.h"
#include "bodies.h"
#include "ph_clock.h"

#include <time.h>

/* Temporal attribution: state written this long before a recompose. */
#define ATTRIBUTION_MS 32
/* The most recomposing components kept (find_node). */
#define RECOMP_NODES_MAX 4096

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
	/* A bound: an app with 4096 distinct components is an outlier. */
	if (st->n_nodes >= RECOMP_NODES_MAX)
		return NULL;
	if (st->n_nodes == st->cap_nodes &&
	    PH_GROW(st->nodes, st->cap_nodes, st->n_nodes + 1, 64))
		return NULL;
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
		st->recent_next =
			(st->recent_next + 1) % PH_ARRAY_SIZE(st->recent_http);
		if (st->recent_count < PH_ARRAY_SIZE(st->recent_http))
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
			st->main_db_next = (st->main_db_next + 1) %
					   PH_ARRAY_SIZE(st->main_db);
			if (st->main_db_count < PH_ARRAY_SIZE(st->main_db))
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
	struct ph_stall *s =
		&st->stalls[PH_RING_BACK(st->stalls, st->stall_next, 0)];
	size_t n;

	if (!st->stall_count || s->at != ph_rec_t(r) || !s->ongoing) {
		s = &st->stalls[st->stall_next];
		st->stall_next =
			(st->stall_next + 1) % PH_ARRAY_SIZE(st->stalls);
		if (st->stall_count < PH_ARRAY_SIZE(st->stalls))
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
	struct ph_stall *s =
		&st->stalls[PH_RING_BACK(st->stalls, st->stall_next, 0)];

	snprintf(s->top, sizeof(s->top), "%.*s", (int)n, top);
}
