/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for Perfetto protobuf ingestion's fast paths: each is checked
 * against what it must equal.
 *  - event order: ph_trace_finish runs events stably by timestamp whether
 *    it merges sorted runs or radix-sorts (it picks by how many runs);
 *  - field order: the hot messages decoded from Perfetto's layout (fields
 *    in order, padded lengths) and from any other layout give the same
 *    tables;
 *  - clocks: a packet on another clock converts through the last snapshot
 *    at or before it (else the first), also when snapshots arrive later
 *    and out of order;
 *  - tids: the direct tid table and the map for other tids both forget a
 *    thread that exited;
 *  - big blocks: the event array and the columns start on huge pages.
 */
#include "ph_common.h"
#include "harness.h"
#include "trace/trace.h"

/* --- a protobuf writer, enough to build traces -------------------------- */

static bool pb_varint(struct ph_buf *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return !ph_buf_add(o, b, n);
}

static bool pb_int(struct ph_buf *o, uint32_t id, uint64_t v)
{
	return pb_varint(o, (uint64_t)id << 3) && pb_varint(o, v);
}

/* Length-delimited; pad: the length in 4 bytes, as Perfetto writes it. */
static bool pb_bytes(struct ph_buf *o, uint32_t id, const void *p, size_t n,
		     bool pad)
{
	if (!pb_varint(o, (uint64_t)id << 3 | 2))
		return false;
	if (pad) {
		uint8_t b[4] = { (uint8_t)(0x80 | (n & 0x7f)),
				 (uint8_t)(0x80 | (n >> 7 & 0x7f)),
				 (uint8_t)(0x80 | (n >> 14 & 0x7f)),
				 (uint8_t)(n >> 21 & 0x7f) };

		if (ph_buf_add(o, b, 4))
			return false;
	} else if (!pb_varint(o, n)) {
		return false;
	}
	return !ph_buf_add(o, p, n);
}

static bool pb_msg(struct ph_buf *o, uint32_t id, struct ph_buf *m, bool pad)
{
	bool ok = pb_bytes(o, id, m->buf, m->len, pad);

	ph_buf_reset(m);
	return ok;
}

/* A digest of every table's contents (strings by their text). */
static uint64_t digest(struct ph_trace *t)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < PH_T_COUNT; i++) {
		struct ph_table *tb = &t->tables[i];

		if (i == PH_T_STATS)
			continue; /* counts how the bytes were laid out */
		h = (h ^ tb->rows) * 1099511628211ull;
		for (uint32_t c = 0; c < tb->ncols; c++) {
			for (size_t r = 0; r < tb->rows; r++) {
				uint64_t v = 0;

				switch (tb->spec[c].type) {
				case PH_COL_I64:
				case PH_COL_F64:
					memcpy(&v, (char *)tb->data[c] + r * 8,
					       8);
					break;
				case PH_COL_I32:
					v = (uint32_t)ph_col_i32(tb, c)[r];
					break;
				case PH_COL_STR: {
					const char *s = ph_trace_str(
						t, ph_col_str(tb, c)[r]);

					v = s ? ph_trace_strhash(s, strlen(s)) :
						7;
					break;
				}
				default: continue;
				}
				h = (h ^ v) * 1099511628211ull;
			}
		}
	}
	return h;
}

/* --- event order ---------------------------------------------------------- */

/* Pushes events at ts[] as global counter events (value: the push index),
 * finishes, and checks the counter rows came out by (ts, push index);
 * ts[0] must be the earliest. */
static void check_order(const int64_t *ts, int n)
{
	struct ph_trace t;
	struct ph_table *ct;
	bool ok = true;

	CHECK_INT(ph_trace_init(&t), 0);
	for (int i = 0; i < n; i++) {
		struct ph_tev *e = ph_trace_push(&t);

		CHECK(e);
		e->kind = PH_EV_GCOUNTER;
		e->ts = ts[i];
		e->s1 = ph_trace_intern(&t, "order", 5);
		e->v.f = i;
	}
	CHECK_INT(ph_trace_finish(&t), 0);
	ct = &t.tables[PH_T_COUNTER];
	if (ct->rows != (size_t)n)
		ok = false;
	for (size_t r = 1; ok && r < ct->rows; r++) {
		int64_t a = ph_col_i64(ct, CT_TS)[r - 1];
		int64_t b = ph_col_i64(ct, CT_TS)[r];

		if (a > b || (a == b && ph_col_f64(ct, CT_VALUE)[r - 1] >=
						ph_col_f64(ct, CT_VALUE)[r]))
			ok = false;
	}
	CHECK_INT(t.first_ts, n ? ts[0] : 0);
	ph_trace_release(&t);
	CHECK(ok);
}

