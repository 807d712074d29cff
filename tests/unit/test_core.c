/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for ph_buf, ph_arena, ph_error, ph_clock, ph_log and
 * ph_inflate.
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_arena.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_error.h"
#if PH_TEST_GLIBC_LIBS
#include "ph_inflate.h"
#endif
#include "ph_log.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#if PH_TEST_GLIBC_LIBS
#include <zlib.h>
#endif

void test_buf__empty_is_a_c_string(void)
{
	struct ph_buf b = PH_BUF_INIT(16);

	CHECK(b.buf != NULL);
	CHECK_STR(b.buf, "");
	CHECK_INT(b.len, 0);
	ph_buf_release(&b);
	CHECK_STR(b.buf, "");
}

void test_buf__appends_and_stays_terminated(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);

	CHECK_INT(ph_buf_addstr(&b, "abc"), 0);
	CHECK_INT(ph_buf_addch(&b, 'd'), 0);
	CHECK_INT(ph_buf_addf(&b, "-%d-%s", 42, "x"), 0);
	CHECK_STR(b.buf, "abcd-42-x");
	CHECK_INT(b.len, 9);
	CHECK_INT(ph_buf_add(&b, "\0z", 2), 0); /* binary-safe */
	CHECK_INT(b.len, 11);
	CHECK(b.buf[9] == '\0' && b.buf[10] == 'z' && b.buf[11] == '\0');
	ph_buf_consume(&b, 4);
	CHECK_STR(b.buf, "-42-x");
	ph_buf_release(&b);
}

void test_buf__cap_is_all_or_nothing(void)
{
	struct ph_buf b = PH_BUF_INIT(8);

	CHECK_INT(ph_buf_addstr(&b, "12345"), 0);
	CHECK_INT(ph_buf_addstr(&b, "6789"), PH_ETOOBIG);
	CHECK_STR(b.buf, "12345");
	CHECK_INT(ph_buf_addf(&b, "%s", "abcd"), PH_ETOOBIG);
	CHECK_STR(b.buf, "12345");
	CHECK_INT(ph_buf_addstr(&b, "678"), 0);
	CHECK_STR(b.buf, "12345678");
	CHECK_INT(ph_buf_addch(&b, 'x'), PH_ETOOBIG);
	CHECK(b.alloc <= 9);
	ph_buf_release(&b);
}

void test_buf__addf_grows_past_first_guess(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	char big[300];

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(ph_buf_addf(&b, "<%s>", big), 0);
	CHECK_INT(b.len, 301);
	CHECK(b.buf[0] == '<' && b.buf[300] == '>' && b.buf[301] == '\0');
	ph_buf_release(&b);
}

void test_buf__read_file_and_detach(void)
{
	const char *dir = ph_test_tmpdir();
	char path[512];
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	size_t len;
	char *p;
	int fd;

	CHECK(dir);
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "hello\nworld", 11), 11);
	close(fd);
	CHECK_INT(ph_buf_read_file(&b, path), 0);
	CHECK_STR(b.buf, "hello\nworld");
	CHECK_INT(ph_buf_read_file(&b, "/nonexistent/x"), PH_ENOENT);
	p = ph_buf_detach(&b, &len);
	CHECK_INT(len, 11);
	CHECK_STR(p, "hello\nworld");
	CHECK_INT(b.len, 0);
	free(p);
	b.cap = 4;
	CHECK_INT(ph_buf_read_file(&b, path), PH_ETOOBIG);
	CHECK_INT(b.len, 0);
	ph_buf_release(&b);
}

