/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_sql.c: the columnar tables as SQLite eponymous virtual tables.
 *
 * Why virtual tables and not INSERTs: the rows are already in memory in
 * columns; a virtual table reads them in place, so opening a 100 MB trace
 * for SQL costs nothing beyond the decode.  SQLite cannot build automatic
 * indexes on virtual tables, so xBestIndex offers an equality lookup on any
 * column (and on ts ranges of tables kept in time order), served from a
 * sorted permutation built the first time a query asks for it.
 */
#include "ph_common.h"
#include "trace/trace_sql.h"

/* Per table: the lazily built sorted permutation of each column. */
struct vt_aux {
	struct ph_trace *trace;
	struct ph_table *tb;
	uint32_t **perm; /* perm[c]: row ids sorted by column c, or NULL */
	bool ts_sorted;	 /* column 1 is ts and rows are in ts order */
};

struct vt {
	sqlite3_vtab base;
	struct vt_aux *aux;
};

enum { PLAN_SCAN, PLAN_ROWID, PLAN_EQ, PLAN_TSRANGE };

struct vt_cur {
	sqlite3_vtab_cursor base;
	struct vt_aux *aux;
	size_t pos, end;      /* [pos, end) in rows or in perm */
	const uint32_t *perm; /* NULL: pos is the row */
};

static int64_t cell_int(const struct ph_table *tb, int c, size_t r)
{
	switch (tb->spec[c].type) {
	case PH_COL_ID: return (int64_t)r;
	case PH_COL_I64: return ((int64_t *)tb->data[c])[r];
	case PH_COL_I32: {
		int32_t v = ((int32_t *)tb->data[c])[r];

		return v == PH_NULL_I32 ? PH_NULL_I64 : v;
	}
	case PH_COL_STR: return ((uint32_t *)tb->data[c])[r];
	default: return 0;
	}
}

/* What cmp_rows sorts by: a context, as several threads may sort. */
struct sort_by_col {
	const struct ph_table *tb;
	int col;
};

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct sort_by_col *k = arg;
	int64_t x = cell_int(k->tb, k->col, *(const uint32_t *)a);
	int64_t y = cell_int(k->tb, k->col, *(const uint32_t *)b);

	if (x != y)
		return x < y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/*
 * Row ids in order of column c's value (NULL first), ties in row order,
 * by an LSD radix sort of (value - min) << idx_bits | row packed in one
 * word, 11 bits a pass over the value bits in use.  qsort with a
 * comparator was a third of a whole analyze on a 100 MB trace (building
 * the utid index of thread_state: 1.5M rows).  A column whose values span
 * too much for the word (uuids, cookies) takes qsort.
 */
static int radix_perm(const struct ph_table *tb, int c, uint32_t *p)
{
	size_t n = tb->rows;
	int64_t min = INT64_MAX, max = INT64_MIN;
	uint64_t span, *a, *b, *sorted;
	int idx_bits = 1, key_bits = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t v = cell_int(tb, c, i);

		if (v == PH_NULL_I64)
			continue;
		if (v < min)
			min = v;
		if (v > max)
			max = v;
	}
	if (min > max)
		min = max = 0; /* all NULL */
	if (__builtin_sub_overflow(max, min, (int64_t *)&span))
		return -1;
	span += 1; /* 0 is NULL */
	while (idx_bits < 32 && ((size_t)1 << idx_bits) < n)
		idx_bits++;
	while (key_bits < 64 && (span >> key_bits))
		key_bits++;
	if (key_bits + idx_bits > 64)
		return -1;
	a = malloc(n * sizeof(*a));
	b = malloc(n * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t v = cell_int(tb, c, i);
		uint64_t k = v == PH_NULL_I64 ? 0 : (uint64_t)(v - min) + 1;

		a[i] = k << idx_bits | i;
	}
	sorted = ph_trace_radix_packed(a, b, n, idx_bits, key_bits);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint32_t)(sorted[i] & (((uint64_t)1 << idx_bits) - 1));
	free(a);
	free(b);
	return 0;
}

static const uint32_t *perm_of(struct vt_aux *aux, int c)
{
	struct ph_table *tb = aux->tb;
	uint32_t *p;

	if (aux->perm[c])
		return aux->perm[c];
	p = malloc((tb->rows ? tb->rows : 1) * sizeof(*p));
	if (!p)
		return NULL;
	if (!tb->rows || radix_perm(tb, c, p)) {
		struct sort_by_col k = { tb, c };

		for (size_t i = 0; i < tb->rows; i++)
			p[i] = (uint32_t)i;
		qsort_r(p, tb->rows, sizeof(*p), cmp_rows, &k);
	}
	aux->perm[c] = p;
	return p;
}