void test_trace_ingest__event_order_stable(void)
{
	enum { N = 6000, RUNS = 6 };
	static int64_t ts[N];
	uint64_t x = 88172645463325252ull;
	int i;

	/* six sorted runs over the same time range, with ties across them
	 * (the merge); pushed run after run */
	for (i = 0; i < N; i++)
		ts[i] = 1000 + (i % (N / RUNS)) * 3 + (i / (N / RUNS)) % 2;
	check_order(ts, N);
	/* sorted already (no reordering) */
	for (i = 0; i < N; i++)
		ts[i] = 1000 + i / 3;
	check_order(ts, N);
	/* shuffled, with many equal timestamps (the radix sort) */
	for (i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ts[i] = 1001 + (int64_t)(x % 500);
	}
	ts[0] = 1000;
	check_order(ts, N);
	/* runs of three (too many to merge) */
	for (i = 0; i < N; i++)
		ts[i] = 1000 + (i / 3) * 2 + (2 - i % 3) * (i >= 3);
	check_order(ts, N);
	check_order(ts, 0);
}

/* --- field order ---------------------------------------------------------- */

/*
 * A trace of sched_switch, sched_waking and cpu_idle on two CPUs, written
 * the way Perfetto writes it (canon) or scrambled: fields reversed,
 * lengths unpadded, unknown fields between, the bundle's cpu after its
 * events, a field given twice (the last counts).
 */
