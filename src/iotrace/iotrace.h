/* SPDX-License-Identifier: Apache-2.0 */
/*
 * iotrace.h: the block I/O engine as the command line uses it.
 *
 *   record   tracefs -> DIR (live, root)
 *   parse    saved ftrace text -> DIR (offline)
 *   summary  DIR -> a report a person reads
 *
 * DIR is an io-tracer schema-v3 recording (schema.h): manifest.json,
 * ds/ds_*.csv.gz, process/process_*.csv.gz, system_spec/ (JSON).  The
 * layers below: block_parse (a line), pair (issue -> complete), text_reader
 * (text -> rows), csv_out (rows -> files), schema (the manifest), tracefs
 * (the kernel's switches), snapshot (/proc), summary.
 */
#ifndef PH_IOTRACE_H
#define PH_IOTRACE_H

#include "ph_common.h"
#include "ph_buf.h"
#include "iotrace/csv_out.h"

/* Default size of one CSV file before the next begins (uncompressed). */
#define PH_IOT_ROTATE_DEFAULT ((uint64_t)64 << 20)

struct ph_iot_parse_opts {
	const char *const *inputs; /* files; "-" is standard input */
	size_t n_inputs;
	const char *out_dir;
	enum ph_iot_compression compression;
	uint64_t rotate_bytes;
	bool have_offset;  /* offset_ns given by the caller */
	int64_t offset_ns; /* clock.mono_to_real_offset_ns */
	FILE *report;	   /* one paragraph on what was done, or NULL */
};

/*
 * Converts saved ftrace text (tracefs trace or trace_pipe output, a
 * systrace HTML file; any of them gzip- or zstd-compressed) into a
 * recording in out_dir.  The wall-clock offset is, in order: the caller's,
 * a systrace clock-sync marker in the input, or this machine's now (which
 * is right for text recorded here since boot).  Returns 0, or PH_EIO /
 * PH_ENOMEM (logged); malformed input is counted, never an error.
 */
int ph_iot_parse_files(const struct ph_iot_parse_opts *o) PH_WUR;

struct ph_iot_record_opts {
	double seconds; /* stop after this long; 0: at a signal */
	const char *out_dir;
	enum ph_iot_compression compression;
	uint64_t rotate_bytes;
	bool snapshots;		  /* process and system snapshots */
	double snapshot_interval; /* seconds between process snapshots */
	const char *tracefs;	  /* use this tracefs, mount nothing */
	int64_t buffer_kb;	  /* ring buffer per CPU */
	bool top_level;		  /* use the top-level buffer, no instance */
	bool text;		  /* read trace_pipe text, not the binary
				   * per-CPU pipes (rawpipe.h says why) */
	bool set_nice;		  /* raise the collector's priority ... */
	int nice;		  /* ... to this nice value (never lower it) */
	FILE *report;		  /* what was done, or NULL */
};

/*
 * Records block I/O until `seconds` pass or SIGINT/SIGTERM/SIGHUP
 * arrives, in a private tracefs instance that is removed at the end (see
 * tracefs.h for what is restored).  When tracefs or the block tracepoints
 * cannot be used it records snapshots only and says why, in the manifest
 * and on stderr.  Returns 0, or PH_EIO & co. (logged) when the output
 * could not be written.
 */
int ph_iot_record(const struct ph_iot_record_opts *o) PH_WUR;

/*
 * Reads the recording in dir and writes the report: per device and
 * operation the count, bytes and latency percentiles, the busiest
 * processes, a latency histogram, and what was lost on the way.  utf8
 * draws the histogram with block characters instead of '#'.
 */
int ph_iot_summary(const char *dir, FILE *out, bool utf8) PH_WUR;

/*
 * The whole file at path ("-": standard input) in out, decompressed when
 * it is gzip or zstd (by its first bytes).  0 or PH_EIO (logged), PH_ENOMEM.
 */
int ph_iot_read_file(const char *path, struct ph_buf *out) PH_WUR;

/* v with thousands separators ("19,999") in buf[32]; returns buf. */
const char *ph_iot_num(uint64_t v, char *buf);

/* The sink that turns finished requests into ds rows. */
struct ph_iot_ds_sink {
	struct ph_iot_clock *clock;
	struct ph_iot_csv *csv;
	/* the parent of pid at (monotonic) time now; may be NULL */
	int32_t (*ppid)(void *ctx, int32_t pid, int64_t now);
	void *ppid_ctx;
};

/* A ph_iot_emit_fn: ctx is a struct ph_iot_ds_sink. */
int ph_iot_ds_emit(void *ctx, struct ph_iot_row *row);

#endif
