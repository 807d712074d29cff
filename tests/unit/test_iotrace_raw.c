/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the binary trace_pipe_raw decoder: real pages from this
 * kernel checked event by event against the kernel's own text for the
 * same events (tests/golden/iotrace/raw-6.18/, see capture.sh there), and
 * made-up pages for the encodings a short capture does not show (time
 * extends, absolute stamps, padding, long events, lost events, damage).
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "iotrace/block_parse.h"
#include "iotrace/rawpipe.h"

#define GOLD "tests/golden/iotrace/raw-6.18/"

struct recs {
	struct ph_iot_rec *v;
	size_t n, cap;
};

static int add(void *ctx, const struct ph_iot_rec *r)
{
	struct recs *rs = ctx;

	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 256;
		rs->v = realloc(rs->v, rs->cap * sizeof(*rs->v));
		if (!rs->v)
			return PH_ENOMEM;
	}
	rs->v[rs->n++] = *r;
	return 0;
}

static int load(struct ph_buf *b, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), GOLD "%s", name);
	ph_buf_reset(b);
	return ph_buf_read_file(b, path);
}

static int init_from_gold(struct ph_iot_raw *r)
{
	struct ph_buf hp = PH_BUF_INIT(1 << 20), f[4];
	const char *formats[PH_IOT_EV_COUNT] = { NULL };
	static const char *const names[4] = {
		NULL,
		"block_rq_issue.format",
		"block_rq_insert.format",
		"block_rq_complete.format",
	};
	int rc = load(&hp, "header_page");

	for (int i = 1; i < 4; i++) {
		ph_buf_init(&f[i], 1 << 20);
		if (!rc)
			rc = load(&f[i], names[i]);
		formats[i] = f[i].buf;
	}
	if (!rc)
		rc = ph_iot_raw_init_text(r, hp.buf, formats, 4096);
	ph_buf_release(&hp);
	for (int i = 1; i < 4; i++)
		ph_buf_release(&f[i]);
	return rc;
}

void test_iotrace_raw__formats_of_this_kernel(void)
{
	struct ph_iot_raw r;

	CHECK_INT(init_from_gold(&r), 0);
	CHECK_INT(r.data_off, 16);
	CHECK_INT(r.commit_off, 8);
	CHECK_INT(r.commit_size, 8);
	CHECK_INT(r.ev[PH_IOT_EV_ISSUE].id, 2104);
	CHECK_INT(r.ev[PH_IOT_EV_INSERT].id, 2105);
	CHECK_INT(r.ev[PH_IOT_EV_COMPLETE].id, 2107);
	CHECK_INT(r.ev[PH_IOT_EV_ISSUE].sector.off, 16);
	CHECK_INT(r.ev[PH_IOT_EV_ISSUE].sector.size, 8);
	CHECK_INT(r.ev[PH_IOT_EV_ISSUE].rwbs.off, 34);
	CHECK_INT(r.ev[PH_IOT_EV_ISSUE].rwbs.size, 10);
	CHECK_INT(r.ev[PH_IOT_EV_ISSUE].comm.off, 44);
	CHECK_INT(r.ev[PH_IOT_EV_ISSUE].bytes.off, 28);
	CHECK_INT(r.ev[PH_IOT_EV_COMPLETE].error.off, 28);
	CHECK_INT(r.ev[PH_IOT_EV_COMPLETE].bytes.off, -1);
	CHECK_INT(r.ev[PH_IOT_EV_ISSUE].pid.off, 4);
}

