/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of libporthole in this process: the queue on its own, then the
 * whole agent over its real abstract socket, spoken to by a real client.
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_client.h"
#include "ph_clock.h"
#include "ph_json.h"
#include "ph_threads.h"
#include "porthole.h"
#include "../../src/agent/agent.h"
#include "../../src/agent/collectors/collectors.h"
#include "../../src/agent/platform.h"
#include "../../src/agent/queue.h"
#include "../../src/agent/symbolize.h"

#if PH_TEST_GLIBC_LIBS
#include <sqlite3.h>
#include <execinfo.h>
#include <zlib.h>
#endif
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- records ---------------------------------------------------------------
 */

/* One string, cap and fill: ph_rec_str against the long way. */
static void check_short_str(const char *s, size_t cap, uint16_t used)
{
	static struct ph_rec fast, slow;

	memset(&fast, 0xee, sizeof(fast));
	memset(&slow, 0xee, sizeof(slow));
	fast.used = slow.used = used;
	fast.flags = slow.flags = 0;
	ph_rec_str(&fast, PH_KEY_LABEL, s, cap);
	ph_rec_strn(&slow, PH_KEY_LABEL, PH_F_STR, s, strnlen(s, cap + 1), cap);
	CHECK_INT(fast.used, slow.used);
	CHECK_INT(fast.flags, slow.flags);
	CHECK(!memcmp(fast.data + used, slow.data + used, slow.used - used));
}

/*
 * ph_rec_str's 16-byte short cut gives the same field as the long way
 * (strnlen, cut, copy) for every length and every place a string can end,
 * up to the last byte before an unreadable page, and with a record too
 * full for it.
 */
void test_record__short_strings_match_the_long_way(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const size_t caps[] = { 8, 15, 64 };
	static const uint16_t used[] = { 0, 7, PH_REC_DATA - 24,
					 PH_REC_DATA - 10 };

	CHECK(map != MAP_FAILED);
	/* the second page faults: a load that crossed into it would crash */
	CHECK_INT(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
	for (size_t len = 0; len <= 40; len++) {
		for (size_t gap = 0; gap <= 20; gap++) {
			/* the NUL at pg - 1 - gap */
			char *s = map + pg - 1 - gap - len;

			memset(s, 'a' + (int)(len % 26), len);
			s[len] = '\0';
			for (size_t c = 0; c < PH_ARRAY_SIZE(caps); c++)
				for (size_t u = 0; u < PH_ARRAY_SIZE(used); u++)
					check_short_str(s, caps[c], used[u]);
		}
	}
	munmap(map, (size_t)pg * 2);
}

/* --- encoding ---------------------------------------------------------------
 */

static const struct ph_json *parse(const struct ph_buf *line);

/*
 * Every field type the encoder writes, byte for byte: escapes and bad
 * UTF-8 in strings, the v1 quirk of ints as strings, INT64_MIN, a double
 * that is not finite, runs that become one array or one object, an empty
 * array, and a device event's sub-kind first.
 */
void test_encode__every_field_type(void)
{
	static struct ph_rec r;
	struct ph_buf out = PH_BUF_INIT(1 << 16);

	ph_rec_head(&r, PH_KIND_DEVICE, 0);
	r.sub = PH_DEV_THERMAL;
	r.at = 0;
	ph_rec_set_t(&r, -5);
	ph_rec_str(&r, PH_KEY_NAME, "a\"b\\c\n\x01 caf\xc3\xa9 \xff", 64);
	ph_rec_qint(&r, PH_KEY_ELAPSED_MS, 12);
	ph_rec_int(&r, PH_KEY_COUNT, INT64_MIN);
	ph_rec_double(&r, PH_KEY_BUDGET_MS, 16.5);
	ph_rec_double(&r, PH_KEY_TOTAL_MS, 0.0 / 0.0);
	ph_rec_bool(&r, PH_KEY_REUSED, true);
	ph_rec_arr_str(&r, PH_KEY_TAGS, "x", 8);
	ph_rec_arr_str(&r, PH_KEY_TAGS, "y", 8);
	ph_rec_field(&r, PH_KEY_KEYS, PH_F_ARR_EMPTY, 0);
	ph_rec_obj_int(&r, PH_KEY_PHASES, "layout", 3);
	ph_rec_obj_int(&r, PH_KEY_PHASES, "draw", -4);
	ph_rec_bool(&r, PH_KEY_RETRYING, false);
	/* header lines: a value with a colon, one without a space, one empty */
	ph_rec_strn(&r, PH_KEY_REQUEST_HEADERS, PH_F_HEADERS,
		    "Host: h:80\nX-A:b\"\nX-E: \n", 24, 64);
	CHECK_INT(ph_encode_event(&r, 18446744073709551615ull, &out), 0);
	CHECK_STR(out.buf,
		  "{\"event\":\"device\",\"t\":-5,\"seq\":18446744073709551615,"
		  "\"data\":{\"kind\":\"thermal\","
		  "\"name\":\"a\\\"b\\\\c\\n\\u0001 caf\xc3\xa9 \xef\xbf\xbd\","
		  "\"elapsedMs\":\"12\",\"count\":-9223372036854775808,"
		  "\"budgetMs\":16.5,\"totalMs\":null,\"reused\":true,"
		  "\"tags\":[\"x\",\"y\"],\"keys\":[],"
		  "\"phases\":{\"layout\":3,\"draw\":-4},\"retrying\":false,"
		  "\"requestHeaders\":{\"Host\":\"h:80\",\"X-A\":\"b\\\"\","
		  "\"X-E\":\"\"}}}\n");
	ph_buf_release(&out);
}

/* A stack's members follow the others, and the line is JSON. */
void test_encode__stack_among_members(void)
{
	static struct ph_rec r;
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	uintptr_t pcs[2] = { (uintptr_t)test_encode__stack_among_members,
			     (uintptr_t)ph_encode_event };
	const char *head = "{\"event\":\"blocked\",\"t\":0,\"seq\":7,"
			   "\"data\":{\"durationMs\":600,\"top\":\"";
	uint8_t *p;

	ph_rec_head(&r, PH_KIND_BLOCKED, 0);
	ph_rec_int(&r, PH_KEY_DURATION_MS, 600);
	p = ph_rec_field(&r, PH_KEY_STACK, PH_F_PCS, sizeof(pcs));
	CHECK(p != NULL);
	memcpy(p, pcs, sizeof(pcs));
	ph_rec_str(&r, PH_KEY_THREAD, "main", 16);
	CHECK_INT(ph_encode_event(&r, 7, &out), 0);
	CHECK(!strncmp(out.buf, head, strlen(head)));
	CHECK(strstr(out.buf, "],\"thread\":\"main\"}}\n") != NULL);
	CHECK(parse(&out) != NULL);
	ph_buf_release(&out);
}

/* --- stacks ----------------------------------------------------------------
 */

/* One synthetic frame, as symbolize.c would have resolved it. */
static struct ph_frame_info resolved(const char *fn, const char *file, int line,
				     const char *module, bool app)
{
	struct ph_frame_info f = { .line = line, .offset = 0x7f7, .app = app };

	snprintf(f.fn, sizeof(f.fn), "%s", fn);
	snprintf(f.file, sizeof(f.file), "%s", file);
	snprintf(f.module, sizeof(f.module), "%s", module);
	return f;
}

/* glibc's backtrace() (execinfo.h) to compare with. */
#if PH_TEST_GLIBC_LIBS
/* Two walks from the same frame: backtrace() and the unwinder's own. */
static __attribute__((noinline)) void two_walks(void **a, int *na, void **b,
						int *nb)
{
	*na = backtrace(a, 32);
	*nb = ph_platform_unwind(b, 32);
	__asm__ __volatile__("" ::: "memory"); /* no tail call */
}

static __attribute__((noinline)) void walk_from_here(void **a, int *na,
						     void **b, int *nb)
{
	two_walks(a, na, b, nb);
	__asm__ __volatile__("" ::: "memory");
}

/*
 * What musl and bionic get for backtrace() (platform.h) walks as glibc's
 * does: frame 0 is the caller's own (the two calls' return addresses,
 * a few bytes apart in two_walks), and every frame above it the same.
 */
void test_symbolize__unwind_walks_as_backtrace_does(void)
{
	void *a[32], *b[32];
	int na = 0, nb = 0, j = 1;

	walk_from_here(a, &na, b, &nb);
	CHECK(na >= 3 && nb >= 2);
	/* a sanitizer's backtrace() interceptor puts its own frame first */
	while (j < na && a[j] != b[1])
		j++;
	CHECK(j <= 2 && j < na);
	CHECK_INT(nb - 1, na - j);
	CHECK(b[0] != a[j - 1] && (uintptr_t)b[0] - (uintptr_t)a[j - 1] < 64);
	for (int i = 1; i < nb && j + i - 1 < na; i++)
		CHECK(a[j + i - 1] == b[i]);
}

#endif

/*
 * A stall inside the agent's SQLite wrapper, as a static link resolves it:
 * the app frame (db_open) is blamed, the wrapper and libsqlite3 follow it,
 * and the stack ends at main: no _start, no junk vdso frame past it, and
 * no vdso clock read at the top.
 */
void test_symbolize__main_thread_stack_blames_the_app(void)
{
	struct ph_frame_info fr[] = {
		resolved("__vdso_clock_gettime", "", -1, "[vdso: 5097]", false),
		resolved("sqlite3VdbeExec", "sqlite3.c", 90, "libsqlite3.so.0",
			 false),
		resolved("sqlite3_step", "sqlite.c", 479, "porthole-sample",
			 false),
		resolved("db_open", "db.c", 26, "porthole-sample", true),
		resolved("main", "main.c", 204, "porthole-sample", true),
		resolved("__libc_start_call_main", "libc_start_call_main.h", 58,
			 "libc.so.6", false),
		resolved("_start", "", -1, "porthole-sample", true),
		resolved("", "", -1, "[vdso: 5097]", false),
	};
	size_t order[PH_MAX_FRAMES];
	char line[512];

	CHECK_INT(ph_frames_pick(fr, PH_ARRAY_SIZE(fr), order), 4);
	CHECK_INT(order[0], 3);
	CHECK_INT(order[1], 4);
	CHECK_INT(order[2], 1);
	CHECK_INT(order[3], 2);
	ph_frame_format(&fr[order[0]], line, sizeof(line));
	CHECK_STR(line, "db_open(db.c:26)");
}

/*
 * arm64's stall sampled in a PLT entry (no CFI: the sampler takes x30 and
 * the frame records from x29, watchdog.c): the entry is an address in
 * none of the app module's functions, and is not listed, so the stack
 * ends at main with no module+offset frame after it.  A stripped module's
 * frames, all unnamed, are kept.
 */
void test_symbolize__a_plt_entry_is_not_a_frame(void)
{
	struct ph_frame_info fr[] = {
		resolved("", "", -1, "porthole-sample", false),
		resolved("apply_coupon_synchronously", "main.c", 44,
			 "porthole-sample", true),
		resolved("planted_stall", "main.c", 74, "porthole-sample",
			 true),
		resolved("main", "main.c", 510, "porthole-sample", true),
		resolved("__libc_start_call_main", "libc_start_call_main.h", 58,
			 "libc.so.6", false),
		resolved("_start", "", -1, "porthole-sample", true),
	};
	struct ph_frame_info stripped[] = {
		resolved("", "", -1, "libvendor.so", false),
		resolved("", "", -1, "libvendor.so", false),
		resolved("main", "main.c", 9, "app", true),
	};
	size_t order[PH_MAX_FRAMES];

	CHECK_INT(ph_frames_pick(fr, PH_ARRAY_SIZE(fr), order), 3);
	CHECK_INT(order[0], 1);
	CHECK_INT(order[1], 2);
	CHECK_INT(order[2], 3);
	CHECK_INT(ph_frames_pick(stripped, PH_ARRAY_SIZE(stripped), order), 3);
}

/*
 * The frame-record walk the arm64 sampler falls back on: it follows the
 * chain up to fp 0, and never reads a record outside the stack it is
 * given, one not above the last, or a misaligned one.
 */
void test_symbolize__fp_walk_stays_inside_the_stack(void)
{
	_Alignas(16) uintptr_t stk[16] = { 0 };
	uintptr_t pcs[8], lo = (uintptr_t)stk, hi = (uintptr_t)(stk + 16);

	stk[2] = (uintptr_t)&stk[6];
	stk[3] = 0x1111;
	stk[6] = (uintptr_t)&stk[10];
	stk[7] = 0x2222;
	stk[10] = 0; /* _start's */
	stk[11] = 0x3333;
	CHECK_INT(ph_platform_fp_walk((uintptr_t)&stk[2], lo, hi, pcs, 8), 3);
	CHECK(pcs[0] == 0x1111 && pcs[1] == 0x2222 && pcs[2] == 0x3333);
	CHECK_INT(ph_platform_fp_walk((uintptr_t)&stk[2], lo, hi, pcs, 2), 2);
	/* the next record lies past the stack's end: not read */
	CHECK_INT(ph_platform_fp_walk((uintptr_t)&stk[2], lo,
				      (uintptr_t)(stk + 8), pcs, 8),
		  2);
	CHECK_INT(ph_platform_fp_walk((uintptr_t)&stk[2], lo,
				      (uintptr_t)(stk + 7), pcs, 8),
		  1);
	/* below the stack, misaligned, or going down: stops */
	CHECK_INT(ph_platform_fp_walk((uintptr_t)&stk[2], (uintptr_t)&stk[4],
				      hi, pcs, 8),
		  0);
	CHECK_INT(ph_platform_fp_walk((uintptr_t)&stk[2] + 4, lo, hi, pcs, 8),
		  0);
	stk[6] = (uintptr_t)&stk[2];
	CHECK_INT(ph_platform_fp_walk((uintptr_t)&stk[2], lo, hi, pcs, 8), 2);
}
/* Another thread's stack ends after its start routine. */
void test_symbolize__thread_stack_ends_at_its_start_routine(void)
{
	struct ph_frame_info fr[] = {
		resolved("nanosleep", "", -1, "libc.so.6", false),
		resolved("sync_worker", "jobs.c", 40, "app", true),
		resolved("start_thread", "pthread_create.c", 447, "libc.so.6",
			 false),
		resolved("clone3", "clone3.S", 78, "libc.so.6", false),
	};
	size_t order[PH_MAX_FRAMES];

	CHECK_INT(ph_frames_pick(fr, PH_ARRAY_SIZE(fr), order), 2);
	CHECK_INT(order[0], 1);
	CHECK_INT(order[1], 0);
}

/* What is not known is left out of a frame's line, never "?" or -1. */
void test_symbolize__frame_lines_omit_what_is_unknown(void)
{
	struct ph_frame_info f[] = {
		resolved("pay", "pay.c", 12, "app", true),
		resolved("pay", "pay.c", -1, "app", true),
		resolved("pay", "", -1, "app", true),
		resolved("", "", -1, "libfoo.so", false),
	};
	const char *want[] = { "pay(pay.c:12)", "pay(pay.c)", "pay",
			       "libfoo.so+0x7f7" };
	char line[512];

	for (size_t i = 0; i < PH_ARRAY_SIZE(f); i++) {
		ph_frame_format(&f[i], line, sizeof(line));
		CHECK_STR(line, want[i]);
	}
}

/* backtrace(), SQLite and libdw's file:line. */
#if PH_TEST_GLIBC_LIBS
/* Called through, so the stack below has an app frame of its own. */
static __attribute__((noinline)) void stack_here(struct ph_buf *out)
{
	void *pcs[PH_MAX_FRAMES];
	uintptr_t u[PH_MAX_FRAMES];
	int n = backtrace(pcs, PH_MAX_FRAMES);

	for (int i = 0; i < n; i++)
		u[i] = (uintptr_t)pcs[i];
	ph_symbolize_text(u, (size_t)n, out);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

/*
 * Real addresses in this binary, which links libporthole statically as an
 * app does: the agent's own code (its sqlite3_step wrapper, its ph_*
 * functions) is not the app's, the test's code is; a real stack ends at
 * main with no unknown parts.
 */
void test_symbolize__the_agent_linked_in_is_not_the_app(void)
{
	struct ph_frame_info f;
	struct ph_buf text = PH_BUF_INIT(4096);
	const char *last;

	ph_symbolize((uintptr_t)sqlite3_step, true, &f);
	CHECK_STR(f.fn, "sqlite3_step");
	CHECK(!f.app);
	ph_symbolize((uintptr_t)ph_symbolize_json, true, &f);
	CHECK(!f.app);
	ph_symbolize((uintptr_t)stack_here, true, &f);
	CHECK_STR(f.fn, "stack_here");
	CHECK(f.app);

	stack_here(&text);
	CHECK(!strncmp(text.buf, "stack_here(test_agent.c:", 24));
	CHECK(strstr(text.buf, "\nmain(") != NULL);
	CHECK(!strstr(text.buf, "_start"));
	CHECK(!strstr(text.buf, "vdso"));
	CHECK(!strstr(text.buf, "?"));
	CHECK(!strstr(text.buf, ":-1"));
	last = strrchr(text.buf, '\n');
	CHECK(last && !strstr(last, "__libc"));
	ph_buf_release(&text);
}

#endif

/* --- the queue -------------------------------------------------------------
 */

/* A record of `used` bytes whose payload says where it came from. */
static void fill(struct ph_rec *r, int64_t id, uint16_t used)
{
	memset(r, 0, PH_REC_HEAD);
	r->at = id;
	r->used = used;
	for (uint16_t i = 0; i < used; i++)
		r->data[i] = (uint8_t)(id * 31 + i);
}

static bool intact(const struct ph_rec *r, int64_t id)
{
	for (uint16_t i = 0; i < r->used; i++)
		if (r->data[i] != (uint8_t)(id * 31 + i))
			return false;
	return r->at == id;
}

void test_queue__fifo_and_exact_drops(void)
{
	static struct ph_rec r;
	struct ph_queue q;
	uint64_t late, after = 0;
	struct ph_rec *got;
	int n = 0;

	CHECK_INT(ph_queue_init(&q, 64), 0);
	for (int i = 0; i < 70; i++) {
		fill(&r, i, 16); /* one cell each */
		ph_queue_push(&q, &r);
	}
	CHECK_INT(atomic_load(&q.dropped), 6);
	while ((got = ph_queue_next(&q, &late))) {
		CHECK_INT(got->at, n);
		CHECK(intact(got, n));
		n++;
		after += ph_queue_done(&q);
	}
	CHECK_INT(n, 64);
	/* the six drops came after the 64th event, and are counted there */
	CHECK_INT(after + late, 6);
	ph_queue_release(&q);
}

/*
 * A new queue says "not published" in every cell, whatever bytes its
 * memory held before: turn i in cell i (a publish at pos stores pos + 1).
 */
void test_queue__init_sets_every_turn(void)
{
	struct ph_queue q;
	bool all = true;

	CHECK_INT(ph_queue_init(&q, 4096), 0);
	for (uint64_t i = 0; i <= q.mask; i++)
		all &= atomic_load(ph_queue_turn(&q, i)) == i &&
		       atomic_load(&q.drops_after[i]) == 0;
	CHECK(all);
	ph_queue_release(&q);
}

/*
 * The consumer writes nothing into a one-cell record's cell (its turn word
 * already reads "not published" for every later lap), so the line stays
 * clean in the writer's cache and the producer of the next lap need not
 * pull it back; and a record after it still comes out.
 */
void test_queue__done_leaves_a_one_cell_record_unwritten(void)
{
	static struct ph_rec r;
	struct ph_queue q;
	uint8_t before[PH_QUEUE_CELL];
	uint64_t late;

	CHECK_INT(ph_queue_init(&q, 64), 0);
	fill(&r, 7, 16);
	CHECK(ph_queue_push(&q, &r));
	memcpy(before, q.cells, sizeof(before));
	CHECK(ph_queue_next(&q, &late) != NULL);
	CHECK_INT(ph_queue_done(&q), 0);
	CHECK(!memcmp(before, q.cells, sizeof(before)));
	CHECK(ph_queue_next(&q, &late) == NULL);
	/* a lap on, the same cell is not mistaken for published */
	for (int i = 0; i < 64; i++) {
		fill(&r, 100 + i, 16);
		CHECK(ph_queue_push(&q, &r));
		CHECK(ph_queue_next(&q, &late) != NULL);
		CHECK(intact(ph_queue_rec(&q, q.deq), 100 + i));
		ph_queue_done(&q);
	}
	CHECK(ph_queue_next(&q, &late) == NULL);
	ph_queue_release(&q);
}

/*
 * Records of every size, one cell to the largest, through many laps of a
 * small queue: each comes out whole and in order, including those that
 * run past the last cell into the spill area, and a full queue drops
 * exactly what did not fit.
 */
void test_queue__cells_wrap_and_spill(void)
{
	static struct ph_rec r;
	struct ph_queue q;
	uint64_t late, drops = 0;
	int64_t next_in = 0, next_out = 0, pushed = 0, spilled = 0;
	uint32_t rnd = 12345;

	CHECK_INT(ph_queue_init(&q, 64), 0);
	for (int round = 0; round < 4000; round++) {
		/* a burst of 1-5 records, then take 0-4 */
		int burst = 1 + (int)(rnd % 5), take;

		for (int i = 0; i < burst; i++) {
			uint16_t used;

			rnd = rnd * 1103515245u + 12345u;
			used = (uint16_t)((rnd >> 8) % (PH_REC_DATA + 1));
			if (rnd & 1)
				used = (uint16_t)(used % 200); /* mostly small
								*/
			fill(&r, next_in, used);
			if (ph_queue_push(&q, &r)) {
				uint64_t at = atomic_load(&q.enq) - r.cells;

				if ((at & q.mask) + r.cells > q.mask + 1)
					spilled++;
				pushed++;
			}
			next_in++;
		}
		rnd = rnd * 1103515245u + 12345u;
		take = (int)(rnd % 5);
		for (int i = 0; i < take; i++) {
			struct ph_rec *got = ph_queue_next(&q, &late);

			drops += late;
			if (!got)
				break;
			/* skip ids that were dropped: they left a counted gap
			 */
			CHECK(got->at >= next_out);
			CHECK(intact(got, got->at));
			next_out = got->at + 1;
			drops += ph_queue_done(&q);
		}
	}
	for (struct ph_rec *got; (got = ph_queue_next(&q, &late));) {
		CHECK(intact(got, got->at));
		drops += ph_queue_done(&q);
	}
	drops += late;
	CHECK(spilled > 0);
	CHECK(drops > 0);
	CHECK_INT(pushed + (int64_t)drops, next_in);
	CHECK_INT(atomic_load(&q.dropped), drops);
	ph_queue_release(&q);
}

/*
 * A producer's enqueue position can be stale, behind its fresh look at
 * what the consumer freed (others pushed and the consumer took all in
 * between): that is room.  Seen from the arithmetic alone, a look ahead
 * of the position must not read as a full queue.
 */
void test_queue__stale_position_is_room_not_full(void)
{
	static struct ph_rec r;
	struct ph_queue q;
	uint64_t late;

	CHECK_INT(ph_queue_init(&q, 64), 0);
	fill(&r, 1, 16);
	/* what the producer would see after a stale load of enq */
	atomic_store(&q.seen, atomic_load(&q.enq) + 40);
	atomic_store(&q.released, atomic_load(&q.seen));
	CHECK(ph_queue_push(&q, &r));
	CHECK_INT(atomic_load(&q.dropped), 0);
	CHECK(ph_queue_next(&q, &late) != NULL);
	ph_queue_release(&q);
}

struct producer_arg {
	struct ph_queue *q;
	int count;
	int ok;
	int id;
};

static _Atomic int producers_done;

static void *producer(void *p)
{
	struct producer_arg *a = p;
	static _Thread_local struct ph_rec r;

	for (int i = 0; i < a->count; i++) {
		/* small mostly, now and then a long one across many cells */
		fill(&r, (int64_t)a->id << 32 | i,
		     (uint16_t)(i % 97 == 0 ? 1200 : i % 150));
		if (ph_queue_push(a->q, &r))
			a->ok++;
	}
	atomic_fetch_add(&producers_done, 1);
	return NULL;
}

/* emitted = taken + dropped, exactly, with producers racing a consumer. */
void test_queue__mt_producers_count_exactly(void)
{
	struct ph_queue q;
	struct producer_arg args[4];
	pthread_t t[4];
	uint64_t taken = 0, drops = 0, late;
	int ok = 0;
	int64_t last[4] = { -1, -1, -1, -1 };
	bool finished = false, order = true, whole = true;

	CHECK_INT(ph_queue_init(&q, 256), 0);
	atomic_store(&producers_done, 0);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct producer_arg){ &q, 50000, 0, i };
		pthread_create(&t[i], NULL, producer, &args[i]);
	}
	for (;;) {
		struct ph_rec *r = ph_queue_next(&q, &late);

		drops += late;
		if (r) {
			int who = (int)(r->at >> 32);
			int64_t i = r->at & 0xffffffff;

			/* each producer's events arrive whole and in order */
			whole = whole && who >= 0 && who < 4 &&
				intact(r, r->at);
			if (who >= 0 && who < 4) {
				order = order && i > last[who];
				last[who] = i;
			}
			taken++;
			drops += ph_queue_done(&q);
			continue;
		}
		if (finished && !late)
			break;
		/* one more full pass after the last producer ended */
		finished = atomic_load(&producers_done) == 4;
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ok += args[i].ok;
	}
	CHECK(whole);
	CHECK(order);
	CHECK_INT(taken, ok);
	CHECK_INT(drops, 200000 - ok);
	CHECK_INT(atomic_load(&q.dropped), 200000 - ok);
	ph_queue_release(&q);
}

