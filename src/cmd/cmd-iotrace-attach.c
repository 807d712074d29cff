/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole iotrace attach SESSION DIR [--app-only] [--max N]
 *                        [--offset-ms MS] [--pid PID]
 *
 * An iotrace recording's block requests added to a recorded session as
 * wire `io` events, with one `io_recording` event naming the recording
 * (src/host/io/attach.h; docs/iotrace.md, "In a session"), so the
 * session's timeline, findings and MCP answers have its block I/O from
 * then on, and a host recording the session gets them live.  SESSION is
 * a session id under the sessions directory or a session's directory
 * (a path with a '/'), as `heap dump --session` takes it.  Prints what
 * it added, the clock's alignment and the view's findings.  Exits 0
 * (also when the session already held every request: nothing is added
 * twice); 2 on bad arguments, a missing session or recording, or a
 * recording that does not overlap the session.  A verb of cmd-iotrace.c.
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "host/env.h"
#include "host/io/attach.h"

extern const struct ph_cmd ph_cmd_iotrace_attach;

struct attach_args {
	bool app_only;
	int64_t max;
	const char *pid, *offset_ms;
};

#define OFF(f) offsetof(struct attach_args, f)
static const struct ph_opt attach_opts[] = {
	{ .name = "app-only",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(app_only),
	  .help = "add only the app's own requests" },
	{ .name = "max",
	  .kind = PH_OPT_INT,
	  .offset = OFF(max),
	  .metavar = "N",
	  .help = "add at most N requests, the app's first (default 20000; "
		  "0: no cap)" },
	PH_CMD_IO_VIEW_OPTS(struct attach_args),
	{ .kind = PH_OPT_END },
};

static void human_bytes(char *buf, size_t size, uint64_t b)
{
	if (b < 1024)
		snprintf(buf, size, "%" PRIu64 " B", b);
	else if (b < (uint64_t)1 << 20)
		snprintf(buf, size, "%.1f KiB", (double)b / 1024);
	else
		snprintf(buf, size, "%.1f MiB", (double)b / 1048576);
}

/* What was joined and added, then the view's findings. */
static int report(const struct ph_io_attach_result *r, const char *session,
		  const struct ph_io_attach_opts *opt, struct ph_buf *o)
{
	const struct ph_io_view *v = r->v;
	uint64_t added = r->added_app + r->added_other;
	const char *name = strrchr(session, '/');
	char b[32];
	int rc = 0;

	name = name && name[1] ? name + 1 : session;
	rc |= ph_buf_addf(o,
			  "iotrace attach: recording %s (id %s) to session "
			  "%s\n",
			  v->rec_dir, r->recording, name);
	rc |= ph_io_write_clock_text(v, o);
	rc |= ph_buf_addf(o,
			  "  requests   %zu in the window: %" PRIu64
			  " by the app (pid %" PRId64 "; %" PRIu64
			  " on its main thread), ",
			  v->nreq, v->app_n, v->pid, v->main_n);
	rc |= ph_io_write_others_text(v, o);
	if (added) {
		human_bytes(b, sizeof(b), r->bytes);
		rc |= ph_buf_addf(o,
				  "  added      %" PRIu64
				  " io event%s (%" PRIu64 " the app's, %" PRIu64
				  " other processes') and 1 io_recording, "
				  "%s",
				  added, added == 1 ? "" : "s", r->added_app,
				  r->added_other, b);
		if (r->batches > 1)
			rc |= ph_buf_addf(o, " in %d appends", r->batches);
		rc |= ph_buf_addch(o, '\n');
	} else {
		rc |= ph_buf_addf(o,
				  "  added      nothing: the session already "
				  "holds all %" PRIu64 " chosen request%s%s\n",
				  r->already, r->already == 1 ? "" : "s",
				  r->seen_before ? " (this recording was "
						   "attached before)" :
						   "");
	}
	if (added && r->already)
		rc |= ph_buf_addf(o,
				  "  already    %" PRIu64
				  " in the session, not added again\n",
				  r->already);
	if (r->left_out && opt->app_only)
		rc |= ph_buf_addf(o,
				  "  left out   %" PRIu64 " other processes' "
				  "request%s (--app-only)\n",
				  r->left_out, r->left_out == 1 ? "" : "s");
	else if (r->left_out)
		rc |= ph_buf_addf(o,
				  "  left out   %" PRIu64 " request%s past "
				  "the cap of %" PRIu64 " (--max)\n",
				  r->left_out, r->left_out == 1 ? "" : "s",
				  opt->max);
	rc |= ph_io_write_lost_text(v, o);
	rc |= ph_io_write_findings_text(v, o);
	for (size_t i = 0; i < v->nnotes; i++)
		rc |= ph_buf_addf(o, "note: %s\n", v->notes[i]);
	return rc ? PH_ENOMEM : 0;
}

/* SESSION: a directory (a path with a '/'), else an id. */
static void session_dir(const char *arg, char *buf, size_t size)
{
	char sessions[4096];

	if (strchr(arg, '/')) {
		snprintf(buf, size, "%s", arg);
		return;
	}
	ph_env_sessions_dir(sessions, sizeof(sessions));
	snprintf(buf, size, "%s/%s", sessions, arg);
}

static int attach_exec(int argc, char **argv)
{
	const struct ph_cmd *self = &ph_cmd_iotrace_attach;
	struct ph_io_attach_opts o = { .max = PH_IO_ATTACH_MAX };
	struct attach_args args = { .max = PH_IO_ATTACH_MAX };
	struct ph_io_opts view = { 0 };
	struct ph_io_attach_result r;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_opt_args pa;
	const char *pos[2];
	char dir[4200], why[700];
	int status = ph_cmd_parse(self, &args, argc, argv, &pa), rc;

	if (status != PH_CMD_GO_ON)
		return status;
	if ((status = ph_cmd_io_view_check(self, args.pid, args.offset_ms,
					   &view)))
		return status;
	if (args.max < 0)
		return ph_cmd_usage_error(self, "bad value for --max: %" PRId64,
					  args.max);
	o.app_only = args.app_only;
	o.max = (uint64_t)args.max;
	if (pa.npos > 2)
		return ph_cmd_usage_error(self,
					  "one session and one recording");
	if (pa.npos != 2)
		return ph_cmd_usage_error(self, "which session and which "
						"recording? (attach SESSION "
						"DIR)");
	pos[0] = pa.pos[0];
	pos[1] = pa.pos[1];
	/* the join is porthole io's, with its options */
	o.pid = view.pid;
	o.have_shift = view.have_shift;
	o.shift_ns = view.shift_ns;
	session_dir(pos[0], dir, sizeof(dir));
	o.session_dir = dir;
	o.rec_dir = pos[1];
	rc = ph_io_attach(&o, &r, why, sizeof(why));
	if (rc) {
		fprintf(stderr, "porthole iotrace attach: %s\n", why);
		status = 2;
	} else if (report(&r, dir, &o, &out) ||
		   fwrite(out.buf, 1, out.len, stdout) != out.len) {
		status = 2;
	}
	ph_io_view_free(r.v);
	ph_buf_release(&out);
	return status;
}

const struct ph_cmd ph_cmd_iotrace_attach = {
	.name = "iotrace attach",
	.summary = "add a recording's block requests in a session's window to "
		   "it as io events",
	.args = "SESSION DIR",
	.opts = attach_opts,
	.about = "SESSION: a session id, or its directory. Never adds a "
		 "request twice;\nthe session's timeline, findings and MCP "
		 "have them from then on.",
	.exec = attach_exec,
};
