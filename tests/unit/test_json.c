/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the JSON reader and writer, including differential tests
 * against jansson (the reference: it must agree on every accept/reject and
 * on every value, apart from the documented depth limit).
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_json.h"
#include "ph_wire.h"

#include <jansson.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>

static struct ph_arena arena;

static const struct ph_json *parse(const char *s, struct ph_err *err)
{
	struct ph_json *v;

	ph_arena_release(&arena); /* what an earlier test left */
	ph_arena_init(&arena, 0, SIZE_MAX);
	memset(err, 0, sizeof(*err));
	if (ph_json_parse(&arena, s, strlen(s), &v, err))
		return NULL;
	return v;
}

/* Compares our tree with jansson's; objects by key, last duplicate wins. */
static bool same_as_jansson(const struct ph_json *v, json_t *j)
{
	switch (v->type) {
	case PH_JSON_NULL: return json_is_null(j);
	case PH_JSON_TRUE: return json_is_true(j);
	case PH_JSON_FALSE: return json_is_false(j);
	case PH_JSON_INT:
		return json_is_integer(j) && json_integer_value(j) == v->u.i;
	case PH_JSON_DOUBLE:
		return json_is_real(j) && json_real_value(j) == v->u.d;
	case PH_JSON_STRING:
		return json_is_string(j) && json_string_length(j) == v->n &&
		       !memcmp(json_string_value(j), v->u.s, v->n);
	case PH_JSON_ARRAY:
		if (!json_is_array(j) || json_array_size(j) != v->n)
			return false;
		for (uint32_t i = 0; i < v->n; i++)
			if (!same_as_jansson(&v->u.items[i],
					     json_array_get(j, i)))
				return false;
		return true;
	case PH_JSON_OBJECT: {
		const char *key;
		json_t *val;
		size_t unique = 0;

		if (!json_is_object(j))
			return false;
		json_object_foreach(j, key, val)
		{
			const struct ph_json *ours = ph_json_get(v, key);

			if (!ours || !same_as_jansson(ours, val))
				return false;
			unique++;
		}
		/* every one of our keys is one of jansson's */
		for (uint32_t i = 0; i < v->n; i++) {
			const struct ph_json *k = &v->u.members[i].key;

			if (memchr(k->u.s, 0, k->n))
				return false; /* not in this corpus */
		}
		return unique <= v->n;
	}
	}
	return false;
}

/* Each case is parsed by both readers: they must agree. */
static const char *const corpus[] = {
	/* accepted */
	"0",
	"-0",
	"1",
	"-1",
	"9223372036854775807",
	"-9223372036854775808",
	"1.5",
	"-0.0",
	"1e10",
	"1E+2",
	"1e-2",
	"0.1",
	"3.141592653589793",
	"1.7976931348623157e308",
	"4.9e-324",
	"1e-400",
	"123456789012345678e-5",
	"0.000000000000000000000000000001",
	"2.2250738585072014e-308",
	"\"\"",
	"\"a\"",
	"\"\\u0000\"",
	"\"\\ud83d\\ude00\"",
	"\"\\u00e9\"",
	"\"\xc3\xa9\"",
	"\"\xe2\x82\xac\"",
	"\"\xf0\x9f\x98\x80\"",
	"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
	"\"\\u2028\"",
	"true",
	"false",
	"null",
	"[]",
	"{}",
	" [ 1 , 2 ] ",
	"[[[[]]]]",
	"{\"a\":{\"b\":[1,{}]}}",
	"{\"a\":1,\"a\":2}",
	"\t\r\n 7 \n",
	"[1e2,1E2,1e+2,1e-2]",
	"{\"\":\"\"}",
	"[\"\\uDBFF\\uDFFF\"]",
	"\"\x7f\"",
	/* rejected */
	"",
	" ",
	"[",
	"]",
	"{",
	"[1,]",
	"{\"a\":1,}",
	"[,1]",
	"{,}",
	"01",
	"-",
	"-01",
	"1.",
	".1",
	"1e",
	"1e+",
	"+1",
	"0x10",
	"NaN",
	"Infinity",
	"-Infinity",
	"1e400",
	"-1e400",
	"9223372036854775808",
	"-9223372036854775809",
	"123456789012345678901234567890",
	"tru",
	"nul",
	"truee",
	"[1 2]",
	"{\"a\" 1}",
	"{a:1}",
	"{\"a\":}",
	"'a'",
	"\"\\x\"",
	"\"\\u12\"",
	"\"\\uD800\"",
	"\"\\uDC00\"",
	"\"\\uD800\\u0041\"",
	"\"\\uD800x\"",
	"\"\t\"",
	"\"\n\"",
	"\"abc",
	"\"\x80\"",
	"\"\xc0\xaf\"",
	"\"\xed\xa0\x80\"",
	"\"\xf4\x90\x80\x80\"",
	"\"\xe2\x82\"",
	"\"\xff\"",
	"[1] [2]",
	"{} x",
	"[\"a\\\"]",
	"\"\\",
	"[1,,2]",
	"{\"a\":1 \"b\":2}",
	"[-]",
	"[1e5.0]",
	"\xef\xbb\xbf{}",
};

