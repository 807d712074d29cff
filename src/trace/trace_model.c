/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_model.c: the trace's columnar tables (their schema, growth in
 * huge-page-aligned blocks), its life cycle and event buffer, stats and
 * metadata, the process, thread and track tables the decoders fill, and
 * clock conversion.  The hash map and string table are in
 * trace_intern.c, atrace payload parsing in trace_atrace.c, and
 * ph_trace_finish()'s time sort and state machines in trace_finish.c.
 *
 * The tables follow what the field's trace processor documents for its
 * schema, so detector SQL written against it reads the same here; the
 * code is ours.
 */
#include "ph_common.h"
#include "trace/trace.h"
#include "trace/trace_int.h"

#include <sys/mman.h>

/* --- schema -------------------------------------------------------------- */

static const struct ph_colspec process_cols[] = {
	{ "id", PH_COL_ID },	   { "upid", PH_COL_ID },
	{ "pid", PH_COL_I64 },	   { "name", PH_COL_STR },
	{ "cmdline", PH_COL_STR }, { "parent_upid", PH_COL_I64 },
	{ "uid", PH_COL_I64 },	   { "start_ts", PH_COL_I64 },
	{ "end_ts", PH_COL_I64 },
};
static const struct ph_colspec thread_cols[] = {
	{ "id", PH_COL_ID },	    { "utid", PH_COL_ID },
	{ "tid", PH_COL_I64 },	    { "name", PH_COL_STR },
	{ "upid", PH_COL_I64 },	    { "is_main_thread", PH_COL_I64 },
	{ "start_ts", PH_COL_I64 }, { "end_ts", PH_COL_I64 },
};
static const struct ph_colspec track_cols[] = {
	{ "id", PH_COL_ID },	{ "name", PH_COL_STR }, { "type", PH_COL_STR },
	{ "utid", PH_COL_I64 }, { "upid", PH_COL_I64 }, { "cpu", PH_COL_I64 },
	{ "uuid", PH_COL_I64 },
};
static const struct ph_colspec slice_cols[] = {
	{ "id", PH_COL_ID },	    { "ts", PH_COL_I64 },
	{ "dur", PH_COL_I64 },	    { "track_id", PH_COL_I64 },
	{ "category", PH_COL_STR }, { "name", PH_COL_STR },
	{ "depth", PH_COL_I32 },    { "parent_id", PH_COL_I64 },
	{ "cookie", PH_COL_I64 },
};
/*
 * sched and thread_state are the big tables (a row per switch, up to
 * three per switch): their utids, row numbers of thread, are kept in 32
 * bits, which SQL reads as the same integers.
 */
