/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole io DIR [--session ID | --events FILE] [--from T --to T]
 *              [--pid N] [--offset-ms MS] [--json | --ndjson [--all]]
 * (io_opts below is the table --help and docs/cli.md are drawn from)
 *
 * The host's `io` view (src/host/io/io.h, docs/iotrace.md): the block I/O of
 * an iotrace recording (DIR, from `porthole iotrace record` or `parse`)
 * joined with an app's session (the most recently active one by default)
 * on the app's clock: what the app itself issued, what its main thread
 * issued inside which queries, which stalls and late frames had block
 * I/O in flight, and findings with source "iotrace".  Exits 0; 2 on bad
 * arguments, an unreadable session or recording, or a recording that
 * does not overlap the window at all (the answer, printed, says so).
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_buf.h"
#include "host/env.h"
#include "host/io/io.h"
#include "host/session.h"

extern const struct ph_cmd ph_cmd_io;

/* cmd.h; `iotrace attach` takes these too, for the same join */
int ph_cmd_io_view_check(const struct ph_cmd *cmd, const char *pid,
			 const char *offset_ms, struct ph_io_opts *o)
{
	char *end;
	double d;

	/* pids are 32-bit: a larger one would match no request */
	if (pid &&
	    (!ph_cmd_int(pid, &o->pid) || o->pid <= 0 || o->pid > INT32_MAX))
		return ph_cmd_usage_error(cmd, "bad value for --pid: %s", pid);
	if (offset_ms) {
		errno = 0;
		d = strtod(offset_ms, &end);
		if (errno || end == offset_ms || *end ||
		    !(d > -1e12 && d < 1e12))
			return ph_cmd_usage_error(cmd,
						  "bad value for --offset-ms: "
						  "%s",
						  offset_ms);
		o->have_shift = true;
		o->shift_ns = (int64_t)(d * 1e6);
	}
	return 0;
}

struct io_args {
	const char *session, *events;
	int64_t from, to;
	const char *pid, *offset_ms;
	bool json, ndjson, all;
};

#define OFF(f) offsetof(struct io_args, f)
static const struct ph_opt io_opts[] = {
	{ .name = "session",
	  .kind = PH_OPT_STR,
	  .offset = OFF(session),
	  .metavar = "ID",
	  .help = "a recorded session (default: the most recently active)" },
	{ .name = "events",
	  .kind = PH_OPT_STR,
	  .offset = OFF(events),
	  .metavar = "FILE",
	  .help = "or a session's events.ndjson, any wire NDJSON" },
	{ .name = "from",
	  .kind = PH_OPT_INT,
	  .offset = OFF(from),
	  .metavar = "T",
	  .help = "the window's start on the app's clock, ms (default: the "
		  "session's span)" },
	{ .name = "to",
	  .kind = PH_OPT_INT,
	  .offset = OFF(to),
	  .metavar = "T",
	  .help = "the window's end on the app's clock, ms" },
	PH_CMD_IO_VIEW_OPTS(struct io_args),
	{ .name = "json",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(json),
	  .help = "the view as one JSON object" },
	{ .name = "ndjson",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(ndjson),
	  .help = "the app's requests as wire io events" },
	{ .name = "all",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(all),
	  .help = "with --ndjson: every process's requests" },
	{ .kind = PH_OPT_END },
};

/* The session's events.ndjson: by id, or the most recently active. */
static int session_path(const char *id, char *path, size_t size)
{
	struct ph_session_info *v = NULL;
	char dir[4200];
	size_t n, pick = 0;

	ph_env_sessions_dir(dir, sizeof(dir));
	if (ph_sessions_list(dir, &v, &n) || !n) {
		fprintf(stderr,
			"porthole io: no recorded sessions in %s; give "
			"--events FILE\n",
			dir);
		free(v);
		return 2;
	}
	if (id) {
		for (pick = 0; pick < n && strcmp(v[pick].id, id); pick++)
			;
		if (pick == n) {
			fprintf(stderr, "porthole io: no session '%s' in %s\n",
				id, dir);
			free(v);
			return 2;
		}
	}
	snprintf(path, size, "%s/events.ndjson", v[pick].path);
	free(v);
	return 0;
}

static int io_exec(int argc, char **argv)
{
	struct ph_io_opts o = { .w = PH_WINDOW_ALL };
	struct io_args args = { .from = o.w.from, .to = o.w.to };
	struct ph_opt_args pa;
	const char *dir, *session, *events;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_io_view *v = NULL;
	char path[8400], why[600];
	bool json, ndjson, all;
	int status = ph_cmd_parse(&ph_cmd_io, &args, argc, argv, &pa);

	if (status != PH_CMD_GO_ON)
		return status;
	if ((status = ph_cmd_io_view_check(&ph_cmd_io, args.pid, args.offset_ms,
					   &o)))
		return status;
	if (pa.npos > 1)
		return ph_cmd_usage_error(&ph_cmd_io,
					  "one recording at a time");
	if (!pa.npos)
		return ph_cmd_usage_error(&ph_cmd_io,
					  "which iotrace recording? (DIR)");
	dir = pa.pos[0];
	session = args.session;
	events = args.events;
	o.w.from = args.from;
	o.w.to = args.to;
	json = args.json;
	ndjson = args.ndjson;
	all = args.all;
	if (session && events)
		return ph_cmd_usage_error(&ph_cmd_io,
					  "--session or --events, not both");
	if (json && ndjson)
		return ph_cmd_usage_error(&ph_cmd_io,
					  "--json or --ndjson, not both");
	if (all && !ndjson)
		return ph_cmd_usage_error(&ph_cmd_io,
					  "--all goes with --ndjson");
	if (o.w.from > o.w.to)
		return ph_cmd_usage_error(&ph_cmd_io, "--from is after --to");
	if (events)
		snprintf(path, sizeof(path), "%s", events);
	else if ((status = session_path(session, path, sizeof(path))))
		return status;
	v = ph_io_view_new(&o);
	if (!v)
		return 2;
	if (ph_io_load(v, path, dir, why, sizeof(why))) {
		fprintf(stderr, "porthole io: %s\n", why);
		status = 2;
		goto out;
	}
	if (ndjson) {
		if (ph_io_write_events(v, all, &out))
			status = 2;
	} else if (json) {
		struct ph_jw jw;

		ph_jw_init(&jw, &out);
		ph_io_write_json(v, &jw);
		if (ph_jw_finish(&jw) || ph_buf_addch(&out, '\n'))
			status = 2;
	} else if (ph_io_write_text(v, &out)) {
		status = 2;
	}
	if (!status && fwrite(out.buf, 1, out.len, stdout) != out.len)
		status = 2;
	if (!status && v->no_overlap) {
		/* the answer says so; the status too: most likely the wrong
		 * recording or session */
		fprintf(stderr, "porthole io: the recording does not overlap "
				"the window\n");
		status = 2;
	}
out:
	ph_io_view_free(v);
	ph_buf_release(&out);
	return status;
}

const struct ph_cmd ph_cmd_io = {
	.name = "io",
	.summary = "block I/O of an iotrace recording joined with an app "
		   "session",
	.args = "DIR",
	.opts = io_opts,
	.about =
		"DIR: a recording (porthole iotrace record or parse).\n"
		"--session or --events, not both; --json or --ndjson, not both.",
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = io_exec,
};
