/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the iotrace line reader's instruction sets and its memory
 * of line shapes: ph_iot_parse_lines() with AVX2 (chosen at run time when
 * the CPU has it), with the SSE2 baseline and with the portable line-at-a-
 * time reader must say the same of every line, and the same as
 * ph_iot_parse_line() says of it alone; text readers over the fixtures must
 * emit the same rows and count the same whichever reads them.
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_buf.h"
#include "iotrace/block_parse.h"
#include "iotrace/text_reader.h"

static const enum ph_iot_isa all_isas[] = {
	PH_IOT_ISA_PORTABLE,
	PH_IOT_ISA_BASE,
	PH_IOT_ISA_AVX2,
};

/* FNV-1a over a value's bytes. */
static void mix(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001b3ull;
}

/* Every field of every row, in order (struct padding left out). */
static int digest_row(void *ctx, struct ph_iot_row *r)
{
	uint64_t *h = ctx;

	mix(h, &r->mono_ns, sizeof(r->mono_ns));
	mix(h, &r->latency_ns, sizeof(r->latency_ns));
	mix(h, &r->queue_ns, sizeof(r->queue_ns));
	mix(h, &r->sector, sizeof(r->sector));
	mix(h, &r->size, sizeof(r->size));
	mix(h, &r->request_id, sizeof(r->request_id));
	mix(h, &r->dev, sizeof(r->dev));
	mix(h, &r->pid, sizeof(r->pid));
	mix(h, &r->tid, sizeof(r->tid));
	mix(h, &r->ppid, sizeof(r->ppid));
	mix(h, &r->error, sizeof(r->error));
	mix(h, &r->cpu, sizeof(r->cpu));
	mix(h, &r->op, sizeof(r->op));
	mix(h, &r->flags, sizeof(r->flags));
	mix(h, &r->sector_known, sizeof(r->sector_known));
	mix(h, &r->comm_len, sizeof(r->comm_len));
	mix(h, r->comm, r->comm_len);
	return 0;
}

struct outcome {
	uint64_t rows; /* digest of the rows */
	struct ph_iot_parse_stats st;
	struct ph_iot_pair_stats pst;
	uint64_t inflight;
};

/* A text reader over buf, fed `piece` bytes at a time. */
static void run_reader(const char *buf, size_t len, size_t piece,
		       struct outcome *o)
{
	struct ph_iot_text_reader s;

	memset(o, 0, sizeof(*o));
	o->rows = 1469598103934665603ull;
	ph_iot_text_reader_init(&s, digest_row, &o->rows);
	for (size_t at = 0; at < len; at += piece)
		ph_iot_text_reader_feed(&s, buf + at,
					len - at < piece ? len - at : piece);
	ph_iot_text_reader_end_input(&s);
	o->st = s.st;
	o->pst = s.pair.st;
	o->inflight = ph_iot_pairer_inflight(&s.pair);
	ph_iot_text_reader_release(&s);
}

static bool same_outcome(const struct outcome *a, const struct outcome *b)
{
	return a->rows == b->rows && !memcmp(&a->st, &b->st, sizeof(a->st)) &&
	       !memcmp(&a->pst, &b->pst, sizeof(a->pst)) &&
	       a->inflight == b->inflight;
}

/* Whether a and b say the same of a line (the fields its kind sets). */
static bool same_parse(const struct ph_iot_parsed *a,
		       const struct ph_iot_parsed *b)
{
	const struct ph_iot_rec *x = &a->rec, *y = &b->rec;

	if (a->kind != b->kind || a->len != b->len || a->line != b->line)
		return false;
	if (a->kind == PH_IOT_LINE_MALFORMED)
		return a->why == b->why;
	if (a->kind != PH_IOT_LINE_BLOCK && a->kind != PH_IOT_LINE_OTHER)
		return true;
	if (x->ts_ns != y->ts_ns || x->pid != y->pid || x->tgid != y->tgid ||
	    x->cpu != y->cpu)
		return false;
	return a->kind == PH_IOT_LINE_OTHER ||
	       (x->event == y->event && x->sector == y->sector &&
		x->nr_sector == y->nr_sector && x->dev == y->dev &&
		x->bytes == y->bytes && x->op == y->op &&
		x->flags == y->flags && x->unknown_rwbs == y->unknown_rwbs &&
		x->has_error == y->has_error && x->error == y->error &&
		x->comm_len == y->comm_len &&
		!memcmp(x->comm, y->comm, x->comm_len));
}

/*
 * Reads buf with ph_iot_parse_lines() in batches of `batch`, the lines it
 * leaves to the text reader skipped, and compares each line it read with
 * ph_iot_parse_line() of that line alone.  Returns the lines compared, or
 * -1 (after a failure message) at the first difference.
 */
