/* SPDX-License-Identifier: Apache-2.0 */
/*
 * encode.c: a record becomes one JSON line (writer thread only).
 *
 *	{"event":"<kind>","t":<ms>,"seq":<n>,"data":{...}}
 *
 * Fields are written in the order the emitter appended them.  Runs of
 * array elements with the same key become one array, runs of object
 * members one object; raw return addresses are symbolized here, off the
 * thread that captured them.
 */
#include "ph_common.h"
#include "agent.h"
#include "ph_json.h"
#include "symbolize.h"

#include <math.h>

static const char *const device_kinds[] = {
	[PH_DEV_PROFILE] = "profile",	    [PH_DEV_CLOCKS] = "clocks",
	[PH_DEV_FOREGROUND] = "foreground", [PH_DEV_BACKGROUND] = "background",
	[PH_DEV_ROTATION] = "rotation",	    [PH_DEV_THEME] = "theme",
	[PH_DEV_FONT_SCALE] = "fontScale",  [PH_DEV_TRIM_MEMORY] = "trimMemory",
	[PH_DEV_LOW_MEMORY] = "lowMemory",  [PH_DEV_POWER] = "power",
	[PH_DEV_NETWORK] = "network",	    [PH_DEV_THERMAL] = "thermal",
};

struct field {
	enum ph_key key;
	enum ph_field_type type;
	const uint8_t *p;
	size_t len;
};

static bool next_field(const struct ph_rec *r, size_t *off, struct field *f)
{
	const uint8_t *p = r->data + *off;

	if (*off + 4 > r->used)
		return false;
	f->key = (enum ph_key)p[0];
	f->type = (enum ph_field_type)p[1];
	f->len = (size_t)p[2] | (size_t)p[3] << 8;
	f->p = p + 4;
	if (*off + 4 + f->len > r->used)
		return false;
	*off += 4 + f->len;
	return true;
}