static const struct ph_colspec sched_cols[] = {
	{ "id", PH_COL_ID },	    { "ts", PH_COL_I64 },
	{ "dur", PH_COL_I64 },	    { "cpu", PH_COL_I32 },
	{ "utid", PH_COL_I32 },	    { "end_state", PH_COL_STR },
	{ "priority", PH_COL_I32 },
};
static const struct ph_colspec tstate_cols[] = {
	{ "id", PH_COL_ID },	      { "ts", PH_COL_I64 },
	{ "dur", PH_COL_I64 },	      { "cpu", PH_COL_I32 },
	{ "utid", PH_COL_I32 },	      { "state", PH_COL_STR },
	{ "io_wait", PH_COL_I32 },    { "blocked_function", PH_COL_STR },
	{ "waker_utid", PH_COL_I32 },
};
static const struct ph_colspec counter_cols[] = {
	{ "id", PH_COL_ID },
	{ "ts", PH_COL_I64 },
	{ "track_id", PH_COL_I64 },
	{ "value", PH_COL_F64 },
};
static const struct ph_colspec frame_cols[] = {
	{ "id", PH_COL_ID },
	{ "ts", PH_COL_I64 },
	{ "dur", PH_COL_I64 },
	{ "name", PH_COL_STR },
	{ "upid", PH_COL_I64 },
	{ "display_frame_token", PH_COL_I64 },
	{ "surface_frame_token", PH_COL_I64 },
	{ "layer_name", PH_COL_STR },
	{ "present_type", PH_COL_STR },
	{ "on_time_finish", PH_COL_I32 },
	{ "gpu_composition", PH_COL_I32 },
	{ "jank_type", PH_COL_STR },
	{ "prediction_type", PH_COL_STR },
	{ "jank_severity_type", PH_COL_STR },
	{ "is_surface", PH_COL_I32 },
	{ "cookie", PH_COL_I64 },
};
static const struct ph_colspec log_cols[] = {
	{ "id", PH_COL_ID },	{ "ts", PH_COL_I64 },  { "utid", PH_COL_I64 },
	{ "prio", PH_COL_I32 }, { "tag", PH_COL_STR }, { "msg", PH_COL_STR },
};
static const struct ph_colspec stats_cols[] = {
	{ "id", PH_COL_ID },
	{ "name", PH_COL_STR },
	{ "value", PH_COL_I64 },
};
static const struct ph_colspec meta_cols[] = {
	{ "id", PH_COL_ID },
	{ "name", PH_COL_STR },
	{ "str_value", PH_COL_STR },
	{ "int_value", PH_COL_I64 },
};
static const struct ph_colspec clocksnap_cols[] = {
	{ "id", PH_COL_ID },
	{ "snapshot_id", PH_COL_I64 },
	{ "clock_id", PH_COL_I64 },
	{ "ts", PH_COL_I64 },
};
static const struct ph_colspec instant_cols[] = {
	{ "id", PH_COL_ID },
	{ "ts", PH_COL_I64 },
	{ "track_id", PH_COL_I64 },
	{ "name", PH_COL_STR },
};
/* perf samples: the stack as short names, root first, ';' between */
static const struct ph_colspec sample_cols[] = {
	{ "id", PH_COL_ID },	 { "ts", PH_COL_I64 },
	{ "utid", PH_COL_I64 },	 { "cpu", PH_COL_I32 },
	{ "leaf", PH_COL_STR },	 { "app_frame", PH_COL_STR },
	{ "stack", PH_COL_STR },
};

#define SPEC(n, a)                     \
	{                              \
		n, a, PH_ARRAY_SIZE(a) \
	}
static const struct {
	const char *name;
	const struct ph_colspec *spec;
	uint32_t n;
} schema[PH_T_COUNT] = {
	[PH_T_PROCESS] = SPEC("process", process_cols),
	[PH_T_THREAD] = SPEC("thread", thread_cols),
	[PH_T_TRACK] = SPEC("track", track_cols),
	[PH_T_SLICE] = SPEC("slice", slice_cols),
	[PH_T_SCHED] = SPEC("sched", sched_cols),
	[PH_T_TSTATE] = SPEC("thread_state", tstate_cols),
	[PH_T_COUNTER] = SPEC("counter", counter_cols),
	[PH_T_AFRAME] = SPEC("actual_frame_timeline_slice", frame_cols),
	[PH_T_EFRAME] = SPEC("expected_frame_timeline_slice", frame_cols),
	[PH_T_LOG] = SPEC("android_logs", log_cols),
	[PH_T_STATS] = SPEC("stats", stats_cols),
	[PH_T_META] = SPEC("metadata", meta_cols),
	[PH_T_CLOCKSNAP] = SPEC("clock_snapshot", clocksnap_cols),
	[PH_T_INSTANT] = SPEC("instant", instant_cols),
	[PH_T_SAMPLE] = SPEC("perf_sample", sample_cols),
};

static size_t col_size(int type)
{
	switch (type) {
	case PH_COL_I64:
	case PH_COL_F64: return 8;
	case PH_COL_I32:
	case PH_COL_STR: return 4;
	default: return 0;
	}
}

