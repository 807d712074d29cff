/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_finish_sort.c: the first step of ph_trace_finish(): one pass over
 * the decoded events finds the runs they came in (the order they go back
 * in time at), and the plan for running them in time order: as they are,
 * merged from those runs (trace_finish.c merges them into the state
 * machines), or, past what a merge pays off for, radix-sorted here.
 * trace_finish_int.h says why.
 */
#include "ph_common.h"
#include "trace/trace.h"
#include "trace/trace_int.h"
#include "trace/trace_finish_int.h"

struct skey {
	uint64_t key;
	uint32_t idx;
};

static int run_cmp(const void *x, const void *y)
{
	const struct run *a = x, *b = y;

	return run_before(a, b) ? -1 : run_before(b, a) ? 1 : 0;
}

static int sort_packed(struct ph_trace *t, bool hw, int64_t min, uint64_t span,
		       int idx_bits, uint32_t *order, size_t n)
{
	uint64_t *a = ph_trace_big_realloc(NULL, 0, n * sizeof(*a));
	uint64_t *b = ph_trace_big_realloc(NULL, 0, n * sizeof(*b));
	uint64_t mask = ((uint64_t)1 << idx_bits) - 1, *sorted;
	size_t k = 0;
	int key_bits = 0;

	if (!a || !b) {
		ph_trace_big_free(a, n * sizeof(*a));
		ph_trace_big_free(b, n * sizeof(*b));
		return PH_ENOMEM;
	}
	for (size_t i = 0; i < t->nev; i++)
		if (!skipped(&t->ev[i], hw))
			a[k++] = ((uint64_t)t->ev[i].ts - (uint64_t)min)
					 << idx_bits |
				 i;
	while (key_bits < 64 && (span >> key_bits))
		key_bits++;
	sorted = ph_trace_radix_packed(a, b, n, idx_bits, key_bits);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)(sorted[i] & mask);
	ph_trace_big_free(a, n * sizeof(*a));
	ph_trace_big_free(b, n * sizeof(*b));
	return 0;
}

/*
 * Stable LSD radix sort of the kept events into *order, on 11-bit digits,
 * only over the digits in use.  When the time span and the event count
 * fit in 64 bits together (a trace of minutes and millions of events
 * does), the key is packed as (ts - min) << idx_bits | idx in one word,
 * which halves the memory the passes move; otherwise 16-byte (key, idx)
 * pairs.  The passes skip the low idx bits: equal timestamps keep the
 * index order (stable).
 */