/* Every event of the captured pages equals the kernel's text for it. */
void test_iotrace_raw__pages_match_the_kernels_text(void)
{
	struct ph_buf page = PH_BUF_INIT(16 << 20),
		      text = PH_BUF_INIT(16 << 20);
	struct recs raw = { 0 }, txt = { 0 };
	struct ph_iot_raw r;
	size_t i, j;

	CHECK_INT(init_from_gold(&r), 0);
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		char name[16];

		snprintf(name, sizeof(name), "cpu%u.raw", cpu);
		CHECK_INT(load(&page, name), 0);
		CHECK(page.len % 4096 == 0);
		for (size_t off = 0; off < page.len; off += 4096)
			CHECK_INT(ph_iot_raw_page(
					  &r, (const uint8_t *)page.buf + off,
					  4096, cpu, add, &raw),
				  0);
	}
	CHECK_INT(r.bad_pages, 0);
	CHECK_INT(r.bad_events, 0);
	CHECK_INT(r.missed_pages, 0);
	CHECK_INT(load(&text, "trace.txt"), 0);
	for (const char *p = text.buf, *e = text.buf + text.len; p < e;) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
		struct ph_iot_rec rec;
		enum ph_iot_bad why;

		if (ph_iot_parse_line(p, n, &rec, &why) == PH_IOT_LINE_BLOCK)
			add(&txt, &rec);
		p += n + 1;
	}
	CHECK_INT(txt.n, 1611);
	CHECK_INT(raw.n, txt.n);
	CHECK_INT(r.events, 1611);
	/* the text is merged by time across CPUs; match per CPU, in order */
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		for (i = 0, j = 0;; i++, j++) {
			while (i < txt.n && txt.v[i].cpu != cpu)
				i++;
			while (j < raw.n && raw.v[j].cpu != cpu)
				j++;
			if (i == txt.n || j == raw.n) {
				CHECK(i == txt.n && j == raw.n);
				break;
			}
			const struct ph_iot_rec *a = &txt.v[i], *b = &raw.v[j];

			CHECK_INT(a->event, b->event);
			/* the text rounds to the nearest microsecond */
			CHECK_INT(a->ts_ns, (b->ts_ns + 500) / 1000 * 1000);
			CHECK_INT(a->pid, b->pid);
			CHECK_INT(a->dev, b->dev);
			CHECK(a->sector == b->sector);
			CHECK_INT(a->nr_sector, b->nr_sector);
			CHECK_INT(a->bytes, b->bytes);
			CHECK_INT(a->op, b->op);
			CHECK_INT(a->flags, b->flags);
			CHECK_INT(a->has_error, b->has_error);
			CHECK_INT(a->error, b->error);
			CHECK_INT(b->tgid, -1);
			if (a->event != PH_IOT_EV_COMPLETE) {
				CHECK_INT(a->comm_len, b->comm_len);
				CHECK(!memcmp(a->comm, b->comm, a->comm_len));
			}
		}
	}
	free(raw.v);
	free(txt.v);
	ph_buf_release(&page);
	ph_buf_release(&text);
}

/* ---- made-up pages --------------------------------------------------------
 */

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char issue_fmt[] =
	"name: block_rq_issue\nID: 7\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
	"\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;\n";

static const char complete_fmt[] =
	"name: block_rq_complete\nID: 9\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:int error;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n";

struct pagew {
	uint8_t b[4096];
	size_t at;
};

static void put32(struct pagew *w, uint32_t v)
{
	memcpy(w->b + w->at, &v, 4);
	w->at += 4;
}

/* One data event: header word, then a record of n bytes (n % 4 == 0). */
static void event(struct pagew *w, uint32_t delta, int type, uint64_t sector,
		  const char *rwbs, int32_t err_or_bytes, size_t n, bool big)
{
	uint8_t rec[128] = { 0 };
	uint16_t t = (uint16_t)type;
	int32_t pid = 42;
	uint32_t dev = 8u << 20 | 16, nr = 8;

	memcpy(rec, &t, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + 8, &dev, 4);
	memcpy(rec + 16, &sector, 8);
	memcpy(rec + 24, &nr, 4);
	memcpy(rec + 28, &err_or_bytes, 4);
	memcpy(rec + 34, rwbs, strlen(rwbs));
	memcpy(rec + 44, "dd", 2);
	if (big) {
		put32(w, delta << 5 | 0);
		put32(w, (uint32_t)n + 4);
	} else {
		put32(w, delta << 5 | (uint32_t)(n / 4));
	}
	memcpy(w->b + w->at, rec, n);
	w->at += n;
}

static void finish(struct pagew *w, uint64_t ts, uint64_t flags)
{
	uint64_t commit = (w->at - 16) | flags;

	memcpy(w->b, &ts, 8);
	memcpy(w->b + 8, &commit, 8);
}

static int init_made_up(struct ph_iot_raw *r)
{
	const char *formats[PH_IOT_EV_COUNT] = { NULL, issue_fmt, NULL,
						 complete_fmt };

	return ph_iot_raw_init_text(r, header_page, formats, 4096);
}

