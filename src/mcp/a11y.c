/* SPDX-License-Identifier: Apache-2.0 */
/*
 * a11y.c: the accessibility rules over a semantics tree (docs/mcp.md,
 * "accessibility").  Bounds are read as dp: the runtime reports them in
 * the app's layout units (the C sample's are dp; a Compose runtime sends
 * px, and the answer says which was assumed).
 */
#include "ph_common.h"
#include "mcp.h"

struct a11y {
	struct ph_jw *jw;
	struct ph_a11y_result *r;
	size_t max;
	size_t issues;
	double font_scale;
};

static bool has_str(const struct ph_json *n, const char *k)
{
	const struct ph_json *v = ph_json_get(n, k);

	return ph_json_is(v, PH_JSON_STRING) && v->n > 0;
}

static bool in_array(const struct ph_json *arr, const char *s)
{
	for (uint32_t i = 0; arr && i < arr->n; i++)
		if (ph_json_streq(&arr->u.items[i], s))
			return true;
	return false;
}

static bool bounds(const struct ph_json *n, double b[4])
{
	const struct ph_json *bb = ph_json_get(n, "bounds");
	static const char *const k[4] = { "left", "top", "right", "bottom" };

	for (int i = 0; i < 4; i++)
		if (!ph_json_as_double(ph_json_get(bb, k[i]), &b[i]))
			return false;
	/* (0,0,0,0) means "no position" (off screen), not the origin */
	return b[2] > b[0] || b[3] > b[1];
}

static void issue(struct a11y *a, const struct ph_json *n, bool warning,
		  const char *rule, const char *confidence, const char *fmt,
		  ...) PH_PRINTF(6, 7);

