/* SPDX-License-Identifier: Apache-2.0 */
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
 * tables.  The dump itself is never copied.  hprof_index.c turns the ids
 * into the object index and hprof_class.c names the classes and reads
 * values; hprof_read.h is what the three share.
 */
#include "ph_common.h"
#include "heap.h"
#include "hprof_read.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
	const size_t huge = (size_t)2 << 20;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (bytes + BIG_HDR + page - 1) & ~(page - 1);
	size_t slack = len >= 2 * huge ? huge : 0;
	char *m = mmap(NULL, len + slack, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (slack) {
		/*
		 * A big array starts on a huge-page boundary: huge pages
		 * fill only whole aligned 2 MiB inside the mapping, and an
		 * unaligned start left up to 2 MiB of it to fault 4 KiB at a
		 * time (a fifth of a parse's page faults).  The slack either
		 * side of the aligned block is given back.
		 */
		size_t head = (size_t)(-(uintptr_t)m & (huge - 1));

		if (head)
			munmap(m, head);
		if (slack - head)
			munmap(m + head + len, slack - head);
		m += head;
	}
	/* advised before the header's write faults the first page in:
	 * that fault would have made the first 2 MiB small pages */
	advise_huge(m, len);
	memcpy(m, &len, sizeof(len));
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

/* ---- the pass ------------------------------------------------------ */

struct strrec {
	uint64_t id, off;
};
struct lcrec {
	uint64_t id, name;
};

struct reader {
	struct ph_heap *h;
	struct ph_hprof_vec ids, metas; /* uint64_t each */
	struct ph_hprof_vec strs;	/* struct strrec */
	struct ph_hprof_vec lcs;	/* struct lcrec */
	struct ph_hprof_vec classes;	/* struct ph_heap_class */
	struct ph_hprof_vec roots;	/* struct ph_heap_root */
	struct ph_hprof_vec threads; /* uint64_t: serial << 32 | root index */
	uint64_t win_next;	     /* advance() when the cursor passes this */
	uint64_t win_lo;	     /* first page not yet dropped */
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
		if (ph_hprof_vec_push(&r->ids, &id, 8) ||
		    ph_hprof_vec_push(&r->metas, &meta, 8))
			return PH_ENOMEM;
		return 0;
	}
	((uint64_t *)r->ids.p)[r->ids.n++] = id;
	if (PH_UNLIKELY(r->metas.n == r->metas.cap))
		return ph_hprof_vec_push(&r->metas, &meta, 8);
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

	return ph_hprof_vec_push(&r->roots, &root, sizeof(root));
}

/*
 * The pass reads the mapping front to back, once.  Every WINDOW bytes it
 * drops the pages behind the cursor from the resident set (they stay in
 * the page cache, and fault back if read again), so the dump never sits
 * in our resident set whole: peak RSS is the index, not the file.
 */
#define WINDOW ((uint64_t)16 << 20)

/*
 * Each record's length is read from the record before it, so the walk is
 * a chain of dependent loads through memory (~50 bytes a record): perf
 * put half of a parse on loading each record's tag, a cache miss each
 * time.  Asking for the bytes PREFETCH ahead of the cursor (which
 * the walk reaches some 20 records later) hides that latency; a prefetch
 * past the mapping's end is harmless (it never faults; the address is
 * computed as an integer, never as a pointer past the data).
 */
#define PREFETCH 1024

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
#ifdef MADV_POPULATE_READ
	/*
	 * The window ahead mapped in one call (the pages are in the page
	 * cache; failing, e.g. before Linux 5.14, is harmless): touched read
	 * by read, it took a page fault per 16 pages, a tenth of a parse.
	 */
	if (lo < r->h->size)
		madvise((char *)r->h->data + lo,
			r->h->size - lo < WINDOW ? r->h->size - lo : WINDOW,
			MADV_POPULATE_READ);
#endif
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
	if (ph_hprof_vec_push(&r->classes, &c, sizeof(c)))
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
		__builtin_prefetch((const void *)((uintptr_t)d + p + PREFETCH));
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
				rc = ph_hprof_vec_push(&r->threads, &t, 8);
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
		__builtin_prefetch((const void *)((uintptr_t)d + p + PREFETCH));
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

				rc = ph_hprof_vec_push(&r->strs, &s, sizeof(s));
			}
			break;
		case 0x02:
			if (len >= 8ull + 2 * idsz) {
				struct lcrec l = { rdid(d + body + 4, idsz),
						   rdid(d + body + 8 + idsz,
							idsz) };

				rc = ph_hprof_vec_push(&r->lcs, &l, sizeof(l));
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

/* ---- sorting the pass's tables ------------------------------------ */

static int cmp_u64pair(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
	const struct strrec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_class(const void *a, const void *b)
{
	const struct ph_heap_class *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
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
	rc = ph_hprof_build_index(h, ids, metas);
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
	rc = ph_hprof_finish_classes(h);
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
