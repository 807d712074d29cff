/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for reading ds files back (src/iotrace/ds_read.c): rows by
 * column name, what is not a row (and where it is), quoting, and the
 * milliseconds.  Each bug the fuzz target (tests/fuzz/fuzz_iotrace_ds.c)
 * or a reading of the code found has a test here.
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "iotrace/ds_read.h"
#include "iotrace/iotrace.h"
#include "iotrace/schema.h"

#include <sys/stat.h>

/* A recording directory whose ds/ holds one plain CSV file: text. */
static const char *recording(const char *text, size_t n)
{
	static char dir[512];
	char path[600];
	const char *t = ph_test_tmpdir();
	FILE *f;

	if (!t)
		return NULL;
	snprintf(dir, sizeof(dir), "%s", t);
	snprintf(path, sizeof(path), "%s/ds", dir);
	if (mkdir(path, 0700))
		return NULL;
	snprintf(path, sizeof(path), "%s/ds/ds_20250101_000000_000_0001.csv",
		 dir);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	if (fwrite(text, 1, n, f) != n) {
		fclose(f);
		return NULL;
	}
	return fclose(f) ? NULL : dir;
}

struct got {
	int rows;
	char comm[4][80000];
	size_t comm_n[4];
	int64_t latency[4];
};

static int collect(void *ctx, const struct ph_iot_ds_rec *r)
{
	struct got *g = ctx;

	if (g->rows < 4) {
		size_t n = r->comm_n < sizeof(g->comm[0]) ? r->comm_n :
							    sizeof(g->comm[0]);

		memcpy(g->comm[g->rows], r->comm, n);
		g->comm_n[g->rows] = r->comm_n;
		g->latency[g->rows] = r->latency_ns;
	}
	g->rows++;
	return 0;
}

static struct got got;

static int read_text(const char *text, struct ph_iot_ds_stats *st)
{
	const char *dir = recording(text, strlen(text));

	memset(&got, 0, sizeof(got));
	memset(st, 0, sizeof(*st));
	return dir ? ph_iot_ds_read(dir, collect, &got, st) : PH_EIO;
}

#define ROW1                                                                     \
	"2025-01-01 00:00:00.000001,write,10,,dd,8,4096,0.075,254:0,sync,0,,,,," \
	"1,1000\n"
#define ROW2                                                                    \
	"2025-01-01 00:00:00.000002,read,11,,cat,16,4096,0.125,254:0,,1,,,,,2," \
	"2000\n"

/* The milliseconds of a latency must fit int64 nanoseconds: 13 digits of
 * them did not, and came back negative (neither a latency nor "empty"). */
void test_iotrace_ds__ms_overflow(void)
{
	int64_t ns = 0;

	CHECK(!ph_iot_parse_ms("9999999999999", 13, &ns));
	CHECK(!ph_iot_parse_ms("9223372036855", 13, &ns));
	CHECK(ph_iot_parse_ms("9223372036854", 13, &ns));
	CHECK_INT(ns, 9223372036854000000);
	CHECK(ph_iot_parse_ms("9223372036854.775807", 20, &ns));
	CHECK_INT(ns, INT64_MAX);
	CHECK(!ph_iot_parse_ms("9223372036854.775808", 20, &ns));
}

/* "." and "5." and ".5" are not numbers the writer makes; "." read as 0. */
void test_iotrace_ds__ms_needs_digits(void)
{
	int64_t ns = 0;

	CHECK(!ph_iot_parse_ms(".", 1, &ns));
	CHECK(!ph_iot_parse_ms("5.", 2, &ns));
	CHECK(!ph_iot_parse_ms(".5", 2, &ns));
	CHECK(!ph_iot_parse_ms("", 0, &ns));
	CHECK(ph_iot_parse_ms("0.075", 5, &ns));
	CHECK_INT(ns, 75000);
	CHECK(ph_iot_parse_ms("1.0000019", 9, &ns)); /* a 7th decimal: cut */
	CHECK_INT(ns, 1000001);
}

