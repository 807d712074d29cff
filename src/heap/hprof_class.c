/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hprof_class.c: an HPROF dump's strings and classes by name (Java names
 * from JVM signatures), the classes' fields and reference offsets, and
 * reading an object's fields, statics, array elements and strings.
 */
#include "ph_common.h"
#include "heap.h"
#include "hprof_read.h"

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
int ph_hprof_finish_classes(struct ph_heap *h)
{
	const uint8_t *d = h->data;
	uint32_t n = h->nclasses_real, nsyn = 0;
	uint32_t depth_cap = n + 1;
	struct ph_hprof_vec fields = { 0 }, refs = { 0 };
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

				if (ph_hprof_vec_push(&fields, &fld,
						      sizeof(fld)))
					goto nomem;
				if (fld.type == PH_HT_OBJECT &&
				    ph_hprof_vec_push(&refs, &off, 4))
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