/* --- lanes: a queue for each thread, merged (lanes.h) -----------------------
 */

/*
 * A baton passed around four threads: each puts the ids that are its turn
 * (id % 4), each after the one before it was published, so every event
 * happened before the next.  Three put into lanes of their own (the third
 * takes its lane only at its first turn, while the writer is merging),
 * the fourth into the shared queue.
 */
struct baton {
	struct ph_lanes *lanes;
	_Atomic int64_t turn; /* the next id */
	int64_t count;
};

struct passer {
	struct baton *b;
	int who;
};

/* The id rides in tid: at is the emitting moment the merge orders by. */
static void put_id(struct ph_queue *q, struct ph_rec *r, int64_t id)
{
	fill(r, id, (uint16_t)(id % 7 ? 16 : 300));
	r->tid = (int32_t)id;
	r->at = ph_clock_mono_ns();
	while (!ph_queue_put(q, r))
		sched_yield(); /* the merge frees room */
}

static void *pass_baton(void *p)
{
	struct passer *ps = p;
	struct baton *b = ps->b;
	static _Thread_local struct ph_rec r;
	struct ph_lane *lane = NULL;

	if (ps->who < 2)
		lane = ph_lane_take(b->lanes, 1000 + ps->who);
	for (;;) {
		int64_t id =
			atomic_load_explicit(&b->turn, memory_order_acquire);

		if (id >= b->count)
			break;
		if (id % 4 != ps->who) {
			sched_yield();
			continue;
		}
		if (ps->who == 2 && !lane)
			lane = ph_lane_take(b->lanes, 1000 + ps->who);
		put_id(lane ? &lane->q : b->lanes->shared, &r, id);
		atomic_store_explicit(&b->turn, id + 1, memory_order_release);
	}
	if (lane)
		ph_lane_end(lane, atomic_load(&lane->q.enq));
	return NULL;
}

/* Each record's bytes as fill() wrote them for the id in its tid. */
static bool intact_id(const struct ph_rec *r)
{
	for (uint16_t i = 0; i < r->used; i++)
		if (r->data[i] != (uint8_t)(r->tid * 31 + i))
			return false;
	return true;
}

/*
 * The merge sends an event that happened before another first, though the
 * two are in different queues and the writer looks at one after the
 * other; and a lane whose thread ended is free once drained, not before.
 */
void test_lanes__mt_merge_keeps_happened_before(void)
{
	static struct ph_queue shared;
	static struct ph_lanes lanes;
	struct ph_merge m;
	struct baton b = { .lanes = &lanes, .count = 20000 };
	struct passer ps[4];
	pthread_t t[4];
	int64_t next = 0;
	uint64_t late;
	bool order = true, whole = true, all_free = true;

	CHECK_INT(ph_queue_init(&shared, 64), 0);
	CHECK_INT(ph_lanes_init(&lanes, &shared, 64), 0);
	ph_merge_init(&m, &lanes);
	for (int i = 0; i < 4; i++) {
		ps[i] = (struct passer){ &b, i };
		pthread_create(&t[i], NULL, pass_baton, &ps[i]);
	}
	while (next < b.count) {
		struct ph_rec *r = ph_merge_next(&m, &late);

		if (!r) {
			sched_yield();
			continue;
		}
		order = order && r->tid == next;
		whole = whole && intact_id(r);
		next = r->tid + 1;
		ph_merge_done(&m);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(order);
	CHECK(whole);
	CHECK_INT(atomic_load(&lanes.used), 3);
	/* drained and ended: the next look frees them */
	CHECK(ph_merge_next(&m, &late) == NULL);
	for (int i = 0; i < 3; i++)
		all_free &= atomic_load(&lanes.lane[i].owner) == PH_LANE_FREE;
	CHECK(all_free);
	ph_lanes_release(&lanes);
	ph_queue_release(&shared);
}

/*
 * ph_queue_next with a test's hook run first (the unit tests link with
 * --wrap=ph_queue_next): what other threads would do between two of the
 * writer's looks at two queues.
 */
struct ph_rec *__real_ph_queue_next(struct ph_queue *q, uint64_t *late);
struct ph_rec *__wrap_ph_queue_next(struct ph_queue *q, uint64_t *late);
static void (*before_next)(struct ph_queue *q);

struct ph_rec *__wrap_ph_queue_next(struct ph_queue *q, uint64_t *late)
{
	if (before_next)
		before_next(q);
	return __real_ph_queue_next(q, late);
}

static struct ph_lanes race_lanes;
static struct ph_queue race_shared;

/*
 * Just before the writer looks at the shared queue (last), having found
 * the lane empty: the lane's thread emits X, then another thread emits Y
 * into the shared queue.
 */
static void emit_x_then_y(struct ph_queue *q)
{
	static struct ph_rec r;

	if (q != &race_shared)
		return;
	before_next = NULL;
	put_id(&race_lanes.lane[0].q, &r, 1);
	put_id(&race_shared, &r, 2);
}

/*
 * The race the merge is built around, made to happen: X happened before
 * Y, the writer found X's lane empty and then sees Y.  X must go first.
 */
void test_lanes__an_earlier_event_in_a_queue_looked_at_first_goes_first(void)
{
	struct ph_merge m;
	struct ph_rec *r;
	uint64_t late;

	CHECK_INT(ph_queue_init(&race_shared, 64), 0);
	CHECK_INT(ph_lanes_init(&race_lanes, &race_shared, 64), 0);
	ph_merge_init(&m, &race_lanes);
	CHECK(ph_lane_take(&race_lanes, 1) == &race_lanes.lane[0]);
	before_next = emit_x_then_y;
	r = ph_merge_next(&m, &late);
	CHECK(before_next == NULL); /* it ran */
	CHECK(r && r->tid == 1);
	ph_merge_done(&m);
	r = ph_merge_next(&m, &late);
	CHECK(r && r->tid == 2);
	ph_merge_done(&m);
	CHECK(ph_merge_next(&m, &late) == NULL);
	ph_lanes_release(&race_lanes);
	ph_queue_release(&race_shared);
}

/*
 * Just before the writer looks at the shared queue, past the lanes: a new
 * thread takes a lane and emits X, then another emits Y into the shared
 * queue.
 */
static void take_then_emit(struct ph_queue *q)
{
	static struct ph_rec r;

	if (q != &race_shared)
		return;
	before_next = NULL;
	if (ph_lane_take(&race_lanes, 2) == &race_lanes.lane[1])
		put_id(&race_lanes.lane[1].q, &r, 1);
	put_id(&race_shared, &r, 2);
}

/* A lane taken while the writer looks is looked at before it sends. */
void test_lanes__a_lane_taken_during_a_look_is_seen(void)
{
	static struct ph_rec last;
	struct ph_merge m;
	struct ph_rec *r;
	uint64_t late;

	CHECK_INT(ph_queue_init(&race_shared, 64), 0);
	CHECK_INT(ph_lanes_init(&race_lanes, &race_shared, 64), 0);
	ph_merge_init(&m, &race_lanes);
	/*
	 * The first lane not empty (its head emitted last of all, so it
	 * goes last): the look finds no queue empty before Y's.
	 */
	CHECK(ph_lane_take(&race_lanes, 1) == &race_lanes.lane[0]);
	fill(&last, 3, 16);
	last.tid = 3;
	last.at = INT64_MAX;
	CHECK(ph_queue_put(&race_lanes.lane[0].q, &last));
	before_next = take_then_emit;
	for (int want = 1; want <= 3; want++) {
		r = ph_merge_next(&m, &late);
		CHECK(r && r->tid == want);
		ph_merge_done(&m);
	}
	CHECK(before_next == NULL);
	ph_lanes_release(&race_lanes);
	ph_queue_release(&race_shared);
}

/*
 * A look walks at most PH_MERGE_RUN records of a queue; one stopped there
 * has not been seen to end, so a later event elsewhere waits until the
 * rest of it has been looked at.
 */
void test_lanes__a_walk_cut_short_is_looked_at_again(void)
{
	static struct ph_queue shared;
	static struct ph_lanes lanes;
	static struct ph_rec r;
	struct ph_merge m;
	struct ph_lane *y, *x;
	uint64_t late;
	int64_t next = 1;
	bool order = true;

	CHECK_INT(ph_queue_init(&shared, 64), 0);
	CHECK_INT(ph_lanes_init(&lanes, &shared, 256), 0);
	ph_merge_init(&m, &lanes);
	y = ph_lane_take(&lanes, 1); /* looked at first */
	x = ph_lane_take(&lanes, 2);
	for (int i = 1; i <= PH_MERGE_RUN + 6; i++)
		put_id(&x->q, &r, i);
	put_id(&y->q, &r, PH_MERGE_RUN + 7);
	for (struct ph_rec *got; (got = ph_merge_next(&m, &late));) {
		order = order && got->tid == next;
		next = got->tid + 1;
		ph_merge_done(&m);
	}
	CHECK(order);
	CHECK_INT(next, PH_MERGE_RUN + 8);
	ph_lanes_release(&lanes);
	ph_queue_release(&shared);
}

/* An ended lane with events still in it stays its thread's until drained. */
void test_lanes__an_ended_lane_is_freed_once_drained(void)
{
	static struct ph_queue shared;
	static struct ph_lanes lanes;
	static struct ph_rec r;
	struct ph_merge m;
	struct ph_lane *lane, *again;
	struct ph_rec *got;
	uint64_t late;

	CHECK_INT(ph_queue_init(&shared, 64), 0);
	CHECK_INT(ph_lanes_init(&lanes, &shared, 64), 0);
	ph_merge_init(&m, &lanes);
	lane = ph_lane_take(&lanes, 7);
	CHECK(lane == &lanes.lane[0]);
	put_id(&lane->q, &r, 1);
	put_id(&lane->q, &r, 2);
	ph_lane_end(lane, atomic_load(&lane->q.enq));
	CHECK(ph_merge_next(&m, &late) != NULL);
	/* one event left in it: not free, so a new thread takes another */
	CHECK_INT(atomic_load(&lane->owner), PH_LANE_ENDED);
	again = ph_lane_take(&lanes, 8);
	CHECK(again == &lanes.lane[1]);
	ph_merge_done(&m);
	CHECK(ph_merge_next(&m, &late) != NULL);
	ph_merge_done(&m);
	CHECK(ph_merge_next(&m, &late) == NULL);
	CHECK_INT(atomic_load(&lane->owner), PH_LANE_FREE);
	/* taken again, it goes on where it was */
	CHECK(ph_lane_take(&lanes, 9) == lane);
	put_id(&lane->q, &r, 3);
	got = ph_merge_next(&m, &late);
	CHECK(got && got->tid == 3);
	ph_merge_done(&m);
	ph_lanes_release(&lanes);
	ph_queue_release(&shared);
}

/* --- the agent, over its socket ---------------------------------------------
 */

static char sock_name[64];

static int start_agent_in(const char *data_dir, unsigned flags, unsigned queue)
{
	struct porthole_config cfg = {
		.app_id = "com.example.unit",
		.version_name = "1.0-unit", /* as apps give it */
		.data_dir = data_dir,
		.flags = flags | PORTHOLE_NO_INTEGRATION_CHECK,
		.queue_size = queue,
	};

	porthole_stop(); /* left running by a test that failed half-way */
	snprintf(sock_name, sizeof(sock_name), "porthole.unit-%d-%lld",
		 (int)getpid(), (long long)ph_clock_mono_ns());
	cfg.socket_name = sock_name;
	return porthole_start_build(&cfg, 1);
}

static int start_agent(unsigned flags, unsigned queue)
{
	return start_agent_in(ph_test_tmpdir(), flags, queue);
}

/* The collectors that send events of their own, off: a test sees its own. */
#define QUIET (PORTHOLE_NO_WATCHDOG | PORTHOLE_NO_DEVICE | PORTHOLE_NO_MEMORY)

/*
 * Connects to the agent started last and says hello, the answer left in
 * line: 0, or -1 when either failed.
 */
static int connect_hello(struct ph_client_conn *c, struct ph_buf *line)
{
	if (ph_client_connect(c, sock_name, 2000))
		return -1;
	return ph_client_call(c, 1, "hello", NULL, line, NULL, 2000) == 1 ? 0 :
									    -1;
}

static struct ph_arena arena;

static const struct ph_json *parse(const struct ph_buf *line)
{
	struct ph_json *v = NULL;

	ph_arena_release(&arena);
	ph_arena_init(&arena, 0, SIZE_MAX);
	if (ph_json_parse(&arena, line->buf, line->len, &v, NULL))
		return NULL;
	return v;
}

static bool have_thread(const char *name);

/* Lines of path that contain s. */
static int lines_with(const char *path, const char *s)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return n;
}

