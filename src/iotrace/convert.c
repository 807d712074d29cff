/* SPDX-License-Identifier: Apache-2.0 */
/*
 * convert.c: `porthole iotrace parse`, saved ftrace text to a recording.
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_log.h"
#include "iotrace/iotrace.h"
#include "iotrace/schema.h"
#include "iotrace/text_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

int ph_iot_ds_emit(void *ctx, struct ph_iot_row *row)
{
	struct ph_iot_ds_sink *k = ctx;
	char buf[PH_IOT_DS_ROW_MAX];

	if (k->ppid && row->pid > 0)
		row->ppid = k->ppid(k->ppid_ctx, row->pid, row->mono_ns);
	return ph_iot_csv_add(k->csv, buf, ph_iot_ds_row(k->clock, row, buf),
			      row->mono_ns);
}

/* One input, whole in memory: mapped, or read (and decompressed). */
struct input {
	const char *name;
	const char *data;
	size_t len;
	void *map;	     /* munmap this many bytes when set */
	struct ph_buf owned; /* or free this */
};

static int read_fd(int fd, const char *name, struct ph_buf *b)
{
	for (;;) {
		ssize_t k = ph_buf_read_once(b, fd, 1 << 20);

		if (k == 0)
			return 0;
		if (k == PH_EAGAIN)
			continue;
		if (k < 0)
			return ph_error(PH_EIO, "read %s: %s", name,
					strerror(errno));
	}
}

static int gunzip(const struct ph_buf *in, struct ph_buf *out, const char *name)
{
	z_stream z = { 0 };
	int zr = Z_OK, rc = 0;

	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return PH_ENOMEM;
	z.next_in = (Bytef *)in->buf;
	z.avail_in = (uInt)in->len;
	while (zr != Z_STREAM_END) {
		if (ph_buf_grow(out, 1 << 20)) {
			rc = PH_ENOMEM;
			break;
		}
		z.next_out = (Bytef *)out->buf + out->len;
		z.avail_out = (uInt)(out->alloc - out->len - 1);
		zr = inflate(&z, Z_NO_FLUSH);
		ph_buf_setlen(out, (size_t)((char *)z.next_out - out->buf));
		if (zr == Z_STREAM_END && z.avail_in) {
			/* concatenated members, as gzip allows */
			inflateReset(&z);
			zr = Z_OK;
			continue;
		}
		if (zr != Z_OK && zr != Z_STREAM_END) {
			rc = ph_error(PH_EIO, "%s: gzip data is corrupt", name);
			break;
		}
		if (zr == Z_OK && !z.avail_in && z.avail_out) {
			rc = ph_error(PH_EIO, "%s: gzip data is truncated",
				      name);
			break;
		}
	}
	inflateEnd(&z);
	return rc;
}

static int unzstd(const struct ph_buf *in, struct ph_buf *out, const char *name)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	ZSTD_inBuffer ib = { in->buf, in->len, 0 };
	size_t r = 1;
	int rc = 0;

	if (!d)
		return PH_ENOMEM;
	while (ib.pos < ib.size) {
		ZSTD_outBuffer ob;

		if (ph_buf_grow(out, 1 << 20)) {
			rc = PH_ENOMEM;
			break;
		}
		ob.dst = out->buf + out->len;
		ob.size = out->alloc - out->len - 1;
		ob.pos = 0;
		r = ZSTD_decompressStream(d, &ob, &ib);
		if (ZSTD_isError(r)) {
			rc = ph_error(PH_EIO, "%s: zstd: %s", name,
				      ZSTD_getErrorName(r));
			break;
		}
		ph_buf_setlen(out, out->len + ob.pos);
	}
	if (!rc && r != 0)
		rc = ph_error(PH_EIO, "%s: zstd data is truncated", name);
	ZSTD_freeDCtx(d);
	return rc;
}