void test_json__agrees_with_jansson_on_corpus(void)
{
	for (size_t i = 0; i < PH_ARRAY_SIZE(corpus); i++) {
		struct ph_err err;
		json_error_t jerr;
		const struct ph_json *v = parse(corpus[i], &err);
		json_t *j = json_loadb(corpus[i], strlen(corpus[i]),
				       JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);

		if (!v != !j)
			ph_test_fail(__FILE__, __LINE__,
				     "case %zu '%s': ours %s (%s), jansson %s",
				     i, corpus[i], v ? "accepts" : "rejects",
				     err.msg, j ? "accepts" : "rejects");
		else if (v && !same_as_jansson(v, j))
			ph_test_fail(__FILE__, __LINE__,
				     "case %zu '%s': values differ", i,
				     corpus[i]);
		json_decref(j);
	}
}

void test_json__values_and_types(void)
{
	struct ph_err err;
	const struct ph_json *v =
		parse("{\"event\":\"db_end\",\"t\":24831,\"seq\":4102,"
		      "\"data\":{\"elapsedMs\":\"12\",\"x\":1.25,\"ok\":true,"
		      "\"n\":null,\"a\":[1,\"two\"],\"esc\":\"a\\nb\"}}",
		      &err);
	const struct ph_json *data;
	int64_t i;
	double d;

	CHECK(v);
	CHECK(ph_json_streq(ph_json_get(v, "event"), "db_end"));
	CHECK(ph_json_as_int(ph_json_get(v, "t"), &i) && i == 24831);
	data = ph_json_get(v, "data");
	CHECK(ph_json_is(data, PH_JSON_OBJECT));
	/* numbers the published runtime sends as strings */
	CHECK(ph_json_as_int(ph_json_get(data, "elapsedMs"), &i) && i == 12);
	CHECK(ph_json_as_double(ph_json_get(data, "x"), &d) && d == 1.25);
	CHECK(!ph_json_as_int(ph_json_get(data, "x"), &i));
	CHECK(ph_json_is(ph_json_get(data, "ok"), PH_JSON_TRUE));
	CHECK(ph_json_is(ph_json_get(data, "n"), PH_JSON_NULL));
	CHECK(ph_json_streq(ph_json_at(ph_json_get(data, "a"), 1), "two"));
	CHECK(ph_json_at(ph_json_get(data, "a"), 2) == NULL);
	CHECK(ph_json_streq(ph_json_get(data, "esc"), "a\nb"));
	CHECK(ph_json_get(data, "missing") == NULL);
	CHECK(ph_json_get(NULL, "x") == NULL);
	CHECK_STR(ph_json_strdup(&arena, ph_json_get(v, "event")), "db_end");
}

/*
 * big_ints_as_doubles: an integer past int64 reads as the nearest double
 * (what JavaScript makes of it); one that fits stays an integer; off, the
 * reader refuses it, naming it.
 */
void test_json__big_ints_as_doubles_when_asked(void)
{
	static const char text[] =
		"[18446744073709551616,-9223372036854775809,42,"
		"100000000000000000000]";
	struct ph_json_reader r;
	struct ph_arena a;
	struct ph_json *v = NULL;
	struct ph_err err = { 0 };
	int rc;

	ph_arena_init(&a, 1 << 12, 1 << 20);
	ph_json_reader_init(&r);
	CHECK_INT(ph_json_read(&r, &a, text, strlen(text), &v, &err),
		  PH_ECORRUPT);
	CHECK(strstr(err.msg, "integer does not fit in 64 bits"));
	r.big_ints_as_doubles = true;
	rc = ph_json_read(&r, &a, text, strlen(text), &v, &err);
	ph_json_reader_release(&r);
	CHECK_INT(rc, 0);
	CHECK(ph_json_is(ph_json_at(v, 0), PH_JSON_DOUBLE) &&
	      ph_json_at(v, 0)->u.d == 18446744073709551616.0);
	CHECK(ph_json_is(ph_json_at(v, 1), PH_JSON_DOUBLE) &&
	      ph_json_at(v, 1)->u.d == -9223372036854775809.0);
	CHECK(ph_json_is(ph_json_at(v, 2), PH_JSON_INT) &&
	      ph_json_at(v, 2)->u.i == 42);
	CHECK(ph_json_is(ph_json_at(v, 3), PH_JSON_DOUBLE) &&
	      ph_json_at(v, 3)->u.d == 1e20);
	ph_arena_release(&a);
}

