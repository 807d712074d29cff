/* SPDX-License-Identifier: Apache-2.0 */
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

/*
 * The listed trace `id` loaded (a partial load is kept: its answers say
 * so), or NULL with *rc and why saying what went wrong.
 */
static struct ph_trace *load_listed(const char *dir, const char *id, int *rc,
				    char *why, size_t size)
{
	struct ph_trace *t;
	char path[4400];

	if (!ph_ui_trace_listed(dir, id)) {
		snprintf(why, size, "no trace '%s' in .porthole/traces", id);
		*rc = PH_ENOENT;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		*rc = PH_ENOMEM;
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, id);
	*rc = ph_trace_init(t);
	if (!*rc)
		*rc = ph_trace_load_file(t, path);
	if (*rc && *rc != PH_ECORRUPT) {
		snprintf(why, size, "trace '%s' could not be read (%s)", id,
			 ph_strerror(*rc));
		ph_trace_free(t);
		return NULL;
	}
	return t;
}

int ph_ui_trace_ask(const char *dir, const char *id, struct ph_window w,
		    int64_t pid, struct ph_buf *out, char *why, size_t size)
{
	struct ph_trace *t;
	struct ph_jw jw;
	char process[32] = "";
	int64_t from, to;
	int rc;

	t = load_listed(dir, id, &rc, why, size);
	if (!t)
		return rc;
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
				 "trace%s: the answers are about its busiest "
				 "process",
				 process,
				 ph_trace_lost_any(t) ?
					 ", which lost events (the ring "
					 "buffer overran: the app may have "
					 "run in a hole)" :
					 "");
	} else if (!rc) {
		why[0] = '\0';
	}
	if (!rc && ph_jw_finish(&jw)) {
		snprintf(why, size, "the trace's answer did not fit");
		rc = PH_ETOOBIG;
	}
	ph_trace_free(t);
	return rc;
}

/*
 * The system under the app: its main thread's scheduling states and the
 * CPUs' frequencies over a window, from a trace's thread_state, sched and
 * counter tables, on the app's clock (MONOTONIC ms, as fractions).
 *
 *   {"trace","pid","thread":{"tid","name"}|null,"window":{"from","to"},
 *    "states":[[fromMs, durMs, "class", "state", cpu, ranTid, "ranName"]],
 *    "freq":[{"cpu",points:[[ms, kHz]]}], "truncated", "note"?}
 *
 * class is running, runnable, sleeping or io (uninterruptible sleep: in
 * I/O when io_wait says so, else blocked); for a runnable stretch of 1 ms
 * or more, ranTid and ranName name the thread that held the CPU the main
 * thread ran on next for the longest part of it (the "while CPU 1 ran
 * kworker" of a late frame), else 0 and "".
 */
#define SYS_MAX_STATES 50000
#define SYS_MAX_POINTS 20000
#define SYS_SCAN_BACK  200000 /* sched rows looked back for the CPU's owner */

static const char *state_class(const char *s, int32_t io_wait)
{
	if (!s)
		return "sleeping";
	if (!strcmp(s, "Running"))
		return "running";
	if (s[0] == 'R')
		return "runnable";
	if (s[0] == 'D')
		return io_wait == 0 ? "blocked" : "io";
	return "sleeping";
}

