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

static void write_scalar(struct ph_jw *w, const struct field *f)
{
	char num[24];
	double d;

	switch (f->type) {
	case PH_F_STR:
	case PH_F_ARR_STR: ph_jw_strn(w, (const char *)f->p, f->len); break;
	case PH_F_QSTR:
		snprintf(num, sizeof(num), "%" PRId64, get_i64(f->p));
		ph_jw_str(w, num);
		break;
	case PH_F_INT: ph_jw_int(w, get_i64(f->p)); break;
	case PH_F_DOUBLE:
		memcpy(&d, f->p, sizeof(d));
		ph_jw_double(w, d);
		break;
	case PH_F_BOOL: ph_jw_bool(w, f->p[0] != 0); break;
	default: ph_jw_null(w); break;
	}
}

int ph_encode_event(const struct ph_rec *r, uint64_t seq, struct ph_buf *out)
{
	struct ph_jw w;
	struct field f;
	size_t off = 0;
	bool have;

	ph_jw_init(&w, out);
	ph_jw_obj_begin(&w);
	ph_jw_kv_str(&w, "event", ph_wire_kind_name((enum ph_kind)r->kind));
	ph_jw_kv_int(&w, "t", r->t_ms);
	ph_jw_kv_int(&w, "seq", (int64_t)seq);
	ph_jw_key(&w, "data");
	ph_jw_obj_begin(&w);
	if (r->kind == PH_KIND_DEVICE && r->sub < PH_ARRAY_SIZE(device_kinds))
		ph_jw_kv_str(&w, "kind", device_kinds[r->sub]);
	have = next_field(r, &off, &f);
	while (have) {
		enum ph_key key = f.key;

		if (f.type == PH_F_PCS) {
			/* Writes its own keys: top, stack, frames. */
			uintptr_t pcs[PH_MAX_FRAMES];
			size_t n = f.len / sizeof(uintptr_t);

			n = n < PH_MAX_FRAMES ? n : PH_MAX_FRAMES;
			memcpy(pcs, f.p, n * sizeof(uintptr_t));
			ph_symbolize_json(&w, pcs, n);
			have = next_field(r, &off, &f);
			continue;
		}
		{
			size_t kn;
			const char *kj = ph_wire_key_json(key, &kn);

			ph_jw_key_json(&w, kj, kn);
		}
		if (f.type == PH_F_ARR_STR) {
			ph_jw_arr_begin(&w);
			do {
				write_scalar(&w, &f);
				have = next_field(r, &off, &f);
			} while (have && f.type == PH_F_ARR_STR &&
				 f.key == key);
			ph_jw_arr_end(&w);
		} else if (f.type == PH_F_ARR_EMPTY) {
			ph_jw_arr_begin(&w);
			ph_jw_arr_end(&w);
			have = next_field(r, &off, &f);
		} else if (f.type == PH_F_OBJ_INT) {
			ph_jw_obj_begin(&w);
			do {
				size_t n = strnlen((const char *)f.p, f.len);

				if (n + 1 + sizeof(int64_t) <= f.len) {
					ph_jw_keyn(&w, (const char *)f.p, n);
					ph_jw_int(&w, get_i64(f.p + n + 1));
				}
				have = next_field(r, &off, &f);
			} while (have && f.type == PH_F_OBJ_INT &&
				 f.key == key);
			ph_jw_obj_end(&w);
		} else {
			write_scalar(&w, &f);
			have = next_field(r, &off, &f);
		}
	}
	ph_jw_obj_end(&w);
	ph_jw_obj_end(&w);
	if (ph_jw_finish(&w))
		return w.err ? w.err : PH_EINVAL;
	return ph_buf_addch(out, '\n');
}
