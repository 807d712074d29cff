/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole trace: system traces into SQLite, and the detectors over them.
 *
 * Each verb's table below names its options; the verb's exec parses argv
 * with it into struct trace_args, checks the values and calls the verb's
 * engine (src/trace/trace_cli.h) with an options struct.  The checks'
 * messages and the usage lines printed beside them are the verbs' own.
 */
#include "ph_common.h"
#include "cmd.h"
#include "trace/trace_cli.h"

extern const struct ph_cmd ph_cmd_trace;
/* cmd-trace-tools.c */
extern const struct ph_cmd ph_cmd_trace_mark, ph_cmd_trace_names,
	ph_cmd_trace_calibrate;

/*
 * Every trace verb's options; each verb's table names those it takes.
 * Numbers stay strings here: each verb checks its own and refuses a bad
 * one with its own message ("--from wants nanoseconds, not 'x'").
 */
struct trace_args {
	bool json;
	int rows; /* query: PH_TRACE_ROWS_*, the last of --csv/--json */
	const char *process, *from, *to, *start, *end;
	const char *config, *detectors, *out;
	struct ph_opt_strs set, question, pid;
	const char *floor_ms, *floor_pct, *seconds, *application_id, *write;
};

#define OFF(f) offsetof(struct trace_args, f)
#define OPT_STR(n, f, mv, h)                                     \
	{                                                        \
		.name = n, .kind = PH_OPT_STR, .offset = OFF(f), \
		.metavar = mv, .help = h                         \
	}
#define OPT_MANY(n, f, mv, h)                                     \
	{                                                         \
		.name = n, .kind = PH_OPT_STR, .offset = OFF(f),  \
		.metavar = mv, .help = h, .flags = PH_OPT_REPEATS \
	}
#define OPT_FLAG(n, f, h)                                                   \
	{                                                                   \
		.name = n, .kind = PH_OPT_BOOL, .offset = OFF(f), .help = h \
	}
#define OPT_END                    \
	{                          \
		.kind = PH_OPT_END \
	}

static const struct ph_opt stats_opts[] = {
	OPT_FLAG("json", json, "one JSON object"),
	OPT_END,
};

static const struct ph_opt query_opts[] = {
	{ .name = "csv",
	  .kind = PH_OPT_CONST,
	  .offset = OFF(rows),
	  .help = "the rows as CSV",
	  .value = PH_TRACE_ROWS_CSV },
	{ .name = "json",
	  .kind = PH_OPT_CONST,
	  .offset = OFF(rows),
	  .help = "the rows as JSON",
	  .value = PH_TRACE_ROWS_JSON },
	OPT_END,
};

/* The options several verbs share: the process, the detectors' SQL, the
 * window (analyze, ask) and the detectors' parameters. */
#define PROCESS_OPT                             \
	OPT_STR("process", process, "NAME|PID", \
		"the app's process: a pid, else a name or part of one")
#define DETECTORS_OPT                          \
	OPT_STR("detectors", detectors, "DIR", \
		"the detectors' SQL (default the built-in set)")
#define SCOPE_OPTS                                                           \
	PROCESS_OPT,                                                         \
		OPT_STR("from", from, "NS", "the window's start, trace ns"), \
		OPT_STR("to", to, "NS", "the window's end, trace ns")
#define DETECTOR_OPTS                                                         \
	OPT_MANY("set", set, "k=v", "a detector parameter"),                  \
		OPT_STR("config", config, "FILE",                             \
			"parameters from FILE (default porthole-trace.yml)"), \
		DETECTORS_OPT

static const struct ph_opt analyze_opts[] = {
	SCOPE_OPTS,
	OPT_STR("start", start, "NAME",
		"the window starts at the process's first slice named NAME"),
	OPT_STR("end", end, "NAME",
		"and ends at the end of the first slice named NAME after it"),
	DETECTOR_OPTS,
	OPT_STR("out", out, "DIR",
		"the report's directory (default trace-report)"),
	OPT_END,
};

static const struct ph_opt ask_opts[] = {
	SCOPE_OPTS,
	OPT_MANY("question", question, "Q",
		 "jank thread_states binder render slices startup "
		 "monitor_contention cpu (default all)"),
	OPT_FLAG("json", json, "one JSON object"),
	DETECTOR_OPTS,
	OPT_END,
};

