/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sqlite_binds.c: the values bound to SQLite statements, kept as they are
 * bound, so that a statement's db_start carries them without
 * sqlite3_expanded_sql(), which allocates and formats the whole statement
 * on the app's thread (sqlite.c falls back to it only where this table
 * cannot answer).
 *
 * libporthole exports every sqlite3_bind_* and sqlite3_clear_bindings
 * (as it does sqlite3_step, for the same reason: the app's own calls,
 * whatever wraps them, come here); each calls SQLite's own (dlsym
 * RTLD_NEXT) and, when that succeeded, notes the value as the v1 wire
 * shows it, in the form expanded_sql would have given it: integers as
 * they are, reals as SQLite prints them ("%!.15g": at least one digit
 * after the point), text cut to 64 chars at a character boundary plus
 * "...", blobs "<blob N bytes>", NULL and pointers NULL.  A UTF-16 text
 * or an sqlite3_value is noted as unknown (the fallback formats it).
 *
 * Only statements of attached connections are noted.  One table for the
 * process, under one lock held only for a copy (never by a client): a
 * statement may be bound on one thread and stepped on another.  Keyed by the
 * statement's address, and checked against its SQL text's address too, so a
 * statement freed behind libporthole's back (another library's finalize) and a
 * new one at its address are not mixed up.  A table that is full, or a
 * parameter past BIND_MAX, leaves the statement to the fallback.
 */
#include "ph_common.h"
#include "collectors.h"

#include <dlfcn.h>
#include <math.h>
#include <sqlite3.h>

#define STMTS	 128
#define BIND_MAX 16
#define CAP_ARG	 64
#define VAL_MAX	 (CAP_ARG + 4) /* 64 bytes and "...", or a number */

struct value {
	uint8_t len;
	bool set;     /* bound since the last clear; unbound reads NULL */
	bool unknown; /* bound, but not in a form formatted here */
	char text[VAL_MAX];
};

struct stmt_binds {
	sqlite3_stmt *stmt; /* NULL: empty; TOMB: freed */
	const char *sql;    /* sqlite3_sql() when first bound */
	bool overflow;	    /* a parameter past BIND_MAX was bound */
	struct value v[BIND_MAX];
};

#define TOMB ((sqlite3_stmt *)1)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct stmt_binds table[STMTS];
static _Atomic bool ignored; /* tests: answer nothing, as if never bound */

void ph_sqlite_binds_ignore(bool on)
{
	atomic_store(&ignored, on);
}

static struct {
	int (*blob)(sqlite3_stmt *, int, const void *, int, void (*)(void *));
	int (*blob64)(sqlite3_stmt *, int, const void *, sqlite3_uint64,
		      void (*)(void *));
	int (*dbl)(sqlite3_stmt *, int, double);
	int (*int32)(sqlite3_stmt *, int, int);
	int (*int64)(sqlite3_stmt *, int, sqlite3_int64);
	int (*null)(sqlite3_stmt *, int);
	int (*text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
	int (*text16)(sqlite3_stmt *, int, const void *, int, void (*)(void *));
	int (*text64)(sqlite3_stmt *, int, const char *, sqlite3_uint64,
		      void (*)(void *), unsigned char);
	int (*value)(sqlite3_stmt *, int, const sqlite3_value *);
	int (*pointer)(sqlite3_stmt *, int, void *, const char *,
		       void (*)(void *));
	int (*zeroblob)(sqlite3_stmt *, int, int);
	int (*zeroblob64)(sqlite3_stmt *, int, sqlite3_uint64);
	int (*clear)(sqlite3_stmt *);
	const char *(*sql)(sqlite3_stmt *);
	int (*index)(sqlite3_stmt *, const char *);
} real;

static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load_once(void)
{
#define NEXT(field, name) *(void **)&real.field = dlsym(RTLD_NEXT, name)
	NEXT(blob, "sqlite3_bind_blob");
	NEXT(blob64, "sqlite3_bind_blob64");
	NEXT(dbl, "sqlite3_bind_double");
	NEXT(int32, "sqlite3_bind_int");
	NEXT(int64, "sqlite3_bind_int64");
	NEXT(null, "sqlite3_bind_null");
	NEXT(text, "sqlite3_bind_text");
	NEXT(text16, "sqlite3_bind_text16");
	NEXT(text64, "sqlite3_bind_text64");
	NEXT(value, "sqlite3_bind_value");
	NEXT(pointer, "sqlite3_bind_pointer");
	NEXT(zeroblob, "sqlite3_bind_zeroblob");
	NEXT(zeroblob64, "sqlite3_bind_zeroblob64");
	NEXT(clear, "sqlite3_clear_bindings");
#undef NEXT
	*(void **)&real.sql = dlsym(RTLD_DEFAULT, "sqlite3_sql");
	*(void **)&real.index =
		dlsym(RTLD_DEFAULT, "sqlite3_bind_parameter_index");
}

/* Each export calls this first: SQLite's own, or SQLITE_MISUSE if none. */
#define REAL(field)                               \
	do {                                      \
		pthread_once(&loaded, load_once); \
		if (!real.field)                  \
			return SQLITE_MISUSE;     \
	} while (0)

static size_t slot_of(const sqlite3_stmt *stmt)
{
	return (size_t)(((uintptr_t)stmt >> 4) * 0x9e3779b97f4a7c15ull >> 57) %
	       STMTS;
}

/* The statement's entry; made when `make` (else NULL).  Under mu. */
static struct stmt_binds *find(sqlite3_stmt *stmt, bool make)
{
	struct stmt_binds *free_slot = NULL;
	size_t s = slot_of(stmt);

