/* SPDX-License-Identifier: Apache-2.0 */
/* compare.c: per-metric diff with noise floors (see compare.h). */
#include "ph_common.h"
#include "compare.h"
#include "ph_error.h"

#include <math.h>

/*
 * The floors.  rel is a share of the base value, abs a minimum step; a
 * change must pass both.  info metrics are shown, never judged.
 * docs/cli.md lists this table and how the absolute floors of the timing
 * metrics were measured (at least 1.5x the run-to-run spread of identical
 * checkout runs on a loaded 2-core machine); keep them in step.
 */
static const struct floor {
	const char *name;
	double rel, abs;
	bool info;
	bool optional; /* absent: not recorded (not zero), so not judged */
} floors[] = {
	{ "durationMs", 0, 0, true },
	{ "events", 0, 0, true },
	{ "frames.janky", 0.5, 6, false },
	{ "frames.missedRefreshes", 0.5, 10, false },
	{ "frames.worstMs", 0.5, 50, false },
	{ "main.stalls", 0.5, 1, false },
	{ "main.stallMs", 0.5, 450, false },
	{ "main.worstStallMs", 0.5, 450, false },
	{ "db.queries", 0.2, 2, false },
	{ "db.mainThread", 0.2, 1, false },
	{ "db.errors", 0.2, 1, false },
	{ "db.worstMs", 0.5, 90, false },
	{ "http.calls", 0.2, 2, false },
	{ "http.failed", 0.2, 1, false },
	{ "http.slow", 0.2, 1, false },
	{ "http.worstMs", 0.3, 500, false },
	{ "http.open", 0, 1, false },
	{ "recompositions", 0.25, 50, false },
	{ "startup.coldMs", 0.2, 1000, false },
	{ "taps.worstMs", 0.5, 70, false },
	{ "logs.errors", 0.2, 2, false },
	{ "work.retries", 0, 1, false },
	{ "memory.peakRssMb", 0.2, 20, false },
	/* only when block I/O was recorded beside the run (docs/iotrace.md) */
	{ "io.appRequests", 0.2, 10, false, true },
	{ "io.mainThreadRequests", 0.2, 1, false, true },
	{ "io.appWorstMs", 0.5, 20, false, true },
	{ "io.appIoMoments", 0.5, 1, false, true },
};

enum verdict { SAME, NOISE, WORSE, BETTER, INFO, UNRECORDED, PARTIAL };

static const char *verdict_name(enum verdict v)
{
	static const char *const n[] = {
		"same", "within noise", "REGRESSION",	 "improved",
		"",	"not in both",	"not seen whole"
	};

	return n[v];
}

static enum verdict judge(const struct floor *f, double a, double b, bool has_a,
			  bool has_b)
{
	double d = b - a;

	if (f->info)
		return INFO;
	if (!has_a && !has_b)
		return SAME;
	if (f->optional && (!has_a || !has_b))
		return UNRECORDED;
	if (d == 0)
		return SAME;
	/* Zero to non-zero is always news, whatever the floors say. */
	if (a == 0 && b > 0)
		return WORSE;
	if (b == 0 && a > 0)
		return BETTER;
	if (fabs(d) < f->abs || fabs(d) < f->rel * fabs(a))
		return NOISE;
	return d > 0 ? WORSE : BETTER;
}

static const struct ph_json *get2(const struct ph_json *o, const char *a,
				  const char *b)
{
	return ph_json_get(ph_json_get(o, a), b);
}

static bool same_str(const struct ph_json *a, const struct ph_json *b)
{
	if (!a || !b)
		return a == b;
	return ph_json_equal(a, b);
}

/*
 * Why a capture observed nothing (its host never reached the app, or it
 * holds no event), or NULL.  Its zeros are not measurements: comparing
 * them would report improvements, or a clean run, that nobody saw.
 */
static const char *observed_nothing(const struct ph_json *cap)
{
	int64_t n;

	if (ph_json_is(ph_json_get(cap, "connected"), PH_JSON_FALSE))
		return "it never connected to the app";
	if ((ph_json_as_int(get2(cap, "source", "events"), &n) ||
	     ph_json_as_int(get2(cap, "metrics", "events"), &n)) &&
	    n == 0)
		return "it holds no event";
	return NULL;
}

static int refuse(const struct ph_json *base, const struct ph_json *cur,
		  struct ph_compare_result *r)
{
	const struct ph_json *a, *b;
	double x = 0, y = 0;
	const char *why;

	if ((why = observed_nothing(base)) || (why = observed_nothing(cur))) {
		snprintf(r->refusal, sizeof(r->refusal),
			 "not comparable: the %s capture observed nothing (%s)",
			 observed_nothing(base) ? "base" : "new", why);
		return PH_EINVAL;
	}

