/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schema.c: the stream tables of schema v3 and the manifest writer.
 */
#include "ph_common.h"
#include "ph_error.h"
#include "iotrace/schema.h"
#include "iotrace/sha256.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

const char ph_iot_ds_header[] =
	"timestamp,operation,pid,tid,command,sector,size,latency_ms,device,"
	"flags,cpu_id,ppid,queue_latency_ms,command_flags,operation_code,"
	"request_id,mono_ns\n";

const char ph_iot_process_header[] =
	"timestamp,pid,name,cmdline,vms_kb,rss_kb,creation_time,cpu_5s,cpu_2m,"
	"cpu_1h,status,mono_ns\n";

struct column {
	const char *name, *type, *unit, *description;
};

static const struct column ds_columns[] = {
	{ "timestamp", "datetime", "",
	  "Completion time, local wall clock: mono_ns plus "
	  "clock.mono_to_real_offset_ns." },
	{ "operation", "string", "",
	  "Base block operation: read, write, flush, discard, secure_erase "
	  "or none." },
	{ "pid", "u32", "",
	  "Process that submitted the request (the task that inserted it, "
	  "else the one that issued it): the tgid when the trace records "
	  "tgids, else the task. Empty when the issue was not seen." },
	{ "tid", "u32", "",
	  "Submitting thread, when the trace records tgids; empty "
	  "otherwise." },
	{ "command", "string", "",
	  "Name of the submitting task (<= 16 bytes)." },
	{ "sector", "u64", "",
	  "First sector, 512-byte units. Empty for a flush whose issue was "
	  "not seen (the kernel prints no sector for it)." },
	{ "size", "u64", "bytes", "Request size." },
	{ "latency_ms", "float", "milliseconds",
	  "Device latency, block_rq_issue to block_rq_complete; empty when "
	  "the issue was not seen." },
	{ "device", "string", "", "Block device, major:minor." },
	{ "flags", "string", "",
	  "rwbs sub-flags joined by |: preflush, fua, ahead, sync, meta "
	  "(and secure, barrier on old kernels); empty when none." },
	{ "cpu_id", "u32", "", "CPU that logged the completion." },
	{ "ppid", "u32", "",
	  "Parent of pid, when the live collector could read it from /proc; "
	  "empty otherwise." },
	{ "queue_latency_ms", "float", "milliseconds",
	  "I/O scheduler latency, block_rq_insert to block_rq_issue, when "
	  "inserts were traced; empty otherwise." },
	{ "command_flags", "string", "",
	  "REQ_* flags. ftrace's text does not carry them: always empty." },
	{ "operation_code", "string", "",
	  "REQ_OP_* name. ftrace's text does not carry it: always empty." },
	{ "request_id", "u64", "",
	  "Per-session request number, counted at issue from 1; empty when "
	  "the issue was not seen." },
	{ "mono_ns", "u64", "nanoseconds",
	  "Completion time on CLOCK_MONOTONIC (ftrace, trace_clock=mono): "
	  "the clock every stream shares." },
};

static const struct column process_columns[] = {
	{ "timestamp", "datetime", "", "Snapshot time, local wall clock." },
	{ "pid", "integer", "", "Process id." },
	{ "name", "string", "", "comm, from /proc/PID/stat." },
	{ "cmdline", "string", "",
	  "Arguments joined by spaces; the name when empty." },
	{ "vms_kb", "float", "KB", "Virtual memory size." },
	{ "rss_kb", "float", "KB", "Resident set size." },
	{ "creation_time", "datetime", "",
	  "Process start, local wall clock (boot time plus starttime)." },
	{ "cpu_5s", "float", "percent",
	  "CPU use over the last 5 s, in percent of one CPU; over less when "
	  "the collector has seen less of the process; empty in the first "
	  "snapshot." },
	{ "cpu_2m", "float", "percent",
	  "Likewise over the last 2 minutes (or as much as was seen)." },
	{ "cpu_1h", "float", "percent",
	  "Likewise over the last hour (or as much as was seen)." },
	{ "status", "string", "",
	  "running, sleeping, disk-sleep, zombie, stopped, tracing-stop, "
	  "dead, idle, ..." },
	{ "mono_ns", "u64", "nanoseconds",
	  "Snapshot time on CLOCK_MONOTONIC." },
};

