/* SPDX-License-Identifier: Apache-2.0 */
/*
 * csv_out.h: schema-v3 CSV rows, and the rotating compressed files they
 * go to.
 *
 * Value formats are io-tracer's (see docs/iotrace.md): wall-clock
 * timestamps "YYYY-MM-DD HH:MM:SS.ffffff" in local time, derived from the
 * monotonic clock plus one offset so two rows never disagree about order;
 * milliseconds as decimals; a field the source cannot give is empty.
 * Text fields are quoted as Python's csv module does (only when they hold
 * a comma, a quote or a line break) and are always valid UTF-8: a byte
 * that is not becomes U+FFFD, so `csv.reader(open(f, encoding="utf-8"))`
 * reads every file back.
 *
 * Files are named PREFIX_YYYYMMDD_HHMMSS_mmm_SEQ.csv.gz (or .csv.zst) after
 * the local wall time of their first row, SEQ counting from 0001, and are
 * written under a ".part" name until they are complete, so a reader never
 * sees half a file.  A file is closed and the next one begun once it holds
 * rotate_bytes of uncompressed CSV.
 */
#ifndef PH_IOTRACE_CSV_OUT_H
#define PH_IOTRACE_CSV_OUT_H

#include "ph_common.h"
#include "ph_buf.h"
#include "iotrace/pair.h"

/* Converts monotonic nanoseconds to local wall-clock text. */
struct ph_iot_clock {
	int64_t offset_ns; /* realtime - monotonic */
	int64_t sec;	   /* the epoch second `text` holds, or INT64_MIN */
	char text[20];	   /* "YYYY-MM-DD HH:MM:SS" of sec, local time */
};

void ph_iot_clock_init(struct ph_iot_clock *c, int64_t offset_ns);

/* "YYYY-MM-DD HH:MM:SS.ffffff" for mono_ns: 26 bytes at buf, no NUL. */
size_t ph_iot_clock_format(struct ph_iot_clock *c, int64_t mono_ns, char *buf);

/* "YYYYMMDD_HHMMSS_mmm" for mono_ns, NUL-terminated, into buf[24]. */
void ph_iot_clock_stamp(const struct ph_iot_clock *c, int64_t mono_ns,
			char *buf);

/* The longest ds row ph_iot_ds_row() writes, newline included. */
#define PH_IOT_DS_ROW_MAX 512

/* One ds row (with its newline) into buf; returns its length. */
size_t ph_iot_ds_row(struct ph_iot_clock *c, const struct ph_iot_row *r,
		     char *buf);

/*
 * Appends s[0..n) as one CSV field: quoted when it holds ',', '"', CR or
 * LF, invalid UTF-8 replaced.  Returns the bytes written to out, which
 * needs 2 + 6 * n bytes of room.
 */
size_t ph_iot_csv_field(char *out, const char *s, size_t n);

/* Digits of v at out; returns how many. */
size_t ph_iot_fmt_u64(char *out, uint64_t v);

/* ns as milliseconds: "0.075" (whole microseconds) or "0.075123". */
size_t ph_iot_fmt_ms(char *out, int64_t ns);

enum ph_iot_compression {
	PH_IOT_GZIP,
	PH_IOT_ZSTD,
};

/* ".csv.gz" or ".csv.zst" */
const char *ph_iot_compression_ext(enum ph_iot_compression c);
/* "gzip" or "zstd" */
const char *ph_iot_compression_name(enum ph_iot_compression c);

/* One stream's files: DIR/PREFIX_STAMP_SEQ.csv.EXT. */
struct ph_iot_csv {
	char dir[PATH_MAX]; /* the stream's directory */
	const char *prefix; /* "ds", "process"; kept, not copied */
	const char *header; /* header row with its newline; kept */
	const struct ph_iot_clock *clock; /* names files; kept */
	enum ph_iot_compression compression;
	int level;		  /* compression level */
	uint64_t rotate_bytes;	  /* uncompressed bytes per file */
	int fd;			  /* the open file, or -1 */
	char path[PATH_MAX + 64]; /* its final name */
	void *z;		  /* libdeflate_compressor or ZSTD_CCtx */
	struct ph_buf in;	  /* rows not yet compressed */
	unsigned char *out;	  /* compressed bytes not yet written */
	size_t out_cap;
	uint64_t file_bytes; /* uncompressed bytes in the open file */
	uint32_t seq;	     /* files begun */
	uint64_t rows;	     /* rows written, header rows not counted */
	uint64_t files;	     /* files completed */
	uint64_t bytes_in;   /* uncompressed bytes, headers included */
	uint64_t bytes_out;  /* compressed bytes written */
};

/* Creates dir (and its parent) if needed. */
int ph_iot_csv_init(struct ph_iot_csv *c, const char *dir, const char *prefix,
		    const char *header, const struct ph_iot_clock *clock,
		    enum ph_iot_compression compression,
		    uint64_t rotate_bytes) PH_WUR;

/*
 * Appends one row (newline included) stamped mono_ns; the row begins a new
 * file, named after mono_ns, when none is open.  Returns 0 or PH_EIO
 * (logged), PH_ENOMEM.
 */
int ph_iot_csv_add(struct ph_iot_csv *c, const char *row, size_t n,
		   int64_t mono_ns) PH_WUR;

/* Completes the open file, if any: the next row begins a new one. */
int ph_iot_csv_close_file(struct ph_iot_csv *c) PH_WUR;

/* Completes the open file and frees everything (the counts stay). */
int ph_iot_csv_release(struct ph_iot_csv *c);

/* mkdir -p; 0 or PH_EIO (logged). */
int ph_iot_mkdirs(const char *path) PH_WUR;

/*
 * mkdir -p for a recording's directory, refusing one that already holds a
 * recording (a manifest.json): new files beside old ones would be read as
 * one recording.  0, or PH_EINVAL / PH_EIO (logged).
 */
int ph_iot_new_recording_dir(const char *path) PH_WUR;

#endif
