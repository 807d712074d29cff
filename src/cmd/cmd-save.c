/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole save [--session ID] [--scenario NAME]
 *               [--since 10m|90s|2h|MS | --from T --to T] [--out FILE]
 *
 * Turns a window of a recorded session (the most recently active one by
 * default) into a capture file, the same format `capture` writes, so
 * `report` and `compare` work on it.  --since counts back from the
 * session's last event; a session shorter than that is saved whole, and
 * the output and a note say how much it held.  With --from/--to,
 * clippedMs says how much of the window came before the recording began.
 * An empty or inverted window is refused (exit 2) and nothing is written:
 * save never touches the session's watermark.
 */
#include "ph_common.h"
#include "cmd.h"
#include "host/capture.h"
#include "host/env.h"
#include "host/findings.h"
#include "host/ingest.h"
#include "host/session.h"

extern const struct ph_cmd ph_cmd_save;

struct save_args {
	const char *session, *scenario, *out;
	const char *since; /* as given: a duration, parsed below */
	int64_t from, to;
};

#define OFF(f) offsetof(struct save_args, f)
static const struct ph_opt save_opts[] = {
	{ .name = "session",
	  .kind = PH_OPT_STR,
	  .offset = OFF(session),
	  .metavar = "ID",
	  .help = "the session to save (default the most recently active)" },
	{ .name = "scenario",
	  .kind = PH_OPT_STR,
	  .offset = OFF(scenario),
	  .metavar = "NAME",
	  .help = "the capture's scenario name (default saved)" },
	{ .name = "since",
	  .kind = PH_OPT_STR,
	  .offset = OFF(since),
	  .metavar = "10m|90s|2h|MS",
	  .help = "the last stretch of the session, back from its last event" },
	{ .name = "from",
	  .kind = PH_OPT_INT,
	  .offset = OFF(from),
	  .metavar = "T",
	  .help = "the window's start, app clock ms" },
	{ .name = "to",
	  .kind = PH_OPT_INT,
	  .offset = OFF(to),
	  .metavar = "T",
	  .help = "the window's end, app clock ms" },
	{ .name = "out",
	  .kind = PH_OPT_STR,
	  .offset = OFF(out),
	  .metavar = "FILE",
	  .help = "the capture file (default porthole-trace.json)" },
	{ .kind = PH_OPT_END },
};

static int save_exec(int argc, char **argv)
{
	struct save_args args = { .scenario = "saved",
				  .out = "porthole-trace.json",
				  .from = INT64_MIN,
				  .to = INT64_MAX };
	struct ph_opt_args pa;
	const char *session, *scenario, *out;
	const char *since_arg; /* --since as given, for messages */
	int64_t since = -1, from, to;
	struct ph_session_info *v = NULL;
	struct ph_capture_info info = { .driver = "porthole save" };
	struct ph_ingest in;
	struct ph_analysis *a;
	char dir[4200], path[8400], held[160] = "";
	size_t n, pick = 0;
	int rc, status = 0;

	rc = ph_cmd_parse(&ph_cmd_save, &args, argc, argv, &pa);
	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos)
		return ph_cmd_usage_error(&ph_cmd_save,
					  "unexpected argument %s", pa.pos[0]);
	session = args.session;
	scenario = args.scenario;
	out = args.out;
	from = args.from;
	to = args.to;
	since_arg = args.since;
	if (since_arg && (since = ph_parse_duration_ms(since_arg)) < 0)
		return ph_cmd_usage_error(
			&ph_cmd_save, "bad value for --since: %s", since_arg);
	if (since >= 0 && (from != INT64_MIN || to != INT64_MAX))
		return ph_cmd_usage_error(&ph_cmd_save,
					  "--since or --from/--to, not both");
	if (since == 0)
		return ph_cmd_usage_error(&ph_cmd_save,
					  "--since 0 is an empty window; "
					  "nothing saved");
	if (from != INT64_MIN && to != INT64_MAX && from >= to)
		return ph_cmd_usage_error(&ph_cmd_save,
					  "--from %" PRId64
					  " is not before --to "
					  "%" PRId64 ": the window is %s; "
					  "nothing saved",
					  from, to,
					  from == to ? "empty" : "inverted");
	ph_env_sessions_dir(dir, sizeof(dir));
	if (ph_sessions_list(dir, &v, &n) || !n) {
		fprintf(stderr, "porthole save: no recorded sessions in %s\n",
			dir);
		free(v);
		return 2;
	}
	if (session) {
		for (pick = 0; pick < n && strcmp(v[pick].id, session); pick++)
			;
		if (pick == n) {
			fprintf(stderr, "porthole save: no session '%s'\n",
				session);
			free(v);
			return 2;
		}
	}
	snprintf(path, sizeof(path), "%s/events.ndjson", v[pick].path);
	if (since >= 0) {
		/* The session's end: from a pass over the file, not meta.json,
		 * which may lag the file by a flush or be corrupt. */
		ph_ingest_init(&in, NULL, NULL);
		rc = ph_ingest_file(&in, path);
		to = in.last_t;
		from = in.last_t - since;
		/* A session shorter than asked: all of it, said so, rather
		 * than a window mostly before the recording. */
		if (in.first_t && from < in.first_t) {
			from = in.first_t;
			snprintf(
				held, sizeof(held),
				"the session holds %.1f s of the %s asked for: "
				"all of it is saved",
				(double)(to - from) / 1000.0, since_arg);
		}
		ph_ingest_release(&in);
		if (rc) {
			fprintf(stderr, "porthole save: cannot read %s\n",
				path);
			free(v);
			return 2;
		}
	}
	a = ph_analyze_file(path, (struct ph_window){ from, to }, &rc);
	if (!a) {
		fprintf(stderr, "porthole save: cannot read %s\n", path);
		free(v);
		return 2;
	}
	ph_analysis_resolve_where(a, ph_env_project_root());
	if (held[0])
		ph_analysis_note(a, "%s", held);
	info.scenario = scenario;
	if (ph_capture_save(a, &info, out)) {
		fprintf(stderr, "porthole save: cannot write %s\n", out);
		status = 2;
	} else {
		printf("saved %s [%" PRId64 "..%" PRId64 "] to %s", v[pick].id,
		       from == INT64_MIN ? a->first_t : from,
		       to == INT64_MAX ? a->last_t : to, out);
		if (a->clipped_ms > 0)
			printf(" (%" PRId64 " ms before the recording began)",
			       a->clipped_ms);
		if (held[0])
			printf(" (%s)", held);
		printf("\n");
	}
	ph_analysis_free(a);
	free(v);
	return status;
}

const struct ph_cmd ph_cmd_save = {
	.name = "save",
	.summary = "turn a window of a recorded session into a capture file",
	.opts = save_opts,
	.about = "--since, or --from and --to, not both; default: the most\n"
		 "recently active session, all of it",
	.exec = save_exec,
};