static void stream(struct ph_jw *w, const char *key, const char *desc,
		   const char *clock, const struct column *cols, size_t n)
{
	ph_jw_key(w, key);
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "subdir", key);
	ph_jw_kv_str(w, "filename_prefix", key);
	ph_jw_kv_str(w, "description", desc);
	ph_jw_kv_str(w, "wall_clock", clock);
	ph_jw_key(w, "columns");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < n; i++) {
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "name", cols[i].name);
		ph_jw_kv_str(w, "type", cols[i].type);
		ph_jw_kv_str(w, "unit", cols[i].unit);
		ph_jw_kv_str(w, "description", cols[i].description);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
}

void ph_iot_schema_json(struct ph_jw *w)
{
	ph_jw_kv_int(w, "schema_version", PH_IOT_SCHEMA_VERSION);
	ph_jw_key(w, "streams");
	ph_jw_obj_begin(w);
	stream(w, "ds",
	       "Block-device requests, one row per completion: "
	       "block_rq_issue paired with block_rq_complete by (device, "
	       "sector), first in first out, for the device latency.",
	       "CLOCK_REALTIME derived from CLOCK_MONOTONIC", ds_columns,
	       PH_ARRAY_SIZE(ds_columns));
	stream(w, "process", "Periodic snapshots of every process, from /proc.",
	       "CLOCK_REALTIME derived from CLOCK_MONOTONIC", process_columns,
	       PH_ARRAY_SIZE(process_columns));
	ph_jw_obj_end(w);
}

/* --- the manifest --------------------------------------------------------- */

static void wall(struct ph_jw *w, const char *key, int64_t offset_ns,
		 int64_t mono_ns)
{
	struct ph_iot_clock c;
	char buf[32];

	ph_jw_key(w, key);
	if (mono_ns < 0) {
		ph_jw_null(w);
		return;
	}
	ph_iot_clock_init(&c, offset_ns);
	ph_jw_strn(w, buf, ph_iot_clock_format(&c, mono_ns, buf));
}

static void str_or_null(struct ph_jw *w, const char *key, const char *v)
{
	ph_jw_key(w, key);
	if (v)
		ph_jw_str(w, v);
	else
		ph_jw_null(w);
}

static void clock_json(struct ph_jw *w, const struct ph_iot_manifest *m)
{
	time_t now =
		(time_t)(m->end_mono_ns >= 0 ?
				 (m->end_mono_ns + m->offset_ns) / 1000000000 :
				 0);
	struct tm tm;

	ph_jw_key(w, "clock");
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "mono_to_real_offset_ns", m->offset_ns);
	ph_jw_kv_str(w, "source", m->offset_source);
	ph_jw_kv_str(w, "note",
		     "wall_clock_ns = mono_ns + mono_to_real_offset_ns; the "
		     "timestamp columns show it in local time");
	if (localtime_r(&now, &tm)) {
		ph_jw_kv_str(w, "timezone", tm.tm_zone ? tm.tm_zone : "");
		ph_jw_kv_int(w, "utc_offset_s", tm.tm_gmtoff);
	}
	ph_jw_obj_end(w);
}

static void per_stream(struct ph_jw *w, const char *key,
		       const struct ph_iot_manifest *m, bool files)
{
	const struct ph_iot_csv *s[2] = { m->ds, m->process };
	const char *names[2] = { "ds", "process" };

	ph_jw_key(w, key);
	ph_jw_obj_begin(w);
	for (int i = 0; i < 2; i++)
		ph_jw_kv_int(w, names[i],
			     !s[i] ? 0 :
				     (int64_t)(files ? s[i]->files :
						       s[i]->rows));
	ph_jw_obj_end(w);
}

/* Where a line is: {"input":..,"line":..,"byte":..,"reason":..}; the
 * input by its name when the manifest has the names. */
