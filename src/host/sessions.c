/* SPDX-License-Identifier: Apache-2.0 */
/* sessions.c: listing, retention and the watermark (see session.h). */
#include "ph_common.h"
#include "session.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_json.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static bool held(const char *dir)
{
	char path[4200];
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = 0,
			    .l_len = 1 };
	int fd;

	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fcntl(fd, F_OFD_GETLK, &fl))
		fl.l_type = F_UNLCK;
	close(fd);
	return fl.l_type != F_UNLCK;
}

static void copy(char *dst, size_t size, const struct ph_json *v)
{
	if (ph_json_is(v, PH_JSON_STRING))
		snprintf(dst, size, "%.*s", (int)v->n, v->u.s);
}

/* meta.json's "lines": the first lines skipped or repaired (session.c). */
static void read_issues(struct ph_session_info *s, const struct ph_json *lines)
{
	for (size_t i = 0; ph_json_is(lines, PH_JSON_ARRAY) && i < lines->n &&
			   s->nissues < PH_INGEST_ISSUES;
	     i++) {
		const struct ph_json *l = &lines->u.items[i];
		struct ph_ingest_issue *is = &s->issues[s->nissues];
		const struct ph_json *action = ph_json_get(l, "action");
		int64_t line, at;

		if (!ph_json_as_int(ph_json_get(l, "line"), &line) ||
		    !ph_json_as_int(ph_json_get(l, "byte"), &at) ||
		    !ph_json_is(action, PH_JSON_STRING))
			continue;
		is->line = (uint64_t)line;
		is->offset = (uint64_t)at;
		is->repaired = action->n == 8 &&
			       !memcmp(action->u.s, "repaired", 8);
		copy(is->why, sizeof(is->why), ph_json_get(l, "why"));
		s->nissues++;
	}
}

static void read_meta(struct ph_session_info *s)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	struct ph_arena a;
	struct ph_json *root;
	struct ph_err err;
	char path[4200], msg[160];
	int rc;

	snprintf(path, sizeof(path), "%s/meta.json", s->path);
	ph_arena_init(&a, 1 << 16, 1 << 24);
	rc = ph_buf_read_file(&b, path);
	if (rc) {
		snprintf(s->note, sizeof(s->note), "no meta.json");
	} else if (ph_json_parse(&a, b.buf, b.len, &root, &err) ||
		   !ph_json_is(root, PH_JSON_OBJECT)) {
		snprintf(s->note, sizeof(s->note), "meta.json is corrupt (%s)",
			 ph_err_format(&err, msg, sizeof(msg)));
	} else {
		int64_t v;

		s->meta_ok = true;
		copy(s->package, sizeof(s->package),
		     ph_json_get(root, "packageName"));
		copy(s->device_id, sizeof(s->device_id),
		     ph_json_get(root, "deviceId"));
		if (ph_json_as_int(ph_json_get(root, "startedAt"), &v))
			s->started_at = v;
		if (ph_json_as_int(ph_json_get(root, "firstT"), &v))
			s->first_t = v;
		if (ph_json_as_int(ph_json_get(root, "lastT"), &v))
			s->last_t = v;
		if (ph_json_as_int(ph_json_get(root, "events"), &v))
			s->events = (uint64_t)v;
		if (ph_json_as_int(ph_json_get(root, "malformed"), &v))
			s->malformed = (uint64_t)v;
		if (ph_json_as_int(ph_json_get(root, "repaired"), &v))
			s->repaired = (uint64_t)v;
		read_issues(s, ph_json_get(root, "lines"));
	}
	ph_buf_release(&b);
	ph_arena_release(&a);
}

static int newest_first(const void *pa, const void *pb)
{
	const struct ph_session_info *a = pa, *b = pb;

	if (a->mtime_ms != b->mtime_ms)
		return a->mtime_ms > b->mtime_ms ? -1 : 1;
	return strcmp(a->id, b->id);
}

