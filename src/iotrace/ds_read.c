/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ds_read.c: a recording's ds rows (one per completed block request;
 * ds_read.h says why "ds"), read back by column name.
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "ph_log.h"
#include "iotrace/ds_read.h"
#include "iotrace/iotrace.h"

#include <dirent.h>

static bool field_u64(const struct ph_iot_ds_field *f, const char *v,
		      uint64_t *out)
{
	uint64_t x = 0;

	if (!f || !f->n || f->n > 19)
		return false;
	for (size_t i = 0; i < f->n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return true;
}

bool ph_iot_parse_ms(const char *s, size_t n, int64_t *ns)
{
	/* the most whole milliseconds whose nanoseconds fit int64_t */
	const uint64_t max_whole = (uint64_t)INT64_MAX / 1000000;
	uint64_t whole = 0, frac = 0, v;
	size_t i = 0, d = 0;

	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (i == 13)
			return false; /* past max_whole's 13 digits */
		whole = whole * 10 + (uint64_t)(s[i] - '0');
	}
	if (!i || whole > max_whole)
		return false;
	if (i < n && s[i] == '.') {
		size_t dot = i;

		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (d < 6) {
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				d++;
			}
		if (i == dot + 1)
			return false; /* "5." */
	}
	if (i != n)
		return false;
	while (d++ < 6)
		frac *= 10;
	v = whole * 1000000 + frac;
	if (v > (uint64_t)INT64_MAX)
		return false;
	*ns = (int64_t)v;
	return true;
}

/* --- records ------------------------------------------------------------- */

static bool line_end(char c)
{
	return c == '\n' || c == '\r';
}

/* The first ',', '\r' or '\n' at or after p, or e. */
static size_t unquoted_end(const char *t, size_t p, size_t e)
{
	while (p < e && t[p] != ',' && !line_end(t[p]))
		p++;
	return p;
}

/* Records the first thing wrong with a record; later ones are not. */
#define BAD(off, ...)                                                       \
	(rc ? rc :                                                          \
	      (rc = ph_corrupt(err, PH_ECORRUPT, (uint64_t)(off), __FILE__, \
			       __LINE__, __VA_ARGS__)))

/*
 * Splits the record at r->pos into fields: the first `keep` into r->f
 * (quoted ones unescaped into r->scratch), all of them counted in r->nf;
 * *extra is the offset of the ',' before field keep + 1.  The record ends
 * at the first line ending outside quotes (or the end of the text), which
 * is taken with it, whatever was wrong inside: returns 0, PH_ECORRUPT with
 * err on the first thing wrong, or PH_ENOMEM.
 */
static int split(struct ph_iot_ds_reader *r, uint32_t keep, size_t *extra,
		 struct ph_err *err)
{
	const char *t = r->text;
	size_t p = r->pos, e = r->len;
	uint32_t n = 0;
	int rc = 0;

	ph_buf_reset(&r->scratch);
	r->rec_start = p;
	for (;;) {
		struct ph_iot_ds_field fld = { p, p, 0, false };

		if (p < e && t[p] == '"') {
			bool closed = false;

			fld.quoted = true;
			fld.at = r->scratch.len;
			for (p++; p < e;) {
				const char *q = memchr(t + p, '"', e - p);
				size_t stop = q ? (size_t)(q - t) : e;

				if (ph_buf_add(&r->scratch, t + p, stop - p))
					return PH_ENOMEM;
				p = stop;
				if (p == e)
					break;
				if (p + 1 < e && t[p + 1] == '"') {
					if (ph_buf_addch(&r->scratch, '"'))
						return PH_ENOMEM;
					p += 2;
					continue;
				}
				p++;
				closed = true;
				break;
			}
			fld.n = r->scratch.len - fld.at;
			if (!closed) {
				BAD(fld.off, "a quote that is never closed");
			} else if (p < e && t[p] != ',' && !line_end(t[p])) {
				BAD(p, "a byte after a closing quote");
				p = unquoted_end(t, p, e);
			}
		} else {
			size_t stop = unquoted_end(t, p, e);
			const char *q = memchr(t + p, '"', stop - p);

			if (q)
				BAD(q - t, "a quote inside an unquoted field");
			fld.n = stop - p;
			p = stop;
		}
		if (n < keep)
			r->f[n] = fld;
		if (n < UINT32_MAX) /* only "more than the header" matters */
			n++;
		if (p < e && t[p] == ',') {
			if (n == keep)
				*extra = p;
			p++;
			continue;
		}
		break;
	}
	if (p < e && t[p] == '\r')
		p++;
	if (p < e && t[p] == '\n')
		p++;
	r->nf = n;
	r->pos = r->rec_end = p;
	return rc;
}

/* Field i of the record last split: its value. */
static const char *value(const struct ph_iot_ds_reader *r, uint32_t i)
{
	return (r->f[i].quoted ? r->scratch.buf : r->text) + r->f[i].at;
}

