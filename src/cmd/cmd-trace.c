/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole trace: system traces into SQLite, and the detectors over them.
 *
 * Each verb's engine (src/trace/trace_cli.h) parses its own argv; the
 * tables here state the options it takes, for --help and docs/cli.md
 * (PH_CMD_ENGINE_PARSES).
 */
#include "ph_common.h"
#include "cmd.h"
#include "trace/trace_cli.h"

extern const struct ph_cmd ph_cmd_trace;

/* The engines parse: these tables only describe, so no offsets. */
#define DOC_STR(n, mv, h)                                               \
	{                                                               \
		.name = n, .kind = PH_OPT_STR, .metavar = mv, .help = h \
	}
#define DOC_MANY(n, mv, h)                                               \
	{                                                                \
		.name = n, .kind = PH_OPT_STR, .metavar = mv, .help = h, \
		.flags = PH_OPT_REPEATS                                  \
	}
#define DOC_FLAG(n, h)                                    \
	{                                                 \
		.name = n, .kind = PH_OPT_BOOL, .help = h \
	}
#define DOC_END                    \
	{                          \
		.kind = PH_OPT_END \
	}

static const struct ph_opt stats_opts[] = {
	DOC_FLAG("json", "one JSON object"),
	DOC_END,
};

static const struct ph_opt query_opts[] = {
	DOC_FLAG("csv", "the rows as CSV"),
	DOC_FLAG("json", "the rows as JSON"),
	DOC_END,
};

/* The options several verbs share: the process, the detectors' SQL, the
 * window (analyze, ask) and the detectors' parameters. */
#define PROCESS_OPT                    \
	DOC_STR("process", "NAME|PID", \
		"the app's process: a pid, else a name or part of one")
#define DETECTORS_OPT               \
	DOC_STR("detectors", "DIR", \
		"the detectors' SQL (default the built-in set)")
#define SCOPE_OPTS                                                          \
	PROCESS_OPT, DOC_STR("from", "NS", "the window's start, trace ns"), \
		DOC_STR("to", "NS", "the window's end, trace ns")
#define DETECTOR_OPTS                                                         \
	DOC_MANY("set", "k=v", "a detector parameter"),                       \
		DOC_STR("config", "FILE",                                     \
			"parameters from FILE (default porthole-trace.yml)"), \
		DETECTORS_OPT

static const struct ph_opt analyze_opts[] = {
	SCOPE_OPTS,
	DOC_STR("start", "NAME",
		"the window starts at the process's first slice named NAME"),
	DOC_STR("end", "NAME",
		"and ends at the end of the first slice named NAME after it"),
	DETECTOR_OPTS,
	DOC_STR("out", "DIR", "the report's directory (default trace-report)"),
	DOC_END,
};

static const struct ph_opt ask_opts[] = {
	SCOPE_OPTS,
	DOC_MANY("question", "Q",
		 "jank thread_states binder render slices startup "
		 "monitor_contention cpu (default all)"),
	DOC_FLAG("json", "one JSON object"),
	DETECTOR_OPTS,
	DOC_END,
};

static const struct ph_opt compare_opts[] = {
	DOC_STR("floor-ms", "MS",
		"changes smaller than this are noise (default 2)"),
	DOC_STR("floor-pct", "P",
		"and smaller than this percentage (default 10)"),
	DOC_FLAG("json", "one JSON object"),
	DOC_END,
};

static const struct ph_opt record_opts[] = {
	{ .name = "seconds",
	  .kind = PH_OPT_STR,
	  .metavar = "N",
	  .help = "how long to record, 0..86400",
	  .flags = PH_OPT_REQUIRED },
	{ .name = "out",
	  .kind = PH_OPT_STR,
	  .metavar = "FILE",
	  .help = "the trace file",
	  .flags = PH_OPT_REQUIRED },
	DOC_STR("application-id", "ID", "the app whose process is named"),
	DOC_MANY("pid", "PID", "a process to name in the trace (at most 64)"),
	DOC_END,
};

