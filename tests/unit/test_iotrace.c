/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the iotrace engine: the line parser on both kernels'
 * formats, rwbs, pairing (FIFO re-issue, flushes, unmatched completions,
 * queue latency), the text reader (HTML, comments, loss markers, lines split
 * across reads), the CSV row format, and the fixture's acceptance counts.
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_buf.h"
#include "iotrace/block_parse.h"
#include "iotrace/csv_out.h"
#include "iotrace/iotrace.h"
#include "iotrace/pair.h"
#include "iotrace/text_reader.h"
#include "iotrace/sha256.h"

#include <time.h>

static enum ph_iot_line parse(const char *line, struct ph_iot_rec *r,
			      enum ph_iot_bad *why)
{
	memset(r, 0x5a, sizeof(*r)); /* nothing may be left unset */
	return ph_iot_parse_line(line, strlen(line), r, why);
}

/* ---- the line parser ---------------------------------------------------- */

void test_iotrace__issue_linux_6(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("      capture.sh-16188   [000] .....  1969.415749: "
			"block_rq_issue: 254,0 RA 16384 () 13095728 + 32 "
			"be,0,4 [capture.sh]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.event, PH_IOT_EV_ISSUE);
	CHECK_INT(r.ts_ns, 1969415749000);
	CHECK_INT(r.pid, 16188);
	CHECK_INT(r.tgid, -1);
	CHECK_INT(r.cpu, 0);
	CHECK_INT(ph_iot_dev_major(r.dev), 254);
	CHECK_INT(ph_iot_dev_minor(r.dev), 0);
	CHECK_INT(r.op, PH_IOT_OP_READ);
	CHECK_INT(r.flags, PH_IOT_F_AHEAD);
	CHECK_INT(r.bytes, 16384);
	CHECK_INT(r.sector, 13095728);
	CHECK_INT(r.nr_sector, 32);
	CHECK_INT(r.comm_len, 10);
	CHECK(!memcmp(r.comm, "capture.sh", 10));
}

void test_iotrace__requeue_linux_6(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("    kworker/1:1H-27423   [001] ..... 54588.052708: "
			"block_rq_requeue: 254,0 W () 365754352 + 328 be,0,4 "
			"[0]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.event, PH_IOT_EV_REQUEUE);
	CHECK_INT(r.pid, 27423);
	CHECK_INT(r.op, PH_IOT_OP_WRITE);
	CHECK_INT(r.sector, 365754352);
	CHECK_INT(r.nr_sector, 328);
	CHECK_INT(r.bytes, 0);
	CHECK_INT(r.comm_len, 0);
}

void test_iotrace__complete_linux_6(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("          <idle>-0       [001] ..s1.  1969.416585: "
			"block_rq_complete: 254,0 RA () 13095760 + 48 be,0,4 "
			"[0]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.event, PH_IOT_EV_COMPLETE);
	CHECK_INT(r.pid, 0);
	CHECK_INT(r.cpu, 1);
	CHECK_INT(r.sector, 13095760);
	CHECK_INT(r.nr_sector, 48);
	CHECK_INT(r.has_error, 1);
	CHECK_INT(r.error, 0);
	CHECK_INT(r.bytes, 0);
}

void test_iotrace__flush_lines(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("    kworker/1:1H-54      [001] .....  1969.419068: "
			"block_rq_issue: 254,0 FF 0 () 0 + 0 none,0,0 "
			"[kworker/1:1H]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.op, PH_IOT_OP_FLUSH);
	CHECK_INT(r.flags, PH_IOT_F_PREFLUSH);
	CHECK_INT(r.sector, 0);
	CHECK_INT(r.nr_sector, 0);
	CHECK_INT(parse("          <idle>-0       [001] .Ns1.  1969.419218: "
			"block_rq_complete: 254,0 FF () 18446744073709551615 "
			"+ 0 none,0,0 [0]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK(r.sector == UINT64_MAX);
	CHECK_INT(r.op, PH_IOT_OP_FLUSH);
}

void test_iotrace__old_android_format(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	/* 4-character flags, pid width 5, no ioprio, a comm with dashes */
	CHECK_INT(parse(" pool-2-thread-3-2145  [000] d..1 958956.304658: "
			"block_rq_issue: 8,0 R 4096 () 97045376 + 8 "
			"[pool-2-thread-3]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.pid, 2145);
	CHECK_INT(r.ts_ns, 958956304658000);
	CHECK_INT(ph_iot_dev_major(r.dev), 8);
	CHECK_INT(r.op, PH_IOT_OP_READ);
	CHECK_INT(r.flags, 0);
	CHECK_INT(r.comm_len, 15);
	CHECK(!memcmp(r.comm, "pool-2-thread-3", 15));
	CHECK_INT(parse(" Binder:25523_1F-22894 [001] ..s. 958957.303222: "
			"block_rq_complete: 8,0 R () 97045384 + 8 [0]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.pid, 22894);
	CHECK_INT(r.cpu, 1);
	CHECK_INT(r.sector, 97045384);
}

void test_iotrace__tgid_column(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("             cc1-8182    (   8180) [001] .....   "
			"836.438729: block_rq_issue: 254,0 RA 4096 () 13698344 "
			"+ 8 be,0,4 [cc1]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.pid, 8182);
	CHECK_INT(r.tgid, 8180);
	CHECK_INT(r.ts_ns, 836438729000);
	CHECK_INT(parse("          <idle>-0       (-------) [001] d..1.   "
			"836.438953: block_rq_complete: 254,0 RA () 13698344 + "
			"8 be,0,4 [0]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.tgid, -1);
	/* Android's 5-wide tgid */
	CHECK_INT(parse("           <...>-10176 (-----) [005] d..1 "
			"958955.762700: block_rq_issue: 8,0 W 4096 () 8 + 8 "
			"[atrace]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.pid, 10176);
	CHECK_INT(r.tgid, -1);
}

/*
 * The fast path reads kernel layouts at fixed offsets; the general path
 * reads anything.  The same line, laid out both ways, must say the same.
 */
void test_iotrace__fast_and_general_header_agree(void)
{
	static const char *const pairs[][2] = {
		{ "      capture.sh-16188   [000] .....  1969.415749: "
		  "block_rq_issue: 254,0 WS 4096 () 8 + 8 be,0,4 [dd]",
		  "capture.sh-16188 [000] ..... 1969.415749: block_rq_issue: "
		  "254,0 WS 4096 () 8 + 8 be,0,4 [dd]" },
		{ "             cc1-8182    (   8180) [001] .....   836.438729: "
		  "block_rq_complete: 254,0 RA () 9 + 8 be,0,4 [-5]",
		  "cc1-8182 (8180) [001] ..... 836.438729: block_rq_complete: "
		  "254,0 RA () 9 + 8 be,0,4 [-5]" },
		{ "  kworker/u16:22-7393  [000] d..1 958956.306670: "
		  "block_rq_issue: 8,0 R 4096 () 97045376 + 8 [kworker/u16:22]",
		  "kworker/u16:22-7393 [000] 958956.306670: block_rq_issue: "
		  "8,0 R 4096 () 97045376 + 8 [kworker/u16:22]" },
		{ "          <idle>-0       [001] ..s1. 123456.000001: "
		  "block_rq_complete: 254,0 W () 1 + 8 be,0,4 [0]",
		  "<idle>-0 [001] ..s1. 123456.000001: block_rq_complete: "
		  "254,0 W () 1 + 8 be,0,4 [0]" },
	};

	for (size_t i = 0; i < PH_ARRAY_SIZE(pairs); i++) {
		struct ph_iot_rec a, b;
		enum ph_iot_bad why;

		CHECK_INT(parse(pairs[i][0], &a, &why), PH_IOT_LINE_BLOCK);
		CHECK_INT(parse(pairs[i][1], &b, &why), PH_IOT_LINE_BLOCK);
		CHECK_INT(a.ts_ns, b.ts_ns);
		CHECK_INT(a.pid, b.pid);
		CHECK_INT(a.tgid, b.tgid);
		CHECK_INT(a.cpu, b.cpu);
		CHECK_INT(a.sector, b.sector);
		CHECK_INT(a.error, b.error);
	}
}

/* Whether the two paths say the same of line[0..n). */
static bool paths_agree(const char *line, size_t n)
{
	struct ph_iot_rec a, b;
	enum ph_iot_bad wa = PH_IOT_BAD_COUNT, wb = PH_IOT_BAD_COUNT;
	enum ph_iot_line ka, kb;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ka = ph_iot_parse_line(line, n, &a, &wa);
	kb = ph_iot_parse_line_general(line, n, &b, &wb);
	if (ka != kb)
		return false;
	if (ka == PH_IOT_LINE_MALFORMED)
		return wa == wb;
	if (ka != PH_IOT_LINE_BLOCK && ka != PH_IOT_LINE_OTHER)
		return true;
	if (a.ts_ns != b.ts_ns || a.pid != b.pid || a.tgid != b.tgid ||
	    a.cpu != b.cpu)
		return false;
	return ka == PH_IOT_LINE_OTHER ||
	       (a.event == b.event && a.sector == b.sector &&
		a.nr_sector == b.nr_sector && a.dev == b.dev &&
		a.bytes == b.bytes && a.op == b.op && a.flags == b.flags &&
		a.unknown_rwbs == b.unknown_rwbs &&
		a.has_error == b.has_error && a.error == b.error &&
		a.comm_len == b.comm_len &&
		!memcmp(a.comm, b.comm, a.comm_len));
}

/*
 * The fast path (the line classified into bit masks, fields read at the
 * kernel's fixed offsets) and the general reader agree on every layout the
 * kernel prints and on every one-byte change to them: each byte replaced
 * by one of the bytes the format is made of, deleted, or doubled.  (The
 * fuzz target checks the same on arbitrary bytes.)
 */
void test_iotrace__fast_and_general_agree_on_variants(void)
{
	static const char *const lines[] = {
		"      capture.sh-16188   [000] .....  1969.415749: "
		"block_rq_issue: 254,0 RA 16384 () 13095728 + 32 be,0,4 "
		"[capture.sh]",
		"          <idle>-0       [001] ..s1.  1969.416585: "
		"block_rq_complete: 254,0 RA () 13095760 + 48 be,0,4 [0]",
		"    kworker/u8:0-12      [001] .....  1969.418241: "
		"block_rq_insert: 254,0 WS 32768 () 39391168 + 64 none,0,0 "
		"[kworker/u8:0]",
		"     kworker/1:1H-54      [001] ..... 101969.419218: "
		"block_rq_issue: 254,0 FWS 0 () 0 + 0 be,0,4 [kworker/1:1H]",
		"          <idle>-0       [001] d.h1. 12345678.419219: "
		"block_rq_complete: 254,0 WS () 18446744073709551615 + 0 "
		"be,0,4 [-5]",
		"             cc1-8182    (   8180) [001] .....   836.438729: "
		"block_rq_issue: 254,0 W 8192 () 5000 + 16 be,0,4 [DB worker]",
		"             cc1-8182    (-------) [001] .....   836.438729: "
		"block_rq_complete: 254,0 W () 5000 + 16 be,0,4 [0]",
		"  kworker/u16:22-7393  (-----) [000] d..1 958956.306670: "
		"block_rq_issue: 8,0 R 4096 () 97045376 + 8 [kworker/u16:22]",
		"          <idle>-0     [001] d.h2 958956.308533: "
		"block_rq_complete: 8,0 R () 97045376 + 8 [0]",
		"          <idle>-0     [001]   958956.308533: "
		"block_rq_complete: 8,0 R () 97045376 + 8",
		"            sync-1234    [003] .....  4242.000001: "
		"sched_switch: prev_comm=sync prev_pid=1234",
		" Binder:25523_1F-25600   [002] .....  1969.415749: "
		"block_rq_issue: 259,65535 DSM 1048576 () 123456789012 + 2048 "
		"rt,0,7 [Binder:25523_1F]",
		"          <idle>-0       [001] d.h1. 12345678.419219: "
		"block_rq_complete: 254,0 WFS () 8 + 0 be,0,4 [-5]",
		"      Binder:1_1-25600   [002] .....  1969.415749: "
		"block_rq_issue: 259,65535 DE 4096 () 1234567890 + 8 rt,2,7 "
		"[a ]b]",
	};
	static const char alphabet[] = " 0189:-[](),.abRWSF+_\t";
	char buf[512];

	for (size_t i = 0; i < PH_ARRAY_SIZE(lines); i++) {
		const char *l = lines[i];
		size_t n = strlen(l);

		CHECK(paths_agree(l, n));
		for (size_t at = 0; at < n; at++) {
			/* replaced */
			for (const char *c = alphabet; *c; c++) {
				memcpy(buf, l, n);
				buf[at] = *c;
				if (!paths_agree(buf, n)) {
					ph_test_fail(
						__FILE__, __LINE__,
						"line %zu, byte %zu = '%c'", i,
						at, *c);
					return;
				}
			}
			/* deleted, then doubled */
			memcpy(buf, l, at);
			memcpy(buf + at, l + at + 1, n - at - 1);
			CHECK(paths_agree(buf, n - 1));
			memcpy(buf, l, at + 1);
			memcpy(buf + at + 1, l + at, n - at);
			CHECK(paths_agree(buf, n + 1));
		}
	}
}

/* The parser's masks come from SSE2 on x86-64 and from 8-byte words
 * elsewhere; the two must be the same masks. */
void test_iotrace__classify_portable_agrees(void)
{
	static const char edges[] = "/09: 9\x1f!:;";
	char buf[64];
	uint64_t x = 88172645463325252ull;

	for (int round = 0; round < 20000; round++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			/* xorshift; bytes near the classes' edges often */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = x & 1 ? edges[(x >> 1) % (sizeof(edges) - 1)] :
					 (char)(x >> 8);
		}
		for (size_t n = 16; n <= 64; n += 1 + round % 7)
			CHECK(ph_iot_classify_agree(buf, n));
	}
}

void test_iotrace__completion_without_error_field(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("  <idle>-0     [000] d.h1  1.000001: "
			"block_rq_complete: 8,16 WS () 1024 + 8",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.has_error, 0);
	CHECK_INT(ph_iot_dev_minor(r.dev), 16);
	CHECK_INT(r.ts_ns, 1000001000);
}

void test_iotrace__completion_error_field(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("  <idle>-0     [000] d.h1  1.5: block_rq_complete: "
			"8,0 R () 64 + 8 [-5]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.has_error, 1);
	CHECK_INT(r.error, -5);
	CHECK_INT(r.ts_ns, 1500000000); /* fraction of any width */
	CHECK_INT(parse("  <idle>-0     [000] d.h1  1.5: block_rq_complete: "
			"8,0 R () 64 + 8 [-2147483648]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.error, INT32_MIN);
}

void test_iotrace__nanosecond_timestamps(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("      dd-1   [000] .....  12.123456789: "
			"block_rq_issue: 8,0 W 4096 () 1 + 8 [dd]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.ts_ns, 12123456789);
}

void test_iotrace__comm_with_spaces_and_brackets(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("      a b-c]d-77     [003] .....  5.000010: "
			"block_rq_issue: 8,0 W 512 () 1 + 1 [a b-c]d]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.pid, 77);
	CHECK_INT(r.comm_len, 7);
	CHECK(!memcmp(r.comm, "a b-c]d", 7));
	/* a comm that looks like a timestamp and an event */
	CHECK_INT(parse("  x1: y:-9     [000] .....  7.000001: "
			"block_rq_issue: 8,0 W 512 () 1 + 1 [x1: y:]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.pid, 9);
	CHECK_INT(r.ts_ns, 7000001000);
}

void test_iotrace__passthrough_cmd(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("  sg-5 [000] .... 3.000000: block_rq_issue: 8,0 N 36 "
			"(12 00 00 00 24 00) 0 + 0 [sg_inq]",
			&r, &why),
		  PH_IOT_LINE_BLOCK);
	CHECK_INT(r.op, PH_IOT_OP_NONE);
	CHECK_INT(r.bytes, 36);
}

static void expect_bad(const char *line, enum ph_iot_bad want)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why = PH_IOT_BAD_COUNT;

	if (parse(line, &r, &why) != PH_IOT_LINE_MALFORMED)
		ph_test_fail(__FILE__, __LINE__, "not malformed: %s", line);
	else if (why != want)
		ph_test_fail(__FILE__, __LINE__, "%s, not %s: %s",
			     ph_iot_bad_name(why), ph_iot_bad_name(want), line);
}

void test_iotrace__malformed_by_reason(void)
{
	expect_bad("dd-1 [000] .... 1: block_rq_issue: 8,0 W 1 () 1 + 1 [dd]",
		   PH_IOT_BAD_TIMESTAMP);
	expect_bad("dd-1 [000] .... 99999999999.1: block_rq_issue: 8,0 W 1 () "
		   "1 + 1 [dd]",
		   PH_IOT_BAD_TIMESTAMP);
	expect_bad("dd 1.5: block_rq_issue: 8,0 W 1 () 1 + 1 [dd]",
		   PH_IOT_BAD_HEADER);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8 W 1 () 1 + 1 [dd]",
		   PH_IOT_BAD_DEVICE);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 9999,0 W 1 () 1 + 1 "
		   "[dd]",
		   PH_IOT_BAD_DEVICE);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8,0 Q 1 () 1 + 1 [dd]",
		   PH_IOT_BAD_RWBS);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8,0 W x () 1 + 1 [dd]",
		   PH_IOT_BAD_BYTES);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8,0 W 1 (1 + 1 [dd]",
		   PH_IOT_BAD_CMD);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8,0 W 1 () 1 - 1 [dd]",
		   PH_IOT_BAD_SECTOR);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8,0 W 1 () "
		   "18446744073709551616 + 1 [dd]",
		   PH_IOT_BAD_SECTOR);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8,0 W 1 () 1 + 1 be,x "
		   "[dd]",
		   PH_IOT_BAD_IOPRIO);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8,0 W 1 () 1 + 1",
		   PH_IOT_BAD_COMM);
	expect_bad("dd-1 [000] .... 1.5: block_rq_issue: 8,0 W 1 () 1 + 1 "
		   "[0123456789abcdefg]",
		   PH_IOT_BAD_COMM);
	expect_bad("dd-1 [000] .... 1.5: block_rq_complete: 8,0 W () 1 + 1 [x]",
		   PH_IOT_BAD_ERROR);
	expect_bad("dd-1 [000] .... 1.5: block_rq_complete: 8,0 W () 1 + 1 [0] "
		   "junk",
		   PH_IOT_BAD_TRAILING);
}

void test_iotrace__other_and_unknown_lines(void)
{
	struct ph_iot_rec r;
	enum ph_iot_bad why;

	CHECK_INT(parse("  <...>-10176 [005] d..2 958955.762701: sched_waking: "
			"comm=kworker/5:0 pid=6371",
			&r, &why),
		  PH_IOT_LINE_OTHER);
	CHECK_INT(parse("  dd-1 [000] .... 1.5: block_rq_remap: 8,0 W 1 + 1 <- "
			"(8,1) 1",
			&r, &why),
		  PH_IOT_LINE_OTHER);
	CHECK_INT(parse("var x = 1;", &r, &why), PH_IOT_LINE_UNKNOWN);
	CHECK_INT(parse("", &r, &why), PH_IOT_LINE_UNKNOWN);
	CHECK_INT(parse("12: 34:", &r, &why), PH_IOT_LINE_UNKNOWN);
}

void test_iotrace__rwbs(void)
{
	static const struct {
		const char *s;
		int op, flags, unknown;
	} cases[] = {
		{ "R", PH_IOT_OP_READ, 0, 0 },
		{ "W", PH_IOT_OP_WRITE, 0, 0 },
		{ "WS", PH_IOT_OP_WRITE, PH_IOT_F_SYNC, 0 },
		{ "WSM", PH_IOT_OP_WRITE, PH_IOT_F_SYNC | PH_IOT_F_META, 0 },
		{ "RA", PH_IOT_OP_READ, PH_IOT_F_AHEAD, 0 },
		{ "RM", PH_IOT_OP_READ, PH_IOT_F_META, 0 },
		{ "WFS", PH_IOT_OP_WRITE, PH_IOT_F_FUA | PH_IOT_F_SYNC, 0 },
		{ "FWS", PH_IOT_OP_WRITE, PH_IOT_F_PREFLUSH | PH_IOT_F_SYNC,
		  0 },
		{ "FWFS", PH_IOT_OP_WRITE,
		  PH_IOT_F_PREFLUSH | PH_IOT_F_FUA | PH_IOT_F_SYNC, 0 },
		{ "FF", PH_IOT_OP_FLUSH, PH_IOT_F_PREFLUSH, 0 },
		{ "F", PH_IOT_OP_FLUSH, 0, 0 },
		{ "FS", PH_IOT_OP_FLUSH, PH_IOT_F_SYNC, 0 },
		{ "D", PH_IOT_OP_DISCARD, 0, 0 },
		{ "DE", PH_IOT_OP_SECURE_ERASE, 0, 0 },
		{ "DSE", PH_IOT_OP_SECURE_ERASE, PH_IOT_F_SYNC, 0 },
		{ "N", PH_IOT_OP_NONE, 0, 0 },
		{ "WB", PH_IOT_OP_WRITE, PH_IOT_F_BARRIER, 0 },
		{ "WSZ", PH_IOT_OP_WRITE, PH_IOT_F_SYNC, 1 },
	};
	uint8_t op, flags, unknown;
	char buf[64];

	for (size_t i = 0; i < PH_ARRAY_SIZE(cases); i++) {
		CHECK(ph_iot_rwbs_decode(cases[i].s, strlen(cases[i].s), &op,
					 &flags, &unknown));
		CHECK_INT(op, cases[i].op);
		CHECK_INT(flags, cases[i].flags);
		CHECK_INT(unknown, cases[i].unknown);
	}
	CHECK(!ph_iot_rwbs_decode("", 0, &op, &flags, &unknown));
	CHECK(!ph_iot_rwbs_decode("S", 1, &op, &flags, &unknown));
	ph_iot_flags_format(PH_IOT_F_PREFLUSH | PH_IOT_F_FUA | PH_IOT_F_SYNC,
			    buf);
	CHECK_STR(buf, "preflush|fua|sync");
	ph_iot_flags_format(0, buf);
	CHECK_STR(buf, "");
	CHECK_STR(ph_iot_op_name(PH_IOT_OP_SECURE_ERASE), "secure_erase");
}

/* ---- pairing ------------------------------------------------------------- */

static struct ph_iot_rec ev(int event, int64_t us, uint64_t sector, uint32_t nr,
			    const char *rwbs, int32_t pid)
{
	struct ph_iot_rec r;

	memset(&r, 0, sizeof(r));
	r.event = (uint8_t)event;
	r.ts_ns = us * 1000;
	r.sector = sector;
	r.nr_sector = nr;
	r.bytes = event == PH_IOT_EV_COMPLETE ? 0 : nr * 512;
	r.dev = 254u << 20;
	r.pid = pid;
	r.tgid = -1;
	r.cpu = 1;
	ph_iot_rwbs_decode(rwbs, strlen(rwbs), &r.op, &r.flags,
			   &r.unknown_rwbs);
	r.comm_len = 2;
	memcpy(r.comm, "dd", 2);
	return r;
}

static int feed(struct ph_iot_pairer *p, struct ph_iot_rec r,
		struct ph_iot_row *row)
{
	return ph_iot_pairer_feed(p, &r, row);
}

void test_iotrace__reissue_in_flight_is_fifo(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;

	ph_iot_pairer_init(&p);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_ISSUE, 100, 64, 8, "R", 1), &row), 0);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_ISSUE, 150, 64, 8, "R", 2), &row), 0);
	CHECK_INT(p.st.reissued_inflight, 1);
	CHECK_INT(ph_iot_pairer_inflight(&p), 2);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 400, 64, 8, "R", 0), &row),
		  1);
	CHECK_INT(row.request_id, 1); /* the oldest first */
	CHECK_INT(row.pid, 1);
	CHECK_INT(row.latency_ns, 300000);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 500, 64, 8, "R", 0), &row),
		  1);
	CHECK_INT(row.request_id, 2);
	CHECK_INT(row.pid, 2);
	CHECK_INT(row.latency_ns, 350000);
	CHECK_INT(ph_iot_pairer_inflight(&p), 0);
	ph_iot_pairer_release(&p);
}