static long batch_agrees(const char *buf, size_t len, size_t batch,
			 struct ph_iot_lines *l)
{
	struct ph_iot_parsed out[64];
	const char *p = buf, *e = buf + len;
	long lines = 0;

	while (p < e) {
		size_t used, n = ph_iot_parse_lines(l, p, (size_t)(e - p), out,
						    batch, &used);

		for (size_t i = 0; i < n; i++) {
			struct ph_iot_parsed one;
			enum ph_iot_bad why = PH_IOT_BAD_COUNT;

			memset(&one, 0, sizeof(one));
			one.line = out[i].line;
			one.len = out[i].len;
			one.kind = (uint8_t)ph_iot_parse_line(one.line, one.len,
							      &one.rec, &why);
			one.why = (uint8_t)why;
			if (!same_parse(&out[i], &one)) {
				ph_test_fail(__FILE__, __LINE__,
					     "isa %d, line at byte %td: %.*s",
					     (int)ph_iot_parse_isa(),
					     out[i].line - buf, (int)one.len,
					     one.line);
				return -1;
			}
			lines++;
		}
		p += used;
		if (n < batch) { /* a line it leaves, or the end */
			const char *nl = memchr(p, '\n', (size_t)(e - p));

			p = nl ? nl + 1 : e;
		}
	}
	return lines;
}