static bool write_trace(struct ph_buf *o, bool canon)
{
	struct ph_buf pk = PH_BUF_INIT(1 << 20), bu = PH_BUF_INIT(1 << 20);
	struct ph_buf fe = PH_BUF_INIT(1 << 16), ev = PH_BUF_INIT(1 << 16);
	static const char *const comm[] = { "swapper/0", "main", "RenderThread",
					    "a-rather-long-c" };
	int64_t ts = 5000000000;
	bool ok = true;

	for (int b = 0; b < 12 && ok; b++) {
		int cpu = b % 2;

		if (canon)
			ok = ok && pb_int(&bu, 1, (uint64_t)cpu);
		/* the last bundle past 16 KB: a padded length of 3 groups */
		for (int k = 0; k < (b == 11 ? 600 : 20) && ok; k++) {
			int kind = k % 3, prev = (k + b) % 4,
			    next = (k + 1) % 4;
			uint32_t id = kind == 0 ? 4 : kind == 1 ? 20 : 13;

			ts += 1000 + k;
			if (kind == 0 && canon) {
				ok = pb_bytes(&ev, 1, comm[prev],
					      strlen(comm[prev]), false) &&
				     pb_int(&ev, 2, 100 + (uint64_t)prev) &&
				     pb_int(&ev, 3, 120) &&
				     pb_int(&ev, 4, (uint64_t)(k % 5)) &&
				     pb_bytes(&ev, 5, comm[next],
					      strlen(comm[next]), false) &&
				     pb_int(&ev, 6, 100 + (uint64_t)next) &&
				     pb_int(&ev, 7, 110 + (uint64_t)k);
			} else if (kind == 0) {
				ok = pb_int(&ev, 6, 999) &&
				     pb_int(&ev, 7, 110 + (uint64_t)k) &&
				     pb_int(&ev, 6, 100 + (uint64_t)next) &&
				     pb_int(&ev, 15, 1) &&
				     pb_bytes(&ev, 5, comm[next],
					      strlen(comm[next]), false) &&
				     pb_int(&ev, 4, (uint64_t)(k % 5)) &&
				     pb_int(&ev, 3, 120) &&
				     pb_int(&ev, 2, 100 + (uint64_t)prev) &&
				     pb_bytes(&ev, 1, comm[prev],
					      strlen(comm[prev]), false);
			} else if (kind == 1 && canon) {
				ok = pb_bytes(&ev, 1, comm[next],
					      strlen(comm[next]), false) &&
				     pb_int(&ev, 2, 100 + (uint64_t)next) &&
				     pb_int(&ev, 3, 120) && pb_int(&ev, 4, 1) &&
				     pb_int(&ev, 5, (uint64_t)cpu);
			} else if (kind == 1) {
				ok = pb_int(&ev, 5, (uint64_t)cpu) &&
				     pb_int(&ev, 4, 1) &&
				     pb_bytes(&ev, 99, "x", 1, false) &&
				     pb_int(&ev, 2, 100 + (uint64_t)next) &&
				     pb_bytes(&ev, 1, comm[next],
					      strlen(comm[next]), false);
			} else if (canon) {
				ok = pb_int(&ev, 1, (uint64_t)(k % 3)) &&
				     pb_int(&ev, 2, (uint64_t)cpu);
			} else {
				ok = pb_int(&ev, 2, (uint64_t)cpu) &&
				     pb_int(&ev, 1, (uint64_t)(k % 3));
			}
			if (canon)
				ok = ok && pb_int(&fe, 1, (uint64_t)ts) &&
				     pb_int(&fe, 2, 100) &&
				     pb_msg(&fe, id, &ev, true) &&
				     pb_msg(&bu, 2, &fe, true);
			else
				ok = ok && pb_msg(&fe, id, &ev, false) &&
				     pb_int(&fe, 2, 100) &&
				     pb_int(&fe, 1, (uint64_t)ts) &&
				     pb_msg(&bu, 2, &fe, false);
		}
		if (!canon)
			ok = ok && pb_int(&bu, 9, 7) &&
			     pb_int(&bu, 1, (uint64_t)cpu);
		ok = ok && pb_msg(&pk, 1, &bu, canon) && pb_int(&pk, 10, 1) &&
		     pb_msg(o, 1, &pk, canon);
	}
	ph_buf_release(&pk);
	ph_buf_release(&bu);
	ph_buf_release(&fe);
	ph_buf_release(&ev);
	return ok;
}

static size_t on_cpu1(struct ph_trace *t)
{
	struct ph_table *sc = &t->tables[PH_T_SCHED];
	size_t n = 0;

	for (size_t r = 0; r < sc->rows; r++)
		n += ph_col_i32(sc, SC_CPU)[r] == 1;
	return n;
}

void test_trace_ingest__field_order(void)
{
	struct ph_buf a = PH_BUF_INIT(1 << 24), b = PH_BUF_INIT(1 << 24);
	struct ph_trace ta, tb;
	uint64_t da, db;

	CHECK(write_trace(&a, true));
	CHECK(write_trace(&b, false));
	CHECK_INT(ph_trace_init(&ta), 0);
	CHECK_INT(ph_trace_init(&tb), 0);
	CHECK_INT(ph_trace_load_mem(&ta, a.buf, a.len), 0);
	CHECK_INT(ph_trace_load_mem(&tb, b.buf, b.len), 0);
	/* 11 bundles of 7 switches, 7 wakings, 6 cpu_idle; one of 200 each */
	CHECK_INT(ph_trace_stat_get(&ta, "ftrace.sched_switch"), 277);
	CHECK_INT(ph_trace_stat_get(&tb, "ftrace.sched_switch"), 277);
	CHECK_INT(ph_trace_stat_get(&ta, "ftrace.cpu_idle"), 266);
	CHECK_INT(ph_trace_stat_get(&tb, "ftrace.sched_waking"), 277);
	CHECK_INT(ta.tables[PH_T_SCHED].rows, 277);
	CHECK(ta.tables[PH_T_TSTATE].rows > 277);
	/* the bundles alternate between CPU 0 and 1, the big one on 1 */
	CHECK_INT(on_cpu1(&ta), 5 * 7 + 200);
	CHECK_INT(on_cpu1(&tb), 5 * 7 + 200);
	da = digest(&ta);
	db = digest(&tb);
	ph_trace_release(&ta);
	ph_trace_release(&tb);
	ph_buf_release(&a);
	ph_buf_release(&b);
	CHECK(da == db);
}

