/* state: the app's registered state owners and their fields. */
#include "ph_common.h"
#include "mcp/mcp.h"

static int state_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *owners, *notes;
	struct ph_buf p = PH_BUF_INIT(1 << 16);
	struct ph_jw jw;
	const char *owner = ph_mcp_arg_str(c, "owner", NULL);
	const char *params = "{}";
	size_t fields = 0;

	if (owner) {
		ph_jw_init(&jw, &p);
		ph_jw_obj_begin(&jw);
		ph_jw_kv_str(&jw, "owner", owner);
		ph_jw_obj_end(&jw);
		if (!ph_jw_finish(&jw))
			params = ph_arena_strndup(c->arena, p.buf, p.len);
	}
	ph_buf_release(&p);
	if (ph_mcp_app(c, "state", params, &r))
		return 0;
	owners = ph_json_get(r, "owners");
	for (uint32_t i = 0; owners && i < owners->n; i++) {
		const struct ph_json *f =
			ph_json_get(&owners->u.items[i], "fields");

		fields += f ? f->n : 0;
	}
	ph_mcp_line(c, "%u state owner%s, %zu field%s%s%s",
		    owners ? owners->n : 0, owners && owners->n == 1 ? "" : "s",
		    fields, fields == 1 ? "" : "s", owner ? " for " : "",
		    owner ? owner : "");
	notes = ph_json_get(r, "notes");
	if (notes && notes->n && ph_json_is(&notes->u.items[0], PH_JSON_STRING))
		ph_mcp_more(c, " (%.*s)", (int)notes->u.items[0].n,
			    notes->u.items[0].u.s);
	ph_mcp_put(c, "state", r);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_state = {
	.name = "state",
	.title = "App state owners",
	.description = "The state holders the app registered (view models, "
		       "stores) and their fields, asked of the running app. "
		       "The C runtime knows which keys were written and how "
		       "often, not their values; it says so in notes.",
	.props = "\"owner\":{\"type\":\"string\",\"description\":\"only this "
		 "owner (view model) by name\"}",
	.flags = PH_TOOL_READONLY | PH_TOOL_IDEMPOTENT,
	.call = state_call,
};
