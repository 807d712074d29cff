/* SPDX-License-Identifier: Apache-2.0 */
/*
 * save_moment: a window of the session as a capture file (the format
 * `porthole report` and `compare` read), under .porthole/moments/.
 */
#include "ph_common.h"
#include "mcp/mcp.h"
#include "host/capture.h"

#include <sys/stat.h>

static bool safe_name(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

static int save_moment_call(struct ph_mcp_call *c)
{
	struct ph_mcp_source src;
	struct ph_analysis *a;
	const char *name = ph_mcp_arg_str(c, "name", "moment");
	struct ph_capture_info info = { .scenario = name,
					.driver = "porthole mcp" };
	char dir[4300], path[4500], ws[80];

	if (ph_mcp_window_refused(c))
		return 0;
	if (!*name || strlen(name) > 80 || !safe_name(name))
		return ph_mcp_fail(c, "name must be 1-80 letters, digits, '-' "
				      "or '_'");
	a = ph_mcp_analyze(c, c->w, &src);
	if (!a)
		return 0;
	snprintf(dir, sizeof(dir), "%.4200s", c->m->trace_dir);
	/* .porthole/traces -> .porthole/moments */
	if (strlen(dir) > 7 && !strcmp(dir + strlen(dir) - 7, "/traces"))
		snprintf(dir + strlen(dir) - 7, 9, "/moments");
	{
		char parent[4300];

		snprintf(parent, sizeof(parent), "%s", dir);
		*strrchr(parent, '/') = '\0';
		mkdir(parent, 0755);
		mkdir(dir, 0755);
	}
	snprintf(path, sizeof(path), "%s/%s-%" PRId64 ".json", dir, name,
		 a->window.to);
	if (ph_capture_save(a, &info, path)) {
		ph_analysis_free(a);
		return ph_mcp_fail(c, "could not write %s", path);
	}
	ph_mcp_line(c,
		    "saved t=%s (%zu finding%s) to %s; read it with "
		    "`porthole report %s`",
		    ph_mcp_wstr(a->window, ws, sizeof(ws)), a->nf,
		    a->nf == 1 ? "" : "s", path, path);
	if (src.note[0])
		ph_mcp_more(c, " (%s)", src.note);
	ph_jw_kv_str(&c->jw, "path", path);
	ph_jw_kv_int(&c->jw, "from",
		     a->window.from == INT64_MIN ? a->first_t : a->window.from);
	ph_jw_kv_int(&c->jw, "to", a->window.to);
	ph_jw_kv_int(&c->jw, "findings", (int64_t)a->nf);
	ph_mcp_mark(c, a->window.to);
	ph_analysis_free(a);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_save_moment = {
	.name = "save_moment",
	.title = "Save a moment",
	.description = "Saves a window of the app's session as a capture "
		       "file under .porthole/moments/ (what `porthole "
		       "report` and `porthole compare` read), so a moment "
		       "can be reported, compared or attached to a bug.",
	.props = "\"name\":{\"type\":\"string\",\"default\":\"moment\","
		 "\"description\":\"a short name: letters, digits, - and _\"}",
	.flags = PH_TOOL_WINDOW,
	.call = save_moment_call,
};