enum {
	C_OPERATION,
	C_PID,
	C_TID,
	C_COMMAND,
	C_SECTOR,
	C_SIZE,
	C_LATENCY,
	C_DEVICE,
	C_FLAGS,
	C_CPU,
	C_PPID,
	C_QUEUE,
	C_REQUEST,
	C_MONO,
	C_COUNT
};

static const char *const wanted[C_COUNT] = {
	"operation",  "pid",	 "tid",	       "command",
	"sector",     "size",	 "latency_ms", "device",
	"flags",      "cpu_id",	 "ppid",       "queue_latency_ms",
	"request_id", "mono_ns",
};

_Static_assert(C_COUNT == PH_IOT_DS_COLS, "ds_read.h's column count");

int ph_iot_ds_reader_init(struct ph_iot_ds_reader *r, const char *text,
			  size_t len, struct ph_err *err)
{
	size_t extra = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	ph_buf_init(&r->scratch, PH_BUF_NO_CAP);
	r->text = text;
	r->len = len;
	for (int c = 0; c < C_COUNT; c++)
		r->col[c] = -1;
	/* a byte-order mark, as Windows tools write one */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		r->pos = 3;
	if (r->pos == len || line_end(text[r->pos]))
		return PH_CORRUPT(err, r->pos,
				  "no header: the first line is "
				  "empty");
	rc = split(r, PH_IOT_DS_FIELDS_MAX, &extra, err);
	if (rc)
		return rc;
	if (r->nf > PH_IOT_DS_FIELDS_MAX)
		return PH_CORRUPT(err, extra,
				  "a header of %u columns: at most %d are "
				  "read",
				  r->nf, PH_IOT_DS_FIELDS_MAX);
	r->n_cols = r->nf;
	for (uint32_t i = 0; i < r->nf; i++)
		for (int c = 0; c < C_COUNT; c++) {
			if (r->f[i].n != strlen(wanted[c]) ||
			    memcmp(value(r, i), wanted[c], r->f[i].n))
				continue;
			if (r->col[c] >= 0)
				return PH_CORRUPT(err, r->f[i].off,
						  "column %s twice in the "
						  "header",
						  wanted[c]);
			r->col[c] = (int)i;
		}
	if (r->col[C_OPERATION] < 0 || r->col[C_DEVICE] < 0 ||
	    r->col[C_LATENCY] < 0)
		return PH_CORRUPT(err, r->rec_start,
				  "not a ds header: no %s column",
				  r->col[C_OPERATION] < 0 ? "operation" :
				  r->col[C_DEVICE] < 0	  ? "device" :
							    "latency_ms");
	return 0;
}

/* Column c's field of the record last split, or NULL when absent. */
static const struct ph_iot_ds_field *col_of(const struct ph_iot_ds_reader *r,
					    int c, const char **v)
{
	if (r->col[c] < 0)
		return NULL;
	*v = value(r, (uint32_t)r->col[c]);
	return &r->f[r->col[c]];
}

/* A non-negative integer that fits int64_t, or -1. */
static int64_t col_i64(const struct ph_iot_ds_reader *r, int c)
{
	const char *v = NULL;
	const struct ph_iot_ds_field *f = col_of(r, c, &v);
	uint64_t x;

	return field_u64(f, v, &x) && x <= INT64_MAX ? (int64_t)x : -1;
}

static uint64_t col_u64(const struct ph_iot_ds_reader *r, int c)
{
	const char *v = NULL;
	const struct ph_iot_ds_field *f = col_of(r, c, &v);
	uint64_t x;

	return field_u64(f, v, &x) ? x : 0;
}

static int64_t col_ms(const struct ph_iot_ds_reader *r, int c)
{
	const char *v = NULL;
	const struct ph_iot_ds_field *f = col_of(r, c, &v);
	int64_t ns;

	return f && ph_iot_parse_ms(v, f->n, &ns) ? ns : -1;
}

static void col_text(const struct ph_iot_ds_reader *r, int c, const char **s,
		     size_t *n)
{
	const struct ph_iot_ds_field *f = col_of(r, c, s);

	if (!f) {
		*s = "";
		*n = 0;
	} else {
		*n = f->n;
	}
}

int ph_iot_ds_reader_next(struct ph_iot_ds_reader *r, struct ph_iot_ds_rec *rec,
			  struct ph_err *err)
{
	size_t extra = 0;
	int rc;

