/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole iotrace: block I/O from tracefs, paired issue -> complete, to
 * io-tracer schema-v3 CSV (src/iotrace/iotrace.h; docs/iotrace.md).
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_error.h"
#include "iotrace/iotrace.h"

#include <langinfo.h>
#include <time.h>
#include <locale.h>

extern const struct ph_cmd ph_cmd_iotrace;
extern const struct ph_cmd ph_cmd_iotrace_record;
extern const struct ph_cmd ph_cmd_iotrace_parse;
extern const struct ph_cmd ph_cmd_iotrace_summary;
extern const struct ph_cmd ph_cmd_iotrace_attach; /* cmd-iotrace-attach.c */

/* A decimal number of at least 0 (seconds). */
static bool number(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0)
		return false;
	*out = v;
	return true;
}

/* PH_IOT_ROTATE_DEFAULT in MB, as --rotate-mb says it */
#define ROTATE_MB_DEFAULT ((double)PH_IOT_ROTATE_DEFAULT / (1024 * 1024))
#define WRITER_DEFAULTS \
	.compression = PH_IOT_GZIP, .rotate_mb = ROTATE_MB_DEFAULT

/* Both writers' options: where the CSV goes and how it is packed. */
struct writer_args {
	const char *out;
	int compression; /* enum ph_iot_compression: the last one given */
	double rotate_mb;
};

#define WRITER_OPTS(T)                                                                                    \
	{                                                                                                 \
		.name = "out",                                                                            \
		.short_name = 'o',                                                                        \
		.kind = PH_OPT_STR,                                                                       \
		.offset = offsetof(T, w.out),                                                             \
		.metavar = "DIR",                                                                         \
		.help = "the recording's directory (record: iotrace-YYYYMMDD-HHMMSS; parse: iotrace-out)" \
	},                                                                                                \
		{ .name = "gzip",                                                                         \
		  .kind = PH_OPT_CONST,                                                                   \
		  .offset = offsetof(T, w.compression),                                                   \
		  .value = PH_IOT_GZIP,                                                                   \
		  .help = "gzip the CSV files (the default)" },                                           \
		{ .name = "zstd",                                                                         \
		  .kind = PH_OPT_CONST,                                                                   \
		  .offset = offsetof(T, w.compression),                                                   \
		  .value = PH_IOT_ZSTD,                                                                   \
		  .help = "zstd the CSV files instead" },                                                 \
	{                                                                                                 \
		.name = "rotate-mb", .kind = PH_OPT_NUM,                                                  \
		.offset = offsetof(T, w.rotate_mb), .metavar = "MB",                                      \
		.help = "CSV size per file (default 64, at least 1)"                                      \
	}

/* The writer options into the engine's fields: 0, or 2 after a usage error. */
static int writer_check(const struct ph_cmd *cmd, const struct writer_args *w,
			enum ph_iot_compression *c, uint64_t *rotate)
{
	if (w->rotate_mb < 1)
		return ph_cmd_usage_error(cmd,
					  "--rotate-mb: '%g' is not a size of "
					  "at least 1",
					  w->rotate_mb);
	*rotate = (uint64_t)(w->rotate_mb * 1024 * 1024);
	*c = (enum ph_iot_compression)w->compression;
	return 0;
}

struct parse_args {
	struct writer_args w;
	const char *offset_ns;
};

static const struct ph_opt parse_opts[] = {
	WRITER_OPTS(struct parse_args),
	{ .name = "mono-to-real-offset-ns",
	  .kind = PH_OPT_STR,
	  .offset = offsetof(struct parse_args, offset_ns),
	  .metavar = "NS",
	  .help = "the clock offset to record, when the text does not carry "
		  "it" },
	{ .kind = PH_OPT_END },
};