/* Digits of x, right-aligned in w bytes when w > 0. */
static int put_u64(char *buf, uint64_t x, int w)
{
	return w ? snprintf(buf, 32, "%*" PRIu64, w, x) :
		   snprintf(buf, 32, "%" PRIu64, x);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A number of `digits` digits, mostly; now and then one digit more or
 * fewer, or the field's limit, or one past it. */
static uint64_t near(uint64_t *x, unsigned digits, uint64_t limit)
{
	uint64_t lo = 1;

	switch (xorshift(x) % 32) {
	case 0: digits++; break;
	case 1: digits -= digits > 1; break;
	case 2: return limit;
	case 3: return limit + 1;
	}
	while (--digits)
		lo *= 10;
	return lo + xorshift(x) % (lo * 9) - (lo == 1);
}

/* Mostly the last choice of n, sometimes another. */
static unsigned sticky(uint64_t *x, unsigned last, unsigned n)
{
	return xorshift(x) % 16 ? last : (unsigned)(xorshift(x) % n);
}

/*
 * Block lines in the layouts the kernel prints, numbers varying around
 * their last values so that most lines share a recent line's shape and
 * some differ from it in a digit's count, a value out of range, or one
 * byte; also other events and lines too short or too long for the masks.
 */
static void varied_lines(struct ph_buf *b, int n, uint64_t seed)
{
	static const char *const comms[] = { "dd", "kworker/u8:0", "DB worker",
					     "<idle>", "a-1" };
	static const char *const rwbs[] = { "WS", "RA", "FF",	"W",
					    "R",  "DE", "WFSM", "N" };
	uint64_t x = seed, sec, bytes, nr, secs, pid, maj, min, tgid;
	char line[512], num[8][32];
	unsigned c = 0, o = 0, wide_major = 0;

	for (int i = 0; i < n; i++) {
		unsigned k = (unsigned)(xorshift(&x) % 16);
		const char *comm = comms[c = sticky(&x, c, 5)];
		const char *op = rwbs[o = sticky(&x, o, 8)];
		int len;

		sec = near(&x, 8, UINT64_MAX);
		bytes = near(&x, 4, UINT32_MAX);
		nr = near(&x, 1, UINT32_MAX);
		secs = near(&x, 4, 99999999);
		pid = near(&x, 5, 9999999);
		tgid = near(&x, 4, INT32_MAX);
		/* a four-digit major is out of range more often than not, a
		 * seven-digit minor when it passes 1048575 */
		wide_major = sticky(&x, wide_major, 2);
		maj = wide_major ? 1000 + xorshift(&x) % 9000 :
				   100 + xorshift(&x) % 900;
		min = xorshift(&x) % 8 ? xorshift(&x) % 10 :
					 1048570 + xorshift(&x) % 10;
		put_u64(num[0], secs, 5);
		put_u64(num[1], maj, 0);
		put_u64(num[2], min, 0);
		put_u64(num[3], bytes, 0);
		put_u64(num[4], sec, 0);
		put_u64(num[5], nr, 0);
		put_u64(num[6], tgid, 7);
		put_u64(num[7], pid, 0);
		if (k < 6)
			len = snprintf(line, sizeof(line),
				       "%16s-%-7s [%03u] .....  %s.%06u: "
				       "block_rq_issue: %s,%s %s %s () %s + %s "
				       "be,0,%u [%s]",
				       comm, num[7], k % 2, num[0],
				       (unsigned)(i * 37 % 1000000), num[1],
				       num[2], op, num[3], num[4], num[5], k,
				       comm);
		else if (k < 11)
			len = snprintf(line, sizeof(line),
				       "%16s-%-7s [%03u] ..s1.  %s.%06u: "
				       "block_rq_complete: %s,%s %s () %s + %s "
				       "be,0,4 [%s%u]",
				       comm, num[7], k % 2, num[0],
				       (unsigned)(i * 37 % 1000000), num[1],
				       num[2], op, num[4], num[5],
				       k % 3 ? "" : "-", k % 3 ? 0 : 5);
		else if (k < 13)
			len = snprintf(
				line, sizeof(line),
				"%16s-%-7s (%s) [%03u] ..... %s.%06u: "
				"block_rq_insert: %s,%s %s %s () %s + %s "
				"none,0,0 [%s]",
				comm, num[7], num[6], k % 2, num[0],
				(unsigned)(i * 37 % 1000000), num[1], num[2],
				op, num[3], num[4], num[5], comm);
		else if (k < 14)
			len = snprintf(line, sizeof(line),
				       "%16s-%-5s [%03u] d..2 %s.%06u: "
				       "block_rq_issue: %s,%s %s %s () %s + %s "
				       "[%s]",
				       comm, num[7], k % 2, num[0],
				       (unsigned)(i * 37 % 1000000), num[1],
				       num[2], op, num[3], num[4], num[5],
				       comm);
		else if (k < 15)
			len = snprintf(line, sizeof(line),
				       "%16s-%-7s [%03u] .....  %s.%06u: "
				       "sched_switch: prev_comm=%s prev_pid=%s",
				       comm, num[7], k % 2, num[0],
				       (unsigned)(i * 37 % 1000000), comm,
				       num[7]);
		else
			len = snprintf(line, sizeof(line),
				       "%s-%s [%03u] %s.1: x", comm, num[7],
				       k % 2, num[0]);
		if (len <= 0 || (size_t)len >= sizeof(line))
			continue;
		/* one line in eight changed in one byte */
		if (xorshift(&x) % 8 == 0) {
			static const char alphabet[] = " 0189:-[](),.aRWSF+\t";

			line[xorshift(&x) % (uint64_t)len] =
				alphabet[xorshift(&x) % (sizeof(alphabet) - 1)];
		}
		if (ph_buf_add(b, line, (size_t)len) || ph_buf_add(b, "\n", 1))
			return;
	}
}

static bool read_file(struct ph_buf *b, const char *path)
{
	if (ph_buf_read_file(b, path)) {
		ph_test_fail(__FILE__, __LINE__, "cannot read %s", path);
		return false;
	}
	return true;
}

/*
 * Sessions over every fixture, under every instruction set the CPU has,
 * fed whole and in pieces, emit the same rows (every field) and count the
 * same lines, events, malformed reasons and pairing figures.
 */
void test_iotrace_isa__readers_agree_on_fixtures(void)
{
	static const char *const repo_files[] = {
		"tests/golden/iotrace/errors/input.txt",
		"tests/golden/iotrace/flush/input.txt",
		"tests/golden/iotrace/malformed/input.txt",
		"tests/golden/iotrace/reissue/input.txt",
		"tests/golden/iotrace/tgid-insert/input.txt",
		"tests/golden/iotrace/trace-header-loss/input.txt",
		"tests/golden/iotrace/unmatched/input.txt",
		"tests/golden/iotrace/raw-6.18/trace.txt",
		"tests/fuzz/corpus/iotrace/android-systrace.txt",
		"tests/fuzz/corpus/iotrace/malformed.txt",
		"tests/fuzz/corpus/iotrace/tgid-and-loss.txt",
	};
	static const size_t pieces[] = { SIZE_MAX, 4096, 131 };
	enum ph_iot_isa best = ph_iot_parse_isa();
	int files = (int)PH_ARRAY_SIZE(repo_files) + 2, ran = 0;

	for (int f = 0; f < files; f++) {
		struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);

		if (f == 0) {
			if (!read_file(&b, FIXTURE("ftrace-block/linux-6.18-"
						   "virtio-dd-fio.txt")))
				return;
		} else if (f == 1) {
			varied_lines(&b, 20000, 88172645463325252ull);
		} else if (!read_file(&b, repo_files[f - 2])) {
			return;
		}
		for (size_t k = 0; k < PH_ARRAY_SIZE(pieces); k++) {
			struct outcome ref, o;

			CHECK(ph_iot_parse_set_isa(PH_IOT_ISA_PORTABLE));
			run_reader(b.buf, b.len, pieces[k], &ref);
			CHECK(ref.st.lines > 0);
			for (size_t i = 1; i < PH_ARRAY_SIZE(all_isas); i++) {
				if (!ph_iot_parse_set_isa(all_isas[i]))
					continue;
				run_reader(b.buf, b.len, pieces[k], &o);
				ran++;
				if (!same_outcome(&ref, &o)) {
					ph_test_fail(__FILE__, __LINE__,
						     "file %d, piece %zu: isa "
						     "%d differs",
						     f, pieces[k],
						     (int)all_isas[i]);
					ph_iot_parse_set_isa(best);
					ph_buf_release(&b);
					return;
				}
			}
		}
		ph_buf_release(&b);
	}
	CHECK(ph_iot_parse_set_isa(best));
	/* the baseline at least, and AVX2 wherever the CPU has it */
	CHECK_INT(ran, files * (int)PH_ARRAY_SIZE(pieces) *
			       (best == PH_IOT_ISA_AVX2 ? 2 : 1));
}

