/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rawpipe.c: trace_pipe_raw pages -> block event records; the layouts
 * are drawn in rawpipe.h.
 */
#include "ph_common.h"
#include "ph_error.h"
#include "iotrace/rawpipe.h"
#include "iotrace/tracefs.h"

#include <unistd.h>

#define TYPE_PADDING	 29
#define TYPE_TIME_EXTEND 30
#define TYPE_TIME_STAMP	 31
#define MISSED_EVENTS	 (1ull << 31)
#define MISSED_STORED	 (1ull << 30)

static const char *const event_names[PH_IOT_EV_COUNT] = {
	NULL,
	"block/block_rq_issue",
	"block/block_rq_insert",
	"block/block_rq_complete",
	"block/block_rq_requeue",
};

/* "offset:16;" -> 16, the number after key in line [p, e); -1 if none. */
static long number_after(const char *p, const char *e, const char *key)
{
	size_t k = strlen(key);
	long v = -1;

	for (; p + k <= e; p++) {
		if (memcmp(p, key, k))
			continue;
		p += k;
		if (p >= e || *p < '0' || *p > '9')
			return -1;
		for (v = 0; p < e && *p >= '0' && *p <= '9' && v < 100000; p++)
			v = v * 10 + (*p - '0');
		return v;
	}
	return -1;
}

/*
 * The field called name in a format text:
 *	"\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;"
 * The name is the declaration's last word, an array suffix removed.
 */
static struct ph_iot_raw_field field(const char *fmt, const char *name)
{
	struct ph_iot_raw_field f = { -1, 0 };
	size_t nl = strlen(name);

	for (const char *l = fmt; l && *l;) {
		const char *e = strchr(l, '\n'), *decl, *semi, *w;

		if (!e)
			e = l + strlen(l);
		decl = strstr(l, "field:");
		semi = decl && decl < e ?
			       memchr(decl, ';', (size_t)(e - decl)) :
			       NULL;
		if (semi) {
			w = semi;
			if (w > decl && w[-1] == ']')
				while (w > decl && *w != '[')
					w--;
			if ((size_t)(w - decl) > nl &&
			    !memcmp(w - nl, name, nl) &&
			    (w[-(ptrdiff_t)nl - 1] == ' ' ||
			     w[-(ptrdiff_t)nl - 1] == ':')) {
				long off = number_after(semi, e, "offset:");
				long size = number_after(semi, e, "size:");

				if (off >= 0 && size > 0 && off < 4096 &&
				    size <= 4096) {
					f.off = (int16_t)off;
					f.size = (int16_t)size;
				}
				return f;
			}
		}
		l = *e ? e + 1 : NULL;
	}
	return f;
}

static bool int_size(struct ph_iot_raw_field f)
{
	return f.off >= 0 &&
	       (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8);
}

static int event_format(struct ph_iot_raw_event *ev, int which, const char *fmt)
{
	const char *id = fmt ? strstr(fmt, "\nID: ") : NULL;

	memset(ev, 0, sizeof(*ev));
	ev->id = -1;
	if (!fmt)
		return 0;
	if (!id && !strncmp(fmt, "ID: ", 4))
		id = fmt - 1;
	if (!id)
		return PH_EUNSUPP;
	ev->id = atoi(id + 5);
	ev->pid = field(fmt, "common_pid");
	ev->dev = field(fmt, "dev");
	ev->sector = field(fmt, "sector");
	ev->nr_sector = field(fmt, "nr_sector");
	ev->bytes = field(fmt, "bytes");
	ev->error = field(fmt, "error");
	if (ev->error.off < 0)
		ev->error = field(fmt, "errors"); /* before 4.x */
	ev->rwbs = field(fmt, "rwbs");
	ev->comm = field(fmt, "comm");
	if (!int_size(ev->pid) || !int_size(ev->dev) || !int_size(ev->sector) ||
	    !int_size(ev->nr_sector) || ev->rwbs.off < 0 ||
	    (which != PH_IOT_EV_COMPLETE && ev->bytes.off >= 0 &&
	     !int_size(ev->bytes)) ||
	    (ev->error.off >= 0 && !int_size(ev->error)))
		return PH_EUNSUPP;
	return 0;
}

