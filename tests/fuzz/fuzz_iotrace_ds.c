/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_iotrace_ds: the ds CSV reader (src/iotrace/ds_read.c) on arbitrary
 * bytes, through the same buffer reader ph_iot_ds_read() uses per file.
 *
 * Checks, beyond "no crash, no read outside the input":
 *  - a rejected header or record names a byte offset inside what was
 *    rejected (a record's own bytes; the header's, or the end of the text
 *    when there was none);
 *  - the records tile the text: after the header, every byte belongs to
 *    exactly one record or blank line, in order, each record ends at a
 *    line ending (or the text's end), and rows + rejected + blank lines
 *    are all of them;
 *  - a row has what the header promised: a second, byte-at-a-time CSV
 *    splitter here finds exactly the header's number of fields in its
 *    bytes, with the same operation, device, pid, command and flags, and
 *    neither operation nor device is empty; numbers are -1 (or 0) or in
 *    range;
 *  - every row, written out again (columns in another order, every text
 *    field quoted or only where needed, as the first input byte says) and
 *    read back, gives the same records, none rejected.
 *
 * Seeds (tests/fuzz/corpus/iotrace_ds/): `porthole iotrace parse` of the
 * 6.18 fixture (its first 40 rows) and of the golden inputs, the fixture's
 * rows with the columns reversed, CRLF and a byte-order mark, and one row
 * with every value at its limit (without it, a latency that overflowed
 * int64 nanoseconds took the fuzzer more than two minutes to find).
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "iotrace/csv_out.h"
#include "iotrace/ds_read.h"

#define CHECK(c)                          \
	do {                              \
		if (!(c))                 \
			__builtin_trap(); \
	} while (0)

/* One accepted row, its strings copied into a buffer. */
struct saved {
	size_t at[5], n[5]; /* op, dev, pid_text, comm, flags in `text` */
	struct ph_iot_ds_rec rec;
};

struct rows {
	struct saved *v;
	size_t n, cap;
	struct ph_buf text;
};

static const char *rec_str(const struct ph_iot_ds_rec *r, int i, size_t *n)
{
	const char *s[5] = { r->op, r->dev, r->pid_text, r->comm, r->flags };
	size_t len[5] = { r->op_n, r->dev_n, r->pid_text_n, r->comm_n,
			  r->flags_n };

	*n = len[i];
	return s[i];
}

static void save(struct rows *rs, const struct ph_iot_ds_rec *r)
{
	struct saved *s;

	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 16;
		rs->v = realloc(rs->v, rs->cap * sizeof(*rs->v));
		CHECK(rs->v);
	}
	s = &rs->v[rs->n++];
	s->rec = *r;
	for (int i = 0; i < 5; i++) {
		size_t n;
		const char *p = rec_str(r, i, &n);

		s->at[i] = rs->text.len;
		s->n[i] = n;
		CHECK(!ph_buf_add(&rs->text, p, n));
	}
}

/* --- a second CSV splitter, for records the reader accepted ------------- */

struct model {
	size_t at[PH_IOT_DS_FIELDS_MAX + 1], n[PH_IOT_DS_FIELDS_MAX + 1];
	uint32_t nf;
	struct ph_buf val;
};

/* Byte at a time, quotes toggling: the textbook reading. */
static void model_split(struct model *m, const char *t, size_t a, size_t b)
{
	bool in_q = false;
	size_t start = 0;

	ph_buf_reset(&m->val);
	m->nf = 0;
	for (size_t i = a;; i++) {
		char c = i < b ? t[i] : '\n';

		if (in_q) {
			if (c == '"' && i + 1 < b && t[i + 1] == '"') {
				CHECK(!ph_buf_addch(&m->val, '"'));
				i++;
			} else if (c == '"') {
				in_q = false;
			} else {
				CHECK(i < b); /* an accepted row closes them */
				CHECK(!ph_buf_addch(&m->val, c));
			}
			continue;
		}
		if (c == '"') {
			in_q = true;
		} else if (c == ',' || c == '\n' || c == '\r') {
			CHECK(m->nf <= PH_IOT_DS_FIELDS_MAX);
			m->at[m->nf] = start;
			m->n[m->nf++] = m->val.len - start;
			start = m->val.len;
			if (c != ',')
				return;
		} else {
			CHECK(!ph_buf_addch(&m->val, c));
		}
	}
}

static bool same_text(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && (!an || !memcmp(a, b, an));
}

/* The header's column names, to find a column's field in the model. */
static int column(const struct model *h, const char *name)
{
	for (uint32_t i = 0; i < h->nf; i++)
		if (same_text(h->val.buf + h->at[i], h->n[i], name,
			      strlen(name)))
			return (int)i;
	return -1;
}

