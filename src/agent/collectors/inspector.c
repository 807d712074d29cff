/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inspector.c: db_tables, db_rows and db_query, over a connection of our
 * own that can only read.
 *
 * Every request opens the database file with SQLITE_OPEN_READONLY (never
 * the app's connection, which is not ours to use from this thread, and
 * which is traced: looking must not show up as the app's queries), sets an
 * authorizer that allows reading and nothing else, and closes it after.
 * db_query takes exactly one statement: SELECT, WITH or PRAGMA without an
 * assignment; anything else is refused with the reason before it runs,
 * and the authorizer and read-only open flags refuse it again if it were
 * to get through.
 *
 * A query may run for as long as the SQL asks (a recursive CTE never
 * ends), so none runs on the writer thread: each runs on the inspector's
 * own thread ("porthole-db", started at the first request), one at a
 * time, while the writer goes on fanning events out.  SQLite's progress
 * handler ends it at its deadline (params.timeoutMs) or when the agent
 * stops, and its busy handler waits out an app's commit until then; an
 * answer holds at most ROWS_CAP rows and ANSWER_CAP bytes of them; an
 * error met while rows are read is the answer's error.
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_log.h"
#include "../platform.h"

#include <dlfcn.h>
#include <sqlite3.h>
#include <unistd.h>

#define MAX_DBS	 8
#define CELL_CAP 256
#define ROWS_CAP 500 /* db_query; db_rows takes up to 1000 */
/* The rows of one answer, encoded: a page must stay small. */
#define ANSWER_CAP ((size_t)1 << 20)
/*
 * Deadlines: the default, under the 5 s our host waits for an answer so
 * that the host shows why, and the most a request may ask for.
 */
#define TIMEOUT_MS     3000
#define TIMEOUT_MAX_MS 60000
/* VM steps between two looks at the clock (about 10-50 us of work). */
#define PROGRESS_STEPS 1000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char databases[MAX_DBS][256];
static int n_databases;

static struct {
	int (*open_v2)(const char *, sqlite3 **, int, const char *);
	int (*close_v2)(sqlite3 *);
	int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **,
			  const char **);
	int (*step)(sqlite3_stmt *);
	int (*finalize)(sqlite3_stmt *);
	int (*column_count)(sqlite3_stmt *);
	const char *(*column_name)(sqlite3_stmt *, int);
	const char *(*column_decltype)(sqlite3_stmt *, int);
	int (*column_type)(sqlite3_stmt *, int);
	const unsigned char *(*column_text)(sqlite3_stmt *, int);
	int (*column_bytes)(sqlite3_stmt *, int);
	sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
	int (*stmt_readonly)(sqlite3_stmt *);
	int (*busy_handler)(sqlite3 *, int (*)(void *, int), void *);
	int (*set_authorizer)(sqlite3 *,
			      int (*)(void *, int, const char *, const char *,
				      const char *, const char *),
			      void *);
	const char *(*errmsg)(sqlite3 *);
	int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
	void (*progress_handler)(sqlite3 *, int, int (*)(void *), void *);
	bool ok;
} fn;

/*
 * What ends a running statement: its deadline passed, or the agent
 * stops.  Read by the progress handler on the inspector's thread.
 */
static int64_t deadline_ns;   /* the inspector thread's alone */
static int timeout_ms;	      /* the request's, for the message */
static _Atomic bool stopping; /* set by ph_inspector_stop */
static bool expired;	      /* the last statement ran out of time */

/* The longest deadline a request gets (ph_inspector_cap_timeout). */
static _Atomic int timeout_cap_ms = TIMEOUT_MAX_MS;

