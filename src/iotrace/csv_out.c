/* SPDX-License-Identifier: Apache-2.0 */
/*
 * csv_out.c: row formatting and the compressed, rotating CSV files.
 */
#include "ph_common.h"
#include "ph_error.h"
#include "iotrace/csv_out.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zstd.h>

/* --- clocks --------------------------------------------------------------- */

void ph_iot_clock_init(struct ph_iot_clock *c, int64_t offset_ns)
{
	c->offset_ns = offset_ns;
	c->sec = INT64_MIN;
	memset(c->text, 0, sizeof(c->text));
}

/* Epoch nanoseconds split into floor seconds and the nanoseconds after. */
static void split_ns(int64_t ns, int64_t *sec, int64_t *frac)
{
	*sec = ns / 1000000000;
	*frac = ns % 1000000000;
	if (*frac < 0) {
		*frac += 1000000000;
		*sec -= 1;
	}
}

static void local_tm(int64_t sec, struct tm *tm)
{
	time_t t = (time_t)sec;

	if (!localtime_r(&t, tm))
		memset(tm, 0, sizeof(*tm));
}

static inline void put2(char *p, int v)
{
	p[0] = (char)('0' + v / 10 % 10);
	p[1] = (char)('0' + v % 10);
}

size_t ph_iot_clock_format(struct ph_iot_clock *c, int64_t mono_ns, char *buf)
{
	int64_t sec, frac;
	int us;

	split_ns(mono_ns + c->offset_ns, &sec, &frac);
	if (sec != c->sec) {
		/* localtime_r is slow; rows of one second share the text */
		struct tm tm;
		int y;

		local_tm(sec, &tm);
		y = tm.tm_year + 1900;
		if (y < 0 || y > 9999)
			y = 0;
		put2(c->text, y / 100);
		put2(c->text + 2, y % 100);
		c->text[4] = '-';
		put2(c->text + 5, tm.tm_mon + 1);
		c->text[7] = '-';
		put2(c->text + 8, tm.tm_mday);
		c->text[10] = ' ';
		put2(c->text + 11, tm.tm_hour);
		c->text[13] = ':';
		put2(c->text + 14, tm.tm_min);
		c->text[16] = ':';
		put2(c->text + 17, tm.tm_sec);
		c->sec = sec;
	}
	memcpy(buf, c->text, 19);
	buf[19] = '.';
	us = (int)(frac / 1000);
	for (int i = 25; i >= 20; i--) {
		buf[i] = (char)('0' + us % 10);
		us /= 10;
	}
	return 26;
}

void ph_iot_clock_stamp(const struct ph_iot_clock *c, int64_t mono_ns,
			char *buf)
{
	int64_t sec, frac;
	struct tm tm;

	split_ns(mono_ns + c->offset_ns, &sec, &frac);
	local_tm(sec, &tm);
	int y = tm.tm_year + 1900, ms = (int)(frac / 1000000);

	if (y < 0 || y > 9999)
		y = 0;
	put2(buf, y / 100);
	put2(buf + 2, y % 100);
	put2(buf + 4, tm.tm_mon + 1);
	put2(buf + 6, tm.tm_mday);
	buf[8] = '_';
	put2(buf + 9, tm.tm_hour);
	put2(buf + 11, tm.tm_min);
	put2(buf + 13, tm.tm_sec);
	buf[15] = '_';
	buf[16] = (char)('0' + ms / 100);
	put2(buf + 17, ms % 100);
	buf[19] = '\0';
}

/* --- fields --------------------------------------------------------------- */