void test_arena__alignment_reset_and_cap(void)
{
	struct ph_arena a;
	char *s;
	void *p, *big;

	ph_arena_init(&a, 1024, 8192);
	s = ph_arena_alloc_bytes(&a, 3);
	p = ph_arena_alloc(&a, 24);
	CHECK(s && p);
	CHECK_INT((uintptr_t)p % 16, 0);
	big = ph_arena_alloc(&a, 3000); /* own block */
	CHECK(big);
	memset(big, 1, 3000);
	CHECK(ph_arena_alloc(&a, 100) != NULL); /* still fills the first */
	CHECK(ph_arena_used(&a) >= 3 + 24 + 3000 + 100);
	CHECK(ph_arena_alloc(&a, 9000) == NULL); /* past the cap */
	CHECK_STR(ph_arena_strndup(&a, "hello", 4), "hell");
	ph_arena_reset(&a);
	CHECK_INT(ph_arena_used(&a), 0);
	CHECK(ph_arena_alloc(&a, 10) != NULL);
	ph_arena_release(&a);
	CHECK_INT(a.total, 0);
}

/* Found by fuzz_json: an exactly full, unaligned block, then an aligned
 * allocation, must not step past the block's end. */
void test_arena__aligned_after_full_odd_block(void)
{
	struct ph_arena a;
	char *s;
	uint64_t *p;

	ph_arena_init(&a, 64, SIZE_MAX);
	s = ph_arena_alloc_bytes(&a, 1001); /* a block of exactly 1001 */
	CHECK(s);
	memset(s, 'x', 1001);
	p = ph_arena_alloc(&a, 16);
	CHECK(p);
	CHECK_INT((uintptr_t)p % 16, 0);
	CHECK((char *)p >= s + 1001 || (char *)p + 16 <= s);
	p[0] = p[1] = 7;
	ph_arena_release(&a);
}

/* A huge arena's regular block is one aligned 2 MiB page, header
 * included, so the first fault maps it whole; it stays huge after a
 * release, and an oversized request still gets its own block. */
void test_arena__huge_blocks_are_whole_aligned_pages(void)
{
	const uintptr_t page = (uintptr_t)2 << 20;
	struct ph_arena a;
	char *first, *p;
	size_t n = 0;

	ph_arena_init_huge(&a, (size_t)64 << 20);
	CHECK(a.huge);
	first = ph_arena_alloc_bytes(&a, 1);
	CHECK(first);
	CHECK((uintptr_t)first % page < 64); /* just past the header */
	/* the block takes about 2 MiB before a second one starts */
	while ((p = ph_arena_alloc_bytes(&a, 4096)) &&
	       ((uintptr_t)p & ~(page - 1)) == ((uintptr_t)first & ~(page - 1)))
		n += 4096;
	CHECK(p);
	CHECK(n > page - 8192 && n < page);
	CHECK_INT((uintptr_t)p % page < 64, 1);
	CHECK(ph_arena_alloc(&a, (size_t)3 << 20)); /* oversized: its own */
	ph_arena_release(&a);
	CHECK(a.huge);
	CHECK(ph_arena_alloc_bytes(&a, 1));
	ph_arena_release(&a);
}

void test_arena__many_small_allocations(void)
{
	struct ph_arena a;
	int **v = calloc(10000, sizeof(*v));

	CHECK(v);
	ph_arena_init(&a, 4096, SIZE_MAX);
	for (int i = 0; i < 10000; i++) {
		v[i] = ph_arena_alloc(&a, sizeof(int));
		*v[i] = i;
	}
	for (int i = 0; i < 10000; i++)
		CHECK_INT(*v[i], i);
	ph_arena_release(&a);
	free(v);
}

/* A recycled arena refills the blocks it had (the store's chunks touch
 * no fresh memory once at their cap), counts only what is in use, and a
 * release frees the kept blocks too (ASan sees a leak otherwise). */
