/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schema.c: each tool's JSON schema as tools/list shows it (inputSchema,
 * outputSchema, annotations), and the check tools/call runs on the
 * arguments against that same schema before the tool sees them.
 */
#include "ph_common.h"
#include "mcp.h"
#include "mcp/server_int.h"

/* --- schemas ---------------------------------------------------------------
 */

static const char detail_prop[] =
	"\"detail\":{\"type\":\"string\",\"enum\":[\"summary\",\"normal\","
	"\"full\"],\"default\":\"summary\",\"description\":\"summary: one "
	"line with the headline numbers and what the next call needs; "
	"normal: plus compact JSON; full: uncapped JSON\"}";
static const char window_props[] =
	",\"since\":{\"type\":\"string\",\"enum\":[\"last\",\"all\"],"
	"\"default\":\"last\",\"description\":\"last: from where this "
	"tool's previous answer ended (the first call covers everything); "
	"all: everything held, and the next 'last' starts after it\"},"
	"\"sinceMs\":{\"type\":\"integer\",\"minimum\":0,\"description\":"
	"\"the last N ms of the app's clock (wins over since)\"},"
	"\"from\":{\"type\":\"integer\",\"description\":\"window start, app "
	"clock ms, inclusive (wins over sinceMs)\"},"
	"\"to\":{\"type\":\"integer\",\"description\":\"window end, app clock "
	"ms, inclusive (default: now)\"}";

/*
 * Every tool's structuredContent is its JSON payload (docs/mcp.md,
 * "Answers"): an object whose first member is sinceLast; the members after
 * it are the tool's own, described in its description and docs/mcp.md.
 */
static const char output_schema[] =
	"{\"type\":\"object\",\"properties\":{\"sinceLast\":{\"type\":"
	"[\"object\",\"null\"],\"description\":\"error findings no one "
	"reported yet since the previous call: {errors, firstAt, lastAt}, or "
	"null\",\"properties\":{\"errors\":{\"type\":\"integer\"},"
	"\"firstAt\":{\"type\":\"integer\"},\"lastAt\":{\"type\":"
	"\"integer\"}}}},\"required\":[\"sinceLast\"]}";

/* The full `properties` object of a tool, as text, into b. */
static int schema_props(const struct ph_mcp_tool *t, struct ph_buf *b)
{
	int rc = ph_buf_addch(b, '{');

	if (!rc && t->props && t->props[0])
		rc = ph_buf_addf(b, "%s,", t->props);
	if (!rc)
		rc = ph_buf_addstr(b, detail_prop);
	if (!rc && (t->flags & PH_TOOL_WINDOW))
		rc = ph_buf_addstr(b, window_props);
	if (!rc)
		rc = ph_buf_addch(b, '}');
	return rc;
}

void ph_mcp_write_tool(struct ph_jw *jw, const struct ph_mcp_tool *t)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);

	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "name", t->name);
	ph_jw_kv_str(jw, "title", t->title);
	ph_jw_kv_str(jw, "description", t->description);
	ph_jw_key(jw, "inputSchema");
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "type", "object");
	ph_jw_key(jw, "properties");
	if (schema_props(t, &b))
		ph_jw_null(jw);
	else
		ph_jw_raw(jw, b.buf, b.len);
	if (t->required) {
		ph_jw_key(jw, "required");
		ph_jw_raw(jw, t->required, strlen(t->required));
	}
	ph_jw_kv_bool(jw, "additionalProperties", false);
	ph_jw_obj_end(jw);
	ph_jw_key(jw, "outputSchema");
	ph_jw_raw(jw, output_schema, strlen(output_schema));
	ph_jw_key(jw, "annotations");
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "title", t->title);
	ph_jw_kv_bool(jw, "readOnlyHint", t->flags & PH_TOOL_READONLY);
	ph_jw_kv_bool(jw, "destructiveHint", t->flags & PH_TOOL_DESTRUCTIVE);
	ph_jw_kv_bool(jw, "idempotentHint", t->flags & PH_TOOL_IDEMPOTENT);
	ph_jw_kv_bool(jw, "openWorldHint", t->flags & PH_TOOL_OPENWORLD);
	ph_jw_obj_end(jw);
	ph_jw_obj_end(jw);
	ph_buf_release(&b);
}

/*
 * null, "" and "null" mean absent, as in the published runtime's tools:
 * the argument accessors read them so (source.c), and nothing absent is
 * checked against the schema or counts as given.
 */
static bool absent(const struct ph_json *v)
{
	return !v || v->type == PH_JSON_NULL ||
	       (v->type == PH_JSON_STRING &&
		(!v->n || (v->n == 4 && !memcmp(v->u.s, "null", 4))));
}

