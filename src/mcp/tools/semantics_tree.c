/* SPDX-License-Identifier: Apache-2.0 */
/*
 * semantics_tree: what is on screen as the accessibility tree sees it,
 * capped at maxNodes (300 below full, 1500 at full).  stableId is the
 * runtime's structural path hash: it names the same node across captures.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

struct walk {
	int64_t nodes, interactive, text;
};

static void count(const struct ph_json *n, struct walk *w, int depth)
{
	const struct ph_json *ch = ph_json_get(n, "children");
	const struct ph_json *a = ph_json_get(n, "actions");

	if (!n || depth > 200)
		return;
	w->nodes++;
	w->interactive += a && a->n > 0;
	w->text += ph_json_is(ph_json_get(n, "text"), PH_JSON_STRING);
	for (uint32_t i = 0; ch && i < ch->n; i++)
		count(&ch->u.items[i], w, depth + 1);
}

static int semantics_tree_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *root;
	int64_t max = ph_mcp_limit(c, "maxNodes", 300, 1500);
	int64_t depth = ph_mcp_arg_int(c, "maxDepth", 40);
	bool merged = ph_mcp_arg_bool(c, "merged", true);
	char params[128];
	struct walk w = { 0 };
	int64_t at = 0;
	bool cut;

	snprintf(params, sizeof(params),
		 "{\"maxNodes\":%" PRId64 ",\"maxDepth\":%" PRId64
		 ",\"merged\":%s}",
		 max, depth, merged ? "true" : "false");
	if (ph_mcp_app(c, "semantics_tree", params, &r))
		return 0;
	root = ph_json_get(r, "root");
	ph_json_as_int(ph_json_get(r, "capturedAt"), &at);
	if (!root) {
		const struct ph_json *e = ph_json_get(r, "error");

		return ph_mcp_fail(
			c, "the app has no semantics tree to give: %.*s",
			ph_json_is(e, PH_JSON_STRING) ? (int)e->n : 33,
			ph_json_is(e, PH_JSON_STRING) ?
				e->u.s :
				"it registered no tree provider");
	}
	count(root, &w, 0);
	ph_mcp_line(c,
		    "%" PRId64 " nodes on screen at t=%" PRId64 " (%" PRId64
		    " interactive, %" PRId64 " with text)",
		    w.nodes, at, w.interactive, w.text);
	cut = ph_json_is(ph_json_get(r, "truncated"), PH_JSON_TRUE) ||
	      ph_json_is(ph_json_get(root, "truncated"), PH_JSON_TRUE) ||
	      w.nodes >= max;
	if (cut)
		ph_mcp_more(c,
			    "; cut at maxNodes %" PRId64
			    " (pass maxNodes or detail: full for more)",
			    max);
	ph_mcp_more(c, "; accessibility checks these nodes");
	ph_mcp_put(c, "tree", r);
	/* M: the capture detail full would ask for (1500 nodes). */
	if (cut && ph_mcp_capped(c, "maxNodes")) {
		snprintf(params, sizeof(params),
			 "{\"maxNodes\":1500,\"maxDepth\":%" PRId64
			 ",\"merged\":%s}",
			 depth, merged ? "true" : "false");
		ph_mcp_full_app(c, "semantics_tree", params, r);
	}
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_semantics_tree = {
	.name = "semantics_tree",
	.title = "What is on screen",
	.description =
		"The app's semantics tree now: every node with role, testTag, "
		"text, contentDescription, bounds (root coordinates; (0,0,0,0) "
		"= off screen), actions and flags. stableId is a structural "
		"path hash that names the same node across captures. Capped "
		"at 300 nodes (1500 at detail full); an explicit maxNodes "
		"wins. Asked of the app.",
	.props = "\"maxNodes\":{\"type\":\"integer\",\"minimum\":1,"
		 "\"maximum\":20000,\"description\":\"most nodes; default 300 "
		 "(1500 at detail full)\"},"
		 "\"maxDepth\":{\"type\":\"integer\",\"minimum\":1,"
		 "\"maximum\":200,\"default\":40,\"description\":\"deepest "
		 "level\"},"
		 "\"merged\":{\"type\":\"boolean\",\"default\":true,"
		 "\"description\":\"merge descendants into their clickable "
		 "parent, as a screen reader does\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_IDEMPOTENT,
	.call = semantics_tree_call,
};
