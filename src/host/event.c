/* SPDX-License-Identifier: Apache-2.0 */
/* event.c: lenient accessors over an event's data (see event.h). */
#include "ph_common.h"
#include "event.h"

#include <math.h>

const struct ph_json *ph_ev_getn(const struct ph_event *ev, const char *key,
				 size_t n)
{
	const struct ph_json *obj = ev->data, *v = NULL;

	if (!ph_json_is(obj, PH_JSON_OBJECT))
		return NULL;
	for (uint32_t i = obj->n; i-- > 0;) {
		const struct ph_json_member *m = &obj->u.members[i];

		if (m->key.n == n && (!n || (m->key.u.s[0] == key[0] &&
					     !memcmp(m->key.u.s, key, n)))) {
			v = &m->value;
			break;
		}
	}
	return ph_json_is(v, PH_JSON_NULL) ? NULL : v;
}

bool ph_ev_intn(const struct ph_event *ev, const char *key, size_t n,
		int64_t *out)
{
	const struct ph_json *v = ph_ev_getn(ev, key, n);
	double d;

	if (!v)
		return false;
	if (v->type == PH_JSON_INT) {
		*out = ph_ev_clamp(v->u.i);
		return true;
	}
	if (ph_json_as_int(v, out)) {
		*out = ph_ev_clamp(*out);
		return true;
	}
	/* "12.0" or 12.7 from a float field: take the whole part. */
	if (ph_json_as_double(v, &d) && d > -9e15 && d < 9e15) {
		*out = ph_ev_clamp((int64_t)d);
		return true;
	}
	return false;
}

bool ph_ev_numn(const struct ph_event *ev, const char *key, size_t n,
		double *out)
{
	return ph_json_as_double(ph_ev_getn(ev, key, n), out);
}

bool ph_ev_truen(const struct ph_event *ev, const char *key, size_t n)
{
	const struct ph_json *v = ph_ev_getn(ev, key, n);

	return ph_json_is(v, PH_JSON_TRUE) || ph_json_streq(v, "true");
}

bool ph_ev_strn(const struct ph_event *ev, const char *key, size_t n,
		const char **s, size_t *len)
{
	const struct ph_json *v = ph_ev_getn(ev, key, n);

	if (!ph_json_is(v, PH_JSON_STRING))
		return false;
	*s = v->u.s;
	*len = v->n;
	return true;
}

bool ph_ev_streqn(const struct ph_event *ev, const char *key, size_t n,
		  const char *val)
{
	return ph_json_streq(ph_ev_getn(ev, key, n), val);
}

const char *ph_ev_strcpy(const struct ph_event *ev, const char *key, char *buf,
			 size_t size)
{
	const char *s;
	size_t n;

	buf[0] = '\0';
	if (!size || !ph_ev_str(ev, key, &s, &n))
		return buf;
	if (n >= size)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

int64_t ph_ev_io_issue_ns(const struct ph_event *ev)
{
	double issue;

	if (ph_ev_num(ev, "issueMs", &issue) && issue >= (double)ev->t &&
	    issue < (double)ev->t + 1)
		return llround(issue * 1e6);
	return ev->t > 0 && ev->t < ((int64_t)1 << 40) ? ev->t * 1000000 : 0;
}

/*
 * The longest span believed: 2^40 ms is 35 years.  With t within
 * +-PH_EV_T_MAX (ingest.c clamps it) no sum or difference of times
 * overflows, whatever a hostile file says.
 */
#define SPAN_MAX ((int64_t)1 << 40)

static bool duration(const struct ph_event *ev, const char *key, int64_t *d)
{
	if (!ph_ev_int(ev, key, d) || *d <= 0)
		return false;
	if (*d > SPAN_MAX)
		*d = SPAN_MAX;
	return true;
}

void ph_ev_span(const struct ph_event *ev, int64_t *from, int64_t *to)
{
	int64_t d = 0;

	*from = *to = ev->t;
	switch (ev->kind) {
	case PH_KIND_BLOCKED:
		if (duration(ev, "durationMs", &d))
			*to = ev->t + d;
		break;
	case PH_KIND_FRAME:
		if (duration(ev, "totalMs", &d))
			*to = ev->t + d;
		break;
	case PH_KIND_HTTP_END:
	case PH_KIND_DB_END:
	case PH_KIND_WORK_END:
		if (duration(ev, "elapsedMs", &d))
			*from = ev->t - d;
		break;
	case PH_KIND_IO: {
		/* issue to completion, in whole ms: a window overlaps it
		 * exactly when the io view counts the request (io.h) */
		double lat;
		int64_t done;

		if (!ph_ev_num(ev, "latencyMs", &lat) || !(lat > 0) ||
		    lat > 1e9 || ev->t < 0 || ev->t > ((int64_t)1 << 40))
			break;
		/* in ns, as the view computes it: 0.7 + 0.3 ms is 1 ms */
		done = ph_ev_io_issue_ns(ev) + llround(lat * 1e6);
		*to = done / 1000000;
		break;
	}
	case PH_KIND_IO_RECORDING:
		/* the window the attached recording covered */
		if (duration(ev, "durationMs", &d))
			*to = ev->t + d;
		break;
	default: break;
	}
}

bool ph_ev_on_main(const struct ph_event *ev)
{
	return ph_ev_true(ev, "onMainThread") || ph_ev_true(ev, "mainThread") ||
	       ph_ev_streq(ev, "thread", "main");
}
