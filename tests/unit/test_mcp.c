/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_mcp.c: the MCP server's pieces without a device: protocol
 * handling, argument checks, size notes, the banner and watermark over a
 * store loaded from the wire fixture, PNG and the accessibility rules.
 */
#include "ph_common.h"
#include "harness.h"
#include "mcp/mcp.h"
#include "ph_clock.h"
#include "ph_wire.h"
#include "host/run.h"

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
	/* An integer past int64 (JSON.stringify(1e20) writes one) is the
	 * tool's argument error, answered to its id, not a parse error
	 * with no id that leaves the client waiting. */
	r = ask(&m, &a,
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
		"\"tools/call\",\"params\":{\"name\":\"timeline\","
		"\"arguments\":{\"limit\":100000000000000000000}}}");
	CHECK_INT(ph_json_get(r, "id") ? ph_json_get(r, "id")->u.i : -1, 4);
	CHECK(is_error(r));
	CHECK(strstr(text_of(&a, r), "argument 'limit' is 1e+20, past what a "
				     "64-bit integer holds"));
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
	/* a refusal lists every kind the wire knows, the newest included */
	t = call(&m, &a, "timeline", "{\"kinds\":[\"nope\"]}");
	CHECK(strstr(t, "unknown event kind 'nope'"));
	for (int kd = PH_KIND_UNKNOWN + 1; kd < PH_KIND_COUNT; kd++)
		CHECK(strstr(t, ph_wire_kind_name((enum ph_kind)kd)));
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

/* The JSON payload of an answer at detail normal/full (after the line). */
static const struct ph_json *payload_of(struct ph_arena *a, const char *t)
{
	const char *p = t ? strstr(t, "\n{") : NULL;
	struct ph_json *root = NULL;
	char *copy;

	if (!p)
		return NULL;
	copy = ph_arena_strndup(a, p + 1, strlen(p + 1));
	if (!copy || ph_json_parse(a, copy, strlen(copy), &root, NULL))
		return NULL;
	return root;
}

/*
 * A live host whose small store has evicted the start of the session at
 * path (loaded whole), with the MCP server over it.
 */
static void evicted_live(struct ph_live *lv, struct ph_mcp *m, const char *path)
{
	CHECK_INT(ph_live_init(lv), 0);
	lv->sessions = false;
	ph_store_release(&lv->store);
	CHECK_INT(ph_store_init(&lv->store, 64 << 10), 0);
	CHECK_INT(ph_store_load_file(&lv->store, path), 0);
	CHECK(lv->store.covered_from != INT64_MIN);
	snprintf(lv->session_path, sizeof(lv->session_path), "%s", path);
	CHECK_INT(ph_mcp_init(m, lv), 0);
}

/*
 * A store that evicted the start of the recording: windows older than it
 * are answered by the host's fallback (ph_analyze_window): the session
 * file first, then the store's newer events, nothing counted twice.
 */
void test_mcp__an_evicted_window_reads_the_session_on_disk(void)
{
	const char *path = FIXTURE("porthole-wire/received.ndjson");
	struct ph_live lv;
	struct ph_mcp m;
	struct ph_arena a;
	struct ph_analysis *whole;
	const struct ph_json *p, *f, *evs;
	int rc = 0;
	int64_t n;
	const char *t;

	ph_arena_init(&a, 1 << 16, (size_t)1 << 28);
	whole = ph_analyze_file(path, PH_WINDOW_ALL, &rc);
	CHECK(whole && whole->nf > 0);
	evicted_live(&lv, &m, path);

	t = call(&m, &a, "findings", "{\"since\":\"all\",\"detail\":\"full\"}");
	CHECK(t && strstr(t, "read from session"));
	p = payload_of(&a, t);
	f = ph_json_get(p, "findings");
	CHECK(f);
	/* the same findings, the same counts as the whole file alone */
	CHECK_INT(f->n, whole->nf);
	for (uint32_t i = 0; i < f->n; i++) {
		CHECK(ph_json_as_int(ph_json_get(&f->u.items[i], "count"), &n));
		CHECK_INT(n, whole->f[i].count);
	}
	/* the events themselves: every one, once */
	t = call(&m, &a, "timeline",
		 "{\"since\":\"all\",\"limit\":100000,\"detail\":\"normal\"}");
	p = payload_of(&a, t);
	evs = ph_json_get(p, "events");
	CHECK(evs);
	CHECK_INT(evs->n, (int64_t)whole->metric[PH_M_EVENTS]);
	for (uint32_t i = 1; i < evs->n; i++) {
		int64_t s0 = 0, s1 = 0;

		ph_json_as_int(ph_json_get(&evs->u.items[i - 1], "seq"), &s0);
		ph_json_as_int(ph_json_get(&evs->u.items[i], "seq"), &s1);
		CHECK(s1 > s0);
	}
	ph_analysis_free(whole);
	ph_mcp_release(&m);
	ph_live_release(&lv);
	ph_arena_release(&a);
}

