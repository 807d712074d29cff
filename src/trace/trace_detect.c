/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_detect.c: detector files (parse, parameters, config) for the
 * runner in trace_analyze.c.  The format is described in trace_detect.h
 * and docs/trace.md.
 */
#include "ph_common.h"
#include "trace/trace_detect.h"
#include "ph_error.h"

#include <dirent.h>
#include <stdarg.h>
#include <yaml.h>

static char *dupn(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

static const char *trim(const char *s, const char *end, size_t *n)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s &&
	       (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*n = (size_t)(end - s);
	return s;
}

/* A plain decimal number: [-+]digits[.digits][e[-+]digits], nothing else
 * (strtod would take "nan", "inf", hex and leading blanks, which then
 * reach the SQL as text). */
static bool is_number(const char *v)
{
	const char *p = v;
	bool digits = false;

	if (*p == '-' || *p == '+')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		digits = true;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits = true;
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return !*p;
}

static int type_of(const char *v)
{
	if (!strcmp(v, "true") || !strcmp(v, "false"))
		return PH_PARAM_BOOL;
	return is_number(v) ? PH_PARAM_NUMBER : PH_PARAM_STRING;
}

/* A value as SQL text: bools become 1/0, quotes around strings stripped */
static char *param_text(const char *v, size_t n)
{
	if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0])
		return dupn(v + 1, n - 2);
	if (n == 4 && !memcmp(v, "true", 4))
		return dupn("1", 1);
	if (n == 5 && !memcmp(v, "false", 5))
		return dupn("0", 1);
	return dupn(v, n);
}

/* The query sections after the rows query, in any order. */
static const char *const section_names[] = { "intervals", "samples",
					     "ruled_out", "unanswered" };

int ph_detector_parse(struct ph_detector *d, const char *text, size_t n,
		      const char *path, char *err, size_t errlen)
{
	const char *p = text, *end = text + n, *body = NULL;
	const char *sec_start[4] = { NULL }, *sec_end[4] = { NULL };
	const char **open_end = NULL; /* where the current section ends */
	const char *bend = end;
	int line = 0;

	memset(d, 0, sizeof(*d));
	d->path = strdup(path);
	open_end = &bend;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t kn, vn;
		const char *k, *v;
		int sec = -1;

		line++;
		if (le - p >= 4 && !memcmp(p, "-- @", 4)) {
			k = p + 4;
			v = k;
			while (v < le && *v != ' ' && *v != ':' && *v != '\t')
				v++;
			kn = (size_t)(v - k);
			if (v < le && *v == ':')
				v++;
			v = trim(v, le, &vn);
			for (int i = 0; i < 4; i++)
				if (kn == strlen(section_names[i]) &&
				    !memcmp(k, section_names[i], kn))
					sec = i;
			if (sec >= 0) {
				if (!body || sec_start[sec]) {
					snprintf(err, errlen, "%s:%d: @%s %s",
						 path, line, section_names[sec],
						 body ? "given twice" :
							"before the query");
					return PH_ECORRUPT;
				}
				*open_end = p;
				sec_start[sec] = nl ? nl + 1 : end;
				sec_end[sec] = end;
				open_end = &sec_end[sec];
			} else if (!body) {
				char **slot = NULL;

				if (kn == 2 && !memcmp(k, "id", 2))
					slot = &d->id;
				else if (kn == 5 && !memcmp(k, "title", 5))
					slot = &d->title;
				else if (kn == 3 && !memcmp(k, "why", 3))
					slot = &d->why;
				else if (kn == 8 && !memcmp(k, "identity", 8))
					slot = &d->identity;
				else if (kn == 6 && !memcmp(k, "module", 6))
					slot = &d->module;
				else if (kn == 8 && !memcmp(k, "question", 8))
					slot = &d->question;
				else if (kn == 6 && !memcmp(k, "doctor", 6))
					slot = &d->doctor;
				if (slot) {
					free(*slot);
					*slot = dupn(v, vn);
				} else if (kn == 5 && !memcmp(k, "param", 5)) {
					const char *eq = memchr(v, '=', vn);
					struct ph_param *np;
					size_t a, b;
					const char *pa, *pb;

					if (!eq) {
						snprintf(err, errlen,
							 "%s:%d: @param needs "
							 "name = default",
							 path, line);
						return PH_ECORRUPT;
					}
					pa = trim(v, eq, &a);
					pb = trim(eq + 1, v + vn, &b);
					if (PH_GROW(d->params, d->capparams,
						    d->nparams + 1, 4))
						return PH_ENOMEM;
					np = &d->params[d->nparams++];
					np->name = dupn(pa, a);
					np->value = param_text(pb, b);
					np->overridden = false;
					{
						char *raw = dupn(pb, b);

						np->type =
							raw && (raw[0] ==
									'\'' ||
								raw[0] == '"') ?
								PH_PARAM_STRING :
								type_of(raw ? raw :
									      "");
						free(raw);
					}
				}
			}
		} else if (!body && le > p &&
			   !(le - p >= 2 && !memcmp(p, "--", 2))) {
			body = p;
		}
		p = nl ? nl + 1 : end;
	}
	if (!d->id || !*d->id) {
		snprintf(err, errlen, "%s: no @id", path);
		return PH_ECORRUPT;
	}
	if (!body) {
		snprintf(err, errlen, "%s: no query", path);
		return PH_ECORRUPT;
	}
	if (!d->identity)
		d->identity = strdup("location");
	if (!strstr(d->identity, "location")) {
		snprintf(err, errlen, "%s: @identity must include location",
			 path);
		return PH_ECORRUPT;
	}
	if (!d->title)
		d->title = strdup(d->id);
	d->sql = dupn(body, (size_t)(bend - body));
	{
		char **slots[4] = { &d->intervals, &d->samples, &d->ruled_out,
				    &d->unanswered };

		for (int i = 0; i < 4; i++)
			if (sec_start[i])
				*slots[i] = dupn(
					sec_start[i],
					(size_t)(sec_end[i] - sec_start[i]));
	}
	return 0;
}

