/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sqlite.c: porthole_sqlite_attach() instruments a real connection through
 * SQLite's own trace hooks (sqlite3_trace_v2): every statement on it,
 * whether the app steps a prepared statement, calls sqlite3_exec or goes
 * through any wrapper, becomes db_start at its first step and db_end when
 * it finishes, with SQLite's nanosecond timing.
 *
 * Bound values are not readable through SQLite's API, so libporthole
 * notes them as the app binds them (sqlite_binds.c).  Where that cannot
 * answer (a statement bound through another library, a UTF-16 text, an
 * sqlite3_value) they are taken from sqlite3_expanded_sql(): walking the
 * statement's text and the expanded text side by side, each parameter in
 * the first (?, ?NNN, :name, @name, $name) faces the literal SQLite put in
 * its place in the second.  Either way values are cut to 64 chars, blobs
 * only sized ("<blob N bytes>"), NULL is null.  PORTHOLE_NO_BIND_ARGS
 * turns this off.
 *
 * A statement's error is not known yet when SQLite reports it finished
 * (the profile callback runs inside sqlite3_step, before the error is
 * recorded, or inside sqlite3_finalize/reset), so db_end waits:
 * libporthole also exports sqlite3_step, sqlite3_reset, sqlite3_finalize
 * and sqlite3_exec, which call SQLite's own (dlsym RTLD_NEXT, as curl.c
 * does for curl_easy_perform) and then send the waiting db_end with the
 * call's result code.  Statements run through a path that bypasses both (SQLite
 * called from another library) are sent at the thread's next statement, without
 * the error.
 *
 * SQLite's functions are looked up with dlsym in the app's process: the
 * agent does not link libsqlite3, so an app without SQLite loads none.
 * The work here runs on the app's thread inside SQLite's callback, like
 * SQLite's own tracing; only the fallback allocates (expanded_sql, with
 * SQLite's allocator).
 */
#include "ph_common.h"
#include "collectors.h"

#include <dlfcn.h>
#include <sqlite3.h>

#define CAP_SQL	 512
#define CAP_ARGS 512
#define CAP_ARG	 64
#define ACTIVE	 8

static struct {
	int (*trace_v2)(sqlite3 *, unsigned,
			int (*)(unsigned, void *, void *, void *), void *);
	const char *(*sql)(sqlite3_stmt *);
	char *(*expanded_sql)(sqlite3_stmt *);
	void (*free)(void *);
	int (*stmt_readonly)(sqlite3_stmt *);
	sqlite3 *(*db_handle)(sqlite3_stmt *);
	sqlite3_int64 (*last_insert_rowid)(sqlite3 *);
	int (*changes)(sqlite3 *);
	int (*extended_errcode)(sqlite3 *);
	const char *(*errmsg)(sqlite3 *);
	const char *(*errstr)(int);
	const char *(*db_filename)(sqlite3 *, const char *);
	int (*bind_parameter_count)(sqlite3_stmt *);
	int (*step)(sqlite3_stmt *);
	int (*reset)(sqlite3_stmt *);
	int (*finalize)(sqlite3_stmt *);
	int (*exec)(sqlite3 *, const char *,
		    int (*)(void *, int, char **, char **), void *, char **);
	bool ok;
} fn;

static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load_once(void)
{
#define LOAD(field, name) *(void **)&fn.field = dlsym(RTLD_DEFAULT, name)
	LOAD(trace_v2, "sqlite3_trace_v2");
	LOAD(sql, "sqlite3_sql");
	LOAD(expanded_sql, "sqlite3_expanded_sql");
	LOAD(free, "sqlite3_free");
	LOAD(stmt_readonly, "sqlite3_stmt_readonly");
	LOAD(db_handle, "sqlite3_db_handle");
	LOAD(last_insert_rowid, "sqlite3_last_insert_rowid");
	LOAD(changes, "sqlite3_changes");
	LOAD(extended_errcode, "sqlite3_extended_errcode");
	LOAD(errmsg, "sqlite3_errmsg");
	LOAD(errstr, "sqlite3_errstr");
	LOAD(db_filename, "sqlite3_db_filename");
	LOAD(bind_parameter_count, "sqlite3_bind_parameter_count");
	/* Ours shadow these two; find SQLite's own. */
	*(void **)&fn.step = dlsym(RTLD_NEXT, "sqlite3_step");
	*(void **)&fn.reset = dlsym(RTLD_NEXT, "sqlite3_reset");
	*(void **)&fn.finalize = dlsym(RTLD_NEXT, "sqlite3_finalize");
	*(void **)&fn.exec = dlsym(RTLD_NEXT, "sqlite3_exec");
#undef LOAD
	fn.ok = fn.trace_v2 && fn.sql && fn.expanded_sql && fn.free &&
		fn.stmt_readonly && fn.db_handle && fn.last_insert_rowid &&
		fn.changes && fn.extended_errcode && fn.errmsg && fn.errstr &&
		fn.db_filename && fn.bind_parameter_count && fn.step &&
		fn.reset && fn.finalize && fn.exec;
}