	for (size_t i = 0; i < STMTS; i++) {
		struct stmt_binds *e = &table[(s + i) % STMTS];

		if (e->stmt == stmt)
			return e;
		if (e->stmt == TOMB && !free_slot)
			free_slot = e;
		if (!e->stmt) {
			if (!free_slot)
				free_slot = e;
			break;
		}
	}
	if (!make || !free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->stmt = stmt;
	free_slot->sql = real.sql ? real.sql(stmt) : NULL;
	return free_slot;
}

/* Notes parameter i's display value (text NULL: not formatted here). */
static void note(sqlite3_stmt *stmt, int i, const char *text, size_t len)
{
	struct stmt_binds *e;

	if (!ph_sqlite_attached(stmt))
		return; /* a connection the app did not attach */
	pthread_mutex_lock(&mu);
	e = find(stmt, true);
	if (e && (i < 1 || i > BIND_MAX)) {
		e->overflow = true;
	} else if (e) {
		struct value *v = &e->v[i - 1];

		v->set = true;
		v->unknown = !text;
		v->len = (uint8_t)(len < VAL_MAX ? len : VAL_MAX);
		if (text)
			memcpy(v->text, text, v->len);
	}
	pthread_mutex_unlock(&mu);
}

static void note_str(sqlite3_stmt *stmt, int i, const char *s)
{
	note(stmt, i, s, strlen(s));
}

/* Text as take_literal() in sqlite.c shows it: 64 bytes, cut whole. */
static void note_text(sqlite3_stmt *stmt, int i, const char *s, int64_t n)
{
	char val[VAL_MAX];
	size_t len;

	if (!s) {
		note_str(stmt, i, "NULL");
		return;
	}
	len = n < 0 ? strlen(s) : (size_t)n;
	if (memchr(s, '\0', len)) {
		note(stmt, i, NULL, 0); /* expanded_sql stops at a NUL */
		return;
	}
	if (len <= CAP_ARG) {
		note(stmt, i, s, len);
		return;
	}
	/* s[n], the first byte left out, decides whether the cut splits */
	n = CAP_ARG;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(val, s, (size_t)n);
	memcpy(val + n, "...", 3);
	note(stmt, i, val, (size_t)n + 3);
}

static void note_blob(sqlite3_stmt *stmt, int i, uint64_t bytes)
{
	char val[VAL_MAX];

	snprintf(val, sizeof(val), "<blob %" PRIu64 " bytes>", bytes);
	note_str(stmt, i, val);
}

/* A blob bound from NULL is a NULL, as SQLite binds it. */
static void note_blob_at(sqlite3_stmt *stmt, int i, const void *v,
			 uint64_t bytes)
{
	if (v)
		note_blob(stmt, i, bytes);
	else
		note_str(stmt, i, "NULL");
}

static void note_int(sqlite3_stmt *stmt, int i, int64_t v)
{
	char val[24];

	snprintf(val, sizeof(val), "%" PRId64, v);
	note_str(stmt, i, val);
}

/*
 * A real as SQLite's "%!.15g": 15 significant digits, trailing zeros
 * dropped but one kept after the point ("1.0", "1.0e+20").  NaN binds as
 * NULL; an infinity is left to the fallback.
 */
static void note_double(sqlite3_stmt *stmt, int i, double d)
{
	char val[40], *e;
	size_t n;

	if (isnan(d)) {
		note_str(stmt, i, "NULL");
		return;
	}
	if (isinf(d)) {
		note(stmt, i, NULL, 0);
		return;
	}
	snprintf(val, sizeof(val), "%.15g", d);
	if (!strchr(val, '.')) {
		e = strchr(val, 'e');
		n = e ? (size_t)(e - val) : strlen(val);
		memmove(val + n + 2, val + n, strlen(val + n) + 1);
		memcpy(val + n, ".0", 2);
	}
	note_str(stmt, i, val);
}

/* --- SQLite's bind calls, shadowed -------------------------------------- */

PORTHOLE_API int sqlite3_bind_int(sqlite3_stmt *s, int i, int v)
{
	int rc;

	REAL(int32);
	if ((rc = real.int32(s, i, v)) == SQLITE_OK)
		note_int(s, i, v);
	return rc;
}

PORTHOLE_API int sqlite3_bind_int64(sqlite3_stmt *s, int i, sqlite3_int64 v)
{
	int rc;

	REAL(int64);
	if ((rc = real.int64(s, i, v)) == SQLITE_OK)
		note_int(s, i, v);
	return rc;
}

PORTHOLE_API int sqlite3_bind_double(sqlite3_stmt *s, int i, double v)
{
	int rc;

	REAL(dbl);
	if ((rc = real.dbl(s, i, v)) == SQLITE_OK)
		note_double(s, i, v);
	return rc;
}

PORTHOLE_API int sqlite3_bind_null(sqlite3_stmt *s, int i)
{
	int rc;

	REAL(null);
	if ((rc = real.null(s, i)) == SQLITE_OK)
		note_str(s, i, "NULL");
	return rc;
}

PORTHOLE_API int sqlite3_bind_text(sqlite3_stmt *s, int i, const char *v, int n,
				   void (*del)(void *))
{
	int rc;

	REAL(text);
	if ((rc = real.text(s, i, v, n, del)) == SQLITE_OK)
		note_text(s, i, v, n);
	return rc;
}

PORTHOLE_API int sqlite3_bind_text64(sqlite3_stmt *s, int i, const char *v,
				     sqlite3_uint64 n, void (*del)(void *),
				     unsigned char enc)
{
	int rc;

	REAL(text64);
	if ((rc = real.text64(s, i, v, n, del, enc)) != SQLITE_OK)
		return rc;
	if (enc == SQLITE_UTF8 && n < INT64_MAX)
		note_text(s, i, v, (int64_t)n);
	else
		note(s, i, NULL, 0);
	return rc;
}

PORTHOLE_API int sqlite3_bind_text16(sqlite3_stmt *s, int i, const void *v,
				     int n, void (*del)(void *))
{
	int rc;

	REAL(text16);
	if ((rc = real.text16(s, i, v, n, del)) == SQLITE_OK)
		note(s, i, NULL, 0);
	return rc;
}

PORTHOLE_API int sqlite3_bind_blob(sqlite3_stmt *s, int i, const void *v, int n,
				   void (*del)(void *))
{
	int rc;

	REAL(blob);
	if ((rc = real.blob(s, i, v, n, del)) == SQLITE_OK)
		note_blob_at(s, i, v, n > 0 ? (uint64_t)n : 0);
	return rc;
}

PORTHOLE_API int sqlite3_bind_blob64(sqlite3_stmt *s, int i, const void *v,
				     sqlite3_uint64 n, void (*del)(void *))
{
	int rc;

	REAL(blob64);
	if ((rc = real.blob64(s, i, v, n, del)) == SQLITE_OK)
		note_blob_at(s, i, v, n);
	return rc;
}

PORTHOLE_API int sqlite3_bind_zeroblob(sqlite3_stmt *s, int i, int n)
{
	int rc;

	REAL(zeroblob);
	if ((rc = real.zeroblob(s, i, n)) == SQLITE_OK)
		note_blob(s, i, n > 0 ? (uint64_t)n : 0);
	return rc;
}

PORTHOLE_API int sqlite3_bind_zeroblob64(sqlite3_stmt *s, int i,
					 sqlite3_uint64 n)
{
	int rc;

	REAL(zeroblob64);
	if ((rc = real.zeroblob64(s, i, n)) == SQLITE_OK)
		note_blob(s, i, n);
	return rc;
}

PORTHOLE_API int sqlite3_bind_pointer(sqlite3_stmt *s, int i, void *p,
				      const char *type, void (*del)(void *))
{
	int rc;

	REAL(pointer);
	/* SQL sees a pointer as NULL, and so does expanded_sql */
	if ((rc = real.pointer(s, i, p, type, del)) == SQLITE_OK)
		note_str(s, i, "NULL");
	return rc;
}

PORTHOLE_API int sqlite3_bind_value(sqlite3_stmt *s, int i,
				    const sqlite3_value *v)
{
	int rc;

	REAL(value);
	if ((rc = real.value(s, i, v)) == SQLITE_OK)
		note(s, i, NULL, 0);
	return rc;
}

PORTHOLE_API int sqlite3_clear_bindings(sqlite3_stmt *s)
{
	struct stmt_binds *e;
	int rc;

	REAL(clear);
	rc = real.clear(s);
	pthread_mutex_lock(&mu);
	if ((e = find(s, false))) {
		for (size_t i = 0; i < BIND_MAX; i++)
			e->v[i].set = e->v[i].unknown = false;
		e->overflow = false;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

/* --- for sqlite.c ----------------------------------------------------- */

void ph_sqlite_binds_forget(sqlite3_stmt *stmt)
{
	struct stmt_binds *e;

	pthread_mutex_lock(&mu);
	if ((e = find(stmt, false)))
		e->stmt = TOMB;
	pthread_mutex_unlock(&mu);
}

/* Past a quoted region (', ", `, [...]) or a comment; else p itself. */
static const char *skip_quoted(const char *p)
{
	char close = *p == '[' ? ']' : *p;

	if (*p == '\'' || *p == '"' || *p == '`' || *p == '[') {
		for (p++; *p; p++)
			if (*p == close) {
				if (close != ']' && p[1] == close) {
					p++;
					continue;
				}
				return p + 1;
			}
		return p;
	}
	if (p[0] == '-' && p[1] == '-')
		return p + strcspn(p, "\n");
	if (p[0] == '/' && p[1] == '*') {
		const char *end = strstr(p + 2, "*/");

		return end ? end + 2 : p + strlen(p);
	}
	return p;
}

static bool is_name_char(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/*
 * The bound values of a statement about to run, in the order its text
 * names them (a name used twice shows twice), joined with ", ", into out:
 * what sqlite.c would read off expanded_sql.  False when this table cannot
 * say (never bound here, a value not formatted here, a parameter past
 * BIND_MAX, a name SQLite does not know): the caller falls back.
 */
bool ph_sqlite_binds_args(sqlite3_stmt *stmt, const char *sql, char *out,
			  size_t cap)
{
	struct stmt_binds *e;
	size_t n = 0;
	int most = 0; /* the highest index named so far: "?" is the next */
	bool ok = true;

	out[0] = '\0';
	pthread_once(&loaded, load_once);
	pthread_mutex_lock(&mu);
	e = find(stmt, false);
	if (!e || e->overflow || e->sql != sql || !real.index ||
	    atomic_load_explicit(&ignored, memory_order_relaxed))
		ok = false;
	for (const char *p = sql; ok && *p;) {
		const char *q = skip_quoted(p), *end;
		char name[64];
		int idx;

		if (q != p) {
			p = q;
			continue;
		}
		if (!(*p == '?' ||
		      ((*p == ':' || *p == '@' || *p == '$') &&
		       is_name_char(p[1]) && !(p[1] >= '0' && p[1] <= '9')))) {
			p++;
			continue;
		}
		for (end = p + 1; is_name_char(*end); end++)
			;
		if (*p == '?' && end > p + 1)
			idx = atoi(p + 1);
		else if (*p == '?')
			idx = most + 1;
		else if ((size_t)(end - p) < sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s", (int)(end - p), p);
			idx = real.index(stmt, name);
		} else
			idx = 0;
		if (idx < 1 || idx > BIND_MAX || e->v[idx - 1].unknown) {
			ok = false;
			break;
		}
		if (idx > most)
			most = idx;
		{
			const struct value *v = &e->v[idx - 1];
			const char *t = v->set ? v->text : "NULL";
			size_t len = v->set ? v->len : 4;

			if (n && n + 2 < cap) {
				out[n++] = ',';
				out[n++] = ' ';
			}
			for (size_t i = 0; i < len && n + 1 < cap; i++)
				out[n++] = t[i];
			out[n] = '\0';
		}
		p = end;
	}
	pthread_mutex_unlock(&mu);
	if (!ok)
		out[0] = '\0';
	return ok;
}