static int vt_connect(sqlite3 *db, void *paux, int nargs,
		      const char *const *args, sqlite3_vtab **out, char **err)
{
	struct vt_aux *aux = paux;
	struct ph_buf b = PH_BUF_INIT(1 << 16);
	struct vt *v;
	int rc;

	(void)nargs;
	(void)args;
	(void)err;
	if (ph_buf_addstr(&b, "CREATE TABLE x("))
		return SQLITE_NOMEM;
	for (uint32_t c = 0; c < aux->tb->ncols; c++) {
		static const char *const types[] = { "INTEGER", "INTEGER",
						     "INTEGER", "REAL",
						     "TEXT" };

		if (ph_buf_addf(&b, "%s%s %s", c ? ", " : "",
				aux->tb->spec[c].name,
				types[aux->tb->spec[c].type])) {
			ph_buf_release(&b);
			return SQLITE_NOMEM;
		}
	}
	if (ph_buf_addch(&b, ')')) {
		ph_buf_release(&b);
		return SQLITE_NOMEM;
	}
	rc = sqlite3_declare_vtab(db, b.buf);
	ph_buf_release(&b);
	if (rc != SQLITE_OK)
		return rc;
	v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->aux = aux;
	*out = &v->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int vt_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
	struct vt_aux *aux = ((struct vt *)vtab)->aux;
	double rows = (double)aux->tb->rows + 1;
	int best = -1, lo = -1, hi = -1;

	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c =
			&info->aConstraint[i];
		int col = c->iColumn;

		if (!c->usable)
			continue;
		if (c->op == SQLITE_INDEX_CONSTRAINT_EQ &&
		    (col < 0 || aux->tb->spec[col].type != PH_COL_F64)) {
			if (best < 0 || col < 0 ||
			    aux->tb->spec[col].type == PH_COL_ID)
				best = i;
		}
		if (col == 1 && aux->ts_sorted) {
			if (c->op == SQLITE_INDEX_CONSTRAINT_GE ||
			    c->op == SQLITE_INDEX_CONSTRAINT_GT)
				lo = i;
			if (c->op == SQLITE_INDEX_CONSTRAINT_LE ||
			    c->op == SQLITE_INDEX_CONSTRAINT_LT)
				hi = i;
		}
	}
	if (best >= 0) {
		int col = info->aConstraint[best].iColumn;
		bool id = col < 0 || aux->tb->spec[col].type == PH_COL_ID;

		info->idxNum = id ? PLAN_ROWID : PLAN_EQ;
		info->idxStr = NULL;
		info->aConstraintUsage[best].argvIndex = 1;
		info->aConstraintUsage[best].omit = 1;
		/* remember the column in the plan number's high bits */
		info->idxNum |= (col < 0 ? 0 : col) << 8;
		info->estimatedCost = id ? 1 : 20;
		info->estimatedRows = id ? 1 : 10;
		if (id)
			info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
		return SQLITE_OK;
	}
	if (lo >= 0 || hi >= 0) {
		int n = 0;

		info->idxNum = PLAN_TSRANGE;
		if (lo >= 0) {
			info->aConstraintUsage[lo].argvIndex = ++n;
			info->idxNum |= 1 << 8;
		}
		if (hi >= 0) {
			info->aConstraintUsage[hi].argvIndex = ++n;
			info->idxNum |= 2 << 8;
		}
		info->estimatedCost = rows / 4;
		info->estimatedRows = (sqlite3_int64)(rows / 4);
		return SQLITE_OK;
	}
	info->idxNum = PLAN_SCAN;
	info->estimatedCost = rows;
	info->estimatedRows = (sqlite3_int64)rows;
	return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
	struct vt_cur *c = sqlite3_malloc(sizeof(*c));

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->aux = ((struct vt *)vtab)->aux;
	*out = &c->base;
	return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

/* The value an argument has in column col's storage; false: no row can
 * match (a string the trace never saw, a text for an integer column). */
