/*
 * traces.c: the system traces under <root>/.porthole/traces/, listed for
 * the page and asked through the trace engine (trace_ask.h).
 *
 * A trace is named by its file name only.  The server refuses any id that
 * is not in this listing before it touches the file system with it, so no
 * request ever carries a path.  Coverage is the trace's span mapped onto
 * the app clock (MONOTONIC ms): a trace recorded on BOOTTIME maps through
 * its clock snapshots, or not at all, and then the reason says so.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "trace/trace.h"
#include "trace/trace_ask.h"
#include "ui/ui.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>

/*
 * Loading a trace to learn its span costs as much as reading it, so the
 * span is remembered per (name, size, mtime) for as long as ui runs.
 */
struct cov {
	char id[256];
	off_t size;
	int64_t mtime;
	bool ok;
	int64_t from, to;
	char reason[160];
};
static struct cov cache[PH_UI_MAX_TRACES];
static size_t ncache;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

struct entry {
	char id[256];
	off_t size;
	int64_t mtime_ms;
};

static int newest_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime_ms != y->mtime_ms)
		return x->mtime_ms < y->mtime_ms ? 1 : -1;
	return strcmp(x->id, y->id);
}

/* The listing: regular files with a valid id, newest first. */
static size_t list(const char *dir, struct entry *v, size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		char path[4400];
		struct stat st;

		if (!ph_ui_trace_id_ok(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		snprintf(v[n].id, sizeof(v[n].id), "%s", de->d_name);
		v[n].size = st.st_size;
		v[n].mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 +
				st.st_mtim.tv_nsec / 1000000;
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), newest_first);
	return n;
}

bool ph_ui_trace_listed(const char *dir, const char *id)
{
	struct entry *v;
	size_t n;
	bool found = false;

	if (!ph_ui_trace_id_ok(id))
		return false;
	v = calloc(PH_UI_MAX_TRACES, sizeof(*v));
	if (!v)
		return false;
	n = list(dir, v, PH_UI_MAX_TRACES);
	for (size_t i = 0; i < n && !found; i++)
		found = !strcmp(v[i].id, id);
	free(v);
	return found;
}

/* ns on the trace's clock -> ms on MONOTONIC, or PH_NULL_I64. */
static int64_t to_app_ms(const struct ph_trace *t, int64_t ts)
{
	int64_t m;

	if (t->trace_clock == PH_CLK_MONOTONIC)
		return ts / 1000000;
	if (!t->trace_clock)
		return PH_NULL_I64;
	m = ph_trace_to_clock(t, ts, PH_CLK_MONOTONIC);
	return m == PH_NULL_I64 ? m : m / 1000000;
}

static void coverage(const char *dir, const struct entry *e, struct cov *c)
{
	struct ph_trace *t = calloc(1, sizeof(*t));
	char path[4400];
	int rc;

	snprintf(c->id, sizeof(c->id), "%s", e->id);
	c->size = e->size;
	c->mtime = e->mtime_ms;
	c->ok = false;
	if (!t) {
		snprintf(c->reason, sizeof(c->reason), "out of memory");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, e->id);
	rc = ph_trace_init(t);
	if (!rc)
		rc = ph_trace_load_file(t, path);
	if (rc && rc != PH_ECORRUPT) {
		snprintf(c->reason, sizeof(c->reason),
			 "the trace could not be read (%s)", ph_strerror(rc));
	} else if (t->first_ts >= t->last_ts) {
		snprintf(c->reason, sizeof(c->reason),
			 "the trace holds no timed events");
	} else {
		c->from = to_app_ms(t, t->first_ts);
		c->to = to_app_ms(t, t->last_ts);
		c->ok = c->from != PH_NULL_I64 && c->to != PH_NULL_I64;
		if (!c->ok)
			snprintf(c->reason, sizeof(c->reason),
				 "its clock (%s) has no snapshot that maps it "
				 "onto the app's uptime clock",
				 t->clock_name ? t->clock_name : "unknown");
	}
	ph_trace_free(t);
}