static struct ph_iot_rec by_kworker(struct ph_iot_rec r)
{
	r.pid = 55;
	r.comm_len = 12;
	memcpy(r.comm, "kworker/1:1H", 12);
	return r;
}

/*
 * A request the device had no room for is requeued and issued again by a
 * kworker (virtio-blk under load): one request, one row, the submitter's,
 * and its issue does not stay behind to take the completion of the next
 * request to that sector (the live dd test once counted 506 writes for
 * 500, dd's reads of those sectors paired with kworker re-issues).
 */
void test_iotrace__requeued_request_makes_one_row(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;

	ph_iot_pairer_init(&p);
	feed(&p, ev(PH_IOT_EV_INSERT, 100, 64, 8, "WS", 7), &row);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_ISSUE, 110, 64, 8, "WS", 7), &row), 0);
	CHECK_INT(feed(&p,
		       by_kworker(ev(PH_IOT_EV_REQUEUE, 120, 64, 8, "WS", 55)),
		       &row),
		  0);
	CHECK_INT(ph_iot_pairer_inflight(&p), 0);
	CHECK_INT(feed(&p,
		       by_kworker(ev(PH_IOT_EV_ISSUE, 300, 64, 8, "WS", 55)),
		       &row),
		  0);
	CHECK_INT(p.st.reissued_inflight, 0);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 400, 64, 8, "WS", 0), &row),
		  1);
	CHECK_INT(row.pid, 7);
	CHECK_INT(row.comm_len, 2);
	CHECK_INT(row.op, PH_IOT_OP_WRITE);
	CHECK_INT(row.latency_ns, 100000); /* from the issue that completed */
	CHECK_INT(row.queue_ns, 200000);   /* from the insert */
	CHECK_INT(p.st.queue_paired, 1);
	CHECK_INT(ph_iot_pairer_inflight(&p), 0);
	CHECK_INT(p.inserted.count, 0);
	/* the next request to that sector is its own */
	CHECK_INT(feed(&p, ev(PH_IOT_EV_ISSUE, 500, 64, 128, "R", 8), &row), 0);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 600, 64, 128, "R", 0), &row),
		  1);
	CHECK_INT(row.pid, 8);
	CHECK_INT(row.op, PH_IOT_OP_READ);
	CHECK_INT(row.latency_ns, 100000);
	CHECK_INT(p.st.requeued, 1);
	CHECK_INT(p.st.paired, 2);
	CHECK_INT(ph_iot_pairer_inflight(&p), 0);
	ph_iot_pairer_release(&p);
}