static bool arg_key(struct vt_aux *aux, int col, sqlite3_value *v, int64_t *key)
{
	int type = sqlite3_value_type(v);

	if (type == SQLITE_NULL)
		return false;
	if (aux->tb->spec[col].type == PH_COL_STR) {
		const char *s = (const char *)sqlite3_value_text(v);
		struct ph_strtab *st = &aux->trace->strs;

		if (!s)
			return false;
		/* look up without adding: a linear probe of the table */
		{
			size_t n = strlen(s);
			uint64_t h = ph_trace_strhash(s, n);

			if (!st->nslots)
				return false;
			for (uint32_t i = h & (st->nslots - 1); st->slots[i];
			     i = (i + 1) & (st->nslots - 1)) {
				uint32_t id = st->slots[i];

				if (st->len[id] == n &&
				    !memcmp(st->strs[id], s, n)) {
					*key = id;
					return true;
				}
			}
			return false;
		}
	}
	if (type == SQLITE_INTEGER) {
		*key = sqlite3_value_int64(v);
		return true;
	}
	if (type == SQLITE_FLOAT) {
		double d = sqlite3_value_double(v);

		*key = (int64_t)d;
		return (double)*key == d;
	}
	{
		/* text compared with an integer column: SQLite's affinity
		 * would convert a numeric text */
		const char *s = (const char *)sqlite3_value_text(v);
		char *end;
		long long x;

		if (!s || !*s)
			return false;
		x = strtoll(s, &end, 10);
		if (*end)
			return false;
		*key = x;
		return true;
	}
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr,
		     int nargs, sqlite3_value **args)
{
	struct vt_cur *c = (struct vt_cur *)cur;
	struct vt_aux *aux = c->aux;
	struct ph_table *tb = aux->tb;
	int plan = idx & 0xff, col = idx >> 8;
	int64_t key;

	(void)idxstr;
	(void)nargs;
	c->perm = NULL;
	c->pos = 0;
	c->end = tb->rows;
	if (plan == PLAN_ROWID) {
		if (!arg_key(aux, 0, args[0], &key) || key < 0 ||
		    (uint64_t)key >= tb->rows) {
			c->end = 0;
			return SQLITE_OK;
		}
		c->pos = (size_t)key;
		c->end = c->pos + 1;
	} else if (plan == PLAN_EQ) {
		const uint32_t *p;
		size_t lo = 0, hi = tb->rows;

		if (!arg_key(aux, col, args[0], &key)) {
			c->end = 0;
			return SQLITE_OK;
		}
		p = perm_of(aux, col);
		if (!p)
			return SQLITE_NOMEM;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (cell_int(tb, col, p[mid]) < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		c->pos = lo;
		hi = tb->rows;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (cell_int(tb, col, p[mid]) <= key)
				lo = mid + 1;
			else
				hi = mid;
		}
		c->end = lo;
		c->perm = p;
	} else if (plan == PLAN_TSRANGE) {
		const int64_t *ts = ph_col_i64(tb, 1);
		int a = 0;

		if (col & 1) {
			double d = sqlite3_value_double(args[a++]);
			size_t lo = 0, hi = tb->rows;

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if ((double)ts[mid] < d)
					lo = mid + 1;
				else
					hi = mid;
			}
			c->pos = lo;
		}
		if (col & 2) {
			double d = sqlite3_value_double(args[a]);
			size_t lo = 0, hi = tb->rows;

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if ((double)ts[mid] <= d)
					lo = mid + 1;
				else
					hi = mid;
			}
			c->end = lo;
		}
		/* the exact bound (GT vs GE) is left to SQLite: not omitted */
	}
	return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	((struct vt_cur *)cur)->pos++;
	return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	struct vt_cur *c = (struct vt_cur *)cur;

	return c->pos >= c->end;
}

static size_t cur_row(const struct vt_cur *c)
{
	return c->perm ? c->perm[c->pos] : c->pos;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct vt_cur *c = (struct vt_cur *)cur;
	struct ph_table *tb = c->aux->tb;
	size_t r = cur_row(c);

	switch (tb->spec[col].type) {
	case PH_COL_ID: sqlite3_result_int64(ctx, (int64_t)r); break;
	case PH_COL_I64: {
		int64_t v = ph_col_i64(tb, col)[r];

		if (v == PH_NULL_I64)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, v);
		break;
	}
	case PH_COL_I32: {
		int32_t v = ph_col_i32(tb, col)[r];

		if (v == PH_NULL_I32)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int(ctx, v);
		break;
	}
	case PH_COL_F64:
		sqlite3_result_double(ctx, ph_col_f64(tb, col)[r]);
		break;
	case PH_COL_STR: {
		uint32_t id = ph_col_str(tb, col)[r];
		const struct ph_strtab *st = &c->aux->trace->strs;

		if (!id || id >= st->n)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_text(ctx, st->strs[id], (int)st->len[id],
					    SQLITE_STATIC);
		break;
	}
	}
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)cur_row((struct vt_cur *)cur);
	return SQLITE_OK;
}