int ph_iot_raw_init_text(struct ph_iot_raw *r, const char *header_page,
			 const char *const formats[PH_IOT_EV_COUNT],
			 size_t subbuf)
{
	struct ph_iot_raw_field commit = field(header_page, "commit");
	struct ph_iot_raw_field data = field(header_page, "data");

	memset(r, 0, sizeof(*r));
	if (commit.off < 0 || (commit.size != 4 && commit.size != 8) ||
	    data.off < 0 || subbuf < (size_t)data.off + 8 || subbuf > 1 << 20)
		return PH_EUNSUPP;
	r->commit_off = commit.off;
	r->commit_size = commit.size;
	r->data_off = data.off;
	r->subbuf = subbuf;
	for (int e = PH_IOT_EV_ISSUE; e < PH_IOT_EV_COUNT; e++)
		if (event_format(&r->ev[e], e, formats[e]))
			return PH_EUNSUPP;
	return r->ev[PH_IOT_EV_ISSUE].id >= 0 &&
			       r->ev[PH_IOT_EV_COMPLETE].id >= 0 ?
		       0 :
		       PH_EUNSUPP;
}

int ph_iot_raw_init(struct ph_iot_raw *r, const struct ph_iot_tracefs *t,
		    char *why, size_t why_size)
{
	static char hp[4096], fmt[PH_IOT_EV_COUNT][8192];
	const char *formats[PH_IOT_EV_COUNT] = { NULL };
	char rel[128];
	size_t subbuf = (size_t)sysconf(_SC_PAGESIZE);
	int rc;

	if (!ph_iot_tracefs_has(t, "per_cpu/cpu0/trace_pipe_raw") ||
	    ph_iot_tracefs_read(t, "events/header_page", hp, sizeof(hp))) {
		snprintf(why, why_size,
			 "no per_cpu/cpu0/trace_pipe_raw or "
			 "events/header_page");
		return PH_EUNSUPP;
	}
	if (!ph_iot_tracefs_read(t, "buffer_subbuf_size_kb", rel,
				 sizeof(rel)) &&
	    atoi(rel) > 0)
		subbuf = (size_t)atoi(rel) * 1024;
	for (int e = PH_IOT_EV_ISSUE; e < PH_IOT_EV_COUNT; e++) {
		snprintf(rel, sizeof(rel), "events/%s/format", event_names[e]);
		if (!ph_iot_tracefs_read(t, rel, fmt[e], sizeof(fmt[e])))
			formats[e] = fmt[e];
	}
	rc = ph_iot_raw_init_text(r, hp, formats, subbuf);
	if (rc)
		snprintf(why, why_size,
			 "the block events' binary format is "
			 "not one this decoder reads");
	return rc;
}

static uint64_t get(const uint8_t *d, struct ph_iot_raw_field f)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (f.size) {
	case 1: memcpy(&u8, d + f.off, 1); return u8;
	case 2: memcpy(&u16, d + f.off, 2); return u16;
	case 4: memcpy(&u32, d + f.off, 4); return u32;
	default: memcpy(&u64, d + f.off, 8); return u64;
	}
}

static bool fits(struct ph_iot_raw_field f, size_t n)
{
	return f.off < 0 || (size_t)f.off + (size_t)f.size <= n;
}

