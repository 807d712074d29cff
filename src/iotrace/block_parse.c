/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block_parse.c: the ftrace block event line parser, a line at a time
 * (ph_iot_parse_line()): the general reader, which reads every layout
 * right to left from the timestamp, and the classification of a line's two
 * 64-byte windows for the fast path (block_fast.h, shared with the batch
 * reader in block_lines.c).  The format is drawn in block_parse.h.
 */
#include "ph_common.h"
#include "iotrace/block_parse.h"
#include "iotrace/block_fast.h"

static const char *const bad_names[PH_IOT_BAD_COUNT] = {
	[PH_IOT_BAD_HEADER] = "bad_header",
	[PH_IOT_BAD_TIMESTAMP] = "bad_timestamp",
	[PH_IOT_BAD_DEVICE] = "bad_device",
	[PH_IOT_BAD_RWBS] = "bad_rwbs",
	[PH_IOT_BAD_BYTES] = "bad_bytes",
	[PH_IOT_BAD_CMD] = "bad_cmd",
	[PH_IOT_BAD_SECTOR] = "bad_sector",
	[PH_IOT_BAD_IOPRIO] = "bad_ioprio",
	[PH_IOT_BAD_COMM] = "bad_comm",
	[PH_IOT_BAD_ERROR] = "bad_error",
	[PH_IOT_BAD_TRAILING] = "trailing_bytes",
};

const char *ph_iot_bad_name(enum ph_iot_bad why)
{
	return (unsigned)why < PH_IOT_BAD_COUNT ? bad_names[why] : "unknown";
}

static const char *const op_names[PH_IOT_OP_COUNT] = {
	[PH_IOT_OP_READ] = "read",
	[PH_IOT_OP_WRITE] = "write",
	[PH_IOT_OP_FLUSH] = "flush",
	[PH_IOT_OP_DISCARD] = "discard",
	[PH_IOT_OP_SECURE_ERASE] = "secure_erase",
	[PH_IOT_OP_NONE] = "none",
};

const char *ph_iot_op_name(unsigned op)
{
	return op < PH_IOT_OP_COUNT ? op_names[op] : "none";
}

static const char *const flag_names[PH_IOT_F_COUNT] = {
	"preflush", "fua", "ahead", "sync", "meta", "secure", "barrier",
};

size_t ph_iot_flags_format(unsigned flags, char *buf)
{
	size_t n = 0;

	for (int i = 0; i < PH_IOT_F_COUNT; i++) {
		size_t k;

		if (!(flags & (1u << i)))
			continue;
		if (n)
			buf[n++] = '|';
		k = strlen(flag_names[i]);
		memcpy(buf + n, flag_names[i], k);
		n += k;
	}
	buf[n] = '\0';
	return n;
}

/* Digits one at a time with an overflow check: 20 digits and more. */
static bool read_u64_long(const char **pp, const char *e, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p >= e || !is_digit(*p))
		return false;
	do {
		unsigned d = (unsigned char)*p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		p++;
	} while (p < e && is_digit(*p));
	*pp = p;
	*out = v;
	return true;
}

bool ph_iot_rwbs_decode(const char *s, size_t n, uint8_t *op, uint8_t *flags,
			uint8_t *unknown)
{
	return rwbs_decode(s, n, op, flags, unknown);
}

static const uint64_t pow10_u64[20] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};

/* How many digits end at q (not below s), counting at most 8. */
static PH_ALWAYS_INLINE size_t digits_before(const char *q, const char *s)
{
	size_t n = 0;

	if (q - s >= 8) {
		/* byte-swapped, the byte before q is the lowest: count
		 * trailing zeros, which compiles to one tzcnt, not bsr */
		uint64_t m = __builtin_bswap64(nondigits(load8(q - 8)));

		return m ? (size_t)__builtin_ctzll(m) / 8 : 8;
	}
	while (q - n > s && is_digit(q[-(ptrdiff_t)n - 1]) && n < 8)
		n++;
	return n;
}