/* The library's entry points, looked up once, from any thread. */
static bool load(void)
{
	pthread_once(&loaded, load_once);
	return fn.ok;
}

/* Statements running on this thread (nested: a trigger, a UDF). */
struct active {
	sqlite3_stmt *stmt;
	sqlite3 *db;
	char id[24];
	int64_t rows;
	int64_t start_ns; /* CLOCK_MONOTONIC at its first step */
	int64_t ns;	  /* its time, set when SQLite says it finished */
	bool write;
	bool ended;	       /* finished; db_end waits for the result code */
	char sql[CAP_SQL + 1]; /* normalized: the stmt may be gone at the end */
	size_t sql_len;
};
static _Thread_local struct active active[ACTIVE];
static _Thread_local int n_active;
static _Atomic uint64_t expanded_calls;

/*
 * The attached connections, for sqlite_binds.c: only their statements'
 * values are noted.  Set once each, never cleared (a closed connection's
 * address reused by a new one reads as attached, which costs a copy per
 * bind and nothing else).
 */
#define ATTACHED 32
static sqlite3 *_Atomic attached[ATTACHED];

static void note_attached(sqlite3 *db)
{
	for (size_t i = 0; i < ATTACHED; i++) {
		sqlite3 *none = NULL;

		if (atomic_load(&attached[i]) == db ||
		    atomic_compare_exchange_strong(&attached[i], &none, db))
			return;
	}
}

bool ph_sqlite_attached(struct sqlite3_stmt *stmt)
{
	sqlite3 *db;

	if (!load() || !(db = fn.db_handle(stmt)))
		return false;
	for (size_t i = 0; i < ATTACHED; i++) {
		sqlite3 *a = atomic_load_explicit(&attached[i],
						  memory_order_acquire);

		if (!a)
			break;
		if (a == db)
			return true;
	}
	return false;
}

uint64_t ph_sqlite_expanded_calls(void)
{
	return atomic_load_explicit(&expanded_calls, memory_order_relaxed);
}

/* Whitespace runs become one space; trimmed. */
static size_t normalize(const char *sql, char *out, size_t cap)
{
	size_t n = 0;
	bool space = false;

	for (; *sql && n + 1 < cap; sql++) {
		if (*sql == ' ' || *sql == '\n' || *sql == '\t' ||
		    *sql == '\r') {
			space = n > 0;
			continue;
		}
		if (space && n + 2 < cap)
			out[n++] = ' ';
		space = false;
		out[n++] = *sql;
	}
	out[n] = '\0';
	return n;
}

static bool is_param_start(const char *p)
{
	return *p == '?' || ((*p == ':' || *p == '@' || *p == '$') &&
			     (p[1] == '_' || (p[1] >= 'a' && p[1] <= 'z') ||
			      (p[1] >= 'A' && p[1] <= 'Z')));
}