/* Bytes after a closing quote made the rest of the line a second record,
 * which was read as a row of shifted fields. */
void test_iotrace_ds__junk_after_quote_is_one_bad_line(void)
{
	struct ph_iot_ds_stats st;

	CHECK_INT(read_text("timestamp,operation,pid,tid,command,sector,size,"
			    "latency_ms,device,flags,cpu_id,ppid,"
			    "queue_latency_ms,command_flags,operation_code,"
			    "request_id,mono_ns\n" ROW1
			    "2025-01-01 00:00:00.000003,write,12,,\"a,b\"x,"
			    "24,4096,0.5,254:0,,0,,,,,3,3000\n" ROW2,
			    &st),
		  0);
	CHECK_INT(got.rows, 2);
	CHECK_INT(st.rows, 2);
	CHECK_INT(st.rejected, 1);
	CHECK_INT(got.latency[1], 125000);
}

/* A record with more or fewer fields than the header has them shifted
 * or missing: it is not a row. */
void test_iotrace_ds__field_count_must_match_header(void)
{
	struct ph_iot_ds_stats st;

	CHECK_INT(read_text("timestamp,operation,pid,tid,command,sector,size,"
			    "latency_ms,device,flags,cpu_id,ppid,"
			    "queue_latency_ms,command_flags,operation_code,"
			    "request_id,mono_ns\n" ROW1
			    "2025-01-01 00:00:00.000003,write,12,,a,b,24,4096,"
			    "0.5,254:0,,0,,,,,3,3000\n"
			    "2025-01-01 00:00:00.000003,write,12,,a,24,4096,"
			    "0.5,254:0,,0\n" ROW2,
			    &st),
		  0);
	CHECK_INT(got.rows, 2);
	CHECK_INT(st.rejected, 2);
}

/* operation and device are never empty in a ds row. */
void test_iotrace_ds__empty_operation_is_not_a_row(void)
{
	struct ph_iot_ds_stats st;

	CHECK_INT(read_text("timestamp,operation,pid,tid,command,sector,size,"
			    "latency_ms,device,flags,cpu_id,ppid,"
			    "queue_latency_ms,command_flags,operation_code,"
			    "request_id,mono_ns\n"
			    "2025-01-01 00:00:00.000003,,12,,a,24,4096,0.5,"
			    "254:0,,0,,,,,3,3000\n" ROW2,
			    &st),
		  0);
	CHECK_INT(got.rows, 1);
	CHECK_INT(st.rejected, 1);
}

/* A quoted field of 64 KiB or more kept only its length modulo 65536. */
void test_iotrace_ds__long_quoted_field(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_iot_ds_stats st;
	const char *dir;
	size_t n = 70000;
	int rc;

	rc = ph_buf_add(&b, ph_iot_ds_header, strlen(ph_iot_ds_header));
	rc = rc ? rc :
		  ph_buf_add(&b, "2025-01-01 00:00:00.000001,write,10,,\"", 38);
	for (size_t i = 0; i < n && !rc; i++)
		rc = ph_buf_addch(&b, i == 5 ? ',' : 'a');
	rc = rc ? rc :
		  ph_buf_add(&b, "\",8,4096,0.075,254:0,sync,0,,,,,1,1000\n",
			     39);
	CHECK_INT(rc, 0);
	dir = recording(b.buf, b.len);
	ph_buf_release(&b);
	CHECK(dir);
	memset(&got, 0, sizeof(got));
	memset(&st, 0, sizeof(st));
	CHECK_INT(ph_iot_ds_read(dir, collect, &got, &st), 0);
	CHECK_INT(got.rows, 1);
	CHECK_INT(got.comm_n[0], n);
	CHECK_INT(got.comm[0][5], ',');
	CHECK_INT(got.comm[0][n - 1], 'a');
	CHECK_INT(got.latency[0], 75000);
}