/*
 * Requeued through the I/O scheduler, the request is inserted again (by
 * the kworker) before its next issue: still one request, the submitter's;
 * its insert was not seen, so its queue latency is unknown.  A requeue
 * whose issue was not seen changes nothing.
 */
void test_iotrace__requeued_and_inserted_again(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;

	ph_iot_pairer_init(&p);
	feed(&p, ev(PH_IOT_EV_REQUEUE, 90, 8, 8, "R", 55), &row);
	CHECK_INT(p.inserted.count, 0);
	feed(&p, ev(PH_IOT_EV_ISSUE, 110, 64, 8, "W", 7), &row);
	feed(&p, by_kworker(ev(PH_IOT_EV_REQUEUE, 120, 64, 8, "W", 55)), &row);
	feed(&p, by_kworker(ev(PH_IOT_EV_INSERT, 130, 64, 8, "W", 55)), &row);
	CHECK_INT(p.inserted.count, 1);
	feed(&p, by_kworker(ev(PH_IOT_EV_ISSUE, 300, 64, 8, "W", 55)), &row);
	CHECK_INT(p.inserted.count, 0);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 400, 64, 8, "W", 0), &row),
		  1);
	CHECK_INT(row.pid, 7);
	CHECK_INT(row.latency_ns, 100000);
	CHECK_INT(row.queue_ns, -1);
	CHECK_INT(p.st.queue_paired, 0);
	CHECK_INT(ph_iot_pairer_inflight(&p), 0);
	ph_iot_pairer_release(&p);
}

