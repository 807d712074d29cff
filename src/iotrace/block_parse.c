/*
 * block_parse.c: the ftrace block event line parser; the format is drawn
 * in block_parse.h.
 */
#include "ph_common.h"
#include "iotrace/block_parse.h"

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

bool ph_iot_rwbs_decode(const char *s, size_t n, uint8_t *op, uint8_t *flags,
			uint8_t *unknown)
{
	size_t i = 0;
	uint8_t f = 0, bad = 0, o;

	if (!n)
		return false;
	/* A leading F is REQ_PREFLUSH only when an operation letter follows. */
	if (n >= 2 && s[0] == 'F' &&
	    (s[1] == 'W' || s[1] == 'R' || s[1] == 'D' || s[1] == 'F' ||
	     s[1] == 'N')) {
		f |= PH_IOT_F_PREFLUSH;
		i = 1;
	}
	switch (s[i]) {
	case 'R': o = PH_IOT_OP_READ; break;
	case 'W': o = PH_IOT_OP_WRITE; break;
	case 'F': o = PH_IOT_OP_FLUSH; break;
	case 'N': o = PH_IOT_OP_NONE; break;
	case 'D':
		o = PH_IOT_OP_DISCARD;
		if (i + 1 < n && s[i + 1] == 'E') {
			o = PH_IOT_OP_SECURE_ERASE;
			i++;
		}
		break;
	default: return false;
	}
	for (i++; i < n; i++) {
		switch (s[i]) {
		case 'F': f |= PH_IOT_F_FUA; break;
		case 'A': f |= PH_IOT_F_AHEAD; break;
		case 'S': f |= PH_IOT_F_SYNC; break;
		case 'M': f |= PH_IOT_F_META; break;
		case 'B': f |= PH_IOT_F_BARRIER; break;
		case 'E':
			/* pre-4.8 kernels: discard + REQ_SECURE */
			if (o == PH_IOT_OP_DISCARD)
				o = PH_IOT_OP_SECURE_ERASE;
			else
				f |= PH_IOT_F_SECURE;
			break;
		default: bad++; break;
		}
	}
	*op = o;
	*flags = f;
	*unknown = bad;
	return true;
}

static inline bool is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
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

#define PH_ALWAYS_INLINE inline __attribute__((always_inline))

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

static PH_ALWAYS_INLINE uint64_t load8(const char *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x; /* p[0] in the low byte */
}

/* The value of 8 ASCII digits (p[0] in the low byte), in three multiplies. */
static PH_ALWAYS_INLINE uint64_t value8(uint64_t x)
{
	x -= 0x3030303030303030ull;
	x = (x * 10) + (x >> 8);
	x = (((x & 0x000000ff000000ffull) * 0x000f424000000064ull) +
	     (((x >> 16) & 0x000000ff000000ffull) * 0x0000271000000001ull)) >>
	    32;
	return x;
}

#define H8 0x8080808080808080ull
#define L8 0x0101010101010101ull

/*
 * Bit 7 of each byte of x that is not '0'..'9' (the other bits clear).
 * Each byte is computed on its own (bit 7 is set before subtracting and
 * cleared before adding), so no borrow or carry crosses bytes and the mask
 * is exact in both directions.
 */
static PH_ALWAYS_INLINE uint64_t nondigits(uint64_t x)
{
	return (~((x | H8) - 0x3030303030303030ull) |
		((x & ~H8) + 0x4646464646464646ull) | x) &
	       H8;
}

/* Bit 7 of each byte of x equal to c, exactly. */
static PH_ALWAYS_INLINE uint64_t bytes_eq(uint64_t x, unsigned char c)
{
	uint64_t y = x ^ (L8 * c);

	return ~(((y & ~H8) + ~H8) | y) & H8;
}

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
		const char *close = --p, *d;

		while (p > s && p[-1] != '(' && close - p <= 12)
			p--;
		if (p == s || p[-1] != '(')
			goto bad_header;
		d = p;
		while (d < close && *d == ' ')
			d++;
		if (d < close && is_digit(*d)) {
			const char *de = d;

			if (!read_u64(&de, close, &v) || de != close ||
			    v > INT32_MAX)
				goto bad_header;
			r->tgid = (int32_t)v;
		} else {
			while (d < close && *d == '-')
				d++;
			if (d != close)
				goto bad_header;
		}
		p--; /* the '(' */
		if (p == s || p[-1] != ' ')
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