/*
 * The same fallback with a host-made event (another process appended a
 * leak to the session; the live store read it back): the file and the
 * store both hold it, and it is counted and listed once.
 */
void test_mcp__an_evicted_window_has_host_made_events_once(void)
{
	char path[700];
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_live lv;
	struct ph_mcp m;
	struct ph_arena a;
	const struct ph_json *p, *f, *evs;
	const char *t;
	bool leak = false;
	int64_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/leak-session.ndjson",
		 ph_test_tmpdir());
	CHECK_INT(ph_buf_read_file(&b, FIXTURE("porthole-wire/"
					       "received.ndjson")),
		  0);
	fp = fopen(path, "w");
	CHECK(fp);
	fwrite(b.buf, 1, b.len, fp);
	fputs("{\"event\":\"leak\",\"t\":72339,\"seq\":-1,\"data\":{"
	      "\"signature\":\"s1\",\"shortDescription\":\"Cart leaked\"}}\n",
	      fp);
	CHECK_INT(fclose(fp), 0);
	ph_buf_release(&b);

	ph_arena_init(&a, 1 << 16, (size_t)1 << 28);
	evicted_live(&lv, &m, path);
	CHECK(lv.store.host_made_at == lv.store.version);

	t = call(&m, &a, "findings", "{\"since\":\"all\",\"detail\":\"full\"}");
	CHECK(t && strstr(t, "read from session"));
	p = payload_of(&a, t);
	f = ph_json_get(p, "findings");
	for (uint32_t i = 0; f && i < f->n; i++) {
		const struct ph_json *id = ph_json_get(&f->u.items[i], "id");

		if (id && id->type == PH_JSON_STRING && id->n == 4 &&
		    !memcmp(id->u.s, "leak", 4)) {
			leak = true;
			CHECK(ph_json_as_int(
				ph_json_get(&f->u.items[i], "count"), &n));
			CHECK_INT(n, 1);
		}
	}
	CHECK(leak);
	t = call(&m, &a, "timeline",
		 "{\"since\":\"all\",\"kinds\":[\"leak\"],\"detail\":"
		 "\"normal\"}");
	p = payload_of(&a, t);
	evs = ph_json_get(p, "events");
	CHECK(evs && evs->n == 1);
	ph_mcp_release(&m);
	ph_live_release(&lv);
	ph_arena_release(&a);
	unlink(path);
}

/*
 * Nothing live, and a session on disk from another boot whose app clock
 * is far ahead of this machine's: "now" is that session's newest event,
 * not this machine's uptime, so the default window still covers it.
 */
