/*
 * hprof.c: reads an HPROF heap dump in place and indexes its objects.
 *
 * Sources: the HPROF format as HotSpot writes it (OpenJDK
 * src/hotspot/share/services/heapDumper.cpp, "HPROF binary format"), the
 * Android additions as ART writes them (art/runtime/hprof/hprof.cc) and as
 * AOSP ahat and perflib read them.  All integers are big-endian.
 *
 * File header
 *   OFFSET  SIZE  DESCRIPTION
 *   0       n+1   "JAVA PROFILE 1.0.1" / "1.0.2" / "1.0.3", NUL-terminated
 *   n+1     4     identifier size: 4 or 8 (object ids, string ids)
 *   n+5     8     dump time, ms since the epoch (two u4: high, low)
 *
 * Top-level record (repeats to the end of the file)
 *   0       1     tag
 *   1       4     microseconds since the header's time
 *   5       4     length of the body that follows
 *   9       len   body:
 *     0x01 STRING          id, then UTF-8 bytes (len - idsz)
 *     0x02 LOAD_CLASS      u4 class serial, id class object, u4 stack
 *                          serial, id name string
 *     0x03 UNLOAD_CLASS    u4 class serial
 *     0x04 STACK_FRAME     id frame, id method, id signature, id source
 *                          file, u4 class serial, u4 line
 *     0x05 STACK_TRACE     u4 serial, u4 thread serial, u4 n, n ids
 *     0x06 ALLOC_SITES, 0x07 HEAP_SUMMARY, 0x0A START_THREAD,
 *     0x0B END_THREAD, 0x0D CPU_SAMPLES, 0x0E CONTROL_SETTINGS: counted
 *     0x0C HEAP_DUMP, 0x1C HEAP_DUMP_SEGMENT: heap sub-records, below
 *     0x2C HEAP_DUMP_END   empty
 *
 * Heap sub-record (tag byte, then)
 *   0xFF ROOT_UNKNOWN, 0x05 ROOT_STICKY_CLASS, 0x07 ROOT_MONITOR_USED,
 *   0x89 ROOT_INTERNED_STRING, 0x8A ROOT_FINALIZING, 0x8B ROOT_DEBUGGER,
 *   0x8C ROOT_REFERENCE_CLEANUP, 0x8D ROOT_VM_INTERNAL,
 *   0x90 UNREACHABLE          id
 *   0x01 ROOT_JNI_GLOBAL      id, id of the global reference
 *   0x02 ROOT_JNI_LOCAL       id, u4 thread serial, u4 frame number
 *   0x03 ROOT_JAVA_FRAME      id, u4 thread serial, u4 frame number
 *   0x04 ROOT_NATIVE_STACK    id, u4 thread serial
 *   0x06 ROOT_THREAD_BLOCK    id, u4 thread serial
 *   0x08 ROOT_THREAD_OBJECT   id, u4 thread serial, u4 stack serial
 *   0x8E ROOT_JNI_MONITOR     id, u4 thread serial, u4 stack depth
 *   0xFE HEAP_DUMP_INFO       u4 heap id ('A' app, 'I' image, 'Z' zygote,
 *                             'D' default), id of the heap's name; applies
 *                             to every following sub-record, across
 *                             segments, until the next one
 *   0x20 CLASS_DUMP           id class, u4 stack serial, id super, id
 *                             loader, id signers, id protection domain, id
 *                             reserved x2, u4 instance size, u2 constant
 *                             pool count, {u2 index, u1 type, value},
 *                             u2 static count, {id name, u1 type, value},
 *                             u2 instance field count, {id name, u1 type}
 *   0x21 INSTANCE_DUMP        id, u4 stack serial, id class, u4 n, n bytes
 *                             of field values: the class's own fields
 *                             first, then its superclass's, and so on
 *   0x22 OBJ_ARRAY_DUMP       id, u4 stack serial, u4 n, id array class,
 *                             n ids
 *   0x23 PRIM_ARRAY_DUMP      id, u4 stack serial, u4 n, u1 type, n values
 *   0xC3 PRIM_ARRAY_NODATA    id, u4 stack serial, u4 n, u1 type (ART;
 *                             the values were left out)
 *
 * Basic types: 2 object (idsz bytes), 4 boolean (1), 5 char (2), 6 float
 * (4), 7 double (8), 8 byte (1), 9 short (2), 10 int (4), 11 long (8).
 *
 * One sequential pass records, for every object, its id and where its
 * record starts; classes, roots, strings and heap switches go to small
 * tables.  The dump itself is never copied.
 */
#include "ph_common.h"
#include "heap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static inline uint32_t rd4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

static inline uint16_t rd2(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint64_t rd8(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static inline uint64_t rdid(const uint8_t *p, uint32_t idsz)
{
	return idsz == 4 ? rd4(p) : rd8(p);
}

/* ph_heap_type_size for the pass: inlined, no switch */
static inline size_t tsize(uint32_t idsz, unsigned type)
{
	static const uint8_t sz[12] = { 0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8 };

	return type == PH_HT_OBJECT ? idsz : type < 12 ? sz[type] : 0;
}

size_t ph_heap_type_size(const struct ph_heap *h, unsigned type)
{
	return tsize(h->idsz, type);
}

const char *ph_heap_root_name(unsigned kind)
{
	switch (kind) {
	case PH_ROOT_UNKNOWN: return "UNKNOWN";
	case PH_ROOT_JNI_GLOBAL: return "JNI_GLOBAL";
	case PH_ROOT_JNI_LOCAL: return "JNI_LOCAL";
	case PH_ROOT_JAVA_FRAME: return "JAVA_FRAME";
	case PH_ROOT_NATIVE_STACK: return "NATIVE_STACK";
	case PH_ROOT_STICKY_CLASS: return "STICKY_CLASS";
	case PH_ROOT_THREAD_BLOCK: return "THREAD_BLOCK";
	case PH_ROOT_MONITOR_USED: return "MONITOR_USED";
	case PH_ROOT_THREAD_OBJECT: return "THREAD_OBJECT";
	case PH_ROOT_INTERNED_STRING: return "INTERNED_STRING";
	case PH_ROOT_FINALIZING: return "FINALIZING";
	case PH_ROOT_DEBUGGER: return "DEBUGGER";
	case PH_ROOT_REFERENCE_CLEANUP: return "REFERENCE_CLEANUP";
	case PH_ROOT_VM_INTERNAL: return "VM_INTERNAL";
	case PH_ROOT_JNI_MONITOR: return "JNI_MONITOR";
	case PH_ROOT_UNREACHABLE: return "UNREACHABLE";
	}
	return "?";
}

const char *ph_heap_kind_name(enum ph_heap_kind kind)
{
	static const char *const names[] = { "class", "instance", "array",
					     "array" };

	return names[kind & 3];
}

/* ---- memory ---------------------------------------------------------- */

/*
 * Under AddressSanitizer the per-object arrays stay on malloc, so its
 * redzones still guard them (the fuzzer runs there).
 */
#if defined(__SANITIZE_ADDRESS__)
#define BIG_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIG_MALLOC 1
#endif
#endif

#ifndef BIG_MALLOC
#define BIG_HDR 64 /* holds the mapping's length; keeps 64-byte alignment */

static void advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}
#endif

void *ph_heap_big_alloc(size_t bytes)
{
#ifdef BIG_MALLOC
	return calloc(bytes ? bytes : 1, 1);
#else
	size_t len = bytes + BIG_HDR;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	memcpy(m, &len, sizeof(len));
	advise_huge(m + BIG_HDR, bytes);
	return m + BIG_HDR;
#endif
}

void ph_heap_big_free(void *p)
{
#ifdef BIG_MALLOC
	free(p);
#else
	size_t len;

	if (!p)
		return;
	memcpy(&len, (char *)p - BIG_HDR, sizeof(len));
	munmap((char *)p - BIG_HDR, len);
#endif
}

void *ph_heap_big_realloc(void *p, size_t bytes)
{
#ifdef BIG_MALLOC
	return realloc(p, bytes ? bytes : 1);
#else
	size_t len, nlen = bytes + BIG_HDR;
	char *m;

	if (!p)
		return ph_heap_big_alloc(bytes);
	memcpy(&len, (char *)p - BIG_HDR, sizeof(len));
	m = mremap((char *)p - BIG_HDR, len, nlen, MREMAP_MAYMOVE);
	if (m == MAP_FAILED) {
		/* advise_huge() may have split the mapping in two (huge
		 * pages on its aligned middle only), and mremap moves one
		 * mapping at a time (EFAULT): copy instead */
		char *q = ph_heap_big_alloc(bytes);

		if (!q)
			return NULL;
		memcpy(q, p, (len < nlen ? len : nlen) - BIG_HDR);
		ph_heap_big_free(p);
		return q;
	}
	memcpy(m, &nlen, sizeof(nlen));
	if (nlen > len)
		advise_huge(m + BIG_HDR, bytes);
	return m + BIG_HDR;
#endif
}

/* ---- growable arrays for the pass ---------------------------------- */

struct vec {
	void *p;
	size_t n, cap;
	bool big; /* p is ph_heap_big_alloc's */
};

static int vec_push(struct vec *v, const void *item, size_t sz)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		void *np = v->big ? ph_heap_big_realloc(v->p, cap * sz) :
				    realloc(v->p, cap * sz);

		if (!np)
			return PH_ENOMEM;
		v->p = np;
		v->cap = cap;
	}
	memcpy((char *)v->p + v->n * sz, item, sz);
	v->n++;
	return 0;
}