static int64_t get_i64(const uint8_t *p)
{
	int64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Every event goes through here, a million a second at full tilt, so the
 * line is written as raw text: the envelope and the keys are the bytes
 * they always are (ph_wire_key_json: quotes and colon included), commas
 * go where this code knows they go, and only values are formatted, by
 * ph_json's own formatters and escaper.  The general writer (ph_jw), with
 * its nesting bookkeeping and keys escaped on every call, took most of an
 * event's encoding time.  Stacks still go through ph_jw, which
 * symbolize.c writes with.
 */

static int put_u64(struct ph_buf *out, uint64_t v)
{
	char tmp[24], *e = tmp + sizeof(tmp), *p = ph_json_format_u64(v, e);

	return ph_buf_add(out, p, (size_t)(e - p));
}

static int put_int(struct ph_buf *out, int64_t v)
{
	char tmp[24], *e = tmp + sizeof(tmp), *p = ph_json_format_i64(v, e);

	return ph_buf_add(out, p, (size_t)(e - p));
}

#define PUT_LIT(out, lit) ph_buf_add(out, lit, sizeof(lit) - 1)

static int write_scalar(struct ph_buf *out, const struct field *f)
{
	char num[40];
	double d;
	int rc;

	switch (f->type) {
	case PH_F_STR:
	case PH_F_ARR_STR:
		return ph_json_escape(out, (const char *)f->p, f->len);
	case PH_F_QSTR:
		rc = ph_buf_addch(out, '"');
		rc = rc ? rc : put_int(out, get_i64(f->p));
		return rc ? rc : ph_buf_addch(out, '"');
	case PH_F_INT: return put_int(out, get_i64(f->p));
	case PH_F_DOUBLE:
		memcpy(&d, f->p, sizeof(d));
		if (!isfinite(d))
			return PUT_LIT(out, "null");
		return ph_buf_add(out, num,
				  ph_json_format_double(d, num, sizeof(num)));
	case PH_F_BOOL:
		return f->p[0] ? PUT_LIT(out, "true") : PUT_LIT(out, "false");
	default: return PUT_LIT(out, "null");
	}
}

/*
 * A run of object members under one key ({"layout":3,"draw":5}); *f is
 * its first, and on return the field after the run (*have false at the
 * end).
 */
static int write_obj_ints(struct ph_buf *out, const struct ph_rec *r,
			  size_t *off, struct field *f, bool *have)
{
	enum ph_key key = f->key;
	bool first = true;
	int rc = ph_buf_addch(out, '{');

	do {
		size_t n = strnlen((const char *)f->p, f->len);

		if (!rc && n + 1 + sizeof(int64_t) <= f->len) {
			rc = first ? 0 : ph_buf_addch(out, ',');
			rc = rc ? rc :
				  ph_json_escape(out, (const char *)f->p, n);
			rc = rc ? rc : ph_buf_addch(out, ':');
			rc = rc ? rc : put_int(out, get_i64(f->p + n + 1));
			first = false;
		}
		*have = next_field(r, off, f);
	} while (*have && f->type == PH_F_OBJ_INT && f->key == key);
	return rc ? rc : ph_buf_addch(out, '}');
}

/* "Name: value\n" lines as {"Name":"value",...} (curl.c redacted them). */
static int write_headers(struct ph_buf *out, const struct field *f)
{
	const char *p = (const char *)f->p, *end = p + f->len;
	struct ph_header h;
	int rc = ph_buf_addch(out, '{');

	for (bool first = true; !rc && p < end; first = false) {
		p = ph_header_next(p, end, &h);
		rc = first ? 0 : ph_buf_addch(out, ',');
		rc = rc ? rc : ph_json_escape(out, h.name, h.name_n);
		rc = rc ? rc : ph_buf_addch(out, ':');
		rc = rc ? rc : ph_json_escape(out, h.value, h.value_n);
	}
	return rc ? rc : ph_buf_addch(out, '}');
}

/* Raw return addresses: symbolize.c writes "top", "stack" and "frames". */
static int write_stack(struct ph_buf *out, const struct field *f,
		       bool has_members)
{
	struct ph_jw w;
	uintptr_t pcs[PH_MAX_FRAMES];
	size_t n = f->len / sizeof(uintptr_t);

	n = n < PH_MAX_FRAMES ? n : PH_MAX_FRAMES;
	memcpy(pcs, f->p, n * sizeof(uintptr_t));
	ph_jw_init_in_object(&w, out, has_members);
	ph_symbolize_json(&w, pcs, n);
	return w.err;
}

int ph_encode_event(const struct ph_rec *r, uint64_t seq, struct ph_buf *out)
{
	const char *kind = ph_wire_kind_name((enum ph_kind)r->kind);
	struct field f;
	size_t off = 0, start = out->len;
	bool have, members; /* members: the data object has one already */
	int rc;

	rc = PUT_LIT(out, "{\"event\":\"");
	rc = rc ? rc : ph_buf_add(out, kind, strlen(kind));
	rc = rc ? rc : PUT_LIT(out, "\",\"t\":");
	rc = rc ? rc : put_int(out, ph_rec_t(r));
	rc = rc ? rc : PUT_LIT(out, ",\"seq\":");
	rc = rc ? rc : put_u64(out, seq);
	rc = rc ? rc : PUT_LIT(out, ",\"data\":{");
	/* a device event says which: its sub-kind is the first member */
	members = r->kind == PH_KIND_DEVICE &&
		  r->sub < PH_ARRAY_SIZE(device_kinds);
	if (!rc && members) {
		rc = PUT_LIT(out, "\"kind\":\"");
		rc = rc ? rc : ph_buf_addstr(out, device_kinds[r->sub]);
		rc = rc ? rc : ph_buf_addch(out, '"');
	}
	have = next_field(r, &off, &f);
	while (have && !rc) {
		enum ph_key key = f.key;
		size_t kn, before = out->len;
		const char *kj = ph_wire_key_json(key, &kn);

		if (f.type == PH_F_PCS) {
			rc = write_stack(out, &f, members);
			members |= out->len > before;
			have = next_field(r, &off, &f);
			continue;
		}
		if (!kn) {
			/* not a key of the wire: no record the agent builds */
			have = next_field(r, &off, &f);
			continue;
		}
		rc = members ? ph_buf_addch(out, ',') : 0;
		rc = rc ? rc : ph_buf_add(out, kj, kn);
		members = true;
		if (rc)
			break;
		if (f.type == PH_F_ARR_STR) {
			rc = ph_buf_addch(out, '[');
			for (bool first = true; !rc; first = false) {
				rc = first ? 0 : ph_buf_addch(out, ',');
				rc = rc ? rc : write_scalar(out, &f);
				have = next_field(r, &off, &f);
				if (!have || f.type != PH_F_ARR_STR ||
				    f.key != key)
					break;
			}
			rc = rc ? rc : ph_buf_addch(out, ']');
		} else if (f.type == PH_F_ARR_EMPTY) {
			rc = PUT_LIT(out, "[]");
			have = next_field(r, &off, &f);
		} else if (f.type == PH_F_OBJ_INT) {
			rc = write_obj_ints(out, r, &off, &f, &have);
		} else if (f.type == PH_F_HEADERS) {
			rc = write_headers(out, &f);
			have = next_field(r, &off, &f);
		} else {
			rc = write_scalar(out, &f);
			have = next_field(r, &off, &f);
		}
	}
	rc = rc ? rc : PUT_LIT(out, "}}\n");
	if (rc)
		ph_buf_setlen(out, start); /* nothing half-written */
	return rc;
}
