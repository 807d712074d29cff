/* SPDX-License-Identifier: Apache-2.0 */
/* io/merge.c: an iotrace recording's io view merged into a capture. */
#include "ph_common.h"
#include "merge.h"
#include "../ingest.h"

static const char *keep(struct ph_analysis *a, const char *s)
{
	return s ? ph_arena_strndup(&a->arena, s, strlen(s)) : NULL;
}

/* Whether a already judged id: the io family did, when the captured
 * session held block I/O attached before (`iotrace attach`). */
static bool judged(const struct ph_analysis *a, const char *id)
{
	return ph_analysis_find(a, id) || ph_analysis_quiet(a, id);
}

struct ph_finding *ph_io_add_finding(struct ph_analysis *a,
				     const struct ph_finding *src)
{
	struct ph_finding *f = ph_analysis_add(a);

	if (!f)
		return NULL;
	*f = *src;
	f->id = keep(a, src->id);
	f->source = "iotrace";
	f->title = keep(a, src->title);
	for (int k = 0; k < src->ndetail; k++)
		f->detail[k] = keep(a, src->detail[k]);
	f->evidence = keep(a, src->evidence ? src->evidence : "{}");
	f->key = keep(a, src->key ? src->key : src->id);
	/* no where-hints: a block request names no code */
	memset(&f->hint, 0, sizeof(f->hint));
	f->where = f->where_short = NULL;
	if (!f->id || !f->title || !f->evidence || !f->key) {
		a->nf--; /* out of memory: not half a finding */
		return NULL;
	}
	return f;
}

void ph_io_add_metrics(struct ph_analysis *a, const struct ph_io_view *v)
{
	int64_t worst = -1;
	size_t moments = 0;

	if (a->metric_set[PH_M_IO_APP])
		return;
	for (size_t i = 0; i < v->nreq; i++)
		if (v->req[i].app && v->req[i].latency_ns > worst)
			worst = v->req[i].latency_ns;
	/* main-thread queries only: the io family keeps no others */
	for (size_t i = 0; i < v->nmom; i++)
		moments += v->mom[i].app_n > 0 &&
			   (v->mom[i].kind != PH_IO_QUERY || v->mom[i].main);
	a->metric[PH_M_IO_APP] = (double)v->app_n;
	a->metric[PH_M_IO_MAIN] = (double)v->main_n;
	a->metric[PH_M_IO_APP_MOMENTS] = (double)moments;
	a->metric_set[PH_M_IO_APP] = a->metric_set[PH_M_IO_MAIN] =
		a->metric_set[PH_M_IO_APP_MOMENTS] = true;
	/* no request of the app's: its slowest is 0, so a first one in a
	 * later capture is news; requests whose issues went unseen only:
	 * no latency to state */
	if (!v->app_n)
		worst = 0;
	if (worst >= 0) {
		/* whole microseconds, so the capture shows ms to 3 places */
		a->metric[PH_M_IO_APP_WORST_MS] =
			(double)((worst + 500) / 1000) / 1000.0;
		a->metric_set[PH_M_IO_APP_WORST_MS] = true;
	}
}

/* The view's findings into a, their strings copied into a's arena. */
static int merge_findings(struct ph_analysis *a, const struct ph_io_view *v)
{
	int added = 0;

	for (size_t i = 0; i < v->nf; i++) {
		const struct ph_finding *src = &v->f[i];

		if (judged(a, src->id))
			continue;
		if (!ph_io_add_finding(a, src))
			break;
		added++;
	}
	for (size_t i = 0;
	     i < v->nquiet && a->nlooked < PH_ARRAY_SIZE(a->looked); i++) {
		const char *q;

		if (judged(a, v->quiet[i]))
			continue;
		if ((q = keep(a, v->quiet[i])))
			a->looked[a->nlooked++] = q;
	}
	/* Quiet or not seen, by the app's coverage as the rest. */
	ph_analysis_cover(a);
	ph_analysis_rank(a);
	return added;
}

/*
 * The app's events over a's window into the view: from the store while
 * it holds the whole window, else from the session file (the store
 * evicted its start), else what the store has, said.
 */
static void feed_events(struct ph_io_view *v, struct ph_analysis *a,
			struct ph_store *s, const char *session_path)
{
	int64_t covered_from;

	pthread_mutex_lock(&s->lock);
	covered_from = s->covered_from;
	pthread_mutex_unlock(&s->lock);
	if (covered_from != INT64_MIN && a->window.from < covered_from &&
	    session_path && session_path[0]) {
		struct ph_ingest in;

		ph_ingest_init(&in, ph_io_feed_event, v);
		if (!ph_ingest_file(&in, session_path) && in.events) {
			ph_ingest_release(&in);
			return;
		}
		ph_ingest_release(&in);
		/* nothing fed yet: the session file was unreadable */
	}
	if (covered_from != INT64_MIN && a->window.from < covered_from)
		ph_io_note(v,
			   "the app's events before t=%" PRId64
			   " were evicted from the live buffer: moments "
			   "before it are not joined",
			   covered_from);
	ph_store_each(s, a->window,
		      (1ull << PH_KIND_BLOCKED) | (1ull << PH_KIND_FRAME) |
			      (1ull << PH_KIND_DB_END) |
			      (1ull << PH_KIND_DEVICE),
		      ph_io_feed_event, v);
}

struct ph_io_view *ph_io_merge(struct ph_analysis *a, struct ph_store *s,
			       const char *session_path, const char *rec_dir,
			       bool keep_dir, int64_t pid, char *why,
			       size_t why_size)
{
	struct ph_io_opts o = { .pid = pid, .w = a->window };
	struct ph_io_view *v = ph_io_view_new(&o);
	int added;

	why[0] = '\0';
	if (!v) {
		snprintf(why, why_size, "out of memory");
		goto fail;
	}
	feed_events(v, a, s, session_path);
	ph_io_set_session(v, &a->ident, &a->profile, a->first_t, a->last_t);
	if (ph_io_load_recording(v, rec_dir, why, why_size))
		goto fail;
	if (!keep_dir)
		v->rec_dir = NULL; /* removed with the capture's temp files */
	if (v->no_overlap) {
		snprintf(why, why_size,
			 "the recording does not overlap the capture's "
			 "window");
		goto fail;
	}
	added = merge_findings(a, v);
	ph_io_add_metrics(a, v);
	ph_analysis_note(a,
			 "block I/O: %d finding%s over the same window, "
			 "tagged [iotrace]; %" PRIu64 " requests, %" PRIu64
			 " by the app (%" PRIu64 " on its main thread)",
			 added, added == 1 ? "" : "s", (uint64_t)v->nreq,
			 v->app_n, v->main_n);
	return v;
fail:
	ph_analysis_note(a, "block I/O: %s", why);
	ph_io_view_free(v);
	return NULL;
}