/* How many spaces end at q (not below s), counting at most 8. */
static PH_ALWAYS_INLINE size_t spaces_before(const char *q, const char *s)
{
	size_t n = 0;

	if (q - s >= 8) {
		uint64_t m =
			__builtin_bswap64(~bytes_eq(load8(q - 8), ' ') & H8);

		return m ? (size_t)__builtin_ctzll(m) / 8 : 8;
	}
	while (q - n > s && q[-(ptrdiff_t)n - 1] == ' ' && n < 8)
		n++;
	return n;
}

/* The first ' ' at or after p, or e. */
static PH_ALWAYS_INLINE const char *next_space(const char *p, const char *e)
{
	while (e - p >= 8) {
		uint64_t m = bytes_eq(load8(p), ' ');

		if (m)
			return p + __builtin_ctzll(m) / 8;
		p += 8;
	}
	while (p < e && *p != ' ')
		p++;
	return p;
}

/*
 * Decimal digits at *pp, up to e.  Most numbers in a block line are short
 * (a major, a minor, a sector count), so the first four digits are read
 * one at a time; a longer number (a sector) goes on eight at a time.  False
 * when there is no digit or the number passes UINT64_MAX.
 */
static PH_ALWAYS_INLINE bool read_u64(const char **pp, const char *e,
				      uint64_t *out)
{
	const char *p = *pp, *start = p;
	uint64_t v = 0;

	while (p < e && is_digit(*p)) {
		v = v * 10 + (unsigned)(*p++ - '0');
		if (p - start == 4)
			goto more;
	}
	if (p == start)
		return false;
	*pp = p;
	*out = v;
	return true;
more:
	while (e - p >= 8) {
		uint64_t x = load8(p);
		uint64_t m = nondigits(x);
		unsigned n = m ? (unsigned)__builtin_ctzll(m) / 8 : 8;

		if (p - start + n > 19)
			return read_u64_long(pp, e, out); /* may pass 2^64 */
		if (n == 8) {
			v = v * 100000000 + value8(x);
			p += 8;
			continue;
		}
		if (n) {
			/* shift the n digits to the top and pad with '0' */
			x = (x << (8 * (8 - n))) |
			    (0x3030303030303030ull >> (8 * n));
			v = v * pow10_u64[n] + value8(x);
			p += n;
		}
		goto done;
	}
	while (p < e && is_digit(*p)) {
		if (p - start >= 19)
			return read_u64_long(pp, e, out);
		v = v * 10 + (unsigned)(*p++ - '0');
	}
done:
	*pp = p;
	*out = v;
	return true;
}