	a = ph_json_get(base, "scenario");
	b = ph_json_get(cur, "scenario");
	if (!same_str(a, b)) {
		snprintf(r->refusal, sizeof(r->refusal),
			 "not comparable: scenario '%.*s' vs '%.*s'",
			 (int)(a ? a->n : 0), a ? a->u.s : "",
			 (int)(b ? b->n : 0), b ? b->u.s : "");
		return PH_EINVAL;
	}
	ph_json_as_double(get2(base, "device", "refreshHz"), &x);
	ph_json_as_double(get2(cur, "device", "refreshHz"), &y);
	if (x != y) {
		snprintf(r->refusal, sizeof(r->refusal),
			 "not comparable: refresh rate %g Hz vs %g Hz", x, y);
		return PH_EINVAL;
	}
	x = y = 0;
	ph_json_as_double(get2(base, "device", "cores"), &x);
	ph_json_as_double(get2(cur, "device", "cores"), &y);
	if (x != y) {
		snprintf(r->refusal, sizeof(r->refusal),
			 "not comparable: %g cores vs %g cores", x, y);
		return PH_EINVAL;
	}
	a = ph_json_get(base, "driver");
	b = ph_json_get(cur, "driver");
	if (!same_str(a, b))
		snprintf(r->warning, sizeof(r->warning),
			 "drivers differ ('%.*s' vs '%.*s'): timing may not "
			 "be comparable",
			 (int)(a ? a->n : 0), a ? a->u.s : "",
			 (int)(b ? b->n : 0), b ? b->u.s : "");
	/* A capture that saw part of its window: its counts are a floor,
	 * and a check it did not see cannot have improved. */
	for (int k = 0; k < 2 && !r->warning[0]; k++) {
		const struct ph_json *c = k ? cur : base;
		const struct ph_json *reason = get2(c, "coverage", "reason");
		int n = reason && reason->type == PH_JSON_STRING ?
				(int)reason->n :
				0;

		if (ph_json_is(get2(c, "coverage", "complete"), PH_JSON_FALSE))
			snprintf(r->warning, sizeof(r->warning),
				 "the %s capture did not observe its whole "
				 "window (%.*s): its counts are a floor",
				 k ? "new" : "base", n > 160 ? 160 : n,
				 n ? reason->u.s : "");
	}
	return 0;
}

/*
 * What identifies a finding across two captures: its key, or (a finding
 * without one, in a file porthole did not write) its id and title.
 */
static bool same_finding(const struct ph_json *x, const struct ph_json *y)
{
	const struct ph_json *kx = ph_json_get(x, "key");
	const struct ph_json *ky = ph_json_get(y, "key");

	if (kx || ky)
		return kx && ky && ph_json_equal(kx, ky);
	return same_str(ph_json_get(x, "id"), ph_json_get(y, "id")) &&
	       same_str(ph_json_get(x, "title"), ph_json_get(y, "title"));
}

/* Findings in cur but not in base, errors and warnings only. */
static bool new_finding(const struct ph_json *base, const struct ph_json *f)
{
	const struct ph_json *bf = ph_json_get(base, "findings");

	if (ph_json_streq(ph_json_get(f, "severity"), "note"))
		return false;
	for (size_t i = 0; ph_json_is(bf, PH_JSON_ARRAY) && i < bf->n; i++)
		if (same_finding(&bf->u.items[i], f))
			return false;
	return true;
}

/* A member's text for a message, or "?" when it is not a string. */
static void text_of(const struct ph_json *f, const char *name, const char **s,
		    int *n)
{
	const struct ph_json *v = ph_json_get(f, name);

	*s = ph_json_is(v, PH_JSON_STRING) ? v->u.s : "?";
	*n = ph_json_is(v, PH_JSON_STRING) ? (int)v->n : 1;
}

/* The capture did not observe its whole window (coverage.complete). */
static bool partial(const struct ph_json *cap)
{
	return ph_json_is(get2(cap, "coverage", "complete"), PH_JSON_FALSE);
}

struct row {
	const struct floor *f;
	double a, b;
	bool has_a, has_b;
	enum verdict v;
};

/* One side's value as text, or "-" when that capture did not record it. */
static const char *side(const struct row *x, bool base, char buf[24])
{
	if (!(base ? x->has_a : x->has_b))
		return "-";
	snprintf(buf, 24, "%g", base ? x->a : x->b);
	return buf;
}

static void rows(const struct ph_json *base, const struct ph_json *cur,
		 struct row *out, struct ph_compare_result *r)
{
	for (size_t i = 0; i < PH_ARRAY_SIZE(floors); i++) {
		struct row *x = &out[i];

		x->f = &floors[i];
		x->a = x->b = 0;
		x->has_a = ph_json_as_double(
			get2(base, "metrics", floors[i].name), &x->a);
		x->has_b = ph_json_as_double(
			get2(cur, "metrics", floors[i].name), &x->b);
		x->v = judge(x->f, x->a, x->b, x->has_a, x->has_b);
		/* A partial capture's counts are a floor: fewer in a partial
		 * new one is not better, more than a partial base's is not
		 * worse (docs/findings.md, "Coverage"). */
		if ((x->v == BETTER && partial(cur)) ||
		    (x->v == WORSE && partial(base)))
			x->v = PARTIAL;
		r->regressions += x->v == WORSE;
		r->improvements += x->v == BETTER;
	}
}