static const struct ph_opt compare_opts[] = {
	OPT_STR("floor-ms", floor_ms, "MS",
		"changes smaller than this are noise (default 2)"),
	OPT_STR("floor-pct", floor_pct, "P",
		"and smaller than this percentage (default 10)"),
	OPT_FLAG("json", json, "one JSON object"),
	OPT_END,
};

static const struct ph_opt record_opts[] = {
	{ .name = "seconds",
	  .kind = PH_OPT_STR,
	  .offset = OFF(seconds),
	  .metavar = "N",
	  .help = "how long to record, 0..86400",
	  .flags = PH_OPT_REQUIRED },
	{ .name = "out",
	  .kind = PH_OPT_STR,
	  .offset = OFF(out),
	  .metavar = "FILE",
	  .help = "the trace file",
	  .flags = PH_OPT_REQUIRED },
	OPT_STR("application-id", application_id, "ID",
		"the app whose process is named"),
	OPT_MANY("pid", pid, "PID",
		 "a process to name in the trace (at most 64)"),
	OPT_END,
};

static const struct ph_opt doctor_opts[] = {
	OPT_FLAG("json", json, "one JSON object"),
	DETECTOR_OPTS,
	OPT_STR("write", write, "FILE",
		"also write the built-in fixture trace to FILE"),
	OPT_END,
};

/*
 * Parses a verb's argv (argv[0] is its word) with its table into a:
 * PH_CMD_GO_ON, or the exit status after --help or a usage error.
 */
static int parse_verb(int argc, char **argv, struct trace_args *a,
		      struct ph_opt_args *pa)
{
	memset(a, 0, sizeof(*a));
	return ph_cmd_parse(ph_cmd_verb(&ph_cmd_trace, argv[0]), a, argc, argv,
			    pa);
}

/* The detectors' options, as the engines take them. */
static struct ph_trace_det_opts det_opts(const struct trace_args *a)
{
	return (struct ph_trace_det_opts){ .dir = a->detectors,
					   .config = a->config,
					   .sets = a->set.v,
					   .nsets = a->set.n };
}

/* s as whole nanoseconds, or false: the engines' --from and --to. */
static bool parse_ns(const char *s, int64_t *v)
{
	char *end;

	*v = strtoll(s, &end, 10);
	return *s && !*end;
}

/* --from and --to into from and to, or 2 after saying which is bad. */
static int parse_window(const char *verb, const struct trace_args *a,
			int64_t *from, int64_t *to)
{
	if (a->from && !parse_ns(a->from, from)) {
		fprintf(stderr,
			"porthole trace %s: --from wants nanoseconds, not "
			"'%s'\n",
			verb, a->from);
		return 2;
	}
	if (a->to && !parse_ns(a->to, to)) {
		fprintf(stderr,
			"porthole trace %s: --to wants nanoseconds, not '%s'\n",
			verb, a->to);
		return 2;
	}
	return 0;
}

