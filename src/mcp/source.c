/* SPDX-License-Identifier: Apache-2.0 */
/*
 * source.c: what tools read through: the app (device link), the live
 * store, sessions on disk; and the small helpers every tool uses.
 */
#include "ph_common.h"
#include "mcp.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_log.h"
#include "host/env.h"
#include "host/run.h"
#include "host/session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define APP_TIMEOUT_MS 5000

int ph_mcp_init(struct ph_mcp *m, struct ph_live *lv)
{
	char root[4096];
	const char *r = ph_env_project_root();
	ssize_t n;

	memset(m, 0, sizeof(*m));
	m->lv = lv;
	m->banner_from = INT64_MIN;
	if (!r) {
		if (!getcwd(root, sizeof(root)))
			snprintf(root, sizeof(root), ".");
		r = root;
	}
	snprintf(m->trace_dir, sizeof(m->trace_dir), "%s/.porthole/traces", r);
	n = readlink("/proc/self/exe", m->self_exe, sizeof(m->self_exe) - 1);
	m->self_exe[n > 0 ? n : 0] = '\0';
	return 0;
}

void ph_mcp_release(struct ph_mcp *m)
{
	if (m->state_tmp) {
		char p[4300];

		snprintf(p, sizeof(p), "%s/watermark.json", m->state_dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/lock", m->state_dir);
		unlink(p);
		rmdir(m->state_dir);
	}
}

const char *ph_mcp_state_dir(struct ph_mcp *m)
{
	if (m->lv) {
		const char *d = NULL;

		pthread_mutex_lock(&m->lv->mu);
		if (m->lv->session_open)
			d = m->lv->session.dir;
		pthread_mutex_unlock(&m->lv->mu);
		if (d)
			return d;
	}
	if (!m->state_dir[0]) {
		/* No session on disk (PORTHOLE_SESSIONS=0, or none yet): a
		 * private directory keeps the watermark for this server. */
		snprintf(m->state_dir, sizeof(m->state_dir),
			 "%s/porthole-mcp-XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(m->state_dir)) {
			m->state_dir[0] = '\0';
			return NULL;
		}
		m->state_tmp = true;
	}
	return m->state_dir;
}

bool ph_mcp_connected(struct ph_mcp *m)
{
	bool ok;

	if (!m->lv || !m->started)
		return false;
	pthread_mutex_lock(&m->lv->link.mu);
	ok = m->lv->link.state == PH_LINK_CONNECTED;
	pthread_mutex_unlock(&m->lv->link.mu);
	return ok;
}

const char *ph_mcp_app_id(struct ph_mcp *m)
{
	if (!m->lv)
		return NULL;
	if (m->lv->link.app_id)
		return m->lv->link.app_id;
	return m->lv->store.in.ident.have ? m->lv->store.in.ident.package :
					    NULL;
}

bool ph_mcp_local(struct ph_mcp *m)
{
	bool local;

	if (!m->lv)
		return true;
	pthread_mutex_lock(&m->lv->link.mu);
	local = m->lv->link.target[0] == '@' || !m->lv->link.target[0];
	pthread_mutex_unlock(&m->lv->link.mu);
	return local;
}

const char *ph_mcp_why_not(struct ph_mcp *m, char *buf, size_t size)
{
	buf[0] = '\0';
	if (!m->lv || !m->started) {
		snprintf(buf, size, "no device link in this server");
		return buf;
	}
	pthread_mutex_lock(&m->lv->link.mu);
	if (m->lv->link.state != PH_LINK_CONNECTED)
		snprintf(buf, size, "%s",
			 m->lv->link.error[0] ? m->lv->link.error :
						"still connecting");
	pthread_mutex_unlock(&m->lv->link.mu);
	return buf;
}

static bool newest_session(struct ph_mcp *m, struct ph_session_info *out);

static int max_t_cb(void *ctx, const struct ph_event *ev)
{
	int64_t *t = ctx;

	if (ev->t > *t)
		*t = ev->t;
	return 0;
}

/*
 * The newest event time in an NDJSON session file, read from its tail
 * (the last 64 KiB, then the last 4 MiB when no event ends in that):
 * 0 when none is found.
 */
static int64_t file_last_t(const char *path)
{
	static const size_t tails[] = { (size_t)64 << 10, (size_t)4 << 20 };
	struct stat st;
	int64_t t = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	for (size_t k = 0; !t && k < PH_ARRAY_SIZE(tails); k++) {
		struct ph_buf b = PH_BUF_INIT(tails[k] + 1);
		struct ph_arena a;
		struct ph_ingest in;
		off_t from;
		ssize_t n;
		size_t i = 0;

		if (fstat(fd, &st) || ph_buf_grow(&b, tails[k])) {
			ph_buf_release(&b);
			break;
		}
		from = st.st_size > (off_t)tails[k] ?
			       st.st_size - (off_t)tails[k] :
			       0;
		n = pread(fd, b.buf, tails[k], from);
		if (n <= 0) {
			ph_buf_release(&b);
			break;
		}
		ph_buf_setlen(&b, (size_t)n);
		/* A tail that starts mid-line: skip to the first whole one. */
		if (from > 0)
			while (i < b.len && b.buf[i++] != '\n')
				;
		ph_arena_init(&a, 1 << 16, tails[k] * 8);
		ph_ingest_init(&in, max_t_cb, &t);
		while (i < b.len) {
			char *nl = memchr(b.buf + i, '\n', b.len - i);

			if (!nl)
				break; /* a torn last line */
			ph_ingest_line(&in, &a, b.buf + i,
				       (size_t)(nl - (b.buf + i)));
			ph_arena_reset(&a);
			i = (size_t)(nl - b.buf) + 1;
		}
		ph_ingest_release(&in);
		ph_arena_release(&a);
		ph_buf_release(&b);
		if (st.st_size <= (off_t)tails[k])
			break; /* the whole file was read */
	}
	close(fd);
	return t;
}

int64_t ph_mcp_now(struct ph_mcp *m)
{
	struct ph_session_info si;
	int64_t t = 0;

	if (m->lv) {
		pthread_mutex_lock(&m->lv->store.lock);
		t = m->lv->store.nevents ? m->lv->store.in.last_t : 0;
		pthread_mutex_unlock(&m->lv->store.lock);
	}
	/* On this machine the app's clock is CLOCK_MONOTONIC, as ours. */
	if (ph_mcp_local(m) && ph_mcp_connected(m)) {
		int64_t here = ph_clock_uptime_ms();

		if (here > t)
			t = here;
	}
	if (t)
		return t;
	/*
	 * Nothing live: the answer comes from the newest session on disk,
	 * whose clock is the app's of that run (another boot, another
	 * device), not ours: its newest event is "now".
	 */
	if (!ph_mcp_connected(m) && newest_session(m, &si)) {
		char p[4200];

		snprintf(p, sizeof(p), "%.4000s/events.ndjson", si.path);
		t = file_last_t(p);
	}
	return t ? t : ph_clock_uptime_ms();
}

/* --- helpers for tools -----------------------------------------------------
 */

void ph_mcp_line(struct ph_mcp_call *c, const char *fmt, ...)
{
	va_list ap;

	ph_buf_reset(&c->line);
	va_start(ap, fmt);
	if (ph_buf_vaddf(&c->line, fmt, ap))
		ph_buf_reset(&c->line);
	va_end(ap);
}

void ph_mcp_more(struct ph_mcp_call *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ph_buf_vaddf(&c->line, fmt, ap))
		ph_warn("mcp: a summary line was cut");
	va_end(ap);
}

