/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_json.c: the strict reader (RFC 8259), and value helpers.
 *
 * One recursive-descent pass over the input.  Children of an open array or
 * object are pushed on the reader's stack; when the container closes they
 * are copied to the arena as one contiguous run, so a document costs a few
 * bump allocations and no malloc once the reader is warm.
 *
 * Strings are scanned a byte class at a time (plain, or one of quote,
 * backslash, control, non-ASCII); only strings with escapes are copied.
 * Non-ASCII bytes are validated as UTF-8 (no overlongs, no surrogates, no
 * code point past U+10FFFF), and \u escapes must pair surrogates.
 */
#include "ph_common.h"
#include "ph_json.h"

#include <locale.h>
#include <pthread.h>
#include <math.h>

struct parse {
	struct ph_json_reader *r;
	struct ph_arena *arena;
	const unsigned char *start;
	const unsigned char *p;
	const unsigned char *end;
	struct ph_err *err;
	int rc;
};

/* Byte classes inside a string. */
enum { C_PLAIN = 0, C_QUOTE, C_BSLASH, C_CTRL, C_HIGH };

static const unsigned char str_class[256] = {
	[0x00 ... 0x1f] = C_CTRL,
	['"'] = C_QUOTE,
	['\\'] = C_BSLASH,
	[0x80 ... 0xff] = C_HIGH,
};

static int fail(struct parse *ps, const unsigned char *at, int code,
		const char *why)
{
	struct ph_err *err = ps->err;
	uint32_t line = 1, col = 1;

	if (at > ps->end)
		at = ps->end;
	/* Lines are counted only when reporting, never while parsing. */
	for (const unsigned char *q = ps->start; q < at; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	ph_corrupt(err, code, (uint64_t)(at - ps->start), __FILE__, __LINE__,
		   "%s", why);
	if (err) {
		err->line = line;
		err->col = col;
	}
	ps->rc = code;
	return code;
}

#define FAIL(ps, at, why) fail((ps), (at), PH_ECORRUPT, (why))

static inline void skip_ws(struct parse *ps)
{
	const unsigned char *p = ps->p, *end = ps->end;

	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	ps->p = p;
}

static int push(struct parse *ps, const struct ph_json *v)
{
	struct ph_json_reader *r = ps->r;

	if (PH_UNLIKELY(r->stack_len == r->stack_alloc) &&
	    PH_GROW(r->stack, r->stack_alloc, r->stack_len + 1, 256))
		return fail(ps, ps->p, PH_ENOMEM, "out of memory");
	r->stack[r->stack_len++] = *v;
	return 0;
}

/* Moves the top `count` stack entries into the arena. */
static struct ph_json *pop_to_arena(struct parse *ps, size_t count)
{
	struct ph_json_reader *r = ps->r;
	struct ph_json *dst;

	if (!count)
		return NULL;
	dst = ph_arena_alloc(ps->arena, count * sizeof(*dst));
	if (!dst) {
		fail(ps, ps->p, PH_ETOOBIG,
		     "document larger than the arena's cap");
		return NULL;
	}
	r->stack_len -= count;
	memcpy(dst, r->stack + r->stack_len, count * sizeof(*dst));
	return dst;
}

static inline int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int read_hex4(struct parse *ps, const unsigned char *p, unsigned *out)
{
	unsigned v = 0;

	if (ps->end - p < 4)
		return FAIL(ps, ps->end, "truncated \\u escape");
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);

		if (h < 0)
			return FAIL(ps, p + i, "bad hex digit in \\u escape");
		v = v << 4 | (unsigned)h;
	}
	*out = v;
	return 0;
}

/*
 * Length of the valid UTF-8 sequence at p (2-4), or 0.  Follows RFC 3629's
 * table: no overlong forms, no surrogates, nothing past U+10FFFF.
 */
