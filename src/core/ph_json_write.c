/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_json_write.c: the streaming writer.  See ph_json.h for its promises.
 */
#include "ph_common.h"
#include "ph_json.h"

#include <locale.h>
#include <math.h>

/* Bytes that cannot be copied into a JSON string as they are. */
static const unsigned char needs_escape[256] = {
	[0x00 ... 0x1f] = 1,
	['"'] = 1,
	['\\'] = 1,
	[0x80 ... 0xff] = 1,
};

/* The UTF-8 length of a valid sequence at p, or 0 (see ph_json.c). */
static int utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	ptrdiff_t left = end - p;

	if (c >= 0xc2 && c <= 0xdf)
		return left >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80;
		unsigned hi = c == 0xed ? 0x9f : 0xbf;

		if (left >= 3 && p[1] >= lo && p[1] <= hi &&
		    (p[2] & 0xc0) == 0x80)
			return 3;
		return 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80;
		unsigned hi = c == 0xf4 ? 0x8f : 0xbf;

		if (left >= 4 && p[1] >= lo && p[1] <= hi &&
		    (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80)
			return 4;
		return 0;
	}
	return 0;
}

/*
 * Whether any of the 8 bytes in v needs escaping.  Exact as a yes or no:
 * with every byte under 0x80, "some byte is zero" after the xor (or under
 * 0x20) shows in the high bits with no false alarm, and any byte at 0x80
 * or over is a yes by itself.
 */
static inline bool word_needs_escape(uint64_t v)
{
	const uint64_t ones = 0x0101010101010101ull, high = ones * 0x80;
	uint64_t quote = v ^ (ones * '"'), slash = v ^ (ones * '\\');

	return ((v - ones * 0x20) | (quote - ones) | (slash - ones) | v) & high;
}

int ph_json_escape(struct ph_buf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t clean = 0;
	int rc;

	/*
	 * Most strings need no escape at all: one copy, quotes around it.
	 * Eight bytes a step while they are plain ASCII (the agent's writer
	 * escapes every string of every event), the rest one at a time.
	 */
	for (uint64_t v; clean + 8 <= n; clean += 8) {
		memcpy(&v, p + clean, sizeof(v));
		if (word_needs_escape(v))
			break;
	}
	while (clean < n && !needs_escape[p[clean]])
		clean++;
	if (clean == n) {
		rc = ph_buf_grow(out, n + 2);
		if (rc)
			return rc;
		out->buf[out->len] = '"';
		memcpy(out->buf + out->len + 1, s, n);
		out->buf[out->len + 1 + n] = '"';
		ph_buf_setlen(out, out->len + n + 2);
		return 0;
	}

	/* Worst case grows 6x (\u00XX); reserve the common case up front. */
	rc = ph_buf_grow(out, n + 2);
	if (rc)
		return rc;
	rc = ph_buf_addch(out, '"');
	while (!rc && p < end) {
		const unsigned char *run = p;

		while (p < end && !needs_escape[*p])
			p++;
		if (p > run)
			rc = ph_buf_add(out, run, (size_t)(p - run));
		if (rc || p >= end)
			break;
		if (*p >= 0x80) {
			int len = utf8_seq(p, end);

			if (len) {
				rc = ph_buf_add(out, p, (size_t)len);
				p += len;
			} else {
				/* Not UTF-8: say so in the text itself. */
				rc = ph_buf_add(out, "\xef\xbf\xbd", 3);
				p++;
			}
			continue;
		}
		switch (*p) {
		case '"': rc = ph_buf_add(out, "\\\"", 2); break;
		case '\\': rc = ph_buf_add(out, "\\\\", 2); break;
		case '\n': rc = ph_buf_add(out, "\\n", 2); break;
		case '\r': rc = ph_buf_add(out, "\\r", 2); break;
		case '\t': rc = ph_buf_add(out, "\\t", 2); break;
		case '\b': rc = ph_buf_add(out, "\\b", 2); break;
		case '\f': rc = ph_buf_add(out, "\\f", 2); break;
		default: rc = ph_buf_addf(out, "\\u%04x", *p); break;
		}
		p++;
	}
	if (!rc)
		rc = ph_buf_addch(out, '"');
	return rc;
}