int ph_mcp_fail(struct ph_mcp_call *c, const char *fmt, ...)
{
	va_list ap;

	ph_buf_reset(&c->line);
	va_start(ap, fmt);
	if (ph_buf_vaddf(&c->line, fmt, ap))
		ph_buf_reset(&c->line);
	va_end(ap);
	c->is_error = true;
	return 0;
}

/* As in the published runtime: a string argument that is empty or "null"
 * counts as absent (docs/protocol.md section 2). */
static bool absent_str(const struct ph_json *v)
{
	return ph_json_is(v, PH_JSON_STRING) &&
	       (!v->n || (v->n == 4 && !memcmp(v->u.s, "null", 4)));
}

const char *ph_mcp_arg_str(struct ph_mcp_call *c, const char *name,
			   const char *def)
{
	const struct ph_json *v = ph_json_get(c->args, name);
	const char *s;

	if (!ph_json_is(v, PH_JSON_STRING) || absent_str(v))
		return def;
	s = ph_json_strdup(c->arena, v);
	return s ? s : def;
}

int64_t ph_mcp_arg_int(struct ph_mcp_call *c, const char *name, int64_t def)
{
	int64_t v;
	const struct ph_json *j = ph_json_get(c->args, name);

	if (!j || j->type == PH_JSON_STRING || !ph_json_as_int(j, &v))
		return def;
	return v;
}