static inline int utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	ptrdiff_t left = end - p;

	if (c >= 0xc2 && c <= 0xdf)
		return left >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80;
		unsigned hi = c == 0xed ? 0x9f : 0xbf;

		return left >= 3 && p[1] >= lo && p[1] <= hi &&
				       (p[2] & 0xc0) == 0x80 ?
			       3 :
			       0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80;
		unsigned hi = c == 0xf4 ? 0x8f : 0xbf;

		return left >= 4 && p[1] >= lo && p[1] <= hi &&
				       (p[2] & 0xc0) == 0x80 &&
				       (p[3] & 0xc0) == 0x80 ?
			       4 :
			       0;
	}
	return 0;
}

size_t ph_utf8_repair(const char *s, size_t n, char *out, size_t *out_len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t o = 0, replaced = 0;

	while (p < end) {
		int len = *p < 0x80 ? 1 : utf8_len(p, end);

		if (len) {
			if (out)
				memcpy(out + o, p, (size_t)len);
			o += (size_t)len;
			p += len;
			continue;
		}
		if (out)
			memcpy(out + o, "\xef\xbf\xbd", 3); /* U+FFFD */
		o += 3;
		p++;
		replaced++;
	}
	*out_len = o;
	return replaced;
}

static int put_utf8(struct ph_buf *b, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return ph_buf_add(b, u, n);
}

/*
 * The slow path for a string with escapes: decode from `from` (just after
 * the opening quote) into the scratch buffer, then copy to the arena.
 */
static int read_escaped(struct parse *ps, const unsigned char *from,
			struct ph_json *v)
{
	struct ph_buf *b = &ps->r->scratch;
	const unsigned char *p = from, *end = ps->end;
	char *copy;

	ph_buf_reset(b);
	for (;;) {
		const unsigned char *run = p;
		int cls = C_PLAIN;

		while (p < end && (cls = str_class[*p]) == C_PLAIN)
			p++;
		if (p > run && ph_buf_add(b, run, (size_t)(p - run)))
			return fail(ps, p, PH_ENOMEM, "out of memory");
		if (p >= end)
			return FAIL(ps, end, "unterminated string");
		if (cls == C_QUOTE) {
			p++;
			break;
		}
		if (cls == C_CTRL)
			return FAIL(ps, p, "control character in string");
		if (cls == C_HIGH) {
			int n = utf8_len(p, end);

			if (!n)
				return FAIL(ps, p, "invalid UTF-8 in string");
			if (ph_buf_add(b, p, (size_t)n))
				return fail(ps, p, PH_ENOMEM, "out of memory");
			p += n;
			continue;
		}
		/* backslash */
		if (end - p < 2)
			return FAIL(ps, end, "unterminated string");
		{
			static const char simple[] = "\"\\/bfnrt";
			static const char decoded[] = "\"\\/\b\f\n\r\t";
			const char *q = memchr(simple, p[1], 8);
			unsigned cp, lo;
			int rc = 0;

			if (q && p[1]) {
				rc = ph_buf_addch(b, decoded[q - simple]);
				p += 2;
			} else if (p[1] == 'u') {
				if (read_hex4(ps, p + 2, &cp))
					return ps->rc;
				if (cp >= 0xdc00 && cp <= 0xdfff)
					return FAIL(ps, p,
						    "lone low surrogate");
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (end - p < 12 || p[6] != '\\' ||
					    p[7] != 'u')
						return FAIL(
							ps, p,
							"lone high surrogate");
					if (read_hex4(ps, p + 8, &lo))
						return ps->rc;
					if (lo < 0xdc00 || lo > 0xdfff)
						return FAIL(
							ps, p,
							"lone high surrogate");
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
					p += 6;
				}
				rc = put_utf8(b, cp);
				p += 6;
			} else {
				return FAIL(ps, p, "invalid escape");
			}
			if (rc)
				return fail(ps, p, PH_ENOMEM, "out of memory");
		}
	}
	if (b->len > UINT32_MAX)
		return FAIL(ps, from, "string longer than 4 GiB");
	copy = ph_arena_alloc_bytes(ps->arena, b->len ? b->len : 1);
	if (!copy)
		return fail(ps, from, PH_ETOOBIG,
			    "document larger than the arena's cap");
	memcpy(copy, b->buf, b->len);
	v->type = PH_JSON_STRING;
	v->n = (uint32_t)b->len;
	v->u.s = copy;
	ps->p = p;
	return 0;
}

