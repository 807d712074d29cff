/* SPDX-License-Identifier: Apache-2.0 */
/*
 * findings.c: the engine core: the family table, the summary every report
 * footer and compare reads, the engine that feeds families and windows
 * their findings, and the live store's standing engine.  Beside it:
 * findings_file.c (a session file, parsed on a second thread),
 * findings_answer.c (the answer's JSON, classification and banner) and
 * findings/family.c (the helpers families share).
 */
#include "ph_common.h"
#include "findings.h"
#include "findings/family.h"
#include "ph_error.h"

#include <math.h>
#include <pthread.h>

/*
 * The families, in the order they run.  Order matters only where a family
 * reads earlier findings: startup reads db and stall findings, so it is
 * last.
 */
static const struct ph_family *const families[] = {
	&ph_family_db_main,   &ph_family_stall,	  &ph_family_http_failed,
	&ph_family_http_slow, &ph_family_frames,  &ph_family_recompose,
	&ph_family_db_error,  &ph_family_tap,	  &ph_family_work,
	&ph_family_exit,      &ph_family_thermal, &ph_family_memory,
	&ph_family_strict,    &ph_family_gc,	  &ph_family_leak,
	&ph_family_io,	      &ph_family_startup,
};
#define NFAM PH_ARRAY_SIZE(families)

/* Items per lane kept for the HTML timeline; the rest are counted. */
#define LANE_CAP 4000

static const char *const metric_names[] = {
#define X(id, name) name,
	PH_METRICS(X)
#undef X
};

const char *ph_metric_name(int m)
{
	return m >= 0 && m < PH_M_COUNT ? metric_names[m] : "unknown";
}

int ph_metric_find(const char *name, size_t n)
{
	for (int i = 0; i < PH_M_COUNT; i++)
		if (strlen(metric_names[i]) == n &&
		    !memcmp(metric_names[i], name, n))
			return i;
	return -1;
}

const char *ph_lane_name(int lane)
{
	static const char *const names[] = { "main", "frames", "http",	"db",
					     "work", "nav",    "input", "log" };

	return lane >= 0 && lane < PH_LANE_COUNT ? names[lane] : "other";
}

const char *ph_severity_name(int sev)
{
	return sev == PH_SEV_ERROR   ? "error" :
	       sev == PH_SEV_WARNING ? "warning" :
				       "note";
}

int ph_severity_parse(const char *s)
{
	if (!strcmp(s, "error"))
		return PH_SEV_ERROR;
	if (!strcmp(s, "warning"))
		return PH_SEV_WARNING;
	if (!strcmp(s, "note"))
		return PH_SEV_NOTE;
	return -1;
}

const char *ph_status_name(int st)
{
	return st == PH_STATUS_NEW	? "new" :
	       st == PH_STATUS_ONGOING	? "ongoing" :
	       st == PH_STATUS_RESOLVED ? "resolved" :
					  NULL;
}

/* --- the summary: metrics, lanes, marks, exits ----------------------------
 */

struct summary {
	int64_t first_t, last_t;
	uint64_t counts[PH_KIND_COUNT];
	double m[PH_M_COUNT];
	bool set[PH_M_COUNT];
	struct ph_lane_item *lanes;
	size_t nlanes, alanes, lane_n[PH_LANE_COUNT];
	struct ph_mark *marks;
	size_t nmarks, amarks;
	struct ph_launch *launches;
	size_t nlaunches, alaunches;
	struct ph_exit_note *exits;
	size_t nexits, aexits;
	/* The stall whose ongoing events are being summed (summarize_stall) */
	bool stall_open;
	int64_t stall_open_t, stall_open_ms;
	struct ph_smap open_http; /* id -> open flag */
	int64_t http_open;
};

struct ph_engine {
	struct ph_window w;
	const struct ph_ingest *src;
	struct ph_arena keep;
	struct ph_fctx ctx;
	void *state[NFAM];
	/* Per kind, the families that want it (indexes into families[]). */
	uint8_t nby[PH_KIND_COUNT];
	uint8_t by[PH_KIND_COUNT][NFAM];
	struct summary sum;
	struct ph_seq_runs runs; /* the app seqs fed, for the coverage */
	struct ph_profile no_profile;
	struct ph_ident no_ident;
};

