/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io/events.c: a session's `io` and `io_recording` events read back into
 * the io view (io/events.h says why; docs/iotrace.md, "In a session").
 */
#include "ph_common.h"
#include "ph_error.h"
#include "events.h"

#include <math.h>

#define NS_PER_MS 1000000

int ph_io_events_init(struct ph_io_events *e, bool all_queries)
{
	struct ph_io_opts o = { .w = PH_WINDOW_ALL };

	memset(e, 0, sizeof(*e));
	e->all_queries = all_queries;
	e->in = ph_io_view_new(&o);
	return e->in ? 0 : PH_ENOMEM;
}

void ph_io_events_release(struct ph_io_events *e)
{
	for (size_t i = 0; i < e->nmarks; i++)
		free(e->marks[i].dev);
	free(e->marks);
	free(e->seen);
	ph_io_view_free(e->in);
	memset(e, 0, sizeof(*e));
}

/* An int field within [lo, hi], else def. */
static int64_t int_in(const struct ph_event *ev, const char *key, int64_t lo,
		      int64_t hi, int64_t def)
{
	int64_t v;

	return ph_ev_int(ev, key, &v) && v >= lo && v <= hi ? v : def;
}

/* ms (a wire number) -> ns; false when absent, negative or absurd. */
static bool ms_field(const struct ph_event *ev, const char *key, int64_t *ns)
{
	double ms;

	if (!ph_ev_num(ev, key, &ms) || !(ms >= 0) || ms > 1e9)
		return false;
	*ns = llround(ms * 1e6);
	return true;
}

/*
 * The wire's op folds secure_erase and none into "other" (protocol.md
 * §4.4); the rwbs letters still tell them apart.
 */
static void op_of(const struct ph_event *ev, const char *rwbs, char *op,
		  size_t size)
{
	const char *s;
	size_t n;

	if (!ph_ev_str(ev, "op", &s, &n) || n >= size) {
		s = "other";
		n = 5;
	}
	if (n == 5 && !memcmp(s, "other", 5)) {
		if (strstr(rwbs, "DE"))
			s = "secure_erase", n = 12;
		else if (strchr(rwbs, 'N'))
			s = "none", n = 4;
	}
	memcpy(op, s, n);
	op[n] = '\0';
}

/* An io event as the request it stands for; false when it is not one. */
static bool io_req(struct ph_io_events *e, const struct ph_event *ev,
		   struct ph_io_req *q)
{
	const char *s;
	size_t n;
	int64_t lat;

	memset(q, 0, sizeof(*q));
	if (!ph_ev_str(ev, "dev", &s, &n) || !(q->dev = ph_io_parse_dev(s, n)))
		return false;
	if (ev->t < 0 || ev->t > ((int64_t)1 << 40))
		return false;
	q->issue_ns = ph_ev_io_issue_ns(ev);
	q->latency_ns = ms_field(ev, "latencyMs", &lat) ? lat : -1;
	q->done_ns = q->issue_ns + (q->latency_ns > 0 ? q->latency_ns : 0);
	if (!ms_field(ev, "queueMs", &q->queue_ns))
		q->queue_ns = -1;
	q->sector = int_in(ev, "sector", 0, INT64_MAX, -1);
	q->bytes = (uint64_t)int_in(ev, "bytes", 0, INT64_MAX, 0);
	q->request_id = (uint64_t)int_in(ev, "requestId", 1, INT64_MAX, 0);
	q->pid = (int32_t)int_in(ev, "pid", 0, INT32_MAX, -1);
	q->tid = (int32_t)int_in(ev, "tid", 0, INT32_MAX, -1);
	q->cpu = (int32_t)int_in(ev, "cpu", 0, INT32_MAX, -1);
	if (ph_ev_str(ev, "rwbs", &s, &n)) {
		n = n < sizeof(q->rwbs) - 1 ? n : sizeof(q->rwbs) - 1;
		memcpy(q->rwbs, s, n);
		q->rwbs[n] = '\0';
	}
	op_of(ev, q->rwbs, q->op, sizeof(q->op));
	q->comm = ph_ev_str(ev, "comm", &s, &n) ? ph_io_keep_comm(e->in, s, n) :
						  "";
	return true;
}