/* --- the buffer reader ---------------------------------------------------- */

#define HDR "operation,device,latency_ms,command\n"

/* What each record of text is: 'r' row, 'x' rejected (and where). */
static int outcomes(const char *text, char *out, uint64_t *offsets,
		    struct ph_iot_ds_reader *r)
{
	struct ph_err err = { 0 };
	struct ph_iot_ds_rec rec;
	int n = 0, rc;

	if ((rc = ph_iot_ds_reader_init(r, text, strlen(text), &err)))
		return rc;
	while (n < 9 && (rc = ph_iot_ds_reader_next(r, &rec, &err))) {
		if (rc != 1 && rc != PH_ECORRUPT)
			return rc;
		out[n] = rc == 1 ? 'r' : 'x';
		offsets[n++] = rc == 1 ? r->rec_start : err.offset;
	}
	out[n] = '\0';
	return 0;
}

void test_iotrace_ds__rejections_name_their_byte(void)
{
	struct ph_iot_ds_reader r;
	uint64_t at[9];
	char kinds[10];
	/* offsets:      0   36 */
	const char *t = HDR "write,8:0,0.1,dd\n"       /* 36: row */
			    "write,8:0,0.1,d\"d\n"     /* 53: quote at 68 */
			    "write,8:0,0.1,\"dd\"x\n"  /* 71: x at 89 */
			    "write,8:0,0.1\n"	       /* 91: 3 fields */
			    "write,8:0,0.1,dd,extra\n" /* 105: ',' at 121 */
			    ",8:0,0.1,dd\n"	       /* 128: no op */
			    "read,8:0,,\"a\nb\"\r\n"   /* 140: row */
			    "write,8:0,0.1,\"never closed\n"; /* 157: '"' 171 */

	CHECK_INT(outcomes(t, kinds, at, &r), 0);
	CHECK_STR(kinds, "rxxxxxrx");
	CHECK_INT(at[0], 36);
	CHECK_INT(at[1], 68);
	CHECK_INT(at[2], 89);
	CHECK_INT(at[3], 91);
	CHECK_INT(at[4], 121);
	CHECK_INT(at[5], 128);
	CHECK_INT(at[6], 140);
	CHECK_INT(at[7], 171);
	CHECK_INT(r.rows, 2);
	CHECK_INT(r.rejected, 6);
	CHECK_INT(r.rec_end, strlen(t)); /* the unclosed quote took the rest */
	ph_iot_ds_reader_release(&r);
}

/* Blank lines in any ending are counted, not rows or rejections; a
 * quoted line break is inside its field. */
void test_iotrace_ds__line_endings_and_blank_lines(void)
{
	struct ph_iot_ds_reader r;
	struct ph_iot_ds_rec rec;
	struct ph_err err;
	const char *t = "operation,device,latency_ms,command\r\n"
			"\r\n"
			"read,8:0,0.5,\"x,\r\ny\"\r"
			"\r\n\n\r" /* after the row's "\r": three blank lines */
			"write,8:0,,z";

	CHECK_INT(ph_iot_ds_reader_init(&r, t, strlen(t), &err), 0);
	CHECK_INT(ph_iot_ds_reader_next(&r, &rec, &err), 1);
	CHECK_INT(rec.comm_n, 5);
	CHECK(!memcmp(rec.comm, "x,\r\ny", 5));
	CHECK_INT(rec.latency_ns, 500000);
	CHECK_INT(ph_iot_ds_reader_next(&r, &rec, &err), 1);
	CHECK_INT(rec.op_n, 5);
	CHECK_INT(rec.latency_ns, -1);
	CHECK_INT(ph_iot_ds_reader_next(&r, &rec, &err), 0);
	CHECK_INT(r.blank, 4);
	CHECK_INT(r.rows, 2);
	CHECK_INT(r.rejected, 0);
	ph_iot_ds_reader_release(&r);
}