/*
 * A zip archive (PKWARE APPNOTE.TXT, section 4.3), read through its
 * central directory because a streamed entry's local header may leave its
 * sizes to a trailing data descriptor:
 *
 *   end of central directory record (last 22 + comment bytes)
 *   OFFSET SIZE DESCRIPTION
 *        0    4 "PK\5\6"
 *       10    2 entries in the central directory
 *       16    4 offset of the central directory
 *   central directory file header (the first entry's)
 *        0    4 "PK\1\2"
 *        8    2 flags (bit 0: encrypted)
 *       10    2 method (0 stored, 8 deflate)
 *       16    4 CRC-32
 *       20    4 compressed size (0xffffffff: zip64, not read)
 *       24    4 uncompressed size
 *       28    2 name length; 30: extra length; 32: comment length
 *       42    4 offset of the local header; 46: the name
 *   local file header
 *        0    4 "PK\3\4"
 *       26    2 name length; 28: extra length; 30: the name, the extra
 *               field, then the entry's data
 *
 * Only the first entry is read (a zipped systrace holds one file); more
 * are named on stderr so nobody believes they were read too.
 */
static uint32_t le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

static int unzip(const char *data, size_t len, struct ph_buf *out,
		 const char *name)
{
	const unsigned char *d = (const unsigned char *)data, *cd, *lh;
	size_t eocd = 0, cdoff, loff, doff, nlen;
	uint32_t flags, method, crc, csize, usize, entries;
	bool found = false;
	z_stream z = { 0 };
	int zr, rc = 0;

	/* the end record sits after at most a 65535-byte comment */
	for (size_t i = len >= 22 ? len - 22 + 1 : 0; i-- > 0;) {
		if (len - i > 22 + 65535)
			break;
		if (!memcmp(d + i, "PK\5\6", 4)) {
			eocd = i;
			found = true;
			break;
		}
	}
	if (!found)
		return ph_error(PH_ECORRUPT,
				"%s: a zip archive without its end of central "
				"directory record (truncated?)",
				name);
	entries = le16(d + eocd + 10);
	cdoff = le32(d + eocd + 16);
	if (!entries)
		return ph_error(PH_ECORRUPT, "%s: an empty zip archive", name);
	if (cdoff > eocd || eocd - cdoff < 46 || memcmp(d + cdoff, "PK\1\2", 4))
		return ph_error(PH_ECORRUPT,
				"%s: byte %zu: zip central directory entry "
				"expected",
				name, cdoff);
	cd = d + cdoff;
	flags = le16(cd + 8);
	method = le16(cd + 10);
	crc = le32(cd + 16);
	csize = le32(cd + 20);
	usize = le32(cd + 24);
	nlen = le16(cd + 28);
	loff = le32(cd + 42);
	if (nlen > eocd - cdoff - 46)
		nlen = eocd - cdoff - 46;
	if (entries > 1)
		ph_warn("%s: a zip archive of %u entries: reading only the "
			"first, %.*s",
			name, entries, (int)nlen, (const char *)cd + 46);
	if (flags & 1)
		return ph_error(PH_EUNSUPP,
				"%s: zip entry %.*s is encrypted; unzip it "
				"first",
				name, (int)nlen, (const char *)cd + 46);
	if (method != 0 && method != 8)
		return ph_error(PH_EUNSUPP,
				"%s: zip entry %.*s uses compression method "
				"%u (only stored, 0, and deflate, 8, are "
				"read); unzip it first",
				name, (int)nlen, (const char *)cd + 46, method);
	if (csize == 0xffffffffu || usize == 0xffffffffu || loff == 0xffffffffu)
		return ph_error(PH_EUNSUPP,
				"%s: zip entry %.*s is in zip64 form; unzip "
				"it first",
				name, (int)nlen, (const char *)cd + 46);
	if (loff > cdoff || cdoff - loff < 30 || memcmp(d + loff, "PK\3\4", 4))
		return ph_error(PH_ECORRUPT,
				"%s: byte %zu: zip local file header expected",
				name, loff);
	lh = d + loff;
	doff = loff + 30 + le16(lh + 26) + le16(lh + 28);
	if (doff > cdoff || cdoff - doff < csize)
		return ph_error(PH_ECORRUPT,
				"%s: byte %zu: zip entry data runs past the "
				"central directory",
				name, doff);
	if (method == 0) {
		if (ph_buf_add(out, data + doff, csize))
			return PH_ENOMEM;
	} else {
		if (inflateInit2(&z, -15) != Z_OK)
			return PH_ENOMEM;
		z.next_in = (Bytef *)data + doff;
		z.avail_in = csize;
		do {
			/* the declared size is a hint (at most 64 MiB at a
			 * time), never trusted past the check below */
			size_t want = usize > out->len ? usize - out->len : 0;

			if (out->len > usize) {
				rc = ph_error(
					PH_ECORRUPT,
					"%s: zip entry %.*s inflates past "
					"its declared %u bytes",
					name, (int)nlen, (const char *)cd + 46,
					usize);
				break;
			}
			if (ph_buf_grow(out,
					(want < (1u << 26) ? want : 1u << 26) +
						1)) {
				rc = PH_ENOMEM;
				break;
			}
			z.next_out = (Bytef *)out->buf + out->len;
			z.avail_out = (uInt)(out->alloc - out->len - 1);
			zr = inflate(&z, Z_NO_FLUSH);
			ph_buf_setlen(out,
				      (size_t)((char *)z.next_out - out->buf));
			if (zr == Z_OK && !z.avail_in && z.avail_out)
				zr = Z_DATA_ERROR; /* ends mid-stream */
			if (zr != Z_OK && zr != Z_STREAM_END)
				rc = ph_error(PH_ECORRUPT,
					      "%s: zip entry %.*s: deflate "
					      "data is corrupt near byte %zu",
					      name, (int)nlen,
					      (const char *)cd + 46,
					      doff + (csize - z.avail_in));
		} while (!rc && zr != Z_STREAM_END);
		inflateEnd(&z);
		if (rc)
			return rc;
	}
	if (out->len != usize ||
	    crc32(0, (const Bytef *)out->buf, (uInt)out->len) != crc)
		return ph_error(PH_ECORRUPT,
				"%s: zip entry %.*s does not match its size "
				"and CRC-32",
				name, (int)nlen, (const char *)cd + 46);
	return 0;
}