struct strrec {
	uint64_t id, off;
};
struct lcrec {
	uint64_t id, name;
};

struct reader {
	struct ph_heap *h;
	struct vec ids, metas; /* uint64_t each */
	struct vec strs;       /* struct strrec */
	struct vec lcs;	       /* struct lcrec */
	struct vec classes;    /* struct ph_heap_class */
	struct vec roots;      /* struct ph_heap_root */
	struct vec threads;    /* uint64_t: serial << 32 | root index */
	uint64_t win_next;     /* advance() when the cursor passes this */
	uint64_t win_lo;       /* first page not yet dropped */
	uint32_t cur_heap;
	uint32_t hid_of[PH_HEAP_MAX_HEAPS];
	uint64_t heap_name_sid[PH_HEAP_MAX_HEAPS];
};

static uint32_t heap_for(struct reader *r, uint32_t hid, uint64_t name_sid)
{
	struct ph_heap *h = r->h;

	for (uint32_t i = 0; i < h->nheaps; i++)
		if (r->hid_of[i] == hid)
			return i;
	if (h->nheaps == PH_HEAP_MAX_HEAPS)
		return PH_HEAP_MAX_HEAPS - 1; /* hostile: lump the rest */
	r->hid_of[h->nheaps] = hid;
	r->heap_name_sid[h->nheaps] = name_sid;
	h->heaps[h->nheaps].hid = hid;
	return h->nheaps++;
}

static int push_obj(struct reader *r, uint64_t id, uint64_t rec,
		    enum ph_heap_kind kind)
{
	uint64_t meta = rec | (uint64_t)kind << 40 |
			(uint64_t)r->cur_heap << 42;

	if (PH_UNLIKELY(r->ids.n == r->ids.cap)) {
		if (vec_push(&r->ids, &id, 8) || vec_push(&r->metas, &meta, 8))
			return PH_ENOMEM;
		return 0;
	}
	((uint64_t *)r->ids.p)[r->ids.n++] = id;
	if (PH_UNLIKELY(r->metas.n == r->metas.cap))
		return vec_push(&r->metas, &meta, 8);
	((uint64_t *)r->metas.p)[r->metas.n++] = meta;
	return 0;
}

static int push_root(struct reader *r, uint64_t id, unsigned kind,
		     uint32_t thread)
{
	struct ph_heap_root root = { .id = id,
				     .obj = PH_HEAP_NONE,
				     .kind = (uint8_t)kind,
				     .thread = thread };

	return vec_push(&r->roots, &root, sizeof(root));
}

/*
 * The pass reads the mapping front to back, once.  Every WINDOW bytes it
 * drops the pages behind the cursor from the resident set (they stay in
 * the page cache, and fault back if read again), so the dump never sits
 * in our resident set whole: peak RSS is the index, not the file.
 */
#define WINDOW ((uint64_t)16 << 20)

static void advance_slow(struct reader *r, uint64_t p)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = p & ~(page - 1);

	if (lo > r->win_lo) {
		madvise((char *)r->h->data + r->win_lo, lo - r->win_lo,
			MADV_DONTNEED);
		r->win_lo = lo;
	}
	r->win_next = p + WINDOW;
}

static inline void advance(struct reader *r, uint64_t p)
{
	if (PH_UNLIKELY(p >= r->win_next))
		advance_slow(r, p);
}

/*
 * A CLASS_DUMP body from p (after the tag); returns its length through
 * *len, or PH_ECORRUPT.
 */
static int read_class(struct reader *r, const uint8_t *d, uint64_t p,
		      uint64_t end, uint64_t *len)
{
	struct ph_heap *h = r->h;
	uint32_t idsz = h->idsz;
	struct ph_heap_class c = { 0 };
	uint64_t q = p;
	uint16_t n;

#define NEED(k)                                                               \
	do {                                                                  \
		if ((k) > end - q)                                            \
			return PH_CORRUPT(&h->err, q,                         \
					  "class dump runs past its record"); \
	} while (0)

	NEED(7ull * idsz + 8 + 2);
	c.id = rdid(d + q, idsz);
	c.super_id = rdid(d + q + idsz + 4, idsz);
	c.loader_id = rdid(d + q + 2 * idsz + 4, idsz);
	c.instance_size = rd4(d + q + 7 * idsz + 4);
	q += 7ull * idsz + 8;
	n = rd2(d + q);
	q += 2;
	for (unsigned i = 0; i < n; i++) {
		size_t ts;

		NEED(3);
		ts = tsize(idsz, d[q + 2]);
		if (!ts)
			return PH_CORRUPT(&h->err, q + 2,
					  "constant pool entry of type %u",
					  d[q + 2]);
		q += 3;
		NEED(ts);
		q += ts;
	}
	NEED(2);
	c.nstatics = rd2(d + q);
	q += 2;
	c.statics_off = q;
	for (unsigned i = 0; i < c.nstatics; i++) {
		size_t ts;

		NEED((uint64_t)idsz + 1);
		ts = tsize(idsz, d[q + idsz]);
		if (!ts)
			return PH_CORRUPT(&h->err, q + idsz,
					  "static field of type %u",
					  d[q + idsz]);
		q += idsz + 1;
		NEED(ts);
		q += ts;
	}
	NEED(2);
	c.nown = rd2(d + q);
	q += 2;
	c.own_off = q;
	NEED((uint64_t)c.nown * (idsz + 1));
	for (unsigned i = 0; i < c.nown; i++)
		if (!tsize(idsz, d[q + (uint64_t)i * (idsz + 1) + idsz]))
			return PH_CORRUPT(
				&h->err, q + (uint64_t)i * (idsz + 1) + idsz,
				"instance field of type %u",
				d[q + (uint64_t)i * (idsz + 1) + idsz]);
	q += (uint64_t)c.nown * (idsz + 1);
#undef NEED
	c.rec = p - 1;
	c.super = PH_HEAP_NONE;
	c.referent_off = PH_HEAP_NONE;
	*len = q - p;
	h->heaps[r->cur_heap].classes++;
	if (vec_push(&r->classes, &c, sizeof(c)))
		return PH_ENOMEM;
	return push_obj(r, c.id, p - 1, PH_HEAP_CLASS);
}