void test_agent__refuses_a_release_build(void)
{
	struct porthole_config cfg = { .app_id = "x" };
	char path[512];
	int saved, fd;

	/* one stderr line naming why; no socket, no thread */
	snprintf(path, sizeof(path), "%s/refused.err", ph_test_tmpdir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	unsetenv("PORTHOLE_ENABLE");
	CHECK_INT(porthole_start_build(&cfg, 0), PORTHOLE_ERR_NOT_DEBUG);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	CHECK_INT(lines_with(path, "not started: this is not a debug build"),
		  1);
	CHECK_INT(lines_with(path, ""), 1);
	CHECK(porthole_socket_name() == NULL);
	CHECK(!have_thread("porthole-writer") &&
	      !have_thread("porthole-wdog") && !have_thread("porthole-memdev"));
	setenv("PORTHOLE_ENABLE", "0", 1);
	CHECK_INT(porthole_start_build(&cfg, 1), PORTHOLE_ERR_NOT_DEBUG);
	unsetenv("PORTHOLE_ENABLE");
	/* and event calls before start are harmless no-ops */
	porthole_mark("ignored", NULL);
	CHECK_STR(porthole_strerror(PORTHOLE_ERR_NOT_DEBUG),
		  "not a debug build (define PORTHOLE_DEBUG_BUILD, or set "
		  "PORTHOLE_ENABLE=1)");
}

static bool have_thread(const char *name)
{
	return ph_thread_named(name) != 0;
}

/*
 * Whether the thread named `name` is gone within 10 s.  A join returns
 * once the thread's tid is cleared, which the kernel does before its task
 * leaves /proc/self/task (and qemu-user, emulating the clear, well before):
 * a stop that joined its threads is seen in /proc a moment later.
 */
static bool thread_gone(const char *name)
{
	for (int i = 0; i < 1000 && have_thread(name); i++)
		usleep(10 * 1000);
	return !have_thread(name);
}

/* The agent's threads carry its name, apart from the app's own. */
void test_agent__mt_threads_are_named(void)
{
	CHECK_INT(start_agent(0, 0), PORTHOLE_OK);
	/* each thread names itself as it starts: give them a moment */
	for (int i = 0; i < 200 && !(have_thread("porthole-writer") &&
				     have_thread("porthole-wdog") &&
				     have_thread("porthole-memdev"));
	     i++)
		usleep(10 * 1000);
	CHECK(have_thread("porthole-writer"));
	CHECK(have_thread("porthole-wdog"));
	CHECK(have_thread("porthole-memdev"));
	porthole_stop();
	CHECK(thread_gone("porthole-writer"));
}

/* SQLite in the process. */
#if PH_TEST_GLIBC_LIBS
static _Atomic bool renamed_seen;

/*
 * A thread that runs a query, renames itself, and runs another; it lives
 * on until the test has read the second (a thread that has ended keeps
 * the name the writer last read).
 */
static void *renamed_worker(void *arg)
{
	sqlite3 *db = arg;

	pthread_setname_np(pthread_self(), "worker-before");
	sqlite3_exec(db, "SELECT 1 AS first_q", NULL, NULL, NULL);
	usleep(1300 * 1000); /* past the writer's second-old cache entry */
	pthread_setname_np(pthread_self(), "worker-after");
	sqlite3_exec(db, "SELECT 1 AS second_q", NULL, NULL, NULL);
	for (int i = 0; i < 1000 && !atomic_load(&renamed_seen); i++)
		usleep(10 * 1000);
	return NULL;
}

/*
 * Events carry their thread's name as it is now, not as it was when the
 * writer first saw the thread: a thread may name itself late, and a tid
 * comes back once pid_max wraps.
 */
void test_agent__mt_a_renamed_thread_is_named_anew(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	char first[64] = "", second[64] = "";
	sqlite3 *db = NULL;
	pthread_t t;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	CHECK_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
	CHECK_INT(porthole_sqlite_attach(db), PORTHOLE_OK);
	atomic_store(&renamed_seen, false);
	CHECK_INT(pthread_create(&t, NULL, renamed_worker, db), 0);
	for (int i = 0; i < 100 && !second[0]; i++) {
		const struct ph_json *v, *th;

		if (ph_client_line(&c, &line, 100) != 1)
			continue;
		v = parse(&line);
		th = ph_json_get(ph_json_get(v, "data"), "thread");
		if (!ph_json_streq(ph_json_get(v, "event"), "db_end") ||
		    !ph_json_is(th, PH_JSON_STRING))
			continue;
		snprintf(strstr(line.buf, "first_q") ? first : second, 64,
			 "%.*s", (int)th->n, th->u.s);
	}
	atomic_store(&renamed_seen, true);
	pthread_join(t, NULL);
	CHECK_STR(first, "worker-before");
	CHECK_STR(second, "worker-after");
	sqlite3_close(db);
	ph_client_close(&c);
	ph_buf_release(&line);
	porthole_stop();
}

/*
 * The args of the next db_start on c, or "" (none sent); false when no
 * db_start came.
 */
static bool next_args(struct ph_client_conn *c, char *out, size_t cap)
{
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	bool found = false;

	out[0] = '\0';
	while (!found && ph_client_line(c, &line, 2000) == 1) {
		const struct ph_json *v = parse(&line), *a;

		if (!ph_json_streq(ph_json_get(v, "event"), "db_start"))
			continue;
		a = ph_json_get(ph_json_get(v, "data"), "args");
		if (ph_json_is(a, PH_JSON_STRING))
			snprintf(out, cap, "%.*s", (int)a->n, a->u.s);
		found = true;
	}
	ph_buf_release(&line);
	return found;
}

/*
 * Runs "SELECT ?, ?, ?" with a 100-char text, an int, and a text whose
 * 64th byte is the first of a two-byte character.
 */
static void bound_query(sqlite3 *db)
{
	char text[101], split[80];
	sqlite3_stmt *st = NULL;

	memset(text, 'a', 100);
	text[100] = '\0';
	memset(split, 'b', 63);
	snprintf(split + 63, sizeof(split) - 63, "\xc3\xa9zzz");
	if (sqlite3_prepare_v2(db, "SELECT ?, ?, ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, 42);
	sqlite3_bind_text(st, 3, split, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW)
		;
	sqlite3_finalize(st);
}

/*
 * Bound values: each cut to 64 chars and "...", never inside a character;
 * none at all with PORTHOLE_NO_BIND_ARGS.
 */
void test_agent__mt_bound_values_cut_and_opt_out(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 16);
	char args[512], want[160];
	sqlite3 *db = NULL;

	/* 64 chars and "..."; the split character left out whole */
	memset(want, 'a', 64);
	memcpy(want + 64, "..., 42, ", 9);
	memset(want + 73, 'b', 63);
	snprintf(want + 136, sizeof(want) - 136, "...");
	for (int pass = 0; pass < 2; pass++) {
		CHECK_INT(
			start_agent(QUIET | (pass ? PORTHOLE_NO_BIND_ARGS : 0),
				    0),
			PORTHOLE_OK);
		CHECK_INT(connect_hello(&c, &line), 0);
		CHECK_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
		CHECK_INT(porthole_sqlite_attach(db), PORTHOLE_OK);
		bound_query(db);
		CHECK(next_args(&c, args, sizeof(args)));
		CHECK_STR(args, pass ? "" : want);
		sqlite3_close(db);
		ph_client_close(&c);
		porthole_stop();
	}
	ph_buf_release(&line);
}

#endif

/*
 * With nothing to send, the writer backs off: it sleeps 2 ms after an
 * event, then twice as long each time up to 16 ms, where it used to wake
 * every 2 ms for ever (about 500 times a second).  Counted over a second:
 * a slow machine can only wake it less often, never more.
 */
void test_agent__mt_idle_writer_backs_off(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	int tid = 0;
	int64_t before, after;
	bool seen = false;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	for (int i = 0; i < 200 && !(tid = ph_thread_named("porthole-writer"));
	     i++)
		usleep(10 * 1000);
	CHECK(tid > 0);
	usleep(200 * 1000); /* past the first, shorter, waits */
	before = ph_thread_status(tid, "voluntary_ctxt_switches:");
	usleep(1000 * 1000);
	after = ph_thread_status(tid, "voluntary_ctxt_switches:");
	CHECK(before >= 0 && after >= before);
	CHECK(after - before < 150); /* 62 at the 16 ms cap */
	/* and an event after the pause still arrives */
	CHECK_INT(ph_client_connect(&c, sock_name, 2000), 0);
	ph_client_send(&c, "{\"id\":1,\"method\":\"hello\"}\n");
	porthole_mark("after-idle", NULL);
	for (int i = 0; i < 100 && !seen; i++)
		if (ph_client_line(&c, &line, 100) == 1)
			seen = strstr(line.buf, "\"after-idle\"") != NULL;
	CHECK(seen);
	ph_client_close(&c);
	ph_buf_release(&line);
	porthole_stop();
}

void test_agent__mt_hello_events_timeline_errors(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 24);
	const struct ph_json *v, *r;
	int64_t seq = -1, i64;
	int marks = 0;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_STR(porthole_socket_name(), sock_name);
	CHECK_INT(porthole_start_build(NULL, 1), PORTHOLE_ERR_ALREADY_STARTED);
	porthole_mark("before-connect", "backfill me");
	CHECK_INT(ph_client_connect(&c, sock_name, 2000), 0);

	CHECK_INT(ph_client_call(&c, 1, "hello", NULL, &line, NULL, 2000), 1);
	v = parse(&line);
	r = ph_json_get(v, "result");
	CHECK(ph_json_is(ph_json_get(v, "ok"), PH_JSON_TRUE));
	CHECK(ph_json_as_int(ph_json_get(r, "protocol"), &i64) && i64 == 1);
	CHECK(ph_json_streq(ph_json_get(r, "packageName"), "com.example.unit"));
	CHECK(ph_json_is(ph_json_get(r, "debuggable"), PH_JSON_TRUE));
	CHECK(ph_json_is(ph_json_get(r, "collectors"), PH_JSON_ARRAY));
	CHECK(ph_json_is(ph_json_get(r, "startedAt"), PH_JSON_INT));

	/* live events, in order, with increasing seq */
	for (int i = 0; i < 10; i++)
		porthole_mark("tick", NULL);
	while (marks < 10 && ph_client_line(&c, &line, 2000) == 1) {
		v = parse(&line);
		if (!ph_json_streq(ph_json_get(v, "event"), "mark"))
			continue;
		CHECK(ph_json_as_int(ph_json_get(v, "seq"), &i64));
		CHECK(i64 > seq);
		seq = i64;
		CHECK(ph_json_streq(
			ph_json_get(ph_json_get(v, "data"), "label"), "tick"));
		marks++;
	}
	CHECK_INT(marks, 10);

	/* backfill: the mark emitted before we connected */
	CHECK_INT(ph_client_call(&c, 2, "timeline",
				 "{\"kinds\":[\"mark\"],\"limit\":1,"
				 "\"sinceSeq\":0}",
				 &line, NULL, 2000),
		  1);
	v = parse(&line);
	r = ph_json_get(ph_json_get(v, "result"), "events");
	CHECK(ph_json_is(r, PH_JSON_ARRAY) && r->n == 1);
	CHECK(ph_json_streq(ph_json_get(ph_json_get(&r->u.items[0], "data"),
					"detail"),
			    "backfill me"));

	/* the published runtime's unknown-method text, exactly */
	CHECK_INT(ph_client_call(&c, 3, "no_such_method", NULL, &line, NULL,
				 2000),
		  1);
	CHECK_STR(line.buf, "{\"id\":3,\"ok\":false,\"error\":\"unknown "
			    "method 'no_such_method'\"}");
	/* a NUL in the name is shown, not where the name stops; a long one
	 * is cut at a character and says so */
	CHECK_INT(ph_client_send(&c, "{\"id\":31,\"method\":\"a\\u0000b\"}\n"),
		  0);
	CHECK_INT(ph_client_line(&c, &line, 2000), 1);
	CHECK_STR(line.buf, "{\"id\":31,\"ok\":false,\"error\":\"unknown "
			    "method 'a\\\\0b'\"}");
	{
		char req[256];

		/* 99 zeros, then a 2-byte é across the 100th byte */
		snprintf(req, sizeof(req),
			 "{\"id\":32,\"method\":\"%099d\\u00e9z\"}\n", 0);
		CHECK_INT(ph_client_send(&c, req), 0);
		CHECK_INT(ph_client_line(&c, &line, 2000), 1);
		CHECK(strstr(line.buf, "0'\"}") == NULL);
		CHECK(strstr(line.buf, "000...'\"}"));
		CHECK(strstr(line.buf, "\xc3") == NULL);
	}

	/* a malformed line gets an error and the connection lives on */
	CHECK_INT(ph_client_send(&c, "{\"id\":4,\"method\":\n"), 0);
	do
		CHECK_INT(ph_client_line(&c, &line, 2000), 1);
	while (strncmp(line.buf, "{\"id\":-1", 8));
	CHECK(strstr(line.buf, "malformed request: "));
	CHECK(strstr(line.buf, "at byte 17"));
	CHECK_INT(ph_client_call(&c, 5, "stats", NULL, &line, NULL, 2000), 1);
	v = parse(&line);
	CHECK(ph_json_as_int(ph_json_get(ph_json_get(v, "result"), "emitted"),
			     &i64) &&
	      i64 >= 11);
	ph_client_close(&c);
	porthole_stop();
	CHECK(porthole_socket_name() == NULL);
	ph_buf_release(&line);
}

/* A 2x1 frame; *ctx says whether the app marks it secure. */
static int frame_provider(const uint8_t **pixels, int *width, int *height,
			  bool *secure, void *ctx)
{
	static const uint8_t px[8] = { 255, 0, 0, 255, 0, 0, 255, 255 };

	*pixels = px;
	*width = 2;
	*height = 1;
	*secure = *(const bool *)ctx;
	return 0;
}

/*
 * The screenshot method refuses, and says why, rather than fake a frame:
 * with no provider, and with a frame the app marked secure; a plain frame
 * comes back as a PNG.
 */
void test_agent__mt_screenshot_refuses_secure_frames(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	bool secure = true;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(ph_client_connect(&c, sock_name, 2000), 0);
	porthole_set_screenshot_provider(NULL, NULL);
	CHECK_INT(ph_client_call(&c, 1, "screenshot", NULL, &line, NULL, 2000),
		  1);
	CHECK(strstr(line.buf, "\"ok\":false") &&
	      strstr(line.buf, "no screenshot provider"));

	porthole_set_screenshot_provider(frame_provider, &secure);
	CHECK_INT(ph_client_call(&c, 2, "screenshot", NULL, &line, NULL, 2000),
		  1);
	CHECK(strstr(line.buf, "\"ok\":false") &&
	      strstr(line.buf, "marked this frame secure"));
	CHECK(!strstr(line.buf, "\"data\""));

	secure = false;
	CHECK_INT(ph_client_call(&c, 3, "screenshot", NULL, &line, NULL, 2000),
		  1);
	CHECK(strstr(line.buf, "\"ok\":true") &&
	      strstr(line.buf, "\"width\":2,\"height\":1") &&
	      strstr(line.buf, "\"data\":\"iVBORw0KGgo"));
	porthole_set_screenshot_provider(NULL, NULL);
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
}

struct reader {
	struct ph_client_conn *c;
	_Atomic int64_t got;
	int64_t last_seq;
	bool in_order;
};

/* A 200 x 100 frame: 80100 bytes of rows, more than one stored block. */
static uint8_t big_px[200 * 100 * 4];

static int big_provider(const uint8_t **pixels, int *width, int *height,
			bool *secure, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(big_px); i++)
		big_px[i] = (uint8_t)(i * 7 + i / 800);
	*pixels = big_px;
	*width = 200;
	*height = 100;
	*secure = false;
	return 0;
}

/* Standard base64 into out (cap bytes); the length, or -1. */
static long unbase64(const char *s, size_t n, uint8_t *out, size_t cap)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t k = 0;

	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *tbl =
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
			"wxyz0123456789+/";
		const char *at = strchr(tbl, s[i]);

		if (!at || !s[i])
			return -1;
		acc = acc << 6 | (uint32_t)(at - tbl);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (k == cap)
				return -1;
			out[k++] = (uint8_t)(acc >> bits);
		}
	}
	return (long)k;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint32_t crc_png(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return ~crc;
}

/*
 * A zlib stream z into out, exactly want bytes: zlib's own inflate where
 * the tests have zlib; on musl, where the agent writes stored blocks, a
 * reader of stored blocks and the Adler-32.  False on any mismatch.
 */
static bool unzlib(const uint8_t *z, size_t n, uint8_t *out, size_t want)
{
#if PH_TEST_GLIBC_LIBS
	uLongf len = want;

	return uncompress(out, &len, z, n) == Z_OK && len == want;
#else
	size_t at = 2, k = 0;
	uint32_t a = 1, b = 0;
	bool last = false;

	if (n < 6 || ((z[0] << 8) | z[1]) % 31 || (z[0] & 15) != 8)
		return false;
	while (!last) {
		size_t len;

		if (at + 5 > n || (z[at] & 6)) /* only stored blocks here */
			return false;
		last = z[at] & 1;
		len = z[at + 1] | (size_t)z[at + 2] << 8;
		if ((len ^ (z[at + 3] | (size_t)z[at + 4] << 8)) != 0xffff ||
		    at + 5 + len > n || k + len > want)
			return false;
		memcpy(out + k, z + at + 5, len);
		k += len;
		at += 5 + len;
	}
	for (size_t i = 0; i < k; i++) {
		a = (a + out[i]) % 65521;
		b = (b + a) % 65521;
	}
	return k == want && at + 4 == n && be32(z + at) == (b << 16 | a);
#endif
}

/*
 * The screenshot's PNG read back as a decoder reads it: every chunk's
 * CRC, the IHDR, and the IDAT's zlib stream inflating to the provider's
 * rows, each after its filter byte (0).
 */
void test_agent__mt_screenshot_png_decodes_to_its_pixels(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 22);
	static uint8_t png[1 << 20], rows[100 * (200 * 4 + 1)];
	const struct ph_json *v, *data;
	uint8_t *idat = NULL;
	size_t at = 8, idat_len = 0;
	long n;
	bool iend = false;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(ph_client_connect(&c, sock_name, 2000), 0);
	porthole_set_screenshot_provider(big_provider, NULL);
	CHECK_INT(ph_client_call(&c, 1, "screenshot", NULL, &line, NULL, 5000),
		  1);
	porthole_set_screenshot_provider(NULL, NULL);
	ph_client_close(&c);
	porthole_stop();
	v = parse(&line);
	data = ph_json_get(ph_json_get(v, "result"), "data");
	CHECK(ph_json_is(data, PH_JSON_STRING));
	n = unbase64(data->u.s, data->n, png, sizeof(png));
	CHECK(n > 8 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8));
	while (!iend && at + 12 <= (size_t)n) {
		uint32_t len = be32(png + at);

		CHECK(at + 12 + len <= (size_t)n);
		CHECK_INT(crc_png(png + at + 4, len + 4),
			  be32(png + at + 8 + len));
		if (!memcmp(png + at + 4, "IHDR", 4)) {
			CHECK_INT(be32(png + at + 8), 200);
			CHECK_INT(be32(png + at + 12), 100);
		} else if (!memcmp(png + at + 4, "IDAT", 4)) {
			idat = png + at + 8;
			idat_len = len;
		}
		iend = !memcmp(png + at + 4, "IEND", 4);
		at += 12 + len;
	}
	CHECK(iend && idat);
	CHECK(unzlib(idat, idat_len, rows, sizeof(rows)));
	for (int y = 0; y < 100; y++) {
		CHECK_INT(rows[y * 801], 0);
		CHECK(!memcmp(rows + y * 801 + 1, big_px + y * 800, 800));
	}
	ph_buf_release(&line);
}
/* Reads marks until the one labelled "last", checking seq order. */
static void *read_marks(void *p)
{
	struct reader *rd = p;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	struct ph_arena a;
	struct ph_json *v;
	int64_t seq;

	ph_arena_init(&a, 0, SIZE_MAX);
	rd->in_order = true;
	rd->last_seq = -1;
	while (ph_client_line(rd->c, &line, 10000) == 1) {
		ph_arena_reset(&a);
		if (ph_json_parse(&a, line.buf, line.len, &v, NULL) ||
		    !ph_json_streq(ph_json_get(v, "event"), "mark"))
			continue;
		rd->got++;
		if (!ph_json_as_int(ph_json_get(v, "seq"), &seq) ||
		    seq <= rd->last_seq)
			rd->in_order = false;
		rd->last_seq = seq;
		if (ph_json_streq(ph_json_get(ph_json_get(v, "data"), "label"),
				  "last"))
			break;
	}
	ph_arena_release(&a);
	ph_buf_release(&line);
	return NULL;
}