int ph_sessions_list(const char *sessions_dir, struct ph_session_info **out,
		     size_t *n)
{
	DIR *d = opendir(sessions_dir);
	struct dirent *de;
	struct ph_session_info *v = NULL;
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return errno == ENOENT ? 0 : PH_EIO;
	while ((de = readdir(d))) {
		struct ph_session_info *s;
		struct stat st;
		char path[8400];
		DIR *sd;
		struct dirent *fe;

		if (de->d_name[0] == '.')
			continue;
		if (*n == alloc && PH_GROW(v, alloc, *n + 1, 16))
			break;
		s = &v[*n];
		memset(s, 0, sizeof(*s));
		snprintf(s->id, sizeof(s->id), "%s", de->d_name);
		snprintf(s->path, sizeof(s->path), "%s/%s", sessions_dir,
			 de->d_name);
		if (stat(s->path, &st) || !S_ISDIR(st.st_mode))
			continue;
		s->mtime_ms = (int64_t)st.st_mtime * 1000;
		sd = opendir(s->path);
		while (sd && (fe = readdir(sd))) {
			snprintf(path, sizeof(path), "%s/%s", s->path,
				 fe->d_name);
			if (fe->d_name[0] == '.' || stat(path, &st))
				continue;
			s->bytes += (uint64_t)st.st_size;
			if (!strcmp(fe->d_name, "events.ndjson"))
				s->mtime_ms =
					(int64_t)st.st_mtim.tv_sec * 1000 +
					st.st_mtim.tv_nsec / 1000000;
		}
		if (sd)
			closedir(sd);
		s->recording = held(s->path);
		read_meta(s);
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), newest_first);
	*out = v;
	return 0;
}

static int rm_rf(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[8400];

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	return rmdir(dir);
}