	/* blank lines: "\r\n", "\n" or "\r" with nothing before it */
	while (r->pos < r->len && line_end(r->text[r->pos])) {
		r->pos += r->text[r->pos] == '\r' && r->pos + 1 < r->len &&
					  r->text[r->pos + 1] == '\n' ?
				  2 :
				  1;
		r->blank++;
	}
	if (r->pos >= r->len)
		return 0;
	rc = split(r, r->n_cols, &extra, err);
	if (!rc && r->nf > r->n_cols)
		rc = PH_CORRUPT(err, extra, "%u fields: the header has %u",
				r->nf, r->n_cols);
	if (!rc && r->nf < r->n_cols)
		rc = PH_CORRUPT(err, r->rec_start,
				"%u fields: the header has %u", r->nf,
				r->n_cols);
	if (!rc && !r->f[r->col[C_OPERATION]].n)
		rc = PH_CORRUPT(err, r->f[r->col[C_OPERATION]].off,
				"no operation");
	if (!rc && !r->f[r->col[C_DEVICE]].n)
		rc = PH_CORRUPT(err, r->f[r->col[C_DEVICE]].off, "no device");
	if (rc) {
		if (rc == PH_ECORRUPT)
			r->rejected++;
		return rc;
	}
	memset(rec, 0, sizeof(*rec));
	col_text(r, C_OPERATION, &rec->op, &rec->op_n);
	col_text(r, C_DEVICE, &rec->dev, &rec->dev_n);
	col_text(r, C_PID, &rec->pid_text, &rec->pid_text_n);
	col_text(r, C_COMMAND, &rec->comm, &rec->comm_n);
	col_text(r, C_FLAGS, &rec->flags, &rec->flags_n);
	rec->pid = col_i64(r, C_PID);
	rec->tid = col_i64(r, C_TID);
	rec->ppid = col_i64(r, C_PPID);
	rec->cpu = col_i64(r, C_CPU);
	rec->sector = col_i64(r, C_SECTOR);
	rec->mono_ns = col_i64(r, C_MONO);
	rec->size = col_u64(r, C_SIZE);
	rec->request_id = col_u64(r, C_REQUEST);
	rec->latency_ns = col_ms(r, C_LATENCY);
	rec->queue_ns = col_ms(r, C_QUEUE);
	r->rows++;
	return 1;
}

void ph_iot_ds_reader_release(struct ph_iot_ds_reader *r)
{
	ph_buf_release(&r->scratch);
}

/* --- files --------------------------------------------------------------- */

static int read_file(const char *path,
		     int (*fn)(void *, const struct ph_iot_ds_rec *), void *ctx,
		     struct ph_iot_ds_stats *st)
{
	struct ph_buf data = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_iot_ds_reader r;
	struct ph_err err = { 0 }, first = { 0 };
	char why[256];
	int rc = ph_iot_read_file(path, &data);

	if (rc) {
		ph_buf_release(&data);
		return rc;
	}
	rc = ph_iot_ds_reader_init(&r, data.buf, data.len, &err);
	if (rc == PH_ECORRUPT) {
		rc = ph_error(PH_ECORRUPT, "%s: not a ds file: %s", path,
			      ph_err_format(&err, why, sizeof(why)));
		goto out;
	}
	if (rc)
		goto out;
	st->files++;
	for (;;) {
		struct ph_iot_ds_rec rec;

		rc = ph_iot_ds_reader_next(&r, &rec, &err);
		if (rc == PH_ECORRUPT) {
			if (r.rejected == 1)
				first = err;
			continue;
		}
		if (rc <= 0)
			break;
		st->rows++;
		if ((rc = fn(ctx, &rec)))
			break;
	}
	if (r.rejected)
		ph_warn("%s: %" PRIu64 " %s, skipped; the first: "
			"%s",
			path, r.rejected,
			r.rejected == 1 ? "record is not a ds row" :
					  "records are not ds rows",
			ph_err_format(&first, why, sizeof(why)));
	st->rejected += r.rejected;
	st->blank += r.blank;
out:
	ph_iot_ds_reader_release(&r);
	ph_buf_release(&data);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ds_name(const char *n)
{
	size_t len = strlen(n);

	if (strncmp(n, "ds_", 3))
		return false;
	return (len > 7 && !strcmp(n + len - 7, ".csv.gz")) ||
	       (len > 8 && !strcmp(n + len - 8, ".csv.zst")) ||
	       (len > 4 && !strcmp(n + len - 4, ".csv"));
}

int ph_iot_ds_read(const char *dir,
		   int (*fn)(void *ctx, const struct ph_iot_ds_rec *rec),
		   void *ctx, struct ph_iot_ds_stats *st)
{
	char path[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dp;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/ds", dir);
	dp = opendir(path);
	if (!dp)
		return ph_error(PH_ENOENT, "%s: %s", path, strerror(errno));
	while ((d = readdir(dp))) {
		if (!ds_name(d->d_name))
			continue;
		if (n == cap && PH_GROW(names, cap, n + 1, 16)) {
			rc = PH_ENOMEM;
			break;
		}
		names[n] = strdup(d->d_name);
		if (!names[n]) {
			rc = PH_ENOMEM;
			break;
		}
		n++;
	}
	closedir(dp);
	if (!rc && n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && !rc; i++) {
		char file[PATH_MAX + 256];

		snprintf(file, sizeof(file), "%s/ds/%s", dir, names[i]);
		rc = read_file(file, fn, ctx, st);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}