/*
 * A client that never reads is dropped from fan-out instead of slowing
 * anyone: a reading client gets everything, and for the stalled one
 * delivered + dropped = everything emitted since it connected.
 */
void test_agent__mt_slow_client_never_blocks_the_others(void)
{
	struct ph_client_conn slow, fast;
	struct ph_buf line = PH_BUF_INIT(1 << 24);
	struct reader rd = { .c = &fast };
	const struct ph_json *v, *r;
	int64_t delivered, lost, first, clients = 0, share = 0;
	pthread_t t;

	CHECK_INT(start_agent(PORTHOLE_NO_WATCHDOG | PORTHOLE_NO_DEVICE |
				      PORTHOLE_NO_MEMORY,
			      1 << 16),
		  PORTHOLE_OK);
	/* clients that came and went leave no share behind */
	for (int i = 0; i < 20; i++) {
		struct ph_client_conn gone;

		CHECK_INT(ph_client_connect(&gone, sock_name, 2000), 0);
		CHECK_INT(ph_client_call(&gone, 1, "hello", NULL, &line, NULL,
					 2000),
			  1);
		ph_client_close(&gone);
	}
	CHECK_INT(ph_client_connect(&slow, sock_name, 2000), 0);
	CHECK_INT(ph_client_connect(&fast, sock_name, 2000), 0);
	/* both are registered once they have been answered */
	CHECK_INT(ph_client_call(&slow, 1, "hello", NULL, &line, NULL, 2000),
		  1);
	CHECK_INT(ph_client_call(&fast, 1, "hello", NULL, &line, NULL, 2000),
		  1);
	/* the writer reads the hang-ups in its own time: two left, each
	 * with half the 8 MiB budget, which is the 4 MiB ceiling */
	for (int i = 0; i < 200; i++) {
		CHECK_INT(ph_client_call(&fast, 2, "client_stats", NULL, &line,
					 NULL, 2000),
			  1);
		v = parse(&line);
		r = ph_json_get(v, "result");
		CHECK(ph_json_as_int(ph_json_get(r, "clients"), &clients));
		if (clients == 2)
			break;
		usleep(10 * 1000);
	}
	CHECK_INT(clients, 2);
	CHECK(ph_json_as_int(ph_json_get(r, "shareBytes"), &share));
	CHECK_INT(share, 4 << 20);
	pthread_create(&t, NULL, read_marks, &rd);
	/* about 13 MB of lines: well past the stalled client's 4 MiB */
	for (int i = 0; i < 100000; i++) {
		porthole_mark("flood",
			      "0123456789012345678901234567890123456789");
		/*
		 * Stay within a few thousand events of the reading client, so
		 * only the stalled one falls behind, however slow this build
		 * (sanitizers) makes the reader.
		 */
		while (i - atomic_load(&rd.got) > 3000)
			usleep(1000);
	}
	porthole_mark("last", NULL);
	pthread_join(t, NULL);
	CHECK_INT(rd.got, 100001);
	CHECK(rd.in_order);
	/* the stalled client: ask on its own connection how it fared */
	CHECK_INT(ph_client_send(&slow,
				 "{\"id\":9,\"method\":\"client_stats\"}\n"),
		  0);
	while (ph_client_line(&slow, &line, 5000) == 1 &&
	       strncmp(line.buf, "{\"id\":9,", 8))
		;
	v = parse(&line);
	r = ph_json_get(v, "result");
	CHECK(ph_json_as_int(ph_json_get(r, "delivered"), &delivered));
	CHECK(ph_json_as_int(ph_json_get(r, "droppedForClient"), &lost));
	CHECK(ph_json_as_int(ph_json_get(r, "firstSeq"), &first));
	CHECK(lost > 0);
	/* exactly everything from its first event to "last" (the last
	 * event: watchdog, sampler and device are off) */
	CHECK_INT(delivered + lost, rd.last_seq - first + 1);
	ph_client_close(&slow);
	ph_client_close(&fast);
	porthole_stop();
	ph_buf_release(&line);
}

/*
 * What a client read until a mark labelled "last": marks, dropped counts
 * by scope, the last mark's seq and its detail as an int (-1 without);
 * and whether the marks "t<thread>" with detail "<index>" came in each
 * thread's order.
 */
struct mark_reader {
	struct ph_client_conn *c;
	int64_t marks, queue_lost, client_lost, last_seq, last_i;
	int64_t next[32]; /* each thread's next index */
	bool in_order;
	_Atomic bool done;
};

static void *read_until_last(void *p)
{
	struct mark_reader *rd = p;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	struct ph_arena a;
	struct ph_json *v;
	const struct ph_json *d;
	const char *label;
	int64_t n;

	ph_arena_init(&a, 0, SIZE_MAX);
	rd->in_order = true;
	rd->last_i = rd->last_seq = -1;
	/* A generous bound: flooders on a loaded machine (or under TSan)
	 * can starve the writer for seconds between two lines. */
	while (ph_client_line(rd->c, &line, 120000) == 1) {
		ph_arena_reset(&a);
		if (ph_json_parse(&a, line.buf, line.len, &v, NULL))
			continue;
		d = ph_json_get(v, "data");
		if (ph_json_streq(ph_json_get(v, "event"), "dropped") &&
		    ph_json_as_int(ph_json_get(d, "count"), &n)) {
			if (ph_json_streq(ph_json_get(d, "scope"), "queue"))
				rd->queue_lost += n;
			else
				rd->client_lost += n;
		}
		if (!ph_json_streq(ph_json_get(v, "event"), "mark"))
			continue;
		rd->marks++;
		label = ph_json_strdup(&a, ph_json_get(d, "label"));
		/* a decimal string reads as an int (the v1 quirk) */
		if (!ph_json_as_int(ph_json_get(d, "detail"), &n))
			n = -1;
		if (label && !strcmp(label, "last")) {
			rd->last_i = n;
			if (!ph_json_as_int(ph_json_get(v, "seq"),
					    &rd->last_seq))
				rd->last_seq = -1;
			break;
		}
		if (label && label[0] == 't') {
			int who = atoi(label + 1);

			if (who < 0 || who >= 32 || n < rd->next[who])
				rd->in_order = false;
			else
				rd->next[who] = n + 1;
		}
	}
	atomic_store(&rd->done, true);
	ph_arena_release(&a);
	ph_buf_release(&line);
	return NULL;
}

static pthread_barrier_t flood_start;

struct flooder {
	int who, count;
	bool had_lane, overflowed;
};

static void *flood_marks(void *p)
{
	struct flooder *f = p;
	char label[16], detail[24];

	snprintf(label, sizeof(label), "t%d", f->who);
	for (int i = 0; i < f->count; i++) {
		snprintf(detail, sizeof(detail), "%d", i);
		porthole_mark(label, detail);
		/* all have taken a lane or found none before any ends */
		if (i == 0)
			pthread_barrier_wait(&flood_start);
		f->had_lane |= ph_emitter_tls.lane != NULL;
		f->overflowed |= ph_emitter_tls.lane && !ph_emitter_tls.cells;
	}
	return NULL;
}

static void *one_mark(void *p)
{
	porthole_mark("once", NULL);
	*(bool *)p = ph_emitter_tls.lane != NULL;
	return NULL;
}

/*
 * More threads than lanes, flooding faster than the writer drains: a full
 * lane overflows into the shared queue and each thread's events still
 * come in the order it emitted them, delivered + dropped = emitted; and
 * the lanes of threads that ended are taken again by new ones.
 */
void test_agent__mt_lanes_overflow_in_order_and_come_back(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 16);
	struct mark_reader rd = { .c = &c };
	struct flooder f[20];
	pthread_t t[20], rt;
	int laned = 0, overflowed = 0, again = 0;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	pthread_create(&rt, NULL, read_until_last, &rd);
	pthread_barrier_init(&flood_start, NULL, 20);
	for (int i = 0; i < 20; i++) {
		f[i] = (struct flooder){ .who = i, .count = 4000 };
		pthread_create(&t[i], NULL, flood_marks, &f[i]);
	}
	for (int i = 0; i < 20; i++) {
		pthread_join(t[i], NULL);
		laned += f[i].had_lane;
		overflowed += f[i].overflowed;
	}
	pthread_barrier_destroy(&flood_start);
	/*
	 * "last" until the reader has one: a "last" the reading client was
	 * lagging for would be told of only by the event after it (a flake
	 * at load 4 when it was sent once: the reader never saw it).
	 */
	for (int i = 1; i <= 3000 && !atomic_load(&rd.done); i++) {
		char n[16];

		snprintf(n, sizeof(n), "%d", i);
		porthole_mark("last", n);
		usleep(20 * 1000);
	}
	pthread_join(rt, NULL);
	CHECK(rd.in_order);
	/* every seq up to the "last" it read: delivered, or told lost */
	CHECK(rd.last_i >= 1);
	CHECK_INT(rd.marks + rd.queue_lost + rd.client_lost,
		  20 * 4000 + rd.last_i);
	/* this thread and the reader's have none of their own here */
	CHECK(laned > 0 && laned < 20);
	CHECK(overflowed > 0);
	/* one at a time, each after the last ended: all find a lane */
	for (int i = 0; i < 3 * PH_LANES; i++) {
		bool had = false;
		pthread_t one;

		usleep(20 * 1000); /* the writer frees a drained lane */
		pthread_create(&one, NULL, one_mark, &had);
		pthread_join(one, NULL);
		again += had;
	}
	CHECK_INT(again, 3 * PH_LANES);
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
}

/* A screenshot provider that holds the writer until the test lets go. */
static _Atomic int writer_held; /* 1: held, 2: let go */

static int holding_provider(const uint8_t **pixels, int *width, int *height,
			    bool *secure, void *ctx)
{
	(void)ctx;
	atomic_store(&writer_held, 1);
	for (int i = 0; i < 1000 && atomic_load(&writer_held) != 2; i++)
		usleep(10 * 1000);
	*secure = true; /* refused: its pixels do not matter */
	*pixels = NULL;
	*width = *height = 0;
	return 0;
}

/*
 * Events the queue loses are every client's loss: each client is told
 * (a lagging one when it catches up) and counts them, so for each client
 * delivered + dropped = every seq from its first.
 */
void test_agent__mt_queue_loss_reaches_every_client(void)
{
	struct ph_client_conn fast, slow, asker;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	struct mark_reader rd = { .c = &fast };
	const struct ph_json *v, *r;
	int64_t n, delivered = -1, lagged = -1, in_queue = -1, first = -1;
	bool told = false;
	pthread_t t;
	char filler[201];
	int lasts;

	memset(filler, 'x', 200);
	filler[200] = '\0';

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&fast, &line), 0);
	CHECK_INT(connect_hello(&slow, &line), 0);
	CHECK_INT(connect_hello(&asker, &line), 0);
	pthread_create(&t, NULL, read_until_last, &rd);
	porthole_mark("first", NULL); /* both have had an event before */
	/* hold the writer, then fill the queue and the lane past full */
	atomic_store(&writer_held, 0);
	porthole_set_screenshot_provider(holding_provider, NULL);
	CHECK_INT(ph_client_send(&asker,
				 "{\"id\":5,\"method\":\"screenshot\"}\n"),
		  0);
	for (int i = 0; i < 500 && atomic_load(&writer_held) != 1; i++)
		usleep(10 * 1000);
	CHECK_INT(atomic_load(&writer_held), 1);
	n = (int64_t)(ph_agent.queue.mask + 1 + PH_LANE_CELLS) + 5000;
	/* 200 bytes each: more than the silent client's share gets in */
	for (int64_t i = 0; i < n; i++)
		porthole_mark("f", filler);
	atomic_store(&writer_held, 2);
	/* the "last"s must get in: the writer frees the queue first */
	for (int i = 0; i < 500 && atomic_load(&ph_agent.queue.released) !=
					   atomic_load(&ph_agent.queue.enq);
	     i++)
		usleep(10 * 1000);
	/*
	 * "last" until the reader has one: a "last" the reading client was
	 * lagging for would be told of only by the event after it.
	 */
	for (lasts = 1; lasts <= 200; lasts++) {
		char i[16];

		snprintf(i, sizeof(i), "%d", lasts);
		porthole_mark("last", i);
		usleep(20 * 1000);
		if (atomic_load(&rd.done))
			break;
	}
	pthread_join(t, NULL);
	porthole_set_screenshot_provider(NULL, NULL);
	/* the reading client: all of it, or told what it lost */
	CHECK(rd.queue_lost > 0);
	CHECK_INT(rd.marks + rd.queue_lost + rd.client_lost, n + 1 + rd.last_i);
	/*
	 * The writer hands each event to every client at once: once the
	 * reading client has the last "last" sent, the silent one's counts
	 * include it.  Asked before (a loaded machine's writer is behind),
	 * its counts missed the newest "last"s.
	 */
	for (int64_t seen = rd.last_i;
	     seen < lasts && ph_client_line(&fast, &line, 60000) == 1;) {
		const struct ph_json *d;
		int64_t i;

		v = parse(&line);
		d = ph_json_get(v, "data");
		if (ph_json_streq(ph_json_get(d, "label"), "last") &&
		    ph_json_as_int(ph_json_get(d, "detail"), &i))
			seen = i;
	}
	/* the client that read nothing counts the queue's loss as its own */
	CHECK_INT(ph_client_send(&slow,
				 "{\"id\":9,\"method\":\"client_stats\"}\n"),
		  0);
	while (ph_client_line(&slow, &line, 5000) == 1 &&
	       strncmp(line.buf, "{\"id\":9,", 8))
		CHECK(!strstr(line.buf, "\"scope\":\"queue\""));
	v = parse(&line);
	r = ph_json_get(v, "result");
	CHECK(ph_json_as_int(ph_json_get(r, "delivered"), &delivered));
	CHECK(ph_json_as_int(ph_json_get(r, "droppedForClient"), &lagged));
	CHECK(ph_json_as_int(ph_json_get(r, "droppedInQueue"), &in_queue));
	CHECK(ph_json_as_int(ph_json_get(r, "firstSeq"), &first));
	CHECK(lagged > 0); /* it was lagging when the queue lost them */
	CHECK_INT(in_queue, rd.queue_lost);
	/* up to the last "last" sent, one seq each after the one it read */
	CHECK_INT(delivered + lagged + in_queue,
		  rd.last_seq + (lasts - rd.last_i) - first + 1);
	/* caught up, it is told of the queue's loss before the next event */
	porthole_mark("after", NULL);
	while (ph_client_line(&slow, &line, 5000) == 1 &&
	       !strstr(line.buf, "\"label\":\"after\""))
		told |= strstr(line.buf, "\"scope\":\"queue\"") != NULL;
	CHECK(told);
	ph_client_close(&fast);
	ph_client_close(&slow);
	ph_client_close(&asker);
	porthole_stop();
	ph_buf_release(&line);
}

/* A client on the legacy TCP port, as ph_client_connect makes one. */
static int connect_tcp(struct ph_client_conn *c, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->off = 0;
	ph_buf_init(&c->in, 64 << 20);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	return 0;
}

/* A port nothing listens on now: the kernel's pick for port 0. */
static int free_tcp_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len))
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* Whether /proc/net/tcp has a listener on port, and on what address. */
static bool listening_on(int port, const char *hex_addr)
{
	char line[256], want[32];
	FILE *f = fopen("/proc/net/tcp", "r");
	bool found = false;

	snprintf(want, sizeof(want), "%s:%04X 00000000:0000 0A", hex_addr,
		 port);
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, want) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * Eight clients at once, and one on the legacy TCP port (bound to
 * 127.0.0.1 only): each says hello before any answer is read, and each
 * gets the next event live.
 */
void test_agent__mt_eight_clients_and_the_legacy_port(void)
{
	struct porthole_config cfg = {
		.app_id = "com.example.unit",
		.data_dir = ph_test_tmpdir(),
		.flags = QUIET | PORTHOLE_NO_INTEGRATION_CHECK,
	};
	struct ph_client_conn c[9];
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	int port = free_tcp_port(), hellos = 0, live = 0;

	porthole_stop();
	snprintf(sock_name, sizeof(sock_name), "porthole.unit8-%d",
		 (int)getpid());
	cfg.socket_name = sock_name;
	cfg.legacy_tcp_port = port;
	CHECK_INT(porthole_start_build(&cfg, 1), PORTHOLE_OK);
	CHECK(listening_on(port, "0100007F"));
	CHECK(!listening_on(port, "00000000"));
	for (int i = 0; i < 8; i++)
		CHECK_INT(ph_client_connect(&c[i], sock_name, 2000), 0);
	CHECK_INT(connect_tcp(&c[8], port), 0);
	for (int i = 0; i < 9; i++)
		CHECK_INT(ph_client_send(&c[i], "{\"id\":1,\"method\":"
						"\"hello\"}\n"),
			  0);
	for (int i = 0; i < 9; i++)
		hellos += ph_client_line(&c[i], &line, 3000) == 1 &&
			  !strncmp(line.buf, "{\"id\":1,\"ok\":true", 16);
	CHECK_INT(hellos, 9);
	porthole_mark("to-all", NULL);
	for (int i = 0; i < 9; i++) {
		while (ph_client_line(&c[i], &line, 3000) == 1 &&
		       !strstr(line.buf, "\"label\":\"to-all\""))
			;
		live += strstr(line.buf, "\"label\":\"to-all\"") != NULL;
		ph_client_close(&c[i]);
	}
	CHECK_INT(live, 9);
	porthole_stop();
	ph_buf_release(&line);
}

/* The labels of the marks in a timeline answer, in order, joined by ' '. */
static void timeline_marks(struct ph_client_conn *c, const char *params,
			   char *out, size_t cap)
{
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	const struct ph_json *ev;
	size_t n = 0;

	out[0] = '\0';
	if (ph_client_call(c, 7, "timeline", params, &line, NULL, 2000) == 1) {
		ev = ph_json_get(ph_json_get(parse(&line), "result"), "events");
		for (size_t i = 0; ph_json_at(ev, i); i++) {
			const struct ph_json *l = ph_json_get(
				ph_json_get(ph_json_at(ev, i), "data"),
				"label");

			if (ph_json_is(l, PH_JSON_STRING) && n + l->n + 2 < cap)
				n += (size_t)snprintf(out + n, cap - n,
						      "%s%.*s", n ? " " : "",
						      (int)l->n, l->u.s);
		}
	}
	ph_buf_release(&line);
}