static void line_at_json(struct ph_jw *w, const struct ph_iot_manifest *m,
			 const struct ph_iot_line_at *at)
{
	ph_jw_obj_begin(w);
	if (at->input < m->n_inputs)
		ph_jw_kv_str(w, "input", m->inputs[at->input]);
	else
		ph_jw_kv_int(w, "input", (int64_t)at->input);
	ph_jw_kv_int(w, "line", (int64_t)at->line);
	ph_jw_kv_int(w, "byte", (int64_t)at->offset);
	ph_jw_kv_str(w, "reason",
		     at->why < PH_IOT_BAD_COUNT ? ph_iot_bad_name(at->why) :
		     at->why == PH_IOT_AT_OTHER_EVENT ? "other_event" :
							"not_an_event");
	ph_jw_obj_end(w);
}

static void parse_json(struct ph_jw *w, const struct ph_iot_manifest *m,
		       const struct ph_iot_parse_stats *st)
{
	ph_jw_key(w, "parse");
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "bytes", (int64_t)st->bytes);
	ph_jw_kv_int(w, "lines", (int64_t)st->lines);
	ph_jw_key(w, "block_events");
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "block_rq_issue", (int64_t)st->block[PH_IOT_EV_ISSUE]);
	ph_jw_kv_int(w, "block_rq_complete",
		     (int64_t)st->block[PH_IOT_EV_COMPLETE]);
	ph_jw_kv_int(w, "block_rq_insert",
		     (int64_t)st->block[PH_IOT_EV_INSERT]);
	ph_jw_kv_int(w, "block_rq_requeue",
		     (int64_t)st->block[PH_IOT_EV_REQUEUE]);
	ph_jw_obj_end(w);
	ph_jw_kv_int(w, "other_events", (int64_t)st->other_events);
	ph_jw_kv_int(w, "comments", (int64_t)st->comments);
	ph_jw_kv_int(w, "blank", (int64_t)st->blank);
	ph_jw_kv_int(w, "html", (int64_t)st->html);
	ph_jw_kv_int(w, "not_ftrace", (int64_t)st->unknown);
	ph_jw_kv_int(w, "lost_markers", (int64_t)st->lost_markers);
	ph_jw_kv_int(w, "too_long", (int64_t)st->too_long);
	ph_jw_kv_int(w, "rwbs_unknown_letters", (int64_t)st->rwbs_unknown);
	ph_jw_key(w, "malformed");
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "total", (int64_t)st->malformed);
	ph_jw_key(w, "by_reason");
	ph_jw_obj_begin(w);
	for (int i = 0; i < PH_IOT_BAD_COUNT; i++)
		if (st->bad[i])
			ph_jw_kv_int(w, ph_iot_bad_name(i),
				     (int64_t)st->bad[i]);
	ph_jw_obj_end(w);
	if (st->n_bad_at) {
		ph_jw_key(w, "first");
		ph_jw_arr_begin(w);
		for (uint32_t i = 0; i < st->n_bad_at; i++)
			line_at_json(w, m, &st->bad_at[i]);
		ph_jw_arr_end(w);
	}
	ph_jw_obj_end(w);
	if (st->torn) {
		ph_jw_key(w, "torn_last_line");
		line_at_json(w, m, &st->torn_at);
	}
	ph_jw_obj_end(w);
}

static void pairing_json(struct ph_jw *w, const struct ph_iot_text_reader *s)
{
	const struct ph_iot_pair_stats *p = &s->pair.st;

	ph_jw_key(w, "pairing");
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "paired", (int64_t)p->paired);
	ph_jw_kv_int(w, "paired_flushes", (int64_t)p->paired_flushes);
	ph_jw_kv_int(w, "completions_without_issue", (int64_t)p->unmatched);
	ph_jw_kv_int(w, "issues_in_flight_at_end",
		     (int64_t)ph_iot_pairer_inflight(&s->pair));
	ph_jw_kv_int(w, "inserts_pending_at_end",
		     (int64_t)s->pair.inserted.count);
	ph_jw_kv_int(w, "reissued_while_in_flight",
		     (int64_t)p->reissued_inflight);
	ph_jw_kv_int(w, "requeued", (int64_t)p->requeued);
	ph_jw_kv_int(w, "queue_latency_paired", (int64_t)p->queue_paired);
	ph_jw_kv_int(w, "negative_latency", (int64_t)p->negative_latency);
	ph_jw_kv_int(w, "expired_issues", (int64_t)p->expired_issues);
	ph_jw_kv_int(w, "expired_inserts", (int64_t)p->expired_inserts);
	ph_jw_kv_int(w, "dropped_table_full", (int64_t)p->dropped_full);
	ph_jw_kv_int(w, "completion_errors", (int64_t)p->errors);
	ph_jw_key(w, "errors_by_code");
	ph_jw_obj_begin(w);
	for (size_t i = 0; i < PH_ARRAY_SIZE(p->error_codes); i++) {
		char k[16];

		if (!p->error_codes[i].count)
			break;
		snprintf(k, sizeof(k), "%d", p->error_codes[i].code);
		ph_jw_kv_int(w, k, (int64_t)p->error_codes[i].count);
	}
	if (p->error_other)
		ph_jw_kv_int(w, "other", (int64_t)p->error_other);
	ph_jw_obj_end(w);
	ph_jw_obj_end(w);
}