bool ph_mcp_arg_has(struct ph_mcp_call *c, const char *name)
{
	const struct ph_json *v = ph_json_get(c->args, name);

	return v && v->type != PH_JSON_NULL && !absent_str(v);
}

bool ph_mcp_arg_bool(struct ph_mcp_call *c, const char *name, bool def)
{
	const struct ph_json *v = ph_json_get(c->args, name);

	if (ph_json_is(v, PH_JSON_TRUE))
		return true;
	if (ph_json_is(v, PH_JSON_FALSE))
		return false;
	return def;
}

int64_t ph_mcp_limit(struct ph_mcp_call *c, const char *name, int64_t dflt,
		     int64_t full)
{
	if (name && ph_mcp_arg_has(c, name))
		return ph_mcp_arg_int(c, name, dflt);
	return c->detail == PH_DETAIL_FULL ? full : dflt;
}

bool ph_mcp_capped(struct ph_mcp_call *c, const char *name)
{
	return c->detail != PH_DETAIL_FULL && !ph_mcp_arg_has(c, name);
}

int64_t ph_mcp_full_limit(struct ph_mcp_call *c, const char *name, int64_t full)
{
	return ph_mcp_arg_has(c, name) ? ph_mcp_arg_int(c, name, full) : full;
}

/* The bytes v takes written as a payload value. */
static size_t written_len(const struct ph_json *v)
{
	struct ph_buf b = PH_BUF_INIT((size_t)64 << 20);
	struct ph_jw jw;
	size_t n;

	ph_jw_init(&jw, &b);
	ph_jw_value(&jw, v);
	n = ph_jw_finish(&jw) ? 0 : b.len;
	ph_buf_release(&b);
	return n;
}

void ph_mcp_full_app(struct ph_mcp_call *c, const char *method,
		     const char *full_params, const struct ph_json *r)
{
	const struct ph_json *rf;
	char *line = ph_arena_strndup(c->arena, c->line.buf, c->line.len);
	size_t l0, lf;

	if (!line)
		return;
	if (ph_mcp_app(c, method, full_params, &rf)) {
		/* Not worth failing the answer over: M stays the payload. */
		ph_mcp_line(c, "%s", line);
		c->is_error = false;
		return;
	}
	l0 = written_len(r);
	lf = written_len(rf);
	if (l0 && lf > l0)
		c->full_payload = c->payload.len + (lf - l0) + 1; /* and } */
}

void ph_mcp_mark(struct ph_mcp_call *c, int64_t to)
{
	struct ph_mcp *m = c->m;

	for (size_t i = 0; i < m->nmarks; i++)
		if (!strcmp(m->marks[i].tool, c->tool->name)) {
			m->marks[i].last_to = to;
			return;
		}
	if (m->nmarks < PH_ARRAY_SIZE(m->marks)) {
		m->marks[m->nmarks].tool = c->tool->name;
		m->marks[m->nmarks++].last_to = to;
	}
}

const char *ph_mcp_wstr(struct ph_window w, char *buf, size_t size)
{
	char a[32], b[32];

	if (w.from == INT64_MIN)
		snprintf(a, sizeof(a), "start");
	else
		snprintf(a, sizeof(a), "%" PRId64, w.from);
	if (w.to == INT64_MAX)
		snprintf(b, sizeof(b), "now");
	else
		snprintf(b, sizeof(b), "%" PRId64, w.to);
	snprintf(buf, size, "%s..%s", a, b);
	return buf;
}

void ph_mcp_put(struct ph_mcp_call *c, const char *key, const struct ph_json *v)
{
	ph_jw_key(&c->jw, key);
	if (v)
		ph_jw_value(&c->jw, v);
	else
		ph_jw_null(&c->jw);
}