static void issue(struct a11y *a, const struct ph_json *n, bool warning,
		  const char *rule, const char *confidence, const char *fmt,
		  ...)
{
	char msg[400];
	va_list ap;
	const struct ph_json *v;

	if (warning)
		a->r->warnings++;
	else
		a->r->notes++;
	if (a->issues++ >= a->max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ph_jw_obj_begin(a->jw);
	ph_jw_kv_str(a->jw, "rule", rule);
	ph_jw_kv_str(a->jw, "severity", warning ? "warning" : "note");
	ph_jw_kv_str(a->jw, "confidence", confidence);
	ph_jw_kv_str(a->jw, "message", msg);
	if ((v = ph_json_get(n, "stableId")))
		ph_mcp_json_kv(a->jw, "stableId", v);
	if ((v = ph_json_get(n, "testTag")))
		ph_mcp_json_kv(a->jw, "testTag", v);
	if ((v = ph_json_get(n, "role")))
		ph_mcp_json_kv(a->jw, "role", v);
	if ((v = ph_json_get(n, "bounds")))
		ph_mcp_json_kv(a->jw, "bounds", v);
	ph_jw_obj_end(a->jw);
}

/* A short name for a node in messages. */
static void label(const struct ph_json *n, char *buf, size_t size)
{
	const struct ph_json *t = ph_json_get(n, "testTag");
	const struct ph_json *r = ph_json_get(n, "role");

	if (!ph_json_is(t, PH_JSON_STRING))
		t = ph_json_get(n, "text");
	snprintf(buf, size, "%.*s '%.*s'",
		 ph_json_is(r, PH_JSON_STRING) ? (int)r->n : 4,
		 ph_json_is(r, PH_JSON_STRING) ? r->u.s : "node",
		 ph_json_is(t, PH_JSON_STRING) ? (int)(t->n > 40 ? 40 : t->n) :
						 0,
		 ph_json_is(t, PH_JSON_STRING) ? t->u.s : "");
}

static bool hidden(const struct ph_json *n)
{
	const struct ph_json *f = ph_json_get(n, "flags");

	return in_array(f, "invisibleToUser") ||
	       in_array(f, "hideFromAccessibility") ||
	       in_array(f, "importantForAccessibilityNo") ||
	       ph_json_is(ph_json_get(n, "invisibleToUser"), PH_JSON_TRUE);
}

static int64_t count_subtree(const struct ph_json *n, int depth)
{
	const struct ph_json *ch = ph_json_get(n, "children");
	int64_t c = 1;

	for (uint32_t i = 0; depth < 200 && ch && i < ch->n; i++)
		c += count_subtree(&ch->u.items[i], depth + 1);
	return c;
}

static void visit(struct a11y *a, const struct ph_json *n,
		  const struct ph_json *parent, int depth)
{
	const struct ph_json *ch = ph_json_get(n, "children");
	const struct ph_json *actions = ph_json_get(n, "actions");
	const struct ph_json *flags = ph_json_get(n, "flags");
	const struct ph_json *role = ph_json_get(n, "role");
	bool click = in_array(actions, "OnClick") ||
		     in_array(flags, "clickable");
	bool labelled = has_str(n, "text") || has_str(n, "contentDescription");
	double b[4], pb[4];
	char name[120];

	if (depth > 200)
		return;
	if (hidden(n)) {
		a->r->skipped += count_subtree(n, depth);
		return;
	}
	a->r->checked++;
	label(n, name, sizeof(name));
	if (click && !labelled) {
		/* a child's text labels a merged button too */
		bool child_label = false;

		for (uint32_t i = 0; ch && i < ch->n && !child_label; i++)
			child_label =
				has_str(&ch->u.items[i], "text") ||
				has_str(&ch->u.items[i], "contentDescription");
		if (!child_label)
			issue(a, n, true, "no-label", "observed",
			      "%s is interactive but has no label (no text, "
			      "no contentDescription): a screen reader says "
			      "only its role",
			      name);
	}
	if (click && bounds(n, b)) {
		double w = b[2] - b[0], h = b[3] - b[1];
		double m = w < h ? w : h;

		if (m < 24)
			issue(a, n, true, "touch-target", "observed",
			      "%s is %.0fx%.0f dp: under the 24 dp minimum "
			      "touch target",
			      name, w, h);
		else if (m < 48)
			issue(a, n, false, "touch-target", "observed",
			      "%s is %.0fx%.0f dp: under the recommended 48 "
			      "dp; automatic minimum-touch-target padding may "
			      "already fix it",
			      name, w, h);
	}
	if (ph_json_streq(role, "Button") && !click)
		issue(a, n, false, "role-click", "observed",
		      "%s has role Button but no click action", name);
	else if (click && ph_json_is(role, PH_JSON_STRING) &&
		 (ph_json_streq(role, "Text") || ph_json_streq(role, "Image") ||
		  ph_json_streq(role, "Header")))
		issue(a, n, false, "role-click", "observed",
		      "%s is clickable but its role says %.*s: give it "
		      "role Button",
		      name, (int)role->n, role->u.s);
	if (ph_json_streq(role, "Image") && !has_str(n, "contentDescription"))
		issue(a, n, false, "image-description", "observed",
		      "%s has no contentDescription (set it, or null for a "
		      "decorative image)",
		      name);
	if (a->font_scale > 1.3 && has_str(n, "text") && parent &&
	    bounds(n, b) && bounds(parent, pb) &&
	    (b[2] >= pb[2] - 0.5 || b[3] >= pb[3] - 0.5 || b[0] <= pb[0] + 0.5))
		issue(a, n, false, "text-tight", "correlated",
		      "%s touches its parent's edge at font scale %.2f: the "
		      "text may be clipped (position, not proof)",
		      name, a->font_scale);
	/* duplicated descriptions among visible siblings */
	for (uint32_t i = 0; ch && i < ch->n; i++) {
		const struct ph_json *di =
			ph_json_get(&ch->u.items[i], "contentDescription");

		if (!ph_json_is(di, PH_JSON_STRING) || !di->n ||
		    hidden(&ch->u.items[i]))
			continue;
		for (uint32_t j = 0; j < i; j++) {
			const struct ph_json *dj = ph_json_get(
				&ch->u.items[j], "contentDescription");

			if (ph_json_equal(di, dj) && !hidden(&ch->u.items[j])) {
				char nm[120];

				label(&ch->u.items[i], nm, sizeof(nm));
				issue(a, &ch->u.items[i], false,
				      "duplicate-description", "observed",
				      "%s repeats the description '%.*s' of a "
				      "sibling: a screen reader cannot tell "
				      "them apart",
				      nm, (int)(di->n > 60 ? 60 : di->n),
				      di->u.s);
				break;
			}
		}
	}
	for (uint32_t i = 0; ch && i < ch->n; i++)
		visit(a, &ch->u.items[i], n, depth + 1);
}

int ph_a11y_check(const struct ph_json *root, double font_scale,
		  size_t max_issues, struct ph_jw *jw, struct ph_a11y_result *r)
{
	struct a11y a = { jw, r, max_issues, 0, font_scale };

	memset(r, 0, sizeof(*r));
	ph_jw_key(jw, "issues");
	ph_jw_arr_begin(jw);
	if (root)
		visit(&a, root, NULL, 0);
	ph_jw_arr_end(jw);
	ph_jw_kv_int(jw, "checked", r->checked);
	ph_jw_kv_int(jw, "skippedInvisible", r->skipped);
	return (int)(r->warnings + r->notes);
}
