/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block_lines.c: ph_iot_parse_lines(), the ftrace block event parser many
 * lines at a time over 128-byte masks and line shapes, and the choice of
 * instruction set it reads with (SSE2 or NEON, or AVX2 and BMI2 when the CPU
 * has them).  Each line reads as ph_iot_parse_line() (block_parse.c) reads it;
 * the fast path the two share is in block_fast.h.
 */
#include "ph_common.h"
#include "iotrace/block_parse.h"
#include "iotrace/block_fast.h"

/*
 * Many lines at a time (ph_iot_parse_lines()).  The text reader's line is found
 * and classified in one pass: the 128 bytes from its start are classified
 * once into masks of newlines, digits, spaces and colons, so the newline
 * that ends a line of 64 to 127 bytes -- every line the kernel prints for
 * a block event -- is the lowest bit of a mask, and fast_line()'s two
 * windows, the first 64 bytes and the last 64, are read off the same
 * masks (the second by a shift) instead of classified again.  Shorter and
 * longer lines, and the last 127 bytes of a buffer, take
 * ph_iot_parse_line().  With AVX2 the 128 bytes are four loads, with the
 * x86-64 baseline (SSE2) or arm64's (NEON) eight; elsewhere lines are read one
 * at a time (lines_plain()), where eight-byte words would cost more than they
 * save.
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

/*
 * The masked reader needs sixteen-byte compares and a byte mask of their
 * result: SSE2 on x86-64, NEON (Advanced SIMD, in every arm64 CPU) on
 * arm64.  Each set gives v16 (its sixteen-byte vector), load16(),
 * classify16b(), colon16() and same16(); the one reader below uses them.
 */
#if defined(__SSE2__)
#define HAVE_MASKED_READER 1
#include <emmintrin.h>

typedef __m128i v16;

static PH_ALWAYS_INLINE v16 load16(const char *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

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

static PH_ALWAYS_INLINE uint64_t same16(const uint8_t *a, const uint8_t *b)
{
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
		_mm_load_si128((const __m128i *)(const void *)a),
		_mm_loadu_si128((const __m128i *)(const void *)b)));
}

#elif defined(__aarch64__) && defined(__ARM_NEON)
#define HAVE_MASKED_READER 1
typedef uint8x16_t v16;

static PH_ALWAYS_INLINE v16 load16(const char *p)
{
	return vld1q_u8((const uint8_t *)p);
}

/* Bit i of each mask for x[i]: digit, space, newline; the bytes with
 * digits made 0xff to canon. */
static PH_ALWAYS_INLINE void classify16b(uint8x16_t x, uint64_t *dg,
					 uint64_t *sp, uint64_t *nl,
					 uint8_t *canon)
{
	/* a digit: x - '0' is at most 9, unsigned */
	uint8x16_t d = vcleq_u8(vsubq_u8(x, vdupq_n_u8('0')), vdupq_n_u8(9));

	*dg = movemask16(d);
	*sp = movemask16(vceqq_u8(x, vdupq_n_u8(' ')));
	*nl = movemask16(vceqq_u8(x, vdupq_n_u8('\n')));
	vst1q_u8(canon, vorrq_u8(x, d));
}

static PH_ALWAYS_INLINE uint64_t colon16(uint8x16_t x)
{
	return movemask16(vceqq_u8(x, vdupq_n_u8(':')));
}

static PH_ALWAYS_INLINE uint64_t same16(const uint8_t *a, const uint8_t *b)
{
	return movemask16(vceqq_u8(vld1q_u8(a), vld1q_u8(b)));
}
#endif

#ifdef HAVE_MASKED_READER
/* Sixteen bytes at a time, written out (the compiler does not unroll a
 * loop of eight at -O2). */
static PH_ALWAYS_INLINE void classify128_base(const char *p, struct masks128 *m)
{
	v16 x[8];
	uint64_t dg[8], sp[8], nl[8];

	for (unsigned i = 0; i < 8; i++)
		x[i] = load16(p + 16 * i);
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

/* A line ph_iot_parse_lines() leaves to the text reader: an empty one, a
 * comment, or one that may be a loss marker ("CPU:"). */
static PH_ALWAYS_INLINE bool reader_reads(char c)
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

#ifdef HAVE_MASKED_READER
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
		kind = ph_iot_general_line(p, trim_end(p, nl), &out->rec, &why);
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
	kind = ph_iot_general_line(p, e, &out->rec, &why);
	done(out, p, nl, kind, why);
	return nl + 1;
}

#endif /* HAVE_MASKED_READER: the masked reader and its shapes */

/*
 * ph_iot_parse_lines() a line at a time: memchr() for the newline, then
 * ph_iot_parse_line().  The portable path, for machines without SSE2 or NEON;
 * tests choose it on x86-64 too, as the reference the others must match.
 */
static size_t lines_plain(const char *buf, size_t len,
			  struct ph_iot_parsed *out, size_t max, size_t *used)
{
	const char *p = buf, *end = buf + len, *next;
	size_t n = 0;

	while (n < max && p < end && !reader_reads(*p)) {
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

#ifdef HAVE_MASKED_READER
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
		while (n < max && p < end && !reader_reads(*p)) {          \
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

/* ph_iot_parse_lines() with SSE2's or NEON's masks. */
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
	(void)l; /* no shapes without SSE2 or NEON */
	switch (ph_iot_parse_isa()) {
#ifdef HAVE_AVX2_PATH
	case PH_IOT_ISA_AVX2: return lines_avx2(l, buf, len, out, max, used);
#endif
#ifdef HAVE_MASKED_READER
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