static PH_ALWAYS_INLINE bool read_u32(const char **pp, const char *e,
				      uint32_t *out)
{
	uint64_t v;

	if (!read_u64(pp, e, &v) || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

static const uint32_t pow10_ns[10] = { 1000000000, 100000000, 10000000, 1000000,
				       100000,	   10000,     1000,	100,
				       10,	   1 };

/*
 * Reads the digits that end at *pp, right to left, never below s and never
 * more than max + 1 of them, so every backward scan costs a constant per
 * candidate timestamp, however hostile the line.  Returns how many digits
 * it read (max + 1: too many); on 1..max moves *pp to the first digit and
 * sets *out.
 */
static PH_ALWAYS_INLINE size_t back_number(const char **pp, const char *s,
					   size_t max, uint64_t *out)
{
	const char *q = *pp, *p;
	size_t n = digits_before(q, s);

	if (n == 8)
		n += digits_before(q - 8, s);
	if (n == 0 || n > max)
		return n;
	p = q - n;
	if (q - s >= 8 && n <= 8) {
		/* the n digits sit in the high bytes: pad the low ones '0' */
		uint64_t low = n == 8 ? 0 : (1ull << (8 * (8 - n))) - 1;
		uint64_t x = load8(q - 8);

		*out = value8((x & ~low) | (0x3030303030303030ull & low));
	} else {
		uint64_t v = 0;

		for (const char *d = p; d < q; d++)
			v = v * 10 + (unsigned)(*d - '0');
		*out = v;
	}
	*pp = p;
	return n;
}

/* p moved back over the spaces before it, at most 64 of them. */
static PH_ALWAYS_INLINE const char *back_spaces(const char *p, const char *s)
{
	for (int i = 0; i < 8; i++) {
		size_t n = spaces_before(p, s);

		p -= n;
		if (n < 8)
			break;
	}
	return p;
}

/*
 * The TGID column that ends at p (p[-1] is ')'): "(   1977)", or dashes
 * when the tgid is not known ("(-------)", Android's "(-----)"), its '('
 * at most 13 bytes back.  Returns the '(' and sets *tgid (left alone for
 * dashes), or NULL.
 */
const char *ph_iot_tgid_field(const char *s, const char *p, int32_t *tgid)
{
	const char *close = --p, *d;
	uint64_t v;

	while (p > s && p[-1] != '(' && close - p <= 12)
		p--;
	if (p == s || p[-1] != '(')
		return NULL;
	d = p;
	while (d < close && *d == ' ')
		d++;
	if (d < close && is_digit(*d)) {
		const char *de = d;

		if (!read_u64(&de, close, &v) || de != close || v > INT32_MAX)
			return NULL;
		*tgid = (int32_t)v;
	} else {
		while (d < close && *d == '-')
			d++;
		if (d != close)
			return NULL;
	}
	return p - 1;
}

/*
 * The header, read right to left from c, the ':' after the timestamp, down
 * to s, the line's first byte.  Everything left of "-PID" is the comm.
 */
static bool parse_header(const char *s, const char *c, struct ph_iot_rec *r,
			 enum ph_iot_bad *why)
{
	const char *p = c, *q;
	uint64_t secs, frac, v;
	size_t nfrac, n;

	/* TIMESTAMP: SECONDS.FRACTION */
	nfrac = back_number(&p, s, 9, &frac);
	if (nfrac == 0 || nfrac > 9 || p == s || p[-1] != '.')
		goto bad_ts;
	p--;
	n = back_number(&p, s, 10, &secs);
	if (n == 0 || n > 10 || secs > (uint64_t)INT64_MAX / 1000000000 - 1)
		goto bad_ts;
	r->ts_ns = (int64_t)(secs * 1000000000 + frac * pow10_ns[nfrac]);
	if (p == s || p[-1] != ' ')
		goto bad_header;
	p = back_spaces(p, s);

	/* optional FLAGS ("d.s1.", "...1") */
	if (p > s && p[-1] != ']') {
		if (p - s > 8) {
			uint64_t m =
				__builtin_bswap64(bytes_eq(load8(p - 8), ' '));

			if (!m)
				goto bad_header; /* 8 or more flag bytes */
			p -= __builtin_ctzll(m) / 8;
		} else {
			while (p > s && p[-1] != ' ')
				p--;
			if (p == s)
				goto bad_header;
		}
		p = back_spaces(p, s);
	}

	/* [CPU] */
	if (p == s || p[-1] != ']')
		goto bad_header;
	p--;
	n = back_number(&p, s, 6, &v);
	if (n == 0 || n > 6 || p == s || p[-1] != '[')
		goto bad_header;
	r->cpu = (uint32_t)v;
	p--;
	if (p == s || p[-1] != ' ')
		goto bad_header;
	p = back_spaces(p, s);

	/* optional (TGID): "(   1977)", "(-------)" */
	r->tgid = -1;
	if (p > s && p[-1] == ')') {
		p = ph_iot_tgid_field(s, p, &r->tgid);
		if (!p || p == s || p[-1] != ' ')
			goto bad_header;
		p = back_spaces(p, s);
	}

	/* COMM-PID */
	n = back_number(&p, s, 10, &v);
	if (n == 0 || n > 10 || v > INT32_MAX || p == s || p[-1] != '-')
		goto bad_header;
	r->pid = (int32_t)v;
	/* the comm is right-aligned: its last byte is rarely a space */
	for (q = --p; q > s && q[-1] == ' ' && p - q < PH_IOT_COMM_MAX; q--)
		;
	if (q == s || q[-1] == ' ')
		goto bad_header; /* no comm */
	return true;
bad_ts:
	*why = PH_IOT_BAD_TIMESTAMP;
	return false;
bad_header:
	*why = PH_IOT_BAD_HEADER;
	return false;
}

/* "be,0,4": a lower-case class name and two numbers. */
static bool ioprio_ok(const char *p, const char *e)
{
	const char *q = p;
	int fields = 0;

	while (p < e && *p >= 'a' && *p <= 'z')
		p++;
	if (p == q)
		return false;
	while (p < e) { /* ",DIGITS", twice */
		if (*p++ != ',' || p == e || !is_digit(*p))
			return false;
		while (p < e && is_digit(*p))
			p++;
		fields++;
	}
	return fields == 2;
}

/* The body after "block_rq_EVENT: ", up to e. */
bool ph_iot_parse_body(const char *p, const char *e, struct ph_iot_rec *r,
		       enum ph_iot_bad *why)
{
	const char *q;
	uint64_t maj, min;
	/* complete and requeue print no bytes and end in [ERROR] (requeue's
	 * is always 0), the others in [COMM] */
	bool tail = r->event == PH_IOT_EV_COMPLETE ||
		    r->event == PH_IOT_EV_REQUEUE;

	while (p < e && *p == ' ')
		p++;
	/* MAJ,MIN */
	if (!read_u64(&p, e, &maj) || p >= e || *p++ != ',' ||
	    !read_u64(&p, e, &min) || maj >= (1u << 12) || min >= (1u << 20) ||
	    p >= e || *p++ != ' ') {
		*why = PH_IOT_BAD_DEVICE;
		return false;
	}
	r->dev = (uint32_t)(maj << 20 | min);

	/* RWBS (char rwbs[10] in the event: at most 9 letters) */
	q = p;
	p = next_space(p, e);
	if (p == q || p - q > 9 || p >= e ||
	    !rwbs_decode(q, (size_t)(p - q), &r->op, &r->flags,
			 &r->unknown_rwbs)) {
		*why = PH_IOT_BAD_RWBS;
		return false;
	}
	p++;

	/* BYTES */
	r->bytes = 0;
	if (!tail && (!read_u32(&p, e, &r->bytes) || p >= e || *p++ != ' ')) {
		*why = PH_IOT_BAD_BYTES;
		return false;
	}

	/* (CMD) */
	if (p >= e || *p != '(' ||
	    !(q = e - p > 1 && p[1] == ')' ? p + 1 :
					     memchr(p, ')', (size_t)(e - p))) ||
	    q + 1 >= e || q[1] != ' ') {
		*why = PH_IOT_BAD_CMD;
		return false;
	}
	p = q + 2;

	/* SECTOR + NR_SECTOR */
	if (!read_u64(&p, e, &r->sector) || e - p < 3 || p[0] != ' ' ||
	    p[1] != '+' || p[2] != ' ' ||
	    (p += 3, !read_u32(&p, e, &r->nr_sector))) {
		*why = PH_IOT_BAD_SECTOR;
		return false;
	}

	/* [IOPRIO] */
	r->has_error = 0;
	r->error = 0;
	r->comm_len = 0;
	if (p < e && *p == ' ' && p + 1 < e && p[1] != '[') {
		q = ++p;
		p = next_space(p, e);
		if (!ioprio_ok(q, p)) {
			*why = PH_IOT_BAD_IOPRIO;
			return false;
		}
	}
	if (p == e) {
		if (tail)
			return true; /* kernels without an error field */
		*why = PH_IOT_BAD_COMM;
		return false;
	}
	if (e - p < 3 || p[0] != ' ' || p[1] != '[') {
		*why = tail ? PH_IOT_BAD_TRAILING : PH_IOT_BAD_COMM;
		return false;
	}
	p += 2;
	if (e[-1] != ']') {
		*why = memchr(p, ']', (size_t)(e - p)) ?
			       PH_IOT_BAD_TRAILING :
			       (tail ? PH_IOT_BAD_ERROR : PH_IOT_BAD_COMM);
		return false;
	}
	e--;

	if (!tail) {
		/* [COMM]: everything up to the line's last ']' */
		if (e - p > PH_IOT_COMM_MAX) {
			*why = PH_IOT_BAD_COMM;
			return false;
		}
		r->comm_len = (uint8_t)(e - p);
		copy16(r->comm, p, r->comm_len);
		return true;
	}

	/* [ERROR] */
	{
		bool neg = p < e && *p == '-';
		uint64_t v;

		p += neg;
		if (!read_u64(&p, e, &v) || p != e ||
		    v > (neg ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX)) {
			*why = PH_IOT_BAD_ERROR;
			return false;
		}
		r->error = neg ? (int32_t)(0 - v) : (int32_t)v;
		r->has_error = 1;
	}
	return true;
}

/* The event a name names, given the bytes after "block_rq_". */
static int block_event(const char *n, const char *e, const char **body)
{
	size_t left = (size_t)(e - n);

	if (left >= 7 && !memcmp(n, "issue: ", 7)) {
		*body = n + 7;
		return PH_IOT_EV_ISSUE;
	}
	if (left >= 10 && !memcmp(n, "complete: ", 10)) {
		*body = n + 10;
		return PH_IOT_EV_COMPLETE;
	}
	if (left >= 8 && !memcmp(n, "insert: ", 8)) {
		*body = n + 8;
		return PH_IOT_EV_INSERT;
	}
	if (left >= 9 && !memcmp(n, "requeue: ", 9)) {
		*body = n + 9;
		return PH_IOT_EV_REQUEUE;
	}
	return 0;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* The three masks of the 16 bytes at p, bit i for p[i]. */
static PH_ALWAYS_INLINE void classify16_sse2(const char *p, unsigned *dg,
					     unsigned *sp, unsigned *co)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i t = _mm_sub_epi8(x, _mm_set1_epi8('0'));

	/* a digit: x - '0' is at most 9, unsigned */
	*dg = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t));
	*sp = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
	*co = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(x, _mm_set1_epi8(':')));
}
#define classify16_simd classify16_sse2
#elif defined(__aarch64__) && defined(__ARM_NEON)
/* The three masks of the 16 bytes at p, bit i for p[i], by NEON. */
static PH_ALWAYS_INLINE void classify16_neon(const char *p, unsigned *dg,
					     unsigned *sp, unsigned *co)
{
	uint8x16_t x = vld1q_u8((const uint8_t *)p);

	/* a digit: x - '0' is at most 9, unsigned */
	*dg = (unsigned)movemask16(
		vcleq_u8(vsubq_u8(x, vdupq_n_u8('0')), vdupq_n_u8(9)));
	*sp = (unsigned)movemask16(vceqq_u8(x, vdupq_n_u8(' ')));
	*co = (unsigned)movemask16(vceqq_u8(x, vdupq_n_u8(':')));
}
#define classify16_simd classify16_neon
#endif