bool ph_mcp_window_refused(struct ph_mcp_call *c)
{
	char ws[80];

	/* since:"last" with nothing new since is not the caller's error. */
	if (c->w_since_last || c->w.from <= c->w.to)
		return false;
	ph_mcp_fail(c,
		    "the window t=%s is empty: it starts after it ends "
		    "(from %" PRId64 " > to %" PRId64
		    "; an open to is now, the app's newest t). Give from <= "
		    "to (app clock ms, both inclusive), or sinceMs, or since; "
		    "nothing was read and the since:\"last\" mark did not "
		    "move",
		    ph_mcp_wstr(c->w, ws, sizeof(ws)), c->w.from, c->w.to);
	return true;
}

void ph_mcp_app_notes(struct ph_mcp_call *c, const struct ph_json *r,
		      const char *having)
{
	const struct ph_json *notes = ph_json_get(r, "notes");

	for (uint32_t i = 0; notes && i < notes->n; i++) {
		const struct ph_json *n = &notes->u.items[i];

		if (ph_json_is(n, PH_JSON_STRING) &&
		    memmem(n->u.s, n->n, having, strlen(having)))
			ph_mcp_more(c, " (%.*s)", ph_mcp_first_line(n, 300),
				    n->u.s);
	}
}

/* --- the app ---------------------------------------------------------------
 */

int ph_mcp_app(struct ph_mcp_call *c, const char *method, const char *params,
	       const struct ph_json **res)
{
	struct ph_buf b = PH_BUF_INIT((size_t)48 << 20);
	struct ph_json *root;
	const struct ph_json *ok, *err;
	char why[400];
	int rc;

	*res = NULL;
	if (!ph_mcp_connected(c->m)) {
		ph_mcp_fail(c,
			    "cannot ask the app (%s): it is not connected: %s. "
			    "Call porthole_status for the fix; findings and "
			    "timeline still answer from sessions on disk.",
			    method, ph_mcp_why_not(c->m, why, sizeof(why)));
		return PH_ECLOSED;
	}
	rc = ph_link_request(&c->m->lv->link, method, params, &b,
			     APP_TIMEOUT_MS);
	if (rc == PH_EAGAIN) {
		ph_mcp_fail(c, "the app did not answer %s within %d ms", method,
			    APP_TIMEOUT_MS);
		goto out;
	}
	if (rc) {
		ph_mcp_fail(c, "cannot ask the app (%s): %s", method,
			    rc == PH_ETOOBIG ? "the answer is too big" :
					       "the connection went away");
		goto out;
	}
	/* The line lives in b: keep a copy in the arena for the tree. */
	{
		char *copy = ph_arena_strndup(c->arena, b.buf, b.len);

		if (!copy ||
		    ph_json_parse(c->arena, copy, b.len, &root, NULL)) {
			rc = PH_EPROTO;
			ph_mcp_fail(c, "the app's answer to %s is not JSON",
				    method);
			goto out;
		}
	}
	ok = ph_json_get(root, "ok");
	if (!ph_json_is(ok, PH_JSON_TRUE)) {
		err = ph_json_get(root, "error");
		rc = PH_EPROTO;
		ph_mcp_fail(c, "the app refused %s: %.*s", method,
			    ph_json_is(err, PH_JSON_STRING) ? (int)err->n : 7,
			    ph_json_is(err, PH_JSON_STRING) ? err->u.s :
							      "no reason");
		goto out;
	}
	*res = ph_json_get(root, "result");
	if (!*res) {
		rc = PH_EPROTO;
		ph_mcp_fail(c, "the app's answer to %s has no result", method);
	}
out:
	ph_buf_release(&b);
	return rc;
}

/* --- windows over the store or a session on disk ------------------------- */