static const char *skip_param(const char *p)
{
	p++;
	while (*p == '_' || (*p >= '0' && *p <= '9') ||
	       (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
		p++;
	return p;
}

/* Appends one literal from the expanded text, as a display value. */
static const char *take_literal(const char *e, char *out, size_t *n, size_t cap)
{
	char val[CAP_ARG + 8];
	size_t v = 0, full = 0;

	if (*e == '\'') {
		for (e++; *e; e++) {
			if (*e == '\'' && e[1] == '\'')
				e++;
			else if (*e == '\'') {
				e++;
				break;
			}
			/* one past the cap, to see whether the cut splits a
			 * character */
			if (v <= CAP_ARG)
				val[v++] = *e;
			full++;
		}
		if (full > CAP_ARG) {
			v = CAP_ARG; /* val[v], the first byte left out, is read
				      */
			while (v > 0 && ((unsigned char)val[v] & 0xc0) == 0x80)
				v--;
			memcpy(val + v, "...", 3);
			v += 3;
		}
	} else if ((*e == 'x' || *e == 'X') && e[1] == '\'') {
		const char *q = strchr(e + 2, '\'');
		size_t bytes = q ? (size_t)(q - e - 2) / 2 : 0;

		v = (size_t)snprintf(val, sizeof(val), "<blob %zu bytes>",
				     bytes);
		e = q ? q + 1 : e + strlen(e);
	} else {
		/* NULL, or a number */
		while (*e && *e != ',' && *e != ')' && *e != ' ' && *e != ';' &&
		       v < sizeof(val) - 1)
			val[v++] = *e++;
	}
	if (*n && *n + 2 < cap) {
		out[(*n)++] = ',';
		out[(*n)++] = ' ';
	}
	for (size_t i = 0; i < v && *n + 1 < cap; i++)
		out[(*n)++] = val[i];
	out[*n] = '\0';
	return e;
}

/*
 * The bound values, joined with ", " (the v1 wire's quirk), by walking the
 * original and the expanded text together.  Returns false when they stop
 * matching (then no args are sent rather than wrong ones).
 */
static bool extract_args(const char *sql, const char *exp, char *out,
			 size_t cap)
{
	size_t n = 0;

	out[0] = '\0';
	while (*sql) {
		if (*sql == '\'' || *sql == '"') {
			/* A quoted region is the same in both texts. */
			char q = *sql;

			if (*exp != q)
				return false;
			sql++;
			exp++;
			while (*sql) {
				if (*sql != *exp)
					return false;
				if (*sql == q && sql[1] == q) {
					if (exp[1] != q)
						return false;
					sql += 2;
					exp += 2;
					continue;
				}
				sql++;
				exp++;
				if (sql[-1] == q)
					break;
			}
			continue;
		}
		if (is_param_start(sql)) {
			sql = skip_param(sql);
			exp = take_literal(exp, out, &n, cap);
			continue;
		}
		if (*sql != *exp)
			return false;
		sql++;
		exp++;
	}
	return true;
}

/* The db_end of a finished statement; rc is the call's result, or -1. */
static void emit_end(const struct active *a, int rc)
{
	sqlite3 *db = a->db;
	const char *norm = a->sql;
	size_t len = a->sql_len;
	bool failed = rc >= 0 && rc != SQLITE_OK && rc != SQLITE_ROW &&
		      rc != SQLITE_DONE;
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_DB_END, &pos);

	if (!r)
		return;
	ph_rec_str(r, PH_KEY_ID, a->id, sizeof(a->id));
	ph_rec_strn(r, PH_KEY_SQL, PH_F_STR, norm, len, CAP_SQL);
	ph_rec_str(r, PH_KEY_KIND, a->write ? "write" : "read", 8);
	ph_rec_qint(r, PH_KEY_ELAPSED_MS, a->ns / 1000000);
	/* whole: most statements take under a ms */
	ph_rec_int(r, PH_KEY_ELAPSED_NS, a->ns);
	if (failed) {
		int code = fn.extended_errcode(db);
		char err[256];

		snprintf(err, sizeof(err), "%s: %s (code %d)", fn.errstr(code),
			 fn.errmsg(db), code);
		ph_rec_str(r, PH_KEY_ERROR, err, 256);
		ph_rec_int(r, PH_KEY_ERROR_CODE, code);
	} else if (a->write && !strncasecmp(norm, "insert", 6)) {
		int64_t id = fn.last_insert_rowid(db);

		ph_rec_qint(r, PH_KEY_RESULT, id);
		ph_rec_int(r, PH_KEY_INSERT_ID, id);
		ph_rec_int(r, PH_KEY_CHANGES, fn.changes(db));
	} else if (a->write) {
		ph_rec_qint(r, PH_KEY_RESULT, fn.changes(db));
		ph_rec_int(r, PH_KEY_CHANGES, fn.changes(db));
	} else {
		ph_rec_int(r, PH_KEY_ROWS, a->rows);
	}
	ph_emit_commit(pos);
}

/* Sends every finished statement of this thread. */
static void flush_ended(int rc)
{
	for (int i = 0; i < n_active;) {
		if (!active[i].ended) {
			i++;
			continue;
		}
		emit_end(&active[i], rc);
		active[i] = active[--n_active];
	}
}

static int on_trace(unsigned type, void *ctx, void *p, void *x)
{
	sqlite3_stmt *stmt = p;
	struct active *a = NULL;
	uint64_t pos;
	struct ph_rec *r;

	(void)ctx;
	if (!ph_agent_live())
		return 0;
	for (int i = n_active - 1; i >= 0 && !a; i--)
		if (active[i].stmt == stmt)
			a = &active[i];
	if (type == SQLITE_TRACE_STMT) {
		const char *text = fn.sql(stmt);
		char norm[CAP_SQL + 1], args[CAP_ARGS + 1] = "";
		size_t len;

		if (!text || !strncmp((const char *)x, "--", 2))
			return 0; /* a trigger's sub-statement */
		flush_ended(-1);
		a = NULL; /* the flush may have moved entries */
		for (int i = n_active - 1; i >= 0 && !a; i--)
			if (active[i].stmt == stmt)
				a = &active[i];
		if (!a) {
			if (n_active == ACTIVE)
				return 0;
			a = &active[n_active++];
		}
		a->stmt = stmt;
		a->start_ns = ph_mono_ns_fast();
		a->rows = 0;
		a->ended = false;
		a->write = !fn.stmt_readonly(stmt);
		snprintf(a->id, sizeof(a->id), "db-%" PRIu64,
			 atomic_fetch_add(&ph_agent.next_id, 1));
		len = normalize(text, norm, sizeof(norm));
		memcpy(a->sql, norm, len + 1);
		a->sql_len = len;
		if (!(ph_agent.cfg.flags & PORTHOLE_NO_BIND_ARGS) &&
		    fn.bind_parameter_count(stmt) > 0 &&
		    !ph_sqlite_binds_args(stmt, text, args, sizeof(args))) {
			/* Values this process's bind calls did not show us
			 * (sqlite_binds.c): SQLite's text of the statement. */
			char *exp = fn.expanded_sql(stmt);

			atomic_fetch_add_explicit(&expanded_calls, 1,
						  memory_order_relaxed);
			if (exp && !extract_args(text, exp, args, sizeof(args)))
				args[0] = '\0';
			fn.free(exp);
		}
		r = ph_emit_begin(PH_KIND_DB_START, &pos);
		if (!r)
			return 0;
		ph_rec_str(r, PH_KEY_ID, a->id, sizeof(a->id));
		ph_rec_strn(r, PH_KEY_SQL, PH_F_STR, norm, len, CAP_SQL);
		ph_rec_str(r, PH_KEY_KIND, a->write ? "write" : "read", 8);
		if (args[0])
			ph_rec_str(r, PH_KEY_ARGS, args, CAP_ARGS);
		ph_emit_commit(pos);
		ph_trace_marker_begin(norm);
		return 0;
	}
	if (!a)
		return 0;
	if (type == SQLITE_TRACE_ROW) {
		a->rows++;
		return 0;
	}
	if (type == SQLITE_TRACE_PROFILE) {
		ph_trace_marker_end();
		a->db = fn.db_handle(stmt);
		/*
		 * Timed here, not taken from SQLite: its profile figure is
		 * ns counted in whole ms (the VFS's clock), so a fast query
		 * would read 0.
		 */
		(void)x;
		a->ns = ph_mono_ns_fast() - a->start_ns;
		a->ended = true;
		return 0;
	}
	return 0;
}

PORTHOLE_API enum porthole_status porthole_sqlite_attach(struct sqlite3 *db)
{
	const char *file;

	if (!db)
		return PORTHOLE_ERR_INVALID;
	if (!ph_agent_live())
		return PORTHOLE_ERR_NOT_DEBUG;
	if (!load())
		return PORTHOLE_ERR_INVALID;
	if (fn.trace_v2(db,
			SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE |
				SQLITE_TRACE_ROW,
			on_trace, NULL) != SQLITE_OK)
		return PORTHOLE_ERR_INVALID;
	note_attached(db);
	file = fn.db_filename(db, "main");
	if (file && *file)
		ph_inspector_add_database(file);
	ph_integration_wired("sqlite");
	return PORTHOLE_OK;
}

/*
 * SQLite's own entry points, shadowed so a finished statement's db_end
 * carries the call's result (see the top of this file).
 */
PORTHOLE_API int sqlite3_step(sqlite3_stmt *stmt)
{
	int rc;

	if (!load())
		return SQLITE_MISUSE;
	rc = fn.step(stmt);
	if (n_active)
		flush_ended(rc);
	return rc;
}

PORTHOLE_API int sqlite3_reset(sqlite3_stmt *stmt)
{
	int rc;

	if (!load())
		return SQLITE_MISUSE;
	rc = fn.reset(stmt);
	if (n_active)
		flush_ended(rc);
	return rc;
}

PORTHOLE_API int sqlite3_finalize(sqlite3_stmt *stmt)
{
	int rc;

	if (!load())
		return SQLITE_MISUSE;
	ph_sqlite_binds_forget(stmt); /* its address may be reused at once */
	rc = fn.finalize(stmt);
	if (n_active)
		flush_ended(rc);
	return rc;
}

PORTHOLE_API int sqlite3_exec(sqlite3 *db, const char *sql,
			      int (*cb)(void *, int, char **, char **),
			      void *arg, char **errmsg)
{
	int rc;

	if (!load())
		return SQLITE_MISUSE;
	rc = fn.exec(db, sql, cb, arg, errmsg);
	if (n_active)
		flush_ended(rc);
	return rc;
}