void test_iotrace__flush_pairs_with_oldest_flush(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;

	ph_iot_pairer_init(&p);
	feed(&p, ev(PH_IOT_EV_ISSUE, 10, 0, 0, "FF", 54), &row);
	feed(&p, ev(PH_IOT_EV_ISSUE, 20, 0, 0, "FF", 55), &row);
	/* the completion carries the kernel's "no sector" */
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 30, UINT64_MAX, 0, "FF", 0),
		       &row),
		  1);
	CHECK_INT(row.pid, 54);
	CHECK_INT(row.op, PH_IOT_OP_FLUSH);
	CHECK_INT(row.latency_ns, 20000);
	CHECK_INT(row.sector_known, 1);
	CHECK_INT(row.sector, 0);
	CHECK_INT(p.st.paired_flushes, 1);
	/* a zero-length write at sector 0 is not a flush */
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 31, 0, 0, "WS", 0), &row), 1);
	CHECK_INT(row.latency_ns, -1);
	CHECK_INT(p.st.unmatched, 1);
	CHECK_INT(ph_iot_pairer_inflight(&p), 1);
	ph_iot_pairer_release(&p);
}

void test_iotrace__unmatched_completion_invents_nothing(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;

	ph_iot_pairer_init(&p);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 5, 800, 16, "WS", 0), &row),
		  1);
	CHECK_INT(row.latency_ns, -1);
	CHECK_INT(row.pid, -1);
	CHECK_INT(row.tid, -1);
	CHECK_INT(row.comm_len, 0);
	CHECK_INT(row.request_id, 0);
	CHECK_INT(row.size, 8192);
	CHECK_INT(row.sector, 800);
	CHECK_INT(row.cpu, 1);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 6, UINT64_MAX, 0, "FF", 0),
		       &row),
		  1);
	CHECK_INT(row.sector_known, 0);
	ph_iot_pairer_release(&p);
}

