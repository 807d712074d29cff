/* SPDX-License-Identifier: Apache-2.0 */
/*
 * setup: which integrations are wired, which are present but unwired
 * (ranked by what they leave dark), each with the exact line to add.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

/* What each integration shows, and the line that wires it (porthole.h). */
static const struct {
	const char *name;
	int rank; /* lower: more left dark without it */
	const char *dark;
	const char *line;
} known[] = {
	{ "main_thread", 0, "main-thread stalls and ANR risk",
	  "porthole_main_loop_register(); /* once, on the main thread */" },
	{ "frames", 1, "late frames and their phases",
	  "porthole_frame_begin(); ... porthole_frame_end(); /* per frame */" },
	{ "sqlite", 2, "queries, main-thread queries, the database inspector",
	  "porthole_sqlite_attach(db); /* after sqlite3_open_v2 */" },
	{ "curl", 3, "HTTP calls, their phases, failures and bodies",
	  "porthole_curl_attach(curl, NULL); /* after curl_easy_init */" },
	{ "nav_state", 4, "screens, back stack, deep links",
	  "porthole_nav(PORTHOLE_NAV_PUSH, route, args); /* on navigation */" },
	{ "semantics_tree", 5, "what is on screen, accessibility",
	  "porthole_set_semantics_provider(fn, ctx);" },
	{ "recompositions", 6, "which components re-render and why",
	  "porthole_recompose(id, name, screen); /* per render */" },
	{ "jobs", 7, "background work and retries",
	  "porthole_work_start(id, name, attempt); ... porthole_work_end(...);" },
	{ "input", 8, "taps and how long the app took to answer",
	  "porthole_input(PORTHOLE_INPUT_TAP, x, y, target);" },
};

static bool listed(const struct ph_json *arr, const char *name)
{
	for (uint32_t i = 0; arr && i < arr->n; i++)
		if (ph_json_streq(&arr->u.items[i], name))
			return true;
	return false;
}

static int setup_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *hello = NULL;
	size_t wired = 0, unwired = 0, absent = 0;
	const char *first = NULL;

	if (ph_mcp_app(c, "setup", NULL, &r))
		return 0;
	if (!ph_json_is(r, PH_JSON_ARRAY))
		return ph_mcp_fail(c, "the app's setup answer is not a list");
	if (ph_mcp_app(c, "hello", NULL, &hello))
		return 0;
	hello = ph_json_get(hello, "collectors");
	ph_jw_key(&c->jw, "integrations");
	ph_jw_arr_begin(&c->jw);
	/* the app's own report first: present but unwired, ranked */
	for (uint32_t i = 0; i < r->n; i++) {
		const struct ph_json *e = &r->u.items[i];
		bool cp =
			ph_json_is(ph_json_get(e, "onClasspath"), PH_JSON_TRUE);
		bool in = ph_json_is(ph_json_get(e, "instrumented"),
				     PH_JSON_TRUE);

		if (cp && !in)
			unwired++;
		else if (in)
			wired++;
		else
			absent++;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < PH_ARRAY_SIZE(known); k++) {
			const struct ph_json *e = NULL;
			bool in, present;

			for (uint32_t i = 0; i < r->n && !e; i++)
				if (ph_json_streq(ph_json_get(&r->u.items[i],
							      "name"),
						  known[k].name))
					e = &r->u.items[i];
			in = e ? ph_json_is(ph_json_get(e, "instrumented"),
					    PH_JSON_TRUE) :
				 listed(hello, known[k].name);
			present = e ? ph_json_is(ph_json_get(e, "onClasspath"),
						 PH_JSON_TRUE) :
				      true;
			/* pass 0: unwired, by rank; pass 1: wired */
			if ((pass == 0) == in)
				continue;
			if (!in && !e) {
				/* no setup entry: a collector not in hello */
				unwired++;
			}
			if (!in && !first)
				first = known[k].name;
			ph_jw_obj_begin(&c->jw);
			ph_jw_kv_str(&c->jw, "name", known[k].name);
			ph_jw_kv_str(&c->jw, "status",
				     in	     ? "wired" :
				     present ? "present, not wired" :
					       "absent");
			if (!in) {
				ph_jw_kv_str(&c->jw, "leavesDark",
					     known[k].dark);
				ph_jw_kv_str(&c->jw, "add", known[k].line);
			}
			if (e && ph_json_get(e, "hint"))
				ph_mcp_json_kv(&c->jw, "hint",
					       ph_json_get(e, "hint"));
			ph_jw_obj_end(&c->jw);
		}
	ph_jw_arr_end(&c->jw);
	ph_mcp_put(c, "appSetup", r);
	ph_mcp_put(c, "collectors", hello);
	ph_mcp_line(c, "%u collector%s wired", hello ? hello->n : 0,
		    hello && hello->n == 1 ? "" : "s");
	if (first) {
		for (size_t k = 0; k < PH_ARRAY_SIZE(known); k++)
			if (!strcmp(known[k].name, first))
				ph_mcp_more(
					c,
					"; not wired, most left dark first: "
					"%s (%s) - add: %s",
					first, known[k].dark, known[k].line);
	} else {
		ph_mcp_more(c, "; every integration Porthole knows is wired");
	}
	(void)wired;
	(void)absent;
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_setup = {
	.name = "setup",
	.title = "Integrations wired",
	.description = "Which Porthole integrations the app has wired (its "
		       "collectors) and which are present but not wired, "
		       "ranked by what they leave dark, each with the exact "
		       "line to add. Asked of the app.",
	.flags = PH_TOOL_READONLY | PH_TOOL_IDEMPOTENT,
	.call = setup_call,
};