void test_iotrace_raw__encodings(void)
{
	struct pagew w = { .at = 16 };
	struct recs rs = { 0 };
	struct ph_iot_raw r;

	CHECK_INT(init_made_up(&r), 0);
	CHECK_INT(r.ev[PH_IOT_EV_INSERT].id, -1);
	event(&w, 5, 7, 100, "WS", 4096, 64, false); /* ts 1005 */
	put32(&w, 3u << 5 | 30);		     /* time extend */
	put32(&w, 1);				     /* += 2^27 + 3 */
	event(&w, 10, 9, 100, "WS", -5, 48, false);  /* + 10 */
	put32(&w, 7u << 5 | 29);		     /* a discarded event */
	put32(&w, 12);
	w.at += 8;
	event(&w, 1, 9, 200, "R", 0, 48, true); /* long form, + 7 + 1 */
	put32(&w, 2u << 5 | 31);		/* absolute stamp */
	put32(&w, 0);
	event(&w, 0, 1234, 1, "R", 0, 48, false); /* another event */
	event(&w, 4, 7, 300, "FF", 0, 64, false); /* at 2 + 4 */
	put32(&w, 0 << 5 | 29);			  /* rest is padding */
	finish(&w, 1000, 0);
	CHECK_INT(ph_iot_raw_page(&r, w.b, sizeof(w.b), 1, add, &rs), 0);
	CHECK_INT(rs.n, 4);
	CHECK_INT(rs.v[0].event, PH_IOT_EV_ISSUE);
	CHECK_INT(rs.v[0].ts_ns, 1005);
	CHECK_INT(rs.v[0].bytes, 4096);
	CHECK_INT(rs.v[0].pid, 42);
	CHECK_INT(rs.v[0].cpu, 1);
	CHECK_INT(ph_iot_dev_major(rs.v[0].dev), 8);
	CHECK_INT(ph_iot_dev_minor(rs.v[0].dev), 16);
	CHECK_INT(rs.v[0].comm_len, 2);
	CHECK_INT(rs.v[0].op, PH_IOT_OP_WRITE);
	CHECK_INT(rs.v[0].flags, PH_IOT_F_SYNC);
	CHECK_INT(rs.v[1].event, PH_IOT_EV_COMPLETE);
	CHECK_INT(rs.v[1].ts_ns, 1005 + (1 << 27) + 3 + 10);
	CHECK_INT(rs.v[1].has_error, 1);
	CHECK_INT(rs.v[1].error, -5);
	CHECK_INT(rs.v[1].comm_len, 0);
	CHECK_INT(rs.v[2].ts_ns, 1005 + (1 << 27) + 3 + 10 + 7 + 1);
	CHECK_INT(rs.v[2].sector, 200);
	CHECK_INT(rs.v[3].ts_ns, 2 + 4);
	CHECK_INT(rs.v[3].op, PH_IOT_OP_FLUSH);
	CHECK_INT(r.other_events, 1);
	CHECK_INT(r.bad_pages, 0);
	free(rs.v);
}

void test_iotrace_raw__lost_events(void)
{
	struct pagew w = { .at = 16 };
	struct recs rs = { 0 };
	struct ph_iot_raw r;
	unsigned long missed = 77;

	CHECK_INT(init_made_up(&r), 0);
	event(&w, 5, 7, 100, "W", 512, 64, false);
	finish(&w, 1, 1ull << 31 | 1ull << 30);
	memcpy(w.b + w.at, &missed, sizeof(missed));
	CHECK_INT(ph_iot_raw_page(&r, w.b, sizeof(w.b), 0, add, &rs), 0);
	CHECK_INT(rs.n, 1);
	CHECK_INT(r.missed_pages, 1);
	CHECK_INT(r.missed_events, 77);
	free(rs.v);
}

void test_iotrace_raw__damage_is_counted(void)
{
	struct pagew w = { .at = 16 };
	struct recs rs = { 0 };
	struct ph_iot_raw r;
	uint64_t big = 1 << 20;

	CHECK_INT(init_made_up(&r), 0);
	event(&w, 5, 7, 100, "W", 512, 64, false);
	put32(&w, 0 << 5 | 0); /* long form claiming more than the page */
	put32(&w, 8000);
	finish(&w, 1, 0);
	CHECK_INT(ph_iot_raw_page(&r, w.b, sizeof(w.b), 0, add, &rs), 0);
	CHECK_INT(rs.n, 1);
	CHECK_INT(r.bad_pages, 1);
	/* a commit larger than the page: decoded up to the page's end */
	memcpy(w.b + 8, &big, 8);
	CHECK_INT(ph_iot_raw_page(&r, w.b, sizeof(w.b), 0, add, &rs), 0);
	CHECK_INT(r.bad_pages, 3);
	/* an event too short for its format, and an unknown rwbs */
	w.at = 16;
	event(&w, 1, 7, 100, "W", 512, 16, false);
	event(&w, 1, 7, 100, "Q", 512, 64, false);
	finish(&w, 1, 0);
	CHECK_INT(ph_iot_raw_page(&r, w.b, sizeof(w.b), 0, add, &rs), 0);
	CHECK_INT(r.bad_events, 2);
	/* a short read */
	CHECK_INT(ph_iot_raw_page(&r, w.b, 10, 0, add, &rs), 0);
	free(rs.v);
}

void test_iotrace_raw__formats_it_refuses(void)
{
	struct ph_iot_raw r;
	const char *none[PH_IOT_EV_COUNT] = { NULL };
	const char *no_sector[PH_IOT_EV_COUNT] = {
		NULL,
		"ID: 7\n\tfield:int common_pid;\toffset:4;\tsize:4;\n"
		"\tfield:dev_t dev;\toffset:8;\tsize:4;\n"
		"\tfield:char rwbs[8];\toffset:12;\tsize:8;\n",
		NULL,
		complete_fmt,
	};

	CHECK_INT(ph_iot_raw_init_text(&r, header_page, none, 4096),
		  PH_EUNSUPP);
	CHECK_INT(ph_iot_raw_init_text(&r, header_page, no_sector, 4096),
		  PH_EUNSUPP);
	CHECK_INT(ph_iot_raw_init_text(&r, "nothing", none, 4096), PH_EUNSUPP);
}
