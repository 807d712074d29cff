/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record.h: the record an emitting thread fills.
 *
 * An event call fills a record in its thread's scratch, then pushes its
 * used bytes into the queue (queue.h); the writer thread turns it into
 * JSON.  So everything an
 * emitter does to a record must be cheap and bounded: fields are appended
 * as (key, type, length, bytes) with no allocation and no formatting, and
 * strings are cut at their cap on a UTF-8 boundary with "..." appended
 * (docs/protocol.md section 8).  A field that does not fit in what is left
 * of the record is dropped whole and the record is marked truncated.
 *
 * Layout of data[]: a sequence of fields, each
 *
 *	OFFSET SIZE  DESCRIPTION
 *	0      1     key (enum ph_key)
 *	1      1     type (enum ph_field_type)
 *	2      2     payload length in bytes, little-endian
 *	4      len   payload: string bytes; int64/double in host order;
 *	             an array element repeats its key with PH_F_ARR_STR
 */
#ifndef PH_AGENT_RECORD_H
#define PH_AGENT_RECORD_H

#include "ph_common.h"
#include "ph_wire.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The largest record, header included: 12 queue cells with the turn word. */
#define PH_REC_SIZE 1528
#define PH_REC_HEAD 24 /* the header before data[] */
#define PH_REC_DATA (PH_REC_SIZE - PH_REC_HEAD)

enum ph_field_type {
	PH_F_STR,     /* a JSON string */
	PH_F_QSTR,    /* an int written as a JSON string (the v1 quirk) */
	PH_F_INT,     /* int64 */
	PH_F_DOUBLE,  /* double */
	PH_F_BOOL,    /* one byte, 0 or 1 */
	PH_F_ARR_STR, /* one element of a string array; runs form the array */
	PH_F_OBJ_INT, /* "name\0" then int64: one member of an object of ints */
	PH_F_PCS,     /* raw return addresses, symbolized by the writer */
	PH_F_ARR_EMPTY, /* an empty array (no payload) */
	PH_F_HEADERS,	/* "Name: value\n" lines, an object of strings */
};

struct ph_rec {
	uint8_t kind;  /* enum ph_kind */
	uint8_t flags; /* PH_REC_* */
	uint16_t used; /* bytes of data[] in use */
	uint16_t sub;  /* kind-specific small value (device sub-kind) */
	uint8_t cells; /* queue cells it takes; set by ph_queue_put */
	uint8_t pad;
	int32_t tid; /* emitting thread */
	/*
	 * ms the event's t lies before `at` (ph_rec_set_t): 0 but for events
	 * whose t is another moment (a stall's start, an input's own time).
	 */
	int32_t t_back;
	/*
	 * When it was emitted, CLOCK_MONOTONIC ns.  Each thread's events go
	 * out in the order they were emitted, and the writer merges the
	 * threads' queues by it (lanes.h), so it is the emitting moment and
	 * never an event's other t.
	 */
	int64_t at;
	uint8_t data[PH_REC_DATA];
};

_Static_assert(PH_KIND_COUNT <= 256, "a kind fits struct ph_rec.kind");

/* The event's t, uptime ms: the emitting moment but for ph_rec_set_t. */
static inline int64_t ph_rec_t(const struct ph_rec *r)
{
	return r->at / 1000000 - r->t_back;
}

/* Gives the event a t other than the moment it is emitted (uptime ms). */
static inline void ph_rec_set_t(struct ph_rec *r, int64_t t_ms)
{
	int64_t back = r->at / 1000000 - t_ms;

	r->t_back = back > INT32_MAX ? INT32_MAX :
		    back < INT32_MIN ? INT32_MIN :
				       (int32_t)back;
}

/* struct ph_rec.sub of a device event: data.kind on the wire. */
enum ph_device_kind {
	PH_DEV_PROFILE,
	PH_DEV_CLOCKS,
	PH_DEV_FOREGROUND,
	PH_DEV_BACKGROUND,
	PH_DEV_ROTATION,
	PH_DEV_THEME,
	PH_DEV_FONT_SCALE,
	PH_DEV_TRIM_MEMORY,
	PH_DEV_LOW_MEMORY,
	PH_DEV_POWER,
	PH_DEV_NETWORK,
	PH_DEV_THERMAL,
};

enum {
	PH_REC_TRUNCATED = 1 << 0, /* a field did not fit */
	PH_REC_MAIN = 1 << 1,	   /* emitted on the registered main thread */
};

