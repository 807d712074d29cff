/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schema.h: io-tracer schema v3 as porthole writes it: the column lists of
 * the streams, and the manifest that describes a recording.
 *
 * The layout is the one the io-tracer tools for Linux, Android, Windows
 * and macOS share (their TRACE_FORMAT.md, "schema v3, cross-OS aligned"):
 * the same directories, file names, header rows, column order and value
 * formats, so their readers read our recordings.  What each column holds
 * when it comes from ftrace text is in docs/iotrace.md.
 *
 * manifest.json is written once, when a recording or a conversion ends:
 * the schema (so a reader need not hard-code columns), where the data came
 * from, the clock offset that turns mono_ns into wall time, rows and files
 * per stream, and every counter of parsing, pairing and ftrace's own loss.
 */
#ifndef PH_IOTRACE_SCHEMA_H
#define PH_IOTRACE_SCHEMA_H

#include "ph_common.h"
#include "ph_json.h"
#include "iotrace/csv_out.h"
#include "iotrace/rawpipe.h"
#include "iotrace/text_reader.h"

#define PH_IOT_SCHEMA_VERSION 3

/* Header rows, newline included. */
extern const char ph_iot_ds_header[];
extern const char ph_iot_process_header[];

/* Writes "schema_version" and "streams" into the open object. */
void ph_iot_schema_json(struct ph_jw *w);

/* ftrace's own loss counters for one CPU of the ring buffer. */
struct ph_iot_cpu_loss {
	uint64_t overrun;	 /* events overwritten before being read */
	uint64_t commit_overrun; /* events lost while being written */
	uint64_t dropped; /* events dropped (buffer full, no overwrite) */
	uint64_t entries; /* events still in the buffer at the end */
	uint64_t read;	  /* events the kernel handed to readers */
	bool have_read;	  /* the kernel reports `read events` */
};

/* Everything a manifest says beyond the schema. */
struct ph_iot_manifest {
	const char *mode;	      /* "ftrace", "snapshot-only", "offline" */
	const char *collector;	      /* what produced it */
	const char *reader;	      /* live: which pipe was read, or NULL */
	const struct ph_iot_raw *raw; /* live, binary: the decoder's counts */
	const char *reason;	      /* snapshot-only: why; else NULL */
	const char *machine_id;	      /* anonymized, or NULL when unknown */
	const char *kernel_release;   /* NULL when unknown (offline) */
	int64_t offset_ns;	      /* clock.mono_to_real_offset_ns */
	const char *offset_source;
	int64_t start_mono_ns; /* the recording's span, monotonic */
	int64_t end_mono_ns;
	enum ph_iot_compression compression;
	const struct ph_iot_csv *ds;	  /* NULL: stream not written */
	const struct ph_iot_csv *process; /* likewise */
	const struct ph_iot_text_reader *text_reader; /* NULL: no ftrace */
	const char *const *inputs; /* offline: the files read */
	size_t n_inputs;
	const char *const *events; /* live: the events enabled */
	size_t n_events;
	/* live: where and how tracefs was used */
	const char *tracefs_root;
	const char *tracefs_instance; /* NULL: the top level */
	bool tracefs_mounted;	      /* porthole mounted (and unmounted) it */
	int64_t buffer_size_kb;
	bool restored;			    /* tracefs state restored in full */
	const struct ph_iot_cpu_loss *loss; /* per CPU, or NULL */
	size_t n_loss;
	uint64_t snapshots;  /* process snapshots taken */
	int64_t self_cpu_ns; /* the collector's own CPU time, or -1 */
	bool have_nice;	     /* live: the collector's nice value is known */
	int nice;	     /* it, while recording */
};

/* ftrace_loss.total_lost: the events lost, counting each loss once. */
uint64_t ph_iot_total_lost(const struct ph_iot_manifest *m);

/* Writes DIR/manifest.json (through a temporary name). */
int ph_iot_manifest_write(const char *dir,
			  const struct ph_iot_manifest *m) PH_WUR;

/* Re-indents compact JSON as json.dump(indent=2) would; out gets a \n. */
int ph_iot_json_pretty(const struct ph_buf *in, struct ph_buf *out) PH_WUR;

/* Writes buf to path through path.part and a rename; 0 or PH_EIO. */
int ph_iot_write_file(const char *path, const char *buf, size_t n) PH_WUR;

/*
 * The anonymized machine id: the first 16 hex digits (upper case) of the
 * SHA-256 of /etc/machine-id (or /proc/sys/kernel/random/boot_id, or the
 * host name), as io-tracer derives it.  The raw id never leaves this
 * function.  buf needs 17 bytes.
 */
void ph_iot_machine_id(char *buf);

#endif