/* First sched row with ts >= ns (the table is in time order). */
static size_t sched_lower(struct ph_table *sc, int64_t ns)
{
	const int64_t *ts = ph_col_i64(sc, SC_TS);
	size_t lo = 0, hi = sc->rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ts[mid] < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The utid that ran longest on cpu within [a, b), or -1. */
static int64_t cpu_owner(struct ph_trace *t, int32_t cpu, int64_t a, int64_t b)
{
	struct ph_table *sc = &t->tables[PH_T_SCHED];
	const int64_t *ts = ph_col_i64(sc, SC_TS),
		      *dur = ph_col_i64(sc, SC_DUR);
	const int32_t *c = ph_col_i32(sc, SC_CPU), *u = ph_col_i32(sc, SC_UTID);
	size_t i = sched_lower(sc, a), scanned = 0;
	int64_t best = -1, best_ns = 0;

	/* Back to the slice that held the CPU at a. */
	while (i > 0 && scanned++ < SYS_SCAN_BACK) {
		i--;
		if (c[i] == cpu)
			break;
	}
	for (; i < sc->rows && ts[i] < b; i++) {
		int64_t end = dur[i] < 0 ? t->last_ts : ts[i] + dur[i];
		int64_t from = ts[i] > a ? ts[i] : a, to = end < b ? end : b;

		if (c[i] != cpu || to <= from)
			continue;
		if (to - from > best_ns) {
			best_ns = to - from;
			best = u[i];
		}
	}
	return best;
}

static int64_t main_utid(struct ph_trace *t, int64_t pid)
{
	struct ph_table *th = &t->tables[PH_T_THREAD];
	const int64_t *tid = ph_col_i64(th, TH_TID);
	int64_t found = -1;

	/* The newest thread with that tid: a tid can be reused. */
	for (size_t i = 0; pid > 0 && i < th->rows; i++)
		if (tid[i] == pid)
			found = (int64_t)i;
	return found;
}

static void write_states(struct ph_trace *t, int64_t utid, int64_t from,
			 int64_t to, double off, struct ph_jw *jw,
			 bool *truncated)
{
	struct ph_table *tb = &t->tables[PH_T_TSTATE];
	struct ph_table *th = &t->tables[PH_T_THREAD];
	const int64_t *ts = ph_col_i64(tb, TS_TS),
		      *dur = ph_col_i64(tb, TS_DUR);
	const int32_t *u = ph_col_i32(tb, TS_UTID),
		      *cpu = ph_col_i32(tb, TS_CPU);
	const int32_t *io = ph_col_i32(tb, TS_IOWAIT);
	const uint32_t *st = ph_col_str(tb, TS_STATE);
	size_t n = 0;

	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < tb->rows; i++) {
		int64_t end = dur[i] < 0 ? t->last_ts : ts[i] + dur[i];
		const char *s = ph_trace_str(t, st[i]);
		const char *cls;
		int64_t owner = -1;
		int32_t next_cpu = PH_NULL_I32;

		if (u[i] != utid || end <= from || ts[i] >= to)
			continue;
		if (n++ >= SYS_MAX_STATES) {
			*truncated = true;
			break;
		}
		cls = state_class(s, io[i]);
		if (!strcmp(cls, "runnable") && end - ts[i] >= 1000000) {
			/* The CPU it ran on next: its next Running stretch. */
			for (size_t k = i + 1; k < tb->rows; k++)
				if (u[k] == utid && cpu[k] != PH_NULL_I32) {
					next_cpu = cpu[k];
					break;
				}
			if (next_cpu != PH_NULL_I32)
				owner = cpu_owner(t, next_cpu, ts[i], end);
		}
		ph_jw_arr_begin(jw);
		ph_jw_double(jw, ((double)ts[i] + off) / 1e6);
		ph_jw_double(jw, (double)(end - ts[i]) / 1e6);
		ph_jw_str(jw, cls);
		ph_jw_str(jw, s ? s : "?");
		ph_jw_int(jw, cpu[i] != PH_NULL_I32   ? cpu[i] :
			      next_cpu != PH_NULL_I32 ? next_cpu :
							-1);
		if (owner >= 0 && (size_t)owner < th->rows) {
			const char *nm =
				ph_trace_str(t, ph_col_str(th, TH_NAME)[owner]);

			ph_jw_int(jw, ph_col_i64(th, TH_TID)[owner]);
			ph_jw_str(jw, nm ? nm : "?");
		} else {
			ph_jw_int(jw, 0);
			ph_jw_str(jw, "");
		}
		ph_jw_arr_end(jw);
	}
	ph_jw_arr_end(jw);
}

static void write_freq(struct ph_trace *t, int64_t from, int64_t to, double off,
		       struct ph_jw *jw, bool *truncated)
{
	struct ph_table *tr = &t->tables[PH_T_TRACK];
	struct ph_table *ct = &t->tables[PH_T_COUNTER];
	const int64_t *ts = ph_col_i64(ct, CT_TS),
		      *trk = ph_col_i64(ct, CT_TRACK);
	const double *v = ph_col_f64(ct, CT_VALUE);

