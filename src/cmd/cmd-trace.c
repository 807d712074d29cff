/* porthole trace: system traces into SQLite, and the detectors over them. */
#include "ph_common.h"
#include "cmd.h"
#include "trace/trace_cli.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subs[] = {
	{ "stats", ph_trace_cli_stats },
	{ "query", ph_trace_cli_query },
	{ "analyze", ph_trace_cli_analyze },
	{ "compare", ph_trace_cli_compare },
	{ "record", ph_trace_cli_record },
	{ "doctor", ph_trace_cli_doctor },
	{ "ask", ph_trace_cli_ask },
	{ "mark", ph_trace_cli_mark },
	{ "names", ph_trace_cli_names },
	{ "calibrate", ph_trace_cli_calibrate },
};

extern const struct ph_cmd ph_cmd_trace;

static int trace_exec(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(ph_cmd_trace.usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < PH_ARRAY_SIZE(subs); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1);
	return ph_cmd_usage_error(&ph_cmd_trace, "unknown subcommand '%s'",
				  argv[1]);
}

const struct ph_cmd ph_cmd_trace = {
	.name = "trace",
	.summary = "read Perfetto and ftrace traces; run SQL and detectors",
	.usage =
		"porthole trace stats|query|analyze|ask|compare|record|doctor|"
		"mark|names|calibrate ...\n"
		"  stats TRACE [--json]\n"
		"  query TRACE SQL [--csv|--json]\n"
		"  analyze TRACE [--process NAME] [--from NS --to NS] "
		"[--start NAME --end NAME] [--set k=v] [--out DIR] "
		"[--detectors DIR]\n"
		"  analyze TRACE1 TRACE2 ...  (repeats: rows folded, medians)\n"
		"  ask TRACE [--process NAME] [--from NS --to NS] "
		"[--question Q]... [--json]\n"
		"  compare BASE.json NEW.json [--floor-ms MS] [--floor-pct P] "
		"[--json]\n"
		"  record --seconds N --out FILE [--application-id ID]\n"
		"  doctor\n"
		"  mark TRACE [--process NAME] [--min-ms MS] [--gap-ms MS] "
		"[--json]\n"
		"  names TRACE [--process NAME] [--json]\n"
		"  calibrate TRACE --detector ID [--param NAME] "
		"[--process NAME] [--json]\n",
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = trace_exec,
};