int ph_compare(const struct ph_json *base, const struct ph_json *cur,
	       struct ph_buf *out, struct ph_compare_result *r)
{
	struct row t[PH_ARRAY_SIZE(floors)];
	const struct ph_json *cf = ph_json_get(cur, "findings");
	int rc;

	memset(r, 0, sizeof(*r));
	if (refuse(base, cur, r))
		return PH_EINVAL;
	rows(base, cur, t, r);
	rc = ph_buf_addf(out, "%-24s %10s %10s  %-18s %s\n", "metric", "base",
			 "new", "change", "verdict");
	for (size_t i = 0; !rc && i < PH_ARRAY_SIZE(floors); i++) {
		char ch[48];
		double d = t[i].b - t[i].a;

		if (!t[i].has_a && !t[i].has_b)
			continue;
		if (t[i].v == UNRECORDED) {
			char sa[24], sb[24];

			rc = ph_buf_addf(out, "%-24s %10s %10s  %-18s %s\n",
					 t[i].f->name, side(&t[i], true, sa),
					 side(&t[i], false, sb), "",
					 verdict_name(t[i].v));
			continue;
		}
		if (t[i].a != 0)
			snprintf(ch, sizeof(ch), "%+g (%+.0f%%)", d,
				 100.0 * d / fabs(t[i].a));
		else
			snprintf(ch, sizeof(ch), "%+g", d);
		rc = ph_buf_addf(out, "%-24s %10g %10g  %-18s %s\n",
				 t[i].f->name, t[i].a, t[i].b, ch,
				 verdict_name(t[i].v));
	}
	for (size_t i = 0; !rc && ph_json_is(cf, PH_JSON_ARRAY) && i < cf->n;
	     i++) {
		const struct ph_json *f = &cf->u.items[i];
		const char *id, *title;
		int nid, ntitle;

		if (!new_finding(base, f))
			continue;
		r->regressions++;
		text_of(f, "id", &id, &nid);
		text_of(f, "title", &title, &ntitle);
		rc = ph_buf_addf(out, "new finding: %.*s: %.*s\n", nid, id,
				 ntitle, title);
	}
	return rc ? rc :
		    ph_buf_addf(out, "%d regression%s, %d improvement%s\n",
				r->regressions, r->regressions == 1 ? "" : "s",
				r->improvements,
				r->improvements == 1 ? "" : "s");
}

int ph_compare_json(const struct ph_json *base, const struct ph_json *cur,
		    struct ph_buf *out, struct ph_compare_result *r)
{
	struct row t[PH_ARRAY_SIZE(floors)];
	const struct ph_json *cf = ph_json_get(cur, "findings");
	const struct ph_json *key;
	struct ph_jw jw;

	memset(r, 0, sizeof(*r));
	if (refuse(base, cur, r))
		return PH_EINVAL;
	rows(base, cur, t, r);
	ph_jw_init(&jw, out);
	ph_jw_obj_begin(&jw);
	ph_jw_key(&jw, "metrics");
	ph_jw_arr_begin(&jw);
	for (size_t i = 0; i < PH_ARRAY_SIZE(floors); i++) {
		if (!t[i].has_a && !t[i].has_b)
			continue;
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "name", t[i].f->name);
		ph_jw_key(&jw, "base");
		if (t[i].has_a || !t[i].f->optional)
			ph_jw_double(&jw, t[i].a);
		else
			ph_jw_null(&jw);
		ph_jw_key(&jw, "new");
		if (t[i].has_b || !t[i].f->optional)
			ph_jw_double(&jw, t[i].b);
		else
			ph_jw_null(&jw);
		ph_jw_kv_double(&jw, "relFloor", t[i].f->rel);
		ph_jw_kv_double(&jw, "absFloor", t[i].f->abs);
		ph_jw_kv_str(&jw, "verdict",
			     t[i].v == WORSE	  ? "regression" :
			     t[i].v == BETTER	  ? "improved" :
			     t[i].v == NOISE	  ? "noise" :
			     t[i].v == INFO	  ? "info" :
			     t[i].v == UNRECORDED ? "not in both" :
			     t[i].v == PARTIAL	  ? "not seen whole" :
						    "same");
		ph_jw_obj_end(&jw);
	}
	ph_jw_arr_end(&jw);
	ph_jw_key(&jw, "newFindings");
	ph_jw_arr_begin(&jw);
	for (size_t i = 0; ph_json_is(cf, PH_JSON_ARRAY) && i < cf->n; i++) {
		if (!new_finding(base, &cf->u.items[i]))
			continue;
		r->regressions++;
		/* its key; without one, its id (or null) */
		key = ph_json_get(&cf->u.items[i], "key");
		if (!key)
			key = ph_json_get(&cf->u.items[i], "id");
		if (key)
			ph_jw_value(&jw, key);
		else
			ph_jw_null(&jw);
	}
	ph_jw_arr_end(&jw);
	ph_jw_kv_int(&jw, "regressions", r->regressions);
	ph_jw_kv_int(&jw, "improvements", r->improvements);
	if (r->warning[0])
		ph_jw_kv_str(&jw, "warning", r->warning);
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw))
		return PH_ENOMEM;
	return ph_buf_addch(out, '\n');
}
