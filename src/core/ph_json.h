/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_json.h: a strict JSON reader (RFC 8259) and a streaming writer.
 *
 * Ownership, once for every JSON value in the project:
 *
 *  - A parse produces a tree of struct ph_json that lives in the arena the
 *    caller passed, and dies with it.  Nothing in the tree is malloc'd on its
 *    own, so there is nothing to free but the arena.
 *  - Strings are BORROWED from the input whenever they contain no escape:
 *    `s` points into the caller's buffer, which must outlive the tree.  A
 *    string with escapes is decoded into the arena.  Either way a string is
 *    (s, n): binary-safe, not NUL-terminated (it may hold "\u0000").  Use
 *    ph_json_streq() to compare, "%.*s" to print, ph_json_strdup() for a C
 *    string in the arena.
 *  - The input is never modified.
 *
 * Numbers: an integer literal (no fraction, no exponent) is PH_JSON_INT and
 * must fit int64_t; anything else is PH_JSON_DOUBLE and must be finite.  A
 * literal that does not fit is rejected, not rounded: silently changing an
 * id or a timestamp is worse than refusing it.
 *
 * Objects keep their members in input order, duplicates included;
 * ph_json_get() returns the last member with that key, as JavaScript and
 * jansson do.
 *
 * Rejected input gets a struct ph_err with the byte offset, line and column
 * of the first byte that cannot be part of valid JSON, and why.
 */
#ifndef PH_JSON_H
#define PH_JSON_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_buf.h"
#include "ph_error.h"

enum ph_json_type {
	PH_JSON_NULL,
	PH_JSON_FALSE,
	PH_JSON_TRUE,
	PH_JSON_INT,
	PH_JSON_DOUBLE,
	PH_JSON_STRING,
	PH_JSON_ARRAY,
	PH_JSON_OBJECT,
};

struct ph_json_member;

struct ph_json {
	uint32_t type; /* enum ph_json_type */
	uint32_t n;    /* STRING: bytes; ARRAY: items; OBJECT: members */
	union {
		int64_t i;			/* INT */
		double d;			/* DOUBLE */
		const char *s;			/* STRING, see ownership */
		struct ph_json *items;		/* ARRAY */
		struct ph_json_member *members; /* OBJECT */
	} u;
};

struct ph_json_member {
	struct ph_json key; /* always a STRING */
	struct ph_json value;
};

/* The deepest nesting of arrays and objects the reader accepts. */
#define PH_JSON_MAX_DEPTH 256

/*
 * A reader keeps the scratch space a parse needs, so parsing many documents
 * (an NDJSON file, a socket's lines) allocates nothing per document once
 * warm.  One reader per thread.
 */
struct ph_json_reader {
	struct ph_json *stack; /* children of open containers */
	size_t stack_len;
	size_t stack_alloc;
	struct ph_buf scratch; /* escaped strings and long numbers */
	/*
	 * An integer literal that does not fit int64_t reads as the nearest
	 * double, as JavaScript reads it, instead of being refused.  For
	 * input whose numbers are arguments, not ids or timestamps: an MCP
	 * client's tools/call, where a refusal is a parse error with no id
	 * to answer to, and the client waits for its answer until it times
	 * out (JSON.stringify(1e20) is "100000000000000000000").  Off after
	 * ph_json_reader_init.
	 */
	bool big_ints_as_doubles;
};

void ph_json_reader_init(struct ph_json_reader *r);
void ph_json_reader_release(struct ph_json_reader *r);

/*
 * Parses exactly one JSON value, with optional whitespace around it, from
 * buf[0..len).  On success *out points at the root (in arena) and 0 is
 * returned.  On failure returns PH_ECORRUPT (bad input), PH_ETOOBIG (the
 * arena's cap) or PH_ENOMEM, fills err (which may be NULL) and leaves *out
 * NULL; what the arena holds is then garbage until reset.
 */
int ph_json_read(struct ph_json_reader *r, struct ph_arena *arena,
		 const char *buf, size_t len, struct ph_json **out,
		 struct ph_err *err) PH_WUR;

/* ph_json_read() with a reader made and released for this one call. */
int ph_json_parse(struct ph_arena *arena, const char *buf, size_t len,
		  struct ph_json **out, struct ph_err *err) PH_WUR;

/*
 * Copies s[0..n) to out with every byte that does not begin a valid UTF-8
 * sequence (RFC 3629, as the reader checks strings) replaced by U+FFFD
 * (3 bytes), so a line a runtime mangled can still be read.  *out_len
 * receives the copy's length (at most 3 * n); with out NULL nothing is
 * written, to size out first.  Returns how many bytes were replaced (0: s
 * was valid, out is a copy).
 */
size_t ph_utf8_repair(const char *s, size_t n, char *out, size_t *out_len);

/* Lookups; each accepts NULL and a value of the wrong type, and says NULL. */
const struct ph_json *ph_json_get(const struct ph_json *obj, const char *key);
const struct ph_json *ph_json_at(const struct ph_json *arr, size_t i);