/* classify16_sse2() eight bytes at a time: machines without SSE2 or NEON (and
 * ph_iot_classify_agree(), which checks the two agree). */
static PH_ALWAYS_INLINE void classify16_swar(const char *p, unsigned *dg,
					     unsigned *sp, unsigned *co)
{
	uint64_t a = load8(p), b = load8(p + 8);

	*dg = bits8(~nondigits(a) & H8) | bits8(~nondigits(b) & H8) << 8;
	*sp = bits8(bytes_eq(a, ' ')) | bits8(bytes_eq(b, ' ')) << 8;
	*co = bits8(bytes_eq(a, ':')) | bits8(bytes_eq(b, ':')) << 8;
}
/* Sixteen bytes' masks, at bit `at` of m. */
static PH_ALWAYS_INLINE void classify_at(const char *p, size_t at,
					 struct masks *m, bool swar)
{
	unsigned dg, sp, co;

	(void)swar; /* no choice without SSE2 or NEON */
#ifdef classify16_simd
	if (!swar)
		classify16_simd(p + at, &dg, &sp, &co);
	else
#endif
		classify16_swar(p + at, &dg, &sp, &co);
	m->digit |= (uint64_t)dg << at;
	m->space |= (uint64_t)sp << at;
	m->colon |= (uint64_t)co << at;
}