/* ps->p is just past the opening quote. */
static inline int read_string(struct parse *ps, struct ph_json *v)
{
	const unsigned char *start = ps->p, *p = start, *end = ps->end;

	for (;;) {
		/* Unrolled: most strings are short ASCII runs. */
		while (end - p >= 4 && !str_class[p[0]] && !str_class[p[1]] &&
		       !str_class[p[2]] && !str_class[p[3]])
			p += 4;
		while (p < end && !str_class[*p])
			p++;
		if (PH_UNLIKELY(p >= end))
			return FAIL(ps, end, "unterminated string");
		switch (str_class[*p]) {
		case C_QUOTE:
			if (PH_UNLIKELY(p - start > UINT32_MAX))
				return FAIL(ps, start,
					    "string longer than 4 GiB");
			v->type = PH_JSON_STRING;
			v->n = (uint32_t)(p - start);
			v->u.s = (const char *)start;
			ps->p = p + 1;
			return 0;
		case C_HIGH: {
			int n = utf8_len(p, end);

			if (!n)
				return FAIL(ps, p, "invalid UTF-8 in string");
			p += n;
			break;
		}
		case C_CTRL: return FAIL(ps, p, "control character in string");
		default: /* backslash: decode the whole string */
			return read_escaped(ps, start, v);
		}
	}
}

static locale_t c_loc;
static pthread_once_t c_loc_once = PTHREAD_ONCE_INIT;

static void c_loc_init(void)
{
	c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	/* Out of memory this early: the process's locale, which is "C"
	 * unless the app called setlocale (then a number with a decimal
	 * comma could be misread, said here rather than crash on 0). */
	if (!c_loc)
		c_loc = LC_GLOBAL_LOCALE;
}

locale_t ph_json_c_locale(void)
{
	pthread_once(&c_loc_once, c_loc_init);
	return c_loc;
}