static int stats_exec(int argc, char **argv)
{
	static const char usage[] = "usage: porthole trace stats TRACE "
				    "[--json]\n";
	struct trace_args a;
	struct ph_opt_args pa;
	int rc = parse_verb(argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	for (int i = 0; i < pa.npos; i++) {
		if (pa.pos[i][0] == '-' || i > 0) {
			fprintf(stderr,
				"porthole trace stats: unexpected '%s'\n%s",
				pa.pos[i], usage);
			return 2;
		}
	}
	if (!pa.npos) {
		fputs(usage, stderr);
		return 2;
	}
	return ph_trace_cmd_stats(
		&(struct ph_trace_stats_opts){ .path = pa.pos[0],
					       .json = a.json },
		stdout);
}

static int query_exec(int argc, char **argv)
{
	struct trace_args a;
	struct ph_opt_args pa;
	int rc = parse_verb(argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos > 2) {
		fprintf(stderr, "porthole trace query: unexpected '%s'\n",
			pa.pos[2]);
		return 2;
	}
	if (pa.npos < 2) {
		fprintf(stderr, "usage: porthole trace query TRACE SQL "
				"[--csv|--json]\n");
		return 2;
	}
	return ph_trace_cmd_query(
		&(struct ph_trace_query_opts){
			.path = pa.pos[0], .sql = pa.pos[1], .mode = a.rows },
		stdout);
}

static void analyze_usage(void)
{
	fprintf(stderr,
		"usage: porthole trace analyze TRACE [TRACE...] "
		"[--process NAME] [--from NS --to NS] [--start NAME --end "
		"NAME] [--set k=v]... [--config FILE] [--out DIR] "
		"[--detectors DIR]\n");
}

/*
 * The first of args (n of them) that a verb taking at most max of them
 * refuses, one starting '-' or past max, or NULL.
 */
static const char *unexpected(char **args, int n, int max)
{
	for (int i = 0; i < n; i++)
		if (args[i][0] == '-' || i >= max)
			return args[i];
	return NULL;
}

static int analyze_exec(int argc, char **argv)
{
	struct trace_args a;
	struct ph_opt_args pa;
	struct ph_trace_analyze_opts o = { .scope = PH_TSCOPE_INIT };
	const char *bad;
	int rc = parse_verb(argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (parse_window("analyze", &a, &o.scope.from, &o.scope.to))
		return 2;
	bad = a.set.n > PH_OPT_STRS_MAX ? "--set" :
					  unexpected(pa.pos, pa.npos, 64);
	if (bad) {
		fprintf(stderr, "porthole trace analyze: unexpected '%s'\n",
			bad);
		analyze_usage();
		return 2;
	}
	if (!pa.npos) {
		analyze_usage();
		return 2;
	}
	o.paths = (const char *const *)pa.pos;
	o.npaths = (size_t)pa.npos;
	o.scope.process = a.process;
	o.scope.start = a.start;
	o.scope.end = a.end;
	o.det = det_opts(&a);
	o.out = a.out ? a.out : "trace-report";
	return ph_trace_cmd_analyze(&o, stdout);
}

static void ask_usage(void)
{
	fprintf(stderr,
		"usage: porthole trace ask TRACE [--process NAME] [--from NS "
		"--to NS] [--question Q]... [--set k=v]... [--config FILE] "
		"[--json] [--detectors DIR]\n"
		"  questions: jank thread_states binder render slices startup "
		"monitor_contention cpu\n");
}

static int ask_exec(int argc, char **argv)
{
	struct trace_args a;
	struct ph_opt_args pa;
	struct ph_trace_ask_opts o = { .from = PH_NULL_I64, .to = PH_NULL_I64 };
	const char *bad;
	int rc = parse_verb(argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (parse_window("ask", &a, &o.from, &o.to))
		return 2;
	/* at most 16 questions: there are 8 */
	bad = a.question.n > 16		? "--question" :
	      a.set.n > PH_OPT_STRS_MAX ? "--set" :
					  unexpected(pa.pos, pa.npos, 1);
	if (bad) {
		fprintf(stderr, "porthole trace ask: unexpected '%s'\n", bad);
		ask_usage();
		return 2;
	}
	if (!pa.npos) {
		ask_usage();
		return 2;
	}
	o.path = pa.pos[0];
	o.process = a.process;
	o.questions = a.question.v;
	o.nquestions = a.question.n;
	o.json = a.json;
	o.det = det_opts(&a);
	return ph_trace_cmd_ask(&o, stdout);
}

/* A noise floor: a number >= 0, or 2 after saying it is not. */
static int parse_floor(const char *opt, const char *s, double *v)
{
	char *end;

	if (!s)
		return 0;
	*v = strtod(s, &end);
	if (*end || *v < 0) {
		fprintf(stderr,
			"porthole trace compare: %s wants a number >= 0, not "
			"'%s'\n",
			opt, s);
		return 2;
	}
	return 0;
}

static int compare_exec(int argc, char **argv)
{
	struct trace_args a;
	struct ph_opt_args pa;
	struct ph_trace_compare_opts o = { .floor_ms = 2.0, .floor_pct = 10.0 };
	int rc = parse_verb(argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (parse_floor("--floor-ms", a.floor_ms, &o.floor_ms) ||
	    parse_floor("--floor-pct", a.floor_pct, &o.floor_pct))
		return 2;
	if (pa.npos != 2 || unexpected(pa.pos, pa.npos, 2)) {
		fprintf(stderr,
			"usage: porthole trace compare BASE.json NEW.json "
			"[--floor-ms MS] [--floor-pct P] [--json]\n");
		return 2;
	}
	o.base = pa.pos[0];
	o.new_path = pa.pos[1];
	o.json = a.json;
	return ph_trace_cmd_compare(&o, stdout);
}

static int record_exec(int argc, char **argv)
{
	struct trace_args a;
	struct ph_opt_args pa;
	struct ph_trace_record_opts o = { 0 };
	int pids[PH_OPT_STRS_MAX];
	char *end;
	int rc = parse_verb(argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	o.seconds = strtod(a.seconds, &end);
	if (*end || !(o.seconds >= 0 && o.seconds <= 86400)) {
		fprintf(stderr,
			"porthole trace record: --seconds wants 0..86400, not "
			"'%s'\n",
			a.seconds);
		return 2;
	}
	for (size_t i = 0; i < a.pid.n; i++) {
		/* the 65th is refused, by its value */
		const char *s = i < PH_OPT_STRS_MAX ? a.pid.v[i] : a.pid.past;
		long pid = strtol(s, &end, 10);

		if (i == PH_OPT_STRS_MAX || *end || pid <= 0 ||
		    pid > INT32_MAX) {
			fprintf(stderr,
				"porthole trace record: --pid wants a process "
				"id (at most %zu), not '%s'\n",
				PH_ARRAY_SIZE(pids), s);
			return 2;
		}
		pids[i] = (int)pid;
	}
	if (pa.npos) {
		fprintf(stderr,
			"usage: porthole trace record --seconds N --out "
			"FILE [--application-id ID] [--pid PID]...\n");
		return 2;
	}
	o.out = a.out;
	o.appid = a.application_id;
	o.pids = pids;
	o.npids = a.pid.n;
	return ph_trace_cmd_record(&o, stdout);
}

static int doctor_exec(int argc, char **argv)
{
	struct trace_args a;
	struct ph_opt_args pa;
	int rc = parse_verb(argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos || a.set.n > PH_OPT_STRS_MAX) {
		fprintf(stderr, "usage: porthole trace doctor [--json] "
				"[--set k=v]... [--config FILE] "
				"[--detectors DIR] [--write FIXTURE]\n");
		return 2;
	}
	return ph_trace_cmd_doctor(
		&(struct ph_trace_doctor_opts){
			.json = a.json, .det = det_opts(&a), .write = a.write },
		stdout);
}

#define VERB(var, word, a, o, sum, fn)                            \
	static const struct ph_cmd var = { .name = "trace " word, \
					   .summary = sum,        \
					   .args = a,             \
					   .opts = o,             \
					   .exec = fn }

VERB(trace_stats, "stats", "TRACE", stats_opts,
     "rows per table, clock, duration, decoder statistics", stats_exec);
VERB(trace_query, "query", "TRACE SQL", query_opts,
     "run SQL over a trace's tables", query_exec);
VERB(trace_analyze, "analyze", "TRACE [TRACE...]", analyze_opts,
     "run the detectors into DIR/report.md and report.json; several traces are repeats of one run, folded into medians",
     analyze_exec);
VERB(trace_ask, "ask", "TRACE", ask_opts,
     "the questions of the MCP tool ask_system_trace, over a process and a window",
     ask_exec);
VERB(trace_compare, "compare", "BASE.json NEW.json", compare_opts,
     "pair two analyze reports' rows; exit 1 when something is new or worse",
     compare_exec);
VERB(trace_record, "record", NULL, record_opts,
     "record a system trace from tracefs (root), restoring every setting it changed",
     record_exec);
VERB(trace_doctor, "doctor", NULL, doctor_opts,
     "run every detector on a built-in fixture with planted problems; exit 1 when one misses its problem",
     doctor_exec);

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
			&ph_cmd_trace_mark, &ph_cmd_trace_names,
			&ph_cmd_trace_calibrate, NULL },
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = trace_exec,
};
