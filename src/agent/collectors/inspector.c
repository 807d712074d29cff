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
 */
#include "ph_common.h"
#include "collectors.h"

#include <dlfcn.h>
#include <sqlite3.h>

#define MAX_DBS	 8
#define CELL_CAP 256

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
	int (*set_authorizer)(sqlite3 *,
			      int (*)(void *, int, const char *, const char *,
				      const char *, const char *),
			      void *);
	const char *(*errmsg)(sqlite3 *);
	int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
	bool ok;
} fn;

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
	LOAD(errmsg, "sqlite3_errmsg");
	LOAD(bind_int64, "sqlite3_bind_int64");
#undef LOAD
	fn.ok = fn.open_v2 && fn.close_v2 && fn.prepare_v2 && fn.step &&
		fn.finalize && fn.column_count && fn.column_name &&
		fn.column_decltype && fn.column_type && fn.column_text &&
		fn.column_bytes && fn.column_int64 && fn.stmt_readonly &&
		fn.set_authorizer && fn.errmsg && fn.bind_int64;
	return fn.ok;
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
			snprintf(path, size, "%s", databases[i]);
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

/* Writes columns and rows; returns the row count sent. */
static int64_t page(struct ph_jw *w, sqlite3_stmt *st, int64_t limit,
		    bool *truncated)
{
	int cols = fn.column_count(st);
	int64_t n = 0;
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
	while ((rc = fn.step(st)) == SQLITE_ROW) {
		if (n == limit) {
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
	return n;
}

static int64_t count_rows(sqlite3 *db, const char *table)
{
	char sql[300];
	sqlite3_stmt *st;
	int64_t n = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\"", table);
	if (fn.prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (fn.step(st) == SQLITE_ROW)
		n = fn.column_int64(st, 0);
	fn.finalize(st);
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
	return found && !strchr(name, '"');
}

static const char *db_tables(const struct ph_json *params, struct ph_jw *w)
{
	char path[256];
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	const char *err = open_db(params, &db, path, sizeof(path));
	char names[256][128];
	int n = 0;

	if (err)
		return err;
	if (fn.prepare_v2(db,
			  "SELECT name FROM sqlite_master WHERE type='table' "
			  "AND name NOT LIKE 'sqlite_%' ORDER BY name",
			  -1, &st, NULL) == SQLITE_OK) {
		while (n < 256 && fn.step(st) == SQLITE_ROW)
			snprintf(names[n++], sizeof(names[0]), "%s",
				 (const char *)fn.column_text(st, 0));
		fn.finalize(st);
	}
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "database", path);
	databases_json(w);
	ph_jw_key(w, "tables");
	ph_jw_arr_begin(w);
	for (int i = 0; i < n; i++) {
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "name", names[i]);
		ph_jw_kv_int(w, "rows", count_rows(db, names[i]));
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
	fn.close_v2(db);
	return NULL;
}

static const char *db_rows(const struct ph_json *params, struct ph_jw *w)
{
	const struct ph_json *t = ph_json_get(params, "table");
	int64_t limit = 100, offset = 0, v;
	char path[256], table[128], sql[300];
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	bool truncated = false;
	const char *err;

	if (!ph_json_is(t, PH_JSON_STRING) || !t->n || t->n >= sizeof(table))
		return "EINVAL: table is required";
	snprintf(table, sizeof(table), "%.*s", (int)t->n, t->u.s);
	if (ph_json_as_int(ph_json_get(params, "limit"), &v) && v > 0)
		limit = v < 1000 ? v : 1000;
	if (ph_json_as_int(ph_json_get(params, "offset"), &v) && v >= 0)
		offset = v;
	err = open_db(params, &db, path, sizeof(path));
	if (err)
		return err;
	if (!table_exists(db, table)) {
		fn.close_v2(db);
		return "ENOENT: no such table";
	}
	snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\" LIMIT ? OFFSET ?",
		 table);
	if (fn.prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fn.close_v2(db);
		return "EIO: could not read the table";
	}
	fn.bind_int64(st, 1, limit + 1);
	fn.bind_int64(st, 2, offset);
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "table", table);
	page(w, st, limit, &truncated);
	fn.finalize(st);
	ph_jw_kv_int(w, "total", count_rows(db, table));
	ph_jw_kv_int(w, "offset", offset);
	ph_jw_kv_bool(w, "truncated", truncated);
	ph_jw_obj_end(w);
	fn.close_v2(db);
	return NULL;
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
	page(w, st, 500, &truncated);
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

const char *ph_inspector_method(int which, const struct ph_json *params,
				struct ph_jw *w)
{
	switch (which) {
	case 0: return db_tables(params, w);
	case 1: return db_rows(params, w);
	default: return db_query(params, w);
	}
}