size_t ph_iot_fmt_u64(char *out, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

static size_t fmt_i64(char *out, int64_t v)
{
	if (v < 0) {
		out[0] = '-';
		return 1 + ph_iot_fmt_u64(out + 1, (uint64_t)0 - (uint64_t)v);
	}
	return ph_iot_fmt_u64(out, (uint64_t)v);
}

size_t ph_iot_fmt_ms(char *out, int64_t ns)
{
	uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t rem = u % 1000000;
	size_t n = 0;
	int digits = rem % 1000 ? 6 : 3;

	if (ns < 0)
		out[n++] = '-';
	n += ph_iot_fmt_u64(out + n, u / 1000000);
	out[n++] = '.';
	if (digits == 3)
		rem /= 1000;
	for (int i = digits - 1; i >= 0; i--) {
		out[n + (size_t)i] = (char)('0' + rem % 10);
		rem /= 10;
	}
	return n + (size_t)digits;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *p, const unsigned char *e)
{
	unsigned c = p[0];
	size_t n;
	unsigned min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if ((size_t)(e - p) < n)
		return 0;
	unsigned cp = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t ph_iot_csv_field(char *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	bool quote = false, plain = true;
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = p[i];

		if (ch == ',' || ch == '"' || ch == '\n' || ch == '\r')
			quote = true;
		if (ch >= 0x80)
			plain = false;
	}
	if (!quote && plain) {
		memcpy(out, s, n);
		return n;
	}
	if (quote)
		out[o++] = '"';
	while (p < e) {
		size_t k = utf8_len(p, e);

		if (!k) {
			memcpy(out + o, "\xef\xbf\xbd", 3); /* U+FFFD */
			o += 3;
			p++;
			continue;
		}
		if (*p == '"')
			out[o++] = '"';
		memcpy(out + o, p, k);
		o += k;
		p += k;
	}
	if (quote)
		out[o++] = '"';
	return o;
}

size_t ph_iot_ds_row(struct ph_iot_clock *c, const struct ph_iot_row *r,
		     char *buf)
{
	char *p = buf;
	const char *op = ph_iot_op_name(r->op);
	size_t k = strlen(op);

	/* timestamp,operation,pid,tid,command,sector,size,latency_ms,device,
	 * flags,cpu_id,ppid,queue_latency_ms,command_flags,operation_code,
	 * request_id,mono_ns */
	p += ph_iot_clock_format(c, r->mono_ns, p);
	*p++ = ',';
	memcpy(p, op, k);
	p += k;
	*p++ = ',';
	if (r->pid >= 0)
		p += ph_iot_fmt_u64(p, (uint64_t)r->pid);
	*p++ = ',';
	if (r->tid >= 0)
		p += ph_iot_fmt_u64(p, (uint64_t)r->tid);
	*p++ = ',';
	p += ph_iot_csv_field(p, r->comm, r->comm_len);
	*p++ = ',';
	if (r->sector_known)
		p += ph_iot_fmt_u64(p, r->sector);
	*p++ = ',';
	p += ph_iot_fmt_u64(p, r->size);
	*p++ = ',';
	if (r->latency_ns >= 0)
		p += ph_iot_fmt_ms(p, r->latency_ns);
	*p++ = ',';
	p += ph_iot_fmt_u64(p, ph_iot_dev_major(r->dev));
	*p++ = ':';
	p += ph_iot_fmt_u64(p, ph_iot_dev_minor(r->dev));
	*p++ = ',';
	p += ph_iot_flags_format(r->flags, p);
	*p++ = ',';
	p += ph_iot_fmt_u64(p, r->cpu);
	*p++ = ',';
	if (r->ppid >= 0)
		p += ph_iot_fmt_u64(p, (uint64_t)r->ppid);
	*p++ = ',';
	if (r->queue_ns >= 0)
		p += ph_iot_fmt_ms(p, r->queue_ns);
	/* command_flags and operation_code: not in ftrace's text */
	*p++ = ',';
	*p++ = ',';
	*p++ = ',';
	if (r->request_id)
		p += ph_iot_fmt_u64(p, r->request_id);
	*p++ = ',';
	p += fmt_i64(p, r->mono_ns);
	*p++ = '\n';
	return (size_t)(p - buf);
}

/* --- files ---------------------------------------------------------------- */

#define FLUSH_AT (256 * 1024)

const char *ph_iot_compression_ext(enum ph_iot_compression c)
{
	return c == PH_IOT_ZSTD ? ".csv.zst" : ".csv.gz";
}

const char *ph_iot_compression_name(enum ph_iot_compression c)
{
	return c == PH_IOT_ZSTD ? "zstd" : "gzip";
}

int ph_iot_mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(tmp))
		return ph_error(PH_EINVAL, "path too long: %s", path);
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return ph_error(PH_EIO, "mkdir %s: %s", tmp,
					strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return ph_error(PH_EIO, "mkdir %s: %s", tmp, strerror(errno));
	return 0;
}

int ph_iot_new_recording_dir(const char *path)
{
	char m[PATH_MAX + 16];

	snprintf(m, sizeof(m), "%s/manifest.json", path);
	if (!access(m, F_OK))
		return ph_error(PH_EINVAL,
				"%s already holds a recording; give another "
				"--out, or remove it first",
				path);
	return ph_iot_mkdirs(path);
}

int ph_iot_csv_init(struct ph_iot_csv *c, const char *dir, const char *prefix,
		    const char *header, const struct ph_iot_clock *clock,
		    enum ph_iot_compression compression, uint64_t rotate_bytes)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->prefix = prefix;
	c->header = header;
	c->clock = clock;
	c->compression = compression;
	c->level = compression == PH_IOT_ZSTD ? 3 : 1;
	c->rotate_bytes = rotate_bytes ? rotate_bytes : UINT64_MAX;
	ph_buf_init(&c->in, PH_BUF_NO_CAP);
	if (strlen(dir) >= sizeof(c->dir))
		return ph_error(PH_EINVAL, "path too long: %s", dir);
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	return ph_iot_mkdirs(dir);
}

static int write_all(struct ph_iot_csv *c, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = write(c->fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return ph_error(PH_EIO, "write %s.part: %s", c->path,
					strerror(errno));
		}
		p += k;
		n -= (size_t)k;
		c->bytes_out += (uint64_t)k;
	}
	return 0;
}