void test_mcp__a_session_from_another_boot_answers_on_its_own_clock(void)
{
	const char *tmp = ph_test_tmpdir();
	char dir[600], path[700];
	const char *old = getenv("PORTHOLE_PROJECT_ROOT");
	char saved[4096] = "";
	int64_t t0 = ph_clock_uptime_ms() + ((int64_t)1 << 40);
	struct ph_live lv;
	struct ph_mcp m;
	struct ph_arena a;
	const char *t;
	char want[64];
	FILE *fp;

	if (old)
		snprintf(saved, sizeof(saved), "%s", old);
	snprintf(dir, sizeof(dir), "%s/boot/.porthole/sessions/app_x_1", tmp);
	snprintf(path, sizeof(path), "mkdir -p '%s'", dir);
	CHECK_INT(system(path), 0);
	snprintf(path, sizeof(path), "%s/events.ndjson", dir);
	fp = fopen(path, "w");
	CHECK(fp);
	fprintf(fp,
		"{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,"
		"\"packageName\":\"app.x\",\"processName\":\"app.x\","
		"\"startedAt\":%" PRId64 "}}\n",
		t0 - 10);
	fprintf(fp,
		"{\"event\":\"blocked\",\"t\":%" PRId64
		",\"seq\":0,\"data\":{\"durationMs\":700,\"top\":"
		"\"stall_here(x.c:9)\"}}\n",
		t0);
	fprintf(fp,
		"{\"event\":\"log\",\"t\":%" PRId64
		",\"seq\":1,\"data\":{\"level\":\"I\",\"tag\":\"x\","
		"\"message\":\"after\"}}\n",
		t0 + 900);
	CHECK_INT(fclose(fp), 0);
	snprintf(path, sizeof(path), "%s/boot", tmp);
	setenv("PORTHOLE_PROJECT_ROOT", path, 1);
	ph_arena_init(&a, 1 << 16, (size_t)1 << 26);
	CHECK_INT(ph_live_init(&lv), 0);
	lv.sessions = false;
	CHECK_INT(ph_mcp_init(&m, &lv), 0);
	CHECK_INT(ph_mcp_now(&m), t0 + 900);
	t = call(&m, &a, "findings", "{}");
	snprintf(want, sizeof(want), "t=%" PRId64 "..%" PRId64, t0, t0 + 900);
	CHECK(t && strstr(t, want));
	CHECK(strstr(t, "stalled 700 ms"));
	CHECK(strstr(t, "answered from session app_x_1"));
	ph_mcp_release(&m);
	ph_live_release(&lv);
	ph_arena_release(&a);
	if (saved[0])
		setenv("PORTHOLE_PROJECT_ROOT", saved, 1);
	else
		unsetenv("PORTHOLE_PROJECT_ROOT");
}

/* A session on disk for the evicted part: findings' source note. */
static const char *evicted_answer(struct ph_arena *a, const char *root,
				  int64_t started_at)
{
	const char *path = ph_test_fixture("porthole-wire/received.ndjson");
	struct ph_live lv;
	struct ph_mcp m;
	char dir[800], cmd[2000];
	const char *t = NULL;
	FILE *f;

	snprintf(dir, sizeof(dir),
		 "%s/.porthole/sessions/com.example.shop_x_%lld", root,
		 (long long)started_at);
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s/.porthole' && mkdir -p '%s' && "
		 "cp '%s' '%s/events.ndjson'",
		 root, dir, path, dir);
	if (!path || system(cmd))
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s/meta.json", dir);
	if (!(f = fopen(cmd, "w")))
		return NULL;
	fprintf(f, "{\"packageName\":\"com.example.shop\",\"startedAt\":%lld}",
		(long long)started_at);
	fclose(f);
	setenv("PORTHOLE_PROJECT_ROOT", root, 1);
	if (!ph_live_init(&lv)) {
		lv.sessions = false;
		ph_store_release(&lv.store);
		if (!ph_store_init(&lv.store, 64 << 10) &&
		    !ph_store_load_file(&lv.store, path) &&
		    !ph_mcp_init(&m, &lv)) {
			t = call(&m, a, "findings", "{\"since\":\"all\"}");
			ph_mcp_release(&m);
		}
		ph_live_release(&lv);
	}
	unsetenv("PORTHOLE_PROJECT_ROOT");
	return t;
}

/*
 * Without a session of its own, the server reads the newest on disk for
 * the app only when it is the live process's (same startedAt): another
 * run's seqs start afresh and would hide the buffer's events.
 */
void test_mcp__an_evicted_window_reads_only_its_own_process_session(void)
{
	const char *root = ph_test_tmpdir();
	struct ph_arena a;
	const char *t;

	ph_arena_init(&a, 1 << 16, (size_t)1 << 28);
	t = evicted_answer(&a, root, 12000); /* the fixture's startedAt */
	CHECK(t && strstr(t, "read from session com.example.shop_x_12000"));
	t = evicted_answer(&a, root, 999);
	CHECK(t && strstr(t, "no session on disk holds the rest"));
	ph_arena_release(&a);
}

/* The number M of "[N returned; full ≈ M]". */
static size_t full_of(const char *t)
{
	const char *p = t ? strstr(t, "full \u2248 ") : NULL;

	return p ? (size_t)strtoull(p + strlen("full \u2248 "), NULL, 10) : 0;
}