/*
 * The masks of p[0, n), 16 <= n <= 64, in four loads of 16 bytes; the
 * last ones overlap when n is not a multiple of 16, which ORs a byte's
 * bits in twice, harmlessly.  Bits from n on are clear.
 */
static PH_ALWAYS_INLINE void classify_with(const char *p, size_t n,
					   struct masks *m, bool swar)
{
	m->digit = m->space = m->colon = 0;
	/* at 0, 16, 32 and n - 16, or less where n is less */
	classify_at(p, 0, m, swar);
	classify_at(p, n < 32 ? n - 16 : 16, m, swar);
	classify_at(p, n < 48 ? n - 16 : 32, m, swar);
	classify_at(p, n - 16, m, swar);
}

static PH_ALWAYS_INLINE void classify(const char *p, size_t n, struct masks *m)
{
	classify_with(p, n, m, false);
}

bool ph_iot_classify_agree(const char *p, size_t n)
{
	struct masks a, b;

	if (n < 16 || n > 64)
		return true;
	classify_with(p, n, &a, false);
	classify_with(p, n, &b, true);
	return a.digit == b.digit && a.space == b.space && a.colon == b.colon;
}

/*
 * The general reader: s[0, e), trimmed.  The first "D: NAME:" (a digit, a
 * colon, a space, an identifier and a colon) ends the timestamp.  A comm
 * can hold such bytes too; then the header does not parse from there and
 * the search goes on.
 */