void test_arena__recycle_refills_its_own_blocks(void)
{
	struct ph_arena a;
	char *first, *p, *big;
	bool refilled = false;

	ph_arena_init(&a, 1024, 16384);
	first = ph_arena_alloc_bytes(&a, 200);
	for (int i = 0; i < 6; i++) /* into a second regular block */
		CHECK(ph_arena_alloc_bytes(&a, 200));
	big = ph_arena_alloc_bytes(&a, 4000); /* a block of its own */
	CHECK(first && big);
	CHECK(a.total > 2 * 1024 + 4000);
	ph_arena_recycle(&a);
	CHECK_INT(a.total, 0);
	CHECK_INT(ph_arena_used(&a), 0);
	/* the two regular blocks come back before any new one */
	for (int i = 0; i < 7; i++) {
		p = ph_arena_alloc_bytes(&a, 200);
		CHECK(p);
		refilled |= p == first;
	}
	CHECK(refilled);
	CHECK(a.total < 2 * 1024 + 4000);
	ph_arena_recycle(&a);
	ph_arena_recycle(&a); /* recycling an empty arena keeps the spares */
	CHECK(ph_arena_alloc_bytes(&a, 10) != NULL);
	ph_arena_release(&a);
	CHECK_INT(a.total, 0);
	CHECK(a.spare == NULL);
}

void test_error__corrupt_names_offset(void)
{
	struct ph_err err = { 0 };
	char msg[256];

	CHECK_INT(PH_CORRUPT(&err, 17, "expected %s", "':'"), PH_ECORRUPT);
	CHECK_INT(err.offset, 17);
	CHECK_STR(err.msg, "expected ':'");
	CHECK(err.src_line > 0);
	CHECK_STR(ph_err_format(&err, msg, sizeof(msg)),
		  "byte 17: expected ':'");
	err.line = 2;
	err.col = 5;
	CHECK_STR(ph_err_format(&err, msg, sizeof(msg)),
		  "byte 17 (line 2, column 5): expected ':'");
	CHECK_STR(ph_strerror(PH_ETOOBIG), "PH_ETOOBIG");
	CHECK_INT(PH_CORRUPT(NULL, 1, "ignored"), PH_ECORRUPT);
}

void test_clock__monotonic_and_formats(void)
{
	int64_t a = ph_clock_mono_ns(), b = ph_clock_mono_ns();
	int64_t off = ph_clock_mono_to_real_offset_ns();
	char buf[64];

	CHECK(b >= a);
	CHECK(ph_clock_uptime_ms() >= a / 1000000);
	/* mono + offset is the wall clock, to well within a second */
	CHECK(llabs(ph_clock_mono_ns() + off - ph_clock_epoch_ns()) <
	      1000000000LL);
	CHECK_STR(ph_clock_format_utc_us(1700000000123456789LL, buf,
					 sizeof(buf)),
		  "2023-11-14 22:13:20.123456");
	CHECK_STR(ph_clock_format_utc_us(0, buf, sizeof(buf)),
		  "1970-01-01 00:00:00.000000");
	CHECK_INT(ph_ms_to_ns(3), 3000000);
	CHECK_INT(ph_ns_to_ms(3999999), 3);
}

static int log_pipe[2];