static void check_row(const struct ph_iot_ds_rec *r, const struct model *m,
		      const struct model *h, uint32_t n_cols)
{
	static const char *const names[5] = { "operation", "device", "pid",
					      "command", "flags" };

	CHECK(m->nf == n_cols);
	CHECK(r->op_n && r->dev_n);
	for (int i = 0; i < 5; i++) {
		int c = column(h, names[i]);
		size_t n;
		const char *s = rec_str(r, i, &n);

		if (c < 0)
			CHECK(n == 0);
		else
			CHECK(same_text(s, n, m->val.buf + m->at[c], m->n[c]));
	}
	CHECK(r->pid >= -1 && r->tid >= -1 && r->ppid >= -1 && r->cpu >= -1);
	CHECK(r->sector >= -1 && r->mono_ns >= -1);
	CHECK(r->latency_ns >= -1 && r->queue_ns >= -1);
	/* pid is the number pid_text holds, or -1 */
	if (r->pid >= 0) {
		char buf[24];
		size_t k = ph_iot_fmt_u64(buf, (uint64_t)r->pid);

		CHECK(r->pid_text_n >= k &&
		      !memcmp(r->pid_text + r->pid_text_n - k, buf, k));
	}
}

/* --- reading, with the tiling checked ------------------------------------ */

/* Blank lines in t[a, b), which must hold line endings only. */
static uint64_t blank_lines(const char *t, size_t a, size_t b)
{
	uint64_t n = 0;

	while (a < b) {
		CHECK(t[a] == '\r' || t[a] == '\n');
		a += t[a] == '\r' && a + 1 < b && t[a + 1] == '\n' ? 2 : 1;
		n++;
	}
	return n;
}

/* Reads t[0, len) fully; keeps the rows in *rs when rs is not NULL.
 * Returns the number of rejected records, or -1 for a rejected header. */
static int64_t read_all(const char *t, size_t len, struct rows *rs)
{
	struct ph_iot_ds_reader r;
	struct ph_err err = { 0 };
	struct model m = { 0 }, h = { 0 };
	uint64_t records = 0, blanks = 0, rows = 0;
	size_t prev;
	int rc = ph_iot_ds_reader_init(&r, t, len, &err);

	ph_buf_init(&m.val, PH_BUF_NO_CAP);
	ph_buf_init(&h.val, PH_BUF_NO_CAP);
	CHECK(rc == 0 || rc == PH_ECORRUPT);
	if (rc) {
		/* inside the header's bytes, or its place when empty */
		CHECK(err.code == PH_ECORRUPT && err.offset <= len);
		CHECK(r.rec_end == 0 ||
		      (err.offset >= r.rec_start && err.offset < r.rec_end));
		ph_iot_ds_reader_release(&r);
		ph_buf_release(&m.val);
		ph_buf_release(&h.val);
		return -1;
	}
	CHECK(r.rec_end > r.rec_start && r.rec_end <= len);
	CHECK(r.n_cols >= 3 && r.n_cols <= PH_IOT_DS_FIELDS_MAX);
	model_split(&h, t, r.rec_start, r.rec_end);
	CHECK(h.nf == r.n_cols);
	prev = r.rec_end;
	for (;;) {
		struct ph_iot_ds_rec rec;

		memset(&err, 0, sizeof(err));
		rc = ph_iot_ds_reader_next(&r, &rec, &err);
		CHECK(rc == 1 || rc == 0 || rc == PH_ECORRUPT);
		if (rc == 0)
			break;
		CHECK(r.rec_start >= prev && r.rec_start < r.rec_end &&
		      r.rec_end <= len);
		/* a record ends at a line ending, or where the text does */
		CHECK(r.rec_end == len || t[r.rec_end - 1] == '\n' ||
		      t[r.rec_end - 1] == '\r');
		blanks += blank_lines(t, prev, r.rec_start);
		prev = r.rec_end;
		records++;
		if (rc == PH_ECORRUPT) {
			CHECK(err.code == PH_ECORRUPT);
			CHECK(err.offset >= r.rec_start &&
			      err.offset < r.rec_end);
			continue;
		}
		rows++;
		model_split(&m, t, r.rec_start, r.rec_end);
		check_row(&rec, &m, &h, r.n_cols);
		if (rs)
			save(rs, &rec);
	}
	blanks += blank_lines(t, prev, len);
	CHECK(r.rows == rows && r.rows + r.rejected == records);
	CHECK(r.blank == blanks);
	rc = (int)r.rejected;
	ph_iot_ds_reader_release(&r);
	ph_buf_release(&m.val);
	ph_buf_release(&h.val);
	return rc;
}

/* --- writing the rows again ---------------------------------------------- */

static const char *const order[] = {
	"timestamp",
	"operation",
	"pid",
	"tid",
	"command",
	"sector",
	"size",
	"latency_ms",
	"device",
	"flags",
	"cpu_id",
	"ppid",
	"queue_latency_ms",
	"command_flags",
	"operation_code",
	"request_id",
	"mono_ns",
};
#define NCOL PH_ARRAY_SIZE(order)