static void det_release(struct ph_detector *d)
{
	free(d->path);
	free(d->id);
	free(d->title);
	free(d->why);
	free(d->identity);
	free(d->module);
	for (size_t i = 0; i < d->nparams; i++) {
		free(d->params[i].name);
		free(d->params[i].value);
	}
	free(d->params);
	free(d->sql);
	free(d->intervals);
	free(d->samples);
	free(d->ruled_out);
	free(d->unanswered);
	free(d->question);
	free(d->doctor);
}

void ph_detset_release(struct ph_detset *s)
{
	for (size_t i = 0; i < s->n; i++)
		det_release(&s->d[i]);
	free(s->d);
	memset(s, 0, sizeof(*s));
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_builtin(struct ph_detset *s)
{
	char path[300], err[512];
	int rc = 0;

	s->d = calloc(ph_builtin_detectors_n ? ph_builtin_detectors_n : 1,
		      sizeof(*s->d));
	for (size_t i = 0; i < ph_builtin_detectors_n && s->d; i++) {
		const struct ph_builtin_sql *b = &ph_builtin_detectors[i];

		snprintf(path, sizeof(path), "(built in)/%s", b->name);
		if (ph_detector_parse(&s->d[s->n], b->text, b->len, path, err,
				      sizeof(err))) {
			det_release(&s->d[s->n]);
			rc = ph_error(PH_ECORRUPT, "%s", err);
		} else {
			s->n++;
		}
	}
	return s->d ? rc : ph_error(PH_ENOMEM, "detectors: out of memory");
}

int ph_detset_load(struct ph_detset *s, const char *dir)
{
	DIR *dp;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (!dir)
		return load_builtin(s);
	dp = opendir(dir);
	if (!dp)
		return ph_error(PH_ENOENT, "detectors: %s: %s", dir,
				strerror(errno));
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);

		if (l < 5 || strcmp(de->d_name + l - 4, ".sql"))
			continue;
		if (PH_GROW(names, cap, n + 1, 32))
			break;
		names[n++] = strdup(de->d_name);
	}
	closedir(dp);
	qsort(names, n, sizeof(*names), cmp_names);
	s->d = calloc(n ? n : 1, sizeof(*s->d));
	for (size_t i = 0; i < n && s->d; i++) {
		struct ph_buf b = PH_BUF_INIT(1 << 20);
		char path[4096], err[512];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (ph_buf_read_file(&b, path)) {
			rc = ph_error(PH_EIO, "cannot read %s", path);
		} else if (ph_detector_parse(&s->d[s->n], b.buf, b.len, path,
					     err, sizeof(err))) {
			det_release(&s->d[s->n]);
			rc = ph_error(PH_ECORRUPT, "%s", err);
		} else {
			s->n++;
		}
		ph_buf_release(&b);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* vt: the value's type, or -1 to read it from the text (--set). */
static int set_one(struct ph_detset *s, const char *id, size_t idn,
		   const char *name, const char *value, int vt, char *err,
		   size_t errlen)
{
	int hits = 0;
	bool known_id = !id;

	if (vt < 0)
		vt = type_of(value);

	for (size_t i = 0; i < s->n; i++) {
		struct ph_detector *d = &s->d[i];

		if (id && (strlen(d->id) != idn || memcmp(d->id, id, idn)))
			continue;
		known_id = true;
		for (size_t j = 0; j < d->nparams; j++) {
			struct ph_param *p = &d->params[j];

			if (strcmp(p->name, name))
				continue;
			if (p->type != PH_PARAM_STRING && vt != p->type) {
				snprintf(err, errlen,
					 "%s.%s wants a %s, not %s'%s'", d->id,
					 name,
					 p->type == PH_PARAM_BOOL ? "bool" :
								    "number",
					 vt == PH_PARAM_STRING ? "the string " :
								 "",
					 value);
				return PH_EINVAL;
			}
			free(p->value);
			p->value = vt == PH_PARAM_STRING ?
					   strdup(value) :
					   param_text(value, strlen(value));
			p->overridden = true;
			hits++;
		}
	}
	if (!known_id) {
		snprintf(err, errlen, "unknown detector '%.*s'", (int)idn, id);
		return PH_ENOENT;
	}
	if (!hits) {
		snprintf(err, errlen, "unknown parameter '%s'", name);
		if (id)
			snprintf(err, errlen, "unknown parameter '%.*s.%s'",
				 (int)idn, id, name);
		return PH_ENOENT;
	}
	return 0;
}

int ph_detset_set(struct ph_detset *s, const char *kv, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '='), *dot;
	char key[256];
	size_t kn;

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
		snprintf(err, errlen, "--set wants key=value, not '%s'", kv);
		return PH_EINVAL;
	}
	kn = (size_t)(eq - kv);
	memcpy(key, kv, kn);
	key[kn] = 0;
	dot = strchr(key, '.');
	if (dot)
		return set_one(s, key, (size_t)(dot - key), dot + 1, eq + 1, -1,
			       err, errlen) ?
			       PH_EINVAL :
			       0;
	return set_one(s, NULL, 0, key, eq + 1, -1, err, errlen) ? PH_EINVAL :
								   0;
}