static const sqlite3_module vt_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only */
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

static void aux_free(void *p)
{
	struct vt_aux *aux = p;

	for (uint32_t c = 0; c < aux->tb->ncols; c++)
		free(aux->perm[c]);
	free(aux->perm);
	free(aux);
}

static void fn_bound(sqlite3_context *ctx, int nargs, sqlite3_value **args)
{
	struct ph_trace *t = sqlite3_user_data(ctx);

	(void)nargs;
	(void)args;
	sqlite3_result_int64(ctx, t->first_ts);
}

static void fn_end(sqlite3_context *ctx, int nargs, sqlite3_value **args)
{
	struct ph_trace *t = sqlite3_user_data(ctx);

	(void)nargs;
	(void)args;
	sqlite3_result_int64(ctx, t->last_ts);
}

static void fn_to_mono(sqlite3_context *ctx, int nargs, sqlite3_value **args)
{
	struct ph_trace *t = sqlite3_user_data(ctx);
	int64_t v;

	(void)nargs;
	if (sqlite3_value_type(args[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	v = ph_trace_to_clock(t, sqlite3_value_int64(args[0]),
			      PH_CLK_MONOTONIC);
	if (v == PH_NULL_I64)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, v);
}

static const char views[] =
	"CREATE TEMP VIEW thread_track AS SELECT id, name, type, utid "
	"FROM track WHERE type = 'thread';"
	"CREATE TEMP VIEW process_track AS SELECT id, name, type, upid "
	"FROM track WHERE type = 'process';"
	"CREATE TEMP VIEW counter_track AS SELECT id, name, type, upid, cpu "
	"FROM track WHERE type IN ('counter', 'cpu_counter');"
	"CREATE TEMP VIEW process_counter_track AS SELECT id, name, type, "
	"upid FROM track WHERE type = 'counter' AND upid IS NOT NULL;"
	"CREATE TEMP VIEW cpu_counter_track AS SELECT id, name, type, cpu "
	"FROM track WHERE type = 'cpu_counter';"
	"CREATE TEMP VIEW sched_slice AS SELECT * FROM sched;"
	"CREATE TEMP VIEW trace_bounds AS SELECT trace_start() AS start_ts, "
	"trace_end() AS end_ts;";

int ph_trace_sql_open(struct ph_trace *t, sqlite3 **out)
{
	sqlite3 *db;
	char *err = NULL;

	*out = NULL;
	if (sqlite3_open_v2(":memory:", &db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return ph_error(PH_ENOMEM, "sqlite3_open failed");
	}
	for (int i = 0; i < PH_T_COUNT; i++) {
		struct vt_aux *aux = calloc(1, sizeof(*aux));

		if (!aux)
			goto nomem;
		aux->trace = t;
		aux->tb = &t->tables[i];
		aux->perm = calloc(aux->tb->ncols, sizeof(uint32_t *));
		aux->ts_sorted = i == PH_T_SLICE || i == PH_T_SCHED ||
				 i == PH_T_TSTATE;
		if (!aux->perm ||
		    sqlite3_create_module_v2(db, aux->tb->name, &vt_module, aux,
					     aux_free) != SQLITE_OK) {
			free(aux ? aux->perm : NULL);
			free(aux);
			goto nomem;
		}
	}
	sqlite3_create_function(db, "trace_start", 0,
				SQLITE_UTF8 | SQLITE_DETERMINISTIC, t, fn_bound,
				NULL, NULL);
	sqlite3_create_function(db, "trace_end", 0,
				SQLITE_UTF8 | SQLITE_DETERMINISTIC, t, fn_end,
				NULL, NULL);
	sqlite3_create_function(db, "to_monotonic", 1,
				SQLITE_UTF8 | SQLITE_DETERMINISTIC, t,
				fn_to_mono, NULL, NULL);
	if (ph_trace_spanjoin_register(db, t->last_ts) ||
	    sqlite3_exec(db, views, NULL, NULL, &err) != SQLITE_OK) {
		ph_error(PH_EINVAL, "trace views: %s", err ? err : "?");
		sqlite3_free(err);
		sqlite3_close(db);
		return PH_EINVAL;
	}
	*out = db;
	return 0;
nomem:
	sqlite3_close(db);
	return ph_error(PH_ENOMEM, "out of memory opening the trace tables");
}