/* Heap dump sub-records in [p, end). */
static int read_heap(struct reader *r, uint64_t p, uint64_t end)
{
	struct ph_heap *h = r->h;
	const uint8_t *d = h->data;
	const uint32_t idsz = h->idsz;
	int rc;

	while (p < end) {
		uint8_t tag;
		uint64_t q = p + 1, len = 0;
		uint64_t left = end - q;

		advance(r, p);
		tag = d[p];
		h->sub_count[tag]++;
		switch (tag) {
		case PH_ROOT_UNKNOWN:
		case PH_ROOT_STICKY_CLASS:
		case PH_ROOT_MONITOR_USED:
		case PH_ROOT_INTERNED_STRING:
		case PH_ROOT_FINALIZING:
		case PH_ROOT_DEBUGGER:
		case PH_ROOT_REFERENCE_CLEANUP:
		case PH_ROOT_VM_INTERNAL:
		case PH_ROOT_UNREACHABLE:
			len = idsz;
			if (len > left)
				goto short_rec;
			if (tag >= 0x89 && tag <= 0x90)
				h->android = true;
			rc = push_root(r, rdid(d + q, idsz), tag, 0);
			break;
		case PH_ROOT_JNI_GLOBAL:
			len = 2ull * idsz;
			if (len > left)
				goto short_rec;
			rc = push_root(r, rdid(d + q, idsz), tag, 0);
			break;
		case PH_ROOT_JNI_LOCAL:
		case PH_ROOT_JAVA_FRAME:
		case PH_ROOT_JNI_MONITOR:
			len = idsz + 8ull;
			if (len > left)
				goto short_rec;
			if (tag == PH_ROOT_JNI_MONITOR)
				h->android = true;
			rc = push_root(r, rdid(d + q, idsz), tag,
				       rd4(d + q + idsz));
			break;
		case PH_ROOT_NATIVE_STACK:
		case PH_ROOT_THREAD_BLOCK:
			len = idsz + 4ull;
			if (len > left)
				goto short_rec;
			rc = push_root(r, rdid(d + q, idsz), tag,
				       rd4(d + q + idsz));
			break;
		case PH_ROOT_THREAD_OBJECT: {
			uint64_t t;

			len = idsz + 8ull;
			if (len > left)
				goto short_rec;
			t = (uint64_t)rd4(d + q + idsz) << 32 | r->roots.n;
			rc = push_root(r, rdid(d + q, idsz), tag,
				       rd4(d + q + idsz));
			if (!rc)
				rc = vec_push(&r->threads, &t, 8);
			break;
		}
		case 0xFE: /* HEAP_DUMP_INFO */
			len = 4ull + idsz;
			if (len > left)
				goto short_rec;
			h->android = true;
			r->cur_heap =
				heap_for(r, rd4(d + q), rdid(d + q + 4, idsz));
			rc = 0;
			break;
		case 0x20: rc = read_class(r, d, q, end, &len); break;
		case 0x21: {
			uint64_t hdr = 2ull * idsz + 8;

			if (hdr > left)
				goto short_rec;
			len = hdr + rd4(d + q + 2 * idsz + 4);
			if (len > left)
				goto short_rec;
			h->heaps[r->cur_heap].objects++;
			rc = push_obj(r, rdid(d + q, idsz), p,
				      PH_HEAP_INSTANCE);
			break;
		}
		case 0x22: {
			uint64_t hdr = 2ull * idsz + 8;

			if (hdr > left)
				goto short_rec;
			len = hdr + (uint64_t)rd4(d + q + idsz + 4) * idsz;
			if (len > left)
				goto short_rec;
			h->heaps[r->cur_heap].objects++;
			rc = push_obj(r, rdid(d + q, idsz), p,
				      PH_HEAP_OBJ_ARRAY);
			break;
		}
		case 0x23:
		case 0xC3: {
			uint64_t hdr = idsz + 9ull;
			size_t es;

			if (hdr > left)
				goto short_rec;
			es = tsize(idsz, d[q + idsz + 8]);
			if (!es || d[q + idsz + 8] == PH_HT_OBJECT) {
				rc = PH_CORRUPT(&h->err, q + idsz + 8,
						"primitive array of type %u",
						d[q + idsz + 8]);
				break;
			}
			len = hdr;
			if (tag == 0x23)
				len += (uint64_t)rd4(d + q + idsz + 4) * es;
			else
				h->android = true;
			if (len > left)
				goto short_rec;
			h->heaps[r->cur_heap].objects++;
			rc = push_obj(r, rdid(d + q, idsz), p,
				      PH_HEAP_PRIM_ARRAY);
			break;
		}
		default:
			h->sub_count[tag]--;
			return PH_CORRUPT(&h->err, p,
					  "unknown heap sub-record tag 0x%02x",
					  tag);
		}
		if (rc)
			return rc;
		p = q + len;
		continue;
short_rec:
		h->sub_count[tag]--;
		return PH_CORRUPT(&h->err, p,
				  "heap sub-record 0x%02x runs past the end of "
				  "its segment",
				  tag);
	}
	return 0;
}

static int read_records(struct reader *r, uint64_t p)
{
	struct ph_heap *h = r->h;
	const uint8_t *d = h->data;
	const uint32_t idsz = h->idsz;
	int rc = 0;

	while (p < h->size) {
		uint8_t tag;
		uint64_t len, body;

		if (h->size - p < 9)
			return PH_CORRUPT(&h->err, p,
					  "truncated record header");
		advance(r, p);
		tag = d[p];
		len = rd4(d + p + 5);
		body = p + 9;
		if (len > h->size - body) {
			/* Read what is there of a cut heap dump. */
			if (tag == 0x0C || tag == 0x1C) {
				h->rec_count[tag]++;
				h->segments++;
				rc = read_heap(r, body, h->size);
				if (rc)
					return rc;
			}
			return PH_CORRUPT(&h->err, p,
					  "record 0x%02x of %" PRIu64
					  " bytes runs past the end of the "
					  "file",
					  tag, len);
		}
		h->rec_count[tag]++;
		switch (tag) {
		case 0x01:
			if (len >= idsz) {
				struct strrec s = {
					rdid(d + body, idsz),
					(body + idsz) << 24 |
						(len - idsz > 0xffffff ?
							 0xffffff :
							 len - idsz)
				};

				rc = vec_push(&r->strs, &s, sizeof(s));
			}
			break;
		case 0x02:
			if (len >= 8ull + 2 * idsz) {
				struct lcrec l = { rdid(d + body + 4, idsz),
						   rdid(d + body + 8 + idsz,
							idsz) };

				rc = vec_push(&r->lcs, &l, sizeof(l));
			}
			break;
		case 0x0C:
		case 0x1C:
			h->segments++;
			rc = read_heap(r, body, body + len);
			break;
		}
		if (rc)
			return rc;
		p = body + len;
	}
	return 0;
}

/* ---- sorting ------------------------------------------------------- */

