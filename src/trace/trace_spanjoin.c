/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_spanjoin.c: the SPAN_JOIN virtual table module.
 *
 *   CREATE VIRTUAL TABLE temp.j USING SPAN_JOIN(a PARTITIONED utid,
 *                                              b PARTITIONED utid);
 *
 * a and b are tables or views with columns ts and dur (nanoseconds; dur
 * -1 means "still open" and runs to the trace end).  j has one row per
 * non-empty intersection of a row of a and a row of b with the same
 * partition value: ts, dur, the partition column, then every other column
 * of a, then every other column of b (a name in both is refused).  Either
 * side may be unpartitioned (`b` alone): its rows then meet every
 * partition of the other side.
 *
 * The precondition the field's module assumes and does not check: within
 * one partition, the rows of each side do not overlap.  If they did, one
 * stretch of time would be counted once per overlapping row, and a sum of
 * j.dur would silently exceed the time that passed.  This module checks
 * it while it reads each side (sorted by partition, ts) and fails the
 * query instead, naming the table, the partition and the two intervals.
 *
 * Evaluation: each xFilter reads both sides with one ordered query each
 * (an equality constraint on the partition column is pushed down into
 * both, so j can be the inner loop of a join), checks them, and merges
 * them partition by partition into rows held by the cursor.
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "trace/trace_sql.h"

#define SJ_MAXCOLS 64

struct sj_side {
	char *table;
	char *part;		/* partition column, NULL when unpartitioned */
	char *cols[SJ_MAXCOLS]; /* the other columns, in table order */
	int ncols;
};

struct sj_vtab {
	sqlite3_vtab base;
	sqlite3 *db;
	int64_t open_end; /* where a dur -1 row ends */
	struct sj_side side[2];
	const char *part; /* the output partition column or NULL */
};

/* One side read into memory: rows sorted by (partition, ts). */
struct sj_rows {
	int64_t *ts, *end, *part;
	sqlite3_value **vals; /* n * ncols, row-major */
	size_t n, cap;
	int ncols;
};

struct sj_out {
	int64_t ts, dur, part;
	uint32_t ra, rb;
};

struct sj_cur {
	sqlite3_vtab_cursor base;
	struct sj_rows r[2];
	struct sj_out *out;
	size_t n, cap, pos;
};

static char *dup_ident(const char *s, size_t n)
{
	char *p = sqlite3_malloc((int)n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

/* "name [PARTITIONED col]" */
static int parse_arg(const char *arg, struct sj_side *s, char **err)
{
	const char *p = arg, *w[4];
	size_t wl[4];
	int nw = 0;

	while (*p && nw < 4) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		w[nw] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		wl[nw] = (size_t)(p - w[nw]);
		nw++;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p || (nw != 1 && nw != 3) ||
	    (nw == 3 &&
	     (wl[1] != 11 || sqlite3_strnicmp(w[1], "PARTITIONED", 11)))) {
		*err = sqlite3_mprintf("SPAN_JOIN: bad argument '%s' (want "
				       "'table' or 'table PARTITIONED col')",
				       arg);
		return SQLITE_ERROR;
	}
	s->table = dup_ident(w[0], wl[0]);
	s->part = nw == 3 ? dup_ident(w[2], wl[2]) : NULL;
	return s->table && (nw == 1 || s->part) ? SQLITE_OK : SQLITE_NOMEM;
}

/* Reads the columns of a side: ts and dur are required. */
static int read_columns(sqlite3 *db, struct sj_side *s, char **err)
{
	sqlite3_stmt *st;
	char *sql = sqlite3_mprintf("SELECT * FROM \"%w\" LIMIT 0", s->table);
	bool ts = false, dur = false, part = !s->part;
	int rc;

	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("SPAN_JOIN: %s: %s", s->table,
				       sqlite3_errmsg(db));
		return SQLITE_ERROR;
	}
	for (int c = 0; c < sqlite3_column_count(st); c++) {
		const char *n = sqlite3_column_name(st, c);

		if (!sqlite3_stricmp(n, "ts"))
			ts = true;
		else if (!sqlite3_stricmp(n, "dur"))
			dur = true;
		else if (s->part && !sqlite3_stricmp(n, s->part))
			part = true;
		else if (s->ncols < SJ_MAXCOLS)
			s->cols[s->ncols++] = sqlite3_mprintf("%s", n);
	}
	sqlite3_finalize(st);
	if (!ts || !dur || !part) {
		*err = sqlite3_mprintf("SPAN_JOIN: %s has no column '%s'",
				       s->table,
				       !ts  ? "ts" :
				       !dur ? "dur" :
					      s->part);
		return SQLITE_ERROR;
	}
	return SQLITE_OK;
}

