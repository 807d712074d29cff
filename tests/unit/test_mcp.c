/*
 * test_mcp.c: the MCP server's pieces without a device: protocol
 * handling, argument checks, size notes, the banner and watermark over a
 * store loaded from the wire fixture, PNG and the accessibility rules.
 */
#include "ph_common.h"
#include "harness.h"
#include "mcp/mcp.h"

#include <zlib.h>

/* One request through the server; the answer parsed into arena. */
static const struct ph_json *ask(struct ph_mcp *m, struct ph_arena *a,
				 const char *req)
{
	struct ph_buf out = PH_BUF_INIT((size_t)64 << 20);
	struct ph_json *root = NULL;
	char *copy;

	ph_mcp_handle(m, req, strlen(req), &out);
	copy = ph_arena_strndup(a, out.buf, out.len);
	if (!out.len || !copy || ph_json_parse(a, copy, out.len, &root, NULL))
		root = NULL;
	ph_buf_release(&out);
	return root;
}

static const char *text_of(struct ph_arena *a, const struct ph_json *r)
{
	const struct ph_json *c =
		ph_json_get(ph_json_get(r, "result"), "content");

	return ph_json_strdup(a, ph_json_get(ph_json_at(c, 0), "text"));
}

static bool is_error(const struct ph_json *r)
{
	return ph_json_is(ph_json_get(ph_json_get(r, "result"), "isError"),
			  PH_JSON_TRUE);
}

void test_mcp__negotiates_the_protocol_version(void)
{
	CHECK_STR(ph_mcp_negotiate("2024-11-05", 10), "2024-11-05");
	CHECK_STR(ph_mcp_negotiate("2025-06-18", 10), "2025-06-18");
	CHECK_STR(ph_mcp_negotiate("2025-03-26", 10), "2025-03-26");
	CHECK_STR(ph_mcp_negotiate("1999-01-01", 10), "2025-11-25");
	CHECK_STR(ph_mcp_negotiate(NULL, 0), "2025-11-25");
}

void test_mcp__every_tool_schema_is_valid_json(void)
{
	struct ph_mcp m;
	struct ph_arena a;
	const struct ph_json *r, *tools;

	ph_arena_init(&a, 1 << 16, 1 << 26);
	CHECK_INT(ph_mcp_init(&m, NULL), 0);
	r = ask(&m, &a,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		"\"tools/list\"}");
	tools = ph_json_get(ph_json_get(r, "result"), "tools");
	CHECK(tools && tools->n >= 24);
	for (uint32_t i = 0; i < tools->n; i++) {
		const struct ph_json *t = &tools->u.items[i];
		const struct ph_json *s = ph_json_get(t, "inputSchema");

		CHECK(ph_json_is(ph_json_get(s, "properties"), PH_JSON_OBJECT));
		CHECK(ph_json_get(ph_json_get(s, "properties"), "detail"));
		CHECK(ph_json_get(ph_json_get(t, "annotations"),
				  "readOnlyHint"));
	}
	ph_mcp_release(&m);
	ph_arena_release(&a);
}

void test_mcp__hostile_lines_get_errors_not_crashes(void)
{
	struct ph_mcp m;
	struct ph_arena a;
	static const char *const bad[] = {
		"{",
		"[]",
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
		"{\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
		"\"params\":7}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
		"\"params\":{\"name\":5}}",
		"\"\\ud800\"",
		"null",
	};

	ph_arena_init(&a, 1 << 16, 1 << 26);
	CHECK_INT(ph_mcp_init(&m, NULL), 0);
	for (size_t i = 0; i < PH_ARRAY_SIZE(bad); i++) {
		const struct ph_json *r = ask(&m, &a, bad[i]);

		CHECK(r);
		CHECK(ph_json_get(r, "error"));
	}
	{
		const struct ph_json *r = ask(
			&m, &a,
			"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
			"\"params\":{\"name\":\"nope\"}}");
		int64_t code = 0;

		CHECK(ph_json_as_int(
			ph_json_get(ph_json_get(r, "error"), "code"), &code));
		CHECK_INT(code, -32602);
	}
	/* a notification is never answered */
	CHECK(!ask(&m, &a,
		   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
		   "initialized\"}"));
	ph_mcp_release(&m);
	ph_arena_release(&a);
}