size_t ph_json_format_double(double v, char *buf, size_t size)
{
	locale_t old = uselocale(ph_json_c_locale());
	int n = 0;

	/* The shortest of %.15g..%.17g that reads back to the same double. */
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(buf, size, "%.*g", prec, v);
		if (n < 0 || (size_t)n >= size)
			break;
		if (strtod(buf, NULL) == v)
			break;
	}
	uselocale(old);
	if (n < 0 || (size_t)n >= size) {
		snprintf(buf, size, "0");
		return 1;
	}
	/* Keep it a double on the way back in: "3" -> "3.0". */
	if (!strpbrk(buf, ".eE") && (size_t)n + 2 < size) {
		buf[n++] = '.';
		buf[n++] = '0';
		buf[n] = '\0';
	}
	return (size_t)n;
}

void ph_jw_init(struct ph_jw *w, struct ph_buf *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

void ph_jw_init_in_object(struct ph_jw *w, struct ph_buf *out, bool has_members)
{
	ph_jw_init(w, out);
	w->depth = 1;
	w->has_items[0] = has_members;
}

static inline bool bit(const struct ph_jw *w, uint32_t d)
{
	return w->has_items[d / 64] >> (d % 64) & 1;
}

static inline void set_bit(struct ph_jw *w, uint32_t d, bool on)
{
	if (on)
		w->has_items[d / 64] |= (uint64_t)1 << (d % 64);
	else
		w->has_items[d / 64] &= ~((uint64_t)1 << (d % 64));
}

/* Writes the comma a new item at this depth needs; false once failed. */
static bool before_value(struct ph_jw *w)
{
	if (w->err)
		return false;
	if (w->after_key) {
		w->after_key = false;
		return true;
	}
	if (w->depth && bit(w, w->depth - 1)) {
		int rc = ph_buf_addch(w->out, ',');

		if (rc) {
			w->err = rc;
			return false;
		}
	}
	if (w->depth)
		set_bit(w, w->depth - 1, true);
	return true;
}

static void put(struct ph_jw *w, const char *s, size_t n)
{
	int rc = ph_buf_add(w->out, s, n);

	if (rc && !w->err)
		w->err = rc;
}

static void open_container(struct ph_jw *w, char c)
{
	if (!before_value(w))
		return;
	if (w->depth >= PH_JSON_MAX_DEPTH) {
		w->err = PH_EINVAL;
		return;
	}
	put(w, &c, 1);
	set_bit(w, w->depth, false);
	w->depth++;
}

static void close_container(struct ph_jw *w, char c)
{
	if (w->err)
		return;
	if (!w->depth || w->after_key) {
		w->err = PH_EINVAL;
		return;
	}
	w->depth--;
	put(w, &c, 1);
}

void ph_jw_obj_begin(struct ph_jw *w)
{
	open_container(w, '{');
}

void ph_jw_obj_end(struct ph_jw *w)
{
	close_container(w, '}');
}

void ph_jw_arr_begin(struct ph_jw *w)
{
	open_container(w, '[');
}

void ph_jw_arr_end(struct ph_jw *w)
{
	close_container(w, ']');
}

void ph_jw_keyn(struct ph_jw *w, const char *key, size_t n)
{
	int rc;

	if (w->after_key && !w->err)
		w->err = PH_EINVAL; /* two keys in a row */
	if (!before_value(w))
		return;
	rc = ph_json_escape(w->out, key, n);
	if (!rc)
		rc = ph_buf_addch(w->out, ':');
	if (rc)
		w->err = rc;
	w->after_key = true;
}

void ph_jw_key_json(struct ph_jw *w, const char *json, size_t n)
{
	if (w->after_key && !w->err)
		w->err = PH_EINVAL; /* two keys in a row */
	if (!before_value(w))
		return;
	put(w, json, n);
	w->after_key = true;
}

void ph_jw_key(struct ph_jw *w, const char *key)
{
	ph_jw_keyn(w, key, strlen(key));
}

void ph_jw_strn(struct ph_jw *w, const char *s, size_t n)
{
	int rc;

	if (!before_value(w))
		return;
	rc = ph_json_escape(w->out, s, n);
	if (rc)
		w->err = rc;
}

void ph_jw_str(struct ph_jw *w, const char *s)
{
	if (!s)
		ph_jw_null(w);
	else
		ph_jw_strn(w, s, strlen(s));
}

/* Decimal digits of v, written backwards from the end of tmp. */
/* "00" .. "99". */
static const char digits2[201] = "0001020304050607080910111213141516171819"
				 "2021222324252627282930313233343536373839"
				 "4041424344454647484950515253545556575859"
				 "6061626364656667686970717273747576777879"
				 "8081828384858687888990919293949596979899";

char *ph_json_format_u64(uint64_t v, char *end)
{
	while (v >= 100) {
		end -= 2;
		memcpy(end, digits2 + (v % 100) * 2, 2);
		v /= 100;
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, digits2 + v * 2, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

char *ph_json_format_i64(int64_t v, char *end)
{
	char *p =
		ph_json_format_u64(v < 0 ? 0 - (uint64_t)v : (uint64_t)v, end);

	if (v < 0)
		*--p = '-';
	return p;
}

void ph_jw_int(struct ph_jw *w, int64_t v)
{
	char tmp[24], *e = tmp + sizeof(tmp), *p;

	if (!before_value(w))
		return;
	p = ph_json_format_i64(v, e);
	put(w, p, (size_t)(e - p));
}

void ph_jw_double(struct ph_jw *w, double v)
{
	char tmp[40];
	size_t n;

	if (!isfinite(v)) {
		ph_jw_null(w);
		return;
	}
	if (!before_value(w))
		return;
	n = ph_json_format_double(v, tmp, sizeof(tmp));
	put(w, tmp, n);
}

void ph_jw_bool(struct ph_jw *w, bool v)
{
	if (before_value(w))
		put(w, v ? "true" : "false", v ? 4 : 5);
}

void ph_jw_null(struct ph_jw *w)
{
	if (before_value(w))
		put(w, "null", 4);
}

void ph_jw_raw(struct ph_jw *w, const char *json, size_t n)
{
	if (before_value(w))
		put(w, json, n);
}

void ph_jw_value(struct ph_jw *w, const struct ph_json *v)
{
	if (!v) {
		ph_jw_null(w); /* an absent member, as the lookups say it */
		return;
	}
	switch (v->type) {
	case PH_JSON_NULL: ph_jw_null(w); break;
	case PH_JSON_TRUE: ph_jw_bool(w, true); break;
	case PH_JSON_FALSE: ph_jw_bool(w, false); break;
	case PH_JSON_INT: ph_jw_int(w, v->u.i); break;
	case PH_JSON_DOUBLE: ph_jw_double(w, v->u.d); break;
	case PH_JSON_STRING: ph_jw_strn(w, v->u.s, v->n); break;
	case PH_JSON_ARRAY:
		ph_jw_arr_begin(w);
		for (uint32_t i = 0; i < v->n; i++)
			ph_jw_value(w, &v->u.items[i]);
		ph_jw_arr_end(w);
		break;
	case PH_JSON_OBJECT:
		ph_jw_obj_begin(w);
		for (uint32_t i = 0; i < v->n; i++) {
			const struct ph_json_member *m = &v->u.members[i];

			ph_jw_keyn(w, m->key.u.s, m->key.n);
			ph_jw_value(w, &m->value);
		}
		ph_jw_obj_end(w);
		break;
	}
}

int ph_jw_finish(struct ph_jw *w)
{
	if (w->err)
		return w->err;
	return w->depth || w->after_key ? PH_EINVAL : 0;
}