/* timeline by time: a window (from, to) and the last sinceMs. */
void test_agent__mt_timeline_by_time(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 16);
	char params[160], got[256];
	int64_t t[3];

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	for (int i = 0; i < 3; i++) {
		char label[8];

		snprintf(label, sizeof(label), "w%d", i);
		t[i] = ph_clock_uptime_ms();
		porthole_mark(label, NULL);
		usleep(300 * 1000);
	}
	/* the middle one alone (300 ms apart: margins for a slow build) */
	snprintf(params, sizeof(params),
		 "{\"kinds\":[\"mark\"],\"from\":%lld,\"to\":%lld}",
		 (long long)t[1] - 100, (long long)t[2] - 100);
	timeline_marks(&c, params, got, sizeof(got));
	CHECK_STR(got, "w1");
	/* from 100 ms before the newest on: the newest alone */
	snprintf(params, sizeof(params),
		 "{\"kinds\":[\"mark\"],\"sinceMs\":%lld}",
		 (long long)(ph_clock_uptime_ms() - t[2] + 100));
	timeline_marks(&c, params, got, sizeof(got));
	CHECK_STR(got, "w2");
	/* the newest `limit` inside the window */
	snprintf(params, sizeof(params),
		 "{\"kinds\":[\"mark\"],\"from\":%lld,\"limit\":2}",
		 (long long)t[0] - 100);
	timeline_marks(&c, params, got, sizeof(got));
	CHECK_STR(got, "w1 w2");
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
}

/* The C agent's shapes match the published runtime's for shared kinds. */
static const char *json_type(const struct ph_json *v)
{
	switch (v->type) {
	case PH_JSON_STRING: return "string";
	case PH_JSON_INT:
	case PH_JSON_DOUBLE: return "number";
	case PH_JSON_TRUE:
	case PH_JSON_FALSE: return "bool";
	case PH_JSON_ARRAY: return "array";
	case PH_JSON_OBJECT: return "object";
	}
	return "null";
}

void test_agent__mt_shapes_match_the_published_runtime(void)
{
	const char *path = FIXTURE("porthole-wire/received.ndjson");
	struct ph_buf fixture = PH_BUF_INIT(1 << 24),
		      ours = PH_BUF_INIT(1 << 24);
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	struct ph_client_conn c;
	struct ph_arena a2;
	const char *trig[] = { "CartViewModel.items" };
	uint64_t q, h;
	int compared = 0;

	CHECK_INT(ph_buf_read_file(&fixture, path), 0);
	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	porthole_state_write("CartViewModel.items");
	porthole_recompose("Cart.ItemRow#1", "Cart.ItemRow", "Cart", NULL, 0);
	porthole_recompose("Cart.ItemRow#2", "Cart.ItemRow", "Cart", trig, 1);
	porthole_nav(PORTHOLE_NAV_PUSH, "cart", "Cart", "cartId=88213",
		     "porthole://cart/99001?token=abc", 2);
	q = porthole_db_start("SELECT * FROM items WHERE id = ?", "88213",
			      false);
	porthole_db_end(q, 3, NULL);
	h = porthole_http_start("POST", "http://127.0.0.1/v1/checkout?t=1");
	porthole_http_end(h, 402, NULL);
	porthole_mark("end", NULL);
	while (ph_client_line(&c, &line, 3000) == 1) {
		CHECK_INT(ph_buf_add(&ours, line.buf, line.len), 0);
		CHECK_INT(ph_buf_addch(&ours, '\n'), 0);
		if (strstr(line.buf, "\"label\":\"end\""))
			break;
	}
	ph_client_close(&c);
	porthole_stop();
	/* For every (kind, key) both sides send, the JSON type agrees. */
	ph_arena_init(&a2, 0, SIZE_MAX);
	for (char *o = ours.buf; *o;) {
		char *onl = strchr(o, '\n');
		struct ph_json *ov;
		const struct ph_json *okind, *odata;

		*onl = '\0';
		ph_arena_reset(&a2);
		CHECK_INT(ph_json_parse(&a2, o, strlen(o), &ov, NULL), 0);
		okind = ph_json_get(ov, "event");
		odata = ph_json_get(ov, "data");
		for (char *f = fixture.buf; *f;) {
			char *fnl = strchr(f, '\n');
			struct ph_json *fv;
			const struct ph_json *fdata;

			*fnl = '\0';
			ph_arena_reset(&arena);
			if (!ph_json_parse(&arena, f, strlen(f), &fv, NULL) &&
			    ph_json_get(fv, "event") &&
			    ph_json_equal(ph_json_get(fv, "event"), okind)) {
				fdata = ph_json_get(fv, "data");
				for (uint32_t k = 0; k < fdata->n; k++) {
					const struct ph_json_member *m =
						&fdata->u.members[k];
					char key[64];
					const struct ph_json *mine;

					snprintf(key, sizeof(key), "%.*s",
						 (int)m->key.n, m->key.u.s);
					mine = ph_json_get(odata, key);
					if (!mine)
						continue;
					if (strcmp(json_type(mine),
						   json_type(&m->value)))
						ph_test_fail(
							__FILE__, __LINE__,
							"%.*s.%s: ours %s, "
							"published %s",
							(int)okind->n,
							okind->u.s, key,
							json_type(mine),
							json_type(&m->value));
					compared++;
				}
			}
			*fnl = '\n';
			f = fnl + 1;
		}
		*onl = '\n';
		o = onl + 1;
	}
	CHECK(compared > 50);
	/* the deep link's query value never left the process */
	CHECK(!strstr(ours.buf, "token=abc"));
	CHECK(strstr(ours.buf, "porthole://cart/99001?token=*"));
	ph_arena_release(&a2);
	ph_buf_release(&fixture);
	ph_buf_release(&ours);
	ph_buf_release(&line);
}

/* Collects events of one kind from the client until `want` arrived. */
static int collect(struct ph_client_conn *c, const char *kind, int want,
		   struct ph_buf *out)
{
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	char needle[64];
	int n = 0;

	snprintf(needle, sizeof(needle), "{\"event\":\"%s\"", kind);
	while (n < want && ph_client_line(c, &line, 3000) == 1) {
		if (strncmp(line.buf, needle, strlen(needle)))
			continue;
		if (ph_buf_add(out, line.buf, line.len) ||
		    ph_buf_addch(out, '\n'))
			break;
		n++;
	}
	ph_buf_release(&line);
	return n;
}

/*
 * Memory: the once-a-second sample carries PSS on its first (and every
 * 5th) reading, and a sharp rise in RSS is sent at once, marked so.
 */
void test_agent__mt_memory_sample_and_a_sharp_rise(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 16), got = PH_BUF_INIT(1 << 16);
	const struct ph_json *v, *d = NULL;
	int64_t rss0 = -1, pss = -1, anon = -1;
	void *big[6];
	size_t big_size[6];
	unsigned touched = 0;
	int n_big = 0;
	bool rise = false;

	CHECK_INT(start_agent(PORTHOLE_NO_WATCHDOG | PORTHOLE_NO_DEVICE, 0),
		  PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	/* the first interval sample (the sampler's first, so with PSS) */
	for (int i = 0; i < 40 && !d; i++) {
		CHECK_INT(ph_client_call(&c, 2, "timeline",
					 "{\"sinceSeq\":0,\"kinds\":"
					 "[\"memory\"],\"limit\":1}",
					 &line, NULL, 2000),
			  1);
		v = ph_json_get(ph_json_get(parse(&line), "result"), "events");
		d = ph_json_get(ph_json_at(v, 0), "data");
		if (!d)
			usleep(50 * 1000);
	}
	CHECK(ph_json_streq(ph_json_get(d, "trigger"), "interval"));
	CHECK(ph_json_as_int(ph_json_get(d, "rssMb"), &rss0));
	CHECK(ph_json_as_int(ph_json_get(d, "totalRamMb"), &pss));
	CHECK(ph_json_as_int(ph_json_get(d, "nativeRamMb"), &anon));
	CHECK(pss > 0 && anon > 0 && anon <= pss && pss <= rss0);
	/*
	 * RSS up by half and 96 MB at least, far past a quarter and 8 MB (a
	 * sanitizer's RSS is large), in one step: the pages are made in a
	 * memfd first, where they are not this process's RSS, then mapped
	 * in by one mmap.  Written through malloc, a loaded machine spreads
	 * the rise over several once-a-second samples, each less than a
	 * quarter: a climb, not a sharp rise.  The rise is judged against
	 * the last memory event sent before it, as the sampler judges it;
	 * if an interval sample takes it first, the test maps more.
	 */
	for (int tries = 0; tries < 6 && !rise; tries++) {
		size_t size = (size_t)(rss0 / 2 + 96) << 20;
		int fd = memfd_create("rise", MFD_CLOEXEC);

		CHECK(n_big < 6 && fd >= 0);
		CHECK_INT(fallocate(fd, 0, 0, (off_t)size), 0);
		big[n_big] = mmap(NULL, size, PROT_READ,
				  MAP_SHARED | MAP_POPULATE, fd, 0);
		close(fd);
		CHECK(big[n_big] != MAP_FAILED);
		if (big[n_big] == MAP_FAILED)
			break;
		/* Where MAP_POPULATE is not passed on (qemu-user), a read of
		 * each page maps it: page cache already made, nothing to
		 * zero, so still one quick step. */
		for (size_t at = 0; at < size; at += 4096)
			touched += ((volatile const char *)big[n_big])[at];
		big_size[n_big++] = size;
		for (int i = 0; i < 4 && !rise; i++) {
			int64_t rss = -1;

			ph_buf_reset(&got);
			if (collect(&c, "memory", 1, &got) != 1)
				continue;
			d = ph_json_get(parse(&got), "data");
			rise = ph_json_streq(ph_json_get(d, "trigger"), "rise");
			if (!ph_json_as_int(ph_json_get(d, "rssMb"), &rss))
				continue;
			if (rise)
				CHECK(rss > rss0 + 8 && rss > rss0 * 5 / 4);
			rss0 = rss; /* the sampler's baseline from here */
		}
	}
	CHECK(rise);
	(void)touched;
	for (int i = 0; i < n_big; i++)
		munmap(big[i], big_size[i]);
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
	ph_buf_release(&got);
}

static void frame(void)
{
	porthole_frame_begin();
	porthole_frame_phase(PORTHOLE_PHASE_DRAW);
	porthole_frame_end();
}

/* docs/protocol.md section 6, launch by launch. */
/* Turned off, the startup collector sends no startup event. */
void test_agent__mt_startup_can_be_turned_off(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	bool startup = false, done = false;

	CHECK_INT(start_agent(QUIET | PORTHOLE_NO_STARTUP, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	porthole_main_loop_register();
	porthole_lifecycle(PORTHOLE_SCREEN_CREATED, "Home", false);
	porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "Home", false);
	porthole_main_loop_ping();
	frame();
	porthole_report_fully_drawn();
	/* past the 1.2 s a cold launch waits for reportFullyDrawn */
	usleep(1500 * 1000);
	porthole_mark("done", NULL);
	while (!done && ph_client_line(&c, &line, 3000) == 1) {
		startup |= !strncmp(line.buf, "{\"event\":\"startup\"", 18);
		done = strstr(line.buf, "\"label\":\"done\"") != NULL;
	}
	CHECK(done);
	CHECK(!startup);
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
}

void test_agent__mt_startup_classification(void)
{
	struct ph_client_conn c;
	struct ph_buf ev = PH_BUF_INIT(1 << 20), line = PH_BUF_INIT(1 << 20);

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	porthole_main_loop_register();
	/* first screen made from saved state before the loop ran: lukewarm */
	porthole_lifecycle(PORTHOLE_SCREEN_CREATED, "Home", true);
	porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "Home", false);
	porthole_main_loop_ping();
	frame();
	porthole_report_fully_drawn();
	/* back from the background with the same screen: hot */
	porthole_lifecycle(PORTHOLE_SCREEN_HIDDEN, "Home", false);
	porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "Home", false);
	frame();
	porthole_report_fully_drawn();
	/* the screen was destroyed and made again: warm */
	porthole_lifecycle(PORTHOLE_SCREEN_HIDDEN, "Home", false);
	porthole_lifecycle(PORTHOLE_SCREEN_DESTROYED, "Home", false);
	porthole_lifecycle(PORTHOLE_SCREEN_CREATED, "Home", false);
	porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "Home", false);
	frame();
	porthole_report_fully_drawn();
	CHECK_INT(collect(&c, "startup", 3, &ev), 3);
	CHECK(strstr(ev.buf, "\"classification\":\"lukewarm\""));
	CHECK(strstr(ev.buf, "\"classification\":\"hot\""));
	CHECK(strstr(ev.buf, "\"classification\":\"warm\""));
	CHECK(strstr(ev.buf, "\"originKind\":\"fork\""));
	CHECK(strstr(ev.buf, "\"originKind\":\"activity\""));
	CHECK(strstr(ev.buf, "\"restoredState\":true"));
	CHECK(strstr(ev.buf, "\"launchIndex\":2"));
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&ev);
	ph_buf_release(&line);
}

/*
 * A fully drawn reported after the launch's startup event went out (here,
 * the screen hidden before the report) is sent as a fully_drawn event
 * naming that launch by its originMs, once.
 */
void test_agent__mt_late_fully_drawn_is_its_own_event(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	const struct ph_json *d;
	int64_t origin = -1, late_origin = -2, drawn = -1;
	int startups = 0, late = 0;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	porthole_main_loop_register();
	porthole_lifecycle(PORTHOLE_SCREEN_CREATED, "Home", false);
	porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "Home", false);
	porthole_main_loop_ping();
	frame();
	/* hidden while the launch waits for fully drawn: it goes out now */
	porthole_lifecycle(PORTHOLE_SCREEN_HIDDEN, "Home", false);
	porthole_report_fully_drawn();
	porthole_report_fully_drawn(); /* once per launch */
	porthole_mark("done", NULL);
	while (ph_client_line(&c, &line, 3000) == 1 &&
	       strncmp(line.buf, "{\"event\":\"mark\"", 15)) {
		if (!strncmp(line.buf, "{\"event\":\"startup\"", 18)) {
			startups++;
			CHECK(!strstr(line.buf, "reportFullyDrawnMs"));
			d = ph_json_get(parse(&line), "data");
			CHECK(ph_json_as_int(ph_json_get(d, "originMs"),
					     &origin));
		} else if (!strncmp(line.buf, "{\"event\":\"fully_drawn\"",
				    22)) {
			late++;
			CHECK(strstr(line.buf, "\"classification\":\"cold\""));
			CHECK(strstr(line.buf, "\"launchIndex\":0"));
			d = ph_json_get(parse(&line), "data");
			CHECK(ph_json_as_int(ph_json_get(d, "originMs"),
					     &late_origin));
			CHECK(ph_json_as_int(
				ph_json_get(d, "reportFullyDrawnMs"), &drawn));
		}
	}
	CHECK_INT(startups, 1);
	CHECK_INT(late, 1);
	CHECK(origin == late_origin && drawn >= origin);
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
}

/* A frame over budget is sent with its phases; one on time is not. */
void test_agent__mt_late_frames_and_taps(void)
{
	struct ph_client_conn c;
	struct ph_buf ev = PH_BUF_INIT(1 << 20), line = PH_BUF_INIT(1 << 20);
	int64_t t0;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	porthole_main_loop_register();
	frame(); /* on time: not sent */
	t0 = ph_clock_uptime_ms();
	porthole_input(PORTHOLE_INPUT_DOWN, 10, 10, t0, "button");
	porthole_input(PORTHOLE_INPUT_UP, 10, 10, t0, "button");
	porthole_frame_begin();
	porthole_frame_phase(PORTHOLE_PHASE_LAYOUT);
	usleep(60 * 1000); /* 60 ms: over the 16.7 ms budget */
	porthole_frame_phase(PORTHOLE_PHASE_DRAW);
	porthole_frame_end();
	CHECK_INT(collect(&c, "frame", 1, &ev), 1);
	CHECK(strstr(ev.buf, "\"worstPhase\":\"layoutMeasure\""));
	/*
	 * 60 / 16.7: 3 at least, more when the sleep ran long (a loaded
	 * machine, qemu): a sleep is never shorter than asked.
	 */
	CHECK(strstr(ev.buf, "\"missedFrames\":") &&
	      atoi(strstr(ev.buf, "\"missedFrames\":") + 15) >= 3);
	CHECK(strstr(ev.buf, "\"phases\":{\"layoutMeasure\":"));
	CHECK(strstr(ev.buf, "\"budgetMs\":16.666"));
	ph_buf_reset(&ev);
	CHECK_INT(ph_client_call(&c, 2, "timeline",
				 "{\"kinds\":[\"input\"],\"sinceSeq\":0}",
				 &line, NULL, 2000),
		  1);
	CHECK(strstr(line.buf, "\"action\":\"tap\""));
	CHECK(strstr(line.buf, "\"worstPhase\":\"layoutMeasure\""));
	/* from the finger's up to the frame that shows it: the 60 ms frame */
	{
		const struct ph_json *evs = ph_json_get(
			ph_json_get(parse(&line), "result"), "events");
		int64_t tap = -1;

		for (size_t i = 0; ph_json_at(evs, i); i++) {
			const struct ph_json *d =
				ph_json_get(ph_json_at(evs, i), "data");

			if (ph_json_streq(ph_json_get(d, "action"), "tap") &&
			    !ph_json_as_int(ph_json_get(d, "tapMs"), &tap))
				tap = -1;
		}
		CHECK(tap >= 60 && tap < 1000);
	}
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&ev);
	ph_buf_release(&line);
}

/*
 * Hostile clients: half-written lines, clients that disconnect mid-line or
 * never read, a thousand connect/disconnect cycles.  The app never blocks
 * and the next client is served (ASan/LSan watch for leaks in the
 * sanitized pass).
 */
void test_agent__mt_survives_hostile_clients(void)
{
	struct ph_client_conn c, idle;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	char big[70000];

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(ph_client_connect(&idle, sock_name, 2000), 0);
	for (int i = 0; i < 1000; i++) {
		CHECK_INT(ph_client_connect(&c, sock_name, 2000), 0);
		if (i % 3 == 0)
			ph_client_send(&c, "{\"id\":1,\"method\":\"hel");
		if (i % 3 == 1)
			ph_client_send(&c, "{\"id\":2,\"method\":\"stats\"}\n");
		ph_client_close(&c);
		porthole_mark("still emitting", NULL);
	}
	/* a line of garbage longer than a socket read, then a real request */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(ph_client_connect(&c, sock_name, 2000), 0);
	CHECK_INT(ph_client_send(&c, big), 0);
	CHECK_INT(ph_client_send(&c, "\n{\"id\":3,\"method\":\"stats\"}\n"), 0);
	CHECK_INT(ph_client_call(&c, 4, "hello", NULL, &line, NULL, 5000), 1);
	CHECK(strstr(line.buf, "\"ok\":true"));
	ph_client_close(&c);
	ph_client_close(&idle);
	porthole_stop();
	ph_buf_release(&line);
}

/* --- exits: a kill explained from what it left ------------------------- */