void test_iotrace__insert_gives_queue_latency(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;
	struct ph_iot_rec is = ev(PH_IOT_EV_ISSUE, 110, 9, 8, "W", 7);

	ph_iot_pairer_init(&p);
	feed(&p, ev(PH_IOT_EV_INSERT, 100, 9, 8, "W", 7), &row);
	is.tgid = 6; /* the trace records tgids */
	feed(&p, is, &row);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 150, 9, 8, "W", 0), &row), 1);
	CHECK_INT(row.queue_ns, 10000);
	CHECK_INT(row.latency_ns, 40000);
	CHECK_INT(row.pid, 6);
	CHECK_INT(row.tid, 7);
	CHECK_INT(p.st.queue_paired, 1);
	CHECK_INT(p.inserted.count, 0);
	ph_iot_pairer_release(&p);
}

/*
 * A request inserted by the app's thread and issued by a kworker (a busy
 * queue dispatched later) is the app's: the row names who submitted it.
 */
void test_iotrace__a_request_is_its_submitters(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;
	struct ph_iot_rec in = ev(PH_IOT_EV_INSERT, 100, 9, 8, "R", 3002);
	struct ph_iot_rec is = ev(PH_IOT_EV_ISSUE, 110, 9, 8, "R", 55);

	ph_iot_pairer_init(&p);
	in.tgid = 3000;
	in.comm_len = 4;
	memcpy(in.comm, "pool", 4);
	is.tgid = 55;
	is.comm_len = 12;
	memcpy(is.comm, "kworker/0:1H", 12);
	feed(&p, in, &row);
	feed(&p, is, &row);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 150, 9, 8, "R", 0), &row), 1);
	CHECK_INT(row.pid, 3000);
	CHECK_INT(row.tid, 3002);
	CHECK_INT(row.comm_len, 4);
	CHECK(!memcmp(row.comm, "pool", 4));
	/* issued without an insert (straight to the device): the issuer */
	feed(&p, ev(PH_IOT_EV_ISSUE, 200, 20, 8, "R", 7), &row);
	CHECK_INT(feed(&p, ev(PH_IOT_EV_COMPLETE, 250, 20, 8, "R", 0), &row),
		  1);
	CHECK_INT(row.pid, 7);
	ph_iot_pairer_release(&p);
}

