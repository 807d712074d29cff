/*
 * trace_detect.c: detector files (parse, parameters, config) for the
 * runner in trace_analyze.c.  The format is described in trace_detect.h
 * and docs/trace.md.
 */
#include "ph_common.h"
#include "trace/trace_detect.h"
#include "ph_error.h"

#include <dirent.h>
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

static int type_of(const char *v)
{
	char *end;

	if (!strcmp(v, "true") || !strcmp(v, "false"))
		return PH_PARAM_BOOL;
	if (*v) {
		strtod(v, &end);
		if (!*end)
			return PH_PARAM_NUMBER;
	}
	return PH_PARAM_STRING;
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
					np = realloc(d->params,
						     (d->nparams + 1) *
							     sizeof(*np));
					if (!np)
						return PH_ENOMEM;
					d->params = np;
					np = &np[d->nparams++];
					np->name = dupn(pa, a);
					np->value = param_text(pb, b);
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

int ph_detset_load(struct ph_detset *s, const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (!dp)
		return ph_error(PH_ENOENT, "detectors: %s: %s", dir,
				strerror(errno));
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);
		char **nn;

		if (l < 5 || strcmp(de->d_name + l - 4, ".sql"))
			continue;
		nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn)
			break;
		names = nn;
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

static int set_one(struct ph_detset *s, const char *id, size_t idn,
		   const char *name, const char *value, char *err,
		   size_t errlen)
{
	int hits = 0, vt = type_of(value);

	for (size_t i = 0; i < s->n; i++) {
		struct ph_detector *d = &s->d[i];

		if (id && (strlen(d->id) != idn || memcmp(d->id, id, idn)))
			continue;
		for (size_t j = 0; j < d->nparams; j++) {
			struct ph_param *p = &d->params[j];

			if (strcmp(p->name, name))
				continue;
			if (p->type != PH_PARAM_STRING && vt != p->type) {
				snprintf(err, errlen,
					 "%s.%s wants a %s, not '%s'", d->id,
					 name,
					 p->type == PH_PARAM_BOOL ? "bool" :
								    "number",
					 value);
				return PH_EINVAL;
			}
			free(p->value);
			p->value = param_text(value, strlen(value));
			hits++;
		}
	}
	if (!hits) {
		snprintf(err, errlen, "unknown parameter '%s'", name);
		if (id)
			snprintf(err, errlen, "unknown parameter '%.*s.%s'",
				 (int)idn, id, name);
		return PH_EINVAL;
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
		return set_one(s, key, (size_t)(dot - key), dot + 1, eq + 1,
			       err, errlen);
	return set_one(s, NULL, 0, key, eq + 1, err, errlen);
}

/*
 * porthole-trace.yml:
 *   params:
 *     main_thread_block: { min_ms: 20 }
 *     min_count: 3            # every detector with that parameter
 */
int ph_detset_load_config(struct ph_detset *s, const char *path, char *err,
			  size_t errlen)
{
	FILE *f = fopen(path, "rb");
	yaml_parser_t yp;
	yaml_document_t doc;
	yaml_node_t *root, *params = NULL;
	int rc = 0;

	if (!f)
		return errno == ENOENT ? 0 : PH_EIO;
	if (!yaml_parser_initialize(&yp)) {
		fclose(f);
		return PH_ENOMEM;
	}
	yaml_parser_set_input_file(&yp, f);
	if (!yaml_parser_load(&yp, &doc)) {
		snprintf(err, errlen, "%s:%zu: %s", path,
			 yp.problem_mark.line + 1,
			 yp.problem ? yp.problem : "YAML error");
		yaml_parser_delete(&yp);
		fclose(f);
		return PH_EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && root->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
		     pr < root->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(&doc, pr->key);

			if (k && k->type == YAML_SCALAR_NODE &&
			    !strcmp((char *)k->data.scalar.value, "params"))
				params =
					yaml_document_get_node(&doc, pr->value);
			else if (k && k->type == YAML_SCALAR_NODE) {
				snprintf(err, errlen, "%s: unknown key '%s'",
					 path, (char *)k->data.scalar.value);
				rc = PH_EINVAL;
			}
		}
	}
	if (!rc && params && params->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *pr = params->data.mapping.pairs.start;
		     !rc && pr < params->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
			yaml_node_t *v =
				yaml_document_get_node(&doc, pr->value);
			const char *ks;

			if (!k || !v || k->type != YAML_SCALAR_NODE)
				continue;
			ks = (const char *)k->data.scalar.value;
			if (v->type == YAML_SCALAR_NODE) {
				rc = set_one(s, NULL, 0, ks,
					     (char *)v->data.scalar.value, err,
					     errlen);
			} else if (v->type == YAML_MAPPING_NODE) {
				for (yaml_node_pair_t *q =
					     v->data.mapping.pairs.start;
				     !rc && q < v->data.mapping.pairs.top;
				     q++) {
					yaml_node_t *qk =
						yaml_document_get_node(&doc,
								       q->key);
					yaml_node_t *qv =
						yaml_document_get_node(
							&doc, q->value);

					if (!qk || !qv ||
					    qk->type != YAML_SCALAR_NODE ||
					    qv->type != YAML_SCALAR_NODE)
						continue;
					rc = set_one(
						s, ks, strlen(ks),
						(char *)qk->data.scalar.value,
						(char *)qv->data.scalar.value,
						err, errlen);
				}
			}
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&yp);
	fclose(f);
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
