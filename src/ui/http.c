/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c: the UI server's request checks, as pure functions (see ui.h).
 *
 * Everything a request brings is hostile input: a browser on another site
 * can make the person's browser send requests here, and DNS rebinding can
 * make such a page same-origin with a name that resolves to 127.0.0.1.  So
 * Host must name this server, Origin (when sent) must be this server, and
 * every number and name is parsed strictly, with a reason for the 400.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ui/assets.h"
#include "ui/ui.h"

#include <ctype.h>

static const struct {
	const char *path;
	const char *method;
	enum ph_ui_route route;
} routes[] = {
	{ "/", "GET", PH_UI_R_ASSET },
	{ "/ws", "GET", PH_UI_R_WS },
	{ "/api/status", "GET", PH_UI_R_STATUS },
	{ "/api/token", "GET", PH_UI_R_TOKEN },
	{ "/api/where", "GET", PH_UI_R_WHERE },
	{ "/api/trace/system", "GET", PH_UI_R_SYSTEM },
	{ "/api/findings", "GET", PH_UI_R_FINDINGS },
	{ "/api/traces", "GET", PH_UI_R_TRACES },
	{ "/api/db/tables", "GET", PH_UI_R_DB_TABLES },
	{ "/api/db/page", "GET", PH_UI_R_DB_PAGE },
	{ "/api/db/query", "POST", PH_UI_R_DB_QUERY },
	{ "/api/save", "POST", PH_UI_R_SAVE },
	{ "/api/restart", "POST", PH_UI_R_RESTART },
};

/*
 * Whether path is a file of the embedded page ("/index.html", "/app.js",
 * ...): each is a GET route of its own, so a page split into more files
 * needs no new row above.
 */
static bool embedded(const char *path)
{
	for (const struct ph_ui_asset *a = ph_ui_assets; a->path; a++)
		if (!strcmp(a->path, path))
			return true;
	return false;
}

enum ph_ui_route ph_ui_route(const char *method, const char *path, int *status)
{
	const char *want = NULL; /* the route's method */
	enum ph_ui_route route = PH_UI_R_NONE;

	*status = 404;
	if (!method || !path)
		return PH_UI_R_NONE;
	for (size_t i = 0; !want && i < PH_ARRAY_SIZE(routes); i++) {
		if (!strcmp(routes[i].path, path)) {
			want = routes[i].method;
			route = routes[i].route;
		}
	}
	if (!want && embedded(path)) {
		want = "GET";
		route = PH_UI_R_ASSET;
	}
	if (!want)
		return PH_UI_R_NONE;
	/* HEAD is a GET without the body; everything else is exact. */
	if (!strcmp(method, want) ||
	    (!strcmp(method, "HEAD") && !strcmp(want, "GET")))
		*status = 0;
	else
		*status = 405;
	return route;
}

/* host is "NAME:PORT" with NAME one of ours and PORT this server's. */
static bool names_us(const char *host, size_t n, int port)
{
	static const char *const names[] = { "127.0.0.1", "localhost" };
	char want[64];

	for (size_t i = 0; i < PH_ARRAY_SIZE(names); i++) {
		int k = snprintf(want, sizeof(want), "%s:%d", names[i], port);

		if (k > 0 && (size_t)k == n && !strncasecmp(host, want, n))
			return true;
	}
	return false;
}

int ph_ui_check_request(const char *method, const char *host,
			const char *origin, int port, char *why, size_t size)
{
	(void)method;
	if (!host || !*host) {
		snprintf(why, size, "no Host header");
		return 400;
	}
	if (!names_us(host, strlen(host), port)) {
		/* A rebound name (evil.example -> 127.0.0.1) lands here. */
		snprintf(why, size,
			 "Host '%.64s' is not this server (127.0.0.1:%d)", host,
			 port);
		return 403;
	}
	if (origin) {
		if (strncmp(origin, "http://", 7) ||
		    !names_us(origin + 7, strlen(origin + 7), port)) {
			snprintf(why, size,
				 "Origin '%.64s' is not this server; "
				 "cross-origin requests are refused",
				 origin);
			return 403;
		}
	}
	return 0;
}