/* Compressed or binary formats that are not ftrace text, by their first
 * bytes; NULL when data may be text. */
static const char *not_text(const char *data, size_t len)
{
	static const struct {
		const char *magic;
		size_t n;
		const char *what;
	} known[] = {
		{ "BZh", 3, "bzip2 data; decompress it first" },
		{ "\xfd"
		  "7zXZ\0",
		  6, "xz data; decompress it first" },
		{ "7z\xbc\xaf\x27\x1c", 6,
		  "a 7-zip archive; extract it first" },
		{ "PK\5\6", 4, "an empty zip archive" },
		{ "\x89PNG", 4, "a PNG image" },
		{ "\x7f"
		  "ELF",
		  4, "an ELF binary" },
		{ "JAVA PROFILE", 12, "an hprof heap dump (porthole heap)" },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (len >= known[i].n &&
		    !memcmp(data, known[i].magic, known[i].n))
			return known[i].what;
	/* text has no NUL; a Perfetto trace or trace_pipe_raw pages do */
	if (memchr(data, '\0', len < 4096 ? len : 4096))
		return "binary data, not ftrace text (a Perfetto trace or "
		       "raw per-CPU pages?)";
	return NULL;
}

static int load(struct input *in, const char *name)
{
	struct ph_buf raw = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct stat st;
	const char *what;
	int fd, rc = 0;

	memset(in, 0, sizeof(*in));
	in->name = name;
	ph_buf_init(&in->owned, PH_BUF_NO_CAP);
	fd = strcmp(name, "-") ? open(name, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		return ph_error(PH_EIO, "open %s: %s", name, strerror(errno));
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		in->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			       fd, 0);
		if (in->map == MAP_FAILED) {
			in->map = NULL;
		} else {
			in->data = in->map;
			in->len = (size_t)st.st_size;
			madvise(in->map, in->len, MADV_SEQUENTIAL);
		}
	}
	if (!in->map)
		rc = read_fd(fd, name, &raw);
	if (fd)
		close(fd);
	if (rc)
		goto out;
	if (!in->map) {
		in->data = raw.buf;
		in->len = raw.len;
	}
	if (in->len >= 2 && (unsigned char)in->data[0] == 0x1f &&
	    (unsigned char)in->data[1] == 0x8b) {
		struct ph_buf tmp = { (char *)in->data, in->len, 0, in->len };

		rc = gunzip(&tmp, &in->owned, name);
	} else if (in->len >= 4 && !memcmp(in->data, "\x28\xb5\x2f\xfd", 4)) {
		struct ph_buf tmp = { (char *)in->data, in->len, 0, in->len };

		rc = unzstd(&tmp, &in->owned, name);
	} else if (in->len >= 4 && !memcmp(in->data, "PK\3\4", 4)) {
		rc = unzip(in->data, in->len, &in->owned, name);
	} else if ((what = not_text(in->data, in->len))) {
		rc = ph_error(PH_EUNSUPP, "%s: %s", name, what);
		goto out;
	} else if (!in->map) {
		in->owned = raw; /* plain text read from a pipe */
		ph_buf_init(&raw, PH_BUF_NO_CAP);
	} else {
		goto out;
	}
	if (in->map) {
		munmap(in->map, in->len);
		in->map = NULL;
	}
	in->data = in->owned.buf;
	in->len = in->owned.len;
	/* what a compressed file held may not be text either (Perfetto's
	 * traces are often gzipped) */
	if (!rc && (what = not_text(in->data, in->len)))
		rc = ph_error(PH_EUNSUPP, "%s: decompressed, it holds %s", name,
			      what);
out:
	ph_buf_release(&raw);
	return rc;
}