/* The launches kept for the report's startup lines: the first ones. */
#define LAUNCH_CAP 256

static int64_t ev_ms(const struct ph_event *ev, const char *key)
{
	int64_t v;

	return ph_ev_int(ev, key, &v) ? v : -1;
}

static void launch_add(struct ph_engine *e, const struct ph_event *ev)
{
	struct summary *s = &e->sum;
	if (s->nlaunches >= LAUNCH_CAP ||
	    PH_GROW(s->launches, s->alaunches, s->nlaunches + 1, 64))
		return;
	s->launches[s->nlaunches++] = (struct ph_launch){
		.t = ev->t,
		.origin = ev_ms(ev, "originMs"),
		.first_frame = ev_ms(ev, "firstFrameMs"),
		.fully_drawn = ev_ms(ev, "reportFullyDrawnMs"),
		.cls = ph_keep_field(&e->ctx, ev, "classification"),
	};
}

/* A report after the startup event went out: the launch it names. */
static void launch_fully_drawn(struct summary *s, const struct ph_event *ev)
{
	int64_t origin = ev_ms(ev, "originMs");
	int64_t at = ev_ms(ev, "reportFullyDrawnMs");

	if (origin < 0 || at < 0)
		return;
	for (size_t i = s->nlaunches; i-- > 0;)
		if (s->launches[i].origin == origin) {
			if (s->launches[i].fully_drawn < 0)
				s->launches[i].fully_drawn = at;
			return;
		}
}

static void lane_add(struct ph_engine *e, int lane, int64_t from, int64_t to,
		     int level, const char *fmt, ...) PH_PRINTF(6, 7);

static void lane_add(struct ph_engine *e, int lane, int64_t from, int64_t to,
		     int level, const char *fmt, ...)
{
	struct summary *s = &e->sum;
	char label[160];
	va_list ap;

	if (s->lane_n[lane]++ >= LANE_CAP)
		return;
	if (PH_GROW(s->lanes, s->alanes, s->nlanes + 1, 64))
		return;
	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
	s->lanes[s->nlanes++] = (struct ph_lane_item){
		.lane = lane,
		.from = from,
		.to = to,
		.label = ph_keep(&e->ctx, label, strlen(label)),
		.level = level,
	};
}

static void set_max(struct summary *s, int m, double v)
{
	if (!s->set[m] || v > s->m[m])
		s->m[m] = v;
	s->set[m] = true;
}

static void add(struct summary *s, int m, double v)
{
	s->m[m] += v;
	s->set[m] = true;
}

/*
 * A stall comes as ongoing events while it lasts (the same t, growing
 * durationMs) and then a closing one: it counts once, with its newest
 * length, and is drawn once it closes.
 */
static void summarize_stall(struct ph_engine *e, const struct ph_event *ev,
			    int64_t from, int64_t to)
{
	struct summary *s = &e->sum;
	bool ongoing = ph_ev_true(ev, "ongoing");
	char a[96];

	if (s->stall_open && s->stall_open_t == from) {
		add(s, PH_M_STALL_MS, (double)(to - from - s->stall_open_ms));
	} else {
		add(s, PH_M_STALLS, 1);
		add(s, PH_M_STALL_MS, (double)(to - from));
	}
	set_max(s, PH_M_STALL_WORST_MS, (double)(to - from));
	s->stall_open = ongoing;
	s->stall_open_t = from;
	s->stall_open_ms = to - from;
	if (!ongoing)
		lane_add(e, PH_LANE_MAIN, from, to, 2,
			 "stall %" PRId64 " ms: %s", to - from,
			 ph_ev_strcpy(ev, "top", a, sizeof(a)));
}

