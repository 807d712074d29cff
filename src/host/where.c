/* SPDX-License-Identifier: Apache-2.0 */
/* where.c: evidence to source locations (see where.h). */
#include "ph_common.h"
#include "where.h"
#include "ph_json.h"

#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>

#define MAX_FILES      5000
#define MAX_FILE_BYTES ((size_t)2 << 20)
#define MAX_CANDIDATES 8

struct ph_where_index {
	char root[4096];
	char **paths; /* relative to root */
	size_t n, alloc;
};

static bool source_ext(const char *name)
{
	static const char *const ext[] = { ".c",   ".h",     ".cc",   ".cpp",
					   ".hpp", ".kt",    ".java", ".m",
					   ".mm",  ".swift", ".ts",   ".js",
					   ".py",  ".go",    ".rs",   ".sql" };
	const char *dot = strrchr(name, '.');

	for (size_t i = 0; dot && i < PH_ARRAY_SIZE(ext); i++)
		if (!strcmp(dot, ext[i]))
			return true;
	return false;
}

static void walk(struct ph_where_index *ix, const char *rel, int depth)
{
	char path[8192];
	DIR *d;
	struct dirent *de;

	if (depth > 12)
		return;
	snprintf(path, sizeof(path), "%s%s%s", ix->root, *rel ? "/" : "", rel);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && ix->n < MAX_FILES) {
		char sub[4096];
		struct stat st;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "build") ||
		    !strcmp(de->d_name, "node_modules"))
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "",
			 de->d_name);
		snprintf(path, sizeof(path), "%s/%s", ix->root, sub);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(ix, sub, depth + 1);
		} else if (S_ISREG(st.st_mode) && source_ext(de->d_name) &&
			   (size_t)st.st_size <= MAX_FILE_BYTES) {
			if (ix->n == ix->alloc &&
			    PH_GROW(ix->paths, ix->alloc, ix->n + 1, 128))
				break;
			ix->paths[ix->n] = strdup(sub);
			if (ix->paths[ix->n])
				ix->n++;
		}
	}
	closedir(d);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct ph_where_index *ph_where_index_new(const char *root)
{
	struct ph_where_index *ix;
	struct stat st;

	if (!root || !*root || stat(root, &st) || !S_ISDIR(st.st_mode))
		return NULL;
	ix = calloc(1, sizeof(*ix));
	if (!ix)
		return NULL;
	snprintf(ix->root, sizeof(ix->root), "%s", root);
	walk(ix, "", 0);
	/* Sorted, so candidates come out in the same order on every run. */
	if (ix->n)
		qsort(ix->paths, ix->n, sizeof(*ix->paths), by_path);
	return ix;
}

void ph_where_index_free(struct ph_where_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n; i++)
		free(ix->paths[i]);
	free(ix->paths);
	free(ix);
}

struct cand {
	const char *path;
	int64_t line;
};

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The 1-based line of the first occurrence of needle, or 0. */
static int64_t find_in(const struct ph_where_index *ix, const char *rel,
		       const char *needle, bool definition)
{
	struct ph_buf b = PH_BUF_INIT(MAX_FILE_BYTES + 1);
	char path[8192];
	int64_t line = 0;
	size_t nl = strlen(needle);

	snprintf(path, sizeof(path), "%s/%s", ix->root, rel);
	if (ph_buf_read_file(&b, path) || !nl)
		goto out;
	for (const char *p = b.buf; (p = strstr(p, needle)); p += nl) {
		const char *eol = strchr(p, '\n');
		const char *after = p + nl;

		if (definition) {
			/* A definition: name( at a word start, no ';' after. */
			bool word = p == b.buf ||
				    !(isalnum((unsigned char)p[-1]) ||
				      p[-1] == '_');

			while (*after == ' ')
				after++;
			if (!word || *after != '(' ||
			    memchr(after, ';',
				   (size_t)((eol ? eol : after + strlen(after)) -
					    after)))
				continue;
		}
		line = 1;
		for (const char *q = b.buf; q < p; q++)
			line += *q == '\n';
		break;
	}
out:
	ph_buf_release(&b);
	return line;
}

static void put_symbol(struct ph_jw *jw, const struct ph_where_hint *h)
{
	if (h->fn && *h->fn)
		ph_jw_kv_str(jw, "symbol", h->fn);
	else if (h->text)
		ph_jw_kv_str(jw, "symbol", h->text);
}