void test_mcp__bad_arguments_are_tool_errors(void)
{
	struct ph_mcp m;
	struct ph_arena a;
	const struct ph_json *r;

	ph_arena_init(&a, 1 << 16, 1 << 26);
	CHECK_INT(ph_mcp_init(&m, NULL), 0);
	r = ask(&m, &a,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		"\"tools/call\",\"params\":{\"name\":\"timeline\","
		"\"arguments\":{\"limit\":0}}}");
	CHECK(is_error(r));
	CHECK(strstr(text_of(&a, r), "the least it may be is 1"));
	r = ask(&m, &a,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		"\"tools/call\",\"params\":{\"name\":\"findings\","
		"\"arguments\":{\"detail\":\"huge\"}}}");
	CHECK(is_error(r));
	CHECK(strstr(text_of(&a, r), "summary normal full"));
	/* no device link: an app tool says so, honestly */
	r = ask(&m, &a,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		"\"tools/call\",\"params\":{\"name\":\"nav_state\"}}");
	CHECK(is_error(r));
	CHECK(strstr(text_of(&a, r), "not connected"));
	ph_mcp_release(&m);
	ph_arena_release(&a);
}

/* A live host whose store holds the wire fixture; no link started. */
static int fixture_host(struct ph_live *lv, struct ph_mcp *m, const char *path)
{
	if (ph_live_init(lv) || ph_store_load_file(&lv->store, path))
		return -1;
	lv->sessions = false;
	return ph_mcp_init(m, lv);
}

static const char *call(struct ph_mcp *m, struct ph_arena *a, const char *tool,
			const char *args)
{
	char req[1024];

	snprintf(req, sizeof(req),
		 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
		 "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
		 tool, args);
	return text_of(a, ask(m, a, req));
}