static int do_parse(int argc, char **argv)
{
	const struct ph_cmd *self = &ph_cmd_iotrace_parse;
	struct ph_iot_parse_opts o = { 0 };
	struct parse_args args = { .w = { .out = "iotrace-out",
					  WRITER_DEFAULTS } };
	struct ph_opt_args pa;
	int rc = ph_cmd_parse(self, &args, argc, argv, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (writer_check(self, &args.w, &o.compression, &o.rotate_bytes))
		return 2;
	o.out_dir = args.w.out;
	if (args.offset_ns) {
		if (!ph_cmd_int(args.offset_ns, &o.offset_ns))
			return ph_cmd_usage_error(self,
						  "'%s' is not a whole number "
						  "of nanoseconds",
						  args.offset_ns);
		o.have_offset = true;
	}
	if (!pa.npos)
		return ph_cmd_usage_error(self, "which ftrace text? (FILE..., "
						"or - for standard input)");
	o.inputs = (const char **)pa.pos;
	o.n_inputs = (size_t)pa.npos;
	o.report = stdout;
	rc = ph_iot_parse_files(&o);
	return rc ? 2 : 0;
}

struct record_args {
	struct writer_args w;
	const char *seconds; /* checked below, with its own message */
	double snapshot_interval;
	bool no_snapshots, top_level, text;
	const char *tracefs;
	int64_t buffer_kb, nice;
};

#define OFF(f) offsetof(struct record_args, f)
static const struct ph_opt record_opts[] = {
	{ .name = "seconds",
	  .kind = PH_OPT_STR,
	  .offset = OFF(seconds),
	  .metavar = "N",
	  .help = "stop after N seconds (default: at SIGINT or SIGTERM)" },
	WRITER_OPTS(struct record_args),
	{ .name = "no-snapshots",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(no_snapshots),
	  .help = "take no process snapshots" },
	{ .name = "snapshot-interval",
	  .kind = PH_OPT_NUM,
	  .offset = OFF(snapshot_interval),
	  .metavar = "S",
	  .help = "seconds between process snapshots (default 60, at least "
		  "1)" },
	{ .name = "buffer-kb",
	  .kind = PH_OPT_INT,
	  .offset = OFF(buffer_kb),
	  .metavar = "KB",
	  .help = "the ring buffer per CPU (default 4096, at least 64)" },
	{ .name = "tracefs",
	  .kind = PH_OPT_STR,
	  .offset = OFF(tracefs),
	  .metavar = "PATH",
	  .help = "tracefs's mount point (default: found)" },
	{ .name = "top-level",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(top_level),
	  .help = "record in tracefs's top-level buffer, not an instance" },
	{ .name = "text",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(text),
	  .help = "read the text trace_pipe, not the binary one" },
	{ .name = "nice",
	  .kind = PH_OPT_INT,
	  .offset = OFF(nice),
	  .metavar = "N",
	  .help = "run at this nice value (-20..19, default -10) so a busy "
		  "machine cannot starve it" },
	{ .kind = PH_OPT_END },
};

static int do_record(int argc, char **argv)
{
	const struct ph_cmd *self = &ph_cmd_iotrace_record;
	struct ph_iot_record_opts o = { 0 };
	struct record_args args = { .w = { WRITER_DEFAULTS },
				    .snapshot_interval = 60,
				    .buffer_kb = 4096,
				    .nice = -10 };
	struct ph_opt_args pa;
	int rc = ph_cmd_parse(self, &args, argc, argv, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos)
		return ph_cmd_usage_error(self, "unknown argument '%s'",
					  pa.pos[0]);
	if (writer_check(self, &args.w, &o.compression, &o.rotate_bytes))
		return 2;
	if (args.seconds && !number(args.seconds, &o.seconds))
		return ph_cmd_usage_error(self,
					  "--seconds: '%s' is not a "
					  "duration",
					  args.seconds);
	if (args.snapshot_interval < 1)
		return ph_cmd_usage_error(self,
					  "--snapshot-interval: '%g' is not "
					  "at least 1 second",
					  args.snapshot_interval);
	if (args.buffer_kb < 64)
		return ph_cmd_usage_error(self,
					  "--buffer-kb: '%" PRId64 "' is not "
					  "at least 64",
					  args.buffer_kb);
	if (args.nice < -20 || args.nice > 19)
		return ph_cmd_usage_error(self,
					  "--nice: '%" PRId64 "' is not a "
					  "nice value (-20..19)",
					  args.nice);
	o.out_dir = args.w.out;
	o.snapshots = !args.no_snapshots;
	o.snapshot_interval = args.snapshot_interval;
	o.tracefs = args.tracefs;
	o.buffer_kb = args.buffer_kb;
	o.set_nice = true;
	o.nice = (int)args.nice;
	o.top_level = args.top_level;
	o.text = args.text;
	if (!o.out_dir) {
		static char dir[64];
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(dir, sizeof(dir), "iotrace-%Y%m%d-%H%M%S", &tm);
		o.out_dir = dir;
	}
	o.report = stdout;
	return ph_iot_record(&o) ? 2 : 0;
}

static const struct ph_opt summary_opts[] = { { .kind = PH_OPT_END } };

static int do_summary(int argc, char **argv)
{
	struct ph_opt_args pa;
	const char *cs;
	bool utf8 = false;
	int rc = ph_cmd_parse(&ph_cmd_iotrace_summary, NULL, argc, argv, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos != 1)
		return ph_cmd_usage_error(&ph_cmd_iotrace_summary,
					  "which recording? (porthole "
					  "iotrace summary DIR)");
	setlocale(LC_CTYPE, "");
	cs = nl_langinfo(CODESET);
	utf8 = cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
	return ph_iot_summary(pa.pos[0], stdout, utf8) ? 2 : 0;
}

static int iotrace_exec(int argc, char **argv)
{
	return ph_cmd_run_verb(&ph_cmd_iotrace, argc, argv);
}

const struct ph_cmd ph_cmd_iotrace_record = {
	.name = "iotrace record",
	.summary = "record every block request's device latency (root), "
		   "until N seconds pass or SIGINT/SIGTERM",
	.opts = record_opts,
	.about = "tracefs is left exactly as it was found.",
	.exec = do_record,
};

const struct ph_cmd ph_cmd_iotrace_parse = {
	.name = "iotrace parse",
	.summary = "convert saved ftrace text (trace, trace_pipe, systrace "
		   "HTML; plain, .gz or .zst; - reads standard input) the "
		   "same way",
	.args = "FILE...",
	.opts = parse_opts,
	.exec = do_parse,
};

const struct ph_cmd ph_cmd_iotrace_summary = {
	.name = "iotrace summary",
	.summary = "latency per device and operation, the busiest processes, "
		   "a histogram",
	.args = "DIR",
	.opts = summary_opts,
	.exec = do_summary,
};

const struct ph_cmd ph_cmd_iotrace = {
	.name = "iotrace",
	.summary = "block I/O latency from tracefs, as io-tracer schema-v3 CSV",
	.verbs = (const struct ph_cmd *const[]){ &ph_cmd_iotrace_record,
						 &ph_cmd_iotrace_parse,
						 &ph_cmd_iotrace_summary,
						 &ph_cmd_iotrace_attach, NULL },
	.about = "DIR: manifest.json, ds/ds_*.csv.gz, process/process_*.csv.gz,"
		 " system_spec/.",
	.exec = iotrace_exec,
};
