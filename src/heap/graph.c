/* SPDX-License-Identifier: Apache-2.0 */
/*
 * graph.c: the object graph of a dump, built once for what is computed
 * over it: shortest paths from GC roots and ahat's reachability classes
 * (graph_paths.c), dominators and retained sizes (dominators.c).
 *
 * The graph is built once, in object-index order, straight from the
 * mapped records: per object its class and shallow size, and its strong
 * outgoing references as a CSR array of object indices.  A
 * java.lang.ref.Reference's referent is not a strong edge: it goes to a
 * separate list, so weak, soft, phantom and finalizer referents never
 * form a path and never dominate, yet reachability can still classify
 * them.
 */
#include "ph_common.h"
#include "heap.h"
#include "graph_int.h"

#include <sys/mman.h>

/* Bytes of records the graph pass reads between dropping pages. */
#define GRAPH_WINDOW ((uint64_t)16 << 20)

const struct ph_heap_libref ph_heap_librefs[] = {
	{ "android.view.inputmethod.InputMethodManager", "mNextServedView",
	  false,
	  "InputMethodManager keeps a reference to the last focused view "
	  "(AOSP bug, fixed in Android 10)" },
	{ "android.view.inputmethod.InputMethodManager", "mServedView", false,
	  "InputMethodManager keeps a reference to the last focused view "
	  "(AOSP bug, fixed in Android 10)" },
	{ "android.view.inputmethod.InputMethodManager", "mCurRootView", false,
	  "InputMethodManager keeps the root view of the last focused window "
	  "(AOSP bug)" },
	{ "android.app.ActivityThread$ActivityClientRecord", "nextIdle", false,
	  "ActivityClientRecord.nextIdle holds the previous activity until "
	  "the main thread idles (AOSP bug)" },
	{ "android.media.session.MediaSessionLegacyHelper", "sInstance", true,
	  "MediaSessionLegacyHelper keeps the first context it was given "
	  "(AOSP bug, fixed in Android 5.1)" },
	{ "android.widget.TextView", "sLastHoveredView", true,
	  "TextView keeps the last hovered view (AOSP bug)" },
	{ "android.view.accessibility.AccessibilityNodeInfo", "mOriginalText",
	  false,
	  "AccessibilityNodeInfo keeps text it has recycled (AOSP bug)" },
	{ "android.os.Message", "obj", false,
	  "A Message in a HandlerThread's pool keeps its last obj until the "
	  "thread handles another message (AOSP bug)" },
	{ "android.view.Choreographer$FrameDisplayEventReceiver",
	  "mMessageQueue", false,
	  "A Choreographer on a dead thread keeps its queue (AOSP bug)" },
	{ "java.lang.Thread", "inheritableThreadLocals", false,
	  "Threads copy their parent's inheritable thread locals" },
};
const size_t ph_heap_nlibrefs = PH_ARRAY_SIZE(ph_heap_librefs);

static inline uint32_t rd4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