static void summarize(struct ph_engine *e, const struct ph_event *ev)
{
	struct summary *s = &e->sum;
	int64_t from = e->ctx.from, to = e->ctx.to, v;
	char a[96], b[96];

	switch (ev->kind) {
	case PH_KIND_FRAME:
		if (ph_ev_true(ev, "firstDraw"))
			break;
		add(s, PH_M_FRAMES_JANKY, 1);
		if (ph_ev_int(ev, "totalMs", &v)) {
			double budget = ph_profile_budget_ms(e->ctx.profile),
			       fb;
			int64_t missed = 1;

			if (budget <= 0 && ph_ev_num(ev, "budgetMs", &fb))
				budget = fb;
			/* A hostile budget (1e-300) must not overflow the
			 * cast: a frame misses at most PH_EV_T_MAX frames. */
			if (budget > 0)
				missed = ph_missed_frames(v, budget);
			add(s, PH_M_FRAMES_MISSED,
			    (double)(missed > 0 ? missed : 1));
			set_max(s, PH_M_FRAMES_WORST_MS, (double)v);
		}
		lane_add(e, PH_LANE_FRAMES, from, to, v >= 100 ? 2 : 1,
			 "late frame %" PRId64 " ms (%s)", v,
			 ph_ev_strcpy(ev, "worstPhase", a, sizeof(a)));
		break;
	case PH_KIND_BLOCKED: summarize_stall(e, ev, from, to); break;
	case PH_KIND_DB_END:
		add(s, PH_M_DB_QUERIES, 1);
		if (ph_ev_on_main(ev))
			add(s, PH_M_DB_MAIN, 1);
		if (ph_ev_get(ev, "error"))
			add(s, PH_M_DB_ERRORS, 1);
		set_max(s, PH_M_DB_WORST_MS, (double)(to - from));
		lane_add(e, ph_ev_on_main(ev) ? PH_LANE_MAIN : PH_LANE_DB, from,
			 to,
			 ph_ev_get(ev, "error") ? 2 :
			 ph_ev_on_main(ev)	? 1 :
						  0,
			 "%s", ph_ev_strcpy(ev, "sql", a, sizeof(a)));
		break;
	case PH_KIND_HTTP_START: {
		const char *id;
		size_t n;
		bool created;
		int64_t *st;

		if (!ph_ev_str(ev, "id", &id, &n))
			break;
		st = ph_smap_get(&e->ctx, &s->open_http, id, n, sizeof(*st),
				 &created);
		if (st && created) {
			*st = 1;
			s->http_open++;
		}
		break;
	}
	case PH_KIND_HTTP_END: {
		const char *id;
		size_t n;
		bool created;
		int64_t *st, status = 0;
		bool failed = ph_ev_streq(ev, "phase", "failed");

		add(s, PH_M_HTTP_CALLS, 1);
		if (ph_ev_int(ev, "status", &status) && status >= 400)
			failed = true;
		if (failed)
			add(s, PH_M_HTTP_FAILED, 1);
		if (to - from >= 3000)
			add(s, PH_M_HTTP_SLOW, 1);
		set_max(s, PH_M_HTTP_WORST_MS, (double)(to - from));
		if (ph_ev_str(ev, "id", &id, &n)) {
			st = ph_smap_get(&e->ctx, &s->open_http, id, n,
					 sizeof(*st), &created);
			if (st && *st == 1) {
				*st = 2;
				s->http_open--;
			} else if (st) {
				*st = 2;
			}
		}
		lane_add(e, PH_LANE_HTTP, from, to, failed ? 2 : 0,
			 "%s %s %" PRId64,
			 ph_ev_strcpy(ev, "method", a, sizeof(a)),
			 ph_ev_strcpy(ev, "url", b, sizeof(b)), status);
		break;
	}
	case PH_KIND_RECOMPOSE: add(s, PH_M_RECOMPOSITIONS, 1); break;
	case PH_KIND_STARTUP:
		if ((ph_ev_streq(ev, "classification", "cold") ||
		     ph_ev_streq(ev, "classification", "lukewarm")) &&
		    ph_ev_int(ev, "totalMs", &v))
			set_max(s, PH_M_STARTUP_MS, (double)v);
		launch_add(e, ev);
		break;
	case PH_KIND_FULLY_DRAWN: launch_fully_drawn(s, ev); break;
	case PH_KIND_INPUT:
		if (ph_ev_streq(ev, "action", "tap") &&
		    ph_ev_int(ev, "tapMs", &v)) {
			set_max(s, PH_M_TAP_WORST_MS, (double)v);
			lane_add(e, PH_LANE_INPUT, ev->t, ev->t + v,
				 v > 500 ? 2 :
				 v > 100 ? 1 :
					   0,
				 "tap %" PRId64 " ms", v);
		}
		break;
	case PH_KIND_LOG:
		if (ph_ev_streq(ev, "level", "E") ||
		    ph_ev_streq(ev, "level", "F")) {
			add(s, PH_M_LOG_ERRORS, 1);
			lane_add(e, PH_LANE_LOG, ev->t, ev->t, 2, "%s: %s",
				 ph_ev_strcpy(ev, "tag", a, sizeof(a)),
				 ph_ev_strcpy(ev, "message", b, sizeof(b)));
		}
		break;
	case PH_KIND_WORK_END:
		if (ph_ev_true(ev, "retrying") ||
		    ph_ev_streq(ev, "state", "ENQUEUED"))
			add(s, PH_M_WORK_RETRIES, 1);
		lane_add(e, PH_LANE_WORK, from, to,
			 ph_ev_streq(ev, "state", "SUCCEEDED") ? 0 : 1, "%s %s",
			 ph_ev_strcpy(ev, "workId", a, sizeof(a)),
			 ph_ev_strcpy(ev, "state", b, sizeof(b)));
		break;
	case PH_KIND_MEMORY:
		if (ph_ev_int(ev, "rssMb", &v) ||
		    ph_ev_int(ev, "totalRamMb", &v))
			set_max(s, PH_M_RSS_PEAK_MB, (double)v);
		break;
	case PH_KIND_NAV:
		lane_add(e, PH_LANE_NAV, ev->t, ev->t, 0, "nav %s",
			 ph_ev_strcpy(ev, "route", a, sizeof(a)));
		break;
	case PH_KIND_MARK: {
		if (PH_GROW(s->marks, s->amarks, s->nmarks + 1, 64))
			break;
		s->marks[s->nmarks++] = (struct ph_mark){
			.t = ev->t,
			.label = ph_keep_field(&e->ctx, ev, "label"),
			.detail = ph_keep_field(&e->ctx, ev, "detail"),
		};
		lane_add(e, PH_LANE_NAV, ev->t, ev->t, 0, "mark %s",
			 ph_ev_strcpy(ev, "label", a, sizeof(a)));
		break;
	}
	case PH_KIND_EXIT: {
		if (PH_GROW(s->exits, s->aexits, s->nexits + 1, 64))
			break;
		s->exits[s->nexits++] = (struct ph_exit_note){
			.t = ev->t,
			.reason = ph_keep_field(&e->ctx, ev, "reason"),
			.description =
				ph_keep_field(&e->ctx, ev, "description"),
		};
		break;
	}
	default: break;
	}
}

