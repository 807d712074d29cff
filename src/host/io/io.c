/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io.c: the `io` view, an iotrace recording joined with an app's session:
 * fed the session's events and the recording's requests, aligned on one
 * clock, loaded from disk (io.h says how it is fed; judge.c gives its
 * verdicts; docs/iotrace.md what it answers and why).
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "io.h"
#include "io_int.h"
#include "../ingest.h"

#include <math.h>

struct ph_io_view *ph_io_view_new(const struct ph_io_opts *o)
{
	struct ph_io_view *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	ph_arena_init(&v->arena, PH_ARENA_DEFAULT_BLOCK, (size_t)256 << 20);
	v->o = *o;
	v->lost = -1;
	v->rec_first_ns = INT64_MAX;
	v->rec_last_ns = INT64_MIN;
	return v;
}

void ph_io_view_free(struct ph_io_view *v)
{
	if (!v)
		return;
	free(v->req);
	free(v->mom);
	free(v->ops);
	free(v->procs);
	free(v->hist);
	ph_arena_release(&v->arena);
	free(v);
}

void ph_io_note(struct ph_io_view *v, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	if (v->nnotes >= PH_ARRAY_SIZE(v->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v->notes[v->nnotes] = ph_arena_strndup(&v->arena, buf, strlen(buf));
	if (v->notes[v->nnotes])
		v->nnotes++;
}

/* --- the session ---------------------------------------------------------- */

/* A string field, cut to max bytes, in the arena; "" when absent. */
static const char *keep_field(struct ph_io_view *v, const struct ph_event *ev,
			      const char *key, size_t max)
{
	const char *s;
	size_t n;

	if (!ph_ev_str(ev, key, &s, &n))
		return "";
	s = ph_arena_strndup(&v->arena, s, n < max ? n : max);
	return s ? s : "";
}

int ph_io_feed_event(void *view, const struct ph_event *ev)
{
	struct ph_io_view *v = view;
	struct ph_io_moment *m;
	int64_t from, to;
	double b;

	if (ev->kind == PH_KIND_DEVICE && ph_ev_streq(ev, "kind", "clocks")) {
		int64_t up, wall;

		/* the first: later ones (after a suspend) say the same of
		 * the uptime clock, and one offset is what the view uses */
		if (!v->have_app_offset && ph_ev_int(ev, "uptimeMs", &up) &&
		    ph_ev_int(ev, "wallMs", &wall)) {
			v->app_offset_ns = (wall - up) * NS_PER_MS;
			v->have_app_offset = true;
		}
		return 0;
	}
	if (ev->kind != PH_KIND_BLOCKED && ev->kind != PH_KIND_FRAME &&
	    ev->kind != PH_KIND_DB_END)
		return 0;
	if (ev->kind == PH_KIND_FRAME && ph_ev_true(ev, "firstDraw"))
		return 0;
	/* A stall's events (ongoing ones while it lasts, then the closing
	 * one) share its start as t: one moment, as long as the newest. */
	if (ev->kind == PH_KIND_BLOCKED && v->stall_at &&
	    v->mom[v->stall_at - 1].t == ev->t) {
		m = &v->mom[v->stall_at - 1];
		ph_ev_span(ev, &from, &to);
		if (to > m->to)
			m->to = to;
		m->what = keep_field(v, ev, "top", 120);
		return 0;
	}
	if (PH_GROW(v->mom, v->amom, v->nmom + 1, 256))
		return PH_ENOMEM;
	m = &v->mom[v->nmom];
	memset(m, 0, sizeof(*m));
	ph_ev_span(ev, &from, &to);
	m->t = ev->t;
	m->from = from;
	m->to = to;
	m->main = true;
	m->what = "";
	switch (ev->kind) {
	case PH_KIND_BLOCKED:
		m->kind = PH_IO_STALL;
		m->what = keep_field(v, ev, "top", 120);
		v->stall_at = v->nmom + 1;
		break;
	case PH_KIND_FRAME:
		m->kind = PH_IO_FRAME;
		m->what = keep_field(v, ev, "worstPhase", 40);
		/* a session without a profile still has the frames' own */
		if (!v->budget_ms && ph_ev_num(ev, "budgetMs", &b) && b > 0) {
			v->budget_ms = b;
			v->budget_source = "frame events";
		}
		break;
	default:
		m->kind = PH_IO_QUERY;
		m->id = keep_field(v, ev, "id", 40);
		m->what = keep_field(v, ev, "sql", 160);
		m->main = ph_ev_on_main(ev);
		m->error = ph_ev_get(ev, "error") != NULL;
		break;
	}
	v->nmom++;
	return 0;
}

void ph_io_set_session(struct ph_io_view *v, const struct ph_ident *id,
		       const struct ph_profile *p, int64_t first_t,
		       int64_t last_t)
{
	v->ident = *id;
	v->profile = *p;
	v->first_t = first_t;
	v->last_t = last_t;
	v->pid = v->o.pid > 0 ? v->o.pid : id->pid;
	if (p->refresh_hz > 0) {
		v->budget_ms = ph_profile_budget_ms(p);
		v->budget_source = "profile";
	}
}

void ph_io_set_manifest(struct ph_io_view *v, const struct ph_json *m)
{
	const struct ph_json *mode = ph_json_get(m, "mode");

	if (ph_json_as_int(ph_json_get(ph_json_get(m, "clock"),
				       "mono_to_real_offset_ns"),
			   &v->rec_offset_ns))
		v->have_rec_offset = true;
	if (!ph_json_as_int(ph_json_get(ph_json_get(m, "ftrace_loss"),
					"total_lost"),
			    &v->lost))
		v->lost = -1;
	if (ph_json_is(mode, PH_JSON_STRING))
		v->rec_mode = ph_arena_strndup(&v->arena, mode->u.s, mode->n);
}

void ph_io_align(struct ph_io_view *v)
{
	if (v->have_app_offset && v->have_rec_offset)
		v->offset_diff_ns = v->rec_offset_ns - v->app_offset_ns;
	if (v->o.have_shift) {
		v->align = PH_IO_GIVEN;
		v->shift_ns = v->o.shift_ns;
	} else if (v->have_app_offset && v->have_rec_offset) {
		bool same = v->offset_diff_ns <= PH_IO_SAME_CLOCK_NS &&
			    v->offset_diff_ns >= -PH_IO_SAME_CLOCK_NS;

		v->align = same ? PH_IO_SAME_CLOCK : PH_IO_WALL_CLOCK;
		v->shift_ns = same ? 0 : v->offset_diff_ns;
	} else {
		v->align = PH_IO_ASSUMED;
		v->shift_ns = 0;
	}
	v->w = v->o.w;
	if (v->w.from == INT64_MIN && v->w.to == INT64_MAX &&
	    (v->first_t || v->last_t))
		v->w = (struct ph_window){ v->first_t, v->last_t };
}

/* --- the recording -------------------------------------------------------- */

uint32_t ph_io_parse_dev(const char *s, size_t n)
{
	uint64_t maj = 0, min = 0;
	size_t i = 0;

	for (; i < n && s[i] >= '0' && s[i] <= '9' && maj < 4096; i++)
		maj = maj * 10 + (uint64_t)(s[i] - '0');
	if (!i || i >= n || (s[i] != ',' && s[i] != ':'))
		return 0;
	for (i++; i < n && s[i] >= '0' && s[i] <= '9' && min < (1u << 20); i++)
		min = min * 10 + (uint64_t)(s[i] - '0');
	if (i != n || maj >= 4096 || min >= (1u << 20))
		return 0;
	return (uint32_t)(maj << 20 | min);
}

static bool has_flag(const char *flags, size_t n, const char *name)
{
	size_t k = strlen(name);

	for (size_t i = 0; i + k <= n;) {
		size_t e = i;

		while (e < n && flags[e] != '|')
			e++;
		if (e - i == k && !memcmp(flags + i, name, k))
			return true;
		i = e + 1;
	}
	return false;
}

/*
 * rwbs as the kernel prints it (blk_fill_rwbs): F for a preflush, the
 * operation, then F (fua) A S M; old kernels' E and B last.
 */
static void make_rwbs(char *out, const char *op, const char *flags, size_t n)
{
	static const struct {
		const char *op, *letters;
	} ops[] = {
		{ "read", "R" },    { "write", "W" },	      { "flush", "F" },
		{ "discard", "D" }, { "secure_erase", "DE" }, { "none", "N" },
	};
	const char *letters = "?";
	size_t o = 0;

	for (size_t i = 0; i < PH_ARRAY_SIZE(ops); i++)
		if (!strcmp(op, ops[i].op))
			letters = ops[i].letters;
	if (has_flag(flags, n, "preflush"))
		out[o++] = 'F';
	for (; *letters; letters++)
		out[o++] = *letters;
	if (has_flag(flags, n, "fua"))
		out[o++] = 'F';
	if (has_flag(flags, n, "ahead"))
		out[o++] = 'A';
	if (has_flag(flags, n, "sync"))
		out[o++] = 'S';
	if (has_flag(flags, n, "meta"))
		out[o++] = 'M';
	if (has_flag(flags, n, "secure") && o < 7)
		out[o++] = 'E';
	if (has_flag(flags, n, "barrier") && o < 7)
		out[o++] = 'B';
	out[o] = '\0';
}

const char *ph_io_keep_comm(struct ph_io_view *v, const char *s, size_t n)
{
	const char *c;

	if (n > 63)
		n = 63;
	for (unsigned i = 0; i < PH_ARRAY_SIZE(v->recent_comm); i++)
		if (v->recent_comm[i] && strlen(v->recent_comm[i]) == n &&
		    !memcmp(v->recent_comm[i], s, n))
			return v->recent_comm[i];
	c = ph_arena_strndup(&v->arena, s, n);
	if (!c)
		return "";
	v->recent_comm[v->recent_next++ % PH_ARRAY_SIZE(v->recent_comm)] = c;
	return c;
}

static size_t hist_bucket(int64_t ns)
{
	size_t b;

	if (ns < 1000)
		return 0;
	b = (size_t)(log2((double)ns / 1000.0) * 8) + 1;
	return b < PH_IO_HIST_BUCKETS ? b : PH_IO_HIST_BUCKETS - 1;
}

static int hist_add(struct ph_io_view *v, uint32_t dev, int64_t ns)
{
	struct ph_io_dev_hist *h = NULL;

	for (size_t i = 0; i < v->nhist && !h; i++)
		if (v->hist[i].dev == dev)
			h = &v->hist[i];
	if (!h) {
		struct ph_io_dev_hist *n =
			realloc(v->hist, (v->nhist + 1) * sizeof(*n));

		if (!n)
			return PH_ENOMEM;
		v->hist = n;
		h = &v->hist[v->nhist++];
		memset(h, 0, sizeof(*h));
		h->dev = dev;
	}
	h->n[hist_bucket(ns)]++;
	h->total++;
	return 0;
}

int64_t ph_io_hist_median(const struct ph_io_dev_hist *h)
{
	uint64_t seen = 0;

	for (size_t b = 0; b < PH_IO_HIST_BUCKETS; b++) {
		seen += h->n[b];
		if (seen * 2 >= h->total && h->total)
			return b ? (int64_t)(1000.0 *
					     exp2(((double)b - 0.5) / 8)) :
				   500;
	}
	return -1;
}

/* ms on the app clock -> ns, saturating at the window's open ends. */
static int64_t ms_to_ns(int64_t ms)
{
	if (ms <= INT64_MIN / NS_PER_MS)
		return INT64_MIN;
	if (ms >= INT64_MAX / NS_PER_MS)
		return INT64_MAX;
	return ms * NS_PER_MS;
}

int ph_io_feed_row(void *view, const struct ph_iot_ds_rec *r)
{
	struct ph_io_view *v = view;
	struct ph_io_req *q;
	int64_t done, issue;
	char op[14];

	v->rows++;
	if (r->latency_ns >= 0 &&
	    hist_add(v, ph_io_parse_dev(r->dev, r->dev_n), r->latency_ns))
		return PH_ENOMEM;
	if (r->mono_ns < 0 || r->mono_ns > INT64_MAX / 2) {
		v->rows_no_time++;
		return 0;
	}
	done = r->mono_ns + v->shift_ns;
	issue = r->latency_ns >= 0 ? done - r->latency_ns : done;
	if (done < v->rec_first_ns)
		v->rec_first_ns = done;
	if (done > v->rec_last_ns)
		v->rec_last_ns = done;
	/* the window's ms are whole: a request in its last ms is inside */
	if (issue >= ms_to_ns(v->w.to == INT64_MAX ? v->w.to : v->w.to + 1) ||
	    done < ms_to_ns(v->w.from)) {
		v->rows_outside++;
		return 0;
	}
	if (PH_GROW(v->req, v->areq, v->nreq + 1, 256))
		return PH_ENOMEM;
	q = &v->req[v->nreq++];
	memset(q, 0, sizeof(*q));
	q->issue_ns = issue;
	q->done_ns = done;
	q->latency_ns = r->latency_ns;
	q->queue_ns = r->queue_ns;
	q->sector = r->sector;
	q->bytes = r->size;
	q->request_id = r->request_id;
	q->pid = r->pid >= 0 && r->pid <= INT32_MAX ? (int32_t)r->pid : -1;
	q->tid = r->tid >= 0 && r->tid <= INT32_MAX ? (int32_t)r->tid : -1;
	q->cpu = r->cpu >= 0 && r->cpu <= INT32_MAX ? (int32_t)r->cpu : -1;
	q->dev = ph_io_parse_dev(r->dev, r->dev_n);
	snprintf(op, sizeof(op), "%.*s", (int)r->op_n, r->op);
	memcpy(q->op, op, sizeof(op));
	make_rwbs(q->rwbs, q->op, r->flags, r->flags_n);
	q->comm = ph_io_keep_comm(v, r->comm, r->comm_n);
	return 0;
}

int ph_io_feed_req(struct ph_io_view *v, const struct ph_io_req *r)
{
	v->rows++;
	if (r->latency_ns >= 0 && hist_add(v, r->dev, r->latency_ns))
		return PH_ENOMEM;
	if (r->done_ns < v->rec_first_ns)
		v->rec_first_ns = r->done_ns;
	if (r->done_ns > v->rec_last_ns)
		v->rec_last_ns = r->done_ns;
	if (PH_GROW(v->req, v->areq, v->nreq + 1, 256))
		return PH_ENOMEM;
	v->req[v->nreq] = *r;
	v->req[v->nreq].app = v->req[v->nreq].main = false;
	v->nreq++;
	return 0;
}

int ph_io_set_device_median(struct ph_io_view *v, uint32_t dev, int64_t p50_ns,
			    uint64_t rows)
{
	struct ph_io_dev_hist *h = NULL;

	if (p50_ns < 0)
		return 0;
	if (hist_add(v, dev, p50_ns))
		return PH_ENOMEM;
	for (size_t i = 0; i < v->nhist && !h; i++)
		if (v->hist[i].dev == dev)
			h = &v->hist[i];
	/* one bucket, the median's: hist_median gives back its middle */
	memset(h->n, 0, sizeof(h->n));
	rows = rows ? rows : 1;
	h->n[hist_bucket(p50_ns)] = rows > UINT32_MAX ? UINT32_MAX :
							(uint32_t)rows;
	h->total = h->n[hist_bucket(p50_ns)];
	return 0;
}

struct ph_io_view *ph_io_view_copy(const struct ph_io_view *src,
				   const struct ph_io_opts *o)
{
	struct ph_io_view *v = ph_io_view_new(o);

	if (!v)
		return NULL;
	v->req = malloc((src->nreq ? src->nreq : 1) * sizeof(*v->req));
	v->mom = malloc((src->nmom ? src->nmom : 1) * sizeof(*v->mom));
	v->hist = malloc((src->nhist ? src->nhist : 1) * sizeof(*v->hist));
	if (!v->req || !v->mom || !v->hist) {
		ph_io_view_free(v);
		return NULL;
	}
	/* (memcpy from NULL is undefined even for 0 bytes) */
	if (src->nreq)
		memcpy(v->req, src->req, src->nreq * sizeof(*v->req));
	v->nreq = v->areq = src->nreq;
	if (src->nmom)
		memcpy(v->mom, src->mom, src->nmom * sizeof(*v->mom));
	v->nmom = v->amom = src->nmom;
	if (src->nhist)
		memcpy(v->hist, src->hist, src->nhist * sizeof(*v->hist));
	v->nhist = src->nhist;
	v->areq = v->areq ? v->areq : 1;
	v->amom = v->amom ? v->amom : 1;
	v->rows = src->rows;
	v->rec_first_ns = src->rec_first_ns;
	v->rec_last_ns = src->rec_last_ns;
	v->budget_ms = src->budget_ms;
	v->budget_source = src->budget_source;
	return v;
}

/* --- loading from disk ---------------------------------------------------- */

int ph_io_load(struct ph_io_view *v, const char *events_path,
	       const char *rec_dir, char *why, size_t why_size)
{
	struct ph_ingest in;
	int rc;

	why[0] = '\0';
	v->rec_dir = ph_arena_strndup(&v->arena, rec_dir, strlen(rec_dir));
	ph_ingest_init(&in, ph_io_feed_event, v);
	rc = ph_ingest_file(&in, events_path);
	if (!rc && !in.events)
		rc = PH_ENOENT;
	if (rc) {
		snprintf(why, why_size, "%s: %s", events_path,
			 rc == PH_ENOENT ? "no events in it" :
					   "cannot read the session");
		ph_ingest_release(&in);
		return rc;
	}
	ph_io_set_session(v, &in.ident, &in.profile, in.first_t, in.last_t);
	ph_ingest_release(&in);
	return ph_io_load_recording(v, rec_dir, why, why_size);
}

int ph_io_load_recording(struct ph_io_view *v, const char *rec_dir, char *why,
			 size_t why_size)
{
	struct ph_buf mb = PH_BUF_INIT((size_t)64 << 20);
	struct ph_arena ar;
	struct ph_json *m = NULL;
	struct ph_iot_ds_stats st = { 0 };
	char path[PATH_MAX + 32];
	int rc;

	why[0] = '\0';
	if (!v->rec_dir)
		v->rec_dir =
			ph_arena_strndup(&v->arena, rec_dir, strlen(rec_dir));
	ph_arena_init(&ar, PH_ARENA_DEFAULT_BLOCK, (size_t)256 << 20);
	snprintf(path, sizeof(path), "%s/manifest.json", rec_dir);
	if (!ph_buf_read_file(&mb, path) &&
	    !ph_json_parse(&ar, mb.buf, mb.len, &m, NULL))
		ph_io_set_manifest(v, m);
	else
		ph_io_note(v,
			   "%s: no readable manifest.json: the clock is "
			   "assumed and losses are unknown",
			   rec_dir);
	ph_arena_release(&ar);
	ph_buf_release(&mb);

	ph_io_align(v);
	rc = ph_iot_ds_read(rec_dir, ph_io_feed_row, v, &st);
	if (rc) {
		snprintf(why, why_size, "%s: %s", rec_dir,
			 rc == PH_ENOENT   ? "not a recording (no ds/)" :
			 rc == PH_ENOMEM   ? "out of memory" :
			 rc == PH_ECORRUPT ? "a ds file is not schema v3" :
					     "cannot read the recording");
		return rc;
	}
	if (!st.files)
		ph_io_note(v, "%s: the recording has no ds files (mode %s)",
			   rec_dir, v->rec_mode ? v->rec_mode : "unknown");
	rc = ph_io_finish(v);
	if (rc)
		snprintf(why, why_size, "out of memory");
	return rc;
}