void test_iotrace__errors_and_negative_latency(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;
	struct ph_iot_rec c = ev(PH_IOT_EV_COMPLETE, 50, 1, 8, "R", 0);

	ph_iot_pairer_init(&p);
	feed(&p, ev(PH_IOT_EV_ISSUE, 100, 1, 8, "R", 7), &row);
	c.has_error = 1;
	c.error = -5;
	CHECK_INT(feed(&p, c, &row), 1);
	CHECK_INT(row.latency_ns, -1); /* stamped before its issue */
	CHECK_INT(row.error, -5);
	CHECK_INT(p.st.negative_latency, 1);
	CHECK_INT(p.st.errors, 1);
	CHECK_INT(p.st.error_codes[0].code, -5);
	CHECK_INT(p.st.error_codes[0].count, 1);
	ph_iot_pairer_release(&p);
}

/* The table against a model: many keys, duplicates, deletes, growth. */
void test_iotrace__pairing_table_matches_a_model(void)
{
	enum { N = 20000 };
	static uint64_t sector[N], done[N];
	struct ph_iot_pairer p;
	struct ph_iot_row row;
	uint64_t x = 88172645463325252ull, completed = 0;

	ph_iot_pairer_init(&p);
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		sector[i] = x % 3000; /* plenty of collisions */
		CHECK_INT(feed(&p, ev(PH_IOT_EV_ISSUE, i, sector[i], 8, "W", i),
			       &row),
			  0);
	}
	CHECK_INT(ph_iot_pairer_inflight(&p), N);
	/* complete in sector order; FIFO means request ids rise per sector */
	for (uint64_t s = 0; s < 3000; s++) {
		uint64_t last = 0;

		for (int i = 0; i < N; i++) {
			if (sector[i] != s)
				continue;
			CHECK_INT(feed(&p,
				       ev(PH_IOT_EV_COMPLETE, N + i, s, 8, "W",
					  0),
				       &row),
				  1);
			CHECK(row.request_id > last);
			CHECK(row.request_id == (uint64_t)i + 1);
			CHECK(!done[i]);
			done[i] = 1;
			last = row.request_id;
			completed++;
		}
	}
	CHECK_INT(completed, N);
	CHECK_INT(ph_iot_pairer_inflight(&p), 0);
	CHECK_INT(p.st.unmatched, 0);
	ph_iot_pairer_release(&p);
}

void test_iotrace__stale_issues_expire(void)
{
	struct ph_iot_pairer p;
	struct ph_iot_row row;

	ph_iot_pairer_init(&p);
	/* 70,000 issues that never complete, then one a minute later */
	for (int i = 0; i < 70000; i++)
		feed(&p, ev(PH_IOT_EV_ISSUE, i, (uint64_t)i * 8, 8, "W", 1),
		     &row);
	for (int i = 0; i < 70000; i++)
		feed(&p,
		     ev(PH_IOT_EV_ISSUE, 70 * 1000000 + i,
			(uint64_t)(1000000 + i) * 8, 8, "W", 1),
		     &row);
	CHECK(p.st.expired_issues > 0);
	CHECK(ph_iot_pairer_inflight(&p) < 140000);
	CHECK_INT(ph_iot_pairer_inflight(&p) + p.st.expired_issues, 140000);
	ph_iot_pairer_release(&p);
}

/* ---- the text reader ------------------------------------------------------
 */

struct rows {
	uint64_t n, latency_ns;
	struct ph_iot_row last;
};

static int count_rows(void *ctx, struct ph_iot_row *row)
{
	struct rows *r = ctx;

	r->n++;
	if (row->latency_ns > 0)
		r->latency_ns += (uint64_t)row->latency_ns;
	r->last = *row;
	return 0;
}