/*
 * Events lost, from the manifest's sources.  The kernel's per-CPU stats
 * and what the reader saw (pages marked as following lost events, text
 * `[LOST N EVENTS]` lines) are two views of the same losses, so they are
 * not added: the larger is the count.  A saved `trace` file's header
 * (entries written beyond those still in the buffer) is a third view,
 * used only offline, where there are no stats.
 */
uint64_t ph_iot_total_lost(const struct ph_iot_manifest *m)
{
	const struct ph_iot_parse_stats *st =
		m->text_reader ? &m->text_reader->st : NULL;
	uint64_t kernel = 0, reader = 0, header = 0;

	for (size_t i = 0; i < m->n_loss; i++)
		kernel += m->loss[i].overrun + m->loss[i].commit_overrun +
			  m->loss[i].dropped;
	if (m->raw)
		reader += m->raw->missed_events;
	if (st) {
		reader += st->lost_events;
		if (st->header_written > st->header_in_buffer)
			header = (uint64_t)(st->header_written -
					    st->header_in_buffer);
	}
	if (reader > kernel)
		kernel = reader;
	return kernel > header ? kernel : header;
}

static void loss_json(struct ph_jw *w, const struct ph_iot_manifest *m)
{
	const struct ph_iot_parse_stats *st =
		m->text_reader ? &m->text_reader->st : NULL;
	uint64_t over = 0, commit = 0, dropped = 0, read = 0;
	bool have_read = m->n_loss > 0;

	for (size_t i = 0; i < m->n_loss; i++) {
		over += m->loss[i].overrun;
		commit += m->loss[i].commit_overrun;
		dropped += m->loss[i].dropped;
		read += m->loss[i].read;
		have_read = have_read && m->loss[i].have_read;
	}
	ph_jw_key(w, "ftrace_loss");
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "source",
		     m->loss ? "tracefs per_cpu/cpuN/stats" : "the trace text");
	if (m->loss) {
		ph_jw_kv_int(w, "overrun", (int64_t)over);
		ph_jw_kv_int(w, "commit_overrun", (int64_t)commit);
		ph_jw_kv_int(w, "dropped_events", (int64_t)dropped);
		if (have_read)
			ph_jw_kv_int(w, "kernel_read_events", (int64_t)read);
		ph_jw_key(w, "per_cpu");
		ph_jw_arr_begin(w);
		for (size_t i = 0; i < m->n_loss; i++) {
			ph_jw_obj_begin(w);
			ph_jw_kv_int(w, "cpu", (int64_t)i);
			ph_jw_kv_int(w, "overrun", (int64_t)m->loss[i].overrun);
			ph_jw_kv_int(w, "commit_overrun",
				     (int64_t)m->loss[i].commit_overrun);
			ph_jw_kv_int(w, "dropped_events",
				     (int64_t)m->loss[i].dropped);
			ph_jw_kv_int(w, "entries_left",
				     (int64_t)m->loss[i].entries);
			if (m->loss[i].have_read)
				ph_jw_kv_int(w, "read_events",
					     (int64_t)m->loss[i].read);
			ph_jw_obj_end(w);
		}
		ph_jw_arr_end(w);
	}
	if (m->raw) {
		ph_jw_kv_int(w, "lost_events_in_pages",
			     (int64_t)m->raw->missed_events);
		/* every event the kernel handed over was decoded: the
		 * binary reader's count beside the kernel's */
		ph_jw_kv_int(w, "events_decoded",
			     (int64_t)(m->raw->events + m->raw->other_events +
				       m->raw->bad_events));
	}
	if (st) {
		ph_jw_kv_int(w, "lost_event_markers",
			     (int64_t)st->lost_markers);
		ph_jw_kv_int(w, "lost_events_in_markers",
			     (int64_t)st->lost_events);
		if (st->header_written >= 0) {
			ph_jw_kv_int(w, "trace_header_entries_in_buffer",
				     st->header_in_buffer);
			ph_jw_kv_int(w, "trace_header_entries_written",
				     st->header_written);
		}
	}
	ph_jw_kv_int(w, "total_lost", (int64_t)ph_iot_total_lost(m));
	ph_jw_obj_end(w);
}

