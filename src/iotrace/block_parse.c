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

/* Letters after the operation letter: a PH_IOT_F_* flag, E_LETTER for
 * 'E' (secure erase, or REQ_SECURE), 0 for a letter we do not know. */
#define E_LETTER 0x80
static const uint8_t later_letter[256] = {
	['F'] = PH_IOT_F_FUA,  ['A'] = PH_IOT_F_AHEAD,	 ['S'] = PH_IOT_F_SYNC,
	['M'] = PH_IOT_F_META, ['B'] = PH_IOT_F_BARRIER, ['E'] = E_LETTER,
};

/* Operation letters, as their op + 1; 0 for any other byte. */
static const uint8_t op_letter[256] = {
	['R'] = PH_IOT_OP_READ + 1,    ['W'] = PH_IOT_OP_WRITE + 1,
	['F'] = PH_IOT_OP_FLUSH + 1,   ['N'] = PH_IOT_OP_NONE + 1,
	['D'] = PH_IOT_OP_DISCARD + 1,
};

static PH_ALWAYS_INLINE bool rwbs_decode(const char *s, size_t n, uint8_t *op,
					 uint8_t *flags, uint8_t *unknown)
{
	size_t i = 0;
	unsigned f = 0, bad = 0, es = 0, o;

	if (!n)
		return false;
	/* A leading F is REQ_PREFLUSH only when an operation letter follows. */
	if (n >= 2 && s[0] == 'F' && op_letter[(unsigned char)s[1]]) {
		f = PH_IOT_F_PREFLUSH;
		i = 1;
	}
	o = op_letter[(unsigned char)s[i]];
	if (!o)
		return false;
	o--;
	if (o == PH_IOT_OP_DISCARD && i + 1 < n && s[i + 1] == 'E') {
		o = PH_IOT_OP_SECURE_ERASE;
		i++;
	}
	for (i++; i < n; i++) {
		unsigned t = later_letter[(unsigned char)s[i]];

		f |= t;
		bad += !t;
		es += t >> 7;
	}
	/* pre-4.8 kernels: 'E' after D is discard + REQ_SECURE, a secure
	 * erase; after another op (or a second E) the REQ_SECURE flag */
	if (es && o == PH_IOT_OP_DISCARD) {
		o = PH_IOT_OP_SECURE_ERASE;
		es--;
	}
	if (es)
		f |= PH_IOT_F_SECURE;
	*op = (uint8_t)o;
	*flags = (uint8_t)(f & ~E_LETTER);
	*unknown = (uint8_t)bad;
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

static PH_ALWAYS_INLINE uint64_t load8(const char *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x; /* p[0] in the low byte */
}

/* The value of 8 digits 0..9, one a byte (p[0] in the low byte), in three
 * multiplies. */
static PH_ALWAYS_INLINE uint64_t digits8(uint64_t x)
{
	x = (x * 10) + (x >> 8);
	x = (((x & 0x000000ff000000ffull) * 0x000f424000000064ull) +
	     (((x >> 16) & 0x000000ff000000ffull) * 0x0000271000000001ull)) >>
	    32;
	return x;
}

/* The value of 8 ASCII digits (p[0] in the low byte). */
static PH_ALWAYS_INLINE uint64_t value8(uint64_t x)
{
	return digits8(x - 0x3030303030303030ull);
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
 * The TGID column that ends at p (p[-1] is ')'): "(   1977)", or dashes
 * when the tgid is not known ("(-------)", Android's "(-----)"), its '('
 * at most 13 bytes back.  Returns the '(' and sets *tgid (left alone for
 * dashes), or NULL.
 */
static const char *tgid_field(const char *s, const char *p, int32_t *tgid)
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
		p = tgid_field(s, p, &r->tgid);
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
	    !rwbs_decode(q, (size_t)(p - q), &r->op, &r->flags,
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

/*
 * The fast path, for lines as kernels print them: the header at fixed
 * widths (trace_print_context()),
 *
 *   "%16s-%-7d " ["(%7d) "] "[%03d] " [FLAGS " "] "%5llu.%06lu: "
 *
 * (pid and tgid 5 wide on older kernels, FLAGS 4 or 5 bytes or none), and
 * a body of short fields.  Two windows of the line -- its first 64 bytes,
 * which hold the timestamp's ':' in all those layouts, and its last 64,
 * which hold the body -- are classified sixteen bytes at a time (SSE2)
 * into bit masks: bit i says whether byte i is a digit, a space, a colon.
 * The fields are then read off the masks: the ':' is the first one after a
 * digit and before a space, the header's fields are tested at the fixed
 * offsets from it, where a body field ends is where a run of bits ends
 * (one count of trailing zeros), a number is all digits when its run is as
 * long as its field, and its value is converted four or eight digits at a
 * time.  No field is scanned for byte by byte, no byte is looked at twice.
 * (docs/iotrace.md, "Performance", has what that saves.)
 * Whatever the fast path does not recognise it leaves to the general
 * reader (parse_header(), parse_body()), which reads every layout, and the
 * two must agree on what they both accept: the fuzz target checks that on
 * every line, and the unit tests on every one-byte change to each layout.
 */

struct masks {
	uint64_t digit, space, colon;
};

/*
 * The numbers of a line shape (struct ph_iot_shape), one "lane" each: the
 * eight bytes a number of up to eight digits ends, and which of them are
 * its digits.  Four at a time for AVX2: keep the order.
 */
enum {
	L_SECS,
	L_FRAC,
	L_CPU,
	L_PID,
	L_MAJ,
	L_MIN,
	L_BYTES,
	L_NR,
	L_SECTOR_HI, /* a sector's digits before its last eight */
	L_SECTOR,
	L_ERROR,
	L_TGID,
};

/* The n digits that end at byte `end` of a line are lane `lane`'s;
 * n = 0: none (the lane's load then reads the line's first 8 bytes).
 * Numbers of more than eight digits are not lanes. */
static PH_ALWAYS_INLINE void mark(struct ph_iot_shape *sh, unsigned lane,
				  unsigned end, unsigned n)
{
	sh->at[lane] = (uint8_t)(n ? end - 8 : 0);
	sh->keep[lane] = n && n <= 8 ? ~0ull << 8 * (8 - n) : 0;
	sh->wide |= n > 8;
}

/* A sector's digits: the last eight in one lane, the rest in another. */
static PH_ALWAYS_INLINE void mark_sector(struct ph_iot_shape *sh, unsigned end,
					 unsigned n)
{
	mark(sh, L_SECTOR, end, n < 8 ? n : 8);
	mark(sh, L_SECTOR_HI, end - 8, n > 8 ? n - 8 : 0);
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
#endif

static PH_ALWAYS_INLINE uint32_t load4(const char *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap32(x);
#endif
	return x; /* p[0] in the low byte */
}

/* Three bytes as load4() sees them. */
static PH_ALWAYS_INLINE uint32_t word3(const char *w)
{
	return (uint32_t)(unsigned char)w[0] |
	       (uint32_t)(unsigned char)w[1] << 8 |
	       (uint32_t)(unsigned char)w[2] << 16;
}

/* Bit 7 of each byte of m (the rest clear) as 8 bits, byte 0 lowest. */
static PH_ALWAYS_INLINE unsigned bits8(uint64_t m)
{
	return (unsigned)(((m >> 7) * 0x0102040810204080ull) >> 56);
}

/* classify16_sse2() eight bytes at a time: machines without SSE2 (and
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

	(void)swar; /* no choice without SSE2 */
#if defined(__SSE2__)
	if (!swar)
		classify16_sse2(p + at, &dg, &sp, &co);
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

/* How many bits of m are set in a row just below bit x, 1 <= x <= 63. */
static PH_ALWAYS_INLINE unsigned run_below(uint64_t m, unsigned x)
{
	/* a sentinel below the x bits looked at stops the count at x */
	return (unsigned)__builtin_clzll((~m << (64 - x)) | (1ull << (63 - x)));
}

/* How many bits of m are set in a row from bit x up; bit 63 of m must be
 * clear (a window of at most 63 bytes). */
static PH_ALWAYS_INLINE unsigned run_from(uint64_t m, unsigned x)
{
	return (unsigned)__builtin_ctzll(~m >> x);
}

/*
 * The 1..8 digits that end at end, whose 8 bytes are readable: moved to
 * the low bytes, where subtracting '0' from every byte borrows only into
 * the bytes above them, and back to the top, zeros below.
 */
static PH_ALWAYS_INLINE uint64_t num8(const char *end, unsigned n)
{
	unsigned sh = 64 - 8 * n;

	return digits8(((load8(end - 8) >> sh) - 0x3030303030303030ull) << sh);
}

/* The 1..4 digits that end at end, whose 4 bytes are readable: num8() in
 * 32 bits, one multiply fewer. */
static PH_ALWAYS_INLINE uint32_t num4(const char *end, unsigned n)
{
	unsigned sh = 32 - 8 * n;
	uint32_t x = ((load4(end - 4) >> sh) - 0x30303030u) << sh;

	x = x * 10 + (x >> 8); /* bytes 0 and 2: the two pairs */
	return (x & 0xff) * 100 + (x >> 16 & 0xff);
}

/* The 1..16 digits that end at end, whose 16 bytes are readable.  For
 * fields usually short (a minor, a sector count, an error). */
static PH_ALWAYS_INLINE uint64_t num16(const char *end, unsigned n)
{
	if (n <= 4)
		return num4(end, n);
	if (n <= 8)
		return num8(end, n);
	return num8(end - 8, n - 8) * 100000000 + num8(end, 8);
}

/*
 * parse_header() over the masks of the line's first 64 bytes, c (< 63)
 * the timestamp's ':', for the kernel's own layout only: once the width
 * of the seconds is known every field sits at a fixed offset from the
 * ':', so each is checked by one test of a mask (or a byte), independently
 * of the others, instead of found by a chain of scans.  Takes six
 * fraction digits, up to 8 of seconds, FLAGS of 5 or 4 bytes or none,
 * three CPU digits, a comm not ending in a space; false for anything
 * else, which parse_header() then reads.
 */
static PH_ALWAYS_INLINE bool mask_header(const char *s, unsigned c,
					 const struct masks *m,
					 struct ph_iot_rec *r,
					 struct ph_iot_shape *sh)
{
	unsigned close = 0;
	uint64_t sp = m->space, dg = m->digit;
	unsigned n, w, t, b, f, dash, np, pw;

	/* "S.FFFFFF": bits c-8 .. c-1 are digit, not ('.'), six digits */
	if (c < 40 || (dg >> (c - 8) & 0xff) != 0xfd || s[c - 7] != '.')
		return false;
	n = run_below(dg, c - 7);
	if (n > 8)
		return false;
	/* the seconds right-aligned in w >= 5, and the space before */
	w = n < 5 ? 5 : n;
	t = c - 8 - w;
	if ((sp >> t & ((2ull << (w - n)) - 1)) != (2ull << (w - n)) - 1)
		return false;
	r->ts_ns = (int64_t)(num8(s + c - 7, n) * 1000000000 +
			     num8(s + c, 6) * 1000);

	/* FLAGS: 5 or 4 bytes that are not spaces after one that is, or
	 * none; then "[CCC] " */
	if (s[t - 1] == ']')
		b = t - 1;
	else if ((sp >> (t - 6) & 0x3f) == 1)
		b = t - 7;
	else if ((sp >> (t - 5) & 0x1f) == 1)
		b = t - 6;
	else
		return false;
	if (s[b] != ']' || s[b - 4] != '[' || (dg >> (b - 3) & 7) != 7 ||
	    !(sp >> (b - 5) & 1))
		return false;
	r->cpu = (uint32_t)(s[b - 3] - '0') * 100 +
		 (uint32_t)(s[b - 2] - '0') * 10 + (uint32_t)(s[b - 1] - '0');
	f = b - 5; /* the space after the pid (or the tgid) */

	/* (TGID), then one space */
	r->tgid = -1;
	if (s[f - 1] == ')') {
		const char *open = tgid_field(s, s + f, &r->tgid);

		close = f - 1;
		if (!open || open - s < 16 || !(sp >> (open - s - 1) & 1))
			return false;
		f = (unsigned)(open - s) - 1;
	}

	/* "-%-7d" or "-%-5d": 1..pw digits, then spaces up to f */
	if (s[f - 8] == '-' && (dg >> (f - 7) & 1))
		pw = 7;
	else if (s[f - 6] == '-' && (dg >> (f - 5) & 1))
		pw = 5;
	else
		return false;
	dash = f - pw - 1;
	np = run_from(dg, dash + 1);
	if (np > pw ||
	    (sp >> (dash + 1 + np) & ((1ull << (pw + 1 - np)) - 1)) !=
		    (1ull << (pw + 1 - np)) - 1)
		return false;
	/* a comm ending in ' ' is parse_header()'s to judge */
	if (dash < 8 || s[dash - 1] == ' ')
		return false;
	r->pid = (int32_t)num8(s + dash + 1 + np, np);
	if (sh) {
		mark(sh, L_SECS, c - 7, n);
		mark(sh, L_FRAC, c, 6);
		mark(sh, L_CPU, b, 3);
		mark(sh, L_PID, dash + 1 + np, np);
		mark(sh, L_TGID, close,
		     r->tgid >= 0 ? run_below(dg, close) : 0);
	}
	return true;
}

/* "be,0,4" at p[a, b): lower-case letters, ',', digits, ',', digits. */
static PH_ALWAYS_INLINE bool mask_ioprio(const char *p, unsigned a, unsigned b,
					 uint64_t digit)
{
	const uint64_t keep = 0x000000ff00ffffffull; /* "be,?,?" */
	unsigned i = a, d;

	/* what this kernel prints for most requests: "be,0,N" */
	if (b - a == 6 && (load8(p + a) & keep) == (load8("be,0,0 [") & keep) &&
	    (digit >> (a + 3) & 5) == 5)
		return true;
	while (i < b && (unsigned char)(p[i] - 'a') < 26)
		i++;
	if (i == a || i >= b || p[i] != ',')
		return false;
	d = run_from(digit, i + 1);
	i += 1 + d;
	if (!d || i >= b || p[i] != ',')
		return false;
	d = run_from(digit, i + 1);
	return d && i + 1 + d == b;
}

/*
 * parse_body() over the body's masks: p[0, n), 20 <= n <= 63, the end of
 * a line of at least 64 bytes; w holds the masks of its last 64 (a
 * number's 16-byte load reaches back before p).
 * Takes "()" for CMD and numbers of at most 16 digits; false for anything
 * else, malformed lines included, which parse_body() then reads.
 */
static PH_ALWAYS_INLINE bool mask_body(const char *p, unsigned n,
				       const struct masks *w,
				       struct ph_iot_rec *r,
				       struct ph_iot_shape *sh, unsigned at)
{
	struct masks m;
	unsigned a, b, i, k;
	uint64_t maj, min, v;

	m.digit = w->digit >> (64 - n);
	m.space = w->space >> (64 - n);
	/* MAJ,MIN */
	a = run_from(m.digit, 0);
	if (a == 0 || a > 4 || p[a] != ',')
		return false;
	b = run_from(m.digit, a + 1);
	if (b == 0 || b > 7 || p[a + 1 + b] != ' ')
		return false;
	maj = num4(p + a, a);
	min = b <= 4 ? num4(p + a + 1 + b, b) : num8(p + a + 1 + b, b);
	if (maj >= (1u << 12) || min >= (1u << 20))
		return false;
	r->dev = (uint32_t)(maj << 20 | min);
	if (sh) {
		mark(sh, L_MAJ, at + a, a);
		mark(sh, L_MIN, at + a + 1 + b, b);
		mark(sh, L_BYTES, 8, 0);
		mark(sh, L_ERROR, 8, 0);
	}

	/* RWBS */
	i = a + b + 2;
	if (!(m.space >> i))
		return false;
	k = (unsigned)__builtin_ctzll(m.space >> i);
	if (k == 0 || k > 9 ||
	    !rwbs_decode(p + i, k, &r->op, &r->flags, &r->unknown_rwbs))
		return false;
	i += k + 1;

	/* BYTES */
	r->bytes = 0;
	if (r->event != PH_IOT_EV_COMPLETE) {
		k = run_from(m.digit, i);
		if (k == 0 || k > 16 || i + k >= n || p[i + k] != ' ' ||
		    (v = k <= 8 ? num8(p + i + k, k) : num16(p + i + k, k)) >
			    UINT32_MAX)
			return false;
		r->bytes = (uint32_t)v;
		if (sh)
			mark(sh, L_BYTES, at + i + k, k);
		i += k + 1;
	}

	/* "() " SECTOR " + " NR_SECTOR (a digit after each: 4 bytes read) */
	if (i + 4 > n || (load4(p + i) & 0xffffff) != word3("() "))
		return false;
	i += 3;
	k = run_from(m.digit, i);
	if (k == 0 || k > 16 || i + k + 4 > n ||
	    (load4(p + i + k) & 0xffffff) != word3(" + "))
		return false;
	r->sector = k <= 8 ? num8(p + i + k, k) : num16(p + i + k, k);
	if (sh)
		mark_sector(sh, at + i + k, k);
	i += k + 3;
	k = run_from(m.digit, i);
	if (k == 0 || k > 16 || (v = num16(p + i + k, k)) > UINT32_MAX)
		return false;
	r->nr_sector = (uint32_t)v;
	if (sh)
		mark(sh, L_NR, at + i + k, k);
	i += k;

	r->has_error = 0;
	r->error = 0;
	r->comm_len = 0;
	if (i == n)
		return r->event == PH_IOT_EV_COMPLETE; /* no [ERROR] */
	/* the bytes left end in ']' (the line's trailing spaces are gone) */
	if (p[i] != ' ' || i + 3 > n || p[n - 1] != ']')
		return false;
	/* [IOPRIO]: a field not starting with '[' */
	if (p[i + 1] != '[') {
		if (!(m.space >> (i + 1)))
			return false;
		k = (unsigned)__builtin_ctzll(m.space >> (i + 1));
		if (!mask_ioprio(p, i + 1, i + 1 + k, m.digit))
			return false;
		i += 1 + k;
		if (i + 3 > n || p[i + 1] != '[')
			return false;
	}
	/* [COMM] or [ERROR]: the rest of the line */
	i += 2;
	k = n - 1 - i;
	if (r->event != PH_IOT_EV_COMPLETE) {
		if (k > PH_IOT_COMM_MAX)
			return false;
		r->comm_len = (uint8_t)k;
		copy16(r->comm, p + i, k);
		if (sh)
			sh->comm_at = (uint8_t)(at + i);
		return true;
	}
	{
		unsigned neg = p[i] == '-';

		if (k - neg == 0 || k - neg > 16 ||
		    run_from(m.digit, i + neg) != k - neg)
			return false;
		v = num16(p + n - 1, k - neg);
		if (v > (neg ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX))
			return false;
		r->error = neg ? (int32_t)(0 - v) : (int32_t)v;
		r->has_error = 1;
		if (sh) {
			mark(sh, L_ERROR, at + n - 1, k - neg);
			sh->neg = (uint8_t)neg;
		}
	}
	return true;
}

/*
 * The whole line by the fast path when it can, with parse_line()'s
 * answer: the first "D: " colon is the timestamp's, names an event, and
 * the header is one mask_header() reads.  s[0, e) is at least 64 bytes;
 * h holds the masks of its first 64, t those of its last 64.  False
 * leaves the line to the general reader.
 */
static PH_ALWAYS_INLINE bool
fast_line(const char *s, const char *e, const struct masks *h,
	  const struct masks *t, struct ph_iot_rec *r, enum ph_iot_bad *why,
	  enum ph_iot_line *kind, struct ph_iot_shape *sh)
{
	uint64_t cand, w;
	unsigned c;
	const char *n, *body, *q;

	/* a ':' after a digit and before a space: where parse_line()'s
	 * search for the timestamp stops first */
	cand = h->colon & h->digit << 1 & h->space >> 1;
	if (!cand)
		return false;
	c = (unsigned)__builtin_ctzll(cand);
	n = s + c + 2;
	if (e - n < 40)
		return false;
	w = load8(n + 9);
	if (load8(n) == load8("block_rq") && n[8] == '_') {
		if ((w & 0x00ffffffffffffffull) ==
		    (load8("issue: ?") & 0x00ffffffffffffffull)) {
			r->event = PH_IOT_EV_ISSUE;
			body = n + 16;
		} else if (w == load8("complete") && n[17] == ':' &&
			   n[18] == ' ') {
			r->event = PH_IOT_EV_COMPLETE;
			body = n + 19;
		} else if (w == load8("insert: ")) {
			r->event = PH_IOT_EV_INSERT;
			body = n + 17;
		} else {
			goto other;
		}
		if (!mask_header(s, c, h, r, sh))
			return false;
		if (*body != ' ' && e - body >= 20 && e - body <= 63 &&
		    mask_body(body, (unsigned)(e - body), t, r, sh,
			      (unsigned)(body - s))) {
			*kind = PH_IOT_LINE_BLOCK;
			if (sh)
				sh->ok = 1;
		} else
			*kind = parse_body(body, e, r, why) ?
					PH_IOT_LINE_BLOCK :
					PH_IOT_LINE_MALFORMED;
		return true;
	}
other:
	for (q = n; q < e && is_ident(*q); q++)
		;
	if (q == n || q == e || *q != ':' || !mask_header(s, c, h, r, NULL))
		return false;
	*kind = PH_IOT_LINE_OTHER;
	return true;
}

/* The line's end without its trailing blanks. */
static PH_ALWAYS_INLINE const char *trim_end(const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'))
		e--;
	return e;
}

/*
 * The general reader: s[0, e), trimmed.  The first "D: NAME:" (a digit, a
 * colon, a space, an identifier and a colon) ends the timestamp.  A comm
 * can hold such bytes too; then the header does not parse from there and
 * the search goes on.
 */
static enum ph_iot_line general_line(const char *s, const char *e,
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
			if (!parse_body(body, e, rec, why))
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
	return general_line(line, e, rec, why);
}

enum ph_iot_line ph_iot_parse_line_general(const char *line, size_t len,
					   struct ph_iot_rec *rec,
					   enum ph_iot_bad *why)
{
	return general_line(line, trim_end(line, line + len), rec, why);
}

/*
 * Many lines at a time (ph_iot_parse_lines()).  A session's line is found
 * and classified in one pass: the 128 bytes from its start are classified
 * once into masks of newlines, digits, spaces and colons, so the newline
 * that ends a line of 64 to 127 bytes -- every line the kernel prints for
 * a block event -- is the lowest bit of a mask, and fast_line()'s two
 * windows, the first 64 bytes and the last 64, are read off the same
 * masks (the second by a shift) instead of classified again.  Shorter and
 * longer lines, and the last 127 bytes of a buffer, take
 * ph_iot_parse_line().  With AVX2 the 128 bytes are four loads, with the
 * x86-64 baseline (SSE2) eight; elsewhere lines are read one at a time
 * (lines_plain()), where eight-byte words would cost more than they save.
 *
 * Shapes.  Most of the work of reading a line is checking it: that each
 * field is where the layout puts it, all digits, followed by the right
 * byte.  Consecutive lines of a trace are mostly alike -- the same tasks,
 * devices, flags and sizes -- and differ in their digits.  Two lines with
 * their digits in the same places and the same bytes everywhere else (the
 * line's "shape": its digit mask, and its bytes with every digit made
 * 0xff, compared sixteen or thirty-two at a time) take the same path
 * through fast_line(), test for test, except where a test looks at a
 * number's value.  So when the fast path reads a line whole, it records
 * where each number is (struct ph_iot_shape), and a later line of that
 * shape is read by converting its numbers there -- four at a time with
 * AVX2 -- and repeating the value tests.  Only shapes whose numbers have
 * at most eight digits are kept (a sector's last eight and the rest are
 * two numbers), so no value can be out of range but the device's: a major
 * over 4095 or a minor over 2^20 - 1 sends the line down the whole path,
 * which says what is wrong with it.  Sixteen shapes are kept, the slot
 * chosen by a hash of the line's masks; the fixture, dd and fio on one
 * disk, finds its shape there for 98.5% of its lines, another capture on
 * this machine (tests/golden/iotrace/raw-6.18) for 91%.  A line of a
 * new shape costs the comparison and the recording on top of the whole
 * path.
 */
struct masks128 {
	uint64_t nl[2], digit[2], space[2]; /* bytes 0-63, 64-127 */
	uint64_t colon;			    /* bytes 0-63 only */
	uint64_t same[2]; /* canon equal to the chosen shape's */
	uint8_t canon[128] __attribute__((aligned(32))); /* digits 0xff */
};

/* The masks eight bytes at a time: the reference the SIMD ones are
 * tested against (ph_iot_classify128_agree()). */
static PH_ALWAYS_INLINE void classify128_swar(const char *p, struct masks128 *m)
{
	memset(m, 0, offsetof(struct masks128, same));
	for (unsigned i = 0; i < 16; i++) {
		uint64_t x = load8(p + 8 * i), d = ~nondigits(x) & H8;
		unsigned at = 8 * (i & 7), h = i >> 3;

		m->digit[h] |= (uint64_t)bits8(d) << at;
		m->space[h] |= (uint64_t)bits8(bytes_eq(x, ' ')) << at;
		m->nl[h] |= (uint64_t)bits8(bytes_eq(x, '\n')) << at;
		if (i < 8)
			m->colon |= (uint64_t)bits8(bytes_eq(x, ':')) << at;
		x |= (d >> 7) * 0xff;
		memcpy(m->canon + 8 * i, &x, 8); /* little-endian order */
	}
}

/* Which of the 128 bytes of a and b are equal, bit i for byte i. */
static PH_ALWAYS_INLINE void same128_swar(const uint8_t *a, const uint8_t *b,
					  uint64_t same[2])
{
	same[0] = same[1] = 0;
	for (unsigned i = 0; i < 16; i++) {
		uint64_t x, y;

		memcpy(&x, a + 8 * i, 8);
		memcpy(&y, b + 8 * i, 8);
		same[i >> 3] |= (uint64_t)bits8(bytes_eq(x ^ y, 0))
				<< 8 * (i & 7);
	}
}

#if defined(__SSE2__)
/* Bit i of each mask for x[i]: digit, space, newline; the bytes with
 * digits made 0xff to canon. */
static PH_ALWAYS_INLINE void classify16b(__m128i x, uint64_t *dg, uint64_t *sp,
					 uint64_t *nl, uint8_t *canon)
{
	__m128i t = _mm_sub_epi8(x, _mm_set1_epi8('0'));
	__m128i d = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t);

	*dg = (unsigned)_mm_movemask_epi8(d);
	*sp = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
	*nl = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(x, _mm_set1_epi8('\n')));
	_mm_store_si128((__m128i *)(void *)canon, _mm_or_si128(x, d));
}

static PH_ALWAYS_INLINE uint64_t colon16(__m128i x)
{
	return (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(x, _mm_set1_epi8(':')));
}

/* Sixteen bytes at a time, written out (the compiler does not unroll a
 * loop of eight at -O2). */
static PH_ALWAYS_INLINE void classify128_base(const char *p, struct masks128 *m)
{
	const __m128i *v = (const __m128i *)(const void *)p;
	__m128i x[8];
	uint64_t dg[8], sp[8], nl[8];

	for (unsigned i = 0; i < 8; i++)
		x[i] = _mm_loadu_si128(v + i);
	classify16b(x[0], &dg[0], &sp[0], &nl[0], m->canon);
	classify16b(x[1], &dg[1], &sp[1], &nl[1], m->canon + 16);
	classify16b(x[2], &dg[2], &sp[2], &nl[2], m->canon + 32);
	classify16b(x[3], &dg[3], &sp[3], &nl[3], m->canon + 48);
	classify16b(x[4], &dg[4], &sp[4], &nl[4], m->canon + 64);
	classify16b(x[5], &dg[5], &sp[5], &nl[5], m->canon + 80);
	classify16b(x[6], &dg[6], &sp[6], &nl[6], m->canon + 96);
	classify16b(x[7], &dg[7], &sp[7], &nl[7], m->canon + 112);
	m->digit[0] = dg[0] | dg[1] << 16 | dg[2] << 32 | dg[3] << 48;
	m->digit[1] = dg[4] | dg[5] << 16 | dg[6] << 32 | dg[7] << 48;
	m->space[0] = sp[0] | sp[1] << 16 | sp[2] << 32 | sp[3] << 48;
	m->space[1] = sp[4] | sp[5] << 16 | sp[6] << 32 | sp[7] << 48;
	m->nl[0] = nl[0] | nl[1] << 16 | nl[2] << 32 | nl[3] << 48;
	m->nl[1] = nl[4] | nl[5] << 16 | nl[6] << 32 | nl[7] << 48;
	m->colon = colon16(x[0]) | colon16(x[1]) << 16 | colon16(x[2]) << 32 |
		   colon16(x[3]) << 48;
}

static PH_ALWAYS_INLINE uint64_t same16(const uint8_t *a, const uint8_t *b)
{
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
		_mm_load_si128((const __m128i *)(const void *)a),
		_mm_loadu_si128((const __m128i *)(const void *)b)));
}

static PH_ALWAYS_INLINE void same128_base(const uint8_t *a, const uint8_t *b,
					  uint64_t same[2])
{
	same[0] = same16(a, b) | same16(a + 16, b + 16) << 16 |
		  same16(a + 32, b + 32) << 32 | same16(a + 48, b + 48) << 48;
	same[1] = same16(a + 64, b + 64) | same16(a + 80, b + 80) << 16 |
		  same16(a + 96, b + 96) << 32 | same16(a + 112, b + 112) << 48;
}
#else
static PH_ALWAYS_INLINE void classify128_base(const char *p, struct masks128 *m)
{
	classify128_swar(p, m);
}

static PH_ALWAYS_INLINE void same128_base(const uint8_t *a, const uint8_t *b,
					  uint64_t same[2])
{
	same128_swar(a, b, same);
}
#endif

#if defined(__x86_64__) && defined(__SSE2__) && \
	(defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_PATH 1
#include <immintrin.h>

#define TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2")))

/* Bit i of each mask for x[i]: digit, space, newline; the bytes with
 * digits made 0xff to canon. */
TARGET_AVX2 static PH_ALWAYS_INLINE void
classify32(__m256i x, uint64_t *dg, uint64_t *sp, uint64_t *nl, uint8_t *canon)
{
	__m256i t = _mm256_sub_epi8(x, _mm256_set1_epi8('0'));
	__m256i d =
		_mm256_cmpeq_epi8(_mm256_min_epu8(t, _mm256_set1_epi8(9)), t);

	*dg = (uint32_t)_mm256_movemask_epi8(d);
	*sp = (uint32_t)_mm256_movemask_epi8(
		_mm256_cmpeq_epi8(x, _mm256_set1_epi8(' ')));
	*nl = (uint32_t)_mm256_movemask_epi8(
		_mm256_cmpeq_epi8(x, _mm256_set1_epi8('\n')));
	_mm256_store_si256((__m256i *)(void *)canon, _mm256_or_si256(x, d));
}

TARGET_AVX2 static PH_ALWAYS_INLINE uint64_t colon32(__m256i x)
{
	return (uint32_t)_mm256_movemask_epi8(
		_mm256_cmpeq_epi8(x, _mm256_set1_epi8(':')));
}

/* classify128_base() 32 bytes at a time (written out: the compiler
 * does not unroll a loop of four at -O2). */
TARGET_AVX2 static PH_ALWAYS_INLINE void classify128_avx2(const char *p,
							  struct masks128 *m)
{
	const __m256i *v = (const __m256i *)(const void *)p;
	__m256i a = _mm256_loadu_si256(v), b = _mm256_loadu_si256(v + 1);
	__m256i c = _mm256_loadu_si256(v + 2), d = _mm256_loadu_si256(v + 3);
	uint64_t dg[4], sp[4], nl[4];

	classify32(a, &dg[0], &sp[0], &nl[0], m->canon);
	classify32(b, &dg[1], &sp[1], &nl[1], m->canon + 32);
	classify32(c, &dg[2], &sp[2], &nl[2], m->canon + 64);
	classify32(d, &dg[3], &sp[3], &nl[3], m->canon + 96);
	m->digit[0] = dg[0] | dg[1] << 32;
	m->digit[1] = dg[2] | dg[3] << 32;
	m->space[0] = sp[0] | sp[1] << 32;
	m->space[1] = sp[2] | sp[3] << 32;
	m->nl[0] = nl[0] | nl[1] << 32;
	m->nl[1] = nl[2] | nl[3] << 32;
	m->colon = colon32(a) | colon32(b) << 32;
}

TARGET_AVX2 static PH_ALWAYS_INLINE uint64_t same32(const uint8_t *a,
						    const uint8_t *b)
{
	return (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
		_mm256_load_si256((const __m256i *)(const void *)a),
		_mm256_loadu_si256((const __m256i *)(const void *)b)));
}

TARGET_AVX2 static PH_ALWAYS_INLINE void
same128_avx2(const uint8_t *a, const uint8_t *b, uint64_t same[2])
{
	same[0] = same32(a, b) | same32(a + 32, b + 32) << 32;
	same[1] = same32(a + 64, b + 64) | same32(a + 96, b + 96) << 32;
}
#endif

/* A line ph_iot_parse_lines() leaves to the session: an empty one, a
 * comment, or one that may be a loss marker ("CPU:"). */
static PH_ALWAYS_INLINE bool session_reads(char c)
{
	return c == '\n' || c == '#' || c == 'C';
}

static PH_ALWAYS_INLINE void done(struct ph_iot_parsed *out, const char *p,
				  const char *nl, enum ph_iot_line kind,
				  enum ph_iot_bad why)
{
	out->line = p;
	out->len = (size_t)(nl - p);
	out->kind = (uint8_t)kind;
	out->why = (uint8_t)why;
}

/* The line at p read without the masks: the newline by memchr().
 * Returns the next line's start, or NULL when p's has no newline. */
static const char *plain_line(const char *p, const char *end,
			      struct ph_iot_parsed *out)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	enum ph_iot_bad why = PH_IOT_BAD_COUNT;
	enum ph_iot_line kind;

	if (!nl)
		return NULL;
	kind = ph_iot_parse_line(p, (size_t)(nl - p), &out->rec, &why);
	done(out, p, nl, kind, why);
	return nl + 1;
}

#if defined(__SSE2__)
/* Bits off .. off + 63 of a 128-bit mask, 0 <= off <= 63. */
static PH_ALWAYS_INLINE uint64_t window(const uint64_t m[2], unsigned off)
{
	return m[0] >> off | m[1] << 1 << (63 - off);
}

/*
 * The slot a line's shape is kept in: a hash of its masks up to its
 * newline (when there is none in the 128 bytes, of all of them: such a
 * line is not kept anyway).  The body's masks count too: lines alike up
 * to their sixty-fourth byte differ after it, in a sector's or a size's
 * digits, as often as not.
 */
static PH_ALWAYS_INLINE struct ph_iot_shape *slot(struct ph_iot_lines *l,
						  const struct masks128 *m)
{
	uint64_t upto_nl = m->nl[1] ^ (m->nl[1] - 1);
	uint64_t body = (m->space[1] ^ m->digit[1] << 5) & upto_nl;
	uint64_t h = (m->space[0] ^ m->digit[0] >> 3 ^
		      body * 0xd6e8feb86659fd93ull) *
		     0x9e3779b97f4a7c15ull;

	return &l->shape[h >> (64 - PH_IOT_SHAPE_BITS)];
}

/* Bits 64 .. len - 1 of a line of len bytes, 65 <= len <= 128, in its
 * masks' second word. */
static PH_ALWAYS_INLINE uint64_t upto(unsigned len)
{
	return (2ull << (len - 65)) - 1;
}

/* Whether the line m classifies has sh's shape: its digits where sh's
 * are, and its other bytes, newline included, sh's bytes. */
static PH_ALWAYS_INLINE bool same_shape(const struct ph_iot_shape *sh,
					const struct masks128 *m)
{
	uint64_t cut;

	if (!sh->len)
		return false;
	cut = upto(sh->len);
	return m->digit[0] == sh->digit[0] &&
	       (m->digit[1] & cut) == sh->digit[1] && !~m->same[0] &&
	       !(~m->same[1] & cut);
}

/*
 * The next line's start after a line of a kept shape, whose newline is
 * then the first in the masks' second word: from the masks rather than
 * from the shape's length, which is as much but known later (the next
 * line's loads wait for this).
 */
static PH_ALWAYS_INLINE const char *after_shape(const char *p,
						const struct masks128 *m)
{
	return p + 65 + __builtin_ctzll(m->nl[1]);
}

/* The number in lane i of a line at s of sh's shape: its digits kept,
 * the other bytes made '0' (so that no byte borrows), '0' taken away. */
static PH_ALWAYS_INLINE uint64_t lane(const struct ph_iot_shape *sh,
				      const char *s, unsigned i)
{
	const uint64_t zeros = 0x3030303030303030ull;
	uint64_t k = sh->keep[i];

	return digits8(((load8(s + sh->at[i]) & k) | (zeros & ~k)) - zeros);
}

/* The fields of a line of sh's shape, given its numbers; false when one
 * fails a test fast_line() makes of its value. */
static PH_ALWAYS_INLINE bool shape_fields(const struct ph_iot_shape *sh,
					  const char *s, const uint64_t *v,
					  struct ph_iot_rec *r)
{
	if (v[L_MAJ] >= (1u << 12) || v[L_MIN] >= (1u << 20))
		return false;
	*r = sh->rec;
	r->ts_ns = (int64_t)(v[L_SECS] * 1000000000 + v[L_FRAC] * 1000);
	r->cpu = (uint32_t)v[L_CPU];
	r->pid = (int32_t)v[L_PID];
	r->dev = (uint32_t)(v[L_MAJ] << 20 | v[L_MIN]);
	r->bytes = (uint32_t)v[L_BYTES];
	r->nr_sector = (uint32_t)v[L_NR];
	r->sector = v[L_SECTOR_HI] * 100000000 + v[L_SECTOR];
	r->error = sh->neg ? (int32_t)(0 - v[L_ERROR]) : (int32_t)v[L_ERROR];
	if (sh->keep[L_TGID])
		r->tgid = (int32_t)v[L_TGID];
	copy16(r->comm, s + sh->comm_at, r->comm_len);
	return true;
}

/*
 * A line of sh's shape at s: its numbers converted where sh says, and the
 * tests fast_line() makes of their values made again.  False when one
 * fails (the whole path then reads the line).  Every number here has at
 * most eight digits, so only the device's can be out of range.
 */
static PH_ALWAYS_INLINE bool from_shape(const struct ph_iot_shape *sh,
					const char *s, struct ph_iot_rec *r)
{
	uint64_t v[PH_IOT_SHAPE_LANES];

	for (unsigned i = 0; i < PH_IOT_SHAPE_LANES; i++)
		v[i] = lane(sh, s, i);
	return shape_fields(sh, s, v, r);
}

/*
 * The line at p, whose first 128 bytes m classifies (end - p >= 128) and
 * whose shape is not sh's: one of 64 to 127 bytes by fast_line() from the
 * masks (its shape then kept in sh, the slot m picks, when that reads it
 * whole), any other by ph_iot_parse_line().  Returns the next line's
 * start, or NULL when p's has no newline before end.
 */
static PH_ALWAYS_INLINE const char *masked_line(const char *p, const char *end,
						const struct masks128 *m,
						struct ph_iot_shape *sh,
						struct ph_iot_parsed *out)
{
	enum ph_iot_bad why = PH_IOT_BAD_COUNT;
	enum ph_iot_line kind;
	const char *nl, *e;

	if (PH_UNLIKELY(m->nl[0] || !m->nl[1])) {
		if (!m->nl[0])
			return plain_line(p, end, out);
		nl = p + __builtin_ctzll(m->nl[0]);
		kind = general_line(p, trim_end(p, nl), &out->rec, &why);
		done(out, p, nl, kind, why);
		return nl + 1;
	}
	nl = p + 64 + __builtin_ctzll(m->nl[1]);
	e = trim_end(p, nl);
	if (e - p >= 64) {
		unsigned off = (unsigned)(e - p) - 64;
		struct masks h = { m->digit[0], m->space[0], m->colon };
		struct masks t = { window(m->digit, off), window(m->space, off),
				   0 };
		struct ph_iot_shape at;

		at.ok = 0;
		at.wide = 0;
		at.comm_at = 0;
		at.neg = 0;
		if (fast_line(p, e, &h, &t, &out->rec, &why, &kind, &at)) {
			done(out, p, nl, kind, why);
			if (at.ok && !at.wide) {
				unsigned len = (unsigned)(nl - p) + 1;

				memcpy(sh->keep, at.keep, sizeof(at.keep));
				memcpy(sh->at, at.at, sizeof(at.at));
				sh->comm_at = at.comm_at;
				sh->neg = at.neg;
				sh->rec = out->rec;
				sh->digit[0] = m->digit[0];
				sh->digit[1] = m->digit[1] & upto(len);
				memcpy(sh->canon, m->canon, sizeof(sh->canon));
				sh->len = (uint8_t)len;
			}
			return nl + 1;
		}
	}
	kind = general_line(p, e, &out->rec, &why);
	done(out, p, nl, kind, why);
	return nl + 1;
}

#endif /* __SSE2__: the masked reader and its shapes */

/*
 * ph_iot_parse_lines() a line at a time: memchr() for the newline, then
 * ph_iot_parse_line().  The portable path, for machines without SSE2;
 * tests choose it on x86-64 too, as the reference the others must match.
 */
static size_t lines_plain(const char *buf, size_t len,
			  struct ph_iot_parsed *out, size_t max, size_t *used)
{
	const char *p = buf, *end = buf + len, *next;
	size_t n = 0;

	while (n < max && p < end && !session_reads(*p)) {
		__builtin_prefetch(p + 1024);
		next = plain_line(p, end, &out[n]);
		if (!next)
			break;
		p = next;
		n++;
	}
	*used = (size_t)(p - buf);
	return n;
}

#if defined(__SSE2__)
/*
 * The batch loop of ph_iot_parse_lines() over 128-byte masks and the
 * shapes, ending in its return: a line of a kept shape by FROM
 * (from_shape() or its AVX2 twin), any other by masked_line(), the last
 * bytes of the buffer by plain_line().  One body for both instruction
 * sets: each function that expands it is compiled for its own set
 * (TARGET_AVX2), so the classify, compare and convert steps inline with
 * its instructions.
 */
#define LINES_LOOP(CLASSIFY, SAME, FROM)                                   \
	do {                                                               \
		const char *p = buf, *end = buf + len, *next;              \
		size_t n = 0;                                              \
                                                                           \
		while (n < max && p < end && !session_reads(*p)) {         \
			if (end - p >= 128) {                              \
				struct masks128 m;                         \
				struct ph_iot_shape *sh;                   \
                                                                           \
				/* a few lines ahead: text from memory */  \
				__builtin_prefetch(p + 1024);              \
				CLASSIFY(p, &m);                           \
				sh = slot(l, &m);                          \
				SAME(m.canon, sh->canon, m.same);          \
				if (same_shape(sh, &m) &&                  \
				    FROM(sh, p, &out[n].rec)) {            \
					next = after_shape(p, &m);         \
					done(&out[n], p, next - 1,         \
					     PH_IOT_LINE_BLOCK,            \
					     PH_IOT_BAD_COUNT);            \
				} else {                                   \
					next = masked_line(p, end, &m, sh, \
							   &out[n]);       \
				}                                          \
			} else {                                           \
				next = plain_line(p, end, &out[n]);        \
			}                                                  \
			if (!next)                                         \
				break;                                     \
			p = next;                                          \
			n++;                                               \
		}                                                          \
		*used = (size_t)(p - buf);                                 \
		return n;                                                  \
	} while (0)

/* ph_iot_parse_lines() with SSE2's masks. */
static size_t lines_base(struct ph_iot_lines *l, const char *buf, size_t len,
			 struct ph_iot_parsed *out, size_t max, size_t *used)
{
	LINES_LOOP(classify128_base, same128_base, from_shape);
}
#endif

#ifdef HAVE_AVX2_PATH
/*
 * Lanes i .. i + 3 of a line at s of sh's shape, as lane() converts them,
 * at once: each lane's eight bytes less '0' (no borrow between bytes
 * here), its digits kept, then pairs of digits, fours, eights.
 */
TARGET_AVX2 static PH_ALWAYS_INLINE __m256i
lanes4(const struct ph_iot_shape *sh, const char *s, unsigned i)
{
	__m128i a =
		_mm_loadl_epi64((const __m128i *)(const void *)(s + sh->at[i]));
	__m128i b = _mm_loadl_epi64(
		(const __m128i *)(const void *)(s + sh->at[i + 2]));
	__m256i x;

	a = _mm_insert_epi64(a, (long long)load8(s + sh->at[i + 1]), 1);
	b = _mm_insert_epi64(b, (long long)load8(s + sh->at[i + 3]), 1);
	x = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
	x = _mm256_and_si256(
		_mm256_sub_epi8(x, _mm256_set1_epi8('0')),
		_mm256_loadu_si256(
			(const __m256i *)(const void *)&sh->keep[i]));
	/* d0 * 10 + d1, then q0 * 100 + q1, then h0 * 10000 + h1 */
	x = _mm256_maddubs_epi16(x, _mm256_set1_epi16(0x010a));
	x = _mm256_madd_epi16(x, _mm256_set1_epi32(0x00010064));
	return _mm256_add_epi64(_mm256_mul_epu32(x, _mm256_set1_epi64x(10000)),
				_mm256_srli_epi64(x, 32));
}

TARGET_AVX2 static PH_ALWAYS_INLINE void store4(uint64_t *v, __m256i x)
{
	_mm256_storeu_si256((__m256i *)(void *)v, x);
}

/* from_shape(), four numbers at a time. */
TARGET_AVX2 static PH_ALWAYS_INLINE bool
from_shape_avx2(const struct ph_iot_shape *sh, const char *s,
		struct ph_iot_rec *r)
{
	uint64_t v[PH_IOT_SHAPE_LANES];

	store4(v, lanes4(sh, s, 0));
	store4(v + 4, lanes4(sh, s, 4));
	store4(v + 8, lanes4(sh, s, 8));
	return shape_fields(sh, s, v, r);
}

/* lines_base() by AVX2, and BMI2's shifts in the code it inlines. */
TARGET_AVX2 static size_t lines_avx2(struct ph_iot_lines *l, const char *buf,
				     size_t len, struct ph_iot_parsed *out,
				     size_t max, size_t *used)
{
	LINES_LOOP(classify128_avx2, same128_avx2, from_shape_avx2);
}
#endif

/* The set in use: -1 until first asked, then the CPU's best or a test's
 * choice.  Relaxed atomics: every thread computes the same value. */
static int isa_in_use = -1;

static bool cpu_has(enum ph_iot_isa isa)
{
	switch (isa) {
	case PH_IOT_ISA_PORTABLE:
	case PH_IOT_ISA_BASE: return true;
	case PH_IOT_ISA_AVX2:
#ifdef HAVE_AVX2_PATH
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("bmi") &&
		       __builtin_cpu_supports("bmi2");
#else
		return false;
#endif
	}
	return false;
}

enum ph_iot_isa ph_iot_parse_isa(void)
{
	int isa = __atomic_load_n(&isa_in_use, __ATOMIC_RELAXED);

	if (isa < 0) {
		isa = cpu_has(PH_IOT_ISA_AVX2) ? PH_IOT_ISA_AVX2 :
						 PH_IOT_ISA_BASE;
		__atomic_store_n(&isa_in_use, isa, __ATOMIC_RELAXED);
	}
	return (enum ph_iot_isa)isa;
}

bool ph_iot_parse_set_isa(enum ph_iot_isa isa)
{
	if (!cpu_has(isa))
		return false;
	__atomic_store_n(&isa_in_use, (int)isa, __ATOMIC_RELAXED);
	return true;
}

void ph_iot_lines_init(struct ph_iot_lines *l)
{
	memset(l, 0, sizeof(*l));
}

size_t ph_iot_parse_lines(struct ph_iot_lines *l, const char *buf, size_t len,
			  struct ph_iot_parsed *out, size_t max, size_t *used)
{
	(void)l; /* no shapes without SSE2 */
	switch (ph_iot_parse_isa()) {
#ifdef HAVE_AVX2_PATH
	case PH_IOT_ISA_AVX2: return lines_avx2(l, buf, len, out, max, used);
#endif
#if defined(__SSE2__)
	case PH_IOT_ISA_BASE: return lines_base(l, buf, len, out, max, used);
#endif
	default: return lines_plain(buf, len, out, max, used);
	}
}

#ifdef HAVE_AVX2_PATH
TARGET_AVX2 static void avx2_call(const char *p, const uint8_t *q,
				  struct masks128 *m)
{
	classify128_avx2(p, m);
	same128_avx2(m->canon, q, m->same);
}
#endif

static bool same_masks(const struct masks128 *a, const struct masks128 *b)
{
	return !memcmp(a->nl, b->nl, sizeof(a->nl)) &&
	       !memcmp(a->digit, b->digit, sizeof(a->digit)) &&
	       !memcmp(a->space, b->space, sizeof(a->space)) &&
	       a->colon == b->colon &&
	       !memcmp(a->same, b->same, sizeof(a->same)) &&
	       !memcmp(a->canon, b->canon, sizeof(a->canon));
}

bool ph_iot_classify128_agree(const char *p, const char *q)
{
	struct masks128 a, b;

	classify128_swar(p, &a);
	same128_swar(a.canon, (const uint8_t *)q, a.same);
	classify128_base(p, &b);
	same128_base(b.canon, (const uint8_t *)q, b.same);
	if (!same_masks(&a, &b))
		return false;
#ifdef HAVE_AVX2_PATH
	if (cpu_has(PH_IOT_ISA_AVX2)) {
		avx2_call(p, (const uint8_t *)q, &b);
		if (!same_masks(&a, &b))
			return false;
	}
#endif
	return true;
}
