/*
 * ds_read.h: reading a recording's ds rows back.
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
 * milliseconds have at most six decimals.  A record shorter than the
 * operation, device and latency columns is not a row and is skipped.
 */
#ifndef PH_IOTRACE_DS_READ_H
#define PH_IOTRACE_DS_READ_H

#include "ph_common.h"

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
	uint64_t files; /* ds files read */
	uint64_t rows;	/* rows passed to the callback */
};

/*
 * Calls fn for every row of every ds file of dir, in order.  fn returning
 * non-zero stops the walk and is returned.  Returns 0, PH_ENOENT (no
 * dir/ds), PH_ECORRUPT (a file whose header has no operation, device or
 * latency_ms column), PH_EIO or PH_ENOMEM; each logged.
 */
int ph_iot_ds_read(const char *dir,
		   int (*fn)(void *ctx, const struct ph_iot_ds_rec *rec),
		   void *ctx, struct ph_iot_ds_stats *st) PH_WUR;

/* "0.075" (milliseconds, up to 6 decimals) -> 75000 ns; false if not. */
bool ph_iot_parse_ms(const char *s, size_t n, int64_t *ns);

#endif
