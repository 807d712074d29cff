/* SPDX-License-Identifier: Apache-2.0 */
/* state: the app's registered state owners and their fields. */
#include "ph_common.h"
#include "mcp/mcp.h"

/*
 * The owners of r named `owner`, as a new array in the arena: a runtime
 * that ignores the parameter (ours did) still answers for that owner
 * alone.  NULL when out of memory.
 */
static struct ph_json *only_owner(struct ph_mcp_call *c,
				  const struct ph_json *owners,
				  const char *owner)
{
	struct ph_json *kept = ph_arena_alloc(c->arena, sizeof(*kept));
	uint32_t n = owners ? owners->n : 0;

	if (!kept)
		return NULL;
	*kept = (struct ph_json){ .type = PH_JSON_ARRAY };
	kept->u.items =
		ph_arena_alloc(c->arena, sizeof(*kept->u.items) * (n ? n : 1));
	if (!kept->u.items)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (ph_json_streq(ph_json_get(&owners->u.items[i], "name"),
				  owner))
			kept->u.items[kept->n++] = owners->u.items[i];
	return kept;
}

/* Writes r as the payload's `state`, its owners replaced by `owners`. */
static void put_state(struct ph_mcp_call *c, const struct ph_json *r,
		      const struct ph_json *owners)
{
	ph_jw_key(&c->jw, "state");
	if (!ph_json_is(r, PH_JSON_OBJECT)) {
		ph_jw_value(&c->jw, r);
		return;
	}
	ph_jw_obj_begin(&c->jw);
	for (uint32_t i = 0; i < r->n; i++) {
		const struct ph_json_member *m = &r->u.members[i];

		ph_jw_keyn(&c->jw, m->key.u.s, m->key.n);
		ph_jw_value(&c->jw,
			    m->key.n == 6 && !memcmp(m->key.u.s, "owners", 6) ?
				    owners :
				    &m->value);
	}
	ph_jw_obj_end(&c->jw);
}

static int state_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *owners, *all, *notes;
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
	owners = all = ph_json_get(r, "owners");
	if (owner && !(owners = only_owner(c, all, owner)))
		return ph_mcp_fail(c, "state: out of memory");
	for (uint32_t i = 0; owners && i < owners->n; i++) {
		const struct ph_json *f =
			ph_json_get(&owners->u.items[i], "fields");

		fields += f ? f->n : 0;
	}
	ph_mcp_line(c, "%u state owner%s, %zu field%s%s%s",
		    owners ? owners->n : 0, owners && owners->n == 1 ? "" : "s",
		    fields, fields == 1 ? "" : "s", owner ? " for " : "",
		    owner ? owner : "");
	if (owner && !owners->n) {
		ph_mcp_more(c, ": the app registered no owner of that name");
		for (uint32_t i = 0; all && i < all->n && i < 10; i++) {
			const struct ph_json *nm =
				ph_json_get(&all->u.items[i], "name");

			if (ph_json_is(nm, PH_JSON_STRING))
				ph_mcp_more(c, "%s%.*s",
					    i ? ", " : " (its owners: ",
					    (int)(nm->n > 64 ? 64 : nm->n),
					    nm->u.s);
		}
		if (all && all->n)
			ph_mcp_more(c, ")");
	}
	notes = ph_json_get(r, "notes");
	if (notes && notes->n && ph_json_is(&notes->u.items[0], PH_JSON_STRING))
		ph_mcp_more(c, " (%.*s)", (int)notes->u.items[0].n,
			    notes->u.items[0].u.s);
	put_state(c, r, owners);
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
