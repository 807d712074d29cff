/* SPDX-License-Identifier: Apache-2.0 */
/*
 * family.c: the helpers every finding family uses (family.h): strings kept
 * for the engine's lifetime, a new finding with its title, detail, key and
 * evidence, the small string map, and the stack-frame and URL parsers.
 */
#include "ph_common.h"
#include "family.h"

const char *ph_keep(struct ph_fctx *c, const char *s, size_t n)
{
	char *p = ph_arena_strndup(c->keep, s, n);

	return p ? p : "";
}

const char *ph_keep_field(struct ph_fctx *c, const struct ph_event *ev,
			  const char *key)
{
	const char *s;
	size_t n;

	return ph_ev_str(ev, key, &s, &n) ? ph_keep(c, s, n) : NULL;
}

struct ph_finding *ph_fnd_new(struct ph_fctx *c, const char *id, int sev,
			      int conf, int64_t from, int64_t to)
{
	struct ph_finding *f = ph_analysis_add(c->a);

	if (!f)
		return NULL;
	*f = (struct ph_finding){
		.id = id,
		.severity = sev,
		.confidence = conf,
		.source = "porthole",
		.title = "",
		.from = from,
		.to = to,
		.last_from = from,
		.last_to = to,
		.count = 1,
		.evidence = "{}",
		.key = id,
	};
	return f;
}

static const char *vfmt(struct ph_fctx *c, const char *fmt, va_list ap)
	PH_PRINTF(2, 0);

static const char *vfmt(struct ph_fctx *c, const char *fmt, va_list ap)
{
	char buf[1024];
	char *p, *w;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* One line each: runs of whitespace (a JSON body's newlines) to one
	 * space. */
	for (p = w = buf; *p; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t' || *p == ' ') {
			if (w > buf && w[-1] != ' ')
				*w++ = ' ';
			continue;
		}
		*w++ = *p;
	}
	while (w > buf && w[-1] == ' ')
		w--;
	*w = '\0';
	p = ph_arena_strndup(&c->a->arena, buf, strlen(buf));
	return p ? p : "";
}

void ph_fnd_title(struct ph_fctx *c, struct ph_finding *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	f->title = vfmt(c, fmt, ap);
	va_end(ap);
}

void ph_fnd_detail(struct ph_fctx *c, struct ph_finding *f, const char *fmt,
		   ...)
{
	va_list ap;

	if (f->ndetail >= (int)PH_ARRAY_SIZE(f->detail))
		return;
	va_start(ap, fmt);
	f->detail[f->ndetail++] = vfmt(c, fmt, ap);
	va_end(ap);
}

void ph_fnd_key(struct ph_fctx *c, struct ph_finding *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	f->key = vfmt(c, fmt, ap);
	va_end(ap);
}

const char *ph_fnd_str(struct ph_fctx *c, const char *s)
{
	char *p = s ? ph_arena_strndup(&c->a->arena, s, strlen(s)) : NULL;

	return p;
}

struct ph_jw *ph_fnd_evidence_begin(struct ph_fctx *c)
{
	ph_buf_reset(&c->scratch);
	ph_jw_init(&c->jw, &c->scratch);
	ph_jw_obj_begin(&c->jw);
	return &c->jw;
}

void ph_fnd_evidence_end(struct ph_fctx *c, struct ph_finding *f)
{
	char *p;

	ph_jw_obj_end(&c->jw);
	if (ph_jw_finish(&c->jw))
		return;
	p = ph_arena_strndup(&c->a->arena, c->scratch.buf, c->scratch.len);
	if (p)
		f->evidence = p;
}

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

void *ph_smap_get(struct ph_fctx *c, struct ph_smap *m, const char *k, size_t n,
		  size_t vsize, bool *created)
{
	uint32_t h = hash(k, n);
	size_t i;

	*created = false;
	if (m->nslots) {
		for (i = h & (m->nslots - 1); m->slots[i];
		     i = (i + 1) & (m->nslots - 1)) {
			size_t e = m->slots[i] - 1;

			if (m->hash[e] == h && m->len[e] == n &&
			    !memcmp(m->keys[e], k, n))
				return m->vals[e];
		}
	}
	if ((m->n + 1) * 2 > m->nslots) {
		size_t ns = m->nslots ? m->nslots * 2 : 64;
		uint32_t *slots = calloc(ns, sizeof(*slots));

		if (!slots)
			return NULL;
		for (size_t e = 0; e < m->n; e++) {
			for (i = m->hash[e] & (ns - 1); slots[i];
			     i = (i + 1) & (ns - 1))
				;
			slots[i] = (uint32_t)e + 1;
		}
		free(m->slots);
		m->slots = slots;
		m->nslots = ns;
	}
	if (m->n == m->alloc) {
		/* Four arrays of one length: each grows from the same count
		 * to the same new one, which becomes m->alloc only when all
		 * four have it (a failure leaves the rest as they were). */
		size_t ak = m->alloc, av = m->alloc, ah = m->alloc,
		       al = m->alloc;

		if (PH_GROW(m->keys, ak, m->n + 1, 32) ||
		    PH_GROW(m->vals, av, m->n + 1, 32) ||
		    PH_GROW(m->hash, ah, m->n + 1, 32) ||
		    PH_GROW(m->len, al, m->n + 1, 32))
			return NULL;
		m->alloc = ak;
	}
	{
		void *v = ph_arena_alloc(c->keep, vsize ? vsize : 1);
		const char *key = ph_arena_strndup(c->keep, k, n);

		/* (A key must hold its n bytes: probes compare them.) */
		if (!v || !key || n > UINT32_MAX)
			return NULL;
		memset(v, 0, vsize);
		m->keys[m->n] = key;
		m->vals[m->n] = v;
		m->hash[m->n] = h;
		m->len[m->n] = (uint32_t)n;
		for (i = h & (m->nslots - 1); m->slots[i];
		     i = (i + 1) & (m->nslots - 1))
			;
		m->slots[i] = (uint32_t)++m->n;
		*created = true;
		return v;
	}
}

void ph_smap_release(struct ph_smap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->hash);
	free(m->len);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void ph_parse_frame(struct ph_fctx *c, const char *s, size_t n,
		    struct ph_where_hint *h)
{
	const char *open = memchr(s, '(', n);
	const char *colon, *close;

	memset(h, 0, sizeof(*h));
	if (!open) {
		h->fn = ph_keep(c, s, n);
		return;
	}
	h->fn = ph_keep(c, s, (size_t)(open - s));
	close = memchr(open, ')', n - (size_t)(open - s));
	if (!close)
		return;
	colon = memrchr(open, ':', (size_t)(close - open));
	if (!colon && close - open > 1) {
		/* "fn(file)": the line is not known. */
		h->file = ph_keep(c, open + 1, (size_t)(close - open - 1));
		return;
	}
	if (colon) {
		char num[24];
		size_t nl = (size_t)(close - colon - 1);

		if (nl < sizeof(num)) {
			memcpy(num, colon + 1, nl);
			num[nl] = '\0';
			h->line = strtoll(num, NULL, 10);
			if (h->line < 0)
				h->line = 0;
		}
		if (colon - open - 1 > 0 &&
		    !(colon - open == 2 && open[1] == '?'))
			h->file = ph_keep(c, open + 1,
					  (size_t)(colon - open - 1));
	}
}

const char *ph_url_path(struct ph_fctx *c, const char *url)
{
	const char *p = strstr(url, "://");
	size_t n;

	p = p ? strchr(p + 3, '/') : url;
	if (!p)
		return "/";
	n = strcspn(p, "?#");
	return ph_keep(c, p, n);
}