void test_json__strings_are_borrowed_unless_escaped(void)
{
	const char *text = "[\"plain\",\"with\\tescape\"]";
	struct ph_json *v;
	struct ph_err err;

	ph_arena_release(&arena); /* what an earlier test left */
	ph_arena_init(&arena, 0, SIZE_MAX);
	CHECK_INT(ph_json_parse(&arena, text, strlen(text), &v, &err), 0);
	CHECK(v->u.items[0].u.s == text + 2);
	CHECK(v->u.items[1].u.s < text ||
	      v->u.items[1].u.s >= text + strlen(text));
	CHECK_INT(v->u.items[1].n, 11);
	ph_arena_release(&arena);
}

void test_json__as_int_rejects_non_numbers(void)
{
	struct ph_err err;
	const struct ph_json *v = parse(
		"[\"12x\",\"\",\" 1\",\"1e3\",\"-7\",1e300,\"9223372036854775808\"]",
		&err);
	int64_t i = 99;

	CHECK(v);
	CHECK(!ph_json_as_int(&v->u.items[0], &i));
	CHECK(!ph_json_as_int(&v->u.items[1], &i));
	CHECK(!ph_json_as_int(&v->u.items[2], &i));
	CHECK(ph_json_as_int(&v->u.items[3], &i) && i == 1000);
	CHECK(ph_json_as_int(&v->u.items[4], &i) && i == -7);
	CHECK(!ph_json_as_int(&v->u.items[5], &i));
	CHECK(!ph_json_as_int(&v->u.items[6], &i));
}

void test_json__errors_name_offset_line_and_column(void)
{
	struct ph_err err;

	CHECK(!parse("{\"a\":1,\n \"b\" 2}", &err));
	CHECK_INT(err.code, PH_ECORRUPT);
	CHECK_INT(err.offset, 13);
	CHECK_INT(err.line, 2);
	CHECK_INT(err.col, 6);
	CHECK_STR(err.msg, "expected ':'");

	CHECK(!parse("[1,]", &err));
	CHECK_INT(err.offset, 3);
	CHECK(!parse("\"ab\\uD800\"", &err));
	CHECK_INT(err.offset, 3);
	CHECK_STR(err.msg, "lone high surrogate");
	CHECK(!parse("[1e999]", &err));
	CHECK_STR(err.msg, "number out of range");
	CHECK_INT(err.offset, 1);
	CHECK(!parse("\"a\xff\"", &err));
	CHECK_INT(err.offset, 2);
	CHECK(!parse("[1] x", &err));
	CHECK_STR(err.msg, "unexpected data after the value");
	CHECK_INT(err.offset, 4);
}

void test_json__depth_limit(void)
{
	char deep[600];
	struct ph_err err;

	memset(deep, '[', 256);
	memset(deep + 256, ']', 256);
	deep[512] = '\0';
	CHECK(parse(deep, &err));
	memset(deep, '[', 257);
	memset(deep + 257, ']', 257);
	deep[514] = '\0';
	CHECK(!parse(deep, &err));
	CHECK_STR(err.msg, "nesting deeper than 256");
	CHECK_INT(err.offset, 256);
}

void test_json__arena_cap_is_reported(void)
{
	struct ph_arena small;
	struct ph_json *v;
	struct ph_err err;
	const char *text = "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]";

	ph_arena_init(&small, 64, 256);
	CHECK_INT(ph_json_parse(&small, text, strlen(text), &v, &err),
		  PH_ETOOBIG);
	CHECK(v == NULL);
	ph_arena_release(&small);
}

static const char *write_doc(struct ph_buf *b)
{
	struct ph_jw w;

	ph_buf_reset(b);
	ph_jw_init(&w, b);
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "s",
		     "quote\" slash\\ nl\n tab\t ctl\x01 bad\xff ok\xc3\xa9");
	ph_jw_kv_int(&w, "min", INT64_MIN);
	ph_jw_kv_int(&w, "max", INT64_MAX);
	ph_jw_kv_double(&w, "d", 0.1);
	ph_jw_kv_double(&w, "whole", 3.0);
	ph_jw_kv_double(&w, "nan", NAN);
	ph_jw_kv_bool(&w, "b", false);
	ph_jw_key(&w, "arr");
	ph_jw_arr_begin(&w);
	ph_jw_null(&w);
	ph_jw_arr_begin(&w);
	ph_jw_arr_end(&w);
	ph_jw_str(&w, NULL);
	ph_jw_raw(&w, "{\"r\":1}", 7);
	ph_jw_arr_end(&w);
	ph_jw_obj_end(&w);
	return ph_jw_finish(&w) ? NULL : b->buf;
}

