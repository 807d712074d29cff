/* event.c: lenient accessors over an event's data (see event.h). */
#include "ph_common.h"
#include "event.h"

const struct ph_json *ph_ev_get(const struct ph_event *ev, const char *key)
{
	const struct ph_json *v = ph_json_get(ev->data, key);

	return ph_json_is(v, PH_JSON_NULL) ? NULL : v;
}

bool ph_ev_int(const struct ph_event *ev, const char *key, int64_t *out)
{
	const struct ph_json *v = ph_ev_get(ev, key);
	double d;

	if (ph_json_as_int(v, out))
		return true;
	/* "12.0" or 12.7 from a float field: take the whole part. */
	if (ph_json_as_double(v, &d) && d > -9e15 && d < 9e15) {
		*out = (int64_t)d;
		return true;
	}
	return false;
}

bool ph_ev_num(const struct ph_event *ev, const char *key, double *out)
{
	return ph_json_as_double(ph_ev_get(ev, key), out);
}

bool ph_ev_true(const struct ph_event *ev, const char *key)
{
	const struct ph_json *v = ph_ev_get(ev, key);

	return ph_json_is(v, PH_JSON_TRUE) || ph_json_streq(v, "true");
}

bool ph_ev_str(const struct ph_event *ev, const char *key, const char **s,
	       size_t *n)
{
	const struct ph_json *v = ph_ev_get(ev, key);

	if (!ph_json_is(v, PH_JSON_STRING))
		return false;
	*s = v->u.s;
	*n = v->n;
	return true;
}

bool ph_ev_streq(const struct ph_event *ev, const char *key, const char *val)
{
	return ph_json_streq(ph_ev_get(ev, key), val);
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

void ph_ev_span(const struct ph_event *ev, int64_t *from, int64_t *to)
{
	int64_t d = 0;

	*from = *to = ev->t;
	switch (ev->kind) {
	case PH_KIND_BLOCKED:
		if (ph_ev_int(ev, "durationMs", &d) && d > 0)
			*to = ev->t + d;
		break;
	case PH_KIND_FRAME:
		if (ph_ev_int(ev, "totalMs", &d) && d > 0)
			*to = ev->t + d;
		break;
	case PH_KIND_HTTP_END:
	case PH_KIND_DB_END:
	case PH_KIND_WORK_END:
		if (ph_ev_int(ev, "elapsedMs", &d) && d > 0)
			*from = ev->t - d;
		break;
	default: break;
	}
}

bool ph_ev_on_main(const struct ph_event *ev)
{
	return ph_ev_true(ev, "onMainThread") || ph_ev_true(ev, "mainThread") ||
	       ph_ev_streq(ev, "thread", "main");
}