/*
 * Line by line, what the batch reader says -- from the masks, from a
 * remembered shape, or by the line parser -- is what ph_iot_parse_line()
 * says of the line alone, under each instruction set, in batches of any
 * size; the varied lines change digit counts, push values out of range and
 * change single bytes of lines whose shapes were just remembered.
 */
void test_iotrace_isa__batch_agrees_with_the_line_parser(void)
{
	static const size_t batches[] = { 1, 7, 64 };
	enum ph_iot_isa best = ph_iot_parse_isa();
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);

	varied_lines(&b, 30000, 0x9e3779b97f4a7c15ull);
	for (size_t i = 0; i < PH_ARRAY_SIZE(all_isas); i++) {
		if (!ph_iot_parse_set_isa(all_isas[i]))
			continue;
		for (size_t k = 0; k < PH_ARRAY_SIZE(batches); k++) {
			struct ph_iot_lines l;
			long n;

			ph_iot_lines_init(&l);
			n = batch_agrees(b.buf, b.len, batches[k], &l);
			if (n < 0) {
				ph_iot_parse_set_isa(best);
				ph_buf_release(&b);
				return;
			}
			CHECK(n > 25000);
		}
	}
	CHECK(ph_iot_parse_set_isa(best));
	ph_buf_release(&b);
}

/*
 * The shapes are used: over the fixture, with a SIMD path, the reader
 * remembers shapes (so later lines are read from them), and the rows are
 * still the ones the portable reader, which keeps none, emits.
 */
void test_iotrace_isa__fixture_lines_are_remembered(void)
{
	const char *f = FIXTURE("ftrace-block/linux-6.18-virtio-dd-fio.txt");
	enum ph_iot_isa best = ph_iot_parse_isa();
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_iot_lines l;
	int kept = 0;

	CHECK_INT(ph_buf_read_file(&b, f), 0);
	CHECK(ph_iot_parse_set_isa(PH_IOT_ISA_BASE));
	ph_iot_lines_init(&l);
	CHECK_INT(batch_agrees(b.buf, b.len, 32, &l), 40000);
	for (int i = 0; i < PH_IOT_SHAPES; i++)
		kept += l.shape[i].len > 0;
	/* issues by dd and completions in interrupts, at least */
	CHECK(kept >= 2);
	CHECK(ph_iot_parse_set_isa(best));
	ph_buf_release(&b);
}

/* The masks, the bytes with digits made 0xff and their comparison with
 * another buffer agree between the portable code, SSE2 and AVX2 (when the
 * CPU has it), bytes near each class's edges included. */
void test_iotrace_isa__classify128_agrees(void)
{
	static const char edges[] = "/09: 9\x1f!:;\n\t\xff";
	char p[128], q[128];
	uint64_t x = 88172645463325252ull;

	for (int round = 0; round < 20000; round++) {
		for (size_t i = 0; i < sizeof(p); i++) {
			xorshift(&x);
			p[i] = x & 1 ? edges[(x >> 1) % (sizeof(edges) - 1)] :
				       (char)(x >> 8);
		}
		memcpy(q, p, sizeof(q));
		/* q: p with digits changed and a few bytes not */
		for (int j = 0; j < 8; j++) {
			size_t at = xorshift(&x) % sizeof(q);

			q[at] = (char)(xorshift(&x) & 1 ? '0' + x % 10 :
							  x >> 8);
		}
		CHECK(ph_iot_classify128_agree(p, q));
	}
}