void test_iotrace_ds__headers_it_refuses(void)
{
	static const struct {
		const char *text;
		uint64_t offset;
	} bad[] = {
		{ "", 0 },
		{ "\nop", 0 },
		{ "\xef\xbb\xbf", 3 },
		{ "operation,device\n", 0 },
		{ "operation,device,latency_ms,device\n", 28 },
		{ "operation,\"dev\"ice,latency_ms\n", 15 },
		{ "operation,device,latency_ms,\"x\n", 28 },
	};
	struct ph_iot_ds_reader r;
	struct ph_err err;

	for (size_t i = 0; i < PH_ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		CHECK_INT(ph_iot_ds_reader_init(&r, bad[i].text,
						strlen(bad[i].text), &err),
			  PH_ECORRUPT);
		CHECK_INT(err.offset, bad[i].offset);
		ph_iot_ds_reader_release(&r);
	}
}

/* More columns than the reader keeps: refused at the first one past. */
void test_iotrace_ds__too_many_columns(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_iot_ds_reader r;
	struct ph_err err;
	size_t comma = 0;
	int rc = ph_buf_add(&b, "operation,device,latency_ms", 27);

	for (int i = 3; i <= PH_IOT_DS_FIELDS_MAX && !rc; i++) {
		if (i == PH_IOT_DS_FIELDS_MAX)
			comma = b.len;
		rc = ph_buf_add(&b, ",c", 2);
	}
	CHECK_INT(rc, 0);
	CHECK_INT(ph_iot_ds_reader_init(&r, b.buf, b.len, &err), PH_ECORRUPT);
	CHECK_INT(err.offset, comma);
	ph_iot_ds_reader_release(&r);
	ph_buf_release(&b);
}

/* Columns by name, in any order, with a byte-order mark and quoted
 * names; columns it does not read are carried and ignored. */
void test_iotrace_ds__columns_by_name(void)
{
	struct ph_iot_ds_reader r;
	struct ph_iot_ds_rec rec;
	struct ph_err err;
	const char *t = "\xef\xbb\xbf"
			"mono_ns,\"device\",extra,latency_ms,pid,operation,"
			"request_id,size,sector\n"
			"123,259:3,?,1.5,42,discard,7,4096,\n";

	CHECK_INT(ph_iot_ds_reader_init(&r, t, strlen(t), &err), 0);
	CHECK_INT(ph_iot_ds_reader_next(&r, &rec, &err), 1);
	CHECK_INT(rec.mono_ns, 123);
	CHECK_INT(rec.dev_n, 5);
	CHECK(!memcmp(rec.dev, "259:3", 5));
	CHECK_INT(rec.latency_ns, 1500000);
	CHECK_INT(rec.pid, 42);
	CHECK_INT(rec.tid, -1);
	CHECK_INT(rec.request_id, 7);
	CHECK_INT(rec.size, 4096);
	CHECK_INT(rec.sector, -1);
	CHECK_INT(rec.queue_ns, -1);
	CHECK_INT(rec.comm_n, 0);
	ph_iot_ds_reader_release(&r);
}

/* `summary` says how many records it skipped (stderr says where). */
void test_iotrace_ds__summary_counts_what_it_skipped(void)
{
	const char *dir = recording(HDR "write,8:0,0.1,dd\n"
					"write,8:0\n"
					"read,8:0,0.2,cat\n",
				    strlen(HDR) + 17 + 10 + 17);
	char out[8192];
	size_t n;
	FILE *f;

	CHECK(dir);
	f = fmemopen(out, sizeof(out) - 1, "w");
	CHECK(f);
	CHECK_INT(ph_iot_summary(dir, f, false), 0);
	n = (size_t)ftell(f);
	fclose(f);
	out[n] = '\0';
	CHECK(strstr(out, "  requests   2 rows in 1 ds file"));
	CHECK(strstr(out, "  skipped    1 ds record is not a row"));
}
