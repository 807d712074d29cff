/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole report FILE [--json] [--html OUT]: the human report of a
 * capture file.  FILE may also be a recorded session (events.ndjson, or any
 * NDJSON the wire carried): it is analyzed over its whole length first.
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_log.h"
#include "host/capture.h"
#include "host/env.h"
#include "host/findings.h"
#include "host/report.h"

#include <fcntl.h>
#include <unistd.h>

static const struct ph_cmd *self(void);

/* A file whose first line is a wire frame, not a capture object. */
static bool is_ndjson(const char *path)
{
	char head[256] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n <= 0)
		return false;
	head[n] = '\0';
	return !strstr(head, "\"format\"") &&
	       (strstr(head, "{\"event\"") || strstr(head, "{\"id\""));
}

/* Analyzes an NDJSON session into capture text in buf. */
static int capture_of_ndjson(const char *path, struct ph_buf *buf)
{
	struct ph_capture_info info = { .scenario = "session",
					.driver = "porthole report" };
	struct ph_analysis *a;
	struct ph_jw jw;
	int rc;

	a = ph_analyze_file(path, PH_WINDOW_ALL, &rc);
	if (!a)
		return rc ? rc : -1;
	ph_analysis_resolve_where(a, ph_env_project_root());
	ph_jw_init(&jw, buf);
	ph_capture_write(a, &info, &jw);
	ph_analysis_free(a);
	return ph_jw_finish(&jw);
}

struct report_args {
	bool json;
	const char *html;
};

#define OFF(f) offsetof(struct report_args, f)
static const struct ph_opt report_opts[] = {
	{ .name = "json",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(json),
	  .help = "the report as one JSON object" },
	{ .name = "html",
	  .kind = PH_OPT_STR,
	  .offset = OFF(html),
	  .metavar = "OUT",
	  .help = "also write a self-contained HTML page of the run to OUT" },
	{ .kind = PH_OPT_END },
};

static int report_exec(int argc, char **argv)
{
	struct report_args args = { 0 };
	struct ph_opt_args pa;
	const char *file, *html;
	bool json;
	struct ph_buf in = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena arena;
	const struct ph_json *cap = NULL;
	char why[600];
	int rc, status = 0;

	rc = ph_cmd_parse(self(), &args, argc, argv, &pa);
	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos > 1)
		return ph_cmd_usage_error(self(), "one file at a time");
	if (!pa.npos)
		return ph_cmd_usage_error(self(), "which capture file?");
	file = pa.pos[0];
	html = args.html;
	json = args.json;
	ph_arena_init(&arena, (size_t)1 << 20, (size_t)2 << 30);
	if (is_ndjson(file)) {
		struct ph_json *root;
		struct ph_err err;

		rc = capture_of_ndjson(file, &in);
		if (rc || ph_json_parse(&arena, in.buf, in.len, &root, &err)) {
			fprintf(stderr,
				"porthole report: %s: could not read "
				"the session\n",
				file);
			status = 2;
			goto out;
		}
		cap = root;
	} else {
		rc = ph_capture_load(file, &arena, &in, &cap, why, sizeof(why));
		if (rc) {
			fprintf(stderr, "porthole report: %s\n", why);
			status = 2;
			goto out;
		}
	}
	rc = json ? ph_report_json(cap, &out) : ph_report_text(cap, &out);
	if (rc || fwrite(out.buf, 1, out.len, stdout) != out.len) {
		status = 2;
		goto out;
	}
	if (html) {
		FILE *f;

		ph_buf_reset(&out);
		if (ph_report_html(cap, &out) || !(f = fopen(html, "w"))) {
			fprintf(stderr,
				"porthole report: cannot write %s: %s\n", html,
				strerror(errno));
			status = 2;
			goto out;
		}
		if (fwrite(out.buf, 1, out.len, f) != out.len || fclose(f)) {
			fprintf(stderr, "porthole report: cannot write %s\n",
				html);
			status = 2;
		}
	}
out:
	ph_arena_release(&arena);
	ph_buf_release(&in);
	ph_buf_release(&out);
	return status;
}

const struct ph_cmd ph_cmd_report = {
	.name = "report",
	.summary = "the human report of a capture file (text, JSON or HTML)",
	.args = "FILE",
	.opts = report_opts,
	.about = "FILE: a capture file (porthole capture / save), or a\n"
		 "recorded session's events.ndjson",
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = report_exec,
};

static const struct ph_cmd *self(void)
{
	return &ph_cmd_report;
}