static void side_free(struct sj_side *s)
{
	sqlite3_free(s->table);
	sqlite3_free(s->part);
	for (int i = 0; i < s->ncols; i++)
		sqlite3_free(s->cols[i]);
	memset(s, 0, sizeof(*s));
}

static int sj_disconnect(sqlite3_vtab *vt)
{
	struct sj_vtab *v = (struct sj_vtab *)vt;

	side_free(&v->side[0]);
	side_free(&v->side[1]);
	sqlite3_free(v);
	return SQLITE_OK;
}

static int sj_connect(sqlite3 *db, void *aux, int nargs,
		      const char *const *args, sqlite3_vtab **out, char **err)
{
	struct sj_vtab *v;
	struct ph_buf b = PH_BUF_INIT(1 << 16);
	int rc;

	if (nargs != 5) {
		*err = sqlite3_mprintf("SPAN_JOIN wants two tables");
		return SQLITE_ERROR;
	}
	v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->db = db;
	v->open_end = *(const int64_t *)aux;
	for (int i = 0; i < 2; i++) {
		rc = parse_arg(args[3 + i], &v->side[i], err);
		if (rc == SQLITE_OK)
			rc = read_columns(db, &v->side[i], err);
		if (rc != SQLITE_OK)
			goto fail;
	}
	if (v->side[0].part && v->side[1].part &&
	    sqlite3_stricmp(v->side[0].part, v->side[1].part)) {
		*err = sqlite3_mprintf("SPAN_JOIN: both sides must partition "
				       "on the same column (%s, %s)",
				       v->side[0].part, v->side[1].part);
		rc = SQLITE_ERROR;
		goto fail;
	}
	v->part = v->side[0].part ? v->side[0].part : v->side[1].part;
	rc = SQLITE_NOMEM;
	if (ph_buf_addstr(&b, "CREATE TABLE x(ts INTEGER, dur INTEGER"))
		goto fail;
	if (v->part && ph_buf_addf(&b, ", \"%s\" INTEGER", v->part))
		goto fail;
	for (int i = 0; i < 2; i++) {
		for (int c = 0; c < v->side[i].ncols; c++) {
			const char *n = v->side[i].cols[c];

			for (int k = 0; i && k < v->side[0].ncols; k++) {
				if (!sqlite3_stricmp(n, v->side[0].cols[k])) {
					*err = sqlite3_mprintf(
						"SPAN_JOIN: column '%s' is "
						"in both %s and %s",
						n, v->side[0].table,
						v->side[1].table);
					rc = SQLITE_ERROR;
					goto fail;
				}
			}
			if (strchr(n, '"') || ph_buf_addf(&b, ", \"%s\"", n))
				goto fail;
		}
	}
	if (ph_buf_addch(&b, ')'))
		goto fail;
	rc = sqlite3_declare_vtab(db, b.buf);
	if (rc != SQLITE_OK)
		goto fail;
	ph_buf_release(&b);
	*out = &v->base;
	return SQLITE_OK;
fail:
	ph_buf_release(&b);
	sj_disconnect(&v->base);
	return rc;
}

/* Plan 1: partition = ?; the other constraints are left to SQLite. */
static int sj_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	struct sj_vtab *v = (struct sj_vtab *)vt;

	info->idxNum = 0;
	info->estimatedCost = 1e6;
	for (int i = 0; v->part && i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c =
			&info->aConstraint[i];

		if (c->usable && c->iColumn == 2 &&
		    c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			info->idxNum = 1;
			info->aConstraintUsage[i].argvIndex = 1;
			info->aConstraintUsage[i].omit = 1;
			info->estimatedCost = 1e3;
			break;
		}
	}
	return SQLITE_OK;
}

static void rows_free(struct sj_rows *r)
{
	for (size_t i = 0; i < r->n * (size_t)r->ncols; i++)
		sqlite3_value_free(r->vals[i]);
	sqlite3_free(r->ts);
	sqlite3_free(r->end);
	sqlite3_free(r->part);
	sqlite3_free(r->vals);
	memset(r, 0, sizeof(*r));
}

static void cur_reset(struct sj_cur *c)
{
	rows_free(&c->r[0]);
	rows_free(&c->r[1]);
	sqlite3_free(c->out);
	c->out = NULL;
	c->n = c->cap = c->pos = 0;
}