static void put(struct ph_jw *jw, const struct ph_where_hint *h,
		const struct cand *c, size_t n, const char *kind,
		char *short_out, size_t short_size)
{
	ph_jw_obj_begin(jw);
	if (n == 1) {
		ph_jw_kv_str(jw, "status", "resolved");
		ph_jw_kv_str(jw, "path", c[0].path);
		if (c[0].line > 0)
			ph_jw_kv_int(jw, "line", c[0].line);
		ph_jw_kv_str(jw, "kind", kind);
		if (c[0].line > 0)
			snprintf(short_out, short_size, "%s:%" PRId64,
				 c[0].path, c[0].line);
		else
			snprintf(short_out, short_size, "%s", c[0].path);
	} else if (n > 1) {
		ph_jw_kv_str(jw, "status", "ambiguous");
		put_symbol(jw, h);
		ph_jw_key(jw, "candidates");
		ph_jw_arr_begin(jw);
		for (size_t i = 0; i < n; i++) {
			ph_jw_obj_begin(jw);
			ph_jw_kv_str(jw, "path", c[i].path);
			if (c[i].line > 0)
				ph_jw_kv_int(jw, "line", c[i].line);
			ph_jw_obj_end(jw);
		}
		ph_jw_arr_end(jw);
	} else {
		ph_jw_kv_str(jw, "status", "not found");
		put_symbol(jw, h);
	}
	ph_jw_obj_end(jw);
}

bool ph_where_resolve(struct ph_where_index *ix, const struct ph_where_hint *h,
		      struct ph_buf *json, char *short_out, size_t short_size)
{
	struct cand c[MAX_CANDIDATES];
	size_t n = 0;
	struct ph_jw jw;
	char needle[64];

	short_out[0] = '\0';
	if (!ix || (!h->fn && !h->file && !h->text && !h->synthetic))
		return false;
	ph_jw_init(&jw, json);
	if (h->synthetic) {
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "status", "synthetic");
		ph_jw_obj_end(&jw);
		return !ph_jw_finish(&jw);
	}
	if (h->file) {
		/* A frame: the file named, narrowed by the function in it. */
		for (size_t i = 0; i < ix->n && n < MAX_CANDIDATES; i++)
			if (!strcmp(base(ix->paths[i]), base(h->file)))
				c[n++] = (struct cand){ ix->paths[i], h->line };
		if (n > 1 && h->fn) {
			size_t k = 0;

			for (size_t i = 0; i < n; i++)
				if (find_in(ix, c[i].path, h->fn, true))
					c[k++] = c[i];
			if (k)
				n = k;
		}
		/* A frame without its line ("fn(file)"): the function's. */
		for (size_t i = 0; i < n && h->line <= 0 && h->fn && *h->fn;
		     i++)
			c[i].line = find_in(ix, c[i].path, h->fn, true);
		if (!n && !h->app) {
			ph_jw_obj_begin(&jw);
			ph_jw_kv_str(&jw, "status", "not in project");
			put_symbol(&jw, h);
			ph_jw_obj_end(&jw);
			return !ph_jw_finish(&jw);
		}
		if (n) {
			put(&jw, h, c, n, "frame", short_out, short_size);
			return !ph_jw_finish(&jw);
		}
	}
	if (h->fn && *h->fn) {
		/* Kotlin "pkg.Class.method": look for the last part. */
		const char *dot = strrchr(h->fn, '.');
		const char *sym = dot && dot[1] ? dot + 1 : h->fn;

		for (size_t i = 0; i < ix->n && n < MAX_CANDIDATES; i++) {
			int64_t line = find_in(ix, ix->paths[i], sym, true);

			if (line)
				c[n++] = (struct cand){ ix->paths[i], line };
		}
		if (n || !h->text) {
			put(&jw, h, c, n, "declaration", short_out, short_size);
			return !ph_jw_finish(&jw);
		}
	}
	/* A literal (SQL, URL path): its first 40 bytes, as written. */
	snprintf(needle, sizeof(needle), "%.40s", h->text);
	for (size_t i = 0; i < ix->n && n < MAX_CANDIDATES; i++) {
		int64_t line = find_in(ix, ix->paths[i], needle, false);

		if (line)
			c[n++] = (struct cand){ ix->paths[i], line };
	}
	put(&jw, h, c, n, "declaration", short_out, short_size);
	return !ph_jw_finish(&jw);
}

void ph_analysis_resolve_where(struct ph_analysis *a, const char *root)
{
	struct ph_where_index *ix = ph_where_index_new(root);
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	char sh[512];

	if (!ix)
		return;
	for (size_t i = 0; i < a->nf; i++) {
		struct ph_finding *f = &a->f[i];

		ph_buf_reset(&b);
		if (!ph_where_resolve(ix, &f->hint, &b, sh, sizeof(sh)))
			continue;
		f->where = ph_arena_strndup(&a->arena, b.buf, b.len);
		if (sh[0])
			f->where_short =
				ph_arena_strndup(&a->arena, sh, strlen(sh));
	}
	ph_buf_release(&b);
	ph_where_index_free(ix);
}
