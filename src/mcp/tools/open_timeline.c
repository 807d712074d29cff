/* SPDX-License-Identifier: Apache-2.0 */
/*
 * open_timeline: the window drawn as lanes on a time axis, one
 * self-contained HTML page (the report's), written under
 * .porthole/timelines/ for a person to open.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "host/capture.h"
#include "host/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static int open_timeline_call(struct ph_mcp_call *c)
{
	struct ph_mcp_source src;
	struct ph_analysis *a;
	struct ph_capture_info info = { .scenario = "timeline",
					.driver = "porthole mcp" };
	struct ph_buf cap = PH_BUF_INIT((size_t)256 << 20);
	struct ph_buf html = PH_BUF_INIT((size_t)256 << 20);
	struct ph_json *tree;
	struct ph_jw jw;
	char dir[4300], path[4500], ws[80], *slash;
	int fd, rc = -1;

	if (ph_mcp_window_refused(c))
		return 0;
	if (!ph_mcp_arg_has(c, "from") && !ph_mcp_arg_has(c, "sinceMs") &&
	    !ph_mcp_arg_has(c, "since"))
		c->w.from = INT64_MIN; /* a page shows the whole session */
	a = ph_mcp_analyze(c, c->w, &src);
	if (!a)
		return 0;
	ph_jw_init(&jw, &cap);
	ph_capture_write(a, &info, &jw);
	/* Pages go beside the system traces: .porthole/timelines. */
	snprintf(dir, sizeof(dir), "%s", c->m->trace_dir);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdir(dir, 0755); /* .porthole itself */
	}
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/timelines");
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/timeline-%" PRId64 ".html", dir,
		 a->window.to);
	if (!ph_jw_finish(&jw) &&
	    !ph_json_parse(c->arena, cap.buf, cap.len, &tree, NULL) &&
	    !ph_report_html(tree, &html) &&
	    (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >=
		    0) {
		rc = write(fd, html.buf, html.len) == (ssize_t)html.len ? 0 :
									  -1;
		if (close(fd))
			rc = -1;
	}
	if (rc) {
		ph_mcp_fail(c, "could not write the timeline page %s", path);
	} else {
		ph_mcp_line(c,
			    "timeline of t=%s (%zu finding%s) written to "
			    "file://%s: open it in a browser",
			    ph_mcp_wstr(a->window, ws, sizeof(ws)), a->nf,
			    a->nf == 1 ? "" : "s", path);
		if (src.note[0])
			ph_mcp_more(c, " (%s)", src.note);
		ph_jw_kv_str(&c->jw, "path", path);
		ph_jw_kv_int(&c->jw, "bytes", (int64_t)html.len);
	}
	ph_analysis_free(a);
	ph_buf_release(&cap);
	ph_buf_release(&html);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_open_timeline = {
	.name = "open_timeline",
	.title = "Timeline page for a person",
	.description = "Writes the session (or a window of it) as one "
		       "self-contained HTML page, the run drawn as lanes "
		       "(main thread, frames, HTTP, database, work, "
		       "navigation, input, logs) with the findings beside "
		       "it, and returns its file:// address for a person to "
		       "open.",
	.flags = PH_TOOL_WINDOW,
	.call = open_timeline_call,
};