/* A truncated event ends its bundle's decoding where the walk would. */
void test_trace_ingest__field_order_truncated(void)
{
	struct ph_buf a = PH_BUF_INIT(1 << 24);

	CHECK(write_trace(&a, true));
	for (size_t cut = 7; cut < a.len; cut += a.len / 37) {
		struct ph_trace t;
		int rc;

		CHECK_INT(ph_trace_init(&t), 0);
		rc = ph_trace_load_mem(&t, a.buf, cut);
		CHECK(rc == PH_ECORRUPT || rc == 0);
		CHECK(t.err.offset <= cut);
		CHECK(t.tables[PH_T_SCHED].rows <= 277);
		ph_trace_release(&t);
	}
	ph_buf_release(&a);
}

/* --- clocks --------------------------------------------------------------- */

static bool snapshot(struct ph_buf *o, int64_t boot, int64_t mono)
{
	struct ph_buf c = PH_BUF_INIT(1 << 10), s = PH_BUF_INIT(1 << 10);
	struct ph_buf p = PH_BUF_INIT(1 << 10);
	bool ok = pb_int(&c, 1, PH_CLK_BOOTTIME) &&
		  pb_int(&c, 2, (uint64_t)boot) && pb_msg(&s, 1, &c, false) &&
		  pb_int(&c, 1, PH_CLK_MONOTONIC) &&
		  pb_int(&c, 2, (uint64_t)mono) && pb_msg(&s, 1, &c, false) &&
		  pb_msg(&p, 6, &s, false) && pb_msg(o, 1, &p, false);

	ph_buf_release(&c);
	ph_buf_release(&s);
	ph_buf_release(&p);
	return ok;
}

/* An expected display frame at `mono` on MONOTONIC, token k. */
static bool frame(struct ph_buf *o, int64_t mono, int k)
{
	struct ph_buf f = PH_BUF_INIT(1 << 10), e = PH_BUF_INIT(1 << 10);
	struct ph_buf p = PH_BUF_INIT(1 << 10);
	bool ok = pb_int(&f, 1, 100 + (uint64_t)k) &&
		  pb_int(&f, 2, (uint64_t)k) && pb_int(&f, 3, 42) &&
		  pb_msg(&e, 1, &f, true) && pb_int(&p, 8, (uint64_t)mono) &&
		  pb_int(&p, 58, PH_CLK_MONOTONIC) &&
		  pb_msg(&p, 76, &e, true) && pb_msg(o, 1, &p, false);

	ph_buf_release(&f);
	ph_buf_release(&e);
	ph_buf_release(&p);
	return ok;
}

void test_trace_ingest__clock_snapshot_choice(void)
{
	/* mono timestamp, then the BOOTTIME it must become */
	static const int64_t want[][2] = {
		{ 50, 950 },
		{ 150, 1050 },
		{ 4500, 5500 },
		{ 200, 1100 },
		{ 4000, 5000 },
		{ 3999, 4899 },
		/* after a snapshot (boot 9000, mono 3000) comes last */
		{ 3500, 9500 },
		{ 4100, 10100 },
		{ 50, 950 },
		{ 2999, 3899 },
	};
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	struct ph_trace t;
	struct ph_table *ef;
	size_t n = PH_ARRAY_SIZE(want);

	CHECK(snapshot(&b, 1000, 100) && snapshot(&b, 5000, 4000));
	for (size_t i = 0; i < n; i++) {
		if (i == 6)
			CHECK(snapshot(&b, 9000, 3000));
		CHECK(frame(&b, want[i][0], (int)i));
	}
	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_load_mem(&t, b.buf, b.len), 0);
	ef = &t.tables[PH_T_EFRAME];
	CHECK_INT(ef->rows, n);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(ph_col_i64(ef, AF_TS)[i], want[i][1]);
	ph_trace_release(&t);
	ph_buf_release(&b);
}