static int sj_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct sj_cur *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int sj_close(sqlite3_vtab_cursor *cur)
{
	cur_reset((struct sj_cur *)cur);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int grow(void **p, size_t cap, size_t sz)
{
	void *q = sqlite3_realloc64(*p, (sqlite3_uint64)(cap * sz));

	if (!q)
		return SQLITE_NOMEM;
	*p = q;
	return SQLITE_OK;
}

static int rows_push(struct sj_rows *r)
{
	size_t cap = r->cap ? r->cap * 2 : 256;

	if (r->n < r->cap)
		return SQLITE_OK;
	/* The capacity rises only once every array holds it: an array
	 * that grew before a later one failed is merely roomier. */
	if (grow((void **)&r->ts, cap, 8) || grow((void **)&r->end, cap, 8) ||
	    grow((void **)&r->part, cap, 8) ||
	    grow((void **)&r->vals, cap * (size_t)(r->ncols ? r->ncols : 1),
		 sizeof(sqlite3_value *)))
		return SQLITE_NOMEM;
	r->cap = cap;
	return SQLITE_OK;
}

/*
 * Reads one side sorted by (partition, ts) and checks that no two rows of
 * one partition overlap.  Empty rows (dur 0) cannot overlap anything and
 * are dropped; NULL ts or partition rows belong nowhere and are dropped.
 */
static int read_side(struct sj_vtab *v, int i, sqlite3_value *eq,
		     struct sj_rows *r)
{
	const struct sj_side *s = &v->side[i];
	struct ph_buf q = PH_BUF_INIT(1 << 16);
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_NOMEM;

	r->ncols = s->ncols;
	if (ph_buf_addstr(&q, "SELECT ts, dur"))
		goto out;
	if (ph_buf_addf(&q, s->part ? ", \"%s\"" : ", 0", s->part))
		goto out;
	for (int c = 0; c < s->ncols; c++)
		if (ph_buf_addf(&q, ", \"%s\"", s->cols[c]))
			goto out;
	if (ph_buf_addf(&q, " FROM \"%s\" WHERE ts IS NOT NULL AND dur != 0",
			s->table))
		goto out;
	if (s->part && ph_buf_addf(&q, " AND \"%s\" IS NOT NULL", s->part))
		goto out;
	if (s->part && eq && ph_buf_addf(&q, " AND \"%s\" = ?1", s->part))
		goto out;
	if (ph_buf_addf(&q, " ORDER BY %s ts", s->part ? "3," : ""))
		goto out;
	rc = sqlite3_prepare_v2(v->db, q.buf, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		v->base.zErrMsg = sqlite3_mprintf("SPAN_JOIN: %s: %s", s->table,
						  sqlite3_errmsg(v->db));
		goto out;
	}
	if (s->part && eq)
		sqlite3_bind_value(st, 1, eq);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0);
		int64_t dur = sqlite3_column_int64(st, 1);
		int64_t part = sqlite3_column_int64(st, 2);
		int64_t end = dur < 0 ? v->open_end : ts + dur;

		if (end <= ts)
			continue;
		if (r->n && r->part[r->n - 1] == part &&
		    r->end[r->n - 1] > ts) {
			char where[160] = "";

			if (s->part)
				snprintf(where, sizeof(where),
					 " in partition %s = %lld", s->part,
					 (long long)part);
			v->base.zErrMsg = sqlite3_mprintf(
				"SPAN_JOIN: %s has overlapping intervals%s: "
				"[%lld, %lld) and [%lld, %lld) (its rows must "
				"not overlap%s, or time would be counted "
				"twice)",
				s->table, where, (long long)r->ts[r->n - 1],
				(long long)r->end[r->n - 1], (long long)ts,
				(long long)end,
				s->part ? " within a partition" : "");
			rc = SQLITE_CONSTRAINT;
			goto out;
		}
		if (rows_push(r)) {
			rc = SQLITE_NOMEM;
			goto out;
		}
		r->ts[r->n] = ts;
		r->end[r->n] = end;
		r->part[r->n] = part;
		for (int c = 0; c < s->ncols; c++) {
			sqlite3_value *val = sqlite3_value_dup(
				sqlite3_column_value(st, 3 + c));

			if (!val) {
				/* the row is half built: keep it freeable */
				for (int k = c; k < s->ncols; k++)
					r->vals[r->n * (size_t)s->ncols + k] =
						NULL;
				r->n++;
				rc = SQLITE_NOMEM;
				goto out;
			}
			r->vals[r->n * (size_t)s->ncols + c] = val;
		}
		r->n++;
	}
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	else if (!v->base.zErrMsg)
		v->base.zErrMsg = sqlite3_mprintf("SPAN_JOIN: %s: %s", s->table,
						  sqlite3_errmsg(v->db));
out:
	sqlite3_finalize(st);
	ph_buf_release(&q);
	return rc;
}

static int emit(struct sj_cur *c, int64_t ts, int64_t end, int64_t part,
		size_t ra, size_t rb)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;

		if (grow((void **)&c->out, cap, sizeof(*c->out)))
			return SQLITE_NOMEM;
		c->cap = cap;
	}
	c->out[c->n++] = (struct sj_out){ ts, end - ts, part, (uint32_t)ra,
					  (uint32_t)rb };
	return SQLITE_OK;
}