/* --- the engine -----------------------------------------------------------
 */

struct ph_engine *ph_engine_new(struct ph_window w, const struct ph_ingest *src)
{
	struct ph_engine *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->w = w;
	e->src = src;
	ph_arena_init(&e->keep, (size_t)256 << 10, (size_t)1 << 30);
	e->ctx.keep = &e->keep;
	e->ctx.w = w;
	e->ctx.profile = src ? &src->profile : &e->no_profile;
	e->ctx.ident = src ? &src->ident : &e->no_ident;
	ph_buf_init(&e->ctx.scratch, (size_t)16 << 20);
	for (size_t i = 0; i < NFAM; i++) {
		e->state[i] = calloc(1, families[i]->state_size);
		if (!e->state[i]) {
			ph_engine_free(e);
			return NULL;
		}
		/* In table order within each kind, as the families expect. */
		for (int k = 0; k < PH_KIND_COUNT; k++)
			if (!families[i]->kinds ||
			    (families[i]->kinds & ((uint64_t)1 << k)))
				e->by[k][e->nby[k]++] = (uint8_t)i;
	}
	return e;
}

void ph_engine_free(struct ph_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < NFAM; i++) {
		if (e->state[i] && families[i]->release)
			families[i]->release(e->state[i]);
		free(e->state[i]);
	}
	ph_smap_release(&e->sum.open_http);
	ph_seq_runs_release(&e->runs);
	free(e->sum.lanes);
	free(e->sum.marks);
	free(e->sum.launches);
	free(e->sum.exits);
	ph_buf_release(&e->ctx.scratch);
	ph_arena_release(&e->keep);
	free(e);
}