static inline uint64_t rdid(const uint8_t *p, uint32_t idsz)
{
	uint64_t v;
	uint32_t w;

	if (idsz == 4) {
		memcpy(&w, p, 4);
		return __builtin_bswap32(w);
	}
	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

struct u32vec {
	uint32_t *p;
	size_t n, cap;
	bool big; /* p is ph_heap_big_alloc's */
};

static inline int push32(struct u32vec *v, uint32_t x)
{
	if (PH_UNLIKELY(v->n == v->cap)) {
		size_t cap = v->cap ? v->cap + v->cap / 2 : 1024;
		uint32_t *np = v->big ? ph_heap_big_realloc(v->p, cap * 4) :
					realloc(v->p, cap * 4);

		if (!np)
			return PH_ENOMEM;
		v->p = np;
		v->cap = cap;
	}
	v->p[v->n++] = x;
	return 0;
}

static bool field_named(const struct ph_heap *h, uint64_t sid, const char *name)
{
	size_t n;
	const char *s = ph_heap_string(h, sid, &n);

	return s && n == strlen(name) && !memcmp(s, name, n);
}

/* (class, offset) pairs of instance references that are library leaks. */
struct libset {
	uint64_t *keys; /* class << 32 | offset */
	size_t n;
	uint8_t *has; /* per class: any? */
};

static int libset_build(struct ph_heap *h, struct libset *ls)
{
	struct u32vec tmp = { 0 };

	ls->has = calloc(h->nclasses + 1, 1);
	if (!ls->has)
		return PH_ENOMEM;
	for (uint32_t c = 0; c < h->nclasses_real; c++) {
		const struct ph_heap_class *k = &h->classes[c];

		for (size_t l = 0; l < ph_heap_nlibrefs; l++) {
			const struct ph_heap_libref *lr = &ph_heap_librefs[l];

			if (lr->is_static ||
			    !ph_heap_class_is_named(h, c, lr->cls))
				continue;
			for (uint32_t f = 0; f < k->nfields; f++) {
				const struct ph_heap_field *fl =
					&h->fields[k->fields + f];
				uint32_t dc = c;

				if (fl->type != PH_HT_OBJECT ||
				    !field_named(h, fl->name_sid, lr->field))
					continue;
				for (uint16_t j = 0;
				     j < fl->decl && dc != PH_HEAP_NONE; j++)
					dc = h->classes[dc].super;
				if (dc == PH_HEAP_NONE ||
				    strcmp(h->classes[dc].name, lr->cls))
					continue;
				if (push32(&tmp, c) || push32(&tmp, fl->offset))
					goto nomem;
				ls->has[c] = 1;
			}
		}
	}
	ls->n = tmp.n / 2;
	ls->keys = malloc((ls->n + 1) * 8);
	if (!ls->keys)
		goto nomem;
	for (size_t i = 0; i < ls->n; i++)
		ls->keys[i] = (uint64_t)tmp.p[2 * i] << 32 | tmp.p[2 * i + 1];
	free(tmp.p);
	return 0;
nomem:
	free(tmp.p);
	return PH_ENOMEM;
}

static bool libset_has(const struct libset *ls, uint32_t c, uint32_t off)
{
	uint64_t k = (uint64_t)c << 32 | off;

	for (size_t i = 0; i < ls->n; i++)
		if (ls->keys[i] == k)
			return true;
	return false;
}

static bool static_is_lib(struct ph_heap *h, uint32_t c, uint64_t sid)
{
	for (size_t l = 0; l < ph_heap_nlibrefs; l++)
		if (ph_heap_librefs[l].is_static &&
		    !strcmp(h->classes[c].name, ph_heap_librefs[l].cls) &&
		    field_named(h, sid, ph_heap_librefs[l].field))
			return true;
	return false;
}

static int cmp_native(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * Registered native sizes (ahat's rule): a sun.misc.Cleaner whose thunk
 * is a NativeAllocationRegistry$CleanerThunk charges registry.size to the
 * Cleaner's referent, unless the Cleaner already ran (next == itself).
 */
static int find_native(struct ph_heap *h)
{
	uint32_t cleaner = ph_heap_class_by_name(h, "sun.misc.Cleaner");
	struct u32vec pairs = { 0 };
	uint64_t *tmp;

	if (cleaner == PH_HEAP_NONE)
		return 0;
	for (uint32_t i = 0; i < h->nobj; i++) {
		struct ph_heap_value thunk, reg, size, ref, next;
		uint32_t t, r, o;

		if (ph_heap_kind_of(h, i) != PH_HEAP_INSTANCE ||
		    !ph_heap_class_is(h, h->cls[i], cleaner))
			continue;
		thunk = ph_heap_get_field(h, i, NULL, "thunk");
		t = thunk.type == PH_HT_OBJECT ? ph_heap_find(h, thunk.u) :
						 PH_HEAP_NONE;
		if (t == PH_HEAP_NONE ||
		    ph_heap_kind_of(h, t) != PH_HEAP_INSTANCE ||
		    !ph_heap_class_is_named(
			    h, h->cls[t],
			    "libcore.util.NativeAllocationRegistry$CleanerThunk"))
			continue;
		reg = ph_heap_get_field(h, t, NULL, "this$0");
		r = reg.type == PH_HT_OBJECT ? ph_heap_find(h, reg.u) :
					       PH_HEAP_NONE;
		if (r == PH_HEAP_NONE ||
		    ph_heap_kind_of(h, r) != PH_HEAP_INSTANCE ||
		    !ph_heap_class_is_named(
			    h, h->cls[r],
			    "libcore.util.NativeAllocationRegistry"))
			continue;
		size = ph_heap_get_field(h, r, NULL, "size");
		if (size.type != PH_HT_LONG)
			continue;
		ref = ph_heap_get_field(h, i, "java.lang.ref.Reference",
					"referent");
		o = ref.type == PH_HT_OBJECT ? ph_heap_find(h, ref.u) :
					       PH_HEAP_NONE;
		if (o == PH_HEAP_NONE)
			continue;
		next = ph_heap_get_field(h, i, NULL, "next");
		if (next.type == PH_HT_OBJECT && next.u == ph_heap_id(h, i))
			continue;
		if (push32(&pairs, o) || push32(&pairs, (uint32_t)size.u) ||
		    push32(&pairs, (uint32_t)(size.u >> 32)))
			goto nomem;
	}
	size_t n = pairs.n / 3;
	tmp = malloc((n + 1) * 16);
	h->native_obj = malloc((n + 1) * 4);
	h->native_size = malloc((n + 1) * 8);
	if (!tmp || !h->native_obj || !h->native_size) {
		free(tmp);
		goto nomem;
	}
	for (size_t i = 0; i < n; i++) {
		tmp[2 * i] = pairs.p[3 * i];
		tmp[2 * i + 1] = pairs.p[3 * i + 1] |
				 (uint64_t)pairs.p[3 * i + 2] << 32;
	}
	qsort(tmp, n, 16, cmp_native);
	h->nnative = 0;
	for (size_t i = 0; i < n; i++) {
		if (h->nnative &&
		    h->native_obj[h->nnative - 1] == (uint32_t)tmp[2 * i]) {
			h->native_size[h->nnative - 1] += tmp[2 * i + 1];
			continue;
		}
		h->native_obj[h->nnative] = (uint32_t)tmp[2 * i];
		h->native_size[h->nnative++] = tmp[2 * i + 1];
	}
	free(tmp);
	free(pairs.p);
	return 0;
nomem:
	free(pairs.p);
	return PH_ENOMEM;
}

uint64_t ph_heap_native_size(const struct ph_heap *h, uint32_t obj)
{
	size_t lo = 0, hi = h->nnative;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->native_obj[mid] < obj)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->nnative && h->native_obj[lo] == obj ?
		       h->native_size[lo] :
		       0;
}

/*
 * The graph pass looks up every reference's target, millions of times.
 * ph_heap_find's binary search over the keys costs ~22 dependent cache
 * misses each; keys are dense (ids are addresses), so a table of where
 * each 2^bits-slot bucket of keys starts narrows a lookup to a bucket of
 * one or two objects.  About one table entry per object, for the pass
 * only: the index itself stays 12 bytes per object.
 */
struct finder {
	uint32_t *start; /* nbuckets + 1: first object of each bucket */
	uint32_t nbuckets;
	unsigned bits;
};

static int finder_init(struct finder *f, const struct ph_heap *h)
{
	uint64_t span;
	uint32_t at = 0;

	memset(f, 0, sizeof(*f));
	if (h->wide || !h->nobj)
		return 0; /* ph_heap_find does it */
	span = (uint64_t)h->keys[h->nobj - 1] + 1;
	while ((span >> f->bits) > h->nobj)
		f->bits++;
	f->nbuckets = (uint32_t)((span - 1) >> f->bits) + 1;
	f->start = ph_heap_big_alloc(((size_t)f->nbuckets + 1) * 4);
	if (!f->start)
		return PH_ENOMEM;
	for (uint32_t b = 0; b < f->nbuckets; b++) {
		while (at < h->nobj && (h->keys[at] >> f->bits) < b)
			at++;
		f->start[b] = at;
	}
	f->start[f->nbuckets] = h->nobj;
	return 0;
}

static inline uint32_t finder_find(const struct finder *f,
				   const struct ph_heap *h, uint64_t id)
{
	uint64_t d;
	uint32_t key, lo, hi;

	if (!f->start)
		return ph_heap_find(h, id);
	d = id - h->min_id;
	if (id < h->min_id || (d & ((1ull << h->shift) - 1)))
		return PH_HEAP_NONE;
	d >>= h->shift;
	if (d >> f->bits >= f->nbuckets)
		return PH_HEAP_NONE;
	key = (uint32_t)d;
	lo = f->start[key >> f->bits];
	hi = f->start[(key >> f->bits) + 1];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->nobj && h->keys[lo] == key ? lo : PH_HEAP_NONE;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int ph_heap_graph(struct ph_heap *h)
{
	const uint8_t *d = h->data;
	const uint32_t idsz = h->idsz, n = h->nobj;
	struct u32vec edges = { 0 };
	struct libset ls = { 0 };
	uint32_t prim_cls[16];
	uint32_t last_c = PH_HEAP_NONE, jlc;
	uint64_t class_size;
	uint64_t last_cid = 0;
	uint8_t *folded = NULL;
	struct finder fi = { 0 };
	uint64_t touched = 0, last_rec = 0, step;
	int rc = PH_ENOMEM;

	if (h->cls)
		return 0;
	if (n > EDGE_MASK)
		return PH_CORRUPT(&h->err, 0, "more than 2^31 objects");
	for (unsigned t = 0; t < 16; t++)
		prim_cls[t] = h->unknown_cls;
	for (uint32_t c = 0; c < h->nclasses; c++)
		if (h->classes[c].prim_type)
			prim_cls[h->classes[c].prim_type] = c;
	/*
	 * A class object is an instance of java.lang.Class: it occupies at
	 * least that class's instance size (on ART, mirror::Class's fields,
	 * header included) and then its static fields.  ahat and perflib
	 * charge exactly that; the vtable and imtable ART embeds are not in
	 * the dump and are left out by all three.
	 */
	jlc = ph_heap_class_by_name(h, "java.lang.Class");
	class_size = jlc != PH_HEAP_NONE ? h->classes[jlc].instance_size : 0;
	h->cls = ph_heap_big_alloc(((size_t)n + 1) * 4);
	h->shallow = ph_heap_big_alloc(((size_t)n + 1) * 4);
	h->eoff = ph_heap_big_alloc(((size_t)n + 1) * 4);
	folded = calloc((size_t)n / 8 + 1, 1);
	edges.cap = (size_t)n * 2 + 16;
	edges.p = ph_heap_big_alloc(edges.cap * 4);
	edges.big = true;
	if (!h->cls || !h->shallow || !h->eoff || !folded || !edges.p)
		goto out;
	if (libset_build(h, &ls) || finder_init(&fi, h))
		goto out;
	if (h->mapped) /* mostly in file order: read ahead again */
		madvise((void *)h->data, h->size, MADV_NORMAL);
	struct u32vec wrefs = { 0 };

	for (uint32_t i = 0; i < n; i++) {
		uint64_t rec = ph_heap_rec(h, i);
		const uint8_t *p = d + rec + 1;
		uint32_t c;

		if (edges.n > EDGE_MASK - 1) {
			rc = PH_CORRUPT(&h->err, rec, "more than 2^31 edges");
			goto out;
		}
		h->eoff[i] = (uint32_t)edges.n;
		/*
		 * How far the pass has moved through the file: objects come
		 * in id order, which is file order in runs, and a jump maps
		 * at most a fault-around's worth of pages.
		 */
		step = rec >= last_rec ? rec - last_rec : UINT64_MAX;
		touched += step < 65536 ? step : 65536;
		last_rec = rec;
		switch (ph_heap_kind_of(h, i)) {
		case PH_HEAP_CLASS: {
			uint64_t cid = rdid(p, idsz), q, sz = 0;
			const struct ph_heap_class *k;

			c = ph_heap_class_by_id(h, cid);
			if (c == PH_HEAP_NONE) {
				c = h->unknown_cls;
				h->shallow[i] = 0;
				break;
			}
			k = &h->classes[c];
			q = k->statics_off;
			for (uint32_t s = 0; s < k->nstatics; s++) {
				unsigned t = d[q + idsz];
				size_t ts = ph_heap_type_size(h, t);

				if (t == PH_HT_OBJECT) {
					uint64_t id =
						rdid(d + q + idsz + 1, idsz);
					uint32_t to =
						id ? finder_find(&fi, h, id) :
						     PH_HEAP_NONE;

					if (to != PH_HEAP_NONE) {
						if (static_is_lib(h, c,
								  rdid(d + q,
								       idsz)))
							to |= EDGE_LIB;
						if (push32(&edges, to))
							goto out;
					}
				}
				sz += ts;
				q += idsz + 1 + ts;
			}
			h->shallow[i] = clamp32(class_size + sz);
			break;
		}
		case PH_HEAP_INSTANCE: {
			uint64_t cid = rdid(p + idsz + 4, idsz);
			uint32_t len = rd4(p + 2 * idsz + 4);
			const uint8_t *fd = p + 2 * idsz + 8;
			const struct ph_heap_class *k;

			if (cid != last_cid || last_c == PH_HEAP_NONE) {
				last_c = ph_heap_class_by_id(h, cid);
				if (last_c == PH_HEAP_NONE)
					last_c = h->unknown_cls;
				last_cid = cid;
			}
			c = last_c;
			k = &h->classes[c];
			h->shallow[i] = k->instance_size;
			for (uint32_t r = 0; r < k->nrefs; r++) {
				uint32_t off = h->refoffs[k->refs + r];
				uint64_t id;
				uint32_t to;

				if (off + idsz > len)
					continue;
				id = rdid(fd + off, idsz);
				if (!id)
					continue;
				to = finder_find(&fi, h, id);
				if (to == PH_HEAP_NONE)
					continue;
				if (off == k->referent_off &&
				    !h->perflib_referents) {
					if (push32(&wrefs, i) ||
					    push32(&wrefs, to) ||
					    push32(&wrefs, k->strength))
						goto out;
					continue;
				}
				if (k->is_string && !h->perflib_sizes &&
				    ph_heap_kind_of(h, to) ==
					    PH_HEAP_PRIM_ARRAY &&
				    !(folded[to / 8] & (1u << (to % 8)))) {
					/* a String is charged its chars */
					folded[to / 8] |=
						(uint8_t)(1u << (to % 8));
					uint64_t ar = ph_heap_rec(h, to);
					uint32_t al =
						rd4(d + ar + 1 + idsz + 4);
					size_t es = ph_heap_type_size(
						h, d[ar + 1 + idsz + 8]);

					h->shallow[i] =
						clamp32(h->shallow[i] +
							(uint64_t)al * es);
					touched += 4096; /* a page, anywhere */
				}
				if (ls.has[c] && libset_has(&ls, c, off))
					to |= EDGE_LIB;
				if (push32(&edges, to))
					goto out;
			}
			break;
		}
		case PH_HEAP_OBJ_ARRAY: {
			uint32_t len = rd4(p + idsz + 4);
			uint64_t cid = rdid(p + idsz + 8, idsz);
			const uint8_t *e = p + 2 * idsz + 8;

			c = ph_heap_class_by_id(h, cid);
			if (c == PH_HEAP_NONE)
				c = h->unknown_cls;
			h->shallow[i] = clamp32((uint64_t)len * idsz);
			for (uint32_t j = 0; j < len; j++) {
				uint64_t id =
					rdid(e + (uint64_t)j * idsz, idsz);
				uint32_t to;

				if (!id)
					continue;
				to = finder_find(&fi, h, id);
				if (to != PH_HEAP_NONE && push32(&edges, to))
					goto out;
			}
			break;
		}
		default: {
			uint32_t len = rd4(p + idsz + 4);
			unsigned t = p[idsz + 8];

			c = prim_cls[t & 15];
			h->shallow[i] = clamp32((uint64_t)len *
						ph_heap_type_size(h, t));
			break;
		}
		}
		h->cls[i] = c;
		if (PH_UNLIKELY(touched >= GRAPH_WINDOW)) {
			/* objects come in (mostly) file order: what the pass
			 * read so far need not stay resident (see hprof.c);
			 * the read-ahead advice stays as it is */
			if (h->mapped)
				madvise((void *)h->data, h->size,
					MADV_DONTNEED);
			touched = 0;
		}
	}
	h->eoff[n] = (uint32_t)edges.n;
	h->nedges = edges.n;
	/* give back the spare capacity: the edges live as long as the heap */
	h->edst = ph_heap_big_realloc(edges.p, (edges.n + 1) * 4);
	if (!h->edst)
		h->edst = edges.p;
	edges.p = NULL;
	/* values folded into their String are not counted twice */
	for (uint32_t i = 0; i < n; i++)
		if (folded[i / 8] & (1u << (i % 8)))
			h->shallow[i] = 0;
	h->nwrefs = wrefs.n / 3;
	h->wrefs = malloc((h->nwrefs + 1) * sizeof(*h->wrefs));
	if (!h->wrefs) {
		free(wrefs.p);
		goto out;
	}
	for (size_t i = 0; i < h->nwrefs; i++) {
		h->wrefs[i].ref = wrefs.p[3 * i];
		h->wrefs[i].referent = wrefs.p[3 * i + 1];
		h->wrefs[i].strength = (uint8_t)wrefs.p[3 * i + 2];
	}
	free(wrefs.p);
	for (uint32_t i = 0; i < n; i++) {
		struct ph_heap_class *k = &h->classes[h->cls[i]];

		if (ph_heap_kind_of(h, i) == PH_HEAP_CLASS)
			continue;
		k->count++;
		k->shallow += h->shallow[i];
		h->heaps[ph_heap_heap_of(h, i)].shallow += h->shallow[i];
	}
	rc = find_native(h);
	ph_heap_drop_pages(h);
out:
	ph_heap_big_free(edges.p);
	free(folded);
	free(ls.keys);
	free(ls.has);
	ph_heap_big_free(fi.start);
	return rc;
}