uint64_t ph_io_req_key(const struct ph_io_req *q)
{
	uint64_t k[5] = { q->dev, (uint64_t)q->issue_ns, (uint64_t)q->done_ns,
			  (uint64_t)q->sector, q->bytes };
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < PH_ARRAY_SIZE(k); i++) {
		h ^= k[i];
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

bool ph_io_events_has(const struct ph_io_events *e, const struct ph_io_req *q)
{
	uint64_t k = ph_io_req_key(q);

	if (!e->aseen)
		return false;
	for (size_t j = k & (e->aseen - 1); e->seen[j];
	     j = (j + 1) & (e->aseen - 1))
		if (e->seen[j] == k)
			return true;
	return false;
}

/* Adds q's key; 1 when it was new, 0 when seen, PH_ENOMEM.  Open
 * addressing, at most half full. */
static int seen_add(struct ph_io_events *e, const struct ph_io_req *q)
{
	uint64_t k = ph_io_req_key(q);

	if ((e->nseen + 1) * 2 > e->aseen) {
		size_t cap = e->aseen ? e->aseen * 2 : 1024;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return PH_ENOMEM;
		for (size_t i = 0; i < e->aseen; i++) {
			size_t j;

			if (!e->seen[i])
				continue;
			for (j = e->seen[i] & (cap - 1); n[j];
			     j = (j + 1) & (cap - 1))
				;
			n[j] = e->seen[i];
		}
		free(e->seen);
		e->seen = n;
		e->aseen = cap;
	}
	for (size_t j = k & (e->aseen - 1);; j = (j + 1) & (e->aseen - 1)) {
		if (e->seen[j] == k)
			return 0;
		if (!e->seen[j]) {
			e->seen[j] = k;
			e->nseen++;
			return 1;
		}
	}
}

/* The marker of recording id, or a new one. */
static struct ph_io_rec_mark *mark_of(struct ph_io_events *e, const char *id,
				      size_t n)
{
	struct ph_io_rec_mark *m;

	for (size_t i = 0; i < e->nmarks; i++)
		if (strlen(e->marks[i].id) == n &&
		    !memcmp(e->marks[i].id, id, n))
			return &e->marks[i];
	m = realloc(e->marks, (e->nmarks + 1) * sizeof(*m));
	if (!m)
		return NULL;
	e->marks = m;
	m = &e->marks[e->nmarks];
	memset(m, 0, sizeof(*m));
	m->id = ph_arena_strndup(&e->in->arena, id, n);
	if (!m->id)
		return NULL;
	e->nmarks++;
	return m;
}

static const char *keep_str(struct ph_io_events *e, const struct ph_event *ev,
			    const char *key)
{
	const char *s, *k;
	size_t n;

	if (!ph_ev_str(ev, key, &s, &n))
		return NULL;
	k = ph_arena_strndup(&e->in->arena, s, n < 4096 ? n : 4096);
	return k;
}

/*
 * An io_recording event.  The same recording attached again (more of its
 * requests, say after --app-only) updates its marker: the newest says
 * what the recording is.
 */
static int on_marker(struct ph_io_events *e, const struct ph_event *ev)
{
	const struct ph_json *devs = ph_ev_get(ev, "devices");
	struct ph_io_rec_mark *m;
	struct ph_io_rec_dev *d = NULL;
	const char *id;
	size_t n, nd = 0;
	uint64_t added;
	int64_t from, to;

	if (!ph_ev_str(ev, "recording", &id, &n) || !n || n > 64)
		return 0;
	if (!(m = mark_of(e, id, n)))
		return PH_ENOMEM;
	ph_ev_span(ev, &from, &to);
	if (ph_json_is(devs, PH_JSON_ARRAY) && devs->n) {
		d = calloc(devs->n, sizeof(*d));
		if (!d)
			return PH_ENOMEM;
		for (uint32_t i = 0; i < devs->n; i++) {
			const struct ph_json *o = &devs->u.items[i];
			const struct ph_json *dv = ph_json_get(o, "dev");
			double med;
			int64_t rows = 0;

			if (!ph_json_is(dv, PH_JSON_STRING) ||
			    !ph_json_as_double(ph_json_get(o, "medianMs"),
					       &med) ||
			    !(med >= 0) || med > 1e9)
				continue;
			d[nd].dev = ph_io_parse_dev(dv->u.s, dv->n);
			if (!d[nd].dev)
				continue;
			ph_json_as_int(ph_json_get(o, "rows"), &rows);
			d[nd].p50_ns = llround(med * 1e6);
			d[nd].rows = rows > 0 ? (uint64_t)rows : 1;
			nd++;
		}
	}
	added = (uint64_t)int_in(ev, "added", 0, INT64_MAX, 0);
	free(m->dev);
	m->dev = d;
	m->ndev = nd;
	m->t = from;
	m->to = to;
	m->added = added;
	m->lost = int_in(ev, "totalLost", 0, INT64_MAX, -1);
	m->pid = int_in(ev, "pid", 1, INT32_MAX, 0);
	m->in_window = (uint64_t)int_in(ev, "requests", 0, INT64_MAX, 0);
	m->left_out = (uint64_t)int_in(ev, "leftOut", 0, INT64_MAX, 0);
	m->app_only = ph_ev_true(ev, "appOnly");
	m->dir = keep_str(e, ev, "dir");
	m->alignment = keep_str(e, ev, "alignment");
	return 0;
}

int ph_io_events_feed(void *events, const struct ph_event *ev)
{
	struct ph_io_events *e = events;
	struct ph_io_req q;

	switch (ev->kind) {
	case PH_KIND_IO: {
		int rc;

		if (!io_req(e, ev, &q)) {
			e->bad_io++;
			return 0;
		}
		if ((rc = seen_add(e, &q)) <= 0) {
			e->dup_io += !rc;
			return rc;
		}
		e->io_events++;
		return ph_io_feed_req(e->in, &q);
	}
	case PH_KIND_IO_RECORDING: return on_marker(e, ev);
	case PH_KIND_DB_END:
		if (!e->all_queries && !ph_ev_on_main(ev))
			return 0;
		return ph_io_feed_event(e->in, ev);
	case PH_KIND_BLOCKED:
	case PH_KIND_FRAME: return ph_io_feed_event(e->in, ev);
	default: return 0;
	}
}

bool ph_io_events_loss_known(const struct ph_io_events *e)
{
	if (!e->nmarks)
		return false;
	for (size_t i = 0; i < e->nmarks; i++)
		if (e->marks[i].lost < 0)
			return false;
	return true;
}

/* The window's ms are whole: a request is in it when its span touches
 * it (the rule ph_io_feed_row applies to ds rows). */
static bool in_window(const struct ph_io_req *q, struct ph_window w)
{
	if (w.to != INT64_MAX && q->issue_ns >= (w.to + 1) * NS_PER_MS)
		return false;
	return w.from == INT64_MIN || q->done_ns >= w.from * NS_PER_MS;
}

struct ph_io_view *ph_io_events_view(const struct ph_io_events *e,
				     const struct ph_ident *id,
				     const struct ph_profile *p,
				     struct ph_window w)
{
	struct ph_io_opts o = { .w = w };
	struct ph_io_view *v;
	size_t kept = 0;
	int64_t lost = 0;

	/* attach's --pid, for a runtime whose hello has none */
	for (size_t i = 0; i < e->nmarks && !o.pid; i++)
		o.pid = e->marks[i].pid;
	v = ph_io_view_copy(e->in, &o);
	if (!v)
		return NULL;
	ph_io_set_session(v, id, p, 0, 0);
	v->w = w;
	v->align = PH_IO_ASSUMED;
	for (size_t i = 0; i < v->nreq; i++) {
		if (!in_window(&v->req[i], w)) {
			v->rows_outside++;
			continue;
		}
		v->req[kept++] = v->req[i];
	}
	v->nreq = kept;
	for (size_t i = 0; i < e->nmarks; i++) {
		const struct ph_io_rec_mark *m = &e->marks[i];

		for (size_t k = 0; k < m->ndev; k++)
			if (ph_io_set_device_median(v, m->dev[k].dev,
						    m->dev[k].p50_ns,
						    m->dev[k].rows))
				goto fail;
		if (m->lost < 0 || lost < 0)
			lost = -1;
		else
			lost += m->lost;
		if (!v->rec_dir)
			v->rec_dir = m->dir;
		for (int a = PH_IO_SAME_CLOCK; a <= PH_IO_GIVEN; a++)
			if (m->alignment &&
			    !strcmp(m->alignment, ph_io_align_name(a)))
				v->align = a;
	}
	v->lost = e->nmarks ? lost : -1;
	if (ph_io_finish(v))
		goto fail;
	return v;
fail:
	ph_io_view_free(v);
	return NULL;
}