/* Fills rows [from, to) of every column with its NULL. */
static void fill_null(struct ph_table *tb, size_t from, size_t to)
{
	for (uint32_t c = 0; c < tb->ncols; c++) {
		switch (tb->spec[c].type) {
		case PH_COL_I64:
			for (size_t r = from; r < to; r++)
				((int64_t *)tb->data[c])[r] = PH_NULL_I64;
			break;
		case PH_COL_I32:
			for (size_t r = from; r < to; r++)
				((int32_t *)tb->data[c])[r] = PH_NULL_I32;
			break;
		case PH_COL_F64:
		case PH_COL_STR:
			memset((char *)tb->data[c] +
				       from * col_size(tb->spec[c].type),
			       0, (to - from) * col_size(tb->spec[c].type));
			break;
		default: break;
		}
	}
}

/* --- big blocks ---------------------------------------------------------- */

/*
 * A big block (BIG_BLOCK or more) is a mapping of its own, a whole number
 * of 2 MiB huge pages starting on one, advised as a whole.  malloc's big
 * chunks start 16 bytes past a page, so their ragged ends faulted 4 KiB
 * at a time; and advising only the aligned middle of one split its
 * mapping in three, after which glibc's realloc could no longer mremap it
 * (EFAULT: not one mapping) and copied the whole block at every growth,
 * a tenth of a Perfetto trace's ingest.  A mapping of our own grows with
 * mremap, which moves page tables, never bytes.  Under AddressSanitizer
 * they are malloc's (PH_TRACE_BIG_MALLOC).
 */
#ifdef PH_TRACE_BIG_MALLOC
void *ph_trace_big_realloc(void *p, size_t old_bytes, size_t bytes)
{
	(void)old_bytes;
	return realloc(p, bytes);
}

void ph_trace_big_free(void *p, size_t bytes)
{
	(void)bytes;
	free(p);
}
#else
#define HUGE_PAGE ((size_t)2 << 20)
#define BIG_BLOCK (2 * HUGE_PAGE)