int ph_ui_check_token(const char *want, const char *got, char *why, size_t size)
{
	size_t n = strlen(want);
	unsigned diff = 0;

	if (!got || !*got) {
		snprintf(why, size,
			 "a write needs the page's token in X-Porthole-Token "
			 "(GET /api/token)");
		return 403;
	}
	if (strlen(got) != n || !n) {
		snprintf(why, size, "X-Porthole-Token is not this server's");
		return 403;
	}
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(want[i] ^ got[i]);
	if (diff) {
		snprintf(why, size, "X-Porthole-Token is not this server's");
		return 403;
	}
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool ph_ui_query_get(const char *query, const char *name, char *out,
		     size_t size)
{
	size_t nl = strlen(name);

	if (!query || !size)
		return false;
	for (const char *p = query; *p;) {
		const char *end = p + strcspn(p, "&");

		if ((size_t)(end - p) > nl && !strncmp(p, name, nl) &&
		    p[nl] == '=') {
			size_t o = 0;

			for (const char *s = p + nl + 1; s < end; s++) {
				int c = (unsigned char)*s;

				if (c == '+')
					c = ' ';
				else if (c == '%' && end - s >= 3 &&
					 hexval(s[1]) >= 0 &&
					 hexval(s[2]) >= 0) {
					c = hexval(s[1]) * 16 + hexval(s[2]);
					s += 2;
				}
				if (o + 1 >= size || c == 0)
					return false;
				out[o++] = (char)c;
			}
			out[o] = 0;
			return true;
		}
		if ((size_t)(end - p) == nl && !strncmp(p, name, nl)) {
			out[0] = 0; /* "name" alone: present, empty */
			return true;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

/* A whole decimal int64 (optional '-'), nothing else. */
static bool parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

int ph_ui_parse_window(const char *query, struct ph_window *w, char *trace,
		       size_t trace_size, char *why, size_t size)
{
	char v[64];

	*w = PH_WINDOW_ALL;
	if (trace_size)
		trace[0] = 0;
	if (!query)
		return 0;
	if (strlen(query) > PH_UI_MAX_QUERY) {
		snprintf(why, size, "query string longer than %d bytes",
			 PH_UI_MAX_QUERY);
		return 400;
	}
	if (ph_ui_query_get(query, "from", v, sizeof(v)) && v[0] &&
	    !parse_i64(v, &w->from)) {
		snprintf(why, size, "from: '%s' is not an integer (app ms)", v);
		return 400;
	}
	if (ph_ui_query_get(query, "to", v, sizeof(v)) && v[0] &&
	    !parse_i64(v, &w->to)) {
		snprintf(why, size, "to: '%s' is not an integer (app ms)", v);
		return 400;
	}
	if (w->from >= w->to) {
		snprintf(why, size,
			 "from (%" PRId64 ") must be before to (%" PRId64 ")",
			 w->from, w->to);
		return 400;
	}
	if (ph_ui_query_get(query, "trace", trace, trace_size) && trace[0] &&
	    !ph_ui_trace_id_ok(trace)) {
		snprintf(why, size, "trace: not a trace id");
		return 400;
	}
	return 0;
}

static bool int_member(const struct ph_json *o, const char *k, int64_t *out,
		       bool *present)
{
	const struct ph_json *v = ph_json_get(o, k);

	*present = v != NULL;
	if (!v)
		return true;
	/* Strictly a JSON integer: "12" or 1.5 are not a window edge. */
	if (!ph_json_is(v, PH_JSON_INT))
		return false;
	*out = v->u.i;
	return true;
}

int ph_ui_parse_save(const char *body, size_t len, struct ph_window *w,
		     char *scenario, size_t scenario_size, char *why,
		     size_t size)
{
	struct ph_arena a;
	struct ph_json *root = NULL;
	struct ph_err err = { 0 };
	const struct ph_json *sc;
	bool have_from, have_to;
	int rc = 400;

	snprintf(scenario, scenario_size, "ui");
	if (len > PH_UI_MAX_BODY) {
		snprintf(why, size, "body larger than %d bytes",
			 PH_UI_MAX_BODY);
		return 413;
	}
	ph_arena_init(&a, 4096, 1 << 20);
	if (ph_json_parse(&a, body, len, &root, &err)) {
		snprintf(why, size, "body is not JSON: %s at byte %" PRIu64,
			 err.msg, err.offset);
		goto out;
	}
	if (!ph_json_is(root, PH_JSON_OBJECT)) {
		snprintf(why, size, "body must be an object {from, to}");
		goto out;
	}
	if (!int_member(root, "from", &w->from, &have_from) ||
	    !int_member(root, "to", &w->to, &have_to) || !have_from ||
	    !have_to) {
		snprintf(why, size, "from and to must be integers (app ms)");
		goto out;
	}
	if (w->from >= w->to) {
		snprintf(why, size,
			 "from (%" PRId64 ") must be before to (%" PRId64 ")",
			 w->from, w->to);
		goto out;
	}
	sc = ph_json_get(root, "scenario");
	if (sc && !ph_json_is(sc, PH_JSON_NULL)) {
		if (!ph_json_is(sc, PH_JSON_STRING) || !sc->u.s || sc->n == 0 ||
		    sc->n > 64 || sc->n >= scenario_size) {
			snprintf(why, size,
				 "scenario must be a name of 1 to 64 chars");
			goto out;
		}
		for (uint32_t i = 0; i < sc->n; i++) {
			int c = (unsigned char)sc->u.s[i];

			if (!isalnum(c) && c != '-' && c != '_' && c != '.') {
				snprintf(why, size,
					 "scenario: letters, digits, '-', "
					 "'_' and '.' only");
				goto out;
			}
		}
		memcpy(scenario, sc->u.s, sc->n);
		scenario[sc->n] = 0;
	}
	rc = 0;
out:
	ph_arena_release(&a);
	return rc;
}

bool ph_ui_trace_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > 200 || id[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)id[i];

		if (!isalnum(c) && c != '.' && c != '-' && c != '_')
			return false;
	}
	return true;
}

bool ph_ui_sql_read_only(const char *sql, char *why, size_t size)
{
	static const char *const reads[] = { "select", "with", "explain",
					     "pragma", "values" };
	const char *p = sql;
	size_t n;

	if (strlen(sql) > PH_UI_MAX_SQL) {
		snprintf(why, size, "statement longer than %d bytes",
			 PH_UI_MAX_SQL);
		return false;
	}
	while (isspace((unsigned char)*p) || *p == '(')
		p++;
	n = 0;
	while (isalpha((unsigned char)p[n]))
		n++;
	for (size_t i = 0; i < PH_ARRAY_SIZE(reads); i++)
		if (n == strlen(reads[i]) && !strncasecmp(p, reads[i], n))
			return true;
	snprintf(why, size,
		 "the inspector is read-only: '%.*s' is refused (SELECT, WITH, "
		 "EXPLAIN, PRAGMA and VALUES only)",
		 (int)(n > 20 ? 20 : n), p);
	return false;
}