/* The number N of "[N returned; full ≈ M]". */
static size_t returned(const char *t)
{
	const char *p = strstr(t, " returned; full");

	while (p && p > t && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p ? (size_t)strtoull(p, NULL, 10) : 0;
}

void test_mcp__findings_banner_once_and_size_notes(void)
{
	struct ph_live lv;
	struct ph_mcp m;
	struct ph_arena a;
	const char *t;

	ph_arena_init(&a, 1 << 16, (size_t)1 << 28);
	CHECK_INT(fixture_host(&lv, &m,
			       FIXTURE("porthole-wire/received.ndjson")),
		  0);
	t = call(&m, &a, "findings", "{}");
	CHECK(t);
	/* the banner leads, then the summary line */
	CHECK(strstr(t, "unreported error") &&
	      strstr(t, "unreported error") < strchr(t, '\n'));
	CHECK(strstr(t, "-> blocking"));
	CHECK_INT(returned(t), strlen(t));
	/* chained: the same errors are not announced again */
	t = call(&m, &a, "findings", "{}");
	CHECK(!strstr(t, "unreported error"));
	/* since:"all" resets the window; every level carries the note */
	t = call(&m, &a, "findings",
		 "{\"since\":\"all\",\"detail\":\"normal\"}");
	CHECK(strstr(t, "\"sinceLast\":null"));
	CHECK(strstr(t, "\"evidenceTool\""));
	CHECK(strstr(t, "status"));
	CHECK_INT(returned(t), strlen(t));
	t = call(&m, &a, "findings", "{\"since\":\"all\",\"detail\":\"full\"}");
	CHECK(strstr(t, "\"evidence\""));
	CHECK_INT(returned(t), strlen(t));
	ph_mcp_release(&m);
	ph_live_release(&lv);
	ph_arena_release(&a);
}

void test_mcp__timeline_caps_and_truncation_notes(void)
{
	struct ph_live lv;
	struct ph_mcp m;
	struct ph_arena a;
	const char *t;

	ph_arena_init(&a, 1 << 16, (size_t)1 << 28);
	CHECK_INT(fixture_host(&lv, &m,
			       FIXTURE("porthole-wire/received.ndjson")),
		  0);
	t = call(&m, &a, "timeline", "{\"since\":\"all\"}");
	CHECK(strstr(t, "newest 100 returned"));
	CHECK(!strchr(t, '{')); /* summary: no JSON */
	t = call(&m, &a, "timeline", "{\"since\":\"all\",\"detail\":\"full\"}");
	CHECK(strstr(t, "returned"));
	CHECK_INT(returned(t), strlen(t));
	t = call(&m, &a, "timeline",
		 "{\"since\":\"all\",\"limit\":3,\"kinds\":[\"db_end\"],"
		 "\"detail\":\"normal\"}");
	CHECK(strstr(t, "newest 3 returned"));
	CHECK(strstr(t, "\"returned\":3"));
	CHECK(!strstr(t, "\"event\":\"frame\""));
	/* a window of nothing is an answer, not an error */
	t = call(&m, &a, "timeline", "{\"from\":1,\"to\":2}");
	CHECK(strstr(t, "0 events matched"));
	ph_mcp_release(&m);
	ph_live_release(&lv);
	ph_arena_release(&a);
}

/* A w x h RGB PNG of one colour. */
static size_t make_png(unsigned char *out, size_t cap, int w, int h, int v)
{
	unsigned char raw[4096], z[4096];
	uLongf zn = sizeof(z);
	size_t o = 0, rn = 0;
	static const unsigned char sig[8] = { 0x89, 'P',  'N',	'G',
					      0x0d, 0x0a, 0x1a, 0x0a };
	unsigned char ihdr[13] = { 0, 0, 0, (unsigned char)w,
				   0, 0, 0, (unsigned char)h,
				   8, 2, 0, 0,
				   0 };

	for (int y = 0; y < h; y++) {
		raw[rn++] = 0;
		for (int x = 0; x < w * 3; x++)
			raw[rn++] = (unsigned char)v;
	}
	compress(z, &zn, raw, rn);
	memcpy(out, sig, 8);
	o = 8;
#define CHUNK(type, data, n)                                  \
	do {                                                  \
		out[o++] = 0;                                 \
		out[o++] = 0;                                 \
		out[o++] = (unsigned char)((n) >> 8);         \
		out[o++] = (unsigned char)(n);                \
		memcpy(out + o, type, 4);                     \
		o += 4;                                       \
		memcpy(out + o, data, n);                     \
		o += n;                                       \
		memset(out + o, 0, 4); /* CRC: not checked */ \
		o += 4;                                       \
	} while (0)
	CHUNK("IHDR", ihdr, 13);
	CHUNK("IDAT", z, zn);
	CHUNK("IEND", "", 0);
#undef CHUNK
	(void)cap;
	return o;
}

void test_mcp__png_all_black_is_refused(void)
{
	unsigned char png[8192];
	char err[160];
	size_t n;

	n = make_png(png, sizeof(png), 8, 4, 0);
	CHECK_INT(ph_png_all_black(png, n, err, sizeof(err)), 1);
	n = make_png(png, sizeof(png), 8, 4, 200);
	CHECK_INT(ph_png_all_black(png, n, err, sizeof(err)), 0);
	/* hostile: cut short, bad signature */
	CHECK(ph_png_all_black(png, n / 2, err, sizeof(err)) < 0);
	CHECK(ph_png_all_black((const unsigned char *)"GIF89a", 6, err,
			       sizeof(err)) < 0);
}

void test_mcp__base64_round_trip(void)
{
	struct ph_buf b = PH_BUF_INIT(1 << 10);

	CHECK_INT(ph_base64_decode("aGVsbG8=", 8, &b), 0);
	CHECK_STR(b.buf, "hello");
	ph_buf_reset(&b);
	CHECK(ph_base64_decode("a$", 2, &b) < 0);
	ph_buf_release(&b);
}

void test_mcp__accessibility_rules(void)
{
	static const char tree[] =
		"{\"nodeId\":1,\"stableId\":\"r\",\"bounds\":{\"left\":0,"
		"\"top\":0,\"right\":360,\"bottom\":640},\"children\":["
		/* unlabelled, 16 dp: a warning for each */
		"{\"stableId\":\"a\",\"role\":\"Button\",\"actions\":"
		"[\"OnClick\"],\"bounds\":{\"left\":0,\"top\":0,\"right\":16,"
		"\"bottom\":16}},"
		/* labelled, 36 dp: a note */
		"{\"stableId\":\"b\",\"role\":\"Button\",\"text\":\"Go\","
		"\"actions\":[\"OnClick\"],\"bounds\":{\"left\":20,\"top\":0,"
		"\"right\":56,\"bottom\":36}},"
		/* image without description: a note */
		"{\"stableId\":\"c\",\"role\":\"Image\",\"bounds\":{\"left\":"
		"0,\"top\":100,\"right\":50,\"bottom\":150}},"
		/* hidden subtree of two nodes: skipped */
		"{\"stableId\":\"d\",\"flags\":[\"invisibleToUser\"],"
		"\"children\":[{\"stableId\":\"e\",\"role\":\"Button\","
		"\"actions\":[\"OnClick\"]}]}]}";
	struct ph_arena a;
	struct ph_json *root;
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	struct ph_jw jw;
	struct ph_a11y_result r;

	ph_arena_init(&a, 1 << 16, 1 << 24);
	CHECK_INT(ph_json_parse(&a, tree, strlen(tree), &root, NULL), 0);
	ph_jw_init(&jw, &b);
	ph_jw_obj_begin(&jw);
	ph_a11y_check(root, 1.0, 100, &jw, &r);
	ph_jw_obj_end(&jw);
	CHECK_INT(ph_jw_finish(&jw), 0);
	CHECK_INT(r.checked, 4);
	CHECK_INT(r.skipped, 2);
	CHECK_INT(r.warnings, 2);
	CHECK_INT(r.notes, 2);
	CHECK(strstr(b.buf, "\"rule\":\"no-label\""));
	CHECK(strstr(b.buf, "automatic"));
	ph_buf_release(&b);
	ph_arena_release(&a);
}