static const double pow10_exact[] = {
	1e0,  1e1,  1e2,  1e3,	1e4,  1e5,  1e6,  1e7,	1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * Numbers: up to 19 significant digits are gathered in a uint64 with a
 * decimal exponent.  Integers are exact or rejected.  A double whose digits
 * and exponent are both exactly representable is one correctly rounded
 * multiplication or division (Clinger's fast path); anything else goes to
 * strtod in the C locale, which rounds correctly.
 */
static int read_number(struct parse *ps, struct ph_json *v)
{
	const unsigned char *start = ps->p, *p = start, *end = ps->end;
	bool neg = false, is_int = true, fits;
	uint64_t mant = 0;
	int sig = 0;	/* significant digits gathered in mant */
	long exp10 = 0; /* value = mant * 10^exp10, before dropped digits */

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p >= end || *p < '0' || *p > '9')
		return FAIL(ps, p, "expected a digit");
	if (*p == '0') {
		p++;
		if (p < end && *p >= '0' && *p <= '9')
			return FAIL(ps, p, "leading zero in number");
	} else {
		for (; p < end && *p >= '0' && *p <= '9'; p++) {
			if (sig < 19) {
				mant = mant * 10 + (uint64_t)(*p - '0');
				sig++;
			} else {
				exp10++;
			}
		}
	}
	if (p < end && *p == '.') {
		is_int = false;
		p++;
		if (p >= end || *p < '0' || *p > '9')
			return FAIL(ps, p, "expected a digit after '.'");
		for (; p < end && *p >= '0' && *p <= '9'; p++) {
			if (!mant && *p == '0') {
				exp10--; /* a leading zero of 0.00x */
			} else if (sig < 19) {
				mant = mant * 10 + (uint64_t)(*p - '0');
				sig++;
				exp10--;
			}
		}
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		long e = 0;
		bool eneg = false;

		is_int = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p >= end || *p < '0' || *p > '9')
			return FAIL(ps, p, "expected a digit in exponent");
		for (; p < end && *p >= '0' && *p <= '9'; p++)
			if (e < 100000)
				e = e * 10 + (*p - '0');
		exp10 += eneg ? -e : e;
	}
	ps->p = p;
	fits = exp10 <= 0 && mant <= (uint64_t)INT64_MAX + (neg ? 1 : 0);
	if (is_int && !fits && !ps->r->big_ints_as_doubles)
		return FAIL(ps, start, "integer does not fit in 64 bits");
	if (is_int && fits) {
		v->type = PH_JSON_INT;
		v->n = 0;
		v->u.i = neg ? (int64_t)(0 - mant) : (int64_t)mant;
		return 0;
	}
	v->type = PH_JSON_DOUBLE;
	v->n = 0;
	if (sig <= 15 && exp10 >= -22 && exp10 <= 22) {
		double d = (double)mant;

		d = exp10 < 0 ? d / pow10_exact[-exp10] :
				d * pow10_exact[exp10];
		v->u.d = neg ? -d : d;
		return 0;
	}
	{
		/* strtod needs a NUL-terminated copy. */
		struct ph_buf *b = &ps->r->scratch;
		double d;

		ph_buf_reset(b);
		if (ph_buf_add(b, start, (size_t)(p - start)))
			return fail(ps, start, PH_ENOMEM, "out of memory");
		d = strtod_l(b->buf, NULL, ph_json_c_locale());
		if (!isfinite(d))
			return FAIL(ps, start, "number out of range");
		v->u.d = d;
		return 0;
	}
}

static int read_value(struct parse *ps, struct ph_json *v, int depth);

static int read_array(struct parse *ps, struct ph_json *v, int depth)
{
	size_t base = ps->r->stack_len;
	struct ph_json item;

	ps->p++; /* [ */
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		v->type = PH_JSON_ARRAY;
		v->n = 0;
		v->u.items = NULL;
		return 0;
	}
	for (;;) {
		if (read_value(ps, &item, depth + 1) || push(ps, &item))
			return ps->rc;
		skip_ws(ps);
		if (ps->p >= ps->end)
			return FAIL(ps, ps->end, "unterminated array");
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p != ']')
			return FAIL(ps, ps->p, "expected ',' or ']'");
		ps->p++;
		break;
	}
	if (ps->r->stack_len - base > UINT32_MAX)
		return FAIL(ps, ps->p, "array too long");
	v->type = PH_JSON_ARRAY;
	v->n = (uint32_t)(ps->r->stack_len - base);
	v->u.items = pop_to_arena(ps, v->n);
	return v->u.items ? 0 : ps->rc;
}

static int read_object(struct parse *ps, struct ph_json *v, int depth)
{
	size_t base = ps->r->stack_len;
	struct ph_json item;

	ps->p++; /* { */
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		v->type = PH_JSON_OBJECT;
		v->n = 0;
		v->u.members = NULL;
		return 0;
	}
	for (;;) {
		if (ps->p >= ps->end)
			return FAIL(ps, ps->end, "unterminated object");
		if (*ps->p != '"')
			return FAIL(ps, ps->p, "expected a string key");
		ps->p++;
		if (read_string(ps, &item) || push(ps, &item))
			return ps->rc;
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':')
			return FAIL(ps, ps->p, "expected ':'");
		ps->p++;
		if (read_value(ps, &item, depth + 1) || push(ps, &item))
			return ps->rc;
		skip_ws(ps);
		if (ps->p >= ps->end)
			return FAIL(ps, ps->end, "unterminated object");
		if (*ps->p == ',') {
			ps->p++;
			skip_ws(ps);
			continue;
		}
		if (*ps->p != '}')
			return FAIL(ps, ps->p, "expected ',' or '}'");
		ps->p++;
		break;
	}
	if ((ps->r->stack_len - base) / 2 > UINT32_MAX)
		return FAIL(ps, ps->p, "object too long");
	v->type = PH_JSON_OBJECT;
	v->n = (uint32_t)((ps->r->stack_len - base) / 2);
	v->u.members =
		(struct ph_json_member *)pop_to_arena(ps, (size_t)v->n * 2);
	return v->u.members ? 0 : ps->rc;
}