static int write_text(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static bool exists_in(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* The exit event of `pid` among the timeline's, or NULL. */
static const struct ph_json *exit_of(const struct ph_json *events, int pid)
{
	for (size_t i = 0; ph_json_at(events, i); i++) {
		const struct ph_json *d =
			ph_json_get(ph_json_at(events, i), "data");
		int64_t p;

		if (ph_json_as_int(ph_json_get(d, "pid"), &p) && p == pid)
			return d;
	}
	return NULL;
}

static bool str_is(const struct ph_json *v, const char *want)
{
	return ph_json_is(v, PH_JSON_STRING) && strlen(want) == v->n &&
	       !memcmp(v->u.s, want, v->n);
}

static int64_t int_of(const struct ph_json *v)
{
	int64_t n = -1;

	return ph_json_as_int(v, &n) ? n : -1;
}

/* A record as exits.c leaves it for a process that was then killed. */
static void killed_record(char *out, size_t size, int pid, const char *boot)
{
	snprintf(out, size,
		 "state=running\nreason=REASON_SIGNALED\npid=%d\n"
		 "timestamp=1000\nrss_kb=10\npss_kb=5\nimportance=100\n"
		 "version=v1\nboot_id=%s\nstarted_mono_ms=0\n",
		 pid, boot);
}

/*
 * Records left by killed processes (state "running"), with and without
 * the state file beside them: the state's fields win over the record's,
 * a stuck main thread makes an ANR with its stack, a record from another
 * boot says so, and a record that is garbage is still reported and never
 * crashes the start.
 */
void test_agent__mt_a_kill_is_explained_by_what_it_left(void)
{
	const char *dir = ph_test_tmpdir();
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	const struct ph_json *events, *e;
	char boot[40], rec[512];

	CHECK(dir);
	ph_exits_read_boot_id(boot, sizeof(boot));
	CHECK(boot[0]);
	killed_record(rec, sizeof(rec), 4000001, boot);
	CHECK_INT(write_text(dir, "exit-4000001.rec", rec), 0);
	CHECK_INT(write_text(dir, "exit-4000001.state",
			     "timestamp=2000\nmono_ms=9\nrss_kb=20\npss_kb=15\n"
			     "importance=400\nunresponsive_since=1500\n"
			     "unresponsive_ms=6000\nthreads=3\n"
			     "thread_states=R:1 S:2 \n--- stack\n"
			     "wait_for_sync(a.c:10)\nmain(a.c:20)\n"),
		  0);
	/* Stuck, but not ANR-long: a plain kill. */
	killed_record(rec, sizeof(rec), 4000003, boot);
	CHECK_INT(write_text(dir, "exit-4000003.rec", rec), 0);
	CHECK_INT(write_text(dir, "exit-4000003.state",
			     "timestamp=3000\nunresponsive_since=2900\n"
			     "unresponsive_ms=800\n--- stack\nx(a.c:1)\n"),
		  0);
	CHECK_INT(write_text(dir, "exit-4000002.rec",
			     "state=running\npid=4000002\ntimestamp=4000\n"
			     "boot_id=another-boot\n"),
		  0);
	CHECK_INT(write_text(dir, "exit-4000004.rec",
			     "\x01\xff=\n==\npid=4000004\n--- stack"),
		  0);

	CHECK_INT(start_agent_in(dir, QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	CHECK_INT(ph_client_call(&c, 2, "timeline", "{\"kinds\":[\"exit\"]}",
				 &line, NULL, 2000),
		  1);
	events = ph_json_get(ph_json_get(parse(&line), "result"), "events");

	e = exit_of(events, 4000001);
	CHECK(e);
	CHECK(str_is(ph_json_get(e, "reason"), "REASON_ANR"));
	CHECK(str_is(ph_json_get(e, "description"),
		     "killed while the main thread had not answered for "
		     "6000 ms"));
	/* the state's, not the record's */
	CHECK_INT(int_of(ph_json_get(e, "importance")), 400);
	CHECK_INT(int_of(ph_json_get(e, "timestamp")), 2000);
	CHECK_INT(int_of(ph_json_get(e, "rss")), 20);
	CHECK_INT(int_of(ph_json_get(e, "pss")), 15);
	CHECK(str_is(ph_json_get(e, "versionName"), "v1"));
	CHECK(str_is(ph_json_get(e, "mainStack"),
		     "wait_for_sync(a.c:10)\nmain(a.c:20)"));
	CHECK_INT(int_of(ph_json_get(e, "otherThreadCount")), 2);
	CHECK_INT(int_of(ph_json_get(ph_json_get(e, "otherThreadStates"),
				     "sleeping")),
		  2);

	e = exit_of(events, 4000003);
	CHECK(e);
	CHECK(str_is(ph_json_get(e, "reason"), "REASON_SIGNALED"));
	CHECK(str_is(ph_json_get(e, "description"),
		     "killed: no exit or crash was recorded"));
	CHECK(!ph_json_get(e, "mainStack"));
	CHECK_INT(int_of(ph_json_get(e, "timestamp")), 3000);
	CHECK_INT(int_of(ph_json_get(e, "importance")), 100);

	e = exit_of(events, 4000002);
	CHECK(e);
	CHECK(str_is(ph_json_get(e, "description"),
		     "killed, or still running when the system restarted: no "
		     "exit or crash was recorded"));

	e = exit_of(events, 4000004);
	CHECK(e);
	CHECK(str_is(ph_json_get(e, "reason"), "REASON_UNKNOWN"));

	/* One .seen file each, the state folded in. */
	CHECK(exists_in(dir, "exit-4000001.seen"));
	CHECK(!exists_in(dir, "exit-4000001.rec"));
	CHECK(!exists_in(dir, "exit-4000001.state"));
	CHECK(!exists_in(dir, "exit-4000003.state"));
	CHECK_INT(ph_client_call(&c, 3, "exit_trace", "{\"timestamp\":2000}",
				 &line, NULL, 2000),
		  1);
	CHECK(strstr(line.buf,
		     "\"found\":true,\"text\":\"reason=REASON_ANR\\n"));
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
}

/* The exit events ph_exits_report_dir hands over, as the writer sends them. */
struct exit_events {
	struct ph_buf json; /* their JSON lines */
	int n;
};

static void keep_exit_event(const struct ph_rec *r, void *ctx)
{
	struct exit_events *ev = ctx;

	if (!ph_encode_event(r, 1, &ev->json))
		ev->n++;
}

/* A frame to crash in, for a record to name (not inlined: it has a name). */
static __attribute__((noinline)) void test_exits_crashed_here(void)
{
	__asm__ volatile("");
}

/*
 * A crash record whose module list names one file twice at one load bias,
 * as only a hand-written or corrupt record does, both at the same range
 * and at two: reported, its stack symbolized from the first line, and
 * never a crash (libdwfl, handed the file twice, freed the first module
 * and the stack was read from freed memory).
 */
void test_exits__a_module_listed_twice_is_read_once(void)
{
	extern char __executable_start, _end;
	const char *dir = ph_test_tmpdir();
	struct exit_events ev = { .json = PH_BUF_INIT(1 << 20) };
	uintptr_t lo = (uintptr_t)&__executable_start, hi = (uintptr_t)&_end;
	uintptr_t pc = (uintptr_t)test_exits_crashed_here;
	char exe[256], line[700], rec[2048];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(dir);
	CHECK(n > 0);
	exe[n > 0 ? n : 0] = '\0';
	/* PIE: the first segment is at file address 0, so its start is the
	 * bias. */
	snprintf(line, sizeof(line),
		 "module=0x%" PRIxPTR " 0x%" PRIxPTR " 0x%" PRIxPTR " - %s\n",
		 lo, hi, lo, exe);
	snprintf(rec, sizeof(rec),
		 "state=crashed\nreason=REASON_CRASH_NATIVE\npid=4100001\n"
		 "timestamp=1\npcs=0x%" PRIxPTR "\n%s%s--- stack\n",
		 pc, line, line);
	CHECK_INT(write_text(dir, "exit-4100001.rec", rec), 0);
	snprintf(line + strlen(line), sizeof(line) - strlen(line),
		 "module=0x%" PRIxPTR " 0x%" PRIxPTR " 0x%" PRIxPTR " - %s\n",
		 hi + 4096, hi + 8192, lo, exe);
	snprintf(rec, sizeof(rec),
		 "state=crashed\nreason=REASON_CRASH_NATIVE\npid=4100002\n"
		 "timestamp=2\npcs=0x%" PRIxPTR "\n%s--- stack\n",
		 pc, line);
	CHECK_INT(write_text(dir, "exit-4100002.rec", rec), 0);

	ph_exits_report_dir(dir, 0, false, keep_exit_event, &ev);
	CHECK_INT(ev.n, 2);
	/* each event names the frame, from the one module read (without
	 * libdw, by its module and offset) */
	{
#if PH_PLATFORM_LIBDW
		const char *want = "\"mainStack\":\"test_exits_crashed_here(";
#else
		const char *want = "\"mainStack\":\"unit-tests+0x";
#endif
		int named = 0;

		for (const char *p = ev.json.buf; (p = strstr(p, want)); p++)
			named++;
		CHECK_INT(named, 2);
	}
	CHECK(exists_in(dir, "exit-4100001.seen"));
	CHECK(exists_in(dir, "exit-4100002.seen"));
	ph_buf_release(&ev.json);
}

/*
 * The child's exit status, or -1 when it has not exited within a minute
 * (it is killed): generous, where a report takes milliseconds and a hang
 * takes forever.
 */
static int exit_within_a_minute(pid_t child)
{
	int status = -1;

	for (int i = 0; i < 1200 && waitpid(child, &status, WNOHANG) == 0; i++)
		usleep(50 * 1000);
	if (status == -1) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A crash record whose module path names a FIFO (or a terminal): the
 * file is not opened to wait for a writer, and the frame keeps its
 * module and offset.  Reported in a child, so a start that hangs is a
 * failure here, not a test run that never ends.
 */
void test_exits__a_module_path_naming_a_fifo_does_not_hang_the_start(void)
{
	const char *dir = ph_test_tmpdir();
	char fifo[512], rec[1024];
	pid_t child;

	CHECK(dir);
	snprintf(fifo, sizeof(fifo), "%s/not-a-library", dir);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	snprintf(rec, sizeof(rec),
		 "state=crashed\nreason=REASON_CRASH_NATIVE\npid=4100003\n"
		 "timestamp=3\npcs=0x5010\n"
		 "module=0x5000 0x6000 0x5000 - %s\n--- stack\n",
		 fifo);
	CHECK_INT(write_text(dir, "exit-4100003.rec", rec), 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		struct exit_events ev = { .json = PH_BUF_INIT(1 << 20) };

		ph_exits_report_dir(dir, 0, false, keep_exit_event, &ev);
		_exit(ev.n == 1 && strstr(ev.json.buf, "\"mainStack\":"
						       "\"not-a-library+0x10") ?
			      0 :
			      1);
	}
	CHECK_INT(exit_within_a_minute(child), 0);
	CHECK(exists_in(dir, "exit-4100003.seen"));
}

/*
 * An ANR's other threads are counted from the record's threads= (the
 * stuck one among them); a count below one, absent or out of range, is
 * none to give: otherThreadCount is left out, never -1 and never the
 * wrap of INT64_MIN - 1.
 */
void test_exits__a_thread_count_below_one_gives_no_other_thread_count(void)
{
	const char *dir = ph_test_tmpdir();
	struct exit_events ev = { .json = PH_BUF_INIT(1 << 20) };

	CHECK(dir);
	CHECK_INT(write_text(dir, "exit-4100007.rec",
			     "state=crashed\nreason=REASON_ANR\npid=4100007\n"
			     "threads=-9223372036854775808\n--- stack\nx\n"),
		  0);
	CHECK_INT(write_text(dir, "exit-4100008.rec",
			     "state=crashed\nreason=REASON_ANR\npid=4100008\n"
			     "--- stack\nx\n"),
		  0);
	CHECK_INT(write_text(dir, "exit-4100009.rec",
			     "state=crashed\nreason=REASON_ANR\npid=4100009\n"
			     "threads=3\n--- stack\nx\n"),
		  0);
	ph_exits_report_dir(dir, 0, false, keep_exit_event, &ev);
	CHECK_INT(ev.n, 3);
	{
		const char *p = strstr(ev.json.buf, "\"otherThreadCount\"");

		/* one count, pid 4100009's */
		CHECK(p && !strncmp(p, "\"otherThreadCount\":2", 20) &&
		      (p[20] < '0' || p[20] > '9'));
		CHECK(p && !strstr(p + 1, "\"otherThreadCount\""));
	}
	ph_buf_release(&ev.json);
}

/*
 * A record's timestamp with many leading zeros: `exit_trace` finds the
 * record by the timestamp `exits` lists for it.
 */
void test_exits__exit_trace_finds_what_exits_lists(void)
{
	const char *dir = ph_test_tmpdir();
	struct ph_buf list = PH_BUF_INIT(1 << 20), trace = PH_BUF_INIT(1 << 20);
	char saved_dir[sizeof(ph_agent.data_dir)];
	struct ph_json *params = NULL;
	struct ph_arena a;
	struct ph_jw w;

	CHECK(dir);
	CHECK_INT(write_text(dir, "exit-4100010.seen",
			     "state=crashed\nreason=REASON_CRASH_NATIVE\n"
			     "pid=4100010\ntimestamp=00000000000000000000"
			     "000000000000000000005\n"),
		  0);
	memcpy(saved_dir, ph_agent.data_dir, sizeof(saved_dir));
	snprintf(ph_agent.data_dir, sizeof(ph_agent.data_dir), "%s", dir);
	ph_jw_init(&w, &list);
	(void)ph_collectors_exits(&w);
	CHECK_INT(ph_jw_finish(&w), 0);
	ph_arena_init(&a, 0, 1 << 20);
	CHECK_INT(ph_json_parse(&a, "{\"timestamp\":5}", 15, &params, NULL), 0);
	ph_jw_init(&w, &trace);
	(void)ph_collectors_exit_trace(params, &w);
	CHECK_INT(ph_jw_finish(&w), 0);
	memcpy(ph_agent.data_dir, saved_dir, sizeof(saved_dir));
	CHECK(strstr(list.buf, "\"timestamp\":5,"));
	CHECK(strstr(trace.buf, "\"found\":true"));
	ph_arena_release(&a);
	ph_buf_release(&list);
	ph_buf_release(&trace);
}

/*
 * In a child: the report over dir, then `exits` and `exit_trace` for
 * timestamp 6 there; 0 when one event was reported and both answers name
 * the record of pid 4100006.
 */
static int report_and_list(const char *dir)
{
	struct exit_events ev = { .json = PH_BUF_INIT(1 << 20) };
	struct ph_buf list = PH_BUF_INIT(1 << 20), trace = PH_BUF_INIT(1 << 20);
	struct ph_arena a;
	struct ph_json *params = NULL;
	struct ph_jw w;

	snprintf(ph_agent.data_dir, sizeof(ph_agent.data_dir), "%s", dir);
	ph_agent.pid = 0;
	ph_exits_report_dir(dir, 0, false, keep_exit_event, &ev);
	ph_jw_init(&w, &list);
	(void)ph_collectors_exits(&w);
	ph_arena_init(&a, 0, 1 << 20);
	if (ph_jw_finish(&w) ||
	    ph_json_parse(&a, "{\"timestamp\":6}", 15, &params, NULL))
		return 1;
	ph_jw_init(&w, &trace);
	(void)ph_collectors_exit_trace(params, &w);
	if (ph_jw_finish(&w))
		return 1;
	return ev.n == 1 && strstr(list.buf, "\"pid\":4100006") &&
			       strstr(trace.buf, "\"found\":true") ?
		       0 :
		       1;
}

/*
 * FIFOs in the data dir where records and state files go (anyone who can
 * write there can make one): the start and the `exits` and `exit_trace`
 * answers read none of them, a record that is one is left where it is,
 * and a state file that is one is taken for none.  In a child, so a hang
 * is a failure here, not a test run that never ends.
 */
void test_exits__fifos_in_the_data_dir_do_not_hang_the_start(void)
{
	const char *dir = ph_test_tmpdir();
	char path[512], rec[512];
	pid_t child;

	CHECK(dir);
	snprintf(path, sizeof(path), "%s/exit-4100004.rec", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/exit-4100005.seen", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/exit-4100006.state", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	killed_record(rec, sizeof(rec), 4100006, "another-boot");
	CHECK(strstr(rec, "timestamp=1000\n"));
	memcpy(strstr(rec, "timestamp=1000\n"), "timestamp=0006", 14);
	CHECK_INT(write_text(dir, "exit-4100006.rec", rec), 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0)
		_exit(report_and_list(dir));
	CHECK_INT(exit_within_a_minute(child), 0);
	CHECK(exists_in(dir, "exit-4100006.seen"));
	CHECK(!exists_in(dir, "exit-4100006.state"));
	CHECK(exists_in(dir, "exit-4100004.rec")); /* refused, and said */
}

/* Own state file's importance line, or -1 (the sampler writes it). */
static int importance_now(const char *dir)
{
	char path[512], text[512];
	FILE *f;
	size_t n;
	const char *p;

	snprintf(path, sizeof(path), "%s/exit-%d.state", dir, (int)getpid());
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	p = strstr(text, "\nimportance=");
	return p ? atoi(p + 12) : -1;
}

static bool importance_becomes(const char *dir, int want)
{
	for (int i = 0; i < 50; i++) {
		if (importance_now(dir) == want)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/*
 * The importance a kill would be reported with follows the screens: 400
 * (cached) once the last one is hidden, 100 once one shows again; the
 * state file goes with porthole_stop().
 */
void test_agent__mt_importance_follows_the_screens(void)
{
	const char *dir = ph_test_tmpdir();
	char path[512];

	CHECK(dir);
	CHECK_INT(start_agent_in(dir, QUIET, 0), PORTHOLE_OK);
	CHECK(importance_becomes(dir, 100));
	porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "Home", false);
	porthole_lifecycle(PORTHOLE_SCREEN_HIDDEN, "Home", false);
	CHECK(importance_becomes(dir, 400));
	porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "Home", false);
	CHECK(importance_becomes(dir, 100));
	porthole_stop();
	snprintf(path, sizeof(path), "%s/exit-%d.state", dir, (int)getpid());
	CHECK(access(path, F_OK) != 0);
}

/* --- method replies against the published runtime's ---------------------- */

/*
 * Differences of shape between our reply and the published runtime's
 * reply to the same request, the first of them described in why: a key
 * both send with another JSON type, at any depth (a null of theirs is an
 * absent value and matches anything; arrays: their first element against
 * our first), and a key of their `result` object missing from ours.
 * *compared counts the keys both sent.
 */
static int shape_diffs(const char *path, const struct ph_json *ours,
		       const struct ph_json *theirs, int depth, int *compared,
		       char *why, size_t cap)
{
	int diffs = 0;
	char sub[256];

	if (ph_json_is(theirs, PH_JSON_NULL))
		return 0;
	if (strcmp(json_type(ours), json_type(theirs))) {
		if (!why[0])
			snprintf(why, cap, "%.200s: ours %s, published %s",
				 path, json_type(ours), json_type(theirs));
		return 1;
	}
	if (ph_json_is(theirs, PH_JSON_ARRAY) && ph_json_at(theirs, 0) &&
	    ph_json_at(ours, 0)) {
		snprintf(sub, sizeof(sub), "%s[0]", path);
		return shape_diffs(sub, ph_json_at(ours, 0),
				   ph_json_at(theirs, 0), depth + 1, compared,
				   why, cap);
	}
	if (!ph_json_is(theirs, PH_JSON_OBJECT))
		return 0;
	for (uint32_t k = 0; k < theirs->n; k++) {
		const struct ph_json_member *m = &theirs->u.members[k];
		char key[64];
		const struct ph_json *mine;

		snprintf(key, sizeof(key), "%.*s", (int)m->key.n, m->key.u.s);
		snprintf(sub, sizeof(sub), "%s.%s", path, key);
		mine = ph_json_get(ours, key);
		if (!mine) {
			/* the result's own keys are what a host reads first */
			if (depth == 1 &&
			    !ph_json_is(&m->value, PH_JSON_NULL)) {
				if (!why[0])
					snprintf(why, cap, "%.200s: missing",
						 sub);
				diffs++;
			}
			continue;
		}
		(*compared)++;
		diffs += shape_diffs(sub, mine, &m->value, depth + 1, compared,
				     why, cap);
	}
	return diffs;
}

static void sem_tree(struct porthole_sem *t, void *ctx)
{
	struct porthole_sem_node root = { .right = 360, .bottom = 640 };
	struct porthole_sem_node b = { .role = "Button",
				       .text = "Pay",
				       .test_tag = "pay",
				       .left = 8,
				       .top = 8,
				       .right = 120,
				       .bottom = 56,
				       .clickable = true };

	(void)ctx;
	porthole_sem_begin(t, &root);
	porthole_sem_begin(t, &b);
	porthole_sem_end(t);
	porthole_sem_end(t);
}

/*
 * The replies to the requests the published runtime's host sent in the
 * recorded session (../shared/fixtures/porthole-wire/sent.ndjson: hello,
 * recompositions, semantics_tree, nav_state, state, inflight, timeline, an
 * unknown method), asked of our agent with the same kinds of things
 * happening, have the published replies' shapes.
 */
void test_agent__mt_replies_match_the_published_runtime(void)
{
	struct ph_buf received = PH_BUF_INIT(1 << 24),
		      sent = PH_BUF_INIT(1 << 20);
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	struct ph_client_conn c;
	struct ph_arena fa;
	const char *trig[] = { "CartViewModel.items" };
	int compared = 0, asked = 0;
	char *s;

	CHECK_INT(ph_buf_read_file(&received,
				   FIXTURE("porthole-wire/received.ndjson")),
		  0);
	CHECK_INT(ph_buf_read_file(&sent, FIXTURE("porthole-wire/sent.ndjson")),
		  0);
	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	porthole_set_semantics_provider(sem_tree, NULL);
	porthole_state_write("CartViewModel.items");
	porthole_recompose("Cart.ItemRow#1", "Cart.ItemRow", "Cart", trig, 1);
	porthole_nav(PORTHOLE_NAV_START, "home", "Home", NULL, NULL, 1);
	porthole_nav(PORTHOLE_NAV_PUSH, "cart", "Cart", "cartId=88213",
		     "porthole://cart/88213", 2);
	porthole_work_start("e2b1", "SyncCartWorker", 1, "sync");
	porthole_mark("ready", NULL);
	CHECK_INT(connect_hello(&c, &line), 0);
	ph_arena_init(&fa, 0, SIZE_MAX);
	for (s = sent.buf; *s;) {
		char *nl = strchr(s, '\n'), want[32], *r;
		struct ph_json *req, *theirs, *ours;
		const struct ph_json *l, *method, *params;
		struct ph_buf p = PH_BUF_INIT(4096);
		char why[256] = "";
		int64_t id;

		*nl = '\0';
		ph_arena_reset(&fa);
		CHECK_INT(ph_json_parse(&fa, s, strlen(s), &req, NULL), 0);
		l = ph_json_get(req, "line");
		method = ph_json_get(l, "method");
		params = ph_json_get(l, "params");
		CHECK(ph_json_as_int(ph_json_get(l, "id"), &id));
		*nl = '\n';
		s = nl + 1;
		/* Their reply to it (received.ndjson, by id). */
		snprintf(want, sizeof(want), "{\"id\":%lld,", (long long)id);
		r = strstr(received.buf, want);
		CHECK(r);
		CHECK_INT(ph_json_parse(&fa, r, strcspn(r, "\n"), &theirs,
					NULL),
			  0);
		/* Ours. */
		{
			struct ph_jw w;

			ph_jw_init(&w, &p);
			ph_jw_value(&w, params);
			CHECK_INT(ph_jw_finish(&w), 0);
		}
		{
			char m[32];

			snprintf(m, sizeof(m), "%.*s", (int)method->n,
				 method->u.s);
			CHECK_INT(ph_client_call(&c, (int)id, m, p.buf, &line,
						 NULL, 2000),
				  1);
		}
		ph_buf_release(&p);
		CHECK_INT(ph_json_parse(&fa, line.buf, line.len, &ours, NULL),
			  0);
		if (shape_diffs("reply", ours, theirs, 0, &compared, why,
				sizeof(why)))
			ph_test_fail(__FILE__, __LINE__, "%.*s (id %lld): %s",
				     (int)method->n, method->u.s, (long long)id,
				     why);
		asked++;
	}
	CHECK_INT(asked, 10);
	CHECK(compared > 100); /* 147 when written */
	ph_client_close(&c);
	porthole_stop();
	ph_arena_release(&fa);
	ph_buf_release(&received);
	ph_buf_release(&sent);
	ph_buf_release(&line);
}

/* Reported exits are kept for exits / exit_trace: the newest 16. */
void test_agent__mt_only_the_newest_16_reported_exits_are_kept(void)
{
	const char *dir = ph_test_tmpdir();
	char name[64], path[512];
	int left = 0;

	CHECK(dir);
	for (int i = 0; i < 20; i++) {
		struct timespec at[2] = { { 1000000 + i, 0 },
					  { 1000000 + i, 0 } };

		snprintf(name, sizeof(name), "exit-%d.seen", 5000000 + i);
		CHECK_INT(write_text(dir, name, "state=exited\nstatus=0\n"), 0);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		CHECK_INT(utimensat(AT_FDCWD, path, at, 0), 0);
	}
	CHECK_INT(start_agent_in(dir, QUIET, 0), PORTHOLE_OK);
	porthole_stop();
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "exit-%d.seen", 5000000 + i);
		/* the four oldest went */
		CHECK_INT(exists_in(dir, name), i >= 4);
		left += exists_in(dir, name);
	}
	CHECK_INT(left, 16);
}

/* SQLite in the process. */
#if PH_TEST_GLIBC_LIBS
/* --- bound values, noted as bound (sqlite_binds.c) ------------------------ */

struct bind_case {
	const char *sql;
	void (*bind)(sqlite3_stmt *st);
	const char *want; /* the args sent */
	bool fallback;	  /* only expanded_sql can say (UTF-16 text) */
};

static void bind_mixed(sqlite3_stmt *st)
{
	static const char blob[3] = { 1, 2, 3 };

	sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":a"),
			   -9007199254740993LL);
	sqlite3_bind_double(st, sqlite3_bind_parameter_index(st, "@b"), 1.0);
	sqlite3_bind_double(st, sqlite3_bind_parameter_index(st, "$c"), 0.1);
	sqlite3_bind_null(st, 5);
	sqlite3_bind_blob(st, 6, blob, 3, SQLITE_STATIC);
}

static void bind_reals(sqlite3_stmt *st)
{
	static const double v[] = { 1e20,   123.456, -0.5,
				    3.0,    1.5e-7,  12345678901234567890.0,
				    2.0 / 3 };

	for (int i = 0; i < 7; i++)
		sqlite3_bind_double(st, i + 1, v[i]);
}

static void bind_texts(sqlite3_stmt *st)
{
	sqlite3_bind_text(st, 1, "it's", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, NULL, -1, SQLITE_STATIC);
	sqlite3_bind_text64(st, 3, "caf\xc3\xa9 au lait", 8, SQLITE_STATIC,
			    SQLITE_UTF8);
	sqlite3_bind_text(st, 4, "", 0, SQLITE_STATIC);
}

static void bind_then_clear(sqlite3_stmt *st)
{
	sqlite3_bind_int(st, 1, 7);
	sqlite3_bind_text(st, 2, "gone", -1, SQLITE_STATIC);
	sqlite3_clear_bindings(st);
	sqlite3_bind_int(st, 2, 8);
}

static void bind_utf16(sqlite3_stmt *st)
{
	static const uint16_t hi[] = { 'h', 'i', 0 };

	sqlite3_bind_int(st, 1, 1);
	sqlite3_bind_text16(st, 2, hi, -1, SQLITE_STATIC);
}

static void bind_around_comments(sqlite3_stmt *st)
{
	sqlite3_bind_int(st, 1, 11);
	sqlite3_bind_int(st, 2, 22);
}

static const struct bind_case bind_cases[] = {
	{ "SELECT :a, @b, $c, :a, ?5, ?", bind_mixed,
	  "-9007199254740993, 1.0, 0.1, -9007199254740993, NULL, "
	  "<blob 3 bytes>" },
	{ "SELECT ?, ?, ?, ?, ?, ?, ?", bind_reals,
	  "1.0e+20, 123.456, -0.5, 3.0, 1.5e-07, 1.23456789012346e+19, "
	  "0.666666666666667" },
	{ "SELECT ?, ?, ?, ?", bind_texts, "it's, NULL, caf\xc3\xa9 au, " },
	{ "SELECT ?, ?", bind_then_clear, "NULL, 8" },
	{ "SELECT ?, ?", bind_utf16, "1, hi", true },
};

/* Runs one case's statement and returns the args its db_start sent. */
static bool run_bind_case(sqlite3 *db, struct ph_client_conn *c,
			  const struct bind_case *k, char *args, size_t cap)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, k->sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	k->bind(st);
	while (sqlite3_step(st) == SQLITE_ROW)
		;
	sqlite3_finalize(st);
	return next_args(c, args, cap);
}

/*
 * Values noted as the app binds them read exactly as SQLite's own
 * expanded text gives them (each case run both ways and compared), and
 * expanded_sql, which allocates on the app's thread, is called only for
 * what the binds cannot say.  Parameters in comments or quotes are none.
 */
void test_agent__mt_bound_values_noted_as_bound(void)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 16);
	char noted[512], expanded[512];
	sqlite3 *db = NULL;
	uint64_t before;

	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	CHECK_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
	CHECK_INT(porthole_sqlite_attach(db), PORTHOLE_OK);
	for (size_t i = 0; i < PH_ARRAY_SIZE(bind_cases); i++) {
		const struct bind_case *k = &bind_cases[i];

		before = ph_sqlite_expanded_calls();
		CHECK(run_bind_case(db, &c, k, noted, sizeof(noted)));
		CHECK_INT(ph_sqlite_expanded_calls() - before, k->fallback);
		CHECK_STR(noted, k->want);
		/* the same statement, its values read off expanded_sql */
		ph_sqlite_binds_ignore(true);
		before = ph_sqlite_expanded_calls();
		CHECK(run_bind_case(db, &c, k, expanded, sizeof(expanded)));
		ph_sqlite_binds_ignore(false);
		CHECK_INT(ph_sqlite_expanded_calls() - before, 1);
		CHECK_STR(noted, expanded);
	}
	/* the cut cases of the test above, and a comment and quotes */
	before = ph_sqlite_expanded_calls();
	bound_query(db);
	CHECK(next_args(&c, noted, sizeof(noted)));
	CHECK(!strncmp(noted, "aaaa", 4) && strstr(noted, "..., 42, bbb"));
	{
		const struct bind_case k = {
			"SELECT ? AS \"a?\" -- and ? here\n, '?', /* ? */ ? "
			"AS [b?]",
			bind_around_comments, "11, 22"
		};

		CHECK(run_bind_case(db, &c, &k, noted, sizeof(noted)));
		CHECK_STR(noted, "11, 22");
	}
	CHECK_INT(ph_sqlite_expanded_calls() - before, 0);
	sqlite3_close(db);
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
}

