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
/* cmd-iotrace-attach.c */
int ph_cmd_iotrace_attach(int argc, char **argv);

static int usage(const char *fmt, ...) PH_PRINTF(1, 2);

static int usage(const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return ph_cmd_usage_error(&ph_cmd_iotrace, "%s", why);
}

/* The value of an option that takes one; NULL (and a message) if absent. */
static const char *value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		usage("%s needs a value", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

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

/* Options both record and parse take; returns 1 when it took argv[*i]. */
static int common_opt(int argc, char **argv, int *i, const char **out,
		      enum ph_iot_compression *c, uint64_t *rotate, int *bad)
{
	const char *a = argv[*i], *v;
	double mb;

	if (!strcmp(a, "--gzip")) {
		*c = PH_IOT_GZIP;
	} else if (!strcmp(a, "--zstd")) {
		*c = PH_IOT_ZSTD;
	} else if (!strcmp(a, "--out") || !strcmp(a, "-o")) {
		if (!(*out = value(argc, argv, i)))
			*bad = 1;
	} else if (!strcmp(a, "--rotate-mb")) {
		if (!(v = value(argc, argv, i)) || !number(v, &mb) || mb < 1) {
			if (v)
				usage("--rotate-mb: '%s' is not a size of at "
				      "least 1",
				      v);
			*bad = 1;
		} else {
			*rotate = (uint64_t)(mb * 1024 * 1024);
		}
	} else {
		return 0;
	}
	return 1;
}

static int do_parse(int argc, char **argv)
{
	struct ph_iot_parse_opts o = { 0 };
	const char **inputs = calloc((size_t)argc + 1, sizeof(*inputs));
	int bad = 0, rc;

	if (!inputs)
		return 2;
	o.compression = PH_IOT_GZIP;
	o.rotate_bytes = PH_IOT_ROTATE_DEFAULT;
	o.out_dir = "iotrace-out";
	for (int i = 1; i < argc && !bad; i++) {
		const char *a = argv[i], *v;

		if (common_opt(argc, argv, &i, &o.out_dir, &o.compression,
			       &o.rotate_bytes, &bad))
			continue;
		if (!strcmp(a, "--mono-to-real-offset-ns")) {
			if (!(v = value(argc, argv, &i)) ||
			    !ph_cmd_int(v, &o.offset_ns)) {
				if (v)
					usage("'%s' is not a whole number of "
					      "nanoseconds",
					      v);
				bad = 1;
			}
			o.have_offset = true;
		} else if (a[0] == '-' && a[1]) {
			bad = 1;
			usage("parse: unknown option '%s'", a);
		} else {
			inputs[o.n_inputs++] = a;
		}
	}
	if (!bad && !o.n_inputs) {
		bad = 1;
		usage("%s", "parse: which ftrace text? (FILE..., or - for "
			    "standard input)");
	}
	if (bad) {
		free(inputs);
		return 2;
	}
	o.inputs = inputs;
	o.report = stdout;
	rc = ph_iot_parse_files(&o);
	free(inputs);
	return rc ? 2 : 0;
}

static int do_record(int argc, char **argv)
{
	struct ph_iot_record_opts o = { 0 };
	int bad = 0;

	o.compression = PH_IOT_GZIP;
	o.rotate_bytes = PH_IOT_ROTATE_DEFAULT;
	o.snapshots = true;
	o.snapshot_interval = 60;
	o.buffer_kb = 4096;
	o.set_nice = true;
	o.nice = -10;
	o.out_dir = NULL;
	for (int i = 1; i < argc && !bad; i++) {
		const char *a = argv[i], *v;

		if (common_opt(argc, argv, &i, &o.out_dir, &o.compression,
			       &o.rotate_bytes, &bad))
			continue;
		if (!strcmp(a, "--seconds")) {
			if (!(v = value(argc, argv, &i)) ||
			    !number(v, &o.seconds)) {
				if (v)
					usage("--seconds: '%s' is not a "
					      "duration",
					      v);
				bad = 1;
			}
		} else if (!strcmp(a, "--no-snapshots")) {
			o.snapshots = false;
		} else if (!strcmp(a, "--snapshot-interval")) {
			if (!(v = value(argc, argv, &i)) ||
			    !number(v, &o.snapshot_interval) ||
			    o.snapshot_interval < 1) {
				if (v)
					usage("--snapshot-interval: '%s' is "
					      "not at least 1 second",
					      v);
				bad = 1;
			}
		} else if (!strcmp(a, "--tracefs")) {
			if (!(o.tracefs = value(argc, argv, &i)))
				bad = 1;
		} else if (!strcmp(a, "--buffer-kb")) {
			if (!(v = value(argc, argv, &i)) ||
			    !ph_cmd_int(v, &o.buffer_kb) || o.buffer_kb < 64) {
				if (v)
					usage("--buffer-kb: '%s' is not at "
					      "least 64",
					      v);
				bad = 1;
			}
		} else if (!strcmp(a, "--nice")) {
			int64_t n = 0;

			if (!(v = value(argc, argv, &i)) ||
			    !ph_cmd_int(v, &n) || n < -20 || n > 19) {
				if (v)
					usage("--nice: '%s' is not a nice "
					      "value (-20..19)",
					      v);
				bad = 1;
			}
			o.nice = (int)n;
		} else if (!strcmp(a, "--top-level")) {
			o.top_level = true;
		} else if (!strcmp(a, "--text")) {
			o.text = true;
		} else {
			bad = 1;
			usage("record: unknown argument '%s'", a);
		}
	}
	if (bad)
		return 2;
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

static int do_summary(int argc, char **argv)
{
	const char *cs;
	bool utf8 = false;

	if (argc != 2 || argv[1][0] == '-')
		return usage("%s", "summary: which recording? "
				   "(porthole iotrace summary DIR)");
	setlocale(LC_CTYPE, "");
	cs = nl_langinfo(CODESET);
	utf8 = cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
	return ph_iot_summary(argv[1], stdout, utf8) ? 2 : 0;
}

static int iotrace_exec(int argc, char **argv)
{
	if (argc < 2)
		return usage("%s", "which subcommand? (record, parse, "
				   "summary, attach)");
	if (!strcmp(argv[1], "record"))
		return do_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "parse"))
		return do_parse(argc - 1, argv + 1);
	if (!strcmp(argv[1], "summary"))
		return do_summary(argc - 1, argv + 1);
	if (!strcmp(argv[1], "attach"))
		return ph_cmd_iotrace_attach(argc - 1, argv + 1);
	return usage("no subcommand '%s' (record, parse, summary, attach)",
		     argv[1]);
}