int ph_sessions_prune(const char *sessions_dir, uint64_t max_bytes,
		      int64_t max_age_ms, const char *keep)
{
	struct ph_session_info *v;
	size_t n;
	uint64_t total = 0;
	int64_t now = ph_clock_epoch_ms();
	int removed = 0;

	if (ph_sessions_list(sessions_dir, &v, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	/* Oldest first: the list is newest first, so walk it backwards. */
	for (size_t i = n; i-- > 0;) {
		bool old = now - v[i].mtime_ms > max_age_ms;

		if (total <= max_bytes && !old)
			continue;
		if ((keep && !strcmp(v[i].id, keep)) || v[i].recording)
			continue;
		if (!rm_rf(v[i].path)) {
			total -= v[i].bytes;
			removed++;
		}
	}
	free(v);
	return removed;
}

/* --- the watermark -------------------------------------------------------- */

void ph_watermark_init(struct ph_watermark *wm)
{
	memset(wm, 0, sizeof(*wm));
	wm->last_to = INT64_MIN;
	ph_arena_init(&wm->arena, 1 << 16, (size_t)64 << 20);
}

void ph_watermark_release(struct ph_watermark *wm)
{
	ph_arena_release(&wm->arena);
	memset(wm, 0, sizeof(*wm));
}

static const char *adup(struct ph_arena *a, const struct ph_json *v)
{
	const char *s = ph_json_strdup(a, v);

	return s ? s : "";
}

int ph_watermark_load(struct ph_watermark *wm, const char *dir)
{
	struct ph_buf b = PH_BUF_INIT(16 << 20);
	struct ph_json *root;
	const struct ph_json *prev, *fs, *rep;
	char path[4200];
	int64_t v;

	snprintf(path, sizeof(path), "%s/watermark.json", dir);
	if (ph_buf_read_file(&b, path) ||
	    ph_json_parse(&wm->arena, b.buf, b.len, &root, NULL)) {
		ph_buf_release(&b);
		return 0; /* missing or corrupt: start afresh */
	}
	if (ph_json_as_int(ph_json_get(root, "lastTo"), &v))
		wm->last_to = v;
	prev = ph_json_get(root, "previous");
	fs = ph_json_get(prev, "findings");
	if (ph_json_is(fs, PH_JSON_ARRAY)) {
		size_t n = fs->n;
		struct ph_prev_call *p = &wm->prev;

		p->have =
			ph_json_as_int(ph_json_get(prev, "from"), &p->w.from) &&
			ph_json_as_int(ph_json_get(prev, "to"), &p->w.to);
		p->keys = ph_arena_alloc(&wm->arena, (n + 1) * sizeof(char *));
		p->ids = ph_arena_alloc(&wm->arena, (n + 1) * sizeof(char *));
		p->titles =
			ph_arena_alloc(&wm->arena, (n + 1) * sizeof(char *));
		p->counts =
			ph_arena_alloc(&wm->arena, (n + 1) * sizeof(int64_t));
		p->severities =
			ph_arena_alloc(&wm->arena, (n + 1) * sizeof(int));
		for (size_t i = 0; p->keys && p->ids && p->titles &&
				   p->counts && p->severities && i < n;
		     i++) {
			const struct ph_json *f = &fs->u.items[i];
			const char *sev =
				adup(&wm->arena, ph_json_get(f, "severity"));

			p->keys[p->n] = adup(&wm->arena, ph_json_get(f, "key"));
			p->ids[p->n] = adup(&wm->arena, ph_json_get(f, "id"));
			p->titles[p->n] =
				adup(&wm->arena, ph_json_get(f, "title"));
			if (!ph_json_as_int(ph_json_get(f, "count"),
					    &p->counts[p->n]))
				p->counts[p->n] = 0;
			p->severities[p->n] = ph_severity_parse(sev) < 0 ?
						      PH_SEV_NOTE :
						      ph_severity_parse(sev);
			p->n++;
		}
	}
	rep = ph_json_get(root, "reported");
	if (ph_json_is(rep, PH_JSON_ARRAY)) {
		wm->reported = ph_arena_alloc(&wm->arena,
					      (rep->n + 1) * sizeof(char *));
		for (size_t i = 0; wm->reported && i < rep->n; i++)
			wm->reported[wm->nreported++] =
				(char *)adup(&wm->arena, &rep->u.items[i]);
	}
	ph_buf_release(&b);
	return 0;
}

bool ph_watermark_reported(void *ctx, const char *key)
{
	const struct ph_watermark *wm = ctx;

	for (size_t i = 0; i < wm->nreported; i++)
		if (!strcmp(wm->reported[i], key))
			return true;
	return false;
}

/* Takes the watermark lock (byte 1 of the session's lock file). */
static int wm_lock(const char *dir)
{
	char path[4200];
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = 1,
			    .l_len = 1 };
	int fd;

	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && fcntl(fd, F_OFD_SETLKW, &fl)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int wm_write(const char *dir, struct ph_watermark *old,
		    const struct ph_analysis *a, bool mark, const char *extra)
{
	struct ph_buf b = PH_BUF_INIT(16 << 20);
	struct ph_jw jw;
	char path[4200], tmp[4300];
	int rc = 0, fd;

	ph_jw_init(&jw, &b);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_int(&jw, "lastTo", a ? a->window.to : old->last_to);
	ph_jw_key(&jw, "previous");
	ph_jw_obj_begin(&jw);
	if (a) {
		ph_jw_kv_int(&jw, "from", a->window.from);
		ph_jw_kv_int(&jw, "to", a->window.to);
		ph_jw_key(&jw, "findings");
		ph_jw_arr_begin(&jw);
		for (size_t i = 0; i < a->nf; i++) {
			const struct ph_finding *f = &a->f[i];

			if (f->status == PH_STATUS_RESOLVED)
				continue;
			ph_jw_obj_begin(&jw);
			ph_jw_kv_str(&jw, "key", f->key);
			ph_jw_kv_str(&jw, "id", f->id);
			ph_jw_kv_str(&jw, "title", f->title);
			ph_jw_kv_str(&jw, "severity",
				     ph_severity_name(f->severity));
			ph_jw_kv_int(&jw, "count", f->count);
			ph_jw_obj_end(&jw);
		}
		ph_jw_arr_end(&jw);
	} else if (old->prev.have) {
		ph_jw_kv_int(&jw, "from", old->prev.w.from);
		ph_jw_kv_int(&jw, "to", old->prev.w.to);
		ph_jw_key(&jw, "findings");
		ph_jw_arr_begin(&jw);
		for (size_t i = 0; i < old->prev.n; i++) {
			ph_jw_obj_begin(&jw);
			ph_jw_kv_str(&jw, "key", old->prev.keys[i]);
			ph_jw_kv_str(&jw, "id", old->prev.ids[i]);
			ph_jw_kv_str(&jw, "title", old->prev.titles[i]);
			ph_jw_kv_str(&jw, "severity",
				     ph_severity_name(old->prev.severities[i]));
			ph_jw_kv_int(&jw, "count", old->prev.counts[i]);
			ph_jw_obj_end(&jw);
		}
		ph_jw_arr_end(&jw);
	}
	ph_jw_obj_end(&jw);
	ph_jw_key(&jw, "reported");
	ph_jw_arr_begin(&jw);
	for (size_t i = 0; i < old->nreported; i++)
		ph_jw_str(&jw, old->reported[i]);
	for (size_t i = 0; a && mark && i < a->nf; i++)
		if (a->f[i].severity == PH_SEV_ERROR &&
		    a->f[i].status != PH_STATUS_RESOLVED &&
		    !ph_watermark_reported(old, a->f[i].key))
			ph_jw_str(&jw, a->f[i].key);
	if (extra && !ph_watermark_reported(old, extra))
		ph_jw_str(&jw, extra);
	ph_jw_arr_end(&jw);
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw) || ph_buf_addch(&b, '\n')) {
		ph_buf_release(&b);
		return PH_ENOMEM;
	}
	snprintf(path, sizeof(path), "%s/watermark.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, b.buf, b.len) != (ssize_t)b.len || close(fd) ||
	    rename(tmp, path)) {
		rc = PH_EIO;
		unlink(tmp);
	}
	ph_buf_release(&b);
	return rc;
}