/* --- porthole-trace.yml (format in trace_detect.h) ----------------------- */

struct cfg {
	const char *path;
	yaml_document_t *doc;
	struct ph_detset *s;
	char *err;
	size_t errlen;
};

/* An error at a node: file:line:column (byte N): why. */
static int cfg_err(struct cfg *c, const yaml_node_t *n, const char *fmt, ...)
	PH_PRINTF(3, 4);
static int cfg_err(struct cfg *c, const yaml_node_t *n, const char *fmt, ...)
{
	char why[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%zu:%zu (byte %zu): %s", c->path,
		 n->start_mark.line + 1, n->start_mark.column + 1,
		 n->start_mark.index, why);
	return PH_EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* A scalar's type: quoted means string, whatever it looks like. */
static int scalar_type(const yaml_node_t *n)
{
	if (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	    n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		return PH_PARAM_STRING;
	return type_of(scalar(n));
}

/* Refuses a mapping with a non-scalar or repeated key. */
static int cfg_keys(struct cfg *c, const yaml_node_t *m)
{
	for (yaml_node_pair_t *a = m->data.mapping.pairs.start;
	     a < m->data.mapping.pairs.top; a++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, a->key);

		if (!k || k->type != YAML_SCALAR_NODE)
			return cfg_err(c, k ? k : m, "a key must be a name");
		for (yaml_node_pair_t *b = m->data.mapping.pairs.start; b < a;
		     b++) {
			yaml_node_t *kb =
				yaml_document_get_node(c->doc, b->key);

			if (kb && kb->type == YAML_SCALAR_NODE &&
			    !strcmp(scalar(kb), scalar(k)))
				return cfg_err(c, k, "'%s' given twice",
					       scalar(k));
		}
	}
	return 0;
}

static int cfg_set(struct cfg *c, const char *id, const yaml_node_t *k,
		   const yaml_node_t *v)
{
	char why[400];
	int rc;

	if (v->type != YAML_SCALAR_NODE)
		return cfg_err(c, v, "'%s' wants a single value here",
			       scalar(k));
	rc = set_one(c->s, id, id ? strlen(id) : 0, scalar(k), scalar(v),
		     scalar_type(v), why, sizeof(why));
	/* an unknown name points at the name, a wrong type at the value */
	return rc ? cfg_err(c, rc == PH_ENOENT ? k : v, "%s", why) : 0;
}

static bool has_detector(const struct ph_detset *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->d[i].id, id))
			return true;
	return false;
}