const struct ph_cmd ph_cmd_iotrace = {
	.name = "iotrace",
	.summary = "block I/O latency from tracefs, as io-tracer schema-v3 CSV",
	.usage =
		"porthole iotrace record|parse|summary|attach ...\n"
		"\n"
		"  porthole iotrace record [--seconds N] [--out DIR] "
		"[--gzip|--zstd]\n"
		"                          [--no-snapshots] "
		"[--snapshot-interval S]\n"
		"                          [--buffer-kb KB] [--tracefs PATH] "
		"[--top-level] [--text]\n"
		"                          [--nice N]\n"
		"      Records every block request's device latency (root). "
		"Until N seconds\n"
		"      pass or SIGINT/SIGTERM; tracefs is left exactly as it "
		"was found.\n"
		"      Runs at nice -10 (--nice N) so a busy machine cannot "
		"starve it.\n"
		"  porthole iotrace parse FILE... [--out DIR] [--gzip|--zstd]\n"
		"                         [--mono-to-real-offset-ns NS]\n"
		"      Converts saved ftrace text (trace, trace_pipe, systrace "
		"HTML; plain,\n"
		"      .gz or .zst; - reads standard input) the same way.\n"
		"  porthole iotrace summary DIR\n"
		"      Latency per device and operation, the busiest "
		"processes, a histogram.\n"
		"  porthole iotrace attach SESSION DIR [--app-only] [--max N]"
		"\n"
		"                          [--offset-ms MS] [--pid PID]\n"
		"      Adds the recording's block requests in the session's "
		"window to the\n"
		"      session as io events (the app's first, then others', "
		"at most N,\n"
		"      default 20000, 0 no cap), for its timeline, findings "
		"and MCP.\n"
		"      SESSION: a session id, or its directory. Never adds a "
		"request twice.\n"
		"\n"
		"  Both writers also take --rotate-mb MB (CSV size per file, "
		"default 64).\n"
		"  DIR: manifest.json, ds/ds_*.csv.gz, process/process_*.csv.gz,"
		" system_spec/.",
	.exec = iotrace_exec,
};