/* Intersects a[ia, ea) with b[ib, eb): both sorted, neither overlapping. */
static int merge(struct sj_cur *c, size_t ia, size_t ea, size_t ib, size_t eb,
		 int64_t part)
{
	const struct sj_rows *a = &c->r[0], *b = &c->r[1];

	while (ia < ea && ib < eb) {
		int64_t s = a->ts[ia] > b->ts[ib] ? a->ts[ia] : b->ts[ib];
		int64_t e = a->end[ia] < b->end[ib] ? a->end[ia] : b->end[ib];

		if (s < e && emit(c, s, e, part, ia, ib))
			return SQLITE_NOMEM;
		if (a->end[ia] < b->end[ib])
			ia++;
		else
			ib++;
	}
	return SQLITE_OK;
}

static size_t part_end(const struct sj_rows *r, size_t i)
{
	size_t j = i;

	while (j < r->n && r->part[j] == r->part[i])
		j++;
	return j;
}

static int sj_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr,
		     int nargs, sqlite3_value **args)
{
	struct sj_cur *c = (struct sj_cur *)cur;
	struct sj_vtab *v = (struct sj_vtab *)cur->pVtab;
	struct sj_rows *a = &c->r[0], *b = &c->r[1];
	sqlite3_value *eq = idx == 1 && nargs > 0 ? args[0] : NULL;
	int rc;

	(void)idxstr;
	cur_reset(c);
	if ((rc = read_side(v, 0, eq, a)) || (rc = read_side(v, 1, eq, b)))
		return rc;
	if (!v->side[0].part || !v->side[1].part) {
		/* one side (or neither) is partitioned: the other one meets
		 * every partition of it */
		struct sj_rows *p = v->side[0].part ? a : b;

		for (size_t i = 0; i < p->n;) {
			size_t e = part_end(p, i);

			rc = p == a ? merge(c, i, e, 0, b->n, p->part[i]) :
				      merge(c, 0, a->n, i, e, p->part[i]);
			if (rc)
				return rc;
			i = e;
		}
		return SQLITE_OK;
	}
	for (size_t i = 0, j = 0; i < a->n && j < b->n;) {
		if (a->part[i] < b->part[j]) {
			i = part_end(a, i);
		} else if (a->part[i] > b->part[j]) {
			j = part_end(b, j);
		} else {
			size_t ei = part_end(a, i), ej = part_end(b, j);

			if ((rc = merge(c, i, ei, j, ej, a->part[i])))
				return rc;
			i = ei;
			j = ej;
		}
	}
	return SQLITE_OK;
}

static int sj_next(sqlite3_vtab_cursor *cur)
{
	((struct sj_cur *)cur)->pos++;
	return SQLITE_OK;
}

static int sj_eof(sqlite3_vtab_cursor *cur)
{
	struct sj_cur *c = (struct sj_cur *)cur;

	return c->pos >= c->n;
}

static int sj_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct sj_cur *c = (struct sj_cur *)cur;
	struct sj_vtab *v = (struct sj_vtab *)cur->pVtab;
	const struct sj_out *o = &c->out[c->pos];
	int na = v->side[0].ncols;

	if (col == 0) {
		sqlite3_result_int64(ctx, o->ts);
		return SQLITE_OK;
	}
	if (col == 1) {
		sqlite3_result_int64(ctx, o->dur);
		return SQLITE_OK;
	}
	if (v->part && col == 2) {
		sqlite3_result_int64(ctx, o->part);
		return SQLITE_OK;
	}
	col -= v->part ? 3 : 2;
	if (col < na)
		sqlite3_result_value(ctx,
				     c->r[0].vals[o->ra * (size_t)na + col]);
	else
		sqlite3_result_value(
			ctx, c->r[1].vals[o->rb * (size_t)v->side[1].ncols +
					  (col - na)]);
	return SQLITE_OK;
}

static int sj_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct sj_cur *)cur)->pos;
	return SQLITE_OK;
}

static const sqlite3_module sj_module = {
	.iVersion = 0,
	.xCreate = sj_connect,
	.xConnect = sj_connect,
	.xBestIndex = sj_best_index,
	.xDisconnect = sj_disconnect,
	.xDestroy = sj_disconnect,
	.xOpen = sj_open,
	.xClose = sj_close,
	.xFilter = sj_filter,
	.xNext = sj_next,
	.xEof = sj_eof,
	.xColumn = sj_column,
	.xRowid = sj_rowid,
};

int ph_trace_spanjoin_register(sqlite3 *db, int64_t open_end)
{
	int64_t *aux = malloc(sizeof(*aux));

	if (!aux)
		return PH_ENOMEM;
	*aux = open_end;
	if (sqlite3_create_module_v2(db, "SPAN_JOIN", &sj_module, aux, free) !=
	    SQLITE_OK)
		return ph_error(PH_ENOMEM, "cannot register SPAN_JOIN");
	return 0;
}
