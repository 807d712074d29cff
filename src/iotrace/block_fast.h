/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block_fast.h: what both readers of block lines inline -- block_parse.c,
 * a line at a time, and block_lines.c, many lines over 128-byte masks:
 * the word-at-a-time helpers, the rwbs decoder, and the fixed-offset fast
 * path (fast_line()) with the shape recording the batch reader asks of
 * it.  They are here as static, always-inlined functions rather than
 * called from block_parse.c because block_lines.c compiles its AVX2 loop
 * for AVX2 and BMI2 and needs them inlined into it, with those
 * instructions, as they were when both readers were one file; a call
 * would cost that and a call per line.  Private to those two files.
 */
#ifndef PH_IOTRACE_BLOCK_FAST_H
#define PH_IOTRACE_BLOCK_FAST_H

#include "ph_common.h"
#include "iotrace/block_parse.h"

#define PH_ALWAYS_INLINE inline __attribute__((always_inline))

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

/* SSE2's movemask for NEON: bit i for byte i of m (each 0 or 0xff). */
static PH_ALWAYS_INLINE uint64_t movemask16(uint8x16_t m)
{
	static const uint8_t bit[16] = { 1, 2, 4, 8, 16, 32, 64, 128,
					 1, 2, 4, 8, 16, 32, 64, 128 };
	uint8x16_t b = vandq_u8(m, vld1q_u8(bit));

	return vaddv_u8(vget_low_u8(b)) | (uint64_t)vaddv_u8(vget_high_u8(b))
						  << 8;
}
#endif

/*
 * The out-of-line parts of block_parse.c that the fast path and the batch
 * reader fall back to.  Each reads only inside the bounds it is given.
 */

/* The TGID column that ends at p (p[-1] is ')'), never reaching below s:
 * its '(' with *tgid set (left alone for dashes), or NULL. */
const char *ph_iot_tgid_field(const char *s, const char *p, int32_t *tgid);

/* The body after "block_rq_EVENT: ", up to e: false with *why set when it
 * does not parse.  r->event must be set. */
bool ph_iot_parse_body(const char *p, const char *e, struct ph_iot_rec *r,
		       enum ph_iot_bad *why);

/* ph_iot_parse_line_general() over s[0, e), trailing blanks already
 * trimmed. */
enum ph_iot_line ph_iot_general_line(const char *s, const char *e,
				     struct ph_iot_rec *rec,
				     enum ph_iot_bad *why);

static inline bool is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

static inline bool is_ident(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

/* The line's end without its trailing blanks. */
static PH_ALWAYS_INLINE const char *trim_end(const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'))
		e--;
	return e;
}

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
 * reader (block_parse.c: parse_header(), ph_iot_parse_body()), which reads
 * every layout, and the two must agree on what they both accept: the fuzz
 * target checks that on every line, and the unit tests on every one-byte
 * change to each layout.
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
		const char *open = ph_iot_tgid_field(s, s + f, &r->tgid);

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
 * ph_iot_parse_body() over the body's masks: p[0, n), 20 <= n <= 63, the
 * end of a line of at least 64 bytes; w holds the masks of its last 64 (a
 * number's 16-byte load reaches back before p).
 * Takes "()" for CMD and numbers of at most 16 digits; false for anything
 * else, malformed lines included, which ph_iot_parse_body() then reads.
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
		} else if (w == load8("requeue:")) {
			return false; /* rare: the general reader's */
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
			*kind = ph_iot_parse_body(body, e, r, why) ?
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

#endif
