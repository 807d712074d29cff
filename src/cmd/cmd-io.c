/*
 * porthole io DIR [--session ID | --events FILE] [--from T --to T]
 *              [--pid N] [--offset-ms MS] [--json | --ndjson [--all]]
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
int ph_cmd_io_view_opt(int argc, char **argv, int *i, struct ph_io_opts *o)
{
	const char *a = argv[*i], *val = *i + 1 < argc ? argv[*i + 1] : NULL;
	char *end;
	double d;

	if (!val)
		return 0;
	if (!strcmp(a, "--pid")) {
		/* pids are 32-bit: a larger one would match no request */
		if (!ph_cmd_int(val, &o->pid) || o->pid <= 0 ||
		    o->pid > INT32_MAX)
			return 0;
	} else if (!strcmp(a, "--offset-ms")) {
		errno = 0;
		d = strtod(val, &end);
		if (errno || end == val || *end || !(d > -1e12 && d < 1e12))
			return 0;
		o->have_shift = true;
		o->shift_ns = (int64_t)(d * 1e6);
	} else {
		return 0;
	}
	++*i;
	return 1;
}

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
	const char *dir = NULL, *session = NULL, *events = NULL;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_io_view *v = NULL;
	char path[8400], why[600];
	bool json = false, ndjson = false, all = false;
	int status = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i],
			   *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (ph_cmd_io_view_opt(argc, argv, &i, &o))
			continue; /* --pid, --offset-ms */
		if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--ndjson")) {
			ndjson = true;
		} else if (!strcmp(a, "--all")) {
			all = true;
		} else if (!strcmp(a, "--session") && val) {
			session = argv[++i];
		} else if (!strcmp(a, "--events") && val) {
			events = argv[++i];
		} else if (!strcmp(a, "--from") && val &&
			   ph_cmd_int(val, &o.w.from)) {
			i++;
		} else if (!strcmp(a, "--to") && val &&
			   ph_cmd_int(val, &o.w.to)) {
			i++;
		} else if (a[0] == '-' && a[1]) {
			return ph_cmd_usage_error(&ph_cmd_io,
						  "unknown or incomplete "
						  "option %s",
						  a);
		} else if (!dir) {
			dir = a;
		} else {
			return ph_cmd_usage_error(&ph_cmd_io,
						  "one recording at a time");
		}
	}
	if (!dir)
		return ph_cmd_usage_error(&ph_cmd_io,
					  "which iotrace recording? (DIR)");
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
	.usage = "porthole io DIR [--session ID | --events FILE] "
		 "[--from T --to T]\n"
		 "                [--pid N] [--offset-ms MS] [--json | "
		 "--ndjson [--all]]\n"
		 "  DIR            a recording (porthole iotrace record or "
		 "parse)\n"
		 "  --session ID   a recorded session (default: the most "
		 "recently active)\n"
		 "  --events FILE  or a session's events.ndjson, any wire "
		 "NDJSON\n"
		 "  --from, --to   a window on the app's clock (default: the "
		 "session's span)\n"
		 "  --pid N        the app's pid, when its hello has none\n"
		 "  --offset-ms MS app t = the recording's mono_ns + MS "
		 "(default: checked\n"
		 "                 through both sides' wall-clock offsets)\n"
		 "  --json         the view as one JSON object\n"
		 "  --ndjson       the app's requests as wire `io` events "
		 "(--all: every\n"
		 "                 process's)",
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = io_exec,
};