static void *log_writer(void *arg)
{
	for (int i = 0; i < 200; i++)
		ph_log(PH_LOG_WARN, "thread %ld line %d %s",
		       (long)(intptr_t)arg, i,
		       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	return NULL;
}

/* Lines from several threads arrive whole: one write(2) per line. */
void test_log__mt_lines_do_not_interleave(void)
{
	pthread_t t[4];
	struct ph_buf b = PH_BUF_INIT(1 << 22);
	int old = ph_log_fd(), lines = 0;
	ssize_t n;

	CHECK_INT(pipe(log_pipe), 0);
	fcntl(log_pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(log_pipe[1], F_SETPIPE_SZ, 1 << 20);
	ph_log_set_fd(log_pipe[1]);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, log_writer, (void *)(intptr_t)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ph_log_set_fd(old);
	close(log_pipe[1]);
	do
		n = ph_buf_read_once(&b, log_pipe[0], 65536);
	while (n > 0);
	close(log_pipe[0]);
	for (char *line = b.buf; *line;) {
		char *nl = strchr(line, '\n');

		CHECK(nl);
		*nl = '\0';
		CHECK(!strncmp(line, "porthole: warning: thread ", 26));
		CHECK(strstr(line,
			     " xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
		lines++;
		line = nl + 1;
	}
	CHECK_INT(lines, 800);
	ph_buf_release(&b);
}

/* ph_inflate: the host's, with zlib (none for musl). */
#if PH_TEST_GLIBC_LIBS
/* n bytes of c, deflated with framing wbits (as ph_inflate names them). */
static void deflate_fill(struct ph_buf *out, int wbits, int c, size_t n)
{
	static uint8_t chunk[1 << 16];
	z_stream z;
	int rc;

	memset(chunk, c, sizeof(chunk));
	memset(&z, 0, sizeof(z));
	CHECK_INT(deflateInit2(&z, 9, Z_DEFLATED, wbits, 9, Z_DEFAULT_STRATEGY),
		  Z_OK);
	do {
		size_t k = n < sizeof(chunk) ? n : sizeof(chunk);

		n -= k;
		z.next_in = chunk;
		z.avail_in = (uInt)k;
		do {
			CHECK_INT(ph_buf_grow(out, 1 << 16), 0);
			z.next_out = (Bytef *)out->buf + out->len;
			z.avail_out = 1 << 16;
			rc = deflate(&z, n ? Z_NO_FLUSH : Z_FINISH);
			ph_buf_setlen(out, out->len + (1 << 16) - z.avail_out);
		} while (z.avail_out == 0);
	} while (n);
	CHECK_INT(rc, Z_STREAM_END);
	deflateEnd(&z);
}

void test_inflate__round_trip_each_framing(void)
{
	static const int framings[] = { PH_INFLATE_ZLIB, PH_INFLATE_GZIP,
					PH_INFLATE_RAW };

	for (size_t i = 0; i < sizeof(framings) / sizeof(framings[0]); i++) {
		struct ph_buf z = PH_BUF_INIT(PH_BUF_NO_CAP);
		struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
		struct ph_err err = { 0 };
		size_t used = 0;

		deflate_fill(&z, framings[i], 'a', 3000000);
		/* bytes after the stream are not read */
		CHECK_INT(ph_buf_addstr(&z, "tail"), 0);
		CHECK_INT(ph_inflate(z.buf, z.len, framings[i], NULL, &out,
				     &used, &err),
			  0);
		CHECK_INT(out.len, 3000000);
		CHECK_INT(used, z.len - 4);
		CHECK(out.buf[0] == 'a' && out.buf[out.len - 1] == 'a');
		CHECK_INT(err.code, 0);
		ph_buf_release(&z);
		ph_buf_release(&out);
	}
}

/* The bomb of the issue, smaller: 96 MiB of zeros in about 100 KB. */
void test_inflate__ratio_cap_refuses_a_bomb(void)
{
	struct ph_buf z = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_err err = { 0 };
	size_t used = 0;

	deflate_fill(&z, PH_INFLATE_GZIP, 0, (size_t)96 << 20);
	CHECK_INT(ph_inflate(z.buf, z.len, PH_INFLATE_GZIP, NULL, &out, &used,
			     &err),
		  PH_ETOOBIG);
	CHECK_INT(err.code, PH_ETOOBIG);
	CHECK(strstr(err.msg, "200:1 ratio cap") != NULL);
	/* what came before the refusal is kept, and where it stopped */
	CHECK(out.len > PH_INFLATE_RATIO_FREE && out.len < ((size_t)96 << 20));
	CHECK(err.offset == used && used > 0 && used < z.len);
	ph_buf_release(&z);
	ph_buf_release(&out);
}

void test_inflate__size_cap_and_buffer_cap(void)
{
	static const struct ph_inflate_caps caps = { 1 << 20, 1 << 30,
						     1 << 20 };
	struct ph_buf z = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf small = PH_BUF_INIT(1000);
	struct ph_err err = { 0 };

	deflate_fill(&z, PH_INFLATE_ZLIB, 'x', 5 << 20);
	CHECK_INT(ph_inflate(z.buf, z.len, PH_INFLATE_ZLIB, &caps, &out, NULL,
			     &err),
		  PH_ETOOBIG);
	CHECK_INT(out.len, 1 << 20);
	CHECK(strstr(err.msg, "size cap") != NULL);
	/* the buffer's own cap holds too */
	CHECK_INT(ph_inflate(z.buf, z.len, PH_INFLATE_ZLIB, NULL, &small, NULL,
			     NULL),
		  PH_ETOOBIG);
	CHECK_INT(small.len, 1000);
	ph_buf_release(&z);
	ph_buf_release(&out);
	ph_buf_release(&small);
}

void test_inflate__corrupt_and_short_streams_say_where(void)
{
	struct ph_buf z = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_err err = { 0 };

	for (int i = 0; i < 4096; i++)
		CHECK_INT(ph_buf_addf(&z, "%d,", i * 7919 % 10007), 0);
	{
		struct ph_buf gz = PH_BUF_INIT(PH_BUF_NO_CAP);
		z_stream s;

		memset(&s, 0, sizeof(s));
		CHECK_INT(deflateInit2(&s, 6, Z_DEFLATED, PH_INFLATE_GZIP, 8,
				       Z_DEFAULT_STRATEGY),
			  Z_OK);
		CHECK_INT(ph_buf_grow(&gz, deflateBound(&s, z.len)), 0);
		s.next_in = (Bytef *)z.buf;
		s.avail_in = (uInt)z.len;
		s.next_out = (Bytef *)gz.buf;
		s.avail_out = (uInt)(gz.alloc - 1);
		CHECK_INT(deflate(&s, Z_FINISH), Z_STREAM_END);
		ph_buf_setlen(&gz, s.total_out);
		deflateEnd(&s);

		/* cut in half: it ends early, at the end of what there is */
		CHECK_INT(ph_inflate(gz.buf, gz.len / 2, PH_INFLATE_GZIP, NULL,
				     &out, NULL, &err),
			  PH_ECORRUPT);
		CHECK(strstr(err.msg, "ends early") != NULL);
		CHECK_INT(err.offset, gz.len / 2);
		CHECK(out.len > 0 && out.len < z.len);
		/* a bad header byte: corrupt, at its offset */
		ph_buf_reset(&out);
		gz.buf[3] = (char)0xe0; /* reserved FLG bits */
		CHECK_INT(ph_inflate(gz.buf, gz.len, PH_INFLATE_GZIP, NULL,
				     &out, NULL, &err),
			  PH_ECORRUPT);
		CHECK(strstr(err.msg, "corrupt") != NULL);
		CHECK(err.offset < 10);
		ph_buf_release(&gz);
	}
	ph_buf_release(&z);
	ph_buf_release(&out);
}
#endif

/* ph_grow: from min, doubling to what is needed, and a size that would
 * overflow size_t is refused with the array left as it was. */
void test_core__grow_doubles_and_refuses_overflow(void)
{
	int *v = NULL;
	size_t alloc = 0;

	CHECK_INT(PH_GROW(v, alloc, 1, 16), 0);
	CHECK(v != NULL);
	CHECK_INT(alloc, 16);
	v[15] = 7;
	CHECK_INT(PH_GROW(v, alloc, 16, 16), 0); /* room already */
	CHECK_INT(alloc, 16);
	CHECK_INT(PH_GROW(v, alloc, 17, 16), 0);
	CHECK_INT(alloc, 32);
	CHECK_INT(v[15], 7);
	CHECK_INT(PH_GROW(v, alloc, 100, 16), 0);
	CHECK_INT(alloc, 128);
	CHECK_INT(PH_GROW(v, alloc, SIZE_MAX / 2, 16), PH_ENOMEM);
	CHECK_INT(PH_GROW(v, alloc, SIZE_MAX, 16), PH_ENOMEM);
	CHECK_INT(alloc, 128);
	CHECK_INT(v[15], 7);
	free(v);
}