static int cmp_u64pair(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sorts ids with metas alongside: LSD radix, 16 bits a pass, over (id,
 * meta) pairs; stable, so duplicate ids (a hostile dump) keep dump order.
 * The general case: build_index avoids it for the usual dumps.
 */
static int radix_sort(uint64_t *ids, uint64_t *metas, size_t n)
{
	uint64_t *tmp, *t2;
	size_t i, *count;

	tmp = malloc(n * 16);
	t2 = malloc(n * 16);
	/* The digit counts, 512 KiB: the caller's own (a static one was
	 * shared by every thread sorting at once). */
	count = malloc(65537 * sizeof(*count));
	if (!tmp || !t2 || !count) {
		free(tmp);
		free(t2);
		free(count);
		return PH_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		tmp[2 * i] = ids[i];
		tmp[2 * i + 1] = metas[i];
	}
	for (unsigned shift = 0; shift < 64; shift += 16) {
		uint64_t all_or = 0, all_and = ~0ull;

		for (i = 0; i < n; i++) {
			all_or |= tmp[2 * i];
			all_and &= tmp[2 * i];
		}
		if (!(((all_or ^ all_and) >> shift) & 0xffff))
			continue; /* this digit is the same everywhere */
		memset(count, 0, 65537 * sizeof(*count));
		for (i = 0; i < n; i++)
			count[((tmp[2 * i] >> shift) & 0xffff) + 1]++;
		for (i = 1; i < 65537; i++)
			count[i] += count[i - 1];
		for (i = 0; i < n; i++) {
			size_t at = count[(tmp[2 * i] >> shift) & 0xffff]++;

			t2[2 * at] = tmp[2 * i];
			t2[2 * at + 1] = tmp[2 * i + 1];
		}
		uint64_t *sw = tmp;
		tmp = t2;
		t2 = sw;
	}
	for (i = 0; i < n; i++) {
		ids[i] = tmp[2 * i];
		metas[i] = tmp[2 * i + 1];
	}
	free(tmp);
	free(t2);
	free(count);
	return 0;
}

/* m[rank of keys[i]] = metas[i]: the rank is the bits set below it */
static inline __attribute__((always_inline)) void
scatter_body(const uint32_t *keys, const uint64_t *metas, uint64_t *m, size_t n,
	     const uint64_t *bm, const uint32_t *before)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t k = keys[i];
		uint64_t below = bm[k >> 6] & ((1ull << (k & 63)) - 1);

		m[before[k >> 6] + (uint32_t)__builtin_popcountll(below)] =
			metas[i];
	}
}

static void scatter(const uint32_t *keys, const uint64_t *metas, uint64_t *m,
		    size_t n, const uint64_t *bm, const uint32_t *before)
{
	scatter_body(keys, metas, m, n, bm, before);
}

/* The same with the popcnt instruction, where the CPU has it (x86-64
 * builds target the baseline, whose popcount is a library call). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PH_HAVE_POPCNT_TARGET 1
__attribute__((target("popcnt"))) static void
scatter_popcnt(const uint32_t *keys, const uint64_t *metas, uint64_t *m,
	       size_t n, const uint64_t *bm, const uint32_t *before)
{
	scatter_body(keys, metas, m, n, bm, before);
}
#else
#define PH_HAVE_POPCNT_TARGET 0
#endif

/*
 * Sorts by rank in a bitmap of the key space: every key sets its bit, a
 * key's place is the number of bits set before it.  O(n), and its writes
 * are sequential within each run of ascending ids, which is how dumps
 * come (a JVM dump is a few hundred address-ordered runs, one per heap
 * region).  Used when the key space is dense (at most 64 slots per
 * object, so the bitmap costs at most 8 bytes per object, briefly).
 * Returns 1, changing nothing, when two objects share an id.
 *
 * On entry keys[i] holds object i's key; on success keys and *metas are
 * in key order (*metas is replaced).
 */
static int rank_sort(uint32_t *keys, uint64_t **metas, size_t n, uint64_t span)
{
	size_t words = (size_t)(span >> 6) + 1;
	uint64_t *bm = calloc(words, 8);
	uint32_t *before = malloc(words * 4);
	uint64_t *m = NULL;
	size_t i, at = 0;
	int rc = PH_ENOMEM;

	if (!bm || !before)
		goto out;
	for (i = 0; i < n; i++) {
		uint64_t bit = 1ull << (keys[i] & 63);

		if (bm[keys[i] >> 6] & bit) {
			rc = 1;
			goto out;
		}
		bm[keys[i] >> 6] |= bit;
	}
	m = ph_heap_big_alloc(n * 8);
	if (!m)
		goto out;
	for (size_t w = 0; w < words; w++) {
		before[w] = (uint32_t)at;
		at += (size_t)__builtin_popcountll(bm[w]);
	}
#if PH_HAVE_POPCNT_TARGET
	if (__builtin_cpu_supports("popcnt"))
		scatter_popcnt(keys, *metas, m, n, bm, before);
	else
#endif
		scatter(keys, *metas, m, n, bm, before);
	/* the sorted keys are the set bits, in order */
	at = 0;
	for (size_t w = 0; w < words; w++)
		for (uint64_t b = bm[w]; b; b &= b - 1)
			keys[at++] = (uint32_t)(w << 6 |
						(unsigned)__builtin_ctzll(b));
	ph_heap_big_free(*metas);
	*metas = m;
	rc = 0;
out:
	free(bm);
	free(before);
	return rc;
}

/*
 * The index (see heap.h) from the pass's ids and metas, in dump order;
 * takes both arrays.  Ids are addresses: they share an alignment (shift)
 * and usually span less than 2^32 aligned slots, so a 32-bit key per
 * object does; otherwise the raw ids stay (wide).
 */
static int build_index(struct ph_heap *h, uint64_t *ids, uint64_t *metas)
{
	size_t n = h->nobj;
	uint64_t min, max, or_bits = 0, span;
	bool sorted = true;
	uint32_t *keys;
	int rc;

	h->meta = metas;
	if (!n) {
		ph_heap_big_free(ids);
		h->keys = ph_heap_big_alloc(4);
		return h->keys ? 0 : PH_ENOMEM;
	}
	min = max = ids[0];
	for (size_t i = 1; i < n; i++) {
		/* ctz of the OR of differences from any one id is the
		 * alignment they all share */
		or_bits |= ids[i] - ids[0];
		if (ids[i] < ids[i - 1])
			sorted = false;
		if (ids[i] < min)
			min = ids[i];
		if (ids[i] > max)
			max = ids[i];
	}
	h->min_id = min;
	h->shift = or_bits ? (unsigned)__builtin_ctzll(or_bits) : 0;
	if (h->shift > 16)
		h->shift = 16;
	span = (max - min) >> h->shift;
	if (span > UINT32_MAX || (!sorted && span / 64 > n)) {
		/* wide, or sparse keys: the general sort */
		if (!sorted) {
			rc = radix_sort(ids, metas, n);
			if (rc) {
				ph_heap_big_free(ids);
				return rc;
			}
		}
		if (span > UINT32_MAX) {
			h->wide = true;
			h->wide_ids = ids;
			return 0;
		}
		sorted = true;
	}
	/* keys over the ids' own memory, then the rest given back */
	keys = (uint32_t *)ids;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)((ids[i] - min) >> h->shift);

		memcpy((char *)ids + 4 * i, &k, 4);
	}
	h->keys = ph_heap_big_realloc(keys, n * 4);
	if (!h->keys)
		h->keys = keys;
	if (sorted)
		return 0;
	rc = rank_sort(h->keys, &h->meta, n, span);
	if (rc != 1)
		return rc;
	/* duplicate ids: back to wide ids for the stable general sort */
	ids = ph_heap_big_alloc(n * 8);
	if (!ids)
		return PH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		ids[i] = min + ((uint64_t)h->keys[i] << h->shift);
	ph_heap_big_free(h->keys);
	h->keys = NULL;
	rc = radix_sort(ids, h->meta, n);
	if (rc) {
		ph_heap_big_free(ids);
		return rc;
	}
	keys = (uint32_t *)ids;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)((ids[i] - min) >> h->shift);

		memcpy((char *)ids + 4 * i, &k, 4);
	}
	h->keys = keys;
	return 0;
}