static inline bool ph_json_is(const struct ph_json *v, enum ph_json_type t)
{
	return v && v->type == (uint32_t)t;
}

bool ph_json_streq(const struct ph_json *v, const char *s);

/*
 * Reads an integer the way the wire sends them: a JSON integer, a double
 * with no fraction within int64 range, or a string holding a decimal
 * integer (the published runtime sends "status":"200").  Returns false for
 * anything else, leaving *out alone.
 */
bool ph_json_as_int(const struct ph_json *v, int64_t *out);
/* The same for numbers: INT, DOUBLE, or a string holding a JSON number. */
bool ph_json_as_double(const struct ph_json *v, double *out);
/* A string value as a NUL-terminated copy in arena; NULL if not a string. */
const char *ph_json_strdup(struct ph_arena *arena, const struct ph_json *v);

/* Deep equality; object members compared in order. */
bool ph_json_equal(const struct ph_json *a, const struct ph_json *b);

/*
 * The writer appends JSON text to a ph_buf as values are given to it.  It
 * tracks nesting and commas, escapes strings (invalid UTF-8 becomes U+FFFD,
 * so the output is always valid JSON), formats doubles with the shortest
 * text that reads back to the same bits, in the C locale whatever the
 * process's locale is, and writes NaN and infinities as null.
 *
 * Errors are sticky: the first failed append (the buffer's cap, or memory)
 * is kept and every later call does nothing; ph_jw_finish() returns it.
 */
struct ph_jw {
	struct ph_buf *out;
	int err;	/* first error, or 0 */
	uint32_t depth; /* open containers */
	bool after_key; /* a key was written, its value is next */
	uint64_t has_items[PH_JSON_MAX_DEPTH / 64]; /* bit per depth */
};

void ph_jw_init(struct ph_jw *w, struct ph_buf *out);
/*
 * Starts inside an object whose opening brace, and members if any (then
 * has_members), the caller wrote into out as raw text: the writer goes on
 * with members (a comma first when has_members), and the object stays
 * the caller's to close (ph_jw_finish() would call it unclosed).
 */
void ph_jw_init_in_object(struct ph_jw *w, struct ph_buf *out,
			  bool has_members);
void ph_jw_obj_begin(struct ph_jw *w);
void ph_jw_obj_end(struct ph_jw *w);
void ph_jw_arr_begin(struct ph_jw *w);
void ph_jw_arr_end(struct ph_jw *w);
void ph_jw_key(struct ph_jw *w, const char *key);
void ph_jw_keyn(struct ph_jw *w, const char *key, size_t n);
/* A key already in JSON form, "name": included; trusted, not escaped. */
void ph_jw_key_json(struct ph_jw *w, const char *json, size_t n);
void ph_jw_str(struct ph_jw *w, const char *s); /* NULL writes null */
void ph_jw_strn(struct ph_jw *w, const char *s, size_t n);
void ph_jw_int(struct ph_jw *w, int64_t v);
void ph_jw_double(struct ph_jw *w, double v);
void ph_jw_bool(struct ph_jw *w, bool v);
void ph_jw_null(struct ph_jw *w);
/* Writes already-encoded JSON as one value; the caller vouches for it. */
void ph_jw_raw(struct ph_jw *w, const char *json, size_t n);
/* Writes a parsed value again; NULL (an absent member) writes null. */
void ph_jw_value(struct ph_jw *w, const struct ph_json *v);
/* Returns the first error, or PH_EINVAL if containers are still open. */
int ph_jw_finish(struct ph_jw *w) PH_WUR;

/* key/value shorthands, for the common case inside an object. */
static inline void ph_jw_kv_str(struct ph_jw *w, const char *k, const char *v)
{
	ph_jw_key(w, k);
	ph_jw_str(w, v);
}

static inline void ph_jw_kv_int(struct ph_jw *w, const char *k, int64_t v)
{
	ph_jw_key(w, k);
	ph_jw_int(w, v);
}

static inline void ph_jw_kv_bool(struct ph_jw *w, const char *k, bool v)
{
	ph_jw_key(w, k);
	ph_jw_bool(w, v);
}

static inline void ph_jw_kv_double(struct ph_jw *w, const char *k, double v)
{
	ph_jw_key(w, k);
	ph_jw_double(w, v);
}

/* Appends s as a quoted, escaped JSON string. */
int ph_json_escape(struct ph_buf *out, const char *s, size_t n) PH_WUR;

/*
 * The "C" locale, made once for the process (pthread_once): numbers are
 * read and written in it whatever the app's locale.  LC_GLOBAL_LOCALE
 * when it could not be made.  Needs <locale.h>.
 */
#include <locale.h>
locale_t ph_json_c_locale(void);

/* Shortest round-trip text for a finite double, C locale; returns length. */
size_t ph_json_format_double(double v, char *buf, size_t size);

/*
 * v in decimal, written backwards so that it ends just before end (21
 * bytes before end always suffice); returns where it starts.  Two digits
 * a division: the agent's writer formats two integers for every event.
 */
char *ph_json_format_u64(uint64_t v, char *end);
char *ph_json_format_i64(int64_t v, char *end);

#endif
