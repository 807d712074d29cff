/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_json: the JSON reader on arbitrary bytes.
 *
 * Checks, beyond "no crash, no out-of-bounds read": a rejection names an
 * offset inside the input; an accepted document agrees with jansson
 * (accept/reject), apart from two known differences: nesting between our
 * limit (256) and jansson's (2048); a NUL byte outside a string, which
 * jansson takes for the end of its input and RFC 8259 does not; and "\u0000"
 * inside an object key, which RFC 8259 allows and jansson refuses; and
 * writing what we read and reading it back gives an equal tree.
 */
#include "ph_common.h"
#include "ph_json.h"

#include <jansson.h>

static int depth_of(const uint8_t *data, size_t size)
{
	int depth = 0, max = 0;
	bool in_str = false;

	for (size_t i = 0; i < size; i++) {
		if (in_str) {
			if (data[i] == '\\')
				i++;
			else if (data[i] == '"')
				in_str = false;
		} else if (data[i] == '"') {
			in_str = true;
		} else if (data[i] == '[' || data[i] == '{') {
			if (++depth > max)
				max = depth;
		} else if (data[i] == ']' || data[i] == '}') {
			depth--;
		}
	}
	return max;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ph_json_reader r;
	static bool ready;
	struct ph_arena a, a2;
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_json *v, *v2;
	struct ph_err err = { 0 };
	json_error_t jerr;
	json_t *j;
	struct ph_jw w;
	int rc, rc2;

	if (!ready) {
		ph_json_reader_init(&r);
		ready = true;
	}
	/* A private copy, so reading one byte past the end is caught. */
	char *copy = malloc(size ? size : 1);

	memcpy(copy, data, size);
	ph_arena_init(&a, 4096, 64 << 20);
	rc = ph_json_read(&r, &a, copy, size, &v, &err);
	j = json_loadb(copy, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (rc) {
		if (err.offset > size)
			__builtin_trap();
		/* jansson goes 2048 deep; we stop at 256 on purpose */
		if (j && rc == PH_ECORRUPT && depth_of(data, size) <= 256 &&
		    !memchr(data, 0, size))
			__builtin_trap();
	} else {
		if (!j && !strstr(jerr.text, "NUL byte in object key"))
			__builtin_trap();
		ph_jw_init(&w, &out);
		ph_jw_value(&w, v);
		if (ph_jw_finish(&w))
			__builtin_trap();
		ph_arena_init(&a2, 4096, 64 << 20);
		if (ph_json_read(&r, &a2, out.buf, out.len, &v2, &err) ||
		    !ph_json_equal(v, v2))
			__builtin_trap();
		ph_arena_release(&a2);
	}
	/* Big integers as doubles (the MCP server's reader): what parsed
	 * still parses, to the same value; a refusal names a byte inside. */
	r.big_ints_as_doubles = true;
	ph_arena_init(&a2, 4096, 64 << 20);
	rc2 = ph_json_read(&r, &a2, copy, size, &v2, &err);
	r.big_ints_as_doubles = false;
	if ((!rc && (rc2 || !ph_json_equal(v, v2))) ||
	    (rc2 && err.offset > size))
		__builtin_trap();
	ph_arena_release(&a2);
	json_decref(j);
	ph_buf_release(&out);
	ph_arena_release(&a);
	free(copy);
	return 0;
}