static const struct ph_opt doctor_opts[] = {
	DOC_FLAG("json", "one JSON object"),
	DETECTOR_OPTS,
	DOC_STR("write", "FILE",
		"also write the built-in fixture trace to FILE"),
	DOC_END,
};

#define VERB(var, word, a, o, sum, fn)                                    \
	static const struct ph_cmd var = { .name = "trace " word,         \
					   .summary = sum,                \
					   .args = a,                     \
					   .opts = o,                     \
					   .flags = PH_CMD_ENGINE_PARSES, \
					   .exec = fn }

VERB(trace_stats, "stats", "TRACE", stats_opts,
     "rows per table, clock, duration, decoder statistics", ph_trace_cli_stats);
VERB(trace_query, "query", "TRACE SQL", query_opts,
     "run SQL over a trace's tables", ph_trace_cli_query);
VERB(trace_analyze, "analyze", "TRACE [TRACE...]", analyze_opts,
     "run the detectors into DIR/report.md and report.json; several traces are repeats of one run, folded into medians",
     ph_trace_cli_analyze);
VERB(trace_ask, "ask", "TRACE", ask_opts,
     "the questions of the MCP tool ask_system_trace, over a process and a window",
     ph_trace_cli_ask);
VERB(trace_compare, "compare", "BASE.json NEW.json", compare_opts,
     "pair two analyze reports' rows; exit 1 when something is new or worse",
     ph_trace_cli_compare);
VERB(trace_record, "record", NULL, record_opts,
     "record a system trace from tracefs (root), restoring every setting it changed",
     ph_trace_cli_record);
VERB(trace_doctor, "doctor", NULL, doctor_opts,
     "run every detector on a built-in fixture with planted problems; exit 1 when one misses its problem",
     ph_trace_cli_doctor);

static const struct ph_opt mark_opts[] = {
	PROCESS_OPT,
	DOC_STR("min-ms", "MS",
		"the shortest slice or busy stretch proposed (default 100)"),
	DOC_STR("gap-ms", "MS",
		"a pause longer than this ends a busy stretch (default 100)"),
	DETECTORS_OPT,
	DOC_FLAG("json", "one JSON object"),
	DOC_END,
};

static const struct ph_opt names_opts[] = {
	PROCESS_OPT,
	DETECTORS_OPT,
	DOC_FLAG("json", "one JSON object"),
	DOC_END,
};

static const struct ph_opt calibrate_opts[] = {
	{ .name = "detector",
	  .kind = PH_OPT_STR,
	  .metavar = "ID",
	  .help = "the detector whose thresholds are tried",
	  .flags = PH_OPT_REQUIRED },
	DOC_STR("param", "NAME",
		"only this parameter (default every numeric one)"),
	PROCESS_OPT,
	DETECTORS_OPT,
	DOC_FLAG("json", "one JSON object"),
	DOC_END,
};

VERB(trace_mark, "mark", "TRACE", mark_opts,
     "propose scenario markers: candidate windows with the analyze arguments that select them",
     ph_trace_cli_mark);
VERB(trace_names, "names", "TRACE", names_opts,
     "which slice names each detector's name masks see, and the names no mask sees",
     ph_trace_cli_names);
VERB(trace_calibrate, "calibrate", "TRACE", calibrate_opts,
     "what a detector's thresholds would flag on this trace, at a quarter to four times their values",
     ph_trace_cli_calibrate);

static int trace_exec(int argc, char **argv)
{
	return ph_cmd_run_verb(&ph_cmd_trace, argc, argv);
}

const struct ph_cmd ph_cmd_trace = {
	.name = "trace",
	.summary = "read Perfetto and ftrace traces; run SQL and detectors",
	.verbs =
		(const struct ph_cmd *const[]){
			&trace_stats, &trace_query, &trace_analyze, &trace_ask,
			&trace_compare, &trace_record, &trace_doctor,
			&trace_mark, &trace_names, &trace_calibrate, NULL },
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = trace_exec,
};