static int sort_radix(struct ph_trace *t, bool hw, int64_t min, int64_t max_ts,
		      uint32_t **order_out, size_t n)
{
	struct skey *a, *b;
	uint32_t *order;
	uint64_t max;
	int idx_bits = 1;

	order = malloc(n * sizeof(*order));
	if (!order)
		return PH_ENOMEM;
	while (idx_bits < 40 && ((size_t)1 << idx_bits) < t->nev)
		idx_bits++;
	max = (uint64_t)max_ts - (uint64_t)min;
	if (max < ((uint64_t)1 << (64 - idx_bits)) - 1) {
		if (sort_packed(t, hw, min, max, idx_bits, order, n)) {
			free(order);
			return PH_ENOMEM;
		}
		*order_out = order;
		return 0;
	}
	a = malloc(n * sizeof(*a));
	b = malloc(n * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		free(order);
		return PH_ENOMEM;
	}
	for (size_t i = 0, k = 0; i < t->nev; i++) {
		if (skipped(&t->ev[i], hw))
			continue;
		a[k].key = (uint64_t)t->ev[i].ts - (uint64_t)min;
		a[k++].idx = (uint32_t)i;
	}
	for (int shift = 0; shift < 64 && (max >> shift); shift += 11) {
		size_t count[2048] = { 0 };
		size_t pos = 0;
		struct skey *tmp;

		for (size_t i = 0; i < n; i++)
			count[(a[i].key >> shift) & 2047]++;
		for (int d = 0; d < 2048; d++) {
			size_t c = count[d];

			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[(a[i].key >> shift) & 2047]++] = a[i];
		tmp = a;
		a = b;
		b = tmp;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = a[i].idx;
	free(a);
	free(b);
	*order_out = order;
	return 0;
}

/* Up to this many runs (or one per 16 events) the merge beats the sort. */
#define MERGE_RUNS_MIN 64

/* Where runs start; over: more than the merge is worth, given up. */
struct starts {
	uint32_t *at;
	size_t n, cap, limit;
	bool over;
};

static int starts_add(struct starts *st, size_t i)
{
	if (st->over)
		return 0;
	if (st->n + 1 >= st->limit) {
		st->over = true;
		return 0;
	}
	if (st->n == st->cap && PH_GROW(st->at, st->cap, st->n + 1, 64))
		return PH_ENOMEM;
	st->at[st->n++] = (uint32_t)i;
	return 0;
}

/* The runs between st's starts, without skipped events, by first event. */
static int make_runs(struct ph_trace *t, const struct starts *st, bool hw,
		     struct plan *pl)
{
	pl->runs = malloc((st->n + 1) * sizeof(*pl->runs));
	if (!pl->runs)
		return PH_ENOMEM;
	for (size_t r = 0; r <= st->n; r++) {
		struct run *u = &pl->runs[pl->nruns];

		u->cur = r ? st->at[r - 1] : 0;
		u->end = r < st->n ? st->at[r] : (uint32_t)t->nev;
		while (u->cur < u->end && skipped(&t->ev[u->cur], hw))
			u->cur++;
		if (u->cur == u->end)
			continue; /* only skipped wakeups */
		u->ts = t->ev[u->cur].ts;
		pl->nruns++;
	}
	if (pl->nruns > 1)
		qsort(pl->runs, pl->nruns, sizeof(*pl->runs), run_cmp);
	return 0;
}

/*
 * One pass over the events (they are 40 bytes each and cold): how many of
 * each kind (for reserve_rows), whether there is a sched_waking (then
 * every sched_wakeup is skipped), the time range, and where the events
 * go back in time, counting every event and counting all but the
 * wakeups (which of the two describes the runs is known at the end).
 * Then the plan.
 */
int ph_trace_sort_events(struct ph_trace *t, size_t *kinds, struct plan *pl)
{
	struct ph_trace_priv *pv = t->priv;
	int64_t min = INT64_MAX, max_ts = INT64_MIN;
	int64_t prev = INT64_MIN, prev_nw = INT64_MIN;
	struct starts all, nw, *st;
	bool hw;
	int rc = 0;

	memset(pl, 0, sizeof(*pl));
	memset(&all, 0, sizeof(all));
	memset(&nw, 0, sizeof(nw));
	all.limit = nw.limit = t->nev / 16 > MERGE_RUNS_MIN ? t->nev / 16 :
							      MERGE_RUNS_MIN;
	for (size_t i = 0; i < t->nev && !rc; i++) {
		int64_t ts = t->ev[i].ts;
		uint8_t k = t->ev[i].kind;

		if (k < PH_EV_NKINDS)
			kinds[k]++;
		if (ts < min)
			min = ts;
		if (ts > max_ts)
			max_ts = ts;
		if (ts < prev)
			rc = starts_add(&all, i);
		prev = ts;
		if (k != PH_EV_WAKEUP) {
			if (ts < prev_nw && !rc)
				rc = starts_add(&nw, i);
			prev_nw = ts;
		}
	}
	hw = pv->have_waking = kinds[PH_EV_WAKING] > 0;
	if (t->nev) {
		/* the bounds count the skipped wakeups too */
		ph_trace_see_ts(t, min);
		ph_trace_see_ts(t, max_ts);
	}
	pl->n = t->nev - (hw ? kinds[PH_EV_WAKEUP] : 0);
	st = hw ? &nw : &all;
	if (rc || !pl->n || (!st->n && pl->n == t->nev))
		; /* no memory; nothing to run; all of them as they are */
	else if (st->over)
		rc = sort_radix(t, hw, min, max_ts, &pl->order, pl->n);
	else
		rc = make_runs(t, st, hw, pl);
	free(all.at);
	free(nw.at);
	return rc;
}