enum ph_iot_line ph_iot_general_line(const char *s, const char *e,
				     struct ph_iot_rec *rec,
				     enum ph_iot_bad *why)
{
	const char *c = s;
	int first_bad = -1;

	for (; (c = memchr(c, ':', (size_t)(e - c))); c++) {
		const char *n = c + 2, *body, *t;
		enum ph_iot_bad w;
		int ev;

		if (c == s || !is_digit(c[-1]) || e - c < 3 || c[1] != ' ')
			continue;
		if (e - n > 9 && !memcmp(n, "block_rq_", 9) &&
		    (ev = block_event(n + 9, e, &body))) {
			rec->event = (uint8_t)ev;
			if (!parse_header(s, c, rec, &w)) {
				if (first_bad < 0)
					first_bad = (int)w;
				continue;
			}
			if (!ph_iot_parse_body(body, e, rec, why))
				return PH_IOT_LINE_MALFORMED;
			return PH_IOT_LINE_BLOCK;
		}
		if (first_bad >= 0)
			continue; /* only another block event may follow */
		for (t = n; t < e && is_ident(*t); t++)
			;
		/* another event, if a header stands before it */
		if (t > n && t < e && *t == ':' && parse_header(s, c, rec, &w))
			return PH_IOT_LINE_OTHER;
	}
	if (first_bad >= 0) {
		*why = (enum ph_iot_bad)first_bad;
		return PH_IOT_LINE_MALFORMED;
	}
	return PH_IOT_LINE_UNKNOWN;
}

enum ph_iot_line ph_iot_parse_line(const char *line, size_t len,
				   struct ph_iot_rec *rec, enum ph_iot_bad *why)
{
	const char *e = trim_end(line, line + len);
	enum ph_iot_line kind;

	if (e - line >= 64) {
		struct masks h, t;

		classify(line, 64, &h);
		classify(e - 64, 64, &t);
		if (fast_line(line, e, &h, &t, rec, why, &kind, NULL))
			return kind;
	}
	return ph_iot_general_line(line, e, rec, why);
}

enum ph_iot_line ph_iot_parse_line_general(const char *line, size_t len,
					   struct ph_iot_rec *rec,
					   enum ph_iot_bad *why)
{
	return ph_iot_general_line(line, trim_end(line, line + len), rec, why);
}