_Static_assert(sizeof(struct ph_rec) == PH_REC_SIZE, "record layout");
_Static_assert(offsetof(struct ph_rec, data) == PH_REC_HEAD, "record head");

/*
 * Starts a record: kind and flags, nothing used, no sub-kind.  One 8-byte
 * store of a value built in registers where the byte order allows, since
 * field-by-field stores of constants become loads from a constant pool
 * (one more cold line for an event call after a pause).
 */
static inline void ph_rec_head(struct ph_rec *r, enum ph_kind kind,
			       unsigned flags)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t head = (uint64_t)kind | (uint64_t)flags << 8;

	_Static_assert(offsetof(struct ph_rec, flags) == 1 &&
			       offsetof(struct ph_rec, used) == 2 &&
			       offsetof(struct ph_rec, sub) == 4 &&
			       offsetof(struct ph_rec, cells) == 6,
		       "record head layout");
	memcpy(r, &head, sizeof(head));
	r->t_back = 0;
#else
	r->kind = (uint8_t)kind;
	r->flags = (uint8_t)flags;
	r->used = 0;
	r->sub = 0;
	r->t_back = 0;
#endif
}

static inline uint8_t *ph_rec_field(struct ph_rec *r, enum ph_key key,
				    enum ph_field_type type, size_t len)
{
	uint8_t *p;

	if (PH_UNLIKELY(len > 0xffff || r->used + 4 + len > PH_REC_DATA)) {
		r->flags |= PH_REC_TRUNCATED;
		return NULL;
	}
	p = r->data + r->used;
	p[0] = (uint8_t)key;
	p[1] = (uint8_t)type;
	p[2] = (uint8_t)(len & 0xff);
	p[3] = (uint8_t)(len >> 8);
	r->used = (uint16_t)(r->used + 4 + len);
	return p + 4;
}

/*
 * Where to cut s (of length n) so the result is at most cap bytes with room
 * for "...": never inside a UTF-8 sequence.
 */
static inline size_t ph_utf8_cut(const char *s, size_t n, size_t cap)
{
	if (n <= cap)
		return n;
	n = cap > 3 ? cap - 3 : 0;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* Appends a string field, cut to cap bytes ("..." marks a cut). */
static inline void ph_rec_strn(struct ph_rec *r, enum ph_key key,
			       enum ph_field_type type, const char *s, size_t n,
			       size_t cap)
{
	size_t keep = ph_utf8_cut(s, n, cap);
	bool cut = keep < n;
	uint8_t *p = ph_rec_field(r, key, type, keep + (cut ? 3 : 0));

	if (!p)
		return;
	memcpy(p, s, keep);
	if (cut)
		memcpy(p + keep, "...", 3);
}

/*
 * A string shorter than 16 bytes, appended without calling into libc: most
 * labels and names are short, and an event call that follows a pause (the
 * common case in an app) found strnlen's and memcpy's code cold, paying
 * for the calls more than for the bytes.  One 16-byte load, when those 16
 * bytes lie in the string's page (so the load cannot fault, whatever
 * follows the string); the copy stores all 16 and counts only the string's.
 * Returns false when s is not such a string; the caller takes the long way.
 */
PH_NO_SANITIZE_OVERREAD
static inline bool ph_rec_short_str(struct ph_rec *r, enum ph_key key,
				    enum ph_field_type type, const char *s,
				    size_t cap)
{
#if defined(__SSE2__)
	__m128i v;
	unsigned zero;
	uint32_t head;
	size_t n;
	uint8_t *p;

	if (((uintptr_t)s & 4095) > 4096 - 16 || cap < 15 ||
	    r->used + 4 + 16 > PH_REC_DATA)
		return false;
	/* The compiler may know s's object is shorter; hide it, on purpose. */
	__asm__("" : "+r"(s));
	v = _mm_loadu_si128((const __m128i *)(const void *)s);
	zero = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(v, _mm_setzero_si128()));
	if (!zero)
		return false;
	n = (size_t)__builtin_ctz(zero);
	p = r->data + r->used;
	/* key, type, length: one store (x86 is little-endian) */
	head = (uint32_t)key | (uint32_t)type << 8 | (uint32_t)n << 16;
	memcpy(p, &head, sizeof(head));
	_mm_storeu_si128((__m128i *)(void *)(p + 4), v);
	r->used = (uint16_t)(r->used + 4 + n);
	return true;
#else
	(void)r, (void)key, (void)type, (void)s, (void)cap;
	return false;
#endif
}