static int read_literal(struct parse *ps, const char *word, size_t n,
			enum ph_json_type type, struct ph_json *v)
{
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return FAIL(ps, ps->p, "invalid literal");
	ps->p += n;
	v->type = type;
	v->n = 0;
	v->u.i = 0;
	return 0;
}

static int read_value(struct parse *ps, struct ph_json *v, int depth)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return FAIL(ps, ps->end, "expected a value");
	switch (*ps->p) {
	case '"': ps->p++; return read_string(ps, v);
	case '{':
		if (depth >= PH_JSON_MAX_DEPTH)
			return FAIL(ps, ps->p, "nesting deeper than 256");
		return read_object(ps, v, depth);
	case '[':
		if (depth >= PH_JSON_MAX_DEPTH)
			return FAIL(ps, ps->p, "nesting deeper than 256");
		return read_array(ps, v, depth);
	case 't': return read_literal(ps, "true", 4, PH_JSON_TRUE, v);
	case 'f': return read_literal(ps, "false", 5, PH_JSON_FALSE, v);
	case 'n': return read_literal(ps, "null", 4, PH_JSON_NULL, v);
	case '-':
	case '0' ... '9': return read_number(ps, v);
	}
	return FAIL(ps, ps->p, "expected a value");
}

void ph_json_reader_init(struct ph_json_reader *r)
{
	r->stack = NULL;
	r->stack_len = 0;
	r->stack_alloc = 0;
	r->big_ints_as_doubles = false;
	/* Escaped strings and number texts are bounded by the input. */
	ph_buf_init(&r->scratch, PH_BUF_NO_CAP);
}

void ph_json_reader_release(struct ph_json_reader *r)
{
	free(r->stack);
	ph_buf_release(&r->scratch);
	ph_json_reader_init(r);
}

int ph_json_read(struct ph_json_reader *r, struct ph_arena *arena,
		 const char *buf, size_t len, struct ph_json **out,
		 struct ph_err *err)
{
	struct parse ps = {
		.r = r,
		.arena = arena,
		.start = (const unsigned char *)buf,
		.p = (const unsigned char *)buf,
		.end = (const unsigned char *)buf + len,
		.err = err,
	};
	struct ph_json v, *root;

	*out = NULL;
	r->stack_len = 0;
	if (read_value(&ps, &v, 0))
		return ps.rc;
	skip_ws(&ps);
	if (ps.p != ps.end)
		return FAIL(&ps, ps.p, "unexpected data after the value");
	root = ph_arena_alloc(arena, sizeof(*root));
	if (!root)
		return fail(&ps, ps.p, PH_ETOOBIG,
			    "document larger than the arena's cap");
	*root = v;
	*out = root;
	return 0;
}

int ph_json_parse(struct ph_arena *arena, const char *buf, size_t len,
		  struct ph_json **out, struct ph_err *err)
{
	struct ph_json_reader r;
	int rc;

	ph_json_reader_init(&r);
	rc = ph_json_read(&r, arena, buf, len, out, err);
	ph_json_reader_release(&r);
	return rc;
}

const struct ph_json *ph_json_get(const struct ph_json *obj, const char *key)
{
	size_t n;

	if (!ph_json_is(obj, PH_JSON_OBJECT))
		return NULL;
	n = strlen(key);
	for (uint32_t i = obj->n; i-- > 0;) {
		const struct ph_json_member *m = &obj->u.members[i];

		if (m->key.n == n && !memcmp(m->key.u.s, key, n))
			return &m->value;
	}
	return NULL;
}

