/* SPDX-License-Identifier: Apache-2.0 */
/*
 * judge.c: the io view's verdicts once it is fed: per-device medians and
 * per-process totals, each moment joined with the requests in flight
 * during it, and the findings: I/O on the main thread, slow requests
 * against the device's own median, I/O under late frames, and what the
 * recording lost (docs/iotrace.md, "The host's io view").
 */
#include "ph_common.h"
#include "ph_error.h"
#include "io.h"
#include "io_int.h"

#include <math.h>

static int cmp_req(const void *a, const void *b)
{
	const struct ph_io_req *x = a, *y = b;

	if (x->issue_ns != y->issue_ns)
		return x->issue_ns < y->issue_ns ? -1 : 1;
	return x->done_ns < y->done_ns ? -1 : x->done_ns > y->done_ns;
}

static int cmp_mom(const void *a, const void *b)
{
	const struct ph_io_moment *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->kind - y->kind;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct ph_io_proc *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Nearest rank over sorted values (as summary.c): -1 when none. */
static int64_t pct(const int64_t *s, size_t n, int p)
{
	size_t rank = ((size_t)p * n + 99) / 100;

	return n ? s[rank ? rank - 1 : 0] : -1;
}

/* Each device's median latency over the recording, for the rules. */
struct dev_median {
	uint32_t dev;
	int64_t p50_ns;
};

/* Per device and op, the window's percentiles; per device the median. */
static int device_stats(struct ph_io_view *v, struct dev_median **med,
			size_t *nmed)
{
	int64_t *lat = malloc((v->nreq ? v->nreq : 1) * sizeof(*lat));
	size_t cap = 0;

	*med = NULL;
	*nmed = 0;
	if (!lat)
		return PH_ENOMEM;
	/* each (device, op) once, in order of first request */
	for (size_t i = 0; i < v->nreq; i++) {
		const struct ph_io_req *q = &v->req[i];
		struct ph_io_dev_op *d;
		bool seen = false;
		size_t n = 0;
		uint64_t count = 0, bytes = 0;

		for (size_t k = 0; k < v->nops && !seen; k++)
			seen = v->ops[k].dev == q->dev &&
			       !strcmp(v->ops[k].op, q->op);
		if (seen)
			continue;
		for (size_t j = i; j < v->nreq; j++) {
			const struct ph_io_req *o = &v->req[j];

			if (o->dev != q->dev || strcmp(o->op, q->op))
				continue;
			count++;
			bytes += o->bytes;
			if (o->latency_ns >= 0)
				lat[n++] = o->latency_ns;
		}
		if (n > 1)
			qsort(lat, n, sizeof(*lat), cmp_i64);
		if (PH_GROW(v->ops, cap, v->nops + 1, 256)) {
			free(lat);
			return PH_ENOMEM;
		}
		d = &v->ops[v->nops++];
		d->dev = q->dev;
		memcpy(d->op, q->op, sizeof(d->op));
		d->n = count;
		d->bytes = bytes;
		d->p50_ns = pct(lat, n, 50);
		d->p99_ns = pct(lat, n, 99);
		d->max_ns = n ? lat[n - 1] : -1;
	}
	free(lat);
	/* each device's median, over the whole recording */
	*med = calloc(v->nhist ? v->nhist : 1, sizeof(**med));
	if (!*med)
		return PH_ENOMEM;
	for (size_t i = 0; i < v->nhist; i++)
		(*med)[i] =
			(struct dev_median){ v->hist[i].dev,
					     ph_io_hist_median(&v->hist[i]) };
	*nmed = v->nhist;
	return 0;
}

static int64_t median_of(const struct dev_median *med, size_t n, uint32_t dev)
{
	for (size_t i = 0; i < n; i++)
		if (med[i].dev == dev)
			return med[i].p50_ns;
	return -1;
}

static int proc_stats(struct ph_io_view *v)
{
	size_t cap = 0;

	for (size_t i = 0; i < v->nreq; i++) {
		const struct ph_io_req *q = &v->req[i];
		struct ph_io_proc *p = NULL;

		/* requests come in runs of one process: look back first */
		for (size_t k = v->nprocs; k-- > 0 && !p;)
			if (v->procs[k].pid == q->pid &&
			    !strcmp(v->procs[k].comm, q->comm))
				p = &v->procs[k];
		if (!p) {
			if (PH_GROW(v->procs, cap, v->nprocs + 1, 256))
				return PH_ENOMEM;
			p = &v->procs[v->nprocs++];
			memset(p, 0, sizeof(*p));
			p->pid = q->pid;
			p->comm = q->comm;
		}
		p->n++;
		p->bytes += q->bytes;
		if (q->latency_ns > 0)
			p->device_ns += q->latency_ns;
	}
	if (v->nprocs > 1)
		qsort(v->procs, v->nprocs, sizeof(*v->procs), cmp_proc);
	return 0;
}

size_t ph_io_first_in_flight(const struct ph_io_view *v, int64_t from_ns)
{
	size_t lo = 0, hi = v->nreq;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->req[mid].issue_ns < from_ns - v->max_span_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The block I/O in flight during moment k (requests sorted by issue).  A
 * main-thread request counts for a main-thread query only when it is that
 * query's (owner): the thread runs one query at a time, and the widened
 * spans of back-to-back queries overlap.
 */
static void join_moment(struct ph_io_view *v, size_t k, const int32_t *owner)
{
	struct ph_io_moment *m = &v->mom[k];
	struct other {
		int32_t pid;
		const char *comm;
		uint64_t n;
	} other[16];
	size_t nother = 0;
	int64_t from = m->from * NS_PER_MS, to = m->to * NS_PER_MS;

	m->app_worst_ns = m->dev_worst_ns = -1;
	m->other_pid = -1;
	m->other_comm = NULL;
	for (size_t i = ph_io_first_in_flight(v, from);
	     i < v->nreq && v->req[i].issue_ns <= to; i++) {
		const struct ph_io_req *q = &v->req[i];
		bool found = false;

		if (q->done_ns < from)
			continue;
		if (q->main && m->kind == PH_IO_QUERY && m->main &&
		    owner[i] != (int32_t)k)
			continue;
		m->dev_n++;
		if (q->latency_ns > m->dev_worst_ns) {
			m->dev_worst_ns = q->latency_ns;
			m->dev_worst_dev = q->dev;
		}
		if (q->app) {
			m->app_n++;
			m->main_n += q->main;
			m->app_bytes += q->bytes;
			if (q->latency_ns > m->app_worst_ns)
				m->app_worst_ns = q->latency_ns;
			continue;
		}
		for (size_t j = 0; j < nother && !found; j++)
			if (other[j].pid == q->pid &&
			    !strcmp(other[j].comm, q->comm)) {
				other[j].n++;
				found = true;
			}
		if (!found && nother < PH_ARRAY_SIZE(other))
			other[nother++] = (struct other){ q->pid, q->comm, 1 };
	}
	for (size_t j = 0; j < nother; j++)
		if (other[j].n > m->other_n) {
			m->other_n = other[j].n;
			m->other_pid = other[j].pid;
			m->other_comm = other[j].comm;
		}
}

/*
 * For each main-thread request, the main-thread query it belongs to (an
 * index into v->mom, or -1): the query whose own span is nearest its
 * issue time (at most 1 ms away: the events' times are whole ms).  Back
 * to back queries share boundary milliseconds: among those that hold it,
 * the one that began last, then the one that ended first, since one
 * thread runs one query at a time.
 */
static int32_t *own_requests(const struct ph_io_view *v)
{
	int32_t *owner = malloc((v->nreq ? v->nreq : 1) * sizeof(*owner));

	if (!owner)
		return NULL;
	for (size_t i = 0; i < v->nreq; i++) {
		const struct ph_io_req *q = &v->req[i];
		int64_t best_d = INT64_MAX, best_lo = 0, best_hi = 0;

		owner[i] = -1;
		if (!q->main)
			continue;
		for (size_t k = 0; k < v->nmom; k++) {
			const struct ph_io_moment *m = &v->mom[k];
			int64_t lo = (m->from + 1) * NS_PER_MS,
				hi = (m->to - 1) * NS_PER_MS, d;

			if (m->kind != PH_IO_QUERY || !m->main)
				continue;
			d = q->issue_ns < lo ? lo - q->issue_ns :
			    q->issue_ns > hi ? q->issue_ns - hi :
					       0;
			if (d > NS_PER_MS || d > best_d)
				continue;
			if (d == best_d &&
			    (lo < best_lo || (lo == best_lo && hi >= best_hi)))
				continue;
			best_d = d;
			best_lo = lo;
			best_hi = hi;
			owner[i] = (int32_t)k;
		}
	}
	return owner;
}

/* JSON text in the arena, from what fill writes into an object. */
struct ev_builder {
	struct ph_buf b;
	struct ph_jw jw;
};

static void eb_begin(struct ev_builder *e)
{
	ph_buf_init(&e->b, (size_t)1 << 20);
	ph_jw_init(&e->jw, &e->b);
	ph_jw_obj_begin(&e->jw);
}

static const char *eb_end(struct ph_io_view *v, struct ev_builder *e)
{
	const char *s = NULL;

	ph_jw_obj_end(&e->jw);
	if (!ph_jw_finish(&e->jw))
		s = ph_arena_strndup(&v->arena, e->b.buf, e->b.len);
	ph_buf_release(&e->b);
	return s ? s : "{}";
}

static const char *fmt(struct ph_io_view *v, const char *f, ...)
	PH_PRINTF(2, 3);

static const char *fmt(struct ph_io_view *v, const char *f, ...)
{
	char buf[700];
	va_list ap;
	const char *s;

	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	s = ph_arena_strndup(&v->arena, buf, strlen(buf));
	return s ? s : "";
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static int64_t floor_ms(int64_t ns)
{
	return ns >= 0 ? ns / NS_PER_MS : -((-ns + NS_PER_MS - 1) / NS_PER_MS);
}

static int64_t ceil_ms(int64_t ns)
{
	return -floor_ms(-ns);
}

static struct ph_finding *add_finding(struct ph_io_view *v, const char *id,
				      int sev, int conf)
{
	struct ph_finding *f = &v->f[v->nf++];

	memset(f, 0, sizeof(*f));
	f->id = id;
	f->key = id;
	f->severity = sev;
	f->confidence = conf;
	f->source = "iotrace";
	f->count = 1;
	f->evidence = "{}";
	return f;
}

static void kib(char *buf, size_t size, uint64_t bytes)
{
	if (bytes < 10240)
		snprintf(buf, size, "%" PRIu64 " B", bytes);
	else if (bytes < 10485760)
		snprintf(buf, size, "%.0f KiB", (double)bytes / 1024);
	else
		snprintf(buf, size, "%.1f MiB", (double)bytes / 1048576);
}

/* io-on-main-thread: requests the app's main thread issued. */
static void judge_main(struct ph_io_view *v)
{
	struct ev_builder e;
	struct ph_finding *f;
	uint64_t n = 0, bytes = 0, outside = 0;
	int64_t worst = -1, total = 0, first = INT64_MAX, last = INT64_MIN;
	const struct ph_io_req *worst_q = NULL;
	char b[32], inside[400] = "";
	size_t used = 0, nq = 0;

	for (size_t i = 0; i < v->nreq; i++) {
		const struct ph_io_req *q = &v->req[i];

		if (!q->main)
			continue;
		n++;
		bytes += q->bytes;
		if (q->latency_ns > 0)
			total += q->latency_ns;
		if (q->latency_ns > worst) {
			worst = q->latency_ns;
			worst_q = q;
		}
		first = q->issue_ns < first ? q->issue_ns : first;
		last = q->done_ns > last ? q->done_ns : last;
	}
	if (!n) {
		v->quiet[v->nquiet++] = "io-on-main-thread";
		return;
	}
	f = add_finding(v, "io-on-main-thread",
			worst >= (int64_t)(v->budget_ms * 1e6) ? PH_SEV_ERROR :
								 PH_SEV_NOTE,
			PH_CONF_OBSERVED);
	kib(b, sizeof(b), bytes);
	f->title = fmt(v,
		       "The main thread issued %" PRIu64
		       " block request%s (%s), the slowest %.3f ms",
		       n, n == 1 ? "" : "s", b, ms(worst));
	f->from = f->last_from = floor_ms(first);
	f->to = f->last_to = ceil_ms(last);
	f->count = (int64_t)n;
	eb_begin(&e);
	ph_jw_kv_int(&e.jw, "count", (int64_t)n);
	ph_jw_kv_int(&e.jw, "bytes", (int64_t)bytes);
	ph_jw_kv_double(&e.jw, "worstMs", ms(worst));
	ph_jw_kv_double(&e.jw, "deviceMs", ms(total));
	ph_jw_kv_double(&e.jw, "budgetMs", v->budget_ms);
	ph_jw_key(&e.jw, "queries");
	ph_jw_arr_begin(&e.jw);
	/* which of the app's main-thread queries they ran inside */
	for (size_t k = 0; k < v->nmom; k++) {
		const struct ph_io_moment *m = &v->mom[k];

		if (m->kind != PH_IO_QUERY || !m->main_n)
			continue;
		nq++;
		ph_jw_obj_begin(&e.jw);
		ph_jw_kv_str(&e.jw, "id", m->id);
		ph_jw_kv_str(&e.jw, "sql", m->what);
		ph_jw_kv_int(&e.jw, "t", m->t);
		ph_jw_kv_int(&e.jw, "requests", (int64_t)m->main_n);
		ph_jw_obj_end(&e.jw);
		if (used < sizeof(inside) - 1)
			used += (size_t)snprintf(inside + used,
						 sizeof(inside) - used,
						 "%s%s %.40s (%" PRIu64 ")",
						 nq > 1 ? "; " : "", m->id,
						 m->what, m->main_n);
	}
	ph_jw_arr_end(&e.jw);
	/* each main-thread request belongs to at most one query */
	outside = n;
	for (size_t k = 0; k < v->nmom; k++)
		if (v->mom[k].kind == PH_IO_QUERY && v->mom[k].main)
			outside -= v->mom[k].main_n;
	ph_jw_kv_int(&e.jw, "outsideQueries", (int64_t)outside);
	ph_jw_key(&e.jw, "worst");
	ph_io_event_write(worst_q, &e.jw);
	f->evidence = eb_end(v, &e);
	f->detail[f->ndetail++] =
		fmt(v,
		    "%.3f ms of device time in all; worst %s %s at t=%" PRId64
		    " (frame budget %.1f ms)",
		    ms(total), worst_q->rwbs, worst_q->op,
		    floor_ms(worst_q->issue_ns), v->budget_ms);
	if (nq)
		f->detail[f->ndetail++] = fmt(v,
					      "inside the main thread's "
					      "queries: %s",
					      inside);
	if (outside)
		f->detail[f->ndetail++] = fmt(v,
					      "%" PRIu64
					      " outside any query the app "
					      "reported",
					      outside);
}

static bool slow(const struct ph_io_req *q, int64_t p50)
{
	if (q->latency_ns < 0)
		return false;
	if (q->latency_ns >= (int64_t)(PH_IO_SLOW_MS * 1e6))
		return true;
	return q->latency_ns >= (int64_t)(PH_IO_SLOW_MIN_MS * 1e6) && p50 > 0 &&
	       (double)q->latency_ns >= PH_IO_SLOW_FACTOR * p50;
}

/* io-slow-request: an app request far slower than it should be. */
static void judge_slow(struct ph_io_view *v, const struct dev_median *med,
		       size_t nmed)
{
	const struct ph_io_req *worst = NULL;
	struct ev_builder e;
	struct ph_finding *f;
	uint64_t n = 0;
	int64_t first = INT64_MAX, last = INT64_MIN, p50;
	char b[32];

	for (size_t i = 0; i < v->nreq; i++) {
		const struct ph_io_req *q = &v->req[i];

		if (!q->app || !slow(q, median_of(med, nmed, q->dev)))
			continue;
		n++;
		if (!worst || q->latency_ns > worst->latency_ns)
			worst = q;
		first = q->issue_ns < first ? q->issue_ns : first;
		last = q->done_ns > last ? q->done_ns : last;
	}
	if (!n) {
		v->quiet[v->nquiet++] = "io-slow-request";
		return;
	}
	p50 = median_of(med, nmed, worst->dev);
	f = add_finding(v, "io-slow-request", PH_SEV_WARNING, PH_CONF_OBSERVED);
	f->title = fmt(v,
		       "%" PRIu64 " slow block request%s by the app, the "
		       "worst %.3f ms",
		       n, n == 1 ? "" : "s", ms(worst->latency_ns));
	f->from = f->last_from = floor_ms(first);
	f->to = f->last_to = ceil_ms(last);
	f->count = (int64_t)n;
	kib(b, sizeof(b), worst->bytes);
	f->detail[f->ndetail++] =
		fmt(v,
		    "worst: %s %s of %s on %u:%u by %s (tid %d) at t=%" PRId64
		    "; the device's median over the recording ~%.3f ms",
		    worst->rwbs, worst->op, b, worst->dev >> 20,
		    worst->dev & 0xfffff, worst->comm, (int)worst->tid,
		    floor_ms(worst->issue_ns), ms(p50));
	eb_begin(&e);
	ph_jw_kv_int(&e.jw, "count", (int64_t)n);
	ph_jw_kv_double(&e.jw, "deviceMedianMs", ms(p50));
	ph_jw_kv_double(&e.jw, "thresholdMs", PH_IO_SLOW_MS);
	ph_jw_key(&e.jw, "worst");
	ph_io_event_write(worst, &e.jw);
	f->evidence = eb_end(v, &e);
}

const char *ph_io_moment_name(int kind)
{
	static const char *const names[] = { "stall", "late frame", "query" };

	return kind >= 0 && kind < (int)PH_ARRAY_SIZE(names) ? names[kind] :
							       "moment";
}

/*
 * Whether stall or late frame m had block I/O worth naming in flight: the
 * main thread's own, an app request in flight for a frame budget or more,
 * or a device far slower than its median for the window.  A short write
 * of a background thread during a slow layout is not worth a warning.
 */
static bool jank_io(const struct ph_io_view *v, const struct ph_io_moment *m,
		    const struct dev_median *med, size_t nmed)
{
	int64_t p50;

	if (m->kind == PH_IO_QUERY)
		return false;
	if (m->main_n ||
	    (m->app_n && m->app_worst_ns >= (int64_t)(v->budget_ms * 1e6)))
		return true;
	/* the device's median, of the device of the slowest request */
	p50 = m->dev_worst_ns >= 0 ? median_of(med, nmed, m->dev_worst_dev) :
				     -1;
	return p50 > 0 &&
	       m->dev_worst_ns >= (int64_t)(PH_IO_JANK_MIN_MS * 1e6) &&
	       (double)m->dev_worst_ns >= PH_IO_JANK_FACTOR * (double)p50;
}

/* io-during-jank: stalls and late frames with block I/O in flight. */
static void judge_jank(struct ph_io_view *v, const struct dev_median *med,
		       size_t nmed)
{
	const struct ph_io_moment *worst = NULL;
	struct ev_builder e;
	struct ph_finding *f;
	uint64_t n = 0, listed = 0;
	int64_t first = INT64_MAX, last = INT64_MIN;

	for (size_t k = 0; k < v->nmom; k++) {
		struct ph_io_moment *m = &v->mom[k];

		if (!jank_io(v, m, med, nmed))
			continue;
		m->jank = true;
		n++;
		if (!worst || m->dev_worst_ns > worst->dev_worst_ns)
			worst = m;
		first = m->from < first ? m->from : first;
		last = m->to > last ? m->to : last;
	}
	if (!n) {
		v->quiet[v->nquiet++] = "io-during-jank";
		return;
	}
	f = add_finding(v, "io-during-jank", PH_SEV_WARNING,
			PH_CONF_CORRELATED);
	f->title = fmt(v,
		       "Block I/O in flight during %" PRIu64
		       " stall%s or late frame%s",
		       n, n == 1 ? "" : "s", n == 1 ? "" : "s");
	f->from = f->last_from = first;
	f->to = f->last_to = last;
	f->count = (int64_t)n;
	f->detail[f->ndetail++] = fmt(
		v,
		"worst: %s at t=%" PRId64 " (%" PRId64 " ms%s%s): %" PRIu64
		" app request%s (%" PRIu64 " on the main thread) in flight, "
		"the device's slowest %.3f ms",
		ph_io_moment_name(worst->kind), worst->t,
		worst->to - worst->from - 2, worst->what[0] ? ", " : "",
		worst->what, worst->app_n, worst->app_n == 1 ? "" : "s",
		worst->main_n, ms(worst->dev_worst_ns));
	if (worst->other_comm)
		f->detail[f->ndetail++] =
			fmt(v,
			    "busiest other process then: %s (pid %d, "
			    "%" PRIu64 " request%s)",
			    worst->other_comm, (int)worst->other_pid,
			    worst->other_n, worst->other_n == 1 ? "" : "s");
	f->detail[f->ndetail++] = "ordering, not proof: the requests were in "
				  "flight while the app was stuck";
	eb_begin(&e);
	ph_jw_kv_int(&e.jw, "count", (int64_t)n);
	ph_jw_key(&e.jw, "moments");
	ph_jw_arr_begin(&e.jw);
	for (size_t k = 0; k < v->nmom && listed < 10; k++) {
		const struct ph_io_moment *m = &v->mom[k];

		if (!m->jank)
			continue;
		listed++;
		ph_jw_obj_begin(&e.jw);
		ph_jw_kv_str(&e.jw, "kind", ph_io_moment_name(m->kind));
		ph_jw_kv_int(&e.jw, "t", m->t);
		ph_jw_kv_int(&e.jw, "durationMs", m->to - m->from - 2);
		ph_jw_kv_int(&e.jw, "appRequests", (int64_t)m->app_n);
		ph_jw_kv_int(&e.jw, "mainThreadRequests", (int64_t)m->main_n);
		ph_jw_kv_double(&e.jw, "deviceWorstMs", ms(m->dev_worst_ns));
		if (m->other_comm) {
			ph_jw_kv_int(&e.jw, "busiestOtherPid", m->other_pid);
			ph_jw_kv_str(&e.jw, "busiestOther", m->other_comm);
		}
		ph_jw_obj_end(&e.jw);
	}
	ph_jw_arr_end(&e.jw);
	f->evidence = eb_end(v, &e);
}

static void judge_lost(struct ph_io_view *v)
{
	struct ph_finding *f;

	/* unknown (no manifest): neither found nor quiet, since quiet
	 * means looked */
	if (v->lost < 0)
		return;
	if (!v->lost) {
		v->quiet[v->nquiet++] = "io-lost-events";
		return;
	}
	f = add_finding(v, "io-lost-events", PH_SEV_NOTE, PH_CONF_OBSERVED);
	f->title = fmt(v, "The recording lost %" PRId64 " block event%s",
		       v->lost, v->lost == 1 ? "" : "s");
	f->detail[f->ndetail++] = "ftrace overwrote them before the collector "
				  "read them: requests near the gaps may be "
				  "missing or have no latency";
	f->spanning = true;
	f->count = v->lost;
	f->evidence = fmt(v, "{\"totalLost\":%" PRId64 "}", v->lost);
}

int ph_io_finish(struct ph_io_view *v)
{
	struct dev_median *med = NULL;
	int32_t *owner;
	size_t nmed = 0, kept = 0;
	int rc;

	if (!v->budget_ms) {
		v->budget_ms = 1000.0 / 60;
		v->budget_source = "assumed 60 Hz";
	}
	if (v->nreq > 1)
		qsort(v->req, v->nreq, sizeof(*v->req), cmp_req);
	for (size_t i = 0; i < v->nreq; i++) {
		struct ph_io_req *q = &v->req[i];

		q->app = v->pid > 0 && q->pid == v->pid;
		q->main = q->app && q->tid == v->pid;
		v->app_n += q->app;
		v->main_n += q->main;
		v->app_bytes += q->app ? q->bytes : 0;
		v->main_bytes += q->main ? q->bytes : 0;
		v->others_n += !q->app;
		v->unseen_n += q->latency_ns < 0 && q->pid < 0;
		if (q->done_ns - q->issue_ns > v->max_span_ns)
			v->max_span_ns = q->done_ns - q->issue_ns;
	}
	/* the moments in the window: stalls, late frames, every query */
	for (size_t k = 0; k < v->nmom; k++) {
		struct ph_io_moment m = v->mom[k];

		if (m.to < v->w.from || m.from > v->w.to)
			continue;
		if (m.kind == PH_IO_FRAME &&
		    (double)(m.to - m.from) <= v->budget_ms)
			continue;
		/* the events' ms are whole: widen by one each side */
		m.from -= 1;
		m.to += 1;
		v->mom[kept++] = m;
	}
	v->nmom = kept;
	if (v->nmom > 1)
		qsort(v->mom, v->nmom, sizeof(*v->mom), cmp_mom);
	owner = own_requests(v);
	if (!owner) {
		rc = PH_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < v->nmom; k++)
		join_moment(v, k, owner);
	free(owner);
	if ((rc = device_stats(v, &med, &nmed)) || (rc = proc_stats(v)))
		goto out;
	/* processes, not threads: pids, each once (procs is by count) */
	for (size_t i = 0; i < v->nprocs; i++) {
		bool again = false;

		for (size_t k = 0; k < i && !again; k++)
			again = v->procs[k].pid == v->procs[i].pid;
		v->other_procs += !again && v->procs[i].pid >= 0 &&
				  v->procs[i].pid != v->pid;
	}
	judge_main(v);
	judge_slow(v, med, nmed);
	judge_jank(v, med, nmed);
	judge_lost(v);
	if (v->pid <= 0)
		ph_io_note(v, "the app's pid is unknown (its hello has none): "
			      "give --pid to tell its requests apart");
	else if (!v->app_n && v->nreq)
		ph_io_note(v,
			   "no request in the window was issued by the app's "
			   "process (pid %" PRId64
			   "); what it writes may reach the "
			   "disk later, issued by writeback or the "
			   "filesystem's journal",
			   v->pid);
	if (v->rows_no_time)
		ph_io_note(v,
			   "%" PRIu64 " row%s without a mono_ns could not be "
			   "placed on the app's clock",
			   v->rows_no_time, v->rows_no_time == 1 ? "" : "s");
	v->no_overlap = v->rows &&
			v->rows_outside == v->rows - v->rows_no_time &&
			v->rec_first_ns <= v->rec_last_ns;
	if (v->no_overlap)
		ph_io_note(v,
			   "the recording (t=%" PRId64 "..%" PRId64
			   ") does not overlap the window (t=%" PRId64
			   "..%" PRId64 ")",
			   floor_ms(v->rec_first_ns), ceil_ms(v->rec_last_ns),
			   v->w.from, v->w.to);
out:
	free(med);
	return rc;
}