static int decode(struct ph_iot_raw *r, const uint8_t *d, size_t n, int64_t ts,
		  uint32_t cpu, ph_iot_raw_fn fn, void *ctx)
{
	const struct ph_iot_raw_event *ev = NULL;
	struct ph_iot_rec rec;
	uint16_t type;
	int which = 0;

	if (n < 2) {
		r->bad_events++;
		return 0;
	}
	memcpy(&type, d, 2);
	for (int e = PH_IOT_EV_ISSUE; e < PH_IOT_EV_COUNT; e++)
		if (r->ev[e].id == (int)type) {
			ev = &r->ev[e];
			which = e;
		}
	if (!ev) {
		r->other_events++;
		return 0;
	}
	if (!fits(ev->pid, n) || !fits(ev->dev, n) || !fits(ev->sector, n) ||
	    !fits(ev->nr_sector, n) || !fits(ev->bytes, n) ||
	    !fits(ev->error, n) || !fits(ev->rwbs, n) || !fits(ev->comm, n)) {
		r->bad_events++;
		return 0;
	}
	memset(&rec, 0, sizeof(rec));
	rec.event = (uint8_t)which;
	rec.ts_ns = ts;
	rec.cpu = cpu;
	rec.pid = (int32_t)get(d, ev->pid);
	rec.tgid = -1;
	rec.dev = (uint32_t)get(d, ev->dev);
	rec.sector = get(d, ev->sector);
	rec.nr_sector = (uint32_t)get(d, ev->nr_sector);
	if (which != PH_IOT_EV_COMPLETE && ev->bytes.off >= 0)
		rec.bytes = (uint32_t)get(d, ev->bytes);
	if (which == PH_IOT_EV_COMPLETE && ev->error.off >= 0) {
		rec.has_error = 1;
		rec.error = (int32_t)get(d, ev->error);
	}
	if (!ph_iot_rwbs_decode((const char *)d + ev->rwbs.off,
				strnlen((const char *)d + ev->rwbs.off,
					(size_t)ev->rwbs.size),
				&rec.op, &rec.flags, &rec.unknown_rwbs)) {
		r->bad_events++;
		return 0;
	}
	if (ev->comm.off >= 0 && which != PH_IOT_EV_COMPLETE) {
		size_t k = strnlen((const char *)d + ev->comm.off,
				   (size_t)ev->comm.size);

		rec.comm_len =
			(uint8_t)(k < PH_IOT_COMM_MAX ? k : PH_IOT_COMM_MAX);
		memcpy(rec.comm, d + ev->comm.off, rec.comm_len);
	}
	r->events++;
	return fn(ctx, &rec);
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int ph_iot_raw_page(struct ph_iot_raw *r, const uint8_t *page, size_t len,
		    uint32_t cpu, ph_iot_raw_fn fn, void *ctx)
{
	uint64_t ts, commit = 0, size;
	size_t p, end;
	int rc;

	if (len < (size_t)r->data_off) {
		r->bad_pages++;
		return 0;
	}
	r->pages++;
	memcpy(&ts, page, 8);
	if (r->commit_size == 8) {
		memcpy(&commit, page + r->commit_off, 8);
	} else {
		uint32_t c32;

		memcpy(&c32, page + r->commit_off, 4);
		commit = c32;
	}
	size = commit & ~(MISSED_EVENTS | MISSED_STORED) & 0xffffffffull;
	if (commit & MISSED_EVENTS) {
		r->missed_pages++;
		if ((commit & MISSED_STORED) &&
		    (size_t)r->data_off + size + sizeof(unsigned long) <= len) {
			unsigned long missed;

			memcpy(&missed, page + r->data_off + size,
			       sizeof(missed));
			r->missed_events += missed;
		}
	}
	if (size > len - (size_t)r->data_off) {
		r->bad_pages++;
		size = len - (size_t)r->data_off;
	}
	p = (size_t)r->data_off;
	end = p + size;
	while (end - p >= 4) {
		uint32_t h = u32_at(page + p);
		uint32_t type = h & 31, delta = h >> 5;
		size_t data, n, next;

		switch (type) {
		case TYPE_PADDING:
			if (!delta || end - p < 8)
				return 0; /* the rest of the page */
			ts += delta;
			next = p + 4 + (size_t)u32_at(page + p + 4);
			data = n = 0;
			break;
		case TYPE_TIME_EXTEND:
		case TYPE_TIME_STAMP:
			if (end - p < 8)
				goto bad;
			if (type == TYPE_TIME_EXTEND)
				ts += (uint64_t)u32_at(page + p + 4) << 27 |
				      delta;
			else
				ts = (uint64_t)u32_at(page + p + 4) << 27 |
				     delta;
			next = p + 8;
			data = n = 0;
			break;
		case 0:
			if (end - p < 8 || u32_at(page + p + 4) < 4)
				goto bad;
			ts += delta;
			data = p + 8;
			n = ((size_t)u32_at(page + p + 4) - 4 + 3) & ~(size_t)3;
			next = data + n;
			break;
		default:
			ts += delta;
			data = p + 4;
			n = (size_t)type * 4;
			next = data + n;
			break;
		}
		if (next > end || next <= p)
			goto bad;
		if (n &&
		    (rc = decode(r, page + data, n, (int64_t)ts, cpu, fn, ctx)))
			return rc;
		p = next;
	}
	return 0;
bad:
	r->bad_pages++;
	return 0;
}