static void put_text(struct ph_buf *b, const char *s, size_t n, bool always)
{
	bool q = always;

	for (size_t i = 0; i < n && !q; i++)
		q = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (q)
		CHECK(!ph_buf_addch(b, '"'));
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			CHECK(!ph_buf_addch(b, '"'));
		CHECK(!ph_buf_addch(b, s[i]));
	}
	if (q)
		CHECK(!ph_buf_addch(b, '"'));
}

static void put_int(struct ph_buf *b, int64_t v)
{
	char buf[24];

	if (v >= 0)
		CHECK(!ph_buf_add(b, buf, ph_iot_fmt_u64(buf, (uint64_t)v)));
}

static void put_u64(struct ph_buf *b, uint64_t v)
{
	char buf[24];

	CHECK(!ph_buf_add(b, buf, ph_iot_fmt_u64(buf, v)));
}

static void put_ms(struct ph_buf *b, int64_t ns)
{
	char buf[32];

	if (ns >= 0)
		CHECK(!ph_buf_add(b, buf, ph_iot_fmt_ms(buf, ns)));
}

static void put_field(struct ph_buf *b, const struct saved *s, const char *text,
		      const char *name, bool always)
{
	const struct ph_iot_ds_rec *r = &s->rec;
	static const char *const str[5] = { "operation", "device", "pid",
					    "command", "flags" };

	for (int i = 0; i < 5; i++)
		if (!strcmp(name, str[i])) {
			put_text(b, text + s->at[i], s->n[i], always);
			return;
		}
	if (!strcmp(name, "tid"))
		put_int(b, r->tid);
	else if (!strcmp(name, "sector"))
		put_int(b, r->sector);
	else if (!strcmp(name, "size"))
		put_u64(b, r->size); /* 0 for empty reads as 0 */
	else if (!strcmp(name, "latency_ms"))
		put_ms(b, r->latency_ns);
	else if (!strcmp(name, "cpu_id"))
		put_int(b, r->cpu);
	else if (!strcmp(name, "ppid"))
		put_int(b, r->ppid);
	else if (!strcmp(name, "queue_latency_ms"))
		put_ms(b, r->queue_ns);
	else if (!strcmp(name, "request_id"))
		put_u64(b, r->request_id);
	else if (!strcmp(name, "mono_ns"))
		put_int(b, r->mono_ns);
	else if (!strcmp(name, "timestamp"))
		put_text(b, "2025-01-01 00:00:00.000000", 26, always);
}

static void same_rows(const struct rows *a, const struct rows *b)
{
	CHECK(a->n == b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct ph_iot_ds_rec *x = &a->v[i].rec, *y = &b->v[i].rec;

		for (int k = 0; k < 5; k++)
			CHECK(same_text(
				a->text.buf + a->v[i].at[k], a->v[i].n[k],
				b->text.buf + b->v[i].at[k], b->v[i].n[k]));
		CHECK(x->pid == y->pid && x->tid == y->tid &&
		      x->ppid == y->ppid && x->cpu == y->cpu &&
		      x->sector == y->sector && x->size == y->size &&
		      x->latency_ns == y->latency_ns &&
		      x->queue_ns == y->queue_ns && x->mono_ns == y->mono_ns &&
		      x->request_id == y->request_id);
	}
}

static void release_rows(struct rows *rs)
{
	free(rs->v);
	ph_buf_release(&rs->text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a private copy of exactly size bytes: a read past it is caught */
	char *t = malloc(size ? size : 1);
	struct rows one = { 0 }, two = { 0 };
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	unsigned seed = size ? data[0] : 0;
	size_t perm[NCOL];
	bool always = seed & 1;

	memcpy(t, data, size);
	ph_buf_init(&one.text, PH_BUF_NO_CAP);
	ph_buf_init(&two.text, PH_BUF_NO_CAP);
	if (read_all(t, size, &one) < 0 || !one.n)
		goto out;

	/* the columns rotated by the seed, then every row */
	for (size_t i = 0; i < NCOL; i++)
		perm[i] = (i + (seed >> 1)) % NCOL;
	for (size_t i = 0; i < NCOL; i++) {
		if (i)
			CHECK(!ph_buf_addch(&out, ','));
		put_text(&out, order[perm[i]], strlen(order[perm[i]]), always);
	}
	CHECK(!ph_buf_add(&out, seed & 2 ? "\r\n" : "\n", seed & 2 ? 2 : 1));
	for (size_t r = 0; r < one.n; r++) {
		for (size_t i = 0; i < NCOL; i++) {
			if (i)
				CHECK(!ph_buf_addch(&out, ','));
			put_field(&out, &one.v[r], one.text.buf, order[perm[i]],
				  always);
		}
		CHECK(!ph_buf_addch(&out, '\n'));
	}
	CHECK(read_all(out.buf, out.len, &two) == 0);
	same_rows(&one, &two);
out:
	release_rows(&one);
	release_rows(&two);
	ph_buf_release(&out);
	free(t);
	return 0;
}