static void tracefs_json(struct ph_jw *w, const struct ph_iot_manifest *m)
{
	ph_jw_key(w, "tracefs");
	if (!m->tracefs_root) {
		ph_jw_null(w);
		return;
	}
	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "root", m->tracefs_root);
	str_or_null(w, "instance", m->tracefs_instance);
	ph_jw_kv_bool(w, "mounted_by_porthole", m->tracefs_mounted);
	ph_jw_kv_str(w, "trace_clock", "mono");
	ph_jw_kv_int(w, "buffer_size_kb", m->buffer_size_kb);
	str_or_null(w, "reader", m->reader);
	ph_jw_kv_bool(w, "state_restored", m->restored);
	if (m->raw) {
		ph_jw_key(w, "binary");
		ph_jw_obj_begin(w);
		ph_jw_kv_int(w, "pages", (int64_t)m->raw->pages);
		ph_jw_kv_int(w, "block_events", (int64_t)m->raw->events);
		ph_jw_kv_int(w, "other_events", (int64_t)m->raw->other_events);
		ph_jw_kv_int(w, "malformed_events",
			     (int64_t)m->raw->bad_events);
		ph_jw_kv_int(w, "malformed_pages", (int64_t)m->raw->bad_pages);
		ph_jw_kv_int(w, "pages_after_lost_events",
			     (int64_t)m->raw->missed_pages);
		ph_jw_obj_end(w);
	}
	ph_jw_obj_end(w);
}

int ph_iot_json_pretty(const struct ph_buf *in, struct ph_buf *out)
{
	int depth = 0, rc = 0;
	bool str = false, esc = false;

	for (size_t i = 0; i < in->len && !rc; i++) {
		char ch = in->buf[i];

		if (str) {
			rc = ph_buf_addch(out, ch);
			if (esc)
				esc = false;
			else if (ch == '\\')
				esc = true;
			else if (ch == '"')
				str = false;
			continue;
		}
		switch (ch) {
		case '"':
			str = true;
			rc = ph_buf_addch(out, ch);
			break;
		case '{':
		case '[':
			rc = ph_buf_addch(out, ch);
			if (i + 1 < in->len &&
			    (in->buf[i + 1] == '}' || in->buf[i + 1] == ']'))
				break;
			depth++;
			rc = rc ? rc : ph_buf_addf(out, "\n%*s", 2 * depth, "");
			break;
		case '}':
		case ']':
			if (i > 0 && in->buf[i - 1] != '{' &&
			    in->buf[i - 1] != '[') {
				depth--;
				rc = ph_buf_addf(out, "\n%*s", 2 * depth, "");
			}
			rc = rc ? rc : ph_buf_addch(out, ch);
			break;
		case ',': rc = ph_buf_addf(out, ",\n%*s", 2 * depth, ""); break;
		case ':': rc = ph_buf_add(out, ": ", 2); break;
		default: rc = ph_buf_addch(out, ch);
		}
	}
	return rc ? rc : ph_buf_addch(out, '\n');
}

