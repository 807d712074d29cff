/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coverage.c: seq runs, and what an answer covers (coverage.h).
 */
#include "ph_common.h"
#include "coverage.h"

/*
 * Runs kept per stream.  Each is a hole the host could not fill; past the
 * cap a new seq joins the nearest run, so the holes it hid are counted as
 * held and the count becomes a lower bound (said as "at least").
 */
#define RUNS_CAP 65536

void ph_seq_runs_release(struct ph_seq_runs *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The holes between the runs of one stream, added to *n and the span. */
static void holes(const struct ph_seq_runs *r, uint64_t *n, int64_t *from,
		  int64_t *to)
{
	for (size_t i = 1; i < r->n; i++) {
		const struct ph_seq_run *a = &r->v[i - 1], *b = &r->v[i];

		if (!*n) {
			*from = min64(a->hi_t, b->lo_t);
			*to = max64(a->hi_t, b->lo_t);
		} else {
			*from = min64(*from, min64(a->hi_t, b->lo_t));
			*to = max64(*to, max64(a->hi_t, b->lo_t));
		}
		*n += (uint64_t)(b->lo - a->hi - 1);
	}
}

/* v[i] and v[i + 1] touch: one run. */
static void join_next(struct ph_seq_runs *r, size_t i)
{
	if (i + 1 >= r->n || r->v[i + 1].lo != r->v[i].hi + 1)
		return;
	r->v[i].hi = r->v[i + 1].hi;
	r->v[i].hi_t = r->v[i + 1].hi_t;
	memmove(&r->v[i + 1], &r->v[i + 2], (r->n - i - 2) * sizeof(r->v[0]));
	r->n--;
}

/* Puts seq into run i (just before it, or just after it). */
static void extend(struct ph_seq_runs *r, size_t i, int64_t seq, int64_t t)
{
	struct ph_seq_run *run = &r->v[i];

	if (seq < run->lo) {
		run->lo = seq;
		run->lo_t = t;
		r->last = i;
		if (i > 0 && r->v[i - 1].hi + 1 == seq) {
			join_next(r, i - 1);
			r->last = i - 1;
		}
		return;
	}
	if (seq > run->hi) {
		run->hi = seq;
		run->hi_t = t;
	}
	r->last = i;
	join_next(r, i);
}

void ph_seq_runs_add(struct ph_seq_runs *r, uint32_t stream, int64_t seq,
		     int64_t t)
{
	size_t lo = 0, hi, i;

	if (seq < 0)
		return;
	if (r->have && stream != r->stream) {
		/* The earlier stream's holes are final: fold them in. */
		holes(r, &r->missing, &r->miss_from, &r->miss_to);
		r->n = 0;
		r->last = 0;
	}
	r->stream = stream;
	r->have = true;
	/* The common case: the next seq after the previous one. */
	if (r->last < r->n) {
		struct ph_seq_run *run = &r->v[r->last];

		if (seq >= run->lo && seq <= run->hi)
			return;
		if (seq == run->hi + 1) {
			extend(r, r->last, seq, t);
			return;
		}
	}
	/* Binary search: i is the first run with lo > seq. */
	hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].lo > seq)
			hi = mid;
		else
			lo = mid + 1;
	}
	i = lo;
	if (i > 0 && seq <= r->v[i - 1].hi)
		return; /* held already (the ingest lets no duplicate by) */
	if (i > 0 && seq == r->v[i - 1].hi + 1) {
		extend(r, i - 1, seq, t);
		return;
	}
	if (i < r->n && seq + 1 == r->v[i].lo) {
		extend(r, i, seq, t);
		return;
	}
	if (r->n >= RUNS_CAP) {
		r->overflow = true;
		extend(r, i < r->n ? i : i - 1, seq, t);
		return;
	}
	if (r->n == r->alloc && PH_GROW(r->v, r->alloc, r->n + 1, 16)) {
		r->overflow = true;
		if (r->n)
			extend(r, i < r->n ? i : i - 1, seq, t);
		return;
	}
	memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(r->v[0]));
	r->v[i] = (struct ph_seq_run){ seq, seq, t, t };
	r->n++;
	r->last = i;
}