int ph_ui_traces_write(const char *dir, struct ph_jw *jw)
{
	struct entry *v = calloc(PH_UI_MAX_TRACES, sizeof(*v));
	size_t n;

	if (!v)
		return PH_ENOMEM;
	n = list(dir, v, PH_UI_MAX_TRACES);
	ph_jw_obj_begin(jw);
	ph_jw_key(jw, "traces");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < n; i++) {
		struct cov c = { 0 };
		bool hit = false;

		pthread_mutex_lock(&cache_mu);
		for (size_t k = 0; k < ncache && !hit; k++)
			if (!strcmp(cache[k].id, v[i].id) &&
			    cache[k].size == v[i].size &&
			    cache[k].mtime == v[i].mtime_ms) {
				c = cache[k];
				hit = true;
			}
		pthread_mutex_unlock(&cache_mu);
		if (!hit) {
			coverage(dir, &v[i], &c);
			pthread_mutex_lock(&cache_mu);
			cache[ncache < PH_UI_MAX_TRACES ? ncache++ :
							  i % PH_UI_MAX_TRACES] =
				c;
			pthread_mutex_unlock(&cache_mu);
		}
		ph_jw_obj_begin(jw);
		ph_jw_kv_str(jw, "id", v[i].id);
		ph_jw_kv_int(jw, "bytes", (int64_t)v[i].size);
		ph_jw_kv_int(jw, "recordedAt", v[i].mtime_ms);
		ph_jw_key(jw, "coverage");
		if (c.ok) {
			ph_jw_obj_begin(jw);
			ph_jw_kv_int(jw, "from", c.from);
			ph_jw_kv_int(jw, "to", c.to);
			ph_jw_obj_end(jw);
		} else {
			ph_jw_null(jw);
			ph_jw_kv_str(jw, "reason", c.reason);
		}
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	ph_jw_kv_str(jw, "dir", ".porthole/traces");
	ph_jw_obj_end(jw);
	free(v);
	return 0;
}

/* ms on MONOTONIC -> ns on the trace's clock, through its offset at ts0. */
static int64_t to_trace_ns(const struct ph_trace *t, int64_t ms)
{
	int64_t off;

	if (ms == INT64_MIN || ms == INT64_MAX)
		return PH_NULL_I64;
	if (t->trace_clock == PH_CLK_MONOTONIC)
		return ms * 1000000;
	off = ph_trace_to_clock(t, t->first_ts, PH_CLK_MONOTONIC);
	if (!t->trace_clock || off == PH_NULL_I64)
		return PH_NULL_I64;
	return ms * 1000000 - (off - t->first_ts);
}

int ph_ui_trace_ask(const char *dir, const char *id, struct ph_window w,
		    int64_t pid, struct ph_buf *out, char *why, size_t size)
{
	struct ph_trace *t;
	struct ph_jw jw;
	char path[4400], process[32] = "";
	int64_t from, to;
	int rc;

	if (!ph_ui_trace_listed(dir, id)) {
		snprintf(why, size, "no trace '%s' in .porthole/traces", id);
		return PH_ENOENT;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return PH_ENOMEM;
	snprintf(path, sizeof(path), "%s/%s", dir, id);
	rc = ph_trace_init(t);
	if (!rc)
		rc = ph_trace_load_file(t, path);
	if (rc && rc != PH_ECORRUPT) {
		snprintf(why, size, "trace '%s' could not be read (%s)", id,
			 ph_strerror(rc));
		goto out;
	}
	from = to_trace_ns(t, w.from);
	to = to_trace_ns(t, w.to);
	/* A window that misses the trace asks about its whole life instead;
	 * the answer's window says which span was asked. */
	if (from != PH_NULL_I64 && to != PH_NULL_I64 &&
	    (to < t->first_ts || from > t->last_ts))
		from = to = PH_NULL_I64;
	/* The trace engine takes a process given as digits for its pid. */
	if (pid > 0)
		snprintf(process, sizeof(process), "%" PRId64, pid);
	ph_jw_init(&jw, out);
	rc = ph_trace_ask(t, process[0] ? process : NULL, from, to, NULL, 0,
			  NULL, &jw, why, size);
	if (rc == PH_ENOENT && process[0]) {
		/* Recorded elsewhere, or before this app ran: ask about the
		 * busiest process, and say so beside the answer. */
		ph_buf_reset(out);
		ph_jw_init(&jw, out);
		rc = ph_trace_ask(t, NULL, from, to, NULL, 0, NULL, &jw, why,
				  size);
		if (!rc)
			snprintf(why, size,
				 "the app's process (pid %s) is not in this "
				 "trace: the answers are about its busiest "
				 "process",
				 process);
	} else if (!rc) {
		why[0] = '\0';
	}
	if (!rc && ph_jw_finish(&jw)) {
		snprintf(why, size, "the trace's answer did not fit");
		rc = PH_ETOOBIG;
	}
out:
	ph_trace_free(t);
	return rc;
}
