/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole trace mark, names and calibrate: the verbs that help write a
 * scenario and tune the detectors (src/trace/trace_tools.c is their
 * engine).  Verbs of cmd-trace.c, each with its table, its checks and
 * its usage line.
 */
#include "ph_common.h"
#include "cmd.h"
#include "trace/trace_cli.h"

extern const struct ph_cmd ph_cmd_trace_mark, ph_cmd_trace_names,
	ph_cmd_trace_calibrate;

/* The three verbs' options; each verb's table names those it takes.  The
 * numbers stay strings: mark checks its own (parse_ms). */
struct tools_args {
	bool json;
	const char *process, *detectors;
	const char *min_ms, *gap_ms, *detector, *param;
};

#define OFF(f) offsetof(struct tools_args, f)
#define OPT_STR(n, f, mv, h)                                     \
	{                                                        \
		.name = n, .kind = PH_OPT_STR, .offset = OFF(f), \
		.metavar = mv, .help = h                         \
	}
#define OPT_JSON                                                          \
	{                                                                 \
		.name = "json", .kind = PH_OPT_BOOL, .offset = OFF(json), \
		.help = "one JSON object"                                 \
	}
#define OPT_PROCESS                             \
	OPT_STR("process", process, "NAME|PID", \
		"the app's process: a pid, else a name or part of one")
#define OPT_DETECTORS                          \
	OPT_STR("detectors", detectors, "DIR", \
		"the detectors' SQL (default the built-in set)")
#define OPT_END                    \
	{                          \
		.kind = PH_OPT_END \
	}

static const struct ph_opt mark_opts[] = {
	OPT_PROCESS,
	OPT_STR("min-ms", min_ms, "MS",
		"the shortest slice or busy stretch proposed (default 100)"),
	OPT_STR("gap-ms", gap_ms, "MS",
		"a pause longer than this ends a busy stretch (default 100)"),
	OPT_DETECTORS,
	OPT_JSON,
	OPT_END,
};

static const struct ph_opt names_opts[] = {
	OPT_PROCESS,
	OPT_DETECTORS,
	OPT_JSON,
	OPT_END,
};

static const struct ph_opt calibrate_opts[] = {
	{ .name = "detector",
	  .kind = PH_OPT_STR,
	  .offset = OFF(detector),
	  .metavar = "ID",
	  .help = "the detector whose thresholds are tried",
	  .flags = PH_OPT_REQUIRED },
	OPT_STR("param", param, "NAME",
		"only this parameter (default every numeric one)"),
	OPT_PROCESS,
	OPT_DETECTORS,
	OPT_JSON,
	OPT_END,
};

/* Parses argv with cmd's table: PH_CMD_GO_ON, or the exit status. */
static int parse(const struct ph_cmd *cmd, int argc, char **argv,
		 struct tools_args *a, struct ph_opt_args *pa)
{
	memset(a, 0, sizeof(*a));
	return ph_cmd_parse(cmd, a, argc, argv, pa);
}

/* The positional these verbs refuse (one starting '-', or a second
 * TRACE), or NULL. */
static const char *refused(const struct ph_opt_args *pa)
{
	for (int i = 0; i < pa->npos; i++)
		if (pa->pos[i][0] == '-' || i > 0)
			return pa->pos[i];
	return NULL;
}

/* mark's --min-ms and --gap-ms: milliseconds >= 0, or 2, said. */
static int parse_ms(const char *opt, const char *s, double *v)
{
	char *end;

	if (!s)
		return 0;
	*v = strtod(s, &end);
	if (*end || !*s || !(*v >= 0)) {
		fprintf(stderr,
			"porthole trace mark: %s wants milliseconds, not "
			"'%s'\n",
			opt, s);
		return 2;
	}
	return 0;
}

static int mark_exec(int argc, char **argv)
{
	static const char usage[] =
		"usage: porthole trace mark TRACE [--process NAME|PID] "
		"[--min-ms 100] [--gap-ms 100] [--json]\n";
	struct tools_args a;
	struct ph_opt_args pa;
	struct ph_trace_mark_opts o = { .min_ms = 100, .gap_ms = 100 };
	const char *bad;
	int rc = parse(&ph_cmd_trace_mark, argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (parse_ms("--min-ms", a.min_ms, &o.min_ms) ||
	    parse_ms("--gap-ms", a.gap_ms, &o.gap_ms))
		return 2;
	bad = refused(&pa);
	if (bad) {
		fprintf(stderr, "porthole trace mark: unexpected '%s'\n%s", bad,
			usage);
		return 2;
	}
	if (!pa.npos) {
		fputs(usage, stderr);
		return 2;
	}
	o.path = pa.pos[0];
	o.process = a.process;
	o.detectors = a.detectors;
	o.json = a.json;
	return ph_trace_cmd_mark(&o, stdout);
}

static int names_exec(int argc, char **argv)
{
	static const char usage[] =
		"usage: porthole trace names TRACE [--process NAME|PID] "
		"[--detectors DIR] [--json]\n";
	struct tools_args a;
	struct ph_opt_args pa;
	const char *bad;
	int rc = parse(&ph_cmd_trace_names, argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	bad = refused(&pa);
	if (bad) {
		fprintf(stderr, "porthole trace names: unexpected '%s'\n%s",
			bad, usage);
		return 2;
	}
	if (!pa.npos) {
		fputs(usage, stderr);
		return 2;
	}
	return ph_trace_cmd_names(
		&(struct ph_trace_names_opts){ .path = pa.pos[0],
					       .process = a.process,
					       .detectors = a.detectors,
					       .json = a.json },
		stdout);
}

static int calibrate_exec(int argc, char **argv)
{
	struct tools_args a;
	struct ph_opt_args pa;
	const char *bad;
	int rc = parse(&ph_cmd_trace_calibrate, argc, argv, &a, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	bad = refused(&pa);
	if (bad)
		fprintf(stderr, "porthole trace calibrate: unexpected '%s'\n",
			bad);
	if (bad || !pa.npos) {
		fprintf(stderr, "usage: porthole trace calibrate TRACE "
				"--detector ID [--param NAME] [--process "
				"NAME|PID] [--json]\n");
		return 2;
	}
	return ph_trace_cmd_calibrate(
		&(struct ph_trace_calibrate_opts){ .path = pa.pos[0],
						   .process = a.process,
						   .detectors = a.detectors,
						   .detector = a.detector,
						   .param = a.param,
						   .json = a.json },
		stdout);
}

const struct ph_cmd ph_cmd_trace_mark = {
	.name = "trace mark",
	.summary = "propose scenario markers: candidate windows with the "
		   "analyze arguments that select them",
	.args = "TRACE",
	.opts = mark_opts,
	.exec = mark_exec,
};

const struct ph_cmd ph_cmd_trace_names = {
	.name = "trace names",
	.summary = "which slice names each detector's name masks see, and "
		   "the names no mask sees",
	.args = "TRACE",
	.opts = names_opts,
	.exec = names_exec,
};

const struct ph_cmd ph_cmd_trace_calibrate = {
	.name = "trace calibrate",
	.summary = "what a detector's thresholds would flag on this trace, at "
		   "a quarter to four times their values",
	.args = "TRACE",
	.opts = calibrate_opts,
	.exec = calibrate_exec,
};