int ph_engine_feed(struct ph_engine *e, const struct ph_event *ev)
{
	int64_t from, to;
	unsigned k = (unsigned)ev->kind < PH_KIND_COUNT ? ev->kind : 0;

	ph_ev_span(ev, &from, &to);
	/* http_start/db_start carry no length: an open span overlaps all. */
	if (to < e->w.from || from > e->w.to)
		return 0;
	e->ctx.from = from;
	e->ctx.to = to;
	e->sum.counts[k]++;
	ph_seq_runs_add(&e->runs, ev->stream, ev->seq, ev->t);
	if (!e->sum.first_t || ev->t < e->sum.first_t)
		e->sum.first_t = ev->t;
	if (ev->t > e->sum.last_t)
		e->sum.last_t = ev->t;
	summarize(e, ev);
	for (unsigned i = 0; i < e->nby[k]; i++) {
		unsigned f = e->by[k][i];

		families[f]->event(&e->ctx, e->state[f], ev);
	}
	return 0;
}

int ph_engine_feed_cb(void *engine, const struct ph_event *ev)
{
	return ph_engine_feed(engine, ev);
}

static int rank(const void *pa, const void *pb)
{
	const struct ph_finding *a = pa, *b = pb;

	if (a->severity != b->severity)
		return a->severity - b->severity;
	if (a->spanning != b->spanning)
		return a->spanning ? -1 : 1;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return strcmp(a->id, b->id);
}

static void *copy_array(struct ph_arena *ar, const void *p, size_t n,
			size_t size)
{
	void *q;

	if (!n)
		return NULL;
	q = ph_arena_alloc(ar, n * size);
	if (q)
		memcpy(q, p, n * size);
	return q;
}

static const char *keep_dup(struct ph_analysis *a, const char *s)
{
	return s ? ph_arena_strndup(&a->arena, s, strlen(s)) : NULL;
}

/*
 * One note for the lines the source skipped (repaired false) or read only
 * after replacing bytes that are not UTF-8, naming each kept one by line
 * and byte offset, so a reader can open the file there.
 */
static void note_lines(struct ph_analysis *a, bool repaired, uint64_t n)
{
	char list[600];
	size_t len = 0, named = 0;

	if (!n)
		return;
	list[0] = '\0';
	for (unsigned i = 0; i < a->nissues; i++) {
		const struct ph_ingest_issue *is = &a->issues[i];
		int w;

		if (is->repaired != repaired)
			continue;
		w = snprintf(list + len, sizeof(list) - len,
			     "%sline %" PRIu64 " at byte %" PRIu64 "%s%s%s",
			     named ? "; " : ": ", is->line, is->offset,
			     repaired ? "" : " (", repaired ? "" : is->why,
			     repaired ? "" : ")");
		if (w < 0 || (size_t)w >= sizeof(list) - len) {
			list[len] = '\0';
			break;
		}
		len += (size_t)w;
		named++;
	}
	if (repaired)
		ph_analysis_note(a,
				 "%" PRIu64 " line%s read with bytes that are "
				 "not UTF-8 replaced by U+FFFD%s%s",
				 n, n == 1 ? "" : "s", list,
				 named < n ? " (and more)" : "");
	else
		ph_analysis_note(a, "%" PRIu64 " malformed line%s skipped%s%s",
				 n, n == 1 ? "" : "s", list,
				 named < n ? " (and more)" : "");
}

struct ph_analysis *ph_engine_analyze(struct ph_engine *e)
{
	struct ph_analysis *a = calloc(1, sizeof(*a));
	struct summary *s = &e->sum;
	size_t i, j;