/* --- tids ----------------------------------------------------------------- */

void test_trace_ingest__tid_forget(void)
{
	static const int64_t tids[] = { 1,	 1023,	  1024,	    32767,
					4194303, 4194304, 99999999, -7 };
	struct ph_trace t;

	CHECK_INT(ph_trace_init(&t), 0);
	CHECK_INT(ph_trace_utid(&t, 0), 0); /* swapper, made by init */
	for (size_t i = 0; i < PH_ARRAY_SIZE(tids); i++) {
		int64_t u = ph_trace_utid(&t, tids[i]), v;

		CHECK(u > 0);
		CHECK_INT(ph_trace_utid(&t, tids[i]), u);
		CHECK_INT(ph_col_i64(&t.tables[PH_T_THREAD], TH_TID)[u],
			  tids[i]);
		ph_trace_utid_forget(&t, tids[i]);
		v = ph_trace_utid(&t, tids[i]);
		CHECK(v > u);
		CHECK_INT(ph_trace_utid(&t, tids[i]), v);
	}
	/* forgetting one tid leaves its neighbours */
	CHECK_INT(ph_trace_utid(&t, 0), 0);
	CHECK_INT(t.tables[PH_T_THREAD].rows, 1 + 2 * PH_ARRAY_SIZE(tids));
	ph_trace_release(&t);
}

/* --- big blocks ------------------------------------------------------------
 */

/*
 * Whether [p, p + n) lies in one mapping advised for huge pages (smaps'
 * VmFlags "hg").
 */
#ifndef PH_TRACE_BIG_MALLOC
static bool one_huge_mapping(const void *p, size_t n)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo <= (uintptr_t)p && (uintptr_t)p + n <= hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			found = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return found;
}
#endif

/*
 * A block growing past 4 MiB moves onto a 2 MiB boundary (so it faults in
 * huge pages, not 4 KiB ones at its ragged ends) and keeps what it held,
 * as realloc does.  It stays one mapping, all of it advised, as it grows:
 * advising part of a malloc'd chunk split its mapping, glibc's realloc
 * could not mremap it, and copied it at every growth.  Shrinking keeps it.
 */
void test_trace_ingest__big_blocks(void)
{
	const size_t small = 1000 * 8, big = (size_t)5 << 20;
	const size_t bigger = (size_t)9 << 20, biggest = (size_t)33 << 20;
	uint64_t *p = ph_trace_big_realloc(NULL, 0, small);

	CHECK(p != NULL);
	for (size_t i = 0; i < 1000; i++)
		p[i] = i * 7;
	p = ph_trace_big_realloc(p, small, big);
	CHECK(p != NULL);
#ifndef PH_TRACE_BIG_MALLOC /* ASan: malloc's blocks */
	CHECK_INT((uintptr_t)p & (((uintptr_t)2 << 20) - 1), 0);
	CHECK(one_huge_mapping(p, big));
#endif
	p[big / 8 - 1] = 42;
	p = ph_trace_big_realloc(p, big, bigger);
	CHECK(p != NULL);
#ifndef PH_TRACE_BIG_MALLOC /* ASan: malloc's blocks */
	CHECK(one_huge_mapping(p, bigger));
#endif
	p[bigger / 8 - 1] = 43;
	p = ph_trace_big_realloc(p, bigger, biggest);
	CHECK(p != NULL);
#ifndef PH_TRACE_BIG_MALLOC /* ASan: malloc's blocks */
	CHECK(one_huge_mapping(p, biggest));
#endif
	for (size_t i = 0; i < 1000; i++)
		CHECK_INT(p[i], i * 7);
	CHECK_INT(p[big / 8 - 1], 42);
	CHECK_INT(p[bigger / 8 - 1], 43);
	p = ph_trace_big_realloc(p, biggest, big);
	CHECK(p != NULL);
	CHECK_INT(p[big / 8 - 1], 42);
	p = ph_trace_big_realloc(p, big, small);
	CHECK(p != NULL);
	CHECK_INT(p[999], 999 * 7);
	ph_trace_big_free(p, small);
}