/*
 * Not connected, the app tools answer from recorded events, newest limit;
 * the size note's M is the answer detail full gives (its larger limit),
 * not the summary's payload.
 */
void test_mcp__size_notes_count_what_detail_full_would_return(void)
{
	static const char *const tools[] = { "recompositions", "blocking" };
	struct ph_live lv;
	struct ph_mcp m;
	struct ph_arena a;

	ph_arena_init(&a, 1 << 16, (size_t)1 << 28);
	CHECK_INT(fixture_host(&lv, &m,
			       FIXTURE("porthole-wire/received.ndjson")),
		  0);
	for (size_t i = 0; i < PH_ARRAY_SIZE(tools); i++) {
		const char *sum, *norm, *full;
		size_t fm, nm, fl;

		sum = call(&m, &a, tools[i], "{\"since\":\"all\"}");
		norm = call(&m, &a, tools[i],
			    "{\"since\":\"all\",\"detail\":\"normal\"}");
		full = call(&m, &a, tools[i],
			    "{\"since\":\"all\",\"detail\":\"full\"}");
		CHECK(sum && norm && full);
		if (!sum || !norm || !full)
			continue;
		fm = full_of(sum);
		nm = full_of(norm);
		fl = strlen(full);
		/* the fixture holds more than the summary's limit */
		CHECK(strlen(norm) < fl / 2);
		CHECK_INT(returned(full), fl);
		CHECK_INT(full_of(full), fl);
		/* M within 5% of the full answer at every level */
		CHECK(fm * 20 >= fl * 19 && fm * 20 <= fl * 21);
		CHECK(nm * 20 >= fl * 19 && nm * 20 <= fl * 21);
		/* an explicit limit holds at full too: M is that answer */
		norm = call(&m, &a, tools[i],
			    "{\"since\":\"all\",\"limit\":3,\"detail\":"
			    "\"normal\"}");
		CHECK_INT(full_of(norm), returned(norm));
	}
	ph_mcp_release(&m);
	ph_live_release(&lv);
	ph_arena_release(&a);
}

