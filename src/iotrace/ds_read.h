/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ds_read.h: reading a recording's ds rows back.  `ds` is io-tracer
 * schema v3's name for its stream of completed block requests, one row
 * each (DIR/ds/ds_*.csv.gz, the manifest's streams.ds); the code keeps the
 * schema's name so it reads as the files do.
 *
 * The way any consumer of schema v3 should read them: every ds file of
 * DIR/ds (ds_*.csv.gz, .csv.zst or .csv) in name order, which is the
 * order they were written, each by column name from its header row, not
 * by position, so files written by another io-tracer collector read too.
 * `summary` and the host's `io` view both read through here.
 *
 * Values the row leaves empty (docs/iotrace.md says when) are -1, or 0
 * for size and request_id; a value that is present but not a number
 * counts as empty.  Latencies are integer nanoseconds: the CSV's
 * milliseconds have at most six decimals.  A record that is not a row
 * (the reader below says which are not) is counted and skipped.
 */
#ifndef PH_IOTRACE_DS_READ_H
#define PH_IOTRACE_DS_READ_H

#include "ph_common.h"
#include "ph_buf.h"
#include "ph_error.h"

/* One ds row.  The strings point into the file's text (or a scratch
 * buffer for quoted fields) and live only during the callback. */
struct ph_iot_ds_rec {
	const char *op, *dev, *pid_text, *comm, *flags;
	size_t op_n, dev_n, pid_text_n, comm_n, flags_n;
	int64_t pid, tid, ppid, cpu; /* -1 when empty */
	int64_t sector;		     /* -1 when empty (a flush) */
	uint64_t size;		     /* bytes; 0 when empty */
	int64_t latency_ns;	     /* -1 when empty */
	int64_t queue_ns;	     /* -1 when empty */
	int64_t mono_ns;	     /* completion; -1 when empty */
	uint64_t request_id;	     /* 0 when empty */
};

struct ph_iot_ds_stats {
	uint64_t files;	   /* ds files read */
	uint64_t rows;	   /* rows passed to the callback */
	uint64_t rejected; /* records that are not rows (each file's first
			    * is logged with its byte offset) */
	uint64_t blank;	   /* empty lines, skipped */
};

/*
 * Calls fn for every row of every ds file of dir, in order.  fn returning
 * non-zero stops the walk and is returned.  Returns 0, PH_ENOENT (no
 * dir/ds), PH_ECORRUPT (a file whose header is not a ds header), PH_EIO or
 * PH_ENOMEM; each logged.  Records that are not rows are counted in
 * st->rejected and skipped, never fatal.
 */
int ph_iot_ds_read(const char *dir,
		   int (*fn)(void *ctx, const struct ph_iot_ds_rec *rec),
		   void *ctx, struct ph_iot_ds_stats *st) PH_WUR;

/*
 * One ds file's text (decompressed), read record by record; what
 * ph_iot_ds_read() does with each file, over a buffer.
 *
 * The text is CSV as Python's csv module writes it (RFC 4180, any of
 * "\r\n", "\n", "\r" ending a record; a UTF-8 byte-order mark before it
 * is skipped): the first record is the header,
 * every later one is a row, blank, or rejected.  A row has exactly the
 * header's number of fields, a non-empty operation and device, and
 * strict quoting; anything else is rejected, with the byte offset of
 * what was wrong, and reading goes on at the next record.  Quoting is
 * strict: a '"' only opens a field and, doubled, stands for itself
 * inside one; a byte after a closing quote, a quote inside an unquoted
 * field, or a quote never closed rejects the record (an unclosed quote
 * takes the rest of the text with it, as in any CSV reader).
 * Every byte after the header belongs to exactly one record or blank
 * line, and rows + rejected + blank are all of them.
 */
#define PH_IOT_DS_FIELDS_MAX 64 /* columns a header may have */
#define PH_IOT_DS_COLS	     14 /* the columns read (ds_read.c's list) */

struct ph_iot_ds_field {
	size_t off;  /* its first byte in the text (the quote, if quoted) */
	size_t at;   /* where its value is: in the text, or in scratch */
	size_t n;    /* the value's length */
	bool quoted; /* the value was unescaped into scratch */
};

struct ph_iot_ds_reader {
	const char *text; /* borrowed: the caller keeps it alive */
	size_t len;
	size_t pos;		 /* the next record's first byte */
	size_t rec_start;	 /* the record last read: [rec_start, */
	size_t rec_end;		 /* rec_end), its line ending included */
	uint32_t n_cols;	 /* fields of the header */
	int col[PH_IOT_DS_COLS]; /* field index of each column read, or -1 */
	uint64_t rows, rejected, blank;
	uint32_t nf; /* fields of the record last read */
	struct ph_iot_ds_field f[PH_IOT_DS_FIELDS_MAX];
	struct ph_buf scratch; /* quoted fields, unescaped */
};

/*
 * Reads the header of text[0..len).  Returns 0, PH_ECORRUPT with err
 * saying where and why (not a ds header: no operation, device or
 * latency_ms column, a column it reads named twice, more than
 * PH_IOT_DS_FIELDS_MAX columns, bad quoting, no first line), or
 * PH_ENOMEM.  err may be NULL.  Release the
 * reader whatever this returns.
 */
int ph_iot_ds_reader_init(struct ph_iot_ds_reader *r, const char *text,
			  size_t len, struct ph_err *err) PH_WUR;

/*
 * The next row into *rec (its strings point into the text or the
 * reader's scratch, valid until the next call).  Returns 1 for a row, 0 at
 * the end, PH_ECORRUPT for a record that is not a row (err says where and
 * why; call again for the next), or PH_ENOMEM.  Blank lines are skipped
 * and counted.
 */
int ph_iot_ds_reader_next(struct ph_iot_ds_reader *r, struct ph_iot_ds_rec *rec,
			  struct ph_err *err);

void ph_iot_ds_reader_release(struct ph_iot_ds_reader *r);

/*
 * "0.075" (milliseconds: digits, optionally '.' and more digits, the
 * seventh decimal on cut) -> 75000 ns; false when it is not that, or does
 * not fit int64_t nanoseconds.
 */
bool ph_iot_parse_ms(const char *s, size_t n, int64_t *ns);

#endif