static bool load(void)
{
	if (fn.ok)
		return true;
#define LOAD(field, name) *(void **)&fn.field = dlsym(RTLD_DEFAULT, name)
	LOAD(open_v2, "sqlite3_open_v2");
	LOAD(close_v2, "sqlite3_close_v2");
	LOAD(prepare_v2, "sqlite3_prepare_v2");
	LOAD(step, "sqlite3_step");
	LOAD(finalize, "sqlite3_finalize");
	LOAD(column_count, "sqlite3_column_count");
	LOAD(column_name, "sqlite3_column_name");
	LOAD(column_decltype, "sqlite3_column_decltype");
	LOAD(column_type, "sqlite3_column_type");
	LOAD(column_text, "sqlite3_column_text");
	LOAD(column_bytes, "sqlite3_column_bytes");
	LOAD(column_int64, "sqlite3_column_int64");
	LOAD(stmt_readonly, "sqlite3_stmt_readonly");
	LOAD(set_authorizer, "sqlite3_set_authorizer");
	LOAD(busy_handler, "sqlite3_busy_handler");
	LOAD(errmsg, "sqlite3_errmsg");
	LOAD(bind_int64, "sqlite3_bind_int64");
	LOAD(progress_handler, "sqlite3_progress_handler");
#undef LOAD
	fn.ok = fn.open_v2 && fn.close_v2 && fn.prepare_v2 && fn.step &&
		fn.finalize && fn.column_count && fn.column_name &&
		fn.column_decltype && fn.column_type && fn.column_text &&
		fn.column_bytes && fn.column_int64 && fn.stmt_readonly &&
		fn.set_authorizer && fn.busy_handler && fn.errmsg &&
		fn.bind_int64 && fn.progress_handler;
	return fn.ok;
}

/* Non-zero ends the statement with SQLITE_INTERRUPT. */
static int progress(void *ctx)
{
	(void)ctx;
	if (atomic_load(&stopping) || ph_clock_mono_ns() >= deadline_ns) {
		expired = true;
		return 1;
	}
	return 0;
}

/*
 * The app's connection is committing (its lock keeps readers out for the
 * moment): wait for it, a few ms at a time, until the request's deadline.
 * Without this a look at a busy app's database failed with "database is
 * locked" whenever it met a commit.
 */
static int busy(void *ctx, int tries)
{
	(void)ctx;
	(void)tries;
	if (atomic_load(&stopping) || ph_clock_mono_ns() >= deadline_ns)
		return 0;
	usleep(2000);
	return 1;
}

/* Why a statement failed while it ran: the deadline, or SQLite's word. */
static const char *step_error(sqlite3 *db)
{
	static char msg[300];

	if (atomic_load(&stopping))
		return "ECANCELED: the agent is stopping";
	if (expired)
		snprintf(msg, sizeof(msg),
			 "ETIMEDOUT: the query ran past its deadline of %d ms "
			 "(params.timeoutMs, at most %d)",
			 timeout_ms, TIMEOUT_MAX_MS);
	else
		snprintf(msg, sizeof(msg), "EIO: %s", fn.errmsg(db));
	return msg;
}

void ph_inspector_cap_timeout(int ms)
{
	bool capped = ms > 0 && ms < TIMEOUT_MAX_MS;

	atomic_store(&timeout_cap_ms, capped ? ms : TIMEOUT_MAX_MS);
}

void ph_inspector_add_database(const char *path)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n_databases; i++)
		if (!strcmp(databases[i], path))
			goto out;
	if (n_databases < MAX_DBS)
		snprintf(databases[n_databases++], sizeof(databases[0]), "%s",
			 path);
out:
	pthread_mutex_unlock(&mu);
}

/* Reading only: every action a SELECT or a read-only PRAGMA needs. */
static int authorize(void *ctx, int action, const char *a, const char *b,
		     const char *c, const char *d)
{
	(void)ctx;
	(void)c;
	(void)d;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_FUNCTION:
	case SQLITE_RECURSIVE: return SQLITE_OK;
	case SQLITE_PRAGMA: return b ? SQLITE_DENY : SQLITE_OK; /* no value */
	default: (void)a; return SQLITE_DENY;
	}
}