	ph_jw_arr_begin(jw);
	for (size_t k = 0; k < tr->rows; k++) {
		const char *nm = ph_trace_str(t, ph_col_str(tr, TR_NAME)[k]);
		int64_t cpu = ph_col_i64(tr, TR_CPU)[k];
		size_t n = 0;
		int64_t before = -1; /* the value in force at from */

		if (!nm || strcmp(nm, "cpufreq") || cpu == PH_NULL_I64)
			continue;
		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "cpu", cpu);
		ph_jw_key(jw, "points");
		ph_jw_arr_begin(jw);
		for (size_t i = 0; i < ct->rows && ts[i] < to; i++) {
			if (trk[i] != (int64_t)k)
				continue;
			if (ts[i] < from) {
				before = (int64_t)i;
				continue;
			}
			if (before >= 0) {
				ph_jw_arr_begin(jw);
				ph_jw_double(jw, ((double)from + off) / 1e6);
				ph_jw_double(jw, v[before]);
				ph_jw_arr_end(jw);
				before = -1;
			}
			if (n++ >= SYS_MAX_POINTS) {
				*truncated = true;
				break;
			}
			ph_jw_arr_begin(jw);
			ph_jw_double(jw, ((double)ts[i] + off) / 1e6);
			ph_jw_double(jw, v[i]);
			ph_jw_arr_end(jw);
		}
		if (before >= 0) {
			ph_jw_arr_begin(jw);
			ph_jw_double(jw, ((double)from + off) / 1e6);
			ph_jw_double(jw, v[before]);
			ph_jw_arr_end(jw);
		}
		ph_jw_arr_end(jw);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
}

int ph_ui_trace_system(const char *dir, const char *id, struct ph_window w,
		       int64_t pid, struct ph_buf *out, char *why, size_t size)
{
	struct ph_trace *t;
	struct ph_jw jw;
	int64_t from, to, utid, mono;
	double off;
	bool truncated = false;
	int rc;

	t = load_listed(dir, id, &rc, why, size);
	if (!t)
		return rc;
	rc = 0;
	/* ns on the trace clock + off = ns on MONOTONIC, the app's clock. */
	mono = t->trace_clock == PH_CLK_MONOTONIC ?
		       t->first_ts :
		       ph_trace_to_clock(t, t->first_ts, PH_CLK_MONOTONIC);
	if (!t->trace_clock || mono == PH_NULL_I64) {
		snprintf(why, size,
			 "trace '%s': its clock (%s) does not map onto the "
			 "app's uptime clock",
			 id, t->clock_name ? t->clock_name : "unknown");
		rc = PH_EINVAL;
		goto out;
	}
	off = (double)(mono - t->first_ts);
	from = to_trace_ns(t, w.from);
	to = to_trace_ns(t, w.to);
	if (from == PH_NULL_I64 || from < t->first_ts)
		from = t->first_ts;
	if (to == PH_NULL_I64 || to > t->last_ts)
		to = t->last_ts;
	utid = main_utid(t, pid);
	ph_jw_init(&jw, out);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "trace", id);
	ph_jw_kv_int(&jw, "pid", pid);
	ph_jw_key(&jw, "window");
	ph_jw_obj_begin(&jw);
	ph_jw_kv_double(&jw, "from", ((double)from + off) / 1e6);
	ph_jw_kv_double(&jw, "to", ((double)to + off) / 1e6);
	ph_jw_obj_end(&jw);
	ph_jw_key(&jw, "thread");
	if (utid >= 0) {
		struct ph_table *th = &t->tables[PH_T_THREAD];
		const char *nm = ph_trace_str(t, ph_col_str(th, TH_NAME)[utid]);

		ph_jw_obj_begin(&jw);
		ph_jw_kv_int(&jw, "tid", ph_col_i64(th, TH_TID)[utid]);
		ph_jw_kv_str(&jw, "name", nm ? nm : "");
		ph_jw_obj_end(&jw);
	} else {
		ph_jw_null(&jw);
		ph_jw_kv_str(&jw, "note",
			     "the app's main thread is not in this trace "
			     "(recorded elsewhere, or before this run)");
	}
	ph_jw_key(&jw, "states");
	if (utid >= 0)
		write_states(t, utid, from, to, off, &jw, &truncated);
	else {
		ph_jw_arr_begin(&jw);
		ph_jw_arr_end(&jw);
	}
	ph_jw_key(&jw, "freq");
	write_freq(t, from, to, off, &jw, &truncated);
	ph_jw_kv_bool(&jw, "truncated", truncated);
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw)) {
		snprintf(why, size, "the trace's answer did not fit");
		rc = PH_ETOOBIG;
	}
out:
	ph_trace_free(t);
	return rc;
}
