/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_heap_writer.h: a small HPROF writer for tests and the fuzzer's
 * seeds, so planted leaks are built from scratch, byte by byte, in the
 * shape an Android device writes (JAVA PROFILE 1.0.3, 4-byte ids, an
 * "app" heap switch, instance sizes that include the 8-byte header).
 *
 * Ids: strings count up from 0x100, objects from 0x10000 in steps of 8.
 * Nothing here checks its input: tests write what they mean, including
 * broken dumps on purpose.
 */
#ifndef TEST_HEAP_WRITER_H
#define TEST_HEAP_WRITER_H

#include "ph_common.h"
#include "ph_buf.h"

struct hw {
	struct ph_buf out; /* the file */
	struct ph_buf seg; /* the open heap dump segment */
	uint32_t next_str;
	uint32_t next_obj;
	uint32_t serial;
	int err;
};

static void hw_raw(struct ph_buf *b, const void *p, size_t n, int *err)
{
	if (!*err)
		*err = ph_buf_add(b, p, n);
}

static void hw_u1(struct ph_buf *b, uint8_t v, int *err)
{
	hw_raw(b, &v, 1, err);
}

static void hw_u2(struct ph_buf *b, uint16_t v, int *err)
{
	uint8_t p[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	hw_raw(b, p, 2, err);
}

static void hw_u4(struct ph_buf *b, uint32_t v, int *err)
{
	uint8_t p[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 8), (uint8_t)v };

	hw_raw(b, p, 4, err);
}

static void hw_u8(struct ph_buf *b, uint64_t v, int *err)
{
	hw_u4(b, (uint32_t)(v >> 32), err);
	hw_u4(b, (uint32_t)v, err);
}

static void hw_record(struct hw *w, uint8_t tag, const struct ph_buf *body)
{
	hw_u1(&w->out, tag, &w->err);
	hw_u4(&w->out, 0, &w->err);
	hw_u4(&w->out, (uint32_t)body->len, &w->err);
	hw_raw(&w->out, body->buf, body->len, &w->err);
}

static void hw_init(struct hw *w)
{
	memset(w, 0, sizeof(*w));
	ph_buf_init(&w->out, PH_BUF_NO_CAP);
	ph_buf_init(&w->seg, PH_BUF_NO_CAP);
	w->next_str = 0x100;
	w->next_obj = 0x10000;
	hw_raw(&w->out, "JAVA PROFILE 1.0.3", 19, &w->err);
	hw_u4(&w->out, 4, &w->err);
	hw_u8(&w->out, 1700000000000ull, &w->err);
}

static uint32_t hw_string(struct hw *w, const char *s)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	uint32_t id = w->next_str++;

	hw_u4(&b, id, &w->err);
	hw_raw(&b, s, strlen(s), &w->err);
	hw_record(w, 0x01, &b);
	ph_buf_release(&b);
	return id;
}

static uint32_t hw_new_id(struct hw *w)
{
	uint32_t id = w->next_obj;

	w->next_obj += 8;
	return id;
}

/* HEAP_DUMP_INFO: subsequent objects go to heap `name`. */
static void hw_heap(struct hw *w, uint32_t hid, const char *name)
{
	uint32_t sid = hw_string(w, name);

	hw_u1(&w->seg, 0xFE, &w->err);
	hw_u4(&w->seg, hid, &w->err);
	hw_u4(&w->seg, sid, &w->err);
}

struct hw_field {
	const char *name;
	uint8_t type;
	uint64_t value; /* statics only */
};

/*
 * A class: LOAD_CLASS, a sticky-class root and the CLASS_DUMP.  Returns
 * the class object's id.
 */
