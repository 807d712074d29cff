/*
 * ds_read.c: a recording's ds rows, read back by column name.
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "iotrace/ds_read.h"
#include "iotrace/iotrace.h"

#include <dirent.h>

#define MAX_FIELDS 32

struct field {
	const char *s;
	size_t n;
};

/*
 * Splits one CSV record at p into fields (quoted ones unescaped into
 * scratch); returns the byte after it, or NULL when out of memory.
 */
static const char *csv_record(const char *p, const char *e, struct field *f,
			      size_t *nf, struct ph_buf *scratch)
{
	size_t n = 0;

	ph_buf_reset(scratch);
	for (;;) {
		const char *start = p;

		if (p < e && *p == '"') {
			size_t at = scratch->len;

			for (p++; p < e; p++) {
				if (*p == '"') {
					if (p + 1 < e && p[1] == '"') {
						p++;
					} else {
						p++;
						break;
					}
				}
				if (ph_buf_addch(scratch, *p))
					return NULL;
			}
			if (n < MAX_FIELDS) {
				/* scratch may move while growing: keep the
				 * offset, made a pointer at the end */
				f[n].s = NULL;
				f[n].n = at << 16 | (scratch->len - at);
			}
		} else {
			while (p < e && *p != ',' && *p != '\n' && *p != '\r')
				p++;
			if (n < MAX_FIELDS) {
				f[n].s = start;
				f[n].n = (size_t)(p - start);
			}
		}
		n++;
		if (p < e && *p == ',') {
			p++;
			continue;
		}
		break;
	}
	while (p < e && (*p == '\r' || *p == '\n'))
		p++;
	for (size_t i = 0; i < n && i < MAX_FIELDS; i++)
		if (!f[i].s) {
			f[i].s = scratch->buf + (f[i].n >> 16);
			f[i].n &= 0xffff;
		}
	*nf = n < MAX_FIELDS ? n : MAX_FIELDS;
	return p;
}

static bool field_u64(const struct field *f, uint64_t *v)
{
	uint64_t x = 0;

	if (!f || !f->n || f->n > 19)
		return false;
	for (size_t i = 0; i < f->n; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(f->s[i] - '0');
	}
	*v = x;
	return true;
}

/* A non-negative integer that fits int64_t, or -1. */
static int64_t field_i64(const struct field *f)
{
	uint64_t v;

	return field_u64(f, &v) && v <= INT64_MAX ? (int64_t)v : -1;
}

bool ph_iot_parse_ms(const char *s, size_t n, int64_t *ns)
{
	uint64_t whole = 0, frac = 0;
	size_t i = 0, d = 0;

	if (!n)
		return false;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (i > 12)
			return false;
		whole = whole * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (d < 6) {
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				d++;
			}
	}
	if (i != n)
		return false;
	while (d++ < 6)
		frac *= 10;
	*ns = (int64_t)(whole * 1000000 + frac);
	return true;
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

/* The field of column c in this record, or NULL when absent. */
static const struct field *col_of(const int *col, int c, const struct field *f,
				  size_t nf)
{
	return col[c] >= 0 && (size_t)col[c] < nf ? &f[col[c]] : NULL;
}

static int read_file(const char *path,
		     int (*fn)(void *, const struct ph_iot_ds_rec *), void *ctx,
		     struct ph_iot_ds_stats *st)
{
	struct ph_buf data = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf scratch = PH_BUF_INIT(1 << 16);
	struct field f[MAX_FIELDS];
	int col[C_COUNT];
	const char *p, *e;
	size_t nf;
	int rc = ph_iot_read_file(path, &data);

	if (rc)
		goto out;
	p = data.buf;
	e = data.buf + data.len;
	p = csv_record(p, e, f, &nf, &scratch);
	for (int c = 0; c < C_COUNT; c++) {
		col[c] = -1;
		for (size_t i = 0; p && i < nf; i++)
			if (f[i].n == strlen(wanted[c]) &&
			    !memcmp(f[i].s, wanted[c], f[i].n))
				col[c] = (int)i;
	}
	if (!p || col[C_OPERATION] < 0 || col[C_DEVICE] < 0 ||
	    col[C_LATENCY] < 0) {
		rc = ph_error(PH_ECORRUPT, "%s: not a ds file (header)", path);
		goto out;
	}
	st->files++;
	while (p && p < e) {
		struct ph_iot_ds_rec r = { 0 };
		const struct field *v;

		p = csv_record(p, e, f, &nf, &scratch);
		if (!p) {
			rc = PH_ENOMEM;
			goto out;
		}
		if (nf <= (size_t)col[C_LATENCY] ||
		    nf <= (size_t)col[C_OPERATION] ||
		    nf <= (size_t)col[C_DEVICE])
			continue; /* a short line: not a row */
		r.op = f[col[C_OPERATION]].s;
		r.op_n = f[col[C_OPERATION]].n;
		r.dev = f[col[C_DEVICE]].s;
		r.dev_n = f[col[C_DEVICE]].n;
		v = col_of(col, C_PID, f, nf);
		r.pid_text = v ? v->s : "";
		r.pid_text_n = v ? v->n : 0;
		r.pid = field_i64(v);
		v = col_of(col, C_COMMAND, f, nf);
		r.comm = v ? v->s : "";
		r.comm_n = v ? v->n : 0;
		v = col_of(col, C_FLAGS, f, nf);
		r.flags = v ? v->s : "";
		r.flags_n = v ? v->n : 0;
		r.tid = field_i64(col_of(col, C_TID, f, nf));
		r.ppid = field_i64(col_of(col, C_PPID, f, nf));
		r.cpu = field_i64(col_of(col, C_CPU, f, nf));
		r.sector = field_i64(col_of(col, C_SECTOR, f, nf));
		r.mono_ns = field_i64(col_of(col, C_MONO, f, nf));
		if (!field_u64(col_of(col, C_SIZE, f, nf), &r.size))
			r.size = 0;
		if (!field_u64(col_of(col, C_REQUEST, f, nf), &r.request_id))
			r.request_id = 0;
		if (!ph_iot_parse_ms(f[col[C_LATENCY]].s, f[col[C_LATENCY]].n,
				     &r.latency_ns))
			r.latency_ns = -1;
		v = col_of(col, C_QUEUE, f, nf);
		if (!v || !ph_iot_parse_ms(v->s, v->n, &r.queue_ns))
			r.queue_ns = -1;
		st->rows++;
		if ((rc = fn(ctx, &r)))
			goto out;
	}
out:
	ph_buf_release(&data);
	ph_buf_release(&scratch);
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
		if (n == cap) {
			char **nn;

			cap = cap ? cap * 2 : 16;
			nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				rc = PH_ENOMEM;
				break;
			}
			names = nn;
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
