/* SPDX-License-Identifier: Apache-2.0 */
/* nav_state: the app's screen and back stack, asked of the app. */
#include "ph_common.h"
#include "mcp/mcp.h"

static void entry_str(const struct ph_json *e, char *buf, size_t size)
{
	const struct ph_json *r = ph_json_get(e, "route");
	const struct ph_json *d = ph_json_get(e, "destinationId");
	const struct ph_json *v = ph_json_is(r, PH_JSON_STRING) ? r : d;

	snprintf(buf, size, "%.*s",
		 ph_json_is(v, PH_JSON_STRING) ? (int)v->n : 1,
		 ph_json_is(v, PH_JSON_STRING) ? v->u.s : "?");
}

static int nav_state_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *bs, *dl;
	char cur[200], stack[600] = "";
	size_t o = 0;

	if (ph_mcp_app(c, "nav_state", NULL, &r))
		return 0;
	entry_str(ph_json_get(r, "current"), cur, sizeof(cur));
	bs = ph_json_get(r, "backStack");
	for (uint32_t i = 0; bs && i < bs->n && o < sizeof(stack); i++) {
		char e[200];

		entry_str(&bs->u.items[i], e, sizeof(e));
		o += (size_t)snprintf(stack + o, sizeof(stack) - o, "%s%s",
				      i ? " > " : "", e);
	}
	ph_mcp_line(c, "screen: %s; back stack (%u): %s", cur, bs ? bs->n : 0,
		    stack[0] ? stack : "empty");
	dl = ph_json_get(r, "deepLink");
	if (ph_json_is(ph_json_get(dl, "uri"), PH_JSON_STRING))
		ph_mcp_more(c, "; opened by deep link %.*s",
			    (int)ph_json_get(dl, "uri")->n,
			    ph_json_get(dl, "uri")->u.s);
	if (ph_json_is(ph_json_get(r, "error"), PH_JSON_STRING))
		ph_mcp_more(c, "; the app says: %.*s",
			    (int)ph_json_get(r, "error")->n,
			    ph_json_get(r, "error")->u.s);
	ph_mcp_put(c, "navState", r);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_nav_state = {
	.name = "nav_state",
	.title = "Current screen and back stack",
	.description = "Which screen the app shows now, its arguments, the "
		       "back stack, and the deep link that opened it, asked "
		       "of the running app.",
	.flags = PH_TOOL_READONLY | PH_TOOL_IDEMPOTENT,
	.call = nav_state_call,
};