static int cfg_params(struct cfg *c, const yaml_node_t *params)
{
	int rc;

	if (params->type == YAML_SCALAR_NODE && !*scalar(params))
		return 0; /* `params:` with nothing under it */
	if (params->type != YAML_MAPPING_NODE)
		return cfg_err(c, params,
			       "params wants a mapping (detector: {param: "
			       "value} or param: value)");
	if ((rc = cfg_keys(c, params)))
		return rc;
	for (yaml_node_pair_t *pr = params->data.mapping.pairs.start;
	     pr < params->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, pr->value);

		if (!v)
			return cfg_err(c, k, "no value");
		if (v->type != YAML_MAPPING_NODE) {
			if ((rc = cfg_set(c, NULL, k, v)))
				return rc;
			continue;
		}
		if (!has_detector(c->s, scalar(k)))
			return cfg_err(c, k, "unknown detector '%s'",
				       scalar(k));
		if ((rc = cfg_keys(c, v)))
			return rc;
		for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
		     q < v->data.mapping.pairs.top; q++) {
			yaml_node_t *qk =
				yaml_document_get_node(c->doc, q->key);
			yaml_node_t *qv =
				yaml_document_get_node(c->doc, q->value);

			if (!qv)
				return cfg_err(c, qk, "no value");
			if ((rc = cfg_set(c, scalar(k), qk, qv)))
				return rc;
		}
	}
	return 0;
}

int ph_detset_load_config(struct ph_detset *s, const char *path, bool optional,
			  char *err, size_t errlen)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	int rc = ph_buf_read_file(&b, path);

	if (rc == PH_ENOENT && optional) {
		rc = 0;
	} else if (rc) {
		snprintf(err, errlen, "%s: %s", path,
			 rc == PH_ENOENT  ? "no such file" :
			 rc == PH_ETOOBIG ? "bigger than 1 MB" :
					    "cannot be read");
	} else {
		rc = ph_detset_config_mem(s, path, b.buf, b.len, err, errlen);
	}
	ph_buf_release(&b);
	return rc;
}