void ph_coverage_from_runs(struct ph_coverage *cov, const struct ph_seq_runs *r,
			   struct ph_window w, int64_t first_t, int64_t last_t,
			   uint64_t events, const struct ph_ingest *src)
{
	memset(cov, 0, sizeof(*cov));
	cov->events = events;
	cov->held = events > 0;
	cov->held_from = first_t;
	cov->held_to = last_t;
	cov->missing = r->missing;
	cov->missing_from = r->miss_from;
	cov->missing_to = r->miss_to;
	holes(r, &cov->missing, &cov->missing_from, &cov->missing_to);
	cov->at_least = r->overflow;
	if (src)
		cov->dropped = src->dropped;
	/*
	 * A window that ends before the app's first event, when the host
	 * holds that event (seq 0): the app had not begun, so nothing could
	 * have happened, and that is seen.
	 */
	if (!events && src && src->events && w.from != INT64_MIN &&
	    w.to != INT64_MAX && w.to < src->first_t &&
	    ph_ingest_seq_seen(src, 0)) {
		cov->held = true;
		cov->held_from = w.from;
		cov->held_to = w.to;
	}
	if (r->have && r->n && r->v[0].lo > 0) {
		int64_t lo = r->v[0].lo;
		int64_t below = -1;
		bool lost;

		/*
		 * Is the seq before the first held one held?  The ingest
		 * knows for its current stream: then the first event of this
		 * window merely follows one before the window.  Without it,
		 * only an answer over everything can tell.
		 */
		if (src && ph_ingest_stream(src) == r->stream) {
			lost = !ph_ingest_seq_seen(src, lo - 1);
			below = ph_ingest_seen_below(src, lo);
		} else {
			lost = w.from == INT64_MIN;
		}
		if (lost) {
			cov->missing_before = (uint64_t)(lo - 1 - below);
			cov->before_to = r->v[0].lo_t;
		}
	}
	ph_coverage_judge(cov);
}

/* Appends "; " and the formatted text to cov->reason. */
static void reason(struct ph_coverage *cov, const char *fmt, ...)
	PH_PRINTF(2, 3);

static void reason(struct ph_coverage *cov, const char *fmt, ...)
{
	size_t n = strlen(cov->reason);
	va_list ap;

	if (n && n + 2 < sizeof(cov->reason)) {
		memcpy(cov->reason + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(cov->reason + n, sizeof(cov->reason) - n, fmt, ap);
	va_end(ap);
}

void ph_coverage_judge(struct ph_coverage *cov)
{
	cov->reason[0] = '\0';
	if (!cov->held)
		reason(cov, "nothing observed: the host holds no app event "
			    "in this window");
	if (cov->missing_before)
		reason(cov,
		       "%" PRIu64 " events the app emitted before t=%" PRId64
		       " were never received (the host attached after them, "
		       "and the app's backfill did not reach back)",
		       cov->missing_before, cov->before_to);
	if (cov->missing)
		reason(cov,
		       "%s%" PRIu64 " events missing by seq between t=%" PRId64
		       " and t=%" PRId64 " (lost by the app's queue or on "
		       "this host's connection)",
		       cov->at_least ? "at least " : "", cov->missing,
		       cov->missing_from, cov->missing_to);
	if (cov->clipped_ms > 0)
		reason(cov,
		       "%" PRId64 " ms of the window are held by neither the "
		       "live store nor a session file",
		       cov->clipped_ms);
	if (cov->link == PH_COV_LINK_NOT_CONNECTED) {
		if (cov->held)
			reason(cov, "not connected after t=%" PRId64 "%s%s%s",
			       cov->link_since, cov->link_why[0] ? " (" : "",
			       cov->link_why, cov->link_why[0] ? ")" : "");
		else
			reason(cov, "not connected%s%s%s",
			       cov->link_why[0] ? " (" : "", cov->link_why,
			       cov->link_why[0] ? ")" : "");
	}
	cov->complete = !cov->reason[0];
}

static void end(struct ph_jw *jw, const char *key, int64_t v, int64_t open)
{
	ph_jw_key(jw, key);
	if (v == open)
		ph_jw_null(jw);
	else
		ph_jw_int(jw, v);
}

void ph_coverage_write(const struct ph_coverage *cov, struct ph_window w,
		       struct ph_jw *jw)
{
	ph_jw_key(jw, "coverage");
	ph_jw_obj_begin(jw);
	ph_jw_kv_bool(jw, "complete", cov->complete);
	ph_jw_key(jw, "window");
	ph_jw_obj_begin(jw);
	end(jw, "from", w.from, INT64_MIN);
	end(jw, "to", w.to, INT64_MAX);
	ph_jw_obj_end(jw);
	ph_jw_key(jw, "held");
	if (cov->held) {
		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "from", cov->held_from);
		ph_jw_kv_int(jw, "to", cov->held_to);
		ph_jw_obj_end(jw);
	} else {
		ph_jw_null(jw);
	}
	ph_jw_kv_int(jw, "events", (int64_t)cov->events);
	ph_jw_kv_int(jw, "missingSeqs", (int64_t)cov->missing);
	if (cov->at_least)
		ph_jw_kv_bool(jw, "missingAtLeast", true);
	ph_jw_kv_int(jw, "missingBefore", (int64_t)cov->missing_before);
	ph_jw_kv_int(jw, "droppedByApp", (int64_t)cov->dropped);
	ph_jw_kv_int(jw, "clippedMs", cov->clipped_ms);
	if (cov->link != PH_COV_LINK_UNKNOWN)
		ph_jw_kv_bool(jw, "connected",
			      cov->link == PH_COV_LINK_CONNECTED);
	if (!cov->complete)
		ph_jw_kv_str(jw, "reason", cov->reason);
	ph_jw_obj_end(jw);
}