const struct ph_json *ph_json_at(const struct ph_json *arr, size_t i)
{
	if (!ph_json_is(arr, PH_JSON_ARRAY) || i >= arr->n)
		return NULL;
	return &arr->u.items[i];
}

bool ph_json_streq(const struct ph_json *v, const char *s)
{
	size_t n;

	if (!ph_json_is(v, PH_JSON_STRING))
		return false;
	n = strlen(s);
	return v->n == n && !memcmp(v->u.s, s, n);
}

/* Parses a whole string value as one JSON number. */
static bool string_number(const struct ph_json *v, struct ph_json *num)
{
	struct ph_json_reader r;
	struct parse ps;
	bool ok;

	if (!v->n || v->n > 64)
		return false;
	ph_json_reader_init(&r);
	ps = (struct parse){
		.r = &r,
		.start = (const unsigned char *)v->u.s,
		.p = (const unsigned char *)v->u.s,
		.end = (const unsigned char *)v->u.s + v->n,
	};
	ok = (*ps.p == '-' || (*ps.p >= '0' && *ps.p <= '9')) &&
	     !read_number(&ps, num) && ps.p == ps.end;
	ph_json_reader_release(&r);
	return ok;
}

bool ph_json_as_int(const struct ph_json *v, int64_t *out)
{
	struct ph_json num;

	if (!v)
		return false;
	if (v->type == PH_JSON_STRING) {
		if (!string_number(v, &num))
			return false;
		v = &num;
	}
	if (v->type == PH_JSON_INT) {
		*out = v->u.i;
		return true;
	}
	if (v->type == PH_JSON_DOUBLE && v->u.d == floor(v->u.d) &&
	    v->u.d >= -9223372036854775808.0 &&
	    v->u.d < 9223372036854775808.0) {
		*out = (int64_t)v->u.d;
		return true;
	}
	return false;
}

bool ph_json_as_double(const struct ph_json *v, double *out)
{
	struct ph_json num;

	if (!v)
		return false;
	if (v->type == PH_JSON_STRING) {
		if (!string_number(v, &num))
			return false;
		v = &num;
	}
	if (v->type == PH_JSON_INT) {
		*out = (double)v->u.i;
		return true;
	}
	if (v->type == PH_JSON_DOUBLE) {
		*out = v->u.d;
		return true;
	}
	return false;
}

const char *ph_json_strdup(struct ph_arena *arena, const struct ph_json *v)
{
	if (!ph_json_is(v, PH_JSON_STRING))
		return NULL;
	return ph_arena_strndup(arena, v->u.s, v->n);
}

bool ph_json_equal(const struct ph_json *a, const struct ph_json *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case PH_JSON_NULL:
	case PH_JSON_TRUE:
	case PH_JSON_FALSE: return true;
	case PH_JSON_INT: return a->u.i == b->u.i;
	case PH_JSON_DOUBLE:
		return a->u.d == b->u.d && signbit(a->u.d) == signbit(b->u.d);
	case PH_JSON_STRING:
		return a->n == b->n && !memcmp(a->u.s, b->u.s, a->n);
	case PH_JSON_ARRAY:
		if (a->n != b->n)
			return false;
		for (uint32_t i = 0; i < a->n; i++)
			if (!ph_json_equal(&a->u.items[i], &b->u.items[i]))
				return false;
		return true;
	case PH_JSON_OBJECT:
		if (a->n != b->n)
			return false;
		for (uint32_t i = 0; i < a->n; i++)
			if (!ph_json_equal(&a->u.members[i].key,
					   &b->u.members[i].key) ||
			    !ph_json_equal(&a->u.members[i].value,
					   &b->u.members[i].value))
				return false;
		return true;
	}
	return false;
}