int ph_detset_config_mem(struct ph_detset *s, const char *name,
			 const char *text, size_t n, char *err, size_t errlen)
{
	yaml_parser_t yp;
	yaml_document_t doc, more;
	yaml_node_t *root;
	const char *path = name;
	struct cfg c = { name, &doc, s, err, errlen };
	int rc = 0;

	if (!yaml_parser_initialize(&yp)) {
		snprintf(err, errlen, "%s: out of memory", path);
		return PH_ENOMEM;
	}
	yaml_parser_set_input_string(&yp, (const unsigned char *)text, n);
	if (!yaml_parser_load(&yp, &doc)) {
		snprintf(err, errlen, "%s:%zu:%zu (byte %zu): %s%s%s", path,
			 yp.problem_mark.line + 1, yp.problem_mark.column + 1,
			 yp.problem_mark.index,
			 yp.problem ? yp.problem : "not YAML",
			 yp.context ? " " : "", yp.context ? yp.context : "");
		yaml_parser_delete(&yp);
		return PH_EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && yaml_parser_load(&yp, &more)) {
		yaml_node_t *r2 = yaml_document_get_root_node(&more);

		if (r2)
			rc = cfg_err(&c, r2,
				     "a second document; the config is one");
		yaml_document_delete(&more);
	} else if (root && yp.error != YAML_NO_ERROR) {
		snprintf(err, errlen, "%s:%zu:%zu (byte %zu): %s", path,
			 yp.problem_mark.line + 1, yp.problem_mark.column + 1,
			 yp.problem_mark.index,
			 yp.problem ? yp.problem : "not YAML");
		rc = PH_EINVAL;
	}
	if (rc || !root) {
		/* an empty file: no overrides */
	} else if (root->type != YAML_MAPPING_NODE) {
		rc = cfg_err(&c, root,
			     "the config is a mapping with one key, params");
	} else if (!(rc = cfg_keys(&c, root))) {
		for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
		     !rc && pr < root->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
			yaml_node_t *v =
				yaml_document_get_node(&doc, pr->value);

			if (strcmp(scalar(k), "params"))
				rc = cfg_err(&c, k,
					     "unknown key '%s' (the one key is "
					     "params)",
					     scalar(k));
			else if (v)
				rc = cfg_params(&c, v);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&yp);
	return rc;
}

int ph_detset_prepare(struct ph_detset *s, const char *dir, const char *config,
		      const char *const *sets, size_t nsets, char *err,
		      size_t errlen)
{
	int rc = ph_detset_load(s, dir);

	if (rc) {
		snprintf(err, errlen, "cannot load the detectors in %s",
			 dir ? dir : "the binary");
		goto fail;
	}
	rc = ph_detset_load_config(s, config ? config : PH_TRACE_CONFIG,
				   !config, err, errlen);
	for (size_t i = 0; !rc && i < nsets; i++)
		rc = ph_detset_set(s, sets[i], err, errlen);
	if (!rc)
		return 0;
fail:
	ph_detset_release(s);
	return rc;
}

int ph_detector_render(const struct ph_detector *d, const char *sql,
		       struct ph_buf *out)
{
	const char *p = sql;
	int rc;

	while (*p) {
		const char *o = strstr(p, "{{"), *c;
		bool found = false;

		if (!o)
			return ph_buf_addstr(out, p);
		if ((rc = ph_buf_add(out, p, (size_t)(o - p))))
			return rc;
		c = strstr(o, "}}");
		if (!c)
			return ph_buf_addstr(out, o);
		for (size_t i = 0; i < d->nparams; i++) {
			size_t n = strlen(d->params[i].name);

			if ((size_t)(c - o - 2) == n &&
			    !memcmp(o + 2, d->params[i].name, n)) {
				if ((rc = ph_buf_addstr(out,
							d->params[i].value)))
					return rc;
				found = true;
				break;
			}
		}
		if (!found && (rc = ph_buf_add(out, o, (size_t)(c + 2 - o))))
			return rc;
		p = c + 2;
	}
	return 0;
}