static inline void ph_rec_str(struct ph_rec *r, enum ph_key key, const char *s,
			      size_t cap)
{
	if (s && !ph_rec_short_str(r, key, PH_F_STR, s, cap))
		ph_rec_strn(r, key, PH_F_STR, s, strnlen(s, cap + 1), cap);
}

static inline void ph_rec_arr_str(struct ph_rec *r, enum ph_key key,
				  const char *s, size_t cap)
{
	if (s)
		ph_rec_strn(r, key, PH_F_ARR_STR, s, strnlen(s, cap + 1), cap);
}

static inline void ph_rec_int(struct ph_rec *r, enum ph_key key, int64_t v)
{
	uint8_t *p = ph_rec_field(r, key, PH_F_INT, sizeof(v));

	if (p)
		memcpy(p, &v, sizeof(v));
}

/* An int the v1 wire sends as a string ("elapsedMs":"12"). */
static inline void ph_rec_qint(struct ph_rec *r, enum ph_key key, int64_t v)
{
	uint8_t *p = ph_rec_field(r, key, PH_F_QSTR, sizeof(v));

	if (p)
		memcpy(p, &v, sizeof(v));
}

static inline void ph_rec_double(struct ph_rec *r, enum ph_key key, double v)
{
	uint8_t *p = ph_rec_field(r, key, PH_F_DOUBLE, sizeof(v));

	if (p)
		memcpy(p, &v, sizeof(v));
}

static inline void ph_rec_bool(struct ph_rec *r, enum ph_key key, bool v)
{
	uint8_t *p = ph_rec_field(r, key, PH_F_BOOL, 1);

	if (p)
		*p = v;
}

/* One member "name": v of an object of ints under key (frame phases). */
static inline void ph_rec_obj_int(struct ph_rec *r, enum ph_key key,
				  const char *name, int64_t v)
{
	size_t n = strlen(name);
	uint8_t *p = ph_rec_field(r, key, PH_F_OBJ_INT, n + 1 + sizeof(v));

	if (!p)
		return;
	memcpy(p, name, n + 1);
	memcpy(p + n + 1, &v, sizeof(v));
}

static inline void ph_rec_pcs(struct ph_rec *r, enum ph_key key,
			      const uintptr_t *pcs, size_t n)
{
	uint8_t *p = ph_rec_field(r, key, PH_F_PCS, n * sizeof(*pcs));

	if (p)
		memcpy(p, pcs, n * sizeof(*pcs));
}

/* Reader side (the writer thread): the first field with this key. */
static inline const uint8_t *ph_rec_find(const struct ph_rec *r,
					 enum ph_key key, size_t *len)
{
	size_t off = 0;

	while (off + 4 <= r->used) {
		const uint8_t *p = r->data + off;
		size_t n = (size_t)p[2] | (size_t)p[3] << 8;

		if (off + 4 + n > r->used)
			break;
		if (p[0] == key) {
			*len = n;
			return p + 4;
		}
		off += 4 + n;
	}
	return NULL;
}

/*
 * One line of a PH_F_HEADERS field ("Name: value\n"): its name and value,
 * and where the next line starts.  A line without ':' is a name with an
 * empty value.
 */
struct ph_header {
	const char *name, *value;
	size_t name_n, value_n;
};

static inline const char *ph_header_next(const char *p, const char *end,
					 struct ph_header *h)
{
	const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
	const char *eol = nl ? nl : end;
	const char *v = (const char *)memchr(p, ':', (size_t)(eol - p));

	if (!v)
		v = eol;
	h->name = p;
	h->name_n = (size_t)(v - p);
	if (v < eol)
		v += v + 1 < eol && v[1] == ' ' ? 2 : 1;
	h->value = v;
	h->value_n = (size_t)(eol - v);
	return eol + 1;
}

/* A string field copied into buf (NUL-terminated, cut to fit); "" if none. */
static inline const char *
ph_rec_get_str(const struct ph_rec *r, enum ph_key key, char *buf, size_t size)
{
	size_t n = 0;
	const uint8_t *p = ph_rec_find(r, key, &n);

	if (!p)
		n = 0;
	if (n >= size)
		n = size - 1;
	if (n)
		memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* An int field (INT or QSTR), or def. */
static inline int64_t ph_rec_get_int(const struct ph_rec *r, enum ph_key key,
				     int64_t def)
{
	size_t n;
	const uint8_t *p = ph_rec_find(r, key, &n);
	int64_t v;

	if (!p || n != sizeof(v))
		return def;
	memcpy(&v, p, sizeof(v));
	return v;
}

#endif