/* A Pixel's outputs for system_context's readings, then hostile ones. */
void test_mcp__device_context_readers(void)
{
	static const char thermal[] =
		"Thermal Status: 2\n"
		"Cached temperatures:\n"
		"\tTemperature{mValue=38.9, mType=3, mName=skin, mStatus=1}\n"
		"HAL Ready: true\n"
		"Current temperatures from HAL:\n"
		"\tTemperature{mValue=52.6, mType=0, mName=BIG, mStatus=0}\r\n"
		"\tTemperature{mValue=NaN, mType=0, mName=bad, mStatus=0}\n"
		"\tTemperature{mValue=41.0, mType=3, mName=VIRTUAL-SKIN}\n"
		"Current cooling devices from HAL:\n"
		"\tCoolingDevice{mValue=0, mType=2, mName=battery}\n";
	static const char cached_only[] =
		"Cached temperatures:\n"
		"\tTemperature{mValue=38.9, mType=3, mName=skin, mStatus=1}\n";
	static const char cpus[] =
		"/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor:"
		"schedutil\n"
		"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:"
		"schedutil\n"
		"/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq:1800000\n"
		"/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq:2000000\n"
		"grep: /sys/devices/system/cpu/cpu9/cpufreq/x: Permission "
		"denied\n"
		"/sys/devices/system/cpu/cpu99999/cpufreq/scaling_cur_freq:1\n";
	static const char top[] =
		"Tasks: 718 total,   1 running\n"
		"\033[7m  PID USER  PR  NI VIRT  RES  SHR S[%CPU] %MEM  TIME+ "
		"ARGS\033[0m\n"
		"  812 shell 20 0 10G 4M 3M R 30.0 0.0 0:00.05 top -b -n 1\n"
		"  100 sys   18 -2 22G 1M 1M S  5.5 5.3 1:13.70 "
		"/system/bin/surfaceflinger\n"
		"  200 app   10 -10 1G 1M 1M S 70.1 2.8 0:41.22 com.a.b\n"
		"  xx  bad   1 1 1 1 1 S 9.9 0 0 nope\n"
		"  300 a 1 1 1 1 1 S 1.0 0 0 p1\n"
		"  301 a 1 1 1 1 1 S 2.0 0 0 p2\n"
		"  302 a 1 1 1 1 1 S 3.0 0 0 p3\n"
		"  303 a 1 1 1 1 1 S 4.0 0 0 p4\n";
	static const char proc[] =
		"2.31 2.05 1.87 3/2146 9812\n"
		"MemTotal:        7628268 kB\n"
		"MemAvailable:    2861032 kB\n"
		"cat: /proc/pressure/memory: No such file or directory\n";
	static const char half[] =
		"\nCurrent temperatures from HAL:\n\tTemperature{mValue=1";
	struct ph_devctx *d = calloc(1, sizeof(*d));
	char junk[4096];

	CHECK(d);
	if (!d)
		return;
	CHECK_INT(ph_devctx_thermal(d, thermal, strlen(thermal)), 3);
	CHECK_INT(d->thermal_status, 2);
	CHECK_INT(d->nthermal, 2); /* the HAL's, NaN left out */
	CHECK_STR(d->thermal[0].zone, "BIG");
	CHECK(d->thermal[0].celsius == 52.6 && d->thermal[0].status == 0);
	CHECK(d->thermal[1].celsius == 41.0 && d->thermal[1].status == -1);
	CHECK_INT(ph_devctx_thermal(d, cached_only, strlen(cached_only)), 1);
	CHECK_STR(d->thermal[0].zone, "skin");

	CHECK_INT(ph_devctx_cpus(d, cpus, strlen(cpus)), 2);
	CHECK_INT(d->cpus[0].cpu, 0);
	CHECK_STR(d->cpus[0].governor, "schedutil");
	CHECK_INT(d->cpus[0].max_khz, 2000000);
	CHECK_INT(d->cpus[1].cur_khz, 1800000);

	CHECK_INT(ph_devctx_top(d, top, strlen(top)), 5);
	CHECK_STR(d->busiest[0].name, "com.a.b");
	CHECK_INT(d->busiest[0].pid, 200);
	CHECK_STR(d->busiest[1].name, "surfaceflinger");
	CHECK_STR(d->busiest[4].name, "p2"); /* top itself left out */

	CHECK_INT(ph_devctx_proc(d, proc, strlen(proc)), 3);
	CHECK_STR(d->loadavg, "2.31 2.05 1.87");
	CHECK_INT(d->mem_total_kb, 7628268);
	CHECK_INT(d->mem_avail_kb, 2861032);
	CHECK(d->psi_some10 < 0);

	/* hostile: nothing understood, nothing read past n */
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)((i * 131 + 7) % 256);
	memcpy(junk + 100, half, sizeof(half) - 1);
	CHECK(ph_devctx_thermal(d, junk, sizeof(junk)) <= 1);
	ph_devctx_cpus(d, junk, sizeof(junk));
	ph_devctx_top(d, junk, sizeof(junk));
	ph_devctx_proc(d, junk, sizeof(junk));
	CHECK_INT(ph_devctx_thermal(d, "", 0), 0);
	CHECK_INT(ph_devctx_top(d, "PID %CPU ARGS\n", 13), 0);
	free(d);
}

/* The recorder's stop question: yes once the program said it started
 * (its trap is set by then, however slow the machine). */
static bool stop_once_started(void *ctx)
{
	const struct ph_buf *out = ctx;

	return out->len && strstr(out->buf, "started");
}

/*
 * A cancelled capture_system_trace stops its recorder this way: SIGINT,
 * then its output is read to the end and its exit status kept.
 */
void test_mcp__run_stoppable_interrupts_and_waits(void)
{
	char *argv[] = { "sh", "-c",
			 "trap 'echo interrupted; exit 3' INT; echo started; "
			 "while :; do sleep 0.05; done",
			 NULL };
	char *quick[] = { "sh", "-c", "exit 4", NULL };
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	bool stopped = false;
	int rc;

	rc = ph_run_stoppable(argv, &out, 120000, stop_once_started, &out,
			      &stopped);
	CHECK(stopped);
	CHECK_INT(rc, 3);
	CHECK(out.len && strstr(out.buf, "interrupted"));
	/* never told to stop: runs to its end */
	ph_buf_reset(&out);
	rc = ph_run_stoppable(quick, &out, 120000, NULL, NULL, &stopped);
	CHECK(!stopped);
	CHECK_INT(rc, 4);
	ph_buf_release(&out);
}