static const char trace_text[] =
	"# tracer: nop\n"
	"#\n"
	"# entries-in-buffer/entries-written: 4/9   #P:2\n"
	"#\n"
	"              dd-7     [000] .....    10.000100: block_rq_issue: "
	"8,0 WS 4096 () 8 + 8 be,0,4 [dd]\n"
	"CPU:1 [LOST 3 EVENTS]\n"
	"          <idle>-0     [001] ..s1.    10.000300: block_rq_complete: "
	"8,0 WS () 8 + 8 be,0,4 [0]\r\n"
	"\n"
	"              dd-7     [000] .....    10.000400: sched_switch: "
	"prev_comm=dd\n"
	"              dd-7     [000] .....    10.000500: block_rq_issue: "
	"8,0 WS 4096 () 16 + 8 be,0,4 [dd]";

void test_iotrace__text_reader_counts_every_line(void)
{
	struct rows r = { 0 };
	struct ph_iot_text_reader s;

	ph_iot_text_reader_init(&s, count_rows, &r);
	CHECK_INT(ph_iot_text_reader_feed(&s, trace_text,
					  sizeof(trace_text) - 1),
		  0);
	CHECK_INT(s.st.lines, 9); /* the last line waits for its end */
	CHECK_INT(ph_iot_text_reader_end_input(&s), 0);
	CHECK_INT(s.st.lines, 10);
	CHECK_INT(s.st.comments, 4);
	CHECK_INT(s.st.lost_markers, 1);
	CHECK_INT(s.st.lost_events, 3);
	CHECK_INT(s.st.header_in_buffer, 4);
	CHECK_INT(s.st.header_written, 9);
	CHECK_INT(s.st.blank, 1);
	CHECK_INT(s.st.other_events, 1);
	CHECK_INT(s.st.block[PH_IOT_EV_ISSUE], 2);
	CHECK_INT(s.st.block[PH_IOT_EV_COMPLETE], 1);
	CHECK_INT(s.st.malformed, 0);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.latency_ns, 200000);
	CHECK_INT(ph_iot_pairer_inflight(&s.pair), 1);
	CHECK_INT(s.st.first_ns, 10000100000);
	CHECK_INT(s.st.last_ns, 10000500000);
	ph_iot_text_reader_release(&s);
}

/* Any split of the input into reads gives the same result. */
void test_iotrace__text_reader_lines_split_across_feeds(void)
{
	size_t len = sizeof(trace_text) - 1;

	for (size_t step = 1; step < 40; step += 3) {
		struct rows r = { 0 };
		struct ph_iot_text_reader s;

		ph_iot_text_reader_init(&s, count_rows, &r);
		for (size_t off = 0; off < len; off += step)
			CHECK_INT(ph_iot_text_reader_feed(
					  &s, trace_text + off,
					  off + step > len ? len - off : step),
				  0);
		CHECK_INT(ph_iot_text_reader_end_input(&s), 0);
		CHECK_INT(s.st.lines, 10);
		CHECK_INT(s.st.bytes, len);
		CHECK_INT(r.n, 1);
		CHECK_INT(r.latency_ns, 200000);
		CHECK_INT(s.st.block[PH_IOT_EV_ISSUE], 2);
		ph_iot_text_reader_release(&s);
	}
}

void test_iotrace__text_reader_too_long_line(void)
{
	struct ph_iot_text_reader s;
	char *junk = malloc(PH_IOT_LINE_MAX + 10);

	CHECK(junk);
	memset(junk, 'x', PH_IOT_LINE_MAX + 10);
	ph_iot_text_reader_init(&s, NULL, NULL);
	CHECK_INT(ph_iot_text_reader_feed(&s, "abc", 3), 0);
	CHECK_INT(ph_iot_text_reader_feed(&s, junk, PH_IOT_LINE_MAX + 10), 0);
	CHECK_INT(ph_iot_text_reader_feed(&s, "\nok\n", 4), 0);
	CHECK_INT(s.st.too_long, 1);
	CHECK_INT(s.st.lines, 2);
	CHECK_INT(s.st.unknown, 1);
	ph_iot_text_reader_release(&s);
	free(junk);
}

void test_iotrace__text_reader_reads_systrace_html(void)
{
	static const char html[] =
		"<!DOCTYPE html>\n<html>\n<script>var x = 'block_rq_issue: "
		"1.5: block_rq_issue: nonsense';</script>\n"
		"  <script class=\"trace-data\" type=\"application/text\">\n"
		"# tracer: nop\n"
		" pool-2-thread-3-2145  [000] d..1 958956.304658: "
		"block_rq_issue: 8,0 R 4096 () 97045376 + 8 [pool-2-thread-3]\n"
		"          <idle>-0     [001] .ns1 958956.307021: "
		"block_rq_complete: 8,0 R () 97045376 + 8 [0]\n"
		"  </script>\n"
		"  <script class=\"trace-data\" type=\"application/text\">\n"
		"PROCESS DUMP\nUSER PID PPID\n"
		"  </script>\n</html>\n";
	struct rows r = { 0 };
	struct ph_iot_text_reader s;

	ph_iot_text_reader_init(&s, count_rows, &r);
	CHECK_INT(ph_iot_text_reader_feed(&s, html, sizeof(html) - 1), 0);
	CHECK_INT(ph_iot_text_reader_end_input(&s), 0);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.latency_ns, 2363000);
	CHECK_INT(s.st.malformed, 0);
	CHECK_INT(s.st.html, 8);
	CHECK_INT(s.st.comments, 1);
	CHECK_INT(s.st.unknown, 2);
	ph_iot_text_reader_release(&s);
}

void test_iotrace__clock_sync_marker(void)
{
	static const char t[] =
		"  <...>-10176 [005] .... 958955.762537: tracing_mark_write: "
		"trace_event_clock_sync: realtime_ts=1572597457436\n";
	int64_t off = 0;

	CHECK(ph_iot_find_clock_sync(t, sizeof(t) - 1, &off));
	CHECK_INT(off, 1572597457436000000 - 958955762537000);
	CHECK(!ph_iot_find_clock_sync("nothing", 7, &off));
}

/* ---- CSV ----------------------------------------------------------------- */

