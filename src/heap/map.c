/* SPDX-License-Identifier: Apache-2.0 */
/*
 * map.c: R8 / ProGuard mapping files, for de-obfuscating class and field
 * names (`--map FILE`).
 *
 * Format (R8's "mapping.txt", ProGuard's -printmapping): a class line at
 * column 0, `original.Name -> obfuscated.Name:`, then its members indented:
 * fields as `    type name -> obf`, methods as
 * `    [a:b:]ret name(args)[:c[:d]] -> obf`.  Lines starting with `#` are
 * comments (R8 puts JSON metadata in them).  Only classes and fields
 * matter to a heap dump; methods are skipped.
 */
#include "ph_common.h"
#include "heap.h"

struct map_field {
	const char *cls; /* obfuscated class */
	const char *obf;
	const char *orig;
};

struct map_class {
	const char *obf;
	const char *orig;
};

struct ph_heap_map {
	struct ph_arena arena;
	struct map_class *classes;
	size_t nclasses;
	struct map_field *fields;
	size_t nfields;
};

static int cmp_class(const void *a, const void *b)
{
	return strcmp(((const struct map_class *)a)->obf,
		      ((const struct map_class *)b)->obf);
}

static int cmp_field(const void *a, const void *b)
{
	const struct map_field *x = a, *y = b;
	int c = strcmp(x->cls, y->cls);

	return c ? c : strcmp(x->obf, y->obf);
}

static char *trimdup(struct ph_arena *a, const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	return ph_arena_strndup(a, s, (size_t)(e - s));
}

int ph_heap_map_parse(struct ph_heap_map **out, const char *text, size_t len)
{
	struct ph_heap_map *m = calloc(1, sizeof(*m));
	size_t capc = 0, capf = 0;
	const char *cur_obf = NULL;
	const char *p = text, *end = text + len;

	if (!m)
		return PH_ENOMEM;
	ph_arena_init(&m->arena, 0, SIZE_MAX);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *arrow = NULL;

		for (const char *q = p; q + 4 <= le; q++)
			if (!memcmp(q, " -> ", 4)) {
				arrow = q;
				break;
			}
		if (*p == '#' || !arrow) {
			p = le + 1;
			continue;
		}
		if (*p != ' ' && *p != '\t') {
			const char *ce = le;

			while (ce > arrow && (ce[-1] == '\r' || ce[-1] == ' '))
				ce--;
			if (ce > arrow && ce[-1] == ':')
				ce--;
			if (m->nclasses == capc) {
				capc = capc ? capc * 2 : 256;
				void *np = realloc(m->classes,
						   capc * sizeof(*m->classes));
				if (!np)
					goto nomem;
				m->classes = np;
			}
			struct map_class *c = &m->classes[m->nclasses];
			c->orig = trimdup(&m->arena, p, arrow);
			c->obf = trimdup(&m->arena, arrow + 4, ce);
			if (!c->orig || !c->obf)
				goto nomem;
			cur_obf = c->obf;
			m->nclasses++;
		} else if (cur_obf && !memchr(p, '(', (size_t)(arrow - p))) {
			/* a field: "type name -> obf" */
			const char *ne = arrow, *ns;

			while (ne > p && ne[-1] == ' ')
				ne--;
			ns = ne;
			while (ns > p && ns[-1] != ' ' && ns[-1] != '\t')
				ns--;
			if (m->nfields == capf) {
				capf = capf ? capf * 2 : 1024;
				void *np = realloc(m->fields,
						   capf * sizeof(*m->fields));
				if (!np)
					goto nomem;
				m->fields = np;
			}
			struct map_field *f = &m->fields[m->nfields];
			f->cls = cur_obf;
			f->orig = trimdup(&m->arena, ns, ne);
			f->obf = trimdup(&m->arena, arrow + 4, le);
			if (!f->orig || !f->obf)
				goto nomem;
			m->nfields++;
		}
		p = le + 1;
	}
	if (m->nclasses)
		qsort(m->classes, m->nclasses, sizeof(*m->classes), cmp_class);
	if (m->nfields)
		qsort(m->fields, m->nfields, sizeof(*m->fields), cmp_field);
	*out = m;
	return 0;
nomem:
	ph_heap_map_free(m);
	return PH_ENOMEM;
}

int ph_heap_map_load(struct ph_heap_map **out, const char *path)
{
	struct ph_buf b = PH_BUF_INIT((size_t)1 << 30);
	int rc = ph_buf_read_file(&b, path);

	if (!rc)
		rc = ph_heap_map_parse(out, b.buf, b.len);
	ph_buf_release(&b);
	return rc;
}

void ph_heap_map_free(struct ph_heap_map *m)
{
	if (!m)
		return;
	free(m->classes);
	free(m->fields);
	ph_arena_release(&m->arena);
	free(m);
}

const char *ph_heap_map_class(const struct ph_heap_map *m, const char *obf)
{
	struct map_class key = { .obf = obf }, *c;

	if (!m || !m->nclasses)
		return NULL;
	c = bsearch(&key, m->classes, m->nclasses, sizeof(key), cmp_class);
	return c ? c->orig : NULL;
}

const char *ph_heap_map_field(const struct ph_heap_map *m,
			      const char *obf_class, const char *obf_field)
{
	struct map_field key = { .cls = obf_class, .obf = obf_field }, *f;

	if (!m || !m->nfields)
		return NULL;
	f = bsearch(&key, m->fields, m->nfields, sizeof(key), cmp_field);
	return f ? f->orig : NULL;
}