static const char *open_db(const struct ph_json *params, sqlite3 **db,
			   char *path, size_t size)
{
	const struct ph_json *want = ph_json_get(params, "database");
	bool found = false;

	if (!load())
		return "EUNSUPP: SQLite is not loaded in this process";
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n_databases && !found; i++) {
		const char *base = strrchr(databases[i], '/');

		if (!ph_json_is(want, PH_JSON_STRING) ||
		    ph_json_streq(want, databases[i]) ||
		    (base && ph_json_streq(want, base + 1))) {
			/* the bound: gcc for arm64 sizes an entry as the table
			 */
			snprintf(path, size, "%.*s",
				 (int)sizeof(databases[0]) - 1, databases[i]);
			found = true;
		}
	}
	pthread_mutex_unlock(&mu);
	if (!found)
		return ph_json_is(want, PH_JSON_STRING) ?
			       "ENOENT: no such database (see db_tables)" :
			       "ENOENT: the app has attached no database "
			       "(porthole_sqlite_attach)";
	if (fn.open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fn.close_v2(*db);
		return "EIO: could not open the database read-only";
	}
	fn.set_authorizer(*db, authorize, NULL);
	fn.busy_handler(*db, busy, NULL);
	fn.progress_handler(*db, PROGRESS_STEPS, progress, NULL);
	return NULL;
}

static void databases_json(struct ph_jw *w)
{
	ph_jw_key(w, "databases");
	ph_jw_arr_begin(w);
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n_databases; i++)
		ph_jw_str(w, databases[i]);
	pthread_mutex_unlock(&mu);
	ph_jw_arr_end(w);
}

static void cell(struct ph_jw *w, sqlite3_stmt *st, int i)
{
	int type = fn.column_type(st, i);
	char buf[48];

	if (type == SQLITE_NULL) {
		ph_jw_null(w);
	} else if (type == SQLITE_BLOB) {
		snprintf(buf, sizeof(buf), "<blob %d bytes>",
			 fn.column_bytes(st, i));
		ph_jw_str(w, buf);
	} else {
		const char *t = (const char *)fn.column_text(st, i);
		int n = fn.column_bytes(st, i);

		/* Cells are cut: a page of rows must stay small. */
		ph_jw_strn(w, t ? t : "",
			   (size_t)(n < CELL_CAP ? n : CELL_CAP));
	}
}

/*
 * Writes columns and up to `limit` rows (and ANSWER_CAP bytes of them);
 * returns SQLITE_OK, or the error code a step returned.
 */