/*
 * The fast path for the header as kernels print it, fixed widths and all
 * (trace_print_context()):
 *
 *   "%16s-%-7d " ["(%7d) "] "[%03d] " [FLAGS " "] "%5llu.%06lu: "
 *
 * (pid and tgid 5 wide on older kernels, FLAGS 4 or 5 bytes).  Once the
 * width of the seconds is known, every field sits at a fixed offset from
 * the ':', so the checks below are independent loads rather than the chain
 * of dependent scans parse_header() needs; on this machine that halves the
 * cost of a header.  Whatever it does not recognise it leaves to
 * parse_header(), which reads every layout, and both must agree on what
 * they both accept (the fuzz target checks that).
 */
static PH_ALWAYS_INLINE bool fast_header(const char *s, const char *c,
					 struct ph_iot_rec *r)
{
	const char *t, *b, *dash, *f;
	uint64_t x, secs;
	size_t n, w, pw;
	unsigned cpu;

	if (c - s < 40) /* the shortest layout reaches back to c - 36 */
		return false;
	/* "S.ffffff:": six fraction digits after a '.' after a digit */
	x = load8(c - 8);
	if ((nondigits(x) | 0x8000) != 0x8000 || ((x >> 8) & 0xff) != '.')
		return false;
	n = digits_before(c - 7, s);
	if (n > 7)
		return false;
	w = n < 5 ? 5 : n;
	t = c - 7 - w; /* the seconds field, right-aligned in w */
	{
		uint64_t low = (1ull << (8 * (8 - n))) - 1;

		secs = value8((load8(c - 15) & ~low) |
			      (0x3030303030303030ull & low));
	}
	for (size_t i = 0; i < w - n; i++)
		if (t[i] != ' ')
			return false;
	r->ts_ns = (int64_t)(secs * 1000000000 +
			     value8((x & ~0xffffull) | 0x3030) * 1000);
	if (t[-1] != ' ')
		return false;

	/* FLAGS: 5 bytes, 4 bytes, or none */
	if (t[-2] == ']') {
		b = t - 2;
	} else {
		uint64_t sp = bytes_eq(load8(t - 9), ' ');

		/* bytes: 0 = t-9 ... 7 = t-2 */
		if ((sp & 0xffffffffff800000ull) == 0x800000ull)
			b = t - 8; /* t-7 ' ', t-6..t-2 flags */
		else if ((sp & 0xffffffff80000000ull) == 0x80000000ull)
			b = t - 7;
		else
			return false;
	}

	/* "[CCC]" */
	if (b[0] != ']' || !is_digit(b[-1]) || !is_digit(b[-2]) ||
	    !is_digit(b[-3]) || b[-4] != '[' || b[-5] != ' ')
		return false;
	cpu = (unsigned)(b[-3] - '0') * 100 + (unsigned)(b[-2] - '0') * 10 +
	      (unsigned)(b[-1] - '0');
	f = b - 5; /* the space after the pid (or tgid) field */

	/* "(%7d) " or "(%5d) ", digits or dashes */
	r->tgid = -1;
	if (f[-1] == ')') {
		const char *o, *d;
		uint32_t v = 0;

		if (f - s < 24)
			return false; /* no room for "c-P (T) " */
		o = f[-9] == '(' ? f - 9 : f[-7] == '(' ? f - 7 : NULL;
		if (!o || o[-1] != ' ')
			return false;
		for (d = o + 1; *d == ' '; d++)
			;
		if (is_digit(*d)) {
			for (; is_digit(*d); d++)
				v = v * 10 + (uint32_t)(*d - '0');
			if (d != f - 1 || d - o > 8)
				return false;
			r->tgid = (int32_t)v;
		} else {
			for (; *d == '-'; d++)
				;
			if (d != f - 1)
				return false;
		}
		f = o - 1;
	}