uint32_t ph_heap_find(const struct ph_heap *h, uint64_t id)
{
	size_t lo = 0, hi = h->nobj;

	if (!h->nobj || id < h->min_id)
		return PH_HEAP_NONE;
	if (h->wide) {
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (h->wide_ids[mid] < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < h->nobj && h->wide_ids[lo] == id ? (uint32_t)lo :
							       PH_HEAP_NONE;
	} else {
		uint64_t d = id - h->min_id;
		uint32_t key;

		if (d & ((1ull << h->shift) - 1))
			return PH_HEAP_NONE;
		d >>= h->shift;
		if (d > UINT32_MAX)
			return PH_HEAP_NONE;
		key = (uint32_t)d;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (h->keys[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < h->nobj && h->keys[lo] == key ? (uint32_t)lo :
							    PH_HEAP_NONE;
	}
}

uint64_t ph_heap_id(const struct ph_heap *h, uint32_t obj)
{
	if (h->wide)
		return h->wide_ids[obj];
	return h->min_id + ((uint64_t)h->keys[obj] << h->shift);
}

/* ---- strings and class names ---------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	const struct strrec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

const char *ph_heap_string(const struct ph_heap *h, uint64_t sid, size_t *n)
{
	size_t lo = 0, hi = h->nstrs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->str_ids[mid] < sid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= h->nstrs || h->str_ids[lo] != sid)
		return NULL;
	*n = h->str_offs[lo] & 0xffffff;
	return (const char *)h->data + (h->str_offs[lo] >> 24);
}

static const char *prim_name(char c)
{
	switch (c) {
	case 'Z': return "boolean";
	case 'C': return "char";
	case 'F': return "float";
	case 'D': return "double";
	case 'B': return "byte";
	case 'S': return "short";
	case 'I': return "int";
	case 'J': return "long";
	}
	return NULL;
}

/* "java/lang/String" and "[Ljava/lang/String;" into Java form. */
static const char *java_name(struct ph_heap *h, const char *s, size_t n)
{
	struct ph_buf b = PH_BUF_INIT(4096);
	size_t dims = 0;
	const char *out;
	int rc = 0;

	while (dims < n && s[dims] == '[')
		dims++;
	if (dims) {
		const char *pn = dims < n ? prim_name(s[dims]) : NULL;

		if (dims + 1 == n && pn) {
			rc = ph_buf_addstr(&b, pn);
		} else if (dims < n && s[dims] == 'L') {
			size_t e = n;

			if (e > dims + 1 && s[e - 1] == ';')
				e--;
			rc = ph_buf_add(&b, s + dims + 1, e - dims - 1);
		} else {
			rc = ph_buf_add(&b, s, n);
			dims = 0;
		}
	} else {
		rc = ph_buf_add(&b, s, n);
	}
	for (size_t i = 0; i < b.len; i++)
		if (b.buf[i] == '/')
			b.buf[i] = '.';
	for (size_t i = 0; !rc && i < dims; i++)
		rc = ph_buf_addstr(&b, "[]");
	out = rc ? NULL : ph_arena_strndup(&h->arena, b.buf, b.len);
	ph_buf_release(&b);
	return out ? out : "?";
}

static int cmp_class(const void *a, const void *b)
{
	const struct ph_heap_class *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

uint32_t ph_heap_class_by_id(const struct ph_heap *h, uint64_t id)
{
	size_t lo = 0, hi = h->nclasses_real;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->classes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->nclasses_real && h->classes[lo].id == id ? (uint32_t)lo :
								  PH_HEAP_NONE;
}

uint32_t ph_heap_class_by_name(const struct ph_heap *h, const char *name)
{
	for (uint32_t i = 0; i < h->nclasses; i++)
		if (!strcmp(h->classes[i].name, name))
			return i;
	return PH_HEAP_NONE;
}

bool ph_heap_class_is(const struct ph_heap *h, uint32_t c, uint32_t ancestor)
{
	/* nclasses bounds the walk, so a cycle cannot hang us */
	for (uint32_t i = 0; c != PH_HEAP_NONE && i <= h->nclasses; i++) {
		if (c == ancestor)
			return true;
		c = h->classes[c].super;
	}
	return false;
}

bool ph_heap_class_is_named(const struct ph_heap *h, uint32_t c,
			    const char *name)
{
	for (uint32_t i = 0; c != PH_HEAP_NONE && i <= h->nclasses; i++) {
		if (!strcmp(h->classes[c].name, name))
			return true;
		c = h->classes[c].super;
	}
	return false;
}

const char *ph_heap_class_name(struct ph_heap *h, uint32_t cls)
{
	return cls < h->nclasses ? h->classes[cls].name : "?";
}

static const char *const prim_arrays[] = {
	[PH_HT_BOOLEAN] = "boolean[]", [PH_HT_CHAR] = "char[]",
	[PH_HT_FLOAT] = "float[]",     [PH_HT_DOUBLE] = "double[]",
	[PH_HT_BYTE] = "byte[]",       [PH_HT_SHORT] = "short[]",
	[PH_HT_INT] = "int[]",	       [PH_HT_LONG] = "long[]",
};

/*
 * Names, superclasses and flattened field layouts.  A superclass chain
 * longer than the number of classes is a cycle: it is cut and reported.
 */
static int finish_classes(struct ph_heap *h)
{
	const uint8_t *d = h->data;
	uint32_t n = h->nclasses_real, nsyn = 0;
	uint32_t depth_cap = n + 1;
	struct vec fields = { 0 }, refs = { 0 };
	int rc = 0;

	/* names through LOAD_CLASS */
	for (uint32_t i = 0; i < n; i++) {
		struct ph_heap_class *c = &h->classes[i];
		size_t lo = 0, hi = h->nlc, sn;
		const char *s = NULL;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (h->lc_ids[mid] < c->id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < h->nlc && h->lc_ids[lo] == c->id)
			s = ph_heap_string(h, h->lc_names[lo], &sn);
		if (s) {
			c->raw_name = java_name(h, s, sn);
		} else {
			char tmp[40];

			snprintf(tmp, sizeof(tmp), "class@0x%" PRIx64, c->id);
			c->raw_name =
				ph_arena_strndup(&h->arena, tmp, strlen(tmp));
			if (!c->raw_name)
				return PH_ENOMEM;
		}
		c->name = c->raw_name;
		c->super = c->super_id ? ph_heap_class_by_id(h, c->super_id) :
					 PH_HEAP_NONE;
		c->obj = PH_HEAP_NONE;
		c->strength = PH_REACH_STRONG;
		c->is_string = !strcmp(c->name, "java.lang.String");
		size_t nl = strlen(c->name);
		for (unsigned t = PH_HT_BOOLEAN; t <= PH_HT_LONG; t++)
			if (prim_arrays[t] && nl == strlen(prim_arrays[t]) &&
			    !strcmp(c->name, prim_arrays[t]))
				c->prim_type = (uint8_t)t;
	}
	/* synthetic classes for primitive array types the dump never named */
	for (unsigned t = PH_HT_BOOLEAN; t <= PH_HT_LONG; t++) {
		bool have = false;

		for (uint32_t i = 0; i < n && !have; i++)
			have = h->classes[i].prim_type == t;
		if (!have)
			nsyn++;
	}
	if (nsyn) {
		struct ph_heap_class *nc =
			realloc(h->classes, (n + nsyn) * sizeof(*nc));

		if (!nc)
			return PH_ENOMEM;
		h->classes = nc;
		for (unsigned t = PH_HT_BOOLEAN; t <= PH_HT_LONG; t++) {
			bool have = false;

			for (uint32_t i = 0; i < h->nclasses && !have; i++)
				have = h->classes[i].prim_type == t;
			if (have)
				continue;
			memset(&nc[h->nclasses], 0, sizeof(*nc));
			nc[h->nclasses].name = prim_arrays[t];
			nc[h->nclasses].raw_name = prim_arrays[t];
			nc[h->nclasses].prim_type = (uint8_t)t;
			nc[h->nclasses].synthetic = true;
			nc[h->nclasses].super = PH_HEAP_NONE;
			nc[h->nclasses].obj = PH_HEAP_NONE;
			nc[h->nclasses].referent_off = PH_HEAP_NONE;
			h->nclasses++;
		}
	}
	/* and one for objects whose class id names no class dump */
	{
		struct ph_heap_class *nc =
			realloc(h->classes, (h->nclasses + 1) * sizeof(*nc));

		if (!nc)
			return PH_ENOMEM;
		h->classes = nc;
		memset(&nc[h->nclasses], 0, sizeof(*nc));
		nc[h->nclasses].name = "<unknown class>";
		nc[h->nclasses].raw_name = nc[h->nclasses].name;
		nc[h->nclasses].synthetic = true;
		nc[h->nclasses].super = PH_HEAP_NONE;
		nc[h->nclasses].obj = PH_HEAP_NONE;
		nc[h->nclasses].referent_off = PH_HEAP_NONE;
		h->unknown_cls = h->nclasses++;
	}
	/* flattened fields: own first, then each superclass's */
	for (uint32_t i = 0; i < n; i++) {
		struct ph_heap_class *c = &h->classes[i];
		uint32_t off = 0, cur = i;
		uint16_t depth = 0;

		c->fields = (uint32_t)fields.n;
		c->refs = (uint32_t)refs.n;
		while (cur != PH_HEAP_NONE) {
			const struct ph_heap_class *k = &h->classes[cur];

			if (depth >= depth_cap || depth == UINT16_MAX) {
				PH_CORRUPT(&h->err, c->rec,
					   "class hierarchy of %s is a cycle",
					   c->name);
				h->partial = true;
				break;
			}
			for (uint32_t f = 0; f < k->nown; f++) {
				const uint8_t *fp = d + k->own_off +
						    (uint64_t)f * (h->idsz + 1);
				struct ph_heap_field fld = {
					.name_sid = rdid(fp, h->idsz),
					.offset = off,
					.decl = depth,
					.type = fp[h->idsz],
				};

				if (vec_push(&fields, &fld, sizeof(fld)))
					goto nomem;
				if (fld.type == PH_HT_OBJECT &&
				    vec_push(&refs, &off, 4))
					goto nomem;
				off += (uint32_t)ph_heap_type_size(h, fld.type);
			}
			cur = k->super;
			depth++;
		}
		c->nfields = (uint32_t)fields.n - c->fields;
		c->nrefs = (uint32_t)refs.n - c->refs;
		c->fields_size = off;
	}
	h->fields = fields.p;
	h->nfields = (uint32_t)fields.n;
	h->refoffs = refs.p;
	h->nrefoffs = (uint32_t)refs.n;
	/* java.lang.ref: which classes hold their referent weakly */
	for (uint32_t i = 0; i < n; i++) {
		struct ph_heap_class *c = &h->classes[i];
		static const struct {
			const char *name;
			uint8_t strength;
		} kinds[] = {
			{ "java.lang.ref.PhantomReference", PH_REACH_PHANTOM },
			{ "java.lang.ref.WeakReference", PH_REACH_WEAK },
			{ "java.lang.ref.FinalizerReference",
			  PH_REACH_FINALIZER },
			{ "java.lang.ref.Finalizer", PH_REACH_FINALIZER },
			{ "java.lang.ref.SoftReference", PH_REACH_SOFT },
			{ "java.lang.ref.Reference", PH_REACH_WEAK },
		};

		for (size_t k = 0; k < PH_ARRAY_SIZE(kinds); k++) {
			if (!ph_heap_class_is_named(h, i, kinds[k].name))
				continue;
			c->strength = kinds[k].strength;
			for (uint32_t f = 0; f < c->nfields; f++) {
				const struct ph_heap_field *fl =
					&h->fields[c->fields + f];
				size_t sn;
				const char *s =
					ph_heap_string(h, fl->name_sid, &sn);

				if (fl->type == PH_HT_OBJECT && s && sn == 8 &&
				    !memcmp(s, "referent", 8))
					c->referent_off = fl->offset;
			}
			break;
		}
	}
	return rc;
nomem:
	free(fields.p);
	free(refs.p);
	return PH_ENOMEM;
}

/* Whether records of `size` bytes, each starting with a u64 id, ascend. */
static bool sorted_by_id(const void *p, size_t n, size_t size)
{
	const char *c = p;

	for (size_t i = 1; i < n; i++) {
		uint64_t a, b;

		memcpy(&a, c + (i - 1) * size, 8);
		memcpy(&b, c + i * size, 8);
		if (a > b)
			return false;
	}
	return true;
}

/* ---- open ----------------------------------------------------------- */

void ph_heap_init(struct ph_heap *h)
{
	memset(h, 0, sizeof(*h));
	ph_arena_init(&h->arena, 0, SIZE_MAX);
}

static int index_dump(struct ph_heap *h)
{
	struct reader r = { .h = h };
	const uint8_t *d = h->data;
	size_t hl = 0;
	uint64_t *ids, *metas;
	int rc;

	while (hl < h->size && hl < 32 && d[hl])
		hl++;
	if (hl >= h->size || d[hl] || hl < 17 ||
	    memcmp(d, "JAVA PROFILE 1.0.", 17))
		return PH_CORRUPT(&h->err, 0,
				  "not an HPROF file (no \"JAVA PROFILE "
				  "1.0.x\" header)");
	memcpy(h->version, d, hl < sizeof(h->version) ? hl : 19);
	if (h->size - hl - 1 < 12)
		return PH_CORRUPT(&h->err, hl + 1, "header ends early");
	h->idsz = rd4(d + hl + 1);
	if (h->idsz != 4 && h->idsz != 8)
		return PH_CORRUPT(&h->err, hl + 1,
				  "identifier size %u (4 or 8 expected)",
				  h->idsz);
	h->timestamp_ms = rd8(d + hl + 5);
	h->nheaps = 0;
	r.cur_heap = heap_for(&r, 0, 0); /* "default" until told */
	/* only a mapping of our own is windowed (see advance) */
	r.win_next = h->mapped ? 0 : UINT64_MAX;

	if (h->size > (1ull << 40))
		return PH_CORRUPT(&h->err, 0,
				  "dumps over 1 TB are not indexed");
	/* a first guess that avoids most regrowth on JVM-sized objects */
	r.ids.cap = h->size / 32 + 16;
	r.ids.p = ph_heap_big_alloc(r.ids.cap * 8);
	r.metas.cap = r.ids.cap;
	r.metas.p = ph_heap_big_alloc(r.metas.cap * 8);
	r.ids.big = r.metas.big = true;
	if (!r.ids.p || !r.metas.p) {
		rc = PH_ENOMEM;
		goto out;
	}
	rc = read_records(&r, hl + 13);
	if (rc == PH_ECORRUPT) {
		h->partial = true;
		rc = 0;
	}
	if (rc)
		goto out;
	if (r.ids.n > UINT32_MAX - 2) {
		rc = PH_CORRUPT(&h->err, 0, "more than 2^32 objects");
		goto out;
	}
	h->nobj = (uint32_t)r.ids.n;
	ids = r.ids.p;
	r.ids.p = NULL;
	metas = r.metas.p;
	r.metas.p = NULL;
	rc = build_index(h, ids, metas);
	if (rc)
		goto out;

	/* strings, load-class table */
	/* dumps usually write these in id order: then sorting is a scan */
	if (!sorted_by_id(r.strs.p, r.strs.n, sizeof(struct strrec)))
		qsort(r.strs.p, r.strs.n, sizeof(struct strrec), cmp_str);
	h->nstrs = r.strs.n;
	h->str_ids = malloc((h->nstrs + 1) * 8);
	h->str_offs = malloc((h->nstrs + 1) * 8);
	if (!sorted_by_id(r.lcs.p, r.lcs.n, sizeof(struct lcrec)))
		qsort(r.lcs.p, r.lcs.n, sizeof(struct lcrec), cmp_u64pair);
	h->nlc = r.lcs.n;
	h->lc_ids = malloc((h->nlc + 1) * 8);
	h->lc_names = malloc((h->nlc + 1) * 8);
	if (!h->str_ids || !h->str_offs || !h->lc_ids || !h->lc_names) {
		rc = PH_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < h->nstrs; i++) {
		h->str_ids[i] = ((struct strrec *)r.strs.p)[i].id;
		h->str_offs[i] = ((struct strrec *)r.strs.p)[i].off;
	}
	for (size_t i = 0; i < h->nlc; i++) {
		h->lc_ids[i] = ((struct lcrec *)r.lcs.p)[i].id;
		h->lc_names[i] = ((struct lcrec *)r.lcs.p)[i].name;
	}
	for (uint32_t i = 0; i < h->nheaps; i++) {
		size_t sn = 0;
		const char *s =
			r.heap_name_sid[i] ?
				ph_heap_string(h, r.heap_name_sid[i], &sn) :
				NULL;

		h->heaps[i].name = s ? ph_arena_strndup(&h->arena, s, sn) :
				       "default";
		if (!h->heaps[i].name)
			h->heaps[i].name = "?";
	}

	/* classes */
	if (!sorted_by_id(r.classes.p, r.classes.n,
			  sizeof(struct ph_heap_class)))
		qsort(r.classes.p, r.classes.n, sizeof(struct ph_heap_class),
		      cmp_class);
	h->classes = r.classes.p;
	r.classes.p = NULL;
	h->nclasses = h->nclasses_real = (uint32_t)r.classes.n;
	rc = finish_classes(h);
	if (rc)
		goto out;
	for (uint32_t i = 0; i < h->nclasses_real; i++)
		h->classes[i].obj = ph_heap_find(h, h->classes[i].id);

	/* roots and threads */
	h->roots = r.roots.p;
	r.roots.p = NULL;
	h->nroots = r.roots.n;
	for (size_t i = 0; i < h->nroots; i++)
		h->roots[i].obj = ph_heap_find(h, h->roots[i].id);
	if (r.threads.n)
		qsort(r.threads.p, r.threads.n, 8, cmp_u64pair);
	h->nthreads = r.threads.n;
	h->thread_serials = malloc((h->nthreads + 1) * 4);
	h->thread_objs = malloc((h->nthreads + 1) * 4);
	if (!h->thread_serials || !h->thread_objs) {
		rc = PH_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < h->nthreads; i++) {
		uint64_t t = ((uint64_t *)r.threads.p)[i];

		h->thread_serials[i] = (uint32_t)(t >> 32);
		h->thread_objs[i] = h->roots[(uint32_t)t].obj;
	}
out:
	ph_heap_big_free(r.ids.p);
	ph_heap_big_free(r.metas.p);
	free(r.strs.p);
	free(r.lcs.p);
	free(r.classes.p);
	free(r.roots.p);
	free(r.threads.p);
	return rc;
}

int ph_heap_open_mem(struct ph_heap *h, const void *data, size_t size)
{
	h->data = data;
	h->size = size;
	return index_dump(h);
}

int ph_heap_open(struct ph_heap *h, const char *path)
{
	struct stat st;
	void *p;
	int rc, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? PH_ENOENT :
					 ph_error(PH_EIO, "open %s: %s", path,
						  strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return ph_error(PH_EIO, "%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return PH_CORRUPT(&h->err, 0, "empty file");
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return ph_error(PH_EIO, "mmap %s: %s", path, strerror(errno));
	madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
	h->mapped = true;
	h->data = p;
	h->size = (size_t)st.st_size;
	rc = index_dump(h);
	ph_heap_drop_pages(h);
	return rc;
}

void ph_heap_drop_pages(struct ph_heap *h)
{
	/*
	 * The dump's pages are only cache: after a sequential pass they
	 * are dropped from our resident set (they stay in the page cache,
	 * and come back on the next touch), so peak RSS is the analysis
	 * state, not the analysis state plus the whole file.
	 */
	if (h->mapped && h->data) {
		madvise((void *)h->data, h->size, MADV_DONTNEED);
		madvise((void *)h->data, h->size, MADV_RANDOM);
	}
}

void ph_heap_set_map(struct ph_heap *h, struct ph_heap_map *map)
{
	h->map = map;
	for (uint32_t i = 0; map && i < h->nclasses; i++) {
		struct ph_heap_class *c = &h->classes[i];
		size_t n = strlen(c->raw_name), base = n;
		const char *orig;

		while (base >= 2 && !memcmp(c->raw_name + base - 2, "[]", 2))
			base -= 2;
		char *tmp = ph_arena_strndup(&h->arena, c->raw_name, base);

		if (!tmp)
			continue;
		orig = ph_heap_map_class(map, tmp);
		if (!orig)
			continue;
		size_t on = strlen(orig);
		char *nn = ph_arena_alloc_bytes(&h->arena, on + n - base + 1);

		if (!nn)
			continue;
		memcpy(nn, orig, on);
		memcpy(nn + on, c->raw_name + base, n - base + 1);
		c->name = nn;
		c->is_string = !strcmp(nn, "java.lang.String");
	}
}

const char *ph_heap_field_name(struct ph_heap *h, uint32_t cls,
			       const struct ph_heap_field *f)
{
	size_t n;
	const char *s = ph_heap_string(h, f->name_sid, &n);
	char *name;

	if (!s)
		return "?";
	name = ph_arena_strndup(&h->arena, s, n);
	if (!name)
		return "?";
	if (h->map) {
		uint32_t decl = cls;
		const char *orig;

		for (uint16_t i = 0; i < f->decl && decl != PH_HEAP_NONE; i++)
			decl = h->classes[decl].super;
		if (decl != PH_HEAP_NONE) {
			orig = ph_heap_map_field(
				h->map, h->classes[decl].raw_name, name);
			if (orig)
				return orig;
		}
	}
	return name;
}

void ph_heap_release(struct ph_heap *h)
{
	if (h->mapped && h->data)
		munmap((void *)h->data, h->size);
	free(h->str_ids);
	free(h->str_offs);
	free(h->lc_ids);
	free(h->lc_names);
	free(h->classes);
	free(h->fields);
	free(h->refoffs);
	ph_heap_big_free(h->keys);
	ph_heap_big_free(h->wide_ids);
	ph_heap_big_free(h->meta);
	free(h->roots);
	free(h->thread_serials);
	free(h->thread_objs);
	ph_heap_big_free(h->cls);
	ph_heap_big_free(h->shallow);
	ph_heap_big_free(h->eoff);
	ph_heap_big_free(h->edst);
	free(h->wrefs);
	free(h->native_obj);
	free(h->native_size);
	ph_heap_big_free(h->idom);
	ph_heap_big_free(h->retained);
	ph_heap_big_free(h->retained_count);
	ph_arena_release(&h->arena);
	memset(h, 0, sizeof(*h));
}

/* ---- reading values --------------------------------------------------- */

/* Start and length of an instance's field bytes; false if not one. */
static bool instance_data(const struct ph_heap *h, uint32_t obj,
			  uint64_t *start, uint32_t *len, uint64_t *cls_id)
{
	uint64_t rec = ph_heap_rec(h, obj);
	const uint8_t *d = h->data;

	if (ph_heap_kind_of(h, obj) != PH_HEAP_INSTANCE)
		return false;
	*cls_id = rdid(d + rec + 1 + h->idsz + 4, h->idsz);
	*len = rd4(d + rec + 1 + 2 * h->idsz + 4);
	*start = rec + 1 + 2ull * h->idsz + 8;
	return true;
}

static uint64_t read_value(const struct ph_heap *h, const uint8_t *p,
			   unsigned type)
{
	switch (ph_heap_type_size(h, type)) {
	case 1: return p[0];
	case 2: return rd2(p);
	case 4: return rd4(p);
	case 8: return rd8(p);
	}
	return 0;
}

static bool name_is(const struct ph_heap *h, uint64_t sid, const char *name)
{
	size_t n;
	const char *s = ph_heap_string(h, sid, &n);

	return s && n == strlen(name) && !memcmp(s, name, n);
}

struct ph_heap_value ph_heap_get_field(struct ph_heap *h, uint32_t obj,
				       const char *decl, const char *name)
{
	struct ph_heap_value v = { 0 };
	uint64_t start, cid;
	uint32_t len, c;

	if (obj >= h->nobj || !instance_data(h, obj, &start, &len, &cid))
		return v;
	c = h->cls ? h->cls[obj] : ph_heap_class_by_id(h, cid);
	if (c == PH_HEAP_NONE)
		return v;
	const struct ph_heap_class *k = &h->classes[c];
	for (uint32_t i = 0; i < k->nfields; i++) {
		const struct ph_heap_field *f = &h->fields[k->fields + i];
		size_t ts = ph_heap_type_size(h, f->type);

		if (decl) {
			uint32_t dc = c;

			for (uint16_t j = 0; j < f->decl && dc != PH_HEAP_NONE;
			     j++)
				dc = h->classes[dc].super;
			if (dc == PH_HEAP_NONE ||
			    strcmp(h->classes[dc].name, decl))
				continue;
		}
		if (!name_is(h, f->name_sid, name)) {
			/* an obfuscated dump: compare de-obfuscated names */
			if (!h->map ||
			    strcmp(ph_heap_field_name(h, c, f), name))
				continue;
		}
		if (f->offset + ts > len)
			return v;
		v.type = f->type;
		v.u = read_value(h, h->data + start + f->offset, f->type);
		return v;
	}
	return v;
}

/* Whether static sid of class k de-obfuscates to name. */
static bool static_mapped(struct ph_heap *h, const struct ph_heap_class *k,
			  uint64_t sid, const char *name)
{
	size_t n;
	const char *s = ph_heap_string(h, sid, &n);
	char *raw;
	const char *orig;

	if (!s || !(raw = ph_arena_strndup(&h->arena, s, n)))
		return false;
	orig = ph_heap_map_field(h->map, k->raw_name, raw);
	return orig && !strcmp(orig, name);
}

struct ph_heap_value ph_heap_get_static(struct ph_heap *h, uint32_t c,
					const char *name)
{
	struct ph_heap_value v = { 0 };
	const struct ph_heap_class *k;
	uint64_t q;

	if (c >= h->nclasses_real)
		return v;
	k = &h->classes[c];
	q = k->statics_off;
	for (uint32_t i = 0; i < k->nstatics; i++) {
		uint64_t sid = rdid(h->data + q, h->idsz);
		unsigned t = h->data[q + h->idsz];
		size_t ts = ph_heap_type_size(h, t);

		if (name_is(h, sid, name) ||
		    (h->map && static_mapped(h, k, sid, name))) {
			v.type = (uint8_t)t;
			v.u = read_value(h, h->data + q + h->idsz + 1, t);
			return v;
		}
		q += h->idsz + 1 + ts;
	}
	return v;
}

uint64_t ph_heap_instance_ref(const struct ph_heap *h, uint32_t obj,
			      uint32_t offset)
{
	uint64_t start, cid;
	uint32_t len;

	if (obj >= h->nobj || !instance_data(h, obj, &start, &len, &cid) ||
	    (uint64_t)offset + h->idsz > len)
		return 0;
	return rdid(h->data + start + offset, h->idsz);
}

uint32_t ph_heap_array_length(const struct ph_heap *h, uint32_t obj)
{
	enum ph_heap_kind k = ph_heap_kind_of(h, obj);

	if (k != PH_HEAP_OBJ_ARRAY && k != PH_HEAP_PRIM_ARRAY)
		return 0;
	return rd4(h->data + ph_heap_rec(h, obj) + 1 + h->idsz + 4);
}

uint64_t ph_heap_array_ref(const struct ph_heap *h, uint32_t obj, uint32_t i)
{
	uint64_t rec = ph_heap_rec(h, obj);

	if (ph_heap_kind_of(h, obj) != PH_HEAP_OBJ_ARRAY ||
	    i >= ph_heap_array_length(h, obj))
		return 0;
	return rdid(h->data + rec + 1 + 2ull * h->idsz + 8 +
			    (uint64_t)i * h->idsz,
		    h->idsz);
}

static int add_utf8(struct ph_buf *out, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 0xfffd;
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return ph_buf_add(out, b, n);
}

int ph_heap_read_string(struct ph_heap *h, uint32_t obj, struct ph_buf *out)
{
	struct ph_heap_value v, cnt, coder;
	uint32_t arr, n, c;
	uint64_t rec;
	unsigned et;
	int rc = 0;

	if (obj >= h->nobj || ph_heap_kind_of(h, obj) != PH_HEAP_INSTANCE)
		return PH_ENOENT;
	v = ph_heap_get_field(h, obj, "java.lang.String", "value");
	if (v.type != PH_HT_OBJECT)
		return PH_ENOENT;
	arr = ph_heap_find(h, v.u);
	if (arr == PH_HEAP_NONE ||
	    ph_heap_kind_of(h, arr) != PH_HEAP_PRIM_ARRAY)
		return PH_ENOENT;
	rec = ph_heap_rec(h, arr);
	if (h->data[rec] != 0x23)
		return PH_ENOENT; /* NODATA */
	n = ph_heap_array_length(h, arr);
	et = h->data[rec + 1 + h->idsz + 8];
	const uint8_t *p = h->data + rec + 1 + h->idsz + 9;
	cnt = ph_heap_get_field(h, obj, "java.lang.String", "count");
	coder = ph_heap_get_field(h, obj, "java.lang.String", "coder");
	if (et == PH_HT_CHAR) {
		c = cnt.type == PH_HT_INT && cnt.u <= n ? (uint32_t)cnt.u : n;
		for (uint32_t i = 0; !rc && i < c; i++) {
			uint32_t u = rd2(p + 2ull * i);

			if (u >= 0xd800 && u < 0xdc00 && i + 1 < c) {
				uint32_t lo = rd2(p + 2ull * (i + 1));

				if (lo >= 0xdc00 && lo < 0xe000) {
					u = 0x10000 + ((u - 0xd800) << 10) +
					    (lo - 0xdc00);
					i++;
				}
			}
			rc = add_utf8(out, u);
		}
	} else if (et == PH_HT_BYTE) {
		/* JDK 9+: coder 1 means UTF-16 in native (little) order */
		if (coder.type && coder.u == 1) {
			for (uint32_t i = 0; !rc && i + 1 < n; i += 2)
				rc = add_utf8(out,
					      (uint32_t)(p[i] | p[i + 1] << 8));
		} else {
			c = cnt.type == PH_HT_INT && cnt.u <= n ?
				    (uint32_t)cnt.u :
				    n;
			for (uint32_t i = 0; !rc && i < c; i++)
				rc = add_utf8(out, p[i]);
		}
	} else {
		return PH_ENOENT;
	}
	return rc;
}
