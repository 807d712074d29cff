/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accessibility: the rule set of docs/mcp.md on a fresh semantics
 * capture, with the font scale the app last reported.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

static int font_cb(void *ctx, const struct ph_event *ev)
{
	double *fs = ctx, v;

	if ((ph_ev_streq(ev, "kind", "fontScale") ||
	     ph_ev_streq(ev, "kind", "profile")) &&
	    ph_ev_num(ev, "fontScale", &v) && v > 0)
		*fs = v;
	return 0;
}

static int accessibility_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *root;
	struct ph_a11y_result res;
	double fs = 0;
	int64_t max = ph_mcp_limit(c, "limit", 20, 1000);
	size_t at;

	if (ph_mcp_app(c, "semantics_tree",
		       "{\"maxNodes\":1500,\"maxDepth\":80,\"merged\":true}",
		       &r))
		return 0;
	root = ph_json_get(r, "root");
	if (!root)
		return ph_mcp_fail(c, "cannot check accessibility: the app "
				      "gives no semantics tree (it registered "
				      "no tree provider)");
	if (c->m->lv)
		ph_store_each(&c->m->lv->store, PH_WINDOW_ALL,
			      ph_kinds_mask("device"), font_cb, &fs);
	ph_jw_kv_double(&c->jw, "fontScale", fs > 0 ? fs : 1);
	ph_jw_kv_str(&c->jw, "units", "bounds read as dp");
	at = c->payload.len;
	ph_a11y_check(root, fs, (size_t)max, &c->jw, &res);
	if (!res.warnings && !res.notes) {
		ph_mcp_line(c, "nothing found, %" PRId64 " node(s) checked",
			    res.checked);
	} else {
		ph_mcp_line(c,
			    "%" PRId64 " warning%s, %" PRId64
			    " note%s over %" PRId64 " node(s) checked",
			    res.warnings, res.warnings == 1 ? "" : "s",
			    res.notes, res.notes == 1 ? "" : "s", res.checked);
		if (res.warnings + res.notes > max)
			ph_mcp_more(c,
				    " (%" PRId64 " matched, first %" PRId64
				    " returned)",
				    res.warnings + res.notes, max);
	}
	if (res.skipped)
		ph_mcp_more(c,
			    "; %" PRId64 " node(s) hidden from assistive "
			    "technology skipped",
			    res.skipped);
	if (fs > 1.3)
		ph_mcp_more(c, "; font scale %.2f", fs);
	/* M: the issues detail full would list, checked again aside. */
	if (res.warnings + res.notes > max && ph_mcp_capped(c, "limit")) {
		struct ph_buf b = PH_BUF_INIT((size_t)64 << 20);
		struct ph_jw jw;
		struct ph_a11y_result fres;

		/* {"x":0 first, so the members follow a comma as above */
		ph_jw_init(&jw, &b);
		ph_jw_obj_begin(&jw);
		ph_jw_kv_int(&jw, "x", 0);
		ph_a11y_check(root, fs, 1000, &jw, &fres);
		ph_jw_obj_end(&jw);
		if (!ph_jw_finish(&jw) && b.len > 7 &&
		    b.len - 7 > c->payload.len - at)
			c->full_payload = at + (b.len - 7) + 1; /* and } */
		ph_buf_release(&b);
	}
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_accessibility = {
	.name = "accessibility",
	.title = "Accessibility check",
	.description =
		"Checks the screen now (a fresh semantics capture) against "
		"these rules: interactive node with no label (warning); touch "
		"target under 24 dp (warning) or 24-48 dp (note: automatic "
		"padding may already fix it); role/click mismatch (note); "
		"image with no description (note); the same description on "
		"visible siblings (note); text tight against its parent at "
		"font scale > 1.3 (note, correlated). Nodes hidden from "
		"assistive technology and their subtrees are skipped and "
		"counted.",
	.props = "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
		 "10000,\"description\":\"most issues listed; default 20 "
		 "(1000 at detail full)\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_IDEMPOTENT,
	.call = accessibility_call,
};