void test_json__writer_escapes_and_formats(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);

	CHECK_STR(write_doc(&b),
		  "{\"s\":\"quote\\\" slash\\\\ nl\\n tab\\t ctl\\u0001 "
		  "bad\xef\xbf\xbd ok\xc3\xa9\",\"min\":-9223372036854775808,"
		  "\"max\":9223372036854775807,"
		  "\"d\":0.1,\"whole\":3.0,\"nan\":null,\"b\":false,"
		  "\"arr\":[null,[],null,{\"r\":1}]}");
	ph_buf_release(&b);
}

/* What one byte alone in plain text becomes inside a JSON string. */
static void escaped_byte(unsigned c, char *buf, size_t size)
{
	const char *named = c == '"'  ? "\\\"" :
			    c == '\\' ? "\\\\" :
			    c == '\n' ? "\\n" :
			    c == '\r' ? "\\r" :
			    c == '\t' ? "\\t" :
			    c == '\b' ? "\\b" :
			    c == '\f' ? "\\f" :
					NULL;

	if (named)
		snprintf(buf, size, "%s", named);
	else if (c < 0x20)
		snprintf(buf, size, "\\u%04x", c);
	else if (c >= 0x80)
		snprintf(buf, size, "\xef\xbf\xbd"); /* a lone byte: not UTF-8
						      */
	else
		snprintf(buf, size, "%c", c);
}

/*
 * The escaper reads plain text eight bytes at a time: every byte value,
 * at every place in and across those words, is still found and escaped.
 */
void test_json__escape_finds_every_byte_at_every_offset(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf want = PH_BUF_INIT(PH_BUF_NO_CAP);
	int wrong = 0;

	for (unsigned c = 1; c < 256; c++) {
		for (size_t at = 0; at < 20; at++) {
			char s[21], esc[8];

			memset(s, 'a', 20);
			s[20] = '\0';
			s[at] = (char)c;
			escaped_byte(c, esc, sizeof(esc));
			ph_buf_reset(&want);
			ph_buf_reset(&b);
			if (ph_buf_addf(&want, "\"%.*s%s%s\"", (int)at, s, esc,
					s + at + 1) ||
			    ph_json_escape(&b, s, 20) ||
			    !ph_buf_eq(&b, want.buf))
				wrong++;
		}
	}
	CHECK_INT(wrong, 0);
	ph_buf_release(&b);
	ph_buf_release(&want);
}

void test_json__writer_ignores_locale(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw w;
	const char *old = setlocale(LC_NUMERIC, NULL);
	char saved[64];

	snprintf(saved, sizeof(saved), "%s", old ? old : "C");
	/* Present on some machines only; the point holds either way. */
	setlocale(LC_NUMERIC, "de_DE.UTF-8");
	ph_jw_init(&w, &b);
	ph_jw_double(&w, 2.5);
	setlocale(LC_NUMERIC, saved);
	CHECK_INT(ph_jw_finish(&w), 0);
	CHECK_STR(b.buf, "2.5");
	ph_buf_release(&b);
}

void test_json__writer_misuse_and_cap_are_errors(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf tiny = PH_BUF_INIT(10);
	struct ph_jw w;

	ph_jw_init(&w, &b);
	ph_jw_obj_begin(&w);
	CHECK_INT(ph_jw_finish(&w), PH_EINVAL); /* still open */
	ph_jw_obj_end(&w);
	ph_jw_obj_end(&w);
	CHECK_INT(ph_jw_finish(&w), PH_EINVAL); /* closed twice */

	ph_jw_init(&w, &tiny);
	ph_jw_str(&w, "this will not fit");
	CHECK_INT(ph_jw_finish(&w), PH_ETOOBIG);
	ph_buf_release(&b);
	ph_buf_release(&tiny);
}