/* The newest session on disk for this app (any, without an app id). */
static bool newest_session(struct ph_mcp *m, struct ph_session_info *out)
{
	struct ph_session_info *v;
	const char *app = ph_mcp_app_id(m);
	char dir[4200];
	size_t n;
	bool found = false;

	ph_env_sessions_dir(dir, sizeof(dir));
	if (ph_sessions_list(dir, &v, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++) {
		if (app && strcmp(v[i].package, app))
			continue;
		*out = v[i];
		found = true;
	}
	free(v);
	return found;
}

/*
 * The session file that continues the live store back in time: the one
 * this host writes, else (another host writes it) the newest on disk for
 * the app.  Its id, for notes, into id.
 */
static bool live_session_file(struct ph_mcp *m, char *path, size_t size,
			      char *id, size_t idsize)
{
	struct ph_session_info si;
	const char *end, *start;
	int64_t started_at;

	pthread_mutex_lock(&m->lv->mu);
	snprintf(path, size, "%.4000s", m->lv->session_path);
	pthread_mutex_unlock(&m->lv->mu);
	pthread_mutex_lock(&m->lv->store.lock);
	started_at = m->lv->store.in.ident.have ?
			     m->lv->store.in.ident.started_at :
			     INT64_MIN;
	pthread_mutex_unlock(&m->lv->store.lock);
	/* Only the live process's own session: another run's seqs start
	 * afresh and would hide the buffer's events as already read. */
	if (!path[0] && newest_session(m, &si) && si.started_at == started_at)
		snprintf(path, size, "%.4000s/events.ndjson", si.path);
	if (!path[0] || access(path, R_OK)) {
		path[0] = '\0';
		return false;
	}
	/* .../<id>/events.ndjson */
	end = strrchr(path, '/');
	for (start = end; start && start > path && start[-1] != '/'; start--)
		;
	snprintf(id, idsize, "%.*s", end && start ? (int)(end - start) : 0,
		 start ? start : "");
	return true;
}

/*
 * Picks the source for window w.  When the live store holds events it is
 * the source (src->live); if it no longer covers w.from (it evicted older
 * events), src->path names the session file that holds the rest, which
 * the host reads first (ph_analyze_window).  With nothing live, the newest
 * session on disk for the app (src->path, src->live false).
 */
static bool pick(struct ph_mcp_call *c, struct ph_window w,
		 struct ph_mcp_source *src)
{
	struct ph_mcp *m = c->m;
	struct ph_session_info si;
	bool have = false, covered = false, loading = false;
	int64_t covered_from = INT64_MIN;

	memset(src, 0, sizeof(*src));
	if (m->lv) {
		pthread_mutex_lock(&m->lv->store.lock);
		have = m->lv->store.nevents > 0;
		covered_from = m->lv->store.covered_from;
		loading = m->lv->store.loading;
		pthread_mutex_unlock(&m->lv->store.lock);
		covered = have &&
			  (covered_from == INT64_MIN ||
			   (w.from != INT64_MIN && w.from >= covered_from));
	}
	if (have) {
		char id[400];

		src->live = true;
		if (loading) /* live.h: the session an earlier host wrote */
			snprintf(src->note, sizeof(src->note),
				 "this host is still loading the session an "
				 "earlier host recorded: what the app sent "
				 "before it attached may be missing; ask "
				 "again");
		if (covered)
			return true;
		if (live_session_file(m, src->path, sizeof(src->path), id,
				      sizeof(id)))
			snprintf(src->note, sizeof(src->note),
				 "the live buffer starts at t=%" PRId64
				 ": the window before it was read from "
				 "session %s on disk",
				 covered_from, id);
		else
			snprintf(src->note, sizeof(src->note),
				 "the live buffer starts at t=%" PRId64
				 " and no session on disk holds the rest",
				 covered_from);
		return true;
	}
	if (newest_session(m, &si)) {
		snprintf(src->path, sizeof(src->path), "%s/events.ndjson",
			 si.path);
		if (!access(src->path, R_OK)) {
			snprintf(src->note, sizeof(src->note),
				 "nothing live: answered from session %s on "
				 "disk",
				 si.id);
			return true;
		}
		src->path[0] = '\0';
	}
	{
		char why[400];

		ph_mcp_fail(c,
			    "no events to answer from: the app is not "
			    "connected (%s) and no session on disk was found "
			    "for it. Call porthole_status for the fix.",
			    ph_mcp_connected(m) ?
				    "connected, nothing received yet" :
				    ph_mcp_why_not(m, why, sizeof(why)));
	}
	return false;
}

struct ph_analysis *ph_mcp_analyze(struct ph_mcp_call *c, struct ph_window w,
				   struct ph_mcp_source *src)
{
	struct ph_analysis *a;
	int rc = 0;

	if (!pick(c, w, src))
		return NULL;
	/* The host's own fallback: the file for what the store evicted,
	 * then the store's newer events, nothing counted twice. */
	if (src->live)
		a = ph_analyze_window(&c->m->lv->store,
				      src->path[0] ? src->path : NULL, w);
	else
		a = ph_analyze_file(src->path, w, &rc);
	/* What the live link says of the stretch after the last event. */
	if (a && src->live && c->m->started) {
		char why[400];
		int64_t first_t;

		pthread_mutex_lock(&c->m->lv->store.lock);
		first_t = c->m->lv->store.in.first_t;
		pthread_mutex_unlock(&c->m->lv->store.lock);
		ph_analysis_link(a, ph_mcp_connected(c->m),
				 ph_mcp_why_not(c->m, why, sizeof(why)),
				 first_t);
	}
	if (!a)
		ph_mcp_fail(c, "the findings engine could not read %s (%s)",
			    src->live ? "the live store" : src->path,
			    ph_strerror(rc));
	return a;
}

struct each_file {
	struct ph_window w;
	uint64_t kinds;
	int (*fn)(void *ctx, const struct ph_event *ev);
	void *ctx;
	int64_t n;
	int stop;
	int64_t after_seq; /* the store's part: only seqs above the file's */
};

static int each_file_cb(void *ctx, const struct ph_event *ev)
{
	struct each_file *e = ctx;
	int64_t f, t;

	if (e->stop)
		return 0;
	if (e->kinds && !(e->kinds & ((uint64_t)1 << ev->kind)))
		return 0;
	ph_ev_span(ev, &f, &t);
	if (t < e->w.from || f > e->w.to)
		return 0;
	e->n++;
	e->stop = e->fn(e->ctx, ev);
	return 0;
}

static int each_newer_cb(void *ctx, const struct ph_event *ev)
{
	struct each_file *e = ctx;

	if (ph_store_ev_in_file(ev, e->after_seq))
		return 0;
	e->n++;
	return e->stop = e->fn(e->ctx, ev);
}

int64_t ph_mcp_each(struct ph_mcp_call *c, struct ph_window w, uint64_t kinds,
		    int (*fn)(void *ctx, const struct ph_event *ev), void *ctx,
		    struct ph_mcp_source *src)
{
	struct each_file e = { w, kinds, fn, ctx, 0, 0, -1 };
	struct ph_ingest in;

	if (!pick(c, w, src))
		return -1;
	if (src->live && !src->path[0])
		return (int64_t)ph_store_each(&c->m->lv->store, w, kinds, fn,
					      ctx);
	ph_ingest_init(&in, each_file_cb, &e);
	if (ph_ingest_file(&in, src->path))
		ph_mcp_more(c, " (the session file was read in part)");
	e.after_seq = in.max_seq;
	ph_ingest_release(&in);
	/* As ph_analyze_window does: then the store's newer events. */
	if (src->live && !e.stop)
		ph_store_each(&c->m->lv->store, w, kinds, each_newer_cb, &e);
	return e.n;
}

/* --- subprocesses ----------------------------------------------------------
 */

int ph_mcp_run(char *const argv[], struct ph_buf *out, int timeout_ms)
{
	return ph_run(argv, out, timeout_ms);
}

/* --- windowed app methods --------------------------------------------------
 */

const char *ph_mcp_window_params(struct ph_mcp_call *c, int64_t limit,
				 const char *extra)
{
	struct ph_buf b = PH_BUF_INIT(1 << 16);
	const char *s = "{}";

	if (!ph_buf_addch(&b, '{') &&
	    !ph_buf_addf(&b, "\"limit\":%" PRId64, limit) &&
	    (c->w.from == INT64_MIN ||
	     !ph_buf_addf(&b, ",\"from\":%" PRId64, c->w.from)) &&
	    (c->w.to == INT64_MAX ||
	     !ph_buf_addf(&b, ",\"to\":%" PRId64, c->w.to)) &&
	    (!extra || !extra[0] || !ph_buf_addf(&b, ",%s", extra)) &&
	    !ph_buf_addch(&b, '}'))
		s = ph_arena_strndup(c->arena, b.buf, b.len);
	ph_buf_release(&b);
	return s ? s : "{}";
}

struct ring {
	struct ph_mcp_call *c;
	int64_t first;	    /* index of the first event to write */
	int64_t first_full; /* ... and the first detail full would write */
	int64_t n;	    /* events seen */
	int64_t written;
	size_t full_extra;     /* bytes of [first_full, first) as written */
	struct ph_buf scratch; /* to measure them */
};

static int count_cb(void *ctx, const struct ph_event *ev)
{
	struct ring *r = ctx;

	(void)ev;
	r->n++;
	return 0;
}

/*
 * Writes events from index `first` on, while they are alive (the walk);
 * the ones only detail full would add are written aside and measured.
 */
static int write_cb(void *ctx, const struct ph_event *ev)
{
	struct ring *r = ctx;
	int64_t i = r->n++;

	if (!ev->frame || i < r->first_full)
		return 0;
	if (i >= r->first) {
		ph_jw_value(&r->c->jw, ev->frame);
		r->written++;
	} else {
		struct ph_jw jw;

		ph_buf_reset(&r->scratch);
		ph_jw_init(&jw, &r->scratch);
		ph_jw_value(&jw, ev->frame);
		if (!ph_jw_finish(&jw))
			r->full_extra += r->scratch.len + 1; /* and a comma */
	}
	return 0;
}

int ph_mcp_write_events(struct ph_mcp_call *c, struct ph_window w,
			uint64_t kinds, int64_t limit, int64_t full_limit,
			int64_t *matched, int64_t *returned, size_t *full_extra,
			struct ph_mcp_source *src)
{
	struct ring r = { .c = c, .scratch = PH_BUF_INIT((size_t)64 << 20) };

	if (limit < 0)
		limit = 0;
	if (full_limit < limit)
		full_limit = limit;
	/* Events borrow from their store chunk or the file's batch: count
	 * first, then write the newest `limit` during a second walk. */
	if (ph_mcp_each(c, w, kinds, count_cb, &r, src) < 0)
		return -1;
	*matched = r.n;
	r.first = r.n > limit ? r.n - limit : 0;
	r.first_full = r.n > full_limit ? r.n - full_limit : 0;
	r.n = 0;
	ph_jw_key(&c->jw, "events");
	ph_jw_arr_begin(&c->jw);
	if (ph_mcp_each(c, w, kinds, write_cb, &r, src) < 0)
		r.written = 0;
	ph_jw_arr_end(&c->jw);
	*returned = r.written;
	if (full_extra)
		*full_extra = r.full_extra;
	ph_buf_release(&r.scratch);
	return 0;
}

int ph_mcp_events_instead(struct ph_mcp_call *c, const char *what,
			  const char *kinds, int64_t limit, int64_t full_limit)
{
	struct ph_mcp_source src;
	int64_t matched = 0, returned = 0;
	char why[400], ws[80];
	size_t extra = 0;

	ph_mcp_why_not(c->m, why, sizeof(why));
	if (ph_mcp_write_events(c, c->w, ph_kinds_mask(kinds), limit,
				full_limit, &matched, &returned, &extra,
				&src)) {
		ph_mcp_fail(c,
			    "cannot answer %s: the app is not connected (%s), "
			    "and no events of it are held here or on disk. "
			    "Call porthole_status for the fix.",
			    what, why);
		return 0;
	}
	c->is_error = false;
	ph_mcp_line(c,
		    "%s: the app cannot be asked (%s); instead, its %s events "
		    "in t=%s from %s: %" PRId64 " matched, newest %" PRId64
		    " returned",
		    what, why, kinds, ph_mcp_wstr(c->w, ws, sizeof(ws)),
		    src.live ? "the live buffer" : src.path, matched, returned);
	ph_jw_kv_str(&c->jw, "source", src.live ? "live" : src.path);
	ph_jw_kv_str(&c->jw, "notConnected", why);
	/* M: the events detail full would add, measured on them. */
	if (extra)
		c->full_payload = c->payload.len + extra + 1; /* and the } */
	return 0;
}