int ph_iot_manifest_write(const char *dir, const struct ph_iot_manifest *m)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	char path[PATH_MAX];
	struct ph_jw w;
	int rc;

	ph_jw_init(&w, &b);
	ph_jw_obj_begin(&w);
	ph_iot_schema_json(&w);
	str_or_null(&w, "machine_id", m->machine_id);
	wall(&w, "session_start", m->offset_ns, m->start_mono_ns);
	wall(&w, "session_end", m->offset_ns, m->end_mono_ns);
	ph_jw_kv_str(&w, "platform", "linux");
	ph_jw_kv_str(&w, "collector", m->collector);
	ph_jw_kv_str(&w, "mode", m->mode);
	str_or_null(&w, "snapshot_only_reason", m->reason);
	str_or_null(&w, "kernel_release", m->kernel_release);
	clock_json(&w, m);
	per_stream(&w, "rows_written", m, false);
	per_stream(&w, "files_written", m, true);
	ph_jw_kv_str(&w, "compression",
		     ph_iot_compression_name(m->compression));
	if (m->n_inputs) {
		ph_jw_key(&w, "inputs");
		ph_jw_arr_begin(&w);
		for (size_t i = 0; i < m->n_inputs; i++)
			ph_jw_str(&w, m->inputs[i]);
		ph_jw_arr_end(&w);
	}
	ph_jw_key(&w, "events_enabled");
	ph_jw_arr_begin(&w);
	for (size_t i = 0; i < m->n_events; i++)
		ph_jw_str(&w, m->events[i]);
	ph_jw_arr_end(&w);
	tracefs_json(&w, m);
	if (m->text_reader) {
		parse_json(&w, m, &m->text_reader->st);
		pairing_json(&w, m->text_reader);
		/* the names io-tracer's own manifests use */
		ph_jw_kv_int(&w, "lines_seen",
			     (int64_t)m->text_reader->st.lines);
		ph_jw_kv_int(
			&w, "block_inflight_unmatched",
			(int64_t)ph_iot_pairer_inflight(&m->text_reader->pair));
	}
	loss_json(&w, m);
	ph_jw_kv_int(&w, "process_snapshots", (int64_t)m->snapshots);
	ph_jw_key(&w, "collector_cpu_ms");
	if (m->self_cpu_ns >= 0)
		ph_jw_double(&w, (double)m->self_cpu_ns / 1e6);
	else
		ph_jw_null(&w);
	if (m->have_nice)
		ph_jw_kv_int(&w, "collector_nice", m->nice);
	ph_jw_obj_end(&w);
	rc = ph_jw_finish(&w);
	if (!rc)
		rc = ph_iot_json_pretty(&b, &out);
	ph_buf_release(&b);
	if (rc) {
		ph_buf_release(&out);
		return ph_error(rc, "manifest: out of memory");
	}
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	rc = ph_iot_write_file(path, out.buf, out.len);
	ph_buf_release(&out);
	return rc;
}

int ph_iot_write_file(const char *path, const char *buf, size_t n)
{
	char tmp[PATH_MAX + 8];
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.part", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return ph_error(PH_EIO, "open %s: %s", tmp, strerror(errno));
	for (size_t off = 0; off < n;) {
		ssize_t k = write(fd, buf + off, n - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = ph_error(PH_EIO, "write %s: %s", tmp,
				      strerror(errno));
			break;
		}
		off += (size_t)k;
	}
	if (close(fd) && !rc)
		rc = ph_error(PH_EIO, "close %s: %s", tmp, strerror(errno));
	if (!rc && rename(tmp, path))
		rc = ph_error(PH_EIO, "rename %s: %s", tmp, strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}

void ph_iot_machine_id(char *buf)
{
	static const char *const paths[] = {
		"/etc/machine-id",
		"/proc/sys/kernel/random/boot_id",
		"/proc/sys/kernel/hostname",
	};
	char raw[256];
	uint8_t h[32];
	size_t n = 0;

	for (size_t i = 0; i < PH_ARRAY_SIZE(paths) && !n; i++) {
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		ssize_t k;

		if (fd < 0)
			continue;
		k = read(fd, raw, sizeof(raw) - 1);
		close(fd);
		n = k > 0 ? (size_t)k : 0;
		while (n && (raw[n - 1] == '\n' || raw[n - 1] == ' '))
			n--;
	}
	if (!n) {
		memcpy(raw, "unknown-device", 14);
		n = 14;
	}
	ph_iot_sha256(raw, n, h);
	memset(raw, 0, sizeof(raw));
	for (int i = 0; i < 8; i++)
		snprintf(buf + 2 * i, 3, "%02X", h[i]);
}