void test_json__round_trip(void)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_buf b2 = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena a2;
	struct ph_json *v, *v2;
	struct ph_err err;
	struct ph_jw w;
	const double doubles[] = { 0.1,	    1e300,	5e-324, -0.0,
				   1.0 / 3, 123456.789, 1e22,	1e23 };
	char tmp[40];

	for (size_t i = 0; i < PH_ARRAY_SIZE(doubles); i++) {
		ph_json_format_double(doubles[i], tmp, sizeof(tmp));
		CHECK(strtod(tmp, NULL) == doubles[i]);
	}
	CHECK(write_doc(&b));
	ph_arena_release(&arena); /* what an earlier test left */
	ph_arena_init(&arena, 0, SIZE_MAX);
	ph_arena_init(&a2, 0, SIZE_MAX);
	CHECK_INT(ph_json_parse(&arena, b.buf, b.len, &v, &err), 0);
	ph_jw_init(&w, &b2);
	ph_jw_value(&w, v);
	CHECK_INT(ph_jw_finish(&w), 0);
	CHECK_INT(ph_json_parse(&a2, b2.buf, b2.len, &v2, &err), 0);
	CHECK(ph_json_equal(v, v2));
	CHECK_STR(b.buf, b2.buf);
	ph_arena_release(&a2);
	ph_buf_release(&b);
	ph_buf_release(&b2);
}

/* Every line of the published runtime's recorded stream parses. */
void test_json__reads_recorded_wire_stream(void)
{
	const char *path = FIXTURE("porthole-wire/received.ndjson");
	struct ph_buf file = PH_BUF_INIT(1 << 26);
	struct ph_json_reader r;
	struct ph_json *v;
	struct ph_err err;
	int lines = 0, events = 0;

	CHECK_INT(ph_buf_read_file(&file, path), 0);
	ph_json_reader_init(&r);
	ph_arena_release(&arena); /* what an earlier test left */
	ph_arena_init(&arena, 0, SIZE_MAX);
	for (char *p = file.buf; *p;) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		ph_arena_reset(&arena);
		if (ph_json_read(&r, &arena, p, n, &v, &err))
			ph_test_fail(__FILE__, __LINE__, "line %d: %s",
				     lines + 1, err.msg);
		else if (ph_json_get(v, "event"))
			events++;
		lines++;
		p += n + (nl ? 1 : 0);
	}
	ph_json_reader_release(&r);
	ph_arena_release(&arena);
	ph_buf_release(&file);
	CHECK_INT(lines, 996);
	CHECK_INT(events, 986);
}

/*
 * The agent's writer appends keys in their JSON form without escaping them
 * (ph_wire_key_json): that is only right while every key is a plain name,
 * and the JSON form must say exactly the name.
 */
void test_json__wire_keys_need_no_escaping(void)
{
	int keys = 0;

	for (int k = 1; k < PH_KEY_END; k++) {
		const char *name = ph_wire_key_name((enum ph_key)k);
		size_t n, len = strlen(name);
		const char *json = ph_wire_key_json((enum ph_key)k, &n);
		bool plain = len > 0;

		for (size_t i = 0; i < len; i++)
			plain = plain && (name[i] == '_' ||
					  (name[i] >= '0' && name[i] <= '9') ||
					  (name[i] >= 'a' && name[i] <= 'z') ||
					  (name[i] >= 'A' && name[i] <= 'Z'));
		CHECK(plain);
		CHECK_INT(n, len + 3);
		CHECK(json[0] == '"' && !memcmp(json + 1, name, len) &&
		      !strcmp(json + 1 + len, "\":"));
		keys++;
	}
	CHECK(keys > 50);
}

/*
 * Many threads reading and writing doubles at once: the C locale both
 * need is made once (pthread_once), so under TSan its first use by racing
 * threads is no data race, and every thread gets the same digits.
 */
static void *numbers(void *arg)
{
	static const char text[] = "[0.12345678901234567891,2.5e-300]";
	intptr_t bad = 0;

	(void)arg;
	for (int i = 0; i < 200; i++) {
		struct ph_arena a;
		struct ph_json *v;
		struct ph_err err;
		double d = 0;
		char buf[40];

		ph_arena_init(&a, 0, SIZE_MAX);
		if (ph_json_parse(&a, text, sizeof(text) - 1, &v, &err) ||
		    !ph_json_as_double(ph_json_at(v, 0), &d) ||
		    d != 0.12345678901234567891)
			bad++;
		ph_arena_release(&a);
		ph_json_format_double(0.1, buf, sizeof(buf));
		bad += strcmp(buf, "0.1") != 0;
	}
	return (void *)bad;
}

void test_json__mt_doubles_from_many_threads(void)
{
	pthread_t t[8];
	intptr_t bad = 0;

	for (int i = 0; i < 8; i++)
		CHECK_INT(pthread_create(&t[i], NULL, numbers, NULL), 0);
	for (int i = 0; i < 8; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += (intptr_t)r;
	}
	CHECK_INT(bad, 0);
}