int ph_iot_read_file(const char *path, struct ph_buf *out)
{
	struct input in;
	int rc = load(&in, path);

	if (!rc && in.map && ph_buf_add(&in.owned, in.data, in.len))
		rc = PH_ENOMEM;
	if (!rc) {
		ph_buf_release(out);
		*out = in.owned;
		ph_buf_init(&in.owned, PH_BUF_NO_CAP);
	}
	if (in.map)
		munmap(in.map, in.len);
	ph_buf_release(&in.owned);
	return rc;
}

static void unload(struct input *in)
{
	if (in->map)
		munmap(in->map, in->len);
	ph_buf_release(&in->owned);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "FILE:LINE (byte N)" of a line in one of o's inputs, in buf[PATH_MAX]. */
static const char *where(const struct ph_iot_parse_opts *o,
			 const struct ph_iot_line_at *at, char *buf, size_t n)
{
	const char *name = at->input < o->n_inputs ? o->inputs[at->input] : "?";

	snprintf(buf, n, "%s:%" PRIu64 " (byte %" PRIu64 ")",
		 strcmp(name, "-") ? name : "standard input", at->line,
		 at->offset);
	return buf;
}

static const char *reason(const struct ph_iot_line_at *at)
{
	return at->why < PH_IOT_BAD_COUNT	? ph_iot_bad_name(at->why) :
	       at->why == PH_IOT_AT_OTHER_EVENT ? "an event of another kind" :
						  "not an ftrace event";
}

/* The rejected lines kept, and a torn last line, on stderr: a report on
 * standard output may be going to a file nobody reads. */
static void warn_lines(const struct ph_iot_parse_opts *o,
		       const struct ph_iot_parse_stats *st)
{
	char w[PATH_MAX + 64];

	for (uint32_t i = 0; i < st->n_bad_at; i++)
		ph_warn("%s: rejected block_rq line: %s",
			where(o, &st->bad_at[i], w, sizeof(w)),
			reason(&st->bad_at[i]));
	if (st->malformed > st->n_bad_at)
		ph_warn("... and %" PRIu64 " more rejected block_rq lines",
			st->malformed - st->n_bad_at);
	if (st->torn)
		ph_warn("%s: the last line has no newline and does not parse "
			"(%s): cut off? It is not read",
			where(o, &st->torn_at, w, sizeof(w)),
			reason(&st->torn_at));
}

static void report(FILE *f, const struct ph_iot_parse_opts *o,
		   const struct ph_iot_text_reader *s,
		   const struct ph_iot_csv *ds)
{
	const struct ph_iot_parse_stats *st = &s->st;
	const struct ph_iot_pair_stats *p = &s->pair.st;
	uint64_t inflight = ph_iot_pairer_inflight(&s->pair), lost;
	char a[32], b[32], c[32], d[32], w[PATH_MAX + 64];

	fprintf(f, "read       %zu %s, %s lines, %s bytes\n", o->n_inputs,
		plural(o->n_inputs, "file", "files"), ph_iot_num(st->lines, a),
		ph_iot_num(st->bytes, b));
	fprintf(f, "events     %s block_rq_issue, %s block_rq_complete",
		ph_iot_num(st->block[PH_IOT_EV_ISSUE], a),
		ph_iot_num(st->block[PH_IOT_EV_COMPLETE], b));
	if (st->block[PH_IOT_EV_INSERT])
		fprintf(f, ", %s block_rq_insert",
			ph_iot_num(st->block[PH_IOT_EV_INSERT], a));
	if (st->block[PH_IOT_EV_REQUEUE])
		fprintf(f, ", %s block_rq_requeue",
			ph_iot_num(st->block[PH_IOT_EV_REQUEUE], a));
	fprintf(f, "\n");
	fprintf(f,
		"requests   %s paired (%s %s included), %s %s with no issue, "
		"%s %s still in flight at the end\n",
		ph_iot_num(p->paired, a), ph_iot_num(p->paired_flushes, b),
		plural(p->paired_flushes, "flush", "flushes"),
		ph_iot_num(p->unmatched, c),
		plural(p->unmatched, "completion", "completions"),
		ph_iot_num(inflight, d), plural(inflight, "issue", "issues"));
	if (p->reissued_inflight)
		fprintf(f, "           %s re-issued while in flight\n",
			ph_iot_num(p->reissued_inflight, a));
	if (p->errors)
		fprintf(f, "           %s completed with an error\n",
			ph_iot_num(p->errors, a));
	fprintf(f, "malformed  %s %s", ph_iot_num(st->malformed, a),
		plural(st->malformed, "line", "lines"));
	for (int i = 0; i < PH_IOT_BAD_COUNT; i++)
		if (st->bad[i])
			fprintf(f, ", %s %s", ph_iot_num(st->bad[i], a),
				ph_iot_bad_name(i));
	fprintf(f, "\n");
	for (uint32_t i = 0; i < st->n_bad_at; i++)
		fprintf(f, "           %s %s: %s\n", i ? "then" : "first at",
			where(o, &st->bad_at[i], w, sizeof(w)),
			reason(&st->bad_at[i]));
	if (st->torn)
		fprintf(f,
			"torn       the last line, %s, has no newline and does "
			"not parse (%s): not read\n",
			where(o, &st->torn_at, w, sizeof(w)),
			reason(&st->torn_at));
	lost = st->lost_events;
	if (st->header_written > st->header_in_buffer)
		lost += (uint64_t)(st->header_written - st->header_in_buffer);
	if (lost)
		fprintf(f, "lost       ftrace reports %s lost events\n",
			ph_iot_num(lost, a));
	fprintf(f, "wrote      %s: %s ds rows in %s %s, manifest.json\n",
		o->out_dir, ph_iot_num(ds->rows, a), ph_iot_num(ds->files, b),
		plural(ds->files, "file", "files"));
}

/* The ftrace event lines read so far, whatever their event. */
static uint64_t events_seen(const struct ph_iot_parse_stats *st)
{
	uint64_t n = st->other_events + st->malformed;

	for (size_t i = 0; i < PH_ARRAY_SIZE(st->block); i++)
		n += st->block[i];
	return n;
}

/*
 * An input with lines that are not ftrace and not one ftrace event is not
 * a trace (a wrong file, a log): converting it to no rows would read as a
 * disk that did nothing.  Names the input, its line count and its first
 * line that is not ftrace.  An empty input, or one of only an ftrace
 * header, is a trace of nothing (trace_pipe read while no I/O ran) and
 * passes, with the warning that no block event was read.
 */
static int not_ftrace(const struct ph_iot_parse_opts *o, size_t i,
		      uint64_t lines, const struct ph_iot_line_at *first)
{
	const char *name = strcmp(o->inputs[i], "-") ? o->inputs[i] :
						       "standard input";

	return ph_error(PH_EINVAL,
			"%s: not ftrace text: none of its %" PRIu64
			" lines is an ftrace event (the first is line %" PRIu64
			", byte %" PRIu64 ")",
			name, lines, first->line, first->offset);
}

int ph_iot_parse_files(const struct ph_iot_parse_opts *o)
{
	struct input *in = calloc(o->n_inputs ? o->n_inputs : 1, sizeof(*in));
	struct ph_iot_text_reader s;
	struct ph_iot_clock clock;
	struct ph_iot_csv ds;
	struct ph_iot_ds_sink sink = { &clock, &ds, NULL, NULL };
	struct ph_iot_manifest m = { 0 };
	const char *source = "option --mono-to-real-offset-ns";
	char dir[PATH_MAX + 8];
	int64_t offset = o->offset_ns;
	size_t loaded = 0;
	int rc = 0, rc2;

	if (!in)
		return PH_ENOMEM;
	ph_iot_text_reader_init(&s, ph_iot_ds_emit, &sink);
	memset(&ds, 0, sizeof(ds));
	ds.fd = -1;
	for (; loaded < o->n_inputs; loaded++) {
		rc = load(&in[loaded], o->inputs[loaded]);
		if (rc) {
			loaded++;
			goto out;
		}
	}
	if (!o->have_offset) {
		source = NULL;
		for (size_t i = 0; i < o->n_inputs && !source; i++)
			if (ph_iot_find_clock_sync(in[i].data, in[i].len,
						   &offset))
				source = "systrace trace_event_clock_sync "
					 "marker";
		if (!source) {
			offset = ph_clock_mono_to_real_offset_ns();
			source = "this machine at conversion time (right for "
				 "a trace recorded here since boot)";
		}
	}
	ph_iot_clock_init(&clock, offset);
	if ((rc = ph_iot_new_recording_dir(o->out_dir)))
		goto out;
	snprintf(dir, sizeof(dir), "%s/ds", o->out_dir);
	if ((rc = ph_iot_csv_init(&ds, dir, "ds", ph_iot_ds_header, &clock,
				  o->compression, o->rotate_bytes)))
		goto out;
	for (size_t i = 0; i < o->n_inputs; i++) {
		uint64_t events = events_seen(&s.st), lines = s.st.lines;

		s.st.not_ftrace_at.line = 0;
		rc = ph_iot_text_reader_feed(&s, in[i].data, in[i].len);
		if (!rc)
			rc = ph_iot_text_reader_end_input(&s);
		if (!rc && events_seen(&s.st) == events &&
		    s.st.not_ftrace_at.line)
			rc = not_ftrace(o, i, s.st.lines - lines,
					&s.st.not_ftrace_at);
		if (rc)
			goto out;
	}
	if (!s.st.block[PH_IOT_EV_ISSUE] && !s.st.block[PH_IOT_EV_COMPLETE])
		ph_warn("no block_rq_issue or block_rq_complete event in the "
			"input (no I/O ran, or the block tracepoints were "
			"off): the ds files hold no request");
	if ((rc = ph_iot_csv_close_file(&ds)))
		goto out;
	warn_lines(o, &s.st);

	m.mode = "offline";
	m.collector = "porthole iotrace parse (ftrace text)";
	m.offset_ns = offset;
	m.offset_source = source;
	m.start_mono_ns = s.st.first_ns;
	m.end_mono_ns = s.st.last_ns;
	m.compression = o->compression;
	m.ds = &ds;
	m.text_reader = &s;
	m.inputs = o->inputs;
	m.n_inputs = o->n_inputs;
	m.self_cpu_ns = -1;
	if ((rc = ph_iot_manifest_write(o->out_dir, &m)))
		goto out;
	if (o->report)
		report(o->report, o, &s, &ds);
out:
	rc2 = ph_iot_csv_release(&ds);
	if (!rc)
		rc = rc2;
	ph_iot_text_reader_release(&s);
	for (size_t i = 0; i < loaded; i++)
		unload(&in[i]);
	free(in);
	return rc;
}