static uint32_t hw_class(struct hw *w, const char *name, uint32_t super,
			 uint32_t instance_size, const struct hw_field *fields,
			 size_t nfields, const struct hw_field *statics,
			 size_t nstatics)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	uint32_t id = hw_new_id(w), nsid = hw_string(w, name);
	static const uint8_t sz[12] = { 0, 0, 4, 0, 1, 2, 4, 8, 1, 2, 4, 8 };

	hw_u4(&b, ++w->serial, &w->err);
	hw_u4(&b, id, &w->err);
	hw_u4(&b, 0, &w->err);
	hw_u4(&b, nsid, &w->err);
	hw_record(w, 0x02, &b);
	ph_buf_release(&b);
	hw_u1(&w->seg, 0x05, &w->err);
	hw_u4(&w->seg, id, &w->err);
	hw_u1(&w->seg, 0x20, &w->err);
	hw_u4(&w->seg, id, &w->err);
	hw_u4(&w->seg, 0, &w->err);
	hw_u4(&w->seg, super, &w->err);
	for (int i = 0; i < 5; i++)
		hw_u4(&w->seg, 0, &w->err);
	hw_u4(&w->seg, instance_size, &w->err);
	hw_u2(&w->seg, 0, &w->err);
	hw_u2(&w->seg, (uint16_t)nstatics, &w->err);
	for (size_t i = 0; i < nstatics; i++) {
		uint8_t t = statics[i].type;

		hw_u4(&w->seg, hw_string(w, statics[i].name), &w->err);
		hw_u1(&w->seg, t, &w->err);
		if (sz[t] == 1)
			hw_u1(&w->seg, (uint8_t)statics[i].value, &w->err);
		else if (sz[t] == 2)
			hw_u2(&w->seg, (uint16_t)statics[i].value, &w->err);
		else if (sz[t] == 4)
			hw_u4(&w->seg, (uint32_t)statics[i].value, &w->err);
		else
			hw_u8(&w->seg, statics[i].value, &w->err);
	}
	hw_u2(&w->seg, (uint16_t)nfields, &w->err);
	for (size_t i = 0; i < nfields; i++) {
		hw_u4(&w->seg, hw_string(w, fields[i].name), &w->err);
		hw_u1(&w->seg, fields[i].type, &w->err);
	}
	return id;
}

/* An instance with its field bytes already laid out (own fields first). */
static uint32_t hw_instance_at(struct hw *w, uint32_t id, uint32_t cls,
			       const struct ph_buf *fields)
{
	hw_u1(&w->seg, 0x21, &w->err);
	hw_u4(&w->seg, id, &w->err);
	hw_u4(&w->seg, 0, &w->err);
	hw_u4(&w->seg, cls, &w->err);
	hw_u4(&w->seg, (uint32_t)fields->len, &w->err);
	hw_raw(&w->seg, fields->buf, fields->len, &w->err);
	return id;
}

static uint32_t hw_objarray_at(struct hw *w, uint32_t id, uint32_t cls,
			       const uint32_t *elems, uint32_t n)
{
	hw_u1(&w->seg, 0x22, &w->err);
	hw_u4(&w->seg, id, &w->err);
	hw_u4(&w->seg, 0, &w->err);
	hw_u4(&w->seg, n, &w->err);
	hw_u4(&w->seg, cls, &w->err);
	for (uint32_t i = 0; i < n; i++)
		hw_u4(&w->seg, elems[i], &w->err);
	return id;
}

static uint32_t hw_primarray(struct hw *w, uint8_t type, const void *data,
			     uint32_t n, uint32_t elem_size)
{
	uint32_t id = hw_new_id(w);

	hw_u1(&w->seg, 0x23, &w->err);
	hw_u4(&w->seg, id, &w->err);
	hw_u4(&w->seg, 0, &w->err);
	hw_u4(&w->seg, n, &w->err);
	hw_u1(&w->seg, type, &w->err);
	if (data)
		hw_raw(&w->seg, data, (size_t)n * elem_size, &w->err);
	else
		for (size_t i = 0; i < (size_t)n * elem_size; i++)
			hw_u1(&w->seg, (uint8_t)i, &w->err);
	return id;
}

static void hw_root(struct hw *w, uint8_t kind, uint32_t id, uint32_t thread)
{
	hw_u1(&w->seg, kind, &w->err);
	hw_u4(&w->seg, id, &w->err);
	if (kind == 0x01)
		hw_u4(&w->seg, 0, &w->err);
	if (kind == 0x03 || kind == 0x08 || kind == 0x02) {
		hw_u4(&w->seg, thread, &w->err);
		hw_u4(&w->seg, 0, &w->err);
	}
}

/* Closes the heap dump and returns the file's bytes (owned by w). */
static const struct ph_buf *hw_finish(struct hw *w)
{
	struct ph_buf empty = PH_BUF_INIT(0);

	hw_record(w, 0x1C, &w->seg);
	hw_record(w, 0x2C, &empty);
	return &w->out;
}

static void hw_release(struct hw *w)
{
	ph_buf_release(&w->out);
	ph_buf_release(&w->seg);
}

#endif