static int page(struct ph_jw *w, sqlite3_stmt *st, int64_t limit,
		bool *truncated)
{
	int cols = fn.column_count(st);
	int64_t n = 0;
	size_t start;
	int rc;

	ph_jw_key(w, "columns");
	ph_jw_arr_begin(w);
	for (int i = 0; i < cols; i++) {
		const char *type = fn.column_decltype(st, i);

		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "name", fn.column_name(st, i));
		ph_jw_kv_str(w, "type", type ? type : "");
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_key(w, "rows");
	ph_jw_arr_begin(w);
	start = w->out->len;
	while ((rc = fn.step(st)) == SQLITE_ROW) {
		if (n == limit || w->out->len - start > ANSWER_CAP) {
			*truncated = true;
			break;
		}
		ph_jw_arr_begin(w);
		for (int i = 0; i < cols; i++)
			cell(w, st, i);
		ph_jw_arr_end(w);
		n++;
	}
	ph_jw_arr_end(w);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * "<head>"name"<tail>", name quoted as an SQL identifier (each of its
 * double quotes doubled: a"b is "a""b"), in a string the caller frees;
 * NULL when out of memory.  SQLite does not bound a name's length, so
 * neither does this.
 */
static char *around_ident(const char *head, const char *name, const char *tail)
{
	size_t quotes = 0, hl = strlen(head), tl = strlen(tail), at = hl;
	char *sql;

	for (const char *q = name; (q = strchr(q, '"')); q++)
		quotes++;
	sql = malloc(hl + strlen(name) + quotes + 2 + tl + 1);
	if (!sql)
		return NULL;
	memcpy(sql, head, hl);
	sql[at++] = '"';
	for (const char *c = name; *c; c++) {
		if (*c == '"')
			sql[at++] = '"';
		sql[at++] = *c;
	}
	sql[at++] = '"';
	memcpy(sql + at, tail, tl + 1);
	return sql;
}

static int64_t count_rows(sqlite3 *db, const char *table)
{
	char *sql = around_ident("SELECT count(*) FROM ", table, "");
	sqlite3_stmt *st;
	int64_t n = -1;

	if (sql && fn.prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (fn.step(st) == SQLITE_ROW)
			n = fn.column_int64(st, 0);
		fn.finalize(st);
	}
	free(sql);
	return n;
}

/* A table name is only ever one that sqlite_master lists. */
static bool table_exists(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	bool found = false;

	if (fn.prepare_v2(db,
			  "SELECT name FROM sqlite_master WHERE type IN "
			  "('table','view')",
			  -1, &st, NULL) != SQLITE_OK)
		return false;
	while (!found && fn.step(st) == SQLITE_ROW)
		found = !strcmp((const char *)fn.column_text(st, 0), name);
	fn.finalize(st);
	return found;
}

static const char *db_tables(const struct ph_json *params, struct ph_jw *w)
{
	char path[256];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	const char *err = open_db(params, &db, path, sizeof(path));

	if (err)
		return err;
	if (fn.prepare_v2(db,
			  "SELECT name FROM sqlite_master WHERE type='table' "
			  "AND name NOT LIKE 'sqlite_%' ORDER BY name",
			  -1, &st, NULL) != SQLITE_OK)
		st = NULL;
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "database", path);
	databases_json(w);
	ph_jw_key(w, "tables");
	ph_jw_arr_begin(w);
	/* each counted as the list is read: one connection runs both */
	while (st && fn.step(st) == SQLITE_ROW) {
		const char *name = (const char *)fn.column_text(st, 0);

		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "name", name ? name : "");
		/* -1: not counted by the deadline, and still an answer */
		ph_jw_kv_int(w, "rows", name ? count_rows(db, name) : -1);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
	if (st)
		fn.finalize(st);
	fn.close_v2(db);
	return NULL;
}

static const char *db_rows(const struct ph_json *params, struct ph_jw *w)
{
	const struct ph_json *t = ph_json_get(params, "table");
	int64_t limit = 100, offset = 0, v;
	char path[256], *table = NULL, *sql = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	bool truncated = false;
	const char *err;

	if (!ph_json_is(t, PH_JSON_STRING) || !t->n)
		return "EINVAL: table is required";
	/* no table's name holds a NUL (strcmp would read "a\0b" as "a") */
	if (memchr(t->u.s, '\0', t->n))
		return "ENOENT: no such table";
	if (ph_json_as_int(ph_json_get(params, "limit"), &v) && v > 0)
		limit = v < 1000 ? v : 1000;
	if (ph_json_as_int(ph_json_get(params, "offset"), &v) && v >= 0)
		offset = v;
	err = open_db(params, &db, path, sizeof(path));
	if (err)
		return err;
	table = strndup(t->u.s, t->n);
	if (!table || !table_exists(db, table))
		err = table ? "ENOENT: no such table" : "ENOMEM: out of memory";
	else if (!(sql = around_ident("SELECT * FROM ", table,
				      " LIMIT ? OFFSET ?")))
		err = "ENOMEM: out of memory";
	else if (fn.prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		err = "EIO: could not read the table";
	if (!err) {
		fn.bind_int64(st, 1, limit + 1);
		fn.bind_int64(st, 2, offset);
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "table", table);
		err = page(w, st, limit, &truncated) ? step_error(db) : NULL;
		fn.finalize(st);
		/* -1 when it could not be counted by the deadline */
		ph_jw_kv_int(w, "total", err ? -1 : count_rows(db, table));
		ph_jw_kv_int(w, "offset", offset);
		ph_jw_kv_bool(w, "truncated", truncated);
		ph_jw_obj_end(w);
	}
	free(sql);
	free(table);
	fn.close_v2(db);
	return err;
}

/* The reason a text is not one read-only statement, or NULL. */
static const char *refuse(const char *sql)
{
	const char *p = sql;

	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r' || *p == '(')
		p++;
	if (!strncasecmp(p, "select", 6) || !strncasecmp(p, "with", 4))
		return NULL;
	if (!strncasecmp(p, "pragma", 6))
		return strchr(p, '=') ?
			       "refused: a PRAGMA that assigns a value "
			       "writes" :
			       NULL;
	return "refused: only SELECT, WITH and PRAGMA (without =) are allowed";
}

static const char *db_query(const struct ph_json *params, struct ph_jw *w)
{
	const struct ph_json *q = ph_json_get(params, "sql");
	char path[256], *sql;
	const char *err, *tail = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	bool truncated = false;
	static char msg[300];

	if (!ph_json_is(q, PH_JSON_STRING) || !q->n)
		return "EINVAL: sql is required";
	sql = strndup(q->u.s, q->n);
	if (!sql)
		return "ENOMEM";
	err = refuse(sql);
	if (err)
		goto out;
	err = open_db(params, &db, path, sizeof(path));
	if (err)
		goto out;
	if (fn.prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK) {
		snprintf(msg, sizeof(msg), "refused: %s", fn.errmsg(db));
		err = msg;
		goto out;
	}
	while (tail && (*tail == ' ' || *tail == ';' || *tail == '\n' ||
			*tail == '\t' || *tail == '\r'))
		tail++;
	if (tail && *tail) {
		err = "refused: exactly one statement is allowed";
		goto out;
	}
	if (!st || !fn.stmt_readonly(st)) {
		err = "refused: the statement would write";
		goto out;
	}
	ph_jw_obj_begin(w);
	if (page(w, st, ROWS_CAP, &truncated))
		err = step_error(db);
	ph_jw_kv_int(w, "total", -1);
	ph_jw_kv_int(w, "offset", 0);
	ph_jw_kv_bool(w, "truncated", truncated);
	ph_jw_obj_end(w);
out:
	if (st)
		fn.finalize(st);
	if (db)
		fn.close_v2(db);
	free(sql);
	return err;
}

static const char *run_method(int which, const struct ph_json *params,
			      struct ph_jw *w)
{
	int64_t t;

	timeout_ms = TIMEOUT_MS;
	if (ph_json_as_int(ph_json_get(params, "timeoutMs"), &t)) {
		if (t <= 0)
			return "EINVAL: timeoutMs must be positive";
		timeout_ms = t < TIMEOUT_MAX_MS ? (int)t : TIMEOUT_MAX_MS;
	}
	if (timeout_ms > atomic_load(&timeout_cap_ms))
		timeout_ms = atomic_load(&timeout_cap_ms);
	expired = false;
	deadline_ns = ph_clock_mono_ns() + (int64_t)timeout_ms * 1000000;
	switch (which) {
	case PH_DB_TABLES: return db_tables(params, w);
	case PH_DB_ROWS: return db_rows(params, w);
	default: return db_query(params, w);
	}
}

/*
 * The one request handed over and its answer.  The writer submits only
 * while the inspector is idle and takes the answer once it is done; the
 * mutex guards the hand-overs, not the work.
 */
enum job_state { JOB_IDLE, JOB_QUEUED, JOB_RUNNING, JOB_DONE };

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum job_state state;
	bool started; /* the thread exists (joined by ph_inspector_stop) */
	pthread_t thread;
	char *line; /* the request, the inspector's while queued/running */
	size_t len;
	int which;
	int64_t id;
	uint64_t conn;
	int wake_fd; /* the writer's, written when an answer is ready */
	struct ph_buf answer; /* the whole response line */
} job = { .mu = PTHREAD_MUTEX_INITIALIZER,
	  .cv = PTHREAD_COND_INITIALIZER,
	  .answer = PH_BUF_INIT(PH_INSPECTOR_ANSWER_MAX) };

static void answer_error(struct ph_buf *out, int64_t id, const char *msg)
{
	struct ph_jw w;

	ph_buf_reset(out);
	ph_jw_init(&w, out);
	ph_jw_obj_begin(&w);
	ph_jw_kv_int(&w, "id", id);
	ph_jw_kv_bool(&w, "ok", false);
	ph_jw_kv_str(&w, "error", msg);
	ph_jw_obj_end(&w);
	if (ph_jw_finish(&w) || ph_buf_addch(out, '\n'))
		ph_buf_reset(out);
}

/* Answers the request in job.line into job.answer (inspector thread). */
static void answer(void)
{
	struct ph_arena arena;
	struct ph_json *req = NULL;
	const char *fail = NULL;
	struct ph_jw w;

	ph_arena_init(&arena, 0, 4 << 20);
	ph_buf_reset(&job.answer);
	if (ph_json_parse(&arena, job.line, job.len, &req, NULL)) {
		answer_error(&job.answer, job.id, "ENOMEM");
		goto out;
	}
	ph_jw_init(&w, &job.answer);
	ph_jw_obj_begin(&w);
	ph_jw_kv_int(&w, "id", job.id);
	ph_jw_kv_bool(&w, "ok", true);
	ph_jw_key(&w, "result");
	fail = run_method(job.which, ph_json_get(req, "params"), &w);
	ph_jw_obj_end(&w);
	if (fail)
		answer_error(&job.answer, job.id, fail);
	else if (ph_jw_finish(&w) || ph_buf_addch(&job.answer, '\n'))
		answer_error(&job.answer, job.id,
			     "ETOOBIG: the answer is larger than the response "
			     "cap; ask for less (limit)");
out:
	ph_arena_release(&arena);
}

static void *inspector_main(void *arg)
{
	uint64_t one = 1;

	ph_exits_thread_altstack(); /* a crash here writes its record */
	(void)arg;
	ph_platform_name_self("porthole-db");
	pthread_mutex_lock(&job.mu);
	for (;;) {
		while (job.state != JOB_QUEUED && !atomic_load(&stopping))
			pthread_cond_wait(&job.cv, &job.mu);
		if (atomic_load(&stopping))
			break;
		job.state = JOB_RUNNING;
		pthread_mutex_unlock(&job.mu);
		answer();
		pthread_mutex_lock(&job.mu);
		free(job.line);
		job.line = NULL;
		job.state = JOB_DONE;
		/* wakes the writer from its idle sleep to send the answer */
		if (write(job.wake_fd, &one, sizeof(one)) < 0)
			ph_debug("could not wake the writer");
	}
	pthread_mutex_unlock(&job.mu);
	return NULL;
}

int ph_inspector_submit(int which, const char *line, size_t len, int64_t id,
			uint64_t conn, int wake_fd)
{
	int rc = 0;

	pthread_mutex_lock(&job.mu);
	if (job.state != JOB_IDLE) {
		rc = PH_EAGAIN;
		goto out;
	}
	if (!job.started) {
		atomic_store(&stopping, false);
		if (pthread_create(&job.thread, NULL, inspector_main, NULL)) {
			rc = PH_EIO;
			goto out;
		}
		job.started = true;
	}
	job.line = malloc(len + 1);
	if (!job.line) {
		rc = PH_ENOMEM;
		goto out;
	}
	memcpy(job.line, line, len);
	job.line[len] = '\0';
	job.len = len;
	job.which = which;
	job.id = id;
	job.conn = conn;
	job.wake_fd = wake_fd;
	job.state = JOB_QUEUED;
	pthread_cond_signal(&job.cv);
out:
	pthread_mutex_unlock(&job.mu);
	return rc;
}

bool ph_inspector_take(struct ph_buf *out, uint64_t *conn)
{
	bool done;

	pthread_mutex_lock(&job.mu);
	done = job.state == JOB_DONE;
	if (done) {
		ph_buf_reset(out);
		if (ph_buf_add(out, job.answer.buf, job.answer.len))
			ph_buf_reset(out);
		*conn = job.conn;
		job.state = JOB_IDLE;
		/* an answer is kept no longer than it is needed */
		ph_buf_release(&job.answer);
	}
	pthread_mutex_unlock(&job.mu);
	return done;
}

void ph_inspector_stop(void)
{
	pthread_mutex_lock(&job.mu);
	atomic_store(&stopping, true);
	pthread_cond_signal(&job.cv);
	pthread_mutex_unlock(&job.mu);
	if (job.started)
		pthread_join(job.thread, NULL);
	job.started = false;
	free(job.line);
	job.line = NULL;
	job.state = JOB_IDLE;
	ph_buf_release(&job.answer);
}