void test_iotrace__csv_fields(void)
{
	char out[128];
	size_t n;

	n = ph_iot_csv_field(out, "dd", 2);
	CHECK_INT(n, 2);
	n = ph_iot_csv_field(out, "a,b", 3);
	out[n] = '\0';
	CHECK_STR(out, "\"a,b\"");
	n = ph_iot_csv_field(out, "say \"hi\"", 8);
	out[n] = '\0';
	CHECK_STR(out, "\"say \"\"hi\"\"\"");
	n = ph_iot_csv_field(out, "a\nb", 3);
	out[n] = '\0';
	CHECK_STR(out, "\"a\nb\"");
	n = ph_iot_csv_field(out, "caf\xc3\xa9", 5); /* valid UTF-8 stays */
	out[n] = '\0';
	CHECK_STR(out, "caf\xc3\xa9");
	n = ph_iot_csv_field(out, "x\xff\xc3", 3); /* invalid: U+FFFD each */
	out[n] = '\0';
	CHECK_STR(out, "x\xef\xbf\xbd\xef\xbf\xbd");
	n = ph_iot_csv_field(out, "\xed\xa0\x80", 3); /* a surrogate */
	out[n] = '\0';
	CHECK_STR(out, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

void test_iotrace__ms_format(void)
{
	char b[32];

	b[ph_iot_fmt_ms(b, 75000)] = '\0';
	CHECK_STR(b, "0.075");
	b[ph_iot_fmt_ms(b, 1234567)] = '\0';
	CHECK_STR(b, "1.234567");
	b[ph_iot_fmt_ms(b, 2000000000)] = '\0';
	CHECK_STR(b, "2000.000");
	b[ph_iot_fmt_ms(b, 0)] = '\0';
	CHECK_STR(b, "0.000");
}

static void utc(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
}

void test_iotrace__ds_row_format(void)
{
	struct ph_iot_clock c;
	struct ph_iot_row r;
	char buf[PH_IOT_DS_ROW_MAX + 1];
	size_t n;

	utc();
	ph_iot_clock_init(&c, 1700000000000000000 - 1969000000000);
	memset(&r, 0, sizeof(r));
	r.mono_ns = 1969416059000;
	r.latency_ns = 310000;
	r.queue_ns = -1;
	r.sector = 13095728;
	r.sector_known = 1;
	r.size = 16384;
	r.request_id = 1;
	r.dev = 254u << 20;
	r.pid = 16188;
	r.tid = -1;
	r.ppid = -1;
	r.cpu = 1;
	r.op = PH_IOT_OP_READ;
	r.flags = PH_IOT_F_AHEAD;
	r.comm_len = 4;
	memcpy(r.comm, "sync", 4);
	n = ph_iot_ds_row(&c, &r, buf);
	buf[n] = '\0';
	CHECK_STR(buf, "2023-11-14 22:13:20.416059,read,16188,,sync,13095728,"
		       "16384,0.310,254:0,ahead,1,,,,,1,1969416059000\n");
	r.latency_ns = -1;
	r.pid = -1;
	r.comm_len = 0;
	r.request_id = 0;
	r.sector_known = 0;
	r.tid = 5;
	r.ppid = 4;
	r.queue_ns = 2000;
	n = ph_iot_ds_row(&c, &r, buf);
	buf[n] = '\0';
	CHECK_STR(buf, "2023-11-14 22:13:20.416059,read,,5,,,16384,,254:0,"
		       "ahead,1,4,0.002,,,,1969416059000\n");
}

void test_iotrace__clock_stamp(void)
{
	struct ph_iot_clock c;
	char b[24];

	utc();
	ph_iot_clock_init(&c, 1700000000000000000);
	ph_iot_clock_stamp(&c, 123456789, b);
	CHECK_STR(b, "20231114_221320_123");
}

void test_iotrace__sha256(void)
{
	static const uint8_t abc[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
		0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
		0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	static const uint8_t empty[4] = { 0xe3, 0xb0, 0xc4, 0x42 };
	uint8_t h[32];
	char long_in[200];

	ph_iot_sha256("abc", 3, h);
	CHECK(!memcmp(h, abc, 32));
	ph_iot_sha256("", 0, h);
	CHECK(!memcmp(h, empty, 4));
	/* 56 bytes and more: the length spills into a second block */
	memset(long_in, 'a', sizeof(long_in));
	ph_iot_sha256(long_in, 56, h);
	CHECK_INT(h[0], 0xb3);
	CHECK_INT(h[1], 0x54);
}

void test_iotrace__thousands(void)
{
	char b[32];

	CHECK_STR(ph_iot_num(0, b), "0");
	CHECK_STR(ph_iot_num(999, b), "999");
	CHECK_STR(ph_iot_num(19999, b), "19,999");
	CHECK_STR(ph_iot_num(1234567, b), "1,234,567");
}

/* ---- the fixture ----------------------------------------------------------
 */

/*
 * ftrace-block/linux-6.18-virtio-dd-fio.txt: 20,000 issues and 20,000
 * completions; the acceptance figures are 19,999 pairs (the one flush
 * included), one completion with no issue (a zero-length WS at sector 0,
 * the end of a flush sequence whose request never went through
 * block_rq_issue) and one issue still in flight at the end.
 */
void test_iotrace__fixture_linux_6_18(void)
{
	const char *f = FIXTURE("ftrace-block/linux-6.18-virtio-dd-fio.txt");
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct rows r = { 0 };
	struct ph_iot_text_reader s;

	CHECK_INT(ph_buf_read_file(&b, f), 0);
	ph_iot_text_reader_init(&s, count_rows, &r);
	CHECK_INT(ph_iot_text_reader_feed(&s, b.buf, b.len), 0);
	CHECK_INT(ph_iot_text_reader_end_input(&s), 0);
	CHECK_INT(s.st.lines, 40000);
	CHECK_INT(s.st.block[PH_IOT_EV_ISSUE], 20000);
	CHECK_INT(s.st.block[PH_IOT_EV_COMPLETE], 20000);
	CHECK_INT(s.st.malformed, 0);
	CHECK_INT(s.pair.st.paired, 19999);
	CHECK_INT(s.pair.st.paired_flushes, 1);
	CHECK_INT(s.pair.st.unmatched, 1);
	CHECK_INT(ph_iot_pairer_inflight(&s.pair), 1);
	CHECK_INT(s.pair.st.reissued_inflight, 0);
	CHECK_INT(s.pair.st.errors, 0);
	CHECK_INT(r.n, 20000);
	ph_iot_text_reader_release(&s);
	ph_buf_release(&b);
}