#endif

/* --- trace markers: the fd an emitter may hold ---------------------------
 */

/* How many of this process's fds are open on path. */
static int fds_on(const char *path)
{
	char link[64], target[512];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += !strcmp(target, path);
	}
	return n;
}

/*
 * An emitter loads the marker fd and writes to it without a lock, so it
 * may write long after a poll saw the recording end: the fd stays open
 * (never a number the app reuses for its own file), and the next
 * recording writes through the same one.
 */
void test_agent__marker_fd_outlives_every_recording(void)
{
	char root[256], marker[300], text[256];
	FILE *f;
	size_t n;

	snprintf(root, sizeof(root), "%s/tracefs", ph_test_tmpdir());
	CHECK_INT(mkdir(root, 0700), 0);
	CHECK_INT(write_text(root, "trace_marker", ""), 0);
	snprintf(marker, sizeof(marker), "%s/trace_marker", root);
	ph_trace_marker_set_root(root);

	CHECK_INT(write_text(root, "tracing_on", "1\n"), 0);
	ph_trace_marker_poll();
	CHECK_INT(fds_on(marker), 1);
	ph_trace_marker_begin("first");
	ph_trace_marker_end();

	/* the recording ends, and polls go on long after */
	CHECK_INT(write_text(root, "tracing_on", "0\n"), 0);
	for (int i = 0; i < 4; i++)
		ph_trace_marker_poll();
	CHECK_INT(fds_on(marker), 1);
	ph_trace_marker_begin("not recording");

	/* the next recording writes through the fd kept */
	CHECK_INT(write_text(root, "tracing_on", "1\n"), 0);
	ph_trace_marker_poll();
	CHECK_INT(fds_on(marker), 1);
	ph_trace_marker_begin("second");
	ph_trace_marker_end();

	f = fopen(marker, "r");
	CHECK(f != NULL);
	n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	text[n] = '\0';
	if (f)
		fclose(f);
	CHECK(strstr(text, "|first") && strstr(text, "|second"));
	CHECK(!strstr(text, "not recording"));
	ph_trace_marker_set_root(NULL);
	CHECK_INT(fds_on(marker), 0);
}

/* --- the database inspector: never on the writer, never for ever ------- */

/* Sends a request on c and returns its answer (events skipped). */
static const struct ph_json *db_call(struct ph_client_conn *c, int id,
				     const char *method, const char *params,
				     struct ph_buf *line, int timeout_ms)
{
	if (ph_client_call(c, id, method, params, line, NULL, timeout_ms) != 1)
		return NULL;
	return parse(line);
}

static bool error_starts(const struct ph_json *v, const char *prefix)
{
	const struct ph_json *e = ph_json_get(v, "error");

	return ph_json_is(ph_json_get(v, "ok"), PH_JSON_FALSE) &&
	       ph_json_is(e, PH_JSON_STRING) && e->n >= strlen(prefix) &&
	       !memcmp(e->u.s, prefix, strlen(prefix));
}

/* SQLite in the process. */
#if PH_TEST_GLIBC_LIBS
#define ENDLESS                                                          \
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) " \
	"SELECT count(*) FROM c"

/*
 * A query that never ends runs off the writer: it ends at its deadline
 * with an error, events reach every client meanwhile, another database
 * request waits its turn, and stopping the agent ends it.  An
 * error met while rows are read is the answer's error, and an answer's
 * rows stop at its byte cap.
 */
void test_agent__mt_db_query_has_a_deadline_and_its_own_thread(void)
{
	struct ph_client_conn a, b;
	struct ph_buf line = PH_BUF_INIT(1 << 24), ev = PH_BUF_INIT(1 << 20);
	char path[512];
	const struct ph_json *v, *r;
	sqlite3 *db = NULL;
	bool seen = false;
	int64_t n, cpu0;
	int tid;

	snprintf(path, sizeof(path), "%s/inspect.db", ph_test_tmpdir());
	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL),
		  SQLITE_OK);
	CHECK_INT(porthole_sqlite_attach(db), PORTHOLE_OK);
	CHECK_INT(connect_hello(&a, &line), 0);
	CHECK_INT(connect_hello(&b, &line), 0);

	/* its deadline ends it, with the reason */
	v = db_call(&a, 2, "db_query",
		    "{\"database\":\"inspect.db\",\"timeoutMs\":200,"
		    "\"sql\":\"" ENDLESS "\"}",
		    &line, 30000);
	CHECK(v && error_starts(v, "ETIMEDOUT: the query ran past its "
				   "deadline of 200 ms"));

	/* an error while rows are read is an error, not the rows so far */
	v = db_call(&a, 3, "db_query",
		    "{\"database\":\"inspect.db\",\"sql\":\"WITH RECURSIVE "
		    "c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < "
		    "5) SELECT CASE WHEN x < 4 THEN x ELSE "
		    "abs(-9223372036854775808) END FROM c\"}",
		    &line, 30000);
	CHECK(v && error_starts(v, "EIO: integer overflow"));

	/* 4 KiB rows: the byte cap cuts the answer before the row cap */
	v = db_call(&a, 4, "db_query",
		    "{\"database\":\"inspect.db\",\"sql\":\"WITH RECURSIVE "
		    "c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < "
		    "1000), w(v) AS (SELECT replace(hex(zeroblob(100)), '0', "
		    "'y')) SELECT x, v,v,v,v,v,v,v,v,v,v,v,v,v,v,v,v,v,v,v,v "
		    "FROM c, w\"}",
		    &line, 30000);
	r = ph_json_get(v, "result");
	CHECK(ph_json_is(ph_json_get(r, "truncated"), PH_JSON_TRUE));
	n = ph_json_is(ph_json_get(r, "rows"), PH_JSON_ARRAY) ?
		    (int64_t)ph_json_get(r, "rows")->n :
		    -1;
	CHECK(n >= 200 && n < 500);
	CHECK(line.len < ((size_t)5 << 20) / 4);

	/* one that would run a minute: the writer goes on meanwhile */
	CHECK_INT(ph_client_send(&a, "{\"id\":5,\"method\":\"db_query\","
				     "\"params\":{\"database\":\"inspect.db\","
				     "\"timeoutMs\":60000,\"sql\":\"" ENDLESS
				     "\"}}\n"),
		  0);
	/* running: the inspector's thread spends CPU time (50 ms of it) */
	tid = ph_thread_named("porthole-db");
	cpu0 = ph_thread_schedstat(tid, 0);
	for (int i = 0;
	     i < 3000 && ph_thread_schedstat(tid, 0) < cpu0 + 50000000; i++)
		usleep(10000);
	CHECK(tid > 0 && ph_thread_schedstat(tid, 0) >= cpu0 + 50000000);
	/* another client's database request waits its turn; events flow */
	CHECK_INT(ph_client_send(&b, "{\"id\":6,\"method\":\"db_tables\"}\n"),
		  0);
	porthole_mark("while the query runs", NULL);
	while (!seen && ph_client_line(&b, &ev, 10000) == 1) {
		CHECK(strncmp(ev.buf, "{\"id\":6", 7) != 0);
		seen = strstr(ev.buf, "while the query runs") != NULL;
	}
	CHECK(seen);
	/* and stopping the agent ends it (the test would hang otherwise) */
	porthole_stop();
	CHECK(thread_gone("porthole-db"));
	sqlite3_close(db);
	ph_client_close(&a);
	ph_client_close(&b);
	ph_buf_release(&line);
	ph_buf_release(&ev);
}

/* The app's connection, mid-commit for 300 ms, then done. */
static void *commit_later(void *p)
{
	usleep(300 * 1000);
	sqlite3_exec(p, "COMMIT", NULL, NULL, NULL);
	return NULL;
}

/*
 * A look at the database while the app commits waits for the commit (up
 * to the request's deadline) instead of failing with "database is
 * locked", as it did whenever an inspection met one.
 */
void test_agent__mt_db_query_waits_out_a_commit(void)
{
	struct ph_client_conn a;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	char path[512];
	const struct ph_json *v;
	sqlite3 *db = NULL;
	pthread_t t;

	snprintf(path, sizeof(path), "%s/busy.db", ph_test_tmpdir());
	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(7)",
			       NULL, NULL, NULL),
		  SQLITE_OK);
	CHECK_INT(porthole_sqlite_attach(db), PORTHOLE_OK);
	CHECK_INT(connect_hello(&a, &line), 0);
	/* an exclusive lock keeps every reader out until the commit */
	CHECK_INT(sqlite3_exec(db, "BEGIN EXCLUSIVE; UPDATE t SET x = 8", NULL,
			       NULL, NULL),
		  SQLITE_OK);
	pthread_create(&t, NULL, commit_later, db);
	v = db_call(&a, 2, "db_query",
		    "{\"database\":\"busy.db\",\"sql\":\"SELECT x FROM t\"}",
		    &line, 30000);
	pthread_join(t, NULL);
	CHECK(v && ph_json_get(v, "result"));
	CHECK(v && !ph_json_get(v, "error"));
	CHECK(strstr(line.buf, "[[\"8\"]]") || strstr(line.buf, "[[8]]"));
	ph_client_close(&a);
	porthole_stop();
	sqlite3_close(db);
	ph_buf_release(&line);
}