	if (!a)
		return NULL;
	ph_arena_init(&a->arena, (size_t)64 << 10, (size_t)1 << 30);
	a->window = e->w;
	if (e->src) {
		a->ident = e->src->ident;
		a->profile = e->src->profile;
		a->malformed = e->src->malformed;
		a->dropped = e->src->dropped;
		a->gaps = e->src->gaps;
		a->repaired = e->src->repaired;
		a->nissues = e->src->nissues;
		memcpy(a->issues, e->src->issues, sizeof(a->issues));
	}
	a->first_t = s->first_t;
	a->last_t = s->last_t;
	memcpy(a->counts, s->counts, sizeof(a->counts));
	memcpy(a->metric, s->m, sizeof(a->metric));
	memcpy(a->metric_set, s->set, sizeof(a->metric_set));
	for (i = 0; i < PH_KIND_COUNT; i++)
		a->metric[PH_M_EVENTS] += (double)s->counts[i];
	a->metric_set[PH_M_EVENTS] = true;
	{
		int64_t from = e->w.from != INT64_MIN ? e->w.from : s->first_t;
		int64_t to = e->w.to != INT64_MAX ? e->w.to : s->last_t;

		a->metric[PH_M_DURATION_MS] = to > from ? (double)(to - from) :
							  0;
		a->metric_set[PH_M_DURATION_MS] = true;
	}
	a->metric[PH_M_HTTP_OPEN] = (double)s->http_open;
	a->metric_set[PH_M_HTTP_OPEN] = true;
	a->device_events = s->counts[PH_KIND_DEVICE];
	a->memory_events = s->counts[PH_KIND_MEMORY];
	a->gc_events = s->counts[PH_KIND_GC];
	a->lanes =
		copy_array(&a->arena, s->lanes, s->nlanes, sizeof(*s->lanes));
	a->nlanes = a->lanes ? s->nlanes : 0;
	a->marks =
		copy_array(&a->arena, s->marks, s->nmarks, sizeof(*s->marks));
	a->nmarks = a->marks ? s->nmarks : 0;
	a->launches = copy_array(&a->arena, s->launches, s->nlaunches,
				 sizeof(*s->launches));
	a->nlaunches = a->launches ? s->nlaunches : 0;
	a->exits =
		copy_array(&a->arena, s->exits, s->nexits, sizeof(*s->exits));
	a->nexits = a->exits ? s->nexits : 0;

	/* Their strings live in the engine: the analysis outlives it. */
	for (i = 0; i < a->nlanes; i++)
		a->lanes[i].label = keep_dup(a, a->lanes[i].label);
	for (i = 0; i < a->nmarks; i++) {
		a->marks[i].label = keep_dup(a, a->marks[i].label);
		a->marks[i].detail = keep_dup(a, a->marks[i].detail);
	}
	for (i = 0; i < a->nlaunches; i++)
		a->launches[i].cls = keep_dup(a, a->launches[i].cls);
	for (i = 0; i < a->nexits; i++) {
		a->exits[i].reason = keep_dup(a, a->exits[i].reason);
		a->exits[i].description = keep_dup(a, a->exits[i].description);
	}
	e->ctx.a = a;
	for (i = 0; i < NFAM; i++) {
		size_t before = a->nf;

		families[i]->emit(&e->ctx, e->state[i]);
		/* Quiet: every id the family looked for and did not emit. */
		for (j = 0; families[i]->ids[j] &&
			    a->nlooked < PH_ARRAY_SIZE(a->looked);
		     j++) {
			bool seen = false;

			for (size_t k = before; k < a->nf; k++)
				seen |= !strcmp(a->f[k].id,
						families[i]->ids[j]);
			if (!seen && (!families[i]->judged ||
				      families[i]->judged(e->state[i],
							  families[i]->ids[j])))
				a->looked[a->nlooked++] = families[i]->ids[j];
		}
	}
	e->ctx.a = NULL;
	if (a->nf)
		qsort(a->f, a->nf, sizeof(*a->f), rank);
	if (!a->profile.refresh_hz && s->counts[PH_KIND_FRAME])
		ph_analysis_note(a, "no device profile in this session: frame "
				    "budgets come from the frames themselves");
	note_lines(a, false, a->malformed);
	note_lines(a, true, a->repaired);
	if (a->dropped || a->gaps)
		ph_analysis_note(a,
				 "the runtime dropped %" PRIu64
				 " events (%" PRIu64 " seqs missing)",
				 a->dropped, a->gaps);
	{
		uint64_t n = 0;

		for (i = 0; i < PH_KIND_COUNT; i++)
			n += s->counts[i];
		ph_coverage_from_runs(&a->cov, &e->runs, e->w, s->first_t,
				      s->last_t, n, e->src);
	}
	ph_analysis_cover(a);
	return a;
}