/* Under the watermark lock: load, apply the analysis and/or key, write. */
static int wm_update(const char *dir, const struct ph_analysis *a,
		     bool mark_errors_reported, const char *key)
{
	struct ph_watermark wm;
	int fd = wm_lock(dir), rc;

	if (fd < 0)
		return PH_EIO;
	ph_watermark_init(&wm);
	ph_watermark_load(&wm, dir);
	rc = wm_write(dir, &wm, a, mark_errors_reported, key);
	ph_watermark_release(&wm);
	close(fd);
	return rc;
}

int ph_watermark_record(const char *dir, const struct ph_analysis *a,
			bool mark_errors_reported)
{
	return wm_update(dir, a, mark_errors_reported, NULL);
}

int ph_watermark_add_reported(const char *dir, const char *key)
{
	return wm_update(dir, NULL, false, key);
}

bool ph_sessions_live(const char *sessions_dir, const char *package, char *buf,
		      size_t size)
{
	struct ph_session_info *v;
	size_t n, plen = strlen(package);
	bool found = false;

	if (ph_sessions_list(sessions_dir, &v, &n))
		return false;
	/* newest first: the first recording one of the app is its process */
	for (size_t i = 0; i < n && !found; i++) {
		bool same = v[i].meta_ok ? !strcmp(v[i].package, package) :
					   !strncmp(v[i].id, package, plen) &&
						   v[i].id[plen] == '_';

		if (same && v[i].recording) {
			snprintf(buf, size, "%s", v[i].path);
			found = true;
		}
	}
	free(v);
	return found;
}