#endif

/* --- answers count against a client's budget ---------------------------- */

/* Bytes this client sent that the agent has not read yet. */
static int unread_by_agent(const struct ph_client_conn *c)
{
	int n = -1;

	return ioctl(c->fd, SIOCOUTQ, &n) ? -1 : n;
}

#define FLOODERS 4
#define ASKS	 100

/*
 * Clients that pipeline timelines (about 1 MB each) and never read: each
 * is answered while it holds less than its share of unsent bytes, and
 * refused (EBUSY) after, so together they hold about the budget, not 16
 * MiB each; and every request gets an answer, none is lost.
 */
void test_agent__mt_answers_count_against_the_budget(void)
{
	struct ph_client_conn flood[FLOODERS], probe;
	struct ph_buf line = PH_BUF_INIT(1 << 24);
	char detail[241], ask[120];
	const struct ph_json *v;
	int64_t unsent = -1, id;

	memset(detail, 'd', sizeof(detail) - 1);
	detail[sizeof(detail) - 1] = '\0';
	CHECK_INT(start_agent(QUIET, 0), PORTHOLE_OK);
	for (int i = 0; i < 4000; i++)
		porthole_mark("fill the ring", detail);
	CHECK_INT(connect_hello(&probe, &line), 0);
	for (int f = 0; f < FLOODERS; f++) {
		CHECK_INT(connect_hello(&flood[f], &line), 0);
		for (int i = 0; i < ASKS; i++) {
			snprintf(ask, sizeof(ask),
				 "{\"id\":%d,\"method\":\"timeline\","
				 "\"params\":{\"limit\":100000}}\n",
				 100 + i);
			CHECK_INT(ph_client_send(&flood[f], ask), 0);
		}
	}
	/* the agent has read every request */
	for (int f = 0; f < FLOODERS; f++)
		for (int i = 0; i < 3000 && unread_by_agent(&flood[f]); i++)
			usleep(10000);
	for (int f = 0; f < FLOODERS; f++)
		CHECK_INT(unread_by_agent(&flood[f]), 0);
	v = db_call(&probe, 2, "stats", NULL, &line, 10000);
	CHECK(ph_json_as_int(
		ph_json_get(ph_json_get(v, "result"), "unsentBytes"), &unsent));
	/* the budget (8 MiB), one answer over each share, and refusals */
	CHECK(unsent >= 0 && unsent < (int64_t)(8 + FLOODERS * 2) << 20);

	/* now read: every request was answered, refused ones said so */
	for (int f = 0; f < FLOODERS; f++) {
		int ok = 0, busy = 0;

		while (ok + busy < ASKS &&
		       ph_client_line(&flood[f], &line, 10000) == 1) {
			v = parse(&line);
			if (!ph_json_as_int(ph_json_get(v, "id"), &id))
				continue; /* an event */
			if (ph_json_is(ph_json_get(v, "ok"), PH_JSON_TRUE))
				ok++;
			else if (error_starts(v, "EBUSY: "))
				busy++;
		}
		CHECK_INT(ok + busy, ASKS);
		CHECK(ok >= 1 && busy >= 1);
		ph_client_close(&flood[f]);
	}

	/* one that goes on sending, good lines or bad, is disconnected */
	CHECK_INT(connect_hello(&flood[0], &line), 0);
	ph_buf_reset(&line);
	for (int i = 0; i < 4; i++)
		CHECK_INT(ph_buf_addstr(&line, "{\"id\":9,\"method\":"
					       "\"timeline\",\"params\":"
					       "{\"limit\":100000}}\n"),
			  0);
	for (int i = 0; i < 2 * 256; i++)
		CHECK_INT(ph_buf_addstr(&line, "not json\n"), 0);
	/* one write: the agent may hang up before a second one */
	CHECK_INT(ph_client_send(&flood[0], line.buf), 0);
	while (ph_client_line(&flood[0], &line, 10000) == 1)
		;
	CHECK_INT(ph_client_line(&flood[0], &line, 1000), -1);
	ph_client_close(&flood[0]);
	ph_client_close(&probe);
	porthole_stop();
	ph_buf_release(&line);
}

/*
 * Connects to 127.0.0.1:port as uid 65534 (a child process that drops to
 * it) and puts the first line it is sent, if any, into out.  Only system
 * calls after the fork: this process has threads.
 */
static void first_line_as_nobody(int port, char *out, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 20 };
	int pipefd[2];
	ssize_t n;
	pid_t pid;

	out[0] = '\0';
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (pipe(pipefd))
		return;
	pid = fork();
	if (pid == 0) {
		char buf[512];
		ssize_t got = 0, r;
		int fd;

		close(pipefd[0]);
		if (setgid(65534) || setuid(65534))
			_exit(1);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
		    connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(1);
		while (got < (ssize_t)sizeof(buf) &&
		       (r = read(fd, buf + got, sizeof(buf) - (size_t)got)) >
			       0 &&
		       !memchr(buf + got, '\n', (size_t)r))
			got += r;
		if (r > 0)
			got += r;
		if (got > 0 && write(pipefd[1], buf, (size_t)got) < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	n = pid > 0 ? read(pipefd[0], out, size - 1) : -1;
	out[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/*
 * The legacy TCP port checks its peer too: a connection whose socket
 * belongs to another uid (in /proc/net/tcp) gets the EACCES line.
 */
void test_agent__mt_the_legacy_port_refuses_another_uid(void)
{
	struct porthole_config cfg = {
		.app_id = "com.example.unit",
		.data_dir = ph_test_tmpdir(),
		.flags = QUIET | PORTHOLE_NO_INTEGRATION_CHECK,
	};
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	int port = free_tcp_port();
	char got[512];

	porthole_stop();
	snprintf(sock_name, sizeof(sock_name), "porthole.unittcp-%d",
		 (int)getpid());
	cfg.socket_name = sock_name;
	cfg.legacy_tcp_port = port;
	CHECK_INT(porthole_start_build(&cfg, 1), PORTHOLE_OK);
	first_line_as_nobody(port, got, sizeof(got));
	CHECK(!strncmp(got,
		       "{\"id\":-1,\"ok\":false,\"error\":\"EACCES: uid 65534 ",
		       46));
	/* the app's own uid still gets in */
	CHECK_INT(connect_tcp(&c, port), 0);
	CHECK_INT(ph_client_send(&c, "{\"id\":1,\"method\":\"hello\"}\n"), 0);
	CHECK_INT(ph_client_line(&c, &line, 5000), 1);
	CHECK(!strncmp(line.buf, "{\"id\":1,\"ok\":true", 16));
	ph_client_close(&c);
	porthole_stop();
	ph_buf_release(&line);
}

/* The next event of collect()'s lines at *p, parsed; NULL past the last. */
static const struct ph_json *next_event(char **p, struct ph_buf *one)
{
	char *nl = strchr(*p, '\n');

	ph_buf_reset(one);
	if (!nl || ph_buf_add(one, *p, (size_t)(nl - *p)))
		return NULL;
	*p = nl + 1;
	return parse(one);
}

/*
 * A stall is timed between the main thread's own turn-overs (here two
 * pings), not from a watchdog ping, and is sent while it lasts: ongoing
 * events with the stall's start as t and a growing length, then the
 * closing one.  `blocking` lists it once.
 */
void test_agent__mt_a_stall_is_sent_while_it_lasts_and_timed_exactly(void)
{
	struct ph_client_conn c;
	struct ph_buf ev = PH_BUF_INIT(1 << 20), line = PH_BUF_INIT(1 << 20);
	struct ph_buf one = PH_BUF_INIT(1 << 20);
	const struct ph_json *d, *stalls;
	int64_t before1, after1, before2, after2, t[3], ms[3];
	char *p;

	CHECK_INT(start_agent(PORTHOLE_NO_DEVICE | PORTHOLE_NO_MEMORY |
				      PORTHOLE_NO_STARTUP,
			      0),
		  PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	porthole_main_loop_register();
	before1 = ph_clock_mono_ns();
	porthole_main_loop_ping();
	after1 = ph_clock_mono_ns();
	/* Stuck (reading the socket, never pinging): two ongoing events, the
	 * second a second after the first. */
	CHECK_INT(collect(&c, "blocked", 2, &ev), 2);
	before2 = ph_clock_mono_ns();
	porthole_main_loop_ping();
	after2 = ph_clock_mono_ns();
	CHECK_INT(collect(&c, "blocked", 1, &ev), 1);
	p = ev.buf;
	for (int i = 0; i < 3; i++) {
		const struct ph_json *e = next_event(&p, &one);

		CHECK(e != NULL);
		if (!e)
			break;
		d = ph_json_get(e, "data");
		CHECK(ph_json_as_int(ph_json_get(e, "t"), &t[i]));
		CHECK(ph_json_as_int(ph_json_get(d, "durationMs"), &ms[i]));
		/* the first two are ongoing, the last closes it */
		CHECK(ph_json_is(ph_json_get(d, "ongoing"), PH_JSON_TRUE) ==
		      (i < 2));
		CHECK(ph_json_is(ph_json_get(d, "stack"), PH_JSON_STRING));
	}
	/* One stall: its start is the first ping's stamp. */
	CHECK(t[0] == t[1] && t[1] == t[2]);
	CHECK(t[0] >= before1 / 1000000 && t[0] <= after1 / 1000000);
	CHECK(ms[0] >= 200 && ms[1] >= ms[0] + 1000 && ms[2] >= ms[1]);
	/* Its length: from one ping's stamp to the next's, to the ms. */
	CHECK(ms[2] >= (before2 - after1) / 1000000 - 1);
	CHECK(ms[2] <= (after2 - before1) / 1000000 + 1);
	/* blocking: the stall once, closed */
	CHECK_INT(ph_client_call(&c, 5, "blocking", NULL, &line, NULL, 2000),
		  1);
	stalls = ph_json_get(ph_json_get(parse(&line), "result"), "stalls");
	CHECK(ph_json_is(stalls, PH_JSON_ARRAY) && stalls->n == 1);
	d = ph_json_at(stalls, 0);
	CHECK(ph_json_as_int(ph_json_get(d, "durationMs"), &ms[0]) &&
	      ms[0] == ms[2]);
	CHECK(!ph_json_get(d, "ongoing"));
	ph_client_close(&c);
	porthole_stop();
	/* The next tests' main thread is not this one. */
	atomic_store(&ph_agent.main_tid, 0);
	ph_buf_release(&ev);
	ph_buf_release(&one);
	ph_buf_release(&line);
}

/*
 * A stall whose stack was never sampled (here the main thread blocks the
 * real-time signals the watchdog samples with) still sends every field
 * the protocol requires: top "?" and an empty stack, ongoing and closed.
 */
void test_agent__mt_an_unsampled_stall_keeps_the_required_fields(void)
{
	struct ph_client_conn c;
	struct ph_buf ev = PH_BUF_INIT(1 << 20), line = PH_BUF_INIT(1 << 20);
	struct ph_buf one = PH_BUF_INIT(1 << 20);
	sigset_t rt, old;
	char *p;

	sigemptyset(&rt);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&rt, sig);
	CHECK_INT(start_agent(PORTHOLE_NO_DEVICE | PORTHOLE_NO_MEMORY |
				      PORTHOLE_NO_STARTUP,
			      0),
		  PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	CHECK_INT(pthread_sigmask(SIG_BLOCK, &rt, &old), 0);
	porthole_main_loop_register();
	porthole_main_loop_ping();
	CHECK_INT(collect(&c, "blocked", 1, &ev), 1);
	porthole_main_loop_ping();
	CHECK_INT(collect(&c, "blocked", 1, &ev), 1);
	/* the sample asked for lands now, while the handler is installed */
	CHECK_INT(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	p = ev.buf;
	for (int i = 0; i < 2; i++) {
		const struct ph_json *e = next_event(&p, &one);
		const struct ph_json *d = ph_json_get(e, "data");

		CHECK(e != NULL);
		if (!e)
			break;
		CHECK(ph_json_streq(ph_json_get(d, "top"), "?"));
		CHECK(ph_json_streq(ph_json_get(d, "stack"), ""));
		CHECK(ph_json_is(ph_json_get(d, "ongoing"), PH_JSON_TRUE) ==
		      (i == 0));
	}
	ph_client_close(&c);
	porthole_stop();
	atomic_store(&ph_agent.main_tid, 0);
	ph_buf_release(&ev);
	ph_buf_release(&one);
	ph_buf_release(&line);
}

/* What an agent thread's alternate signal stack is, seen from inside it. */
struct altstack_seen {
	char *own; /* an alternate stack the thread had before, or NULL */
	stack_t after;
};

static void *altstack_thread(void *p)
{
	struct altstack_seen *seen = p;

	if (seen->own) {
		stack_t ss = { .ss_sp = seen->own, .ss_size = 64 * 1024 };

		sigaltstack(&ss, NULL);
	}
	ph_exits_thread_altstack();
	sigaltstack(NULL, &seen->after);
	if (seen->own) {
		/* Not left for the thread's exit to free (ASan unmaps it). */
		stack_t off = { .ss_flags = SS_DISABLE };

		sigaltstack(&off, NULL);
	}
	return NULL;
}

void test_exits__agent_threads_get_an_alternate_signal_stack(void)
{
	static char own[64 * 1024];
	struct altstack_seen fresh = { 0 }, kept = { .own = own };
	pthread_t t;

	/* A thread without one gets one: a stack overflow can be recorded. */
	CHECK(!pthread_create(&t, NULL, altstack_thread, &fresh));
	pthread_join(t, NULL);
	CHECK(!(fresh.after.ss_flags & SS_DISABLE));
	CHECK(fresh.after.ss_size >= 16 * 1024);
	/* One it had already is left in place. */
	CHECK(!pthread_create(&t, NULL, altstack_thread, &kept));
	pthread_join(t, NULL);
	CHECK(kept.after.ss_sp == own);
}

static volatile sig_atomic_t app_rt_runs;

static void app_rt_handler(int sig)
{
	(void)sig;
	app_rt_runs++;
}

/*
 * An app handling SIGRTMIN+7 (the watchdog's first choice) itself: the
 * watchdog samples the stalled main thread's stack with another signal,
 * and the app's handler is still the one its own raise() reaches.
 */
void test_agent__mt_the_watchdog_leaves_an_apps_signal_alone(void)
{
	struct sigaction app = { .sa_handler = app_rt_handler }, dfl = { 0 };
	struct ph_client_conn c;
	struct ph_buf ev = PH_BUF_INIT(1 << 20), line = PH_BUF_INIT(1 << 20);
	const struct ph_json *d;

	sigemptyset(&app.sa_mask);
	sigemptyset(&dfl.sa_mask);
	dfl.sa_handler = SIG_DFL;
	porthole_stop();
	CHECK(!sigaction(SIGRTMIN + 7, &app, NULL));
	CHECK_INT(start_agent(PORTHOLE_NO_DEVICE | PORTHOLE_NO_MEMORY |
				      PORTHOLE_NO_STARTUP,
			      0),
		  PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	porthole_main_loop_register();
	porthole_main_loop_ping();
	/* Stuck reading the socket: an ongoing event, with its stack. */
	CHECK_INT(collect(&c, "blocked", 1, &ev), 1);
	ph_buf_setlen(&ev, ev.len - 1); /* one line, without its newline */
	d = ph_json_get(parse(&ev), "data");
	CHECK(ph_json_is(ph_json_get(d, "ongoing"), PH_JSON_TRUE));
	/* (the app's frames lead the stack: collect is the first) */
#if defined(__GLIBC__)
	CHECK(strstr(ev.buf, "\"stack\":\"collect(test_agent.c:") != NULL);
#else
	/* musl's libc.so has no unwind tables: the walk ends in it */
	CHECK(strstr(ev.buf, "\"stack\":\"") != NULL);
#endif
	porthole_main_loop_ping();
	CHECK_INT(app_rt_runs, 0);
	raise(SIGRTMIN + 7);
	CHECK_INT(app_rt_runs, 1);
	ph_client_close(&c);
	porthole_stop();
	atomic_store(&ph_agent.main_tid, 0);
	sigaction(SIGRTMIN + 7, &dfl, NULL);
	ph_buf_release(&ev);
	ph_buf_release(&line);
}

#if defined(__aarch64__)
/*
 * A leaf with no unwind information, as a PLT entry is on arm64: it spins
 * until *flag is set, touching neither x29 nor x30.
 */
void spin_without_cfi(volatile int *flag);
__asm__(".text\n"
	".globl spin_without_cfi\n"
	".type spin_without_cfi, %function\n"
	"spin_without_cfi:\n"
	"1:	ldr w1, [x0]\n"
	"	cbz w1, 1b\n"
	"	ret\n"
	".size spin_without_cfi, .-spin_without_cfi\n");

static __attribute__((noinline)) void stuck_in_leaf(volatile int *flag)
{
	spin_without_cfi(flag);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

struct leaf_watch {
	struct ph_client_conn *c;
	struct ph_buf *ev;
	bool named; /* a stack naming stuck_in_leaf came */
	volatile int done;
};

/* Reads blocked events until one names the stuck caller (or 5 came). */
static void *watch_leaf(void *p)
{
	struct leaf_watch *w = p;

	for (int i = 0; i < 5 && !w->named; i++) {
		ph_buf_setlen(w->ev, 0);
		if (collect(w->c, "blocked", 1, w->ev) != 1)
			break;
		w->named = strstr(w->ev->buf, "stuck_in_leaf(") != NULL;
	}
	w->done = 1;
	return NULL;
}
#endif

/*
 * The main thread stalled in code the unwinder has no tables for: the
 * sampler takes the caller from x30 and the callers above it from the
 * frame records, so the stack reaches main (the harness's), where the
 * unwinder alone stopped at the leaf.
 */
void test_agent__mt_a_stall_without_unwind_tables_reaches_main(void)
{
#if defined(__aarch64__)
	struct ph_client_conn c;
	struct ph_buf ev = PH_BUF_INIT(1 << 20), line = PH_BUF_INIT(1 << 20);
	struct leaf_watch w = { &c, &ev, false, 0 };
	pthread_t t;

	CHECK_INT(start_agent(PORTHOLE_NO_DEVICE | PORTHOLE_NO_MEMORY |
				      PORTHOLE_NO_STARTUP,
			      0),
		  PORTHOLE_OK);
	CHECK_INT(connect_hello(&c, &line), 0);
	porthole_main_loop_register();
	porthole_main_loop_ping();
	CHECK_INT(pthread_create(&t, NULL, watch_leaf, &w), 0);
	stuck_in_leaf(&w.done);
	pthread_join(t, NULL);
	porthole_main_loop_ping();
	ph_client_close(&c);
	porthole_stop();
	atomic_store(&ph_agent.main_tid, 0);
	CHECK(w.named);
	CHECK(strstr(ev.buf, "\"stack\":\"spin_without_cfi\\nstuck_in_leaf("
			     "test_agent.c:"));
	CHECK(strstr(ev.buf, "\\nmain(harness.c:"));
	ph_buf_release(&ev);
	ph_buf_release(&line);
#else
	/* x86-64 gives every frame, PLT entries too, unwind tables: the
	 * sampler needs no fallback there, and has none. */
	CHECK(true);
#endif
}