void ph_analysis_cover(struct ph_analysis *a)
{
	ph_coverage_judge(&a->cov);
	a->nquiet = a->nnot_seen = 0;
	for (size_t i = 0; i < a->nlooked; i++) {
		if (a->cov.complete)
			a->quiet[a->nquiet++] = a->looked[i];
		else
			a->not_seen[a->nnot_seen++] = a->looked[i];
	}
}

void ph_analysis_link(struct ph_analysis *a, bool connected, const char *why,
		      int64_t store_first_t)
{
	struct ph_coverage *c = &a->cov;
	struct ph_window w = a->window;

	if (connected) {
		c->link = PH_COV_LINK_CONNECTED;
		/* Connected since before the window, and nothing came: an
		 * idle app, seen to be idle. */
		if (!c->held && store_first_t && w.from != INT64_MIN &&
		    store_first_t <= w.from) {
			c->held = true;
			c->held_from = w.from;
			c->held_to = w.to != INT64_MAX ? w.to : w.from;
		}
	} else if (w.to == INT64_MAX || !c->held || w.to > c->held_to) {
		/* The window reaches past what arrived before the link
		 * went: that stretch was not observed. */
		c->link = PH_COV_LINK_NOT_CONNECTED;
		c->link_since = c->held ? c->held_to : 0;
		snprintf(c->link_why, sizeof(c->link_why), "%s",
			 why ? why : "");
	}
	ph_analysis_cover(a);
}

struct ph_finding *ph_analysis_add(struct ph_analysis *a)
{
	struct ph_finding *f;

	if (PH_GROW(a->f, a->af, a->nf + 1, 64))
		return NULL;
	f = &a->f[a->nf++];
	*f = (struct ph_finding){ .source = "porthole",
				  .title = "",
				  .count = 1,
				  .evidence = "{}",
				  .key = "" };
	return f;
}

const struct ph_finding *ph_analysis_find(const struct ph_analysis *a,
					  const char *id)
{
	for (size_t i = 0; i < a->nf; i++)
		if (!strcmp(a->f[i].id, id))
			return &a->f[i];
	return NULL;
}

bool ph_analysis_quiet(const struct ph_analysis *a, const char *id)
{
	for (size_t i = 0; i < a->nlooked; i++)
		if (!strcmp(a->looked[i], id))
			return true;
	return false;
}

void ph_analysis_rank(struct ph_analysis *a)
{
	if (a->nf)
		qsort(a->f, a->nf, sizeof(*a->f), rank);
}

void ph_analysis_free(struct ph_analysis *a)
{
	if (!a)
		return;
	ph_arena_release(&a->arena);
	free(a->f);
	free(a);
}