/* Compresses everything in c->in (and, when end, finishes the stream). */
static int pump(struct ph_iot_csv *c, bool end)
{
	int rc = 0;

	if (c->compression == PH_IOT_ZSTD) {
		ZSTD_inBuffer in = { c->in.buf, c->in.len, 0 };
		size_t left;

		do {
			ZSTD_outBuffer out = { c->out, c->out_cap, 0 };

			left = ZSTD_compressStream2(c->z, &out, &in,
						    end ? ZSTD_e_end :
							  ZSTD_e_continue);
			if (ZSTD_isError(left))
				return ph_error(PH_EIO, "zstd: %s",
						ZSTD_getErrorName(left));
			rc = write_all(c, c->out, out.pos);
			if (rc)
				return rc;
		} while (in.pos < in.size || (end && left));
	} else if (c->in.len) {
		/*
		 * One gzip member per block (RFC 1952 allows any number; every
		 * reader, Python's gzip and ours included, reads them as one
		 * stream): libdeflate compresses a whole buffer about twice as
		 * fast as zlib's streaming deflate at level 1, and smaller.
		 */
		size_t bound = libdeflate_gzip_compress_bound(c->z, c->in.len);
		size_t n;

		if (bound > c->out_cap) {
			unsigned char *o = realloc(c->out, bound);

			if (!o)
				return PH_ENOMEM;
			c->out = o;
			c->out_cap = bound;
		}
		n = libdeflate_gzip_compress(c->z, c->in.buf, c->in.len, c->out,
					     c->out_cap);
		if (!n)
			return ph_error(PH_EIO, "gzip compression failed");
		rc = write_all(c, c->out, n);
		if (rc)
			return rc;
	}
	ph_buf_reset(&c->in);
	return 0;
}

static int open_file(struct ph_iot_csv *c, int64_t mono_ns)
{
	char stamp[24], part[sizeof(c->path) + 8];

	ph_iot_clock_stamp(c->clock, mono_ns, stamp);
	c->seq++;
	snprintf(c->path, sizeof(c->path), "%s/%s_%s_%04u%s", c->dir, c->prefix,
		 stamp, c->seq, ph_iot_compression_ext(c->compression));
	snprintf(part, sizeof(part), "%s.part", c->path);
	c->fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (c->fd < 0)
		return ph_error(PH_EIO, "open %s: %s", part, strerror(errno));
	if (!c->out) {
		c->out_cap = c->compression == PH_IOT_ZSTD ?
				     ZSTD_CStreamOutSize() :
				     (size_t)FLUSH_AT;
		c->out = malloc(c->out_cap);
		if (!c->out)
			return PH_ENOMEM;
	}
	if (c->compression == PH_IOT_ZSTD) {
		if (!c->z)
			c->z = ZSTD_createCCtx();
		if (!c->z)
			return PH_ENOMEM;
		ZSTD_CCtx_reset(c->z, ZSTD_reset_session_only);
		ZSTD_CCtx_setParameter(c->z, ZSTD_c_compressionLevel, c->level);
	} else if (!c->z) {
		c->z = libdeflate_alloc_compressor(c->level);
		if (!c->z)
			return PH_ENOMEM;
	}
	c->file_bytes = 0;
	if (ph_buf_addstr(&c->in, c->header))
		return PH_ENOMEM;
	c->file_bytes += strlen(c->header);
	c->bytes_in += strlen(c->header);
	return 0;
}

int ph_iot_csv_close_file(struct ph_iot_csv *c)
{
	char part[sizeof(c->path) + 8];
	int rc;

	if (c->fd < 0)
		return 0;
	rc = pump(c, true);
	snprintf(part, sizeof(part), "%s.part", c->path);
	if (close(c->fd) && !rc)
		rc = ph_error(PH_EIO, "close %s: %s", part, strerror(errno));
	c->fd = -1;
	if (!rc && rename(part, c->path))
		rc = ph_error(PH_EIO, "rename %s: %s", part, strerror(errno));
	if (!rc)
		c->files++;
	return rc;
}

int ph_iot_csv_add(struct ph_iot_csv *c, const char *row, size_t n,
		   int64_t mono_ns)
{
	int rc;

	if (c->fd < 0 && (rc = open_file(c, mono_ns)))
		return rc;
	if (ph_buf_add(&c->in, row, n))
		return PH_ENOMEM;
	c->rows++;
	c->file_bytes += n;
	c->bytes_in += n;
	if (c->in.len >= FLUSH_AT && (rc = pump(c, false)))
		return rc;
	if (c->file_bytes >= c->rotate_bytes)
		return ph_iot_csv_close_file(c);
	return 0;
}

int ph_iot_csv_release(struct ph_iot_csv *c)
{
	int rc = ph_iot_csv_close_file(c);

	if (c->compression == PH_IOT_ZSTD)
		ZSTD_freeCCtx(c->z);
	else
		libdeflate_free_compressor(c->z);
	c->z = NULL;
	free(c->out);
	c->out = NULL;
	ph_buf_release(&c->in);
	return rc;
}