static size_t big_len(size_t bytes)
{
	return (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

/* len bytes (a multiple of HUGE_PAGE) on a HUGE_PAGE boundary, or NULL. */
static void *big_map(size_t len)
{
	char *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t head;

	if (m == MAP_FAILED)
		return NULL;
	/* the slack either side of the aligned block is given back */
	head = (size_t)(-(uintptr_t)m & (HUGE_PAGE - 1));
	if (head)
		(void)munmap(m, head);
	(void)munmap(m + head + len, HUGE_PAGE - head);
	/* advised before the first write, which would fault in 4 KiB */
	(void)madvise(m + head, len, MADV_HUGEPAGE);
	return m + head;
}

void *ph_trace_big_realloc(void *p, size_t old_bytes, size_t bytes)
{
	bool was_big = p && old_bytes >= BIG_BLOCK, big = bytes >= BIG_BLOCK;
	void *q;

	if (bytes && big_len(bytes) < bytes)
		return NULL; /* the size wraps */
	if (!was_big && !big)
		return realloc(p, bytes);
	if (was_big && big && bytes <= old_bytes) {
		/* A tail left mapped by a failed munmap stays until exit:
		 * the block is freed at its new size. */
		if (big_len(bytes) < big_len(old_bytes))
			(void)munmap((char *)p + big_len(bytes),
				     big_len(old_bytes) - big_len(bytes));
		return p;
	}
	if (was_big && big) {
		q = mremap(p, big_len(old_bytes), big_len(bytes),
			   MREMAP_MAYMOVE);
		return q == MAP_FAILED ? NULL : q;
	}
	/* into or out of the big blocks: one copy */
	q = big ? big_map(big_len(bytes)) : malloc(bytes);
	if (!q)
		return NULL;
	if (p)
		memcpy(q, p, old_bytes < bytes ? old_bytes : bytes);
	ph_trace_big_free(p, old_bytes);
	return q;
}

void ph_trace_big_free(void *p, size_t bytes)
{
	if (p && bytes >= BIG_BLOCK)
		(void)munmap(p, big_len(bytes));
	else
		free(p);
}
#endif

static int table_grow(struct ph_table *tb, size_t cap)
{
	for (uint32_t c = 0; c < tb->ncols; c++) {
		size_t sz = col_size(tb->spec[c].type);
		void *p;

		if (!sz)
			continue;
		/* a column grown before one that fails keeps its room */
		if (tb->bytes[c] >= cap * sz)
			continue;
		p = ph_trace_big_realloc(tb->data[c], tb->bytes[c], cap * sz);
		if (!p)
			return PH_ENOMEM;
		tb->data[c] = p;
		tb->bytes[c] = cap * sz;
	}
	tb->cap = cap;
	return 0;
}

int ph_table_reserve(struct ph_table *tb, size_t n)
{
	return n > tb->cap ? table_grow(tb, n) : 0;
}

void ph_table_trim(struct ph_table *tb)
{
	if (!tb->filled || tb->filled >= tb->cap)
		return;
	for (uint32_t c = 0; c < tb->ncols; c++) {
		size_t sz = col_size(tb->spec[c].type);
		void *p;

		/* a column a failed shrink leaves bigger is still safe */
		if (sz && (p = ph_trace_big_realloc(tb->data[c], tb->bytes[c],
						    tb->filled * sz))) {
			tb->data[c] = p;
			tb->bytes[c] = tb->filled * sz;
		}
	}
	tb->cap = tb->filled;
}

/*
 * Rows [rows, filled) are NULL-filled ahead, a chunk at a time, so adding
 * one is a bounds check and an increment, and the fill touches memory
 * just before the rows are written (while it is in the cache) and never
 * past the rows in use: capacity beyond them stays untouched pages.
 */
#define FILL_CHUNK 2048

int64_t ph_table_add_slow(struct ph_table *tb)
{
	if (tb->rows == tb->filled) {
		size_t to;

		if (tb->filled == tb->cap &&
		    table_grow(tb, tb->cap ? tb->cap * 2 : 256))
			return -1;
		to = tb->filled + FILL_CHUNK < tb->cap ?
			     tb->filled + FILL_CHUNK :
			     tb->cap;
		fill_null(tb, tb->filled, to);
		tb->filled = to;
	}
	return (int64_t)tb->rows++;
}

uint64_t *ph_trace_radix_packed(uint64_t *a, uint64_t *b, size_t n,
				int idx_bits, int key_bits)
{
	for (int shift = idx_bits;
	     n && shift < 64 && shift < idx_bits + key_bits; shift += 11) {
		size_t count[2048] = { 0 }, pos = 0;
		uint64_t *tmp;

		for (size_t i = 0; i < n; i++)
			count[(a[i] >> shift) & 2047]++;
		if (count[(a[0] >> shift) & 2047] == n)
			continue; /* one digit value: nothing to move */
		for (int d = 0; d < 2048; d++) {
			size_t c = count[d];

			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[(a[i] >> shift) & 2047]++] = a[i];
		tmp = a;
		a = b;
		b = tmp;
	}
	return a;
}

/* --- life cycle ---------------------------------------------------------- */

int ph_trace_init(struct ph_trace *t)
{
	memset(t, 0, sizeof(*t));
	t->text_rejected_at = -1;
	for (int i = 0; i < PH_T_COUNT; i++) {
		struct ph_table *tb = &t->tables[i];

		tb->name = schema[i].name;
		tb->spec = schema[i].spec;
		tb->ncols = schema[i].n;
		tb->data = calloc(tb->ncols, sizeof(void *));
		tb->bytes = calloc(tb->ncols, sizeof(size_t));
		if (!tb->data || !tb->bytes)
			goto nomem;
	}
	ph_arena_init(&t->strs.arena, 1 << 20, SIZE_MAX);
	t->strs.n = 1;
	t->strs.alloc = 0;
	t->pid_upid = ph_intmap_new();
	t->tid_utid = ph_intmap_new();
	t->uuid_track = ph_intmap_new();
	t->trk_keys = ph_intmap_new();
	t->priv = calloc(1, sizeof(struct ph_trace_priv));
	if (!t->pid_upid || !t->tid_utid || !t->uuid_track || !t->trk_keys ||
	    !t->priv)
		goto nomem;
	t->first_ts = INT64_MAX;
	t->last_ts = INT64_MIN;
	t->format = "unknown";
	t->clock_name = "unknown";
	/* upid 0 and utid 0 are the idle process and swapper, as in the
	 * field's trace processor, so sched rows of idle CPUs have a thread */
	if (ph_trace_upid(t, 0) != 0 || ph_trace_utid(t, 0) != 0 ||
	    t->tables[PH_T_PROCESS].rows != 1 ||
	    t->tables[PH_T_THREAD].rows != 1)
		goto nomem;
	ph_trace_thread_set_name(t, 0, ph_trace_intern(t, "swapper", 7));
	ph_trace_thread_set_pid(t, 0, 0);
	if (!ph_col_str(&t->tables[PH_T_THREAD], TH_NAME)[0])
		goto nomem;
	return 0;
nomem:
	ph_trace_release(t);
	return PH_ENOMEM;
}

static void priv_release(struct ph_trace_priv *pv)
{
	if (!pv)
		return;
	for (size_t i = 0; i < pv->nstacks; i++)
		free(pv->stacks[i].rows);
	free(pv->stacks);
	if (pv->tid_dir)
		for (size_t i = 0; i < PH_TID_DIRECT / PH_TID_PAGE; i++)
			free(pv->tid_dir[i]);
	free(pv->tid_dir);
	free(pv->cpu_sched);
	free(pv->cpu_utid);
	free(pv->cpu_seen);
	free(pv->ts_open);
	ph_intmap_free(pv->async_open);
	ph_intmap_free(pv->frame_cookie);
	ph_intmap_free(pv->stat_ids);
	free(pv->snaps);
	free(pv);
}

void ph_trace_release(struct ph_trace *t)
{
	for (int i = 0; i < PH_T_COUNT; i++) {
		struct ph_table *tb = &t->tables[i];

		for (uint32_t c = 0; c < tb->ncols && tb->data && tb->bytes;
		     c++)
			ph_trace_big_free(tb->data[c], tb->bytes[c]);
		free(tb->data);
		free(tb->bytes);
	}
	free(t->strs.strs);
	free(t->strs.len);
	free(t->strs.slots);
	ph_arena_release(&t->strs.arena);
	ph_trace_big_free(t->ev, t->evcap * sizeof(*t->ev));
	ph_intmap_free(t->pid_upid);
	ph_intmap_free(t->tid_utid);
	ph_intmap_free(t->uuid_track);
	ph_intmap_free(t->trk_keys);
	priv_release(t->priv);
	memset(t, 0, sizeof(*t));
}

void ph_trace_free(struct ph_trace *t)
{
	if (!t)
		return;
	ph_trace_release(t);
	free(t);
}

static int ev_grow(struct ph_trace *t, size_t cap)
{
	struct ph_tev *e = ph_trace_big_realloc(t->ev, t->evcap * sizeof(*e),
						cap * sizeof(*e));

	if (!e)
		return PH_ENOMEM;
	t->ev = e;
	t->evcap = cap;
	return 0;
}

int ph_trace_reserve(struct ph_trace *t, size_t n)
{
	if (t->nev + n <= t->evcap)
		return 0;
	return ev_grow(t, t->nev + n);
}

struct ph_tev *ph_trace_push_grow(struct ph_trace *t)
{
	if (t->nev == t->evcap && ev_grow(t, t->evcap ? t->evcap * 2 : 4096))
		return NULL;
	return memset(&t->ev[t->nev++], 0, sizeof(struct ph_tev));
}

/* --- stats and metadata -------------------------------------------------- */

void ph_trace_stat(struct ph_trace *t, const char *name, int64_t n)
{
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *tb = &t->tables[PH_T_STATS];
	size_t slot = ((uintptr_t)name >> 3) & 255;
	uint32_t sid, row;
	int64_t r;

	/* names are string literals: the pointer is a cheap first key */
	if (pv->stat_key[slot] == name) {
		ph_col_i64(tb, ST_VALUE)[pv->stat_row[slot]] += n;
		return;
	}
	sid = ph_trace_intern(t, name, strlen(name));
	if (!pv->stat_ids)
		pv->stat_ids = ph_intmap_new();
	if (pv->stat_ids && ph_intmap_get(pv->stat_ids, sid, &row)) {
		ph_col_i64(tb, ST_VALUE)[row] += n;
		pv->stat_key[slot] = name;
		pv->stat_row[slot] = row;
		return;
	}
	r = ph_table_add(tb);
	if (r < 0)
		return;
	pv->stat_key[slot] = name;
	pv->stat_row[slot] = (uint32_t)r;
	ph_col_str(tb, ST_NAME)[r] = sid;
	ph_col_i64(tb, ST_VALUE)[r] = n;
	if (pv->stat_ids)
		(void)ph_intmap_put(pv->stat_ids, sid, (uint32_t)r);
}

int64_t ph_trace_stat_get(struct ph_trace *t, const char *name)
{
	struct ph_trace_priv *pv = t->priv;
	uint32_t sid = ph_trace_intern(t, name, strlen(name)), row;

	if (pv->stat_ids && ph_intmap_get(pv->stat_ids, sid, &row))
		return ph_col_i64(&t->tables[PH_T_STATS], ST_VALUE)[row];
	return 0;
}

void ph_trace_meta(struct ph_trace *t, const char *name, const char *s,
		   int64_t i)
{
	struct ph_table *tb = &t->tables[PH_T_META];
	int64_t r = ph_table_add(tb);

	if (r < 0)
		return;
	ph_col_str(tb, MT_NAME)[r] = ph_trace_intern(t, name, strlen(name));
	if (s)
		ph_col_str(tb, MT_STR)[r] = ph_trace_intern(t, s, strlen(s));
	ph_col_i64(tb, MT_INT)[r] = i;
}

/* --- processes, threads, tracks ------------------------------------------ */

int64_t ph_trace_upid(struct ph_trace *t, int64_t pid)
{
	struct ph_table *tb = &t->tables[PH_T_PROCESS];
	uint32_t v;
	int64_t r;

	if (ph_intmap_get(t->pid_upid, (uint64_t)pid, &v) &&
	    v != UINT32_MAX - 1)
		return v;
	r = ph_table_add(tb);
	if (r < 0)
		return 0;
	ph_col_i64(tb, P_PID)[r] = pid;
	(void)ph_intmap_put(t->pid_upid, (uint64_t)pid, (uint32_t)r);
	return r;
}

/* The direct table's slot for tid (made on first use), or NULL. */
static uint32_t *tid_slot(struct ph_trace_priv *pv, int64_t tid)
{
	uint32_t **pg;

	if ((uint64_t)tid >= PH_TID_DIRECT)
		return NULL;
	if (!pv->tid_dir && !(pv->tid_dir = calloc(PH_TID_DIRECT / PH_TID_PAGE,
						   sizeof(*pv->tid_dir))))
		return NULL;
	pg = &pv->tid_dir[(uint64_t)tid / PH_TID_PAGE];
	if (!*pg && !(*pg = calloc(PH_TID_PAGE, sizeof(**pg))))
		return NULL;
	return &(*pg)[(uint64_t)tid % PH_TID_PAGE];
}

int64_t ph_trace_utid(struct ph_trace *t, int64_t tid)
{
	struct ph_table *tb = &t->tables[PH_T_THREAD];
	struct ph_trace_priv *pv = t->priv;
	uint32_t v, *slot;
	int64_t r = ph_utid_known(pv, tid);

	if (r >= 0)
		return r;
	slot = tid_slot(pv, tid);
	if (!slot && ph_intmap_get(t->tid_utid, (uint64_t)tid, &v) &&
	    v != UINT32_MAX - 1)
		return v;
	r = ph_table_add(tb);
	if (r < 0)
		return 0;
	ph_col_i64(tb, TH_TID)[r] = tid;
	if (slot)
		*slot = (uint32_t)r + 1;
	else
		(void)ph_intmap_put(t->tid_utid, (uint64_t)tid, (uint32_t)r);
	return r;
}

void ph_trace_utid_forget(struct ph_trace *t, int64_t tid)
{
	struct ph_trace_priv *pv = t->priv;

	/* A direct tid whose slot could not be allocated went to the map
	 * (ph_trace_utid), so a tid not in its slot is cleared there too. */
	if ((uint64_t)tid < PH_TID_DIRECT && ph_utid_known(pv, tid) >= 0) {
		*tid_slot(pv, tid) = 0;
		return;
	}
	ph_intmap_del(t->tid_utid, (uint64_t)tid);
}

void ph_trace_thread_set_pid(struct ph_trace *t, int64_t utid, int64_t pid)
{
	struct ph_table *th = &t->tables[PH_T_THREAD];
	int64_t upid;

	if (utid < 0 || (size_t)utid >= th->rows || pid < 0)
		return;
	upid = ph_col_i64(th, TH_UPID)[utid];
	if (upid != PH_NULL_I64 &&
	    ph_col_i64(&t->tables[PH_T_PROCESS], P_PID)[upid] == pid)
		return;
	upid = ph_trace_upid(t, pid);
	ph_col_i64(th, TH_UPID)[utid] = upid;
	ph_col_i64(th, TH_MAIN)[utid] = ph_col_i64(th, TH_TID)[utid] == pid;
}

void ph_trace_thread_set_name(struct ph_trace *t, int64_t utid, uint32_t s)
{
	struct ph_table *th = &t->tables[PH_T_THREAD];

	if (utid >= 0 && (size_t)utid < th->rows && s)
		ph_col_str(th, TH_NAME)[utid] = s;
}

void ph_trace_process_set_name(struct ph_trace *t, int64_t upid, uint32_t s,
			       bool cmdline)
{
	struct ph_table *p = &t->tables[PH_T_PROCESS];

	if (upid < 0 || (size_t)upid >= p->rows || !s)
		return;
	if (cmdline)
		ph_col_str(p, P_CMDLINE)[upid] = s;
	/* a cmdline is a better name than a comm, which is cut at 15 bytes */
	if (cmdline || !ph_col_str(p, P_NAME)[upid])
		ph_col_str(p, P_NAME)[upid] = s;
}

static const char *const kind_names[] = { "thread", "process", "counter",
					  "cpu_counter", "global" };

int64_t ph_trace_track_new(struct ph_trace *t, int kind, uint32_t name,
			   int64_t utid, int64_t upid, int64_t cpu)
{
	struct ph_table *tb = &t->tables[PH_T_TRACK];
	struct ph_trace_priv *pv = t->priv;
	int64_t r = ph_table_add(tb);

	if (r < 0)
		return 0;
	if (!pv->kind_ids[0])
		for (int i = 0; i < 5; i++)
			pv->kind_ids[i] = ph_trace_intern(
				t, kind_names[i], strlen(kind_names[i]));
	ph_col_str(tb, TR_NAME)[r] = name;
	ph_col_str(tb, TR_KIND)[r] = pv->kind_ids[kind];
	ph_col_i64(tb, TR_UTID)[r] = utid;
	ph_col_i64(tb, TR_UPID)[r] = upid;
	ph_col_i64(tb, TR_CPU)[r] = cpu;
	return r;
}

int64_t ph_trace_thread_track(struct ph_trace *t, int64_t utid)
{
	uint64_t key = ((uint64_t)PH_TK_THREAD << 60) | (uint64_t)utid;
	uint32_t v;
	int64_t r;

	if (ph_intmap_get(t->trk_keys, key, &v))
		return v;
	r = ph_trace_track_new(t, PH_TK_THREAD, 0, utid, PH_NULL_I64,
			       PH_NULL_I64);
	(void)ph_intmap_put(t->trk_keys, key, (uint32_t)r);
	return r;
}

int64_t ph_trace_keyed_track(struct ph_trace *t, int kind, uint32_t name,
			     int64_t upid, int64_t cpu)
{
	uint64_t key = ((uint64_t)kind << 60) ^ ((uint64_t)(upid + 1) << 32) ^
		       (uint64_t)name ^ ((uint64_t)(cpu + 1) << 48);
	uint32_t v;
	int64_t r;

	if (ph_intmap_get(t->trk_keys, key, &v))
		return v;
	r = ph_trace_track_new(t, kind, name, PH_NULL_I64, upid, cpu);
	(void)ph_intmap_put(t->trk_keys, key, (uint32_t)r);
	return r;
}

void ph_trace_counter(struct ph_trace *t, int64_t ts, int64_t track,
		      double value)
{
	struct ph_table *tb = &t->tables[PH_T_COUNTER];
	int64_t r = ph_table_add_full(tb);

	if (r < 0)
		return;
	ph_col_i64(tb, CT_TS)[r] = ts;
	ph_col_i64(tb, CT_TRACK)[r] = track;
	ph_col_f64(tb, CT_VALUE)[r] = value;
}

bool ph_trace_thermal(struct ph_trace *t, int64_t ts, const char *name,
		      size_t n, bool cdev, double value)
{
	const char *suffix = cdev ? " Cooling Device" : " Temperature";
	char buf[160];
	struct ph_tev *e;
	int k;

	if (n > 128)
		n = 128; /* a zone name is short; a hostile one is cut */
	k = snprintf(buf, sizeof(buf), "%.*s%s", (int)n, name, suffix);
	if (!(e = ph_trace_push(t)))
		return false;
	e->kind = PH_EV_GCOUNTER;
	e->ts = ts;
	e->s1 = ph_trace_intern(t, buf, (size_t)k);
	e->v.f = value;
	return true;
}

/* --- clocks -------------------------------------------------------------- */

int64_t ph_trace_to_clock(const struct ph_trace *t, int64_t ts, int clock)
{
	const struct ph_trace_priv *pv = t->priv;
	const struct ph_snap *best = NULL;

	if (clock == t->trace_clock || !t->trace_clock)
		return ts;
	/* the latest snapshot at or before ts; else the first one */
	for (size_t i = 0; i < pv->nsnaps; i++) {
		const struct ph_snap *s = &pv->snaps[i];

		if (s->clk[t->trace_clock] == PH_NULL_I64 ||
		    s->clk[clock] == PH_NULL_I64)
			continue;
		if (!best || s->clk[t->trace_clock] <= ts)
			best = s;
		if (s->clk[t->trace_clock] > ts)
			break;
	}
	if (!best)
		return PH_NULL_I64;
	{
		/* hostile snapshots can make this overflow: then unknown */
		int64_t d, r;

		if (__builtin_sub_overflow(ts, best->clk[t->trace_clock], &d) ||
		    __builtin_add_overflow(d, best->clk[clock], &r))
			return PH_NULL_I64;
		return r;
	}
}
