/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole capture --scenario NAME [--out FILE] [--driver NAME]
 *                  [--application-id ID] [--systrace [--systrace-seconds N]]
 *                  [--iotrace [--iotrace-out DIR]] -- CMD [ARGS...]
 *
 * Runs CMD, records its app from start to exit (the process lifetime is
 * the window), writes the capture file and exits with CMD's status.  The
 * app is found without guessing: CMD inherits PORTHOLE_ANNOUNCE naming a
 * file the agent writes its socket name to (or --application-id names it,
 * or PORTHOLE_HOST/PORTHOLE_PORT name a TCP device).
 *
 * --systrace records a system trace over the same run: on this machine
 * with the trace engine's tracefs recorder (`porthole trace record`, a
 * child), on an Android device with its perfetto over adb (perfetto.h),
 * started before CMD and stopped after it, then pulled.  Which one is
 * decided before CMD runs, as the link will connect: an app id whose
 * socket is not on this machine, with a device attached, is the device's.
 *
 * --iotrace records this machine's block I/O over the same run with the
 * iotrace collector (`porthole iotrace record`, a child, root), then joins
 * it with the app's events (host/io/merge.h): its findings are merged
 * tagged [iotrace] and the view is kept as the capture's `io`.  The
 * recording itself is removed unless --iotrace-out DIR keeps it.
 *
 * This file parses the options and prints the summary line; the run, its
 * children and the merges are src/host/capture_run.c.
 */
#include "ph_common.h"
#include "cmd.h"
#include "host/capture_run.h"

static const struct ph_cmd *self(void);

struct capture_args {
	const char *scenario, *out, *driver, *app_id;
	bool systrace;
	const char *systrace_seconds; /* checked below */
	bool iotrace;
	const char *iotrace_out;
};

#define OFF(f) offsetof(struct capture_args, f)
static const struct ph_opt capture_opts[] = {
	{ .name = "scenario",
	  .kind = PH_OPT_STR,
	  .offset = OFF(scenario),
	  .metavar = "NAME",
	  .help = "the run's name (compare refuses to mix scenarios)",
	  .flags = PH_OPT_REQUIRED },
	{ .name = "out",
	  .kind = PH_OPT_STR,
	  .offset = OFF(out),
	  .metavar = "FILE",
	  .help = "the capture file (default porthole-trace.json)" },
	{ .name = "driver",
	  .kind = PH_OPT_STR,
	  .offset = OFF(driver),
	  .metavar = "NAME",
	  .help = "who drives the run, e.g. a UI test (default porthole "
		  "capture)" },
	{ .name = "application-id",
	  .kind = PH_OPT_STR,
	  .offset = OFF(app_id),
	  .metavar = "ID",
	  .help = "connect to porthole.ID instead of waiting for the app's "
		  "announcement" },
	{ .name = "systrace",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(systrace),
	  .help = "also record a system trace over the run and merge its "
		  "findings, tagged [trace] (tracefs here, root; perfetto "
		  "over adb for an app on a device)" },
	{ .name = "systrace-seconds",
	  .kind = PH_OPT_STR,
	  .offset = OFF(systrace_seconds),
	  .metavar = "N",
	  .help = "stop the system trace after N s (implies --systrace)" },
	{ .name = "iotrace",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(iotrace),
	  .help = "also record this machine's block I/O (root) and merge the "
		  "io view's findings, tagged [iotrace]; kept as the "
		  "capture's io" },
	{ .name = "iotrace-out",
	  .kind = PH_OPT_STR,
	  .offset = OFF(iotrace_out),
	  .metavar = "DIR",
	  .help = "keep the block I/O recording in DIR (implies --iotrace)" },
	{ .kind = PH_OPT_END },
};

static int capture_exec(int argc, char **argv)
{
	struct capture_args args = { .out = "porthole-trace.json",
				     .driver = "porthole capture" };
	struct ph_opt_args pa;
	struct ph_capture_run_opts o = { .systrace_seconds = 86400,
					 .log = stderr };
	struct ph_capture_run_result res;
	int status = ph_cmd_parse(self(), &args, argc, argv, &pa);

	if (status != PH_CMD_GO_ON)
		return status;
	if (pa.npos)
		return ph_cmd_usage_error(self(), "unexpected argument %s",
					  pa.pos[0]);
	if (args.systrace_seconds &&
	    (o.systrace_seconds = strtod(args.systrace_seconds, NULL)) <= 0)
		return ph_cmd_usage_error(self(),
					  "--systrace-seconds takes seconds, "
					  "more than 0 (got '%s')",
					  args.systrace_seconds);
	if (pa.nrest < 1)
		return ph_cmd_usage_error(self(), "no command after --");
	o.scenario = args.scenario;
	o.out = args.out;
	o.driver = args.driver;
	o.app_id = args.app_id;
	o.systrace_seconds_given = args.systrace_seconds != NULL;
	o.systrace = args.systrace || o.systrace_seconds_given;
	o.iotrace_out = args.iotrace_out;
	o.iotrace = args.iotrace || o.iotrace_out;
	o.cmdv = pa.rest;
	status = ph_capture_run(&o, &res);
	if (res.saved < 0)
		fprintf(stderr, "porthole capture: cannot write %s\n", o.out);
	else if (res.saved > 0)
		fprintf(stderr,
			"porthole capture: %zu finding%s (%zu error%s) in %.1f "
			"s -> %s\n",
			res.findings, res.findings == 1 ? "" : "s", res.errors,
			res.errors == 1 ? "" : "s", res.seconds, o.out);
	return status;
}

const struct ph_cmd ph_cmd_capture = {
	.name = "capture",
	.summary = "run a command, record its app, write a capture file",
	.args = "-- CMD [ARGS...]",
	.opts = capture_opts,
	.about = "Exits with CMD's status; 3 when it never connected to the\n"
		 "app (nothing observed); 2 on its own errors.",
	.flags = PH_CMD_TAKES_COMMAND,
	.exec = capture_exec,
};

static const struct ph_cmd *self(void)
{
	return &ph_cmd_capture;
}