	/* "-%-7d" or "-%-5d": digits, then spaces up to f */
	if (f[-8] == '-' && is_digit(f[-7]))
		pw = 7;
	else if (f[-6] == '-' && is_digit(f[-5]))
		pw = 5;
	else
		return false;
	dash = f - pw - 1;
	{
		/* the field and the space after it: 8 bytes (6 when 5 wide,
		 * then two more of the line); n digits, spaces up to f */
		uint64_t px = load8(dash + 1);
		uint64_t nd = nondigits(px);
		unsigned pn = nd ? (unsigned)__builtin_ctzll(nd) / 8 : 8;
		uint64_t span = pw == 7 ? ~0ull : (1ull << (8 * (pw + 1))) - 1;
		uint64_t want;

		/* 1 to pw digits, and every byte from there to f a space */
		if (pn == 0 || pn > pw)
			return false;
		want = span & ~((1ull << (8 * pn)) - 1) & H8;
		if ((bytes_eq(px, ' ') & want) != want)
			return false;
		px = (px << (8 * (8 - pn))) |
		     (0x3030303030303030ull >> (8 * pn));
		r->pid = (int32_t)value8(px);
	}
	if (dash[-1] == ' ')
		return false; /* a comm ending in ' ': parse_header decides */
	r->cpu = cpu;
	return true;
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

/*
 * Copies n <= 16 bytes with at most two overlapping word moves: a
 * variable-length memcpy() this short costs more in its set-up (rep movsb
 * here) than in its copying.
 */
static PH_ALWAYS_INLINE void copy16(char *dst, const char *src, size_t n)
{
	uint64_t a, b;
	uint32_t c, d;

	if (n >= 8) {
		memcpy(&a, src, 8);
		memcpy(&b, src + n - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&c, src, 4);
		memcpy(&d, src + n - 4, 4);
		memcpy(dst, &c, 4);
		memcpy(dst + n - 4, &d, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i];
	}
}

/* The body after "block_rq_EVENT: ", up to e. */
static bool parse_body(const char *p, const char *e, struct ph_iot_rec *r,
		       enum ph_iot_bad *why)
{
	const char *q;
	uint64_t maj, min;

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
	    !ph_iot_rwbs_decode(q, (size_t)(p - q), &r->op, &r->flags,
				&r->unknown_rwbs)) {
		*why = PH_IOT_BAD_RWBS;
		return false;
	}
	p++;

	/* BYTES */
	r->bytes = 0;
	if (r->event != PH_IOT_EV_COMPLETE &&
	    (!read_u32(&p, e, &r->bytes) || p >= e || *p++ != ' ')) {
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
		if (r->event == PH_IOT_EV_COMPLETE)
			return true; /* kernels without an error field */
		*why = PH_IOT_BAD_COMM;
		return false;
	}
	if (e - p < 3 || p[0] != ' ' || p[1] != '[') {
		*why = r->event == PH_IOT_EV_COMPLETE ? PH_IOT_BAD_TRAILING :
							PH_IOT_BAD_COMM;
		return false;
	}
	p += 2;
	if (e[-1] != ']') {
		*why = memchr(p, ']', (size_t)(e - p)) ?
			       PH_IOT_BAD_TRAILING :
			       (r->event == PH_IOT_EV_COMPLETE ?
					PH_IOT_BAD_ERROR :
					PH_IOT_BAD_COMM);
		return false;
	}
	e--;