const char *ph_mcp_check_args(struct ph_arena *a, const struct ph_mcp_tool *t,
			      const struct ph_json *args)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	struct ph_json *props = NULL, *req = NULL;
	char why[512] = "";

	if (schema_props(t, &b) || ph_json_parse(a, b.buf, b.len, &props, NULL))
		snprintf(why, sizeof(why), "internal: the schema of %s is bad",
			 t->name);
	for (uint32_t i = 0; !why[0] && i < args->n; i++) {
		const struct ph_json *k = &args->u.members[i].key;
		const struct ph_json *v = &args->u.members[i].value;
		const struct ph_json *p = NULL, *ty, *en;
		char name[80];
		bool ok = true;
		int64_t iv, lim;

		snprintf(name, sizeof(name), "%.*s",
			 (int)(k->n > 60 ? 60 : k->n), k->u.s);
		for (uint32_t j = 0; j < props->n && !p; j++)
			if (props->u.members[j].key.n == k->n &&
			    !memcmp(props->u.members[j].key.u.s, k->u.s, k->n))
				p = &props->u.members[j].value;
		if (!p) {
			size_t o = (size_t)snprintf(
				why, sizeof(why),
				"unknown argument '%s'; %s takes:", name,
				t->name);
			for (uint32_t j = 0; j < props->n && o < sizeof(why);
			     j++)
				o += (size_t)snprintf(
					why + o, sizeof(why) - o, " %.*s",
					(int)props->u.members[j].key.n,
					props->u.members[j].key.u.s);
			break;
		}
		if (absent(v))
			continue;
		ty = ph_json_get(p, "type");
		if (ph_json_streq(ty, "integer"))
			ok = v->type == PH_JSON_INT ||
			     (v->type == PH_JSON_DOUBLE &&
			      ph_json_as_int(v, &iv));
		else if (ph_json_streq(ty, "number"))
			ok = v->type == PH_JSON_INT ||
			     v->type == PH_JSON_DOUBLE;
		else if (ph_json_streq(ty, "string"))
			ok = v->type == PH_JSON_STRING;
		else if (ph_json_streq(ty, "boolean"))
			ok = v->type == PH_JSON_TRUE ||
			     v->type == PH_JSON_FALSE;
		else if (ph_json_streq(ty, "array"))
			ok = v->type == PH_JSON_ARRAY;
		else if (ph_json_streq(ty, "object"))
			ok = v->type == PH_JSON_OBJECT;
		if (!ok && ph_json_streq(ty, "integer") &&
		    v->type == PH_JSON_DOUBLE &&
		    (v->u.d >= 9223372036854775808.0 ||
		     v->u.d < -9223372036854775808.0)) {
			snprintf(why, sizeof(why),
				 "argument '%s' is %.17g, past what a 64-bit "
				 "integer holds",
				 name, v->u.d);
			break;
		}
		if (!ok) {
			snprintf(why, sizeof(why), "argument '%s' must be %.*s",
				 name, (int)ty->n, ty->u.s);
			break;
		}
		en = ph_json_get(p, "enum");
		if (en && v->type == PH_JSON_STRING) {
			bool found = false;

			for (uint32_t j = 0; j < en->n && !found; j++)
				found = ph_json_equal(&en->u.items[j], v);
			if (!found) {
				size_t o = (size_t)snprintf(
					why, sizeof(why),
					"argument '%s' is '%.*s'; it must be one "
					"of:",
					name, (int)(v->n > 40 ? 40 : v->n),
					v->u.s);
				for (uint32_t j = 0;
				     j < en->n && o < sizeof(why); j++)
					o += (size_t)snprintf(
						why + o, sizeof(why) - o,
						" %.*s", (int)en->u.items[j].n,
						en->u.items[j].u.s);
				break;
			}
		}
		if (ph_json_as_int(v, &iv) && v->type != PH_JSON_STRING) {
			if (ph_json_as_int(ph_json_get(p, "minimum"), &lim) &&
			    iv < lim) {
				snprintf(why, sizeof(why),
					 "argument '%s' is %" PRId64
					 "; the least it may be is %" PRId64,
					 name, iv, lim);
				break;
			}
			if (ph_json_as_int(ph_json_get(p, "maximum"), &lim) &&
			    iv > lim) {
				snprintf(why, sizeof(why),
					 "argument '%s' is %" PRId64
					 "; the most it may be is %" PRId64,
					 name, iv, lim);
				break;
			}
		}
	}
	if (!why[0] && t->required &&
	    !ph_json_parse(a, t->required, strlen(t->required), &req, NULL))
		for (uint32_t j = 0; j < req->n; j++) {
			char rn[80];

			snprintf(rn, sizeof(rn), "%.*s", (int)req->u.items[j].n,
				 req->u.items[j].u.s);
			if (absent(ph_json_get(args, rn))) {
				snprintf(why, sizeof(why),
					 "argument '%s' is required", rn);
				break;
			}
		}
	ph_buf_release(&b);
	return why[0] ? ph_arena_strndup(a, why, strlen(why)) : NULL;
}