void ph_analysis_note(struct ph_analysis *a, const char *fmt, ...)
{
	char buf[800];
	va_list ap;

	if (a->nnotes >= PH_ARRAY_SIZE(a->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	a->notes[a->nnotes] = ph_arena_strndup(&a->arena, buf, strlen(buf));
	if (a->notes[a->nnotes])
		a->nnotes++;
}

static int store_feed(void *ctx, const struct ph_event *ev)
{
	return ph_engine_feed(ctx, ev);
}

/*
 * The live store's standing engine: fed every stored event once, in
 * arrival order, and asked again (emit does not change a family's state,
 * family.h).  It answers any window that every held event overlaps (the
 * whole store: since:"all", a watcher's PH_WINDOW_ALL), which is then the
 * same answer a fresh engine over that window gives, at the cost of the
 * events that arrived since the last question.  It is built again when
 * the store evicted events it was fed (the fresh answer no longer counts
 * them) or the session's profile changed (families read the profile as
 * they are fed: frame budgets).
 */
struct whole {
	struct ph_engine *e;
	uint64_t fed;	  /* the store's version it was fed up to */
	uint64_t evicted; /* s->version - s->nevents when it was built */
	struct ph_profile profile; /* the store's when it was built */
};

static void whole_free(void *p)
{
	struct whole *wh = p;

	ph_engine_free(wh->e);
	free(wh);
}

static bool same_profile(const struct ph_profile *a, const struct ph_profile *b)
{
	return a->have == b->have && a->refresh_hz == b->refresh_hz &&
	       a->cores == b->cores && !strcmp(a->model, b->model) &&
	       !strcmp(a->os, b->os);
}

/* The standing engine, fed up to now; NULL when out of memory. */
static struct ph_engine *whole_locked(struct ph_store *s)
{
	struct whole *wh = s->cache;

	if (wh && (wh->evicted != s->version - s->nevents ||
		   !same_profile(&wh->profile, &s->in.profile))) {
		ph_engine_free(wh->e);
		wh->e = NULL;
	}
	if (!wh) {
		wh = calloc(1, sizeof(*wh));
		if (!wh)
			return NULL;
		s->cache = wh;
		s->cache_free = whole_free;
	}
	if (!wh->e) {
		wh->e = ph_engine_new(PH_WINDOW_ALL, &s->in);
		if (!wh->e)
			return NULL;
		wh->fed = s->version - s->nevents;
		wh->evicted = wh->fed;
		wh->profile = s->in.profile;
	}
	if (!ph_store_each_since_locked(s, wh->fed, store_feed, wh->e)) {
		/* Cannot happen (evictions are checked above); a fresh
		 * engine answers instead. */
		ph_engine_free(wh->e);
		wh->e = NULL;
		return NULL;
	}
	wh->fed = s->version;
	return wh->e;
}

/* The standing engine's answer for w; the caller holds the lock. */
static struct ph_analysis *analyze_whole_locked(struct ph_store *s,
						struct ph_window w)
{
	struct ph_engine *e = whole_locked(s);
	struct ph_analysis *a;

	if (!e)
		return NULL;
	/* Every held event overlaps w: only the quoted window differs. */
	e->w = e->ctx.w = w;
	a = ph_engine_analyze(e);
	e->w = e->ctx.w = PH_WINDOW_ALL;
	return a;
}

struct ph_analysis *ph_analyze_store(struct ph_store *s, struct ph_window w)
{
	struct ph_engine *e = NULL;
	struct ph_analysis *a;

	pthread_mutex_lock(&s->lock);
	a = ph_store_covers_all_locked(s, w) ? analyze_whole_locked(s, w) :
					       NULL;
	if (!a) {
		pthread_mutex_unlock(&s->lock);
		e = ph_engine_new(w, &s->in);
		if (!e)
			return NULL;
		ph_store_each(s, w, 0, store_feed, e);
		pthread_mutex_lock(&s->lock);
		a = ph_engine_analyze(e);
	}
	if (a && s->covered_from != INT64_MIN && w.from < s->covered_from) {
		a->clipped_ms = w.from == INT64_MIN ? 0 :
						      s->covered_from - w.from;
		if (w.from == INT64_MIN)
			ph_analysis_note(a,
					 "the live buffer starts at t=%" PRId64
					 "; older events are only on disk",
					 s->covered_from);
		else
			ph_analysis_note(a,
					 "the live buffer starts at t=%" PRId64
					 "; %" PRId64 " ms of the window "
					 "before it were clipped",
					 s->covered_from, a->clipped_ms);
		/* Evicted with no file read in their place: not held.  (A
		 * window before the first event of a recording that began
		 * at seq 0 is not a loss, so only this counts as clipped.) */
		a->cov.clipped_ms =
			s->covered_from -
			(w.from == INT64_MIN ? s->in.first_t : w.from);
		ph_analysis_cover(a);
	}
	pthread_mutex_unlock(&s->lock);
	ph_engine_free(e);
	return a;
}