	if (r->event != PH_IOT_EV_COMPLETE) {
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

/*
 * The fast path for the body, the counterpart of fast_header(): one pass
 * marks every space of the body in a bit mask (eight bytes at a time), so
 * the fields' bounds are known before any is read and the numbers are
 * converted from known lengths, independently of one another.  It takes
 * the common shape only ("()" for CMD, numbers of at most 16 digits, a
 * body of at most 64 bytes) and leaves everything else, malformed lines
 * included, to parse_body(), which must agree with it.
 */

/*
 * The digits [s, s + n), n <= 16, into *v; false if any is not a digit.
 * Reads the 16 bytes that end at s + n, which the caller vouches for.
 */
static PH_ALWAYS_INLINE bool known_number(const char *s, size_t n, uint64_t *v)
{
	const char *end = s + n;
	uint64_t x, low, hi = 0;
	size_t k = n;

	if (n == 0 || n > 16)
		return false;
	if (n > 8) {
		k = n - 8; /* the leading digits, then eight more */
		low = (1ull << (8 * (8 - k))) - 1;
		x = (load8(end - 16) & ~low) | (0x3030303030303030ull & low);
		if (nondigits(x))
			return false;
		hi = value8(x) * 100000000;
		k = 8;
	}
	low = k == 8 ? 0 : (1ull << (8 * (8 - k))) - 1;
	x = (load8(end - 8) & ~low) | (0x3030303030303030ull & low);
	if (nondigits(x))
		return false;
	*v = hi + value8(x);
	return true;
}

/* Bit k set when p[k] is a space, for the n <= 64 bytes at p. */
static PH_ALWAYS_INLINE uint64_t space_bits(const char *p, size_t n)
{
	uint64_t bits = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		bits |= ((bytes_eq(load8(p + i), ' ') >> 7) *
			 0x0102040810204080ull) >>
			56 << i;
	if (i < n) {
		/* the last bytes: the word that ends at p + n, shifted */
		uint64_t m = ((bytes_eq(load8(p + n - 8), ' ') >> 7) *
			      0x0102040810204080ull) >>
			     56;

		bits |= m >> (8 - (n - i)) << i;
	}
	return bits;
}

static PH_ALWAYS_INLINE bool fast_body(const char *s, const char *p,
				       const char *e, struct ph_iot_rec *r)
{
	size_t n = (size_t)(e - p), f[10], nf = 0, at = 0;
	uint64_t bits, maj, min, v;
	const char *comma;

	/* known_number() reads up to 16 bytes before a field's end */
	if (n < 20 || n > 64 || p - s < 16)
		return false;
	bits = space_bits(p, n);
	/* field starts: 0, then after each space (comm may hold spaces, so
	 * at most ten fields are looked at) */
	f[nf++] = 0;
	while (bits && nf < 10) {
		at = (size_t)__builtin_ctzll(bits);
		bits &= bits - 1;
		f[nf++] = at + 1;
	}
#define FLEN(i) (f[(i) + 1] - f[i] - 1)
	if (nf < 7)
		return false;
	/* MAJ,MIN */
	comma = memchr(p, ',', FLEN(0));
	if (!comma || !known_number(p, (size_t)(comma - p), &maj) ||
	    !known_number(comma + 1, FLEN(0) - (size_t)(comma - p) - 1, &min) ||
	    maj >= (1u << 12) || min >= (1u << 20))
		return false;
	r->dev = (uint32_t)(maj << 20 | min);
	/* RWBS */
	if (FLEN(1) == 0 || FLEN(1) > 9 ||
	    !ph_iot_rwbs_decode(p + f[1], FLEN(1), &r->op, &r->flags,
				&r->unknown_rwbs))
		return false;
	/* BYTES, then "()" */
	at = 2;
	r->bytes = 0;
	if (r->event != PH_IOT_EV_COMPLETE) {
		if (!known_number(p + f[2], FLEN(2), &v) || v > UINT32_MAX)
			return false;
		r->bytes = (uint32_t)v;
		at = 3;
	}
	if (FLEN(at) != 2 || p[f[at]] != '(' || p[f[at] + 1] != ')' ||
	    nf < at + 5)
		return false;
	/* SECTOR + NR_SECTOR */
	if (!known_number(p + f[at + 1], FLEN(at + 1), &r->sector) ||
	    FLEN(at + 2) != 1 || p[f[at + 2]] != '+' ||
	    !known_number(p + f[at + 3],
			  (at + 4 < nf ? FLEN(at + 3) : n - f[at + 3]), &v) ||
	    v > UINT32_MAX)
		return false;
	r->nr_sector = (uint32_t)v;
	at += 4;
	r->has_error = 0;
	r->error = 0;
	r->comm_len = 0;
	if (at == nf)
		return r->event == PH_IOT_EV_COMPLETE; /* no [ERROR] */
	/* [IOPRIO]: a field not starting with '[' */
	if (p[f[at]] != '[') {
		if (at + 1 >= nf || !ioprio_ok(p + f[at], p + f[at] + FLEN(at)))
			return false;
		at++;
	}
	/* [COMM] or [ERROR]: the rest of the line */
	if (p[f[at]] != '[' || e[-1] != ']' || n - f[at] < 2)
		return false;
	if (r->event != PH_IOT_EV_COMPLETE) {
		size_t k = n - f[at] - 2;

		if (k > PH_IOT_COMM_MAX)
			return false;
		r->comm_len = (uint8_t)k;
		copy16(r->comm, p + f[at] + 1, k);
		return true;
	}
	{
		const char *q = p + f[at] + 1;
		size_t k = n - f[at] - 2;
		bool neg = k && *q == '-';

		if (!known_number(q + neg, k - neg, &v) ||
		    v > (neg ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX))
			return false;
		r->error = neg ? (int32_t)(0 - v) : (int32_t)v;
		r->has_error = 1;
	}
	return true;
#undef FLEN
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
	return 0;
}

static inline bool is_ident(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

static PH_ALWAYS_INLINE enum ph_iot_line
parse_line(const char *line, size_t len, struct ph_iot_rec *rec,
	   enum ph_iot_bad *why, bool fast)
{
	const char *s = line, *e = line + len, *c = s;
	int first_bad = -1;

	while (e > s && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'))
		e--;
	/*
	 * The first "D: NAME:" (a digit, a colon, a space, an identifier and
	 * a colon) ends the timestamp.  A comm can hold such bytes too; then
	 * the header does not parse from there and the search goes on.
	 */
	for (; (c = memchr(c, ':', (size_t)(e - c))); c++) {
		const char *n = c + 2, *body, *t;
		enum ph_iot_bad w;
		int ev;

		if (c == s || !is_digit(c[-1]) || e - c < 3 || c[1] != ' ')
			continue;
		if (e - n > 9 && !memcmp(n, "block_rq_", 9) &&
		    (ev = block_event(n + 9, e, &body))) {
			rec->event = (uint8_t)ev;
			if (!(fast && fast_header(s, c, rec)) &&
			    !parse_header(s, c, rec, &w)) {
				if (first_bad < 0)
					first_bad = (int)w;
				continue;
			}
			if (!(fast && body < e && *body != ' ' &&
			      fast_body(s, body, e, rec)) &&
			    !parse_body(body, e, rec, why))
				return PH_IOT_LINE_MALFORMED;
			return PH_IOT_LINE_BLOCK;
		}
		if (first_bad >= 0)
			continue; /* only another block event may follow */
		for (t = n; t < e && is_ident(*t); t++)
			;
		/* another event, if a header stands before it */
		if (t > n && t < e && *t == ':' &&
		    ((fast && fast_header(s, c, rec)) ||
		     parse_header(s, c, rec, &w)))
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
	return parse_line(line, len, rec, why, true);
}

enum ph_iot_line ph_iot_parse_line_general(const char *line, size_t len,
					   struct ph_iot_rec *rec,
					   enum ph_iot_bad *why)
{
	return parse_line(line, len, rec, why, false);
}
