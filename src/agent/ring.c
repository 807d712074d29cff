/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ring.c: the writer's ring of recent encoded events, evicted oldest
 * first by count and bytes, read by `timeline` by seq or time (ring.h).
 */
#include "ph_common.h"
#include "ring.h"
#include "ph_error.h"

int ph_ring_init(struct ph_ring *r, size_t slots, size_t bytes)
{
	memset(r, 0, sizeof(*r));
	r->ent = calloc(slots, sizeof(*r->ent));
	r->text = malloc(bytes);
	if (!r->ent || !r->text) {
		ph_ring_release(r);
		return PH_ENOMEM;
	}
	r->slots = slots;
	r->bytes = bytes;
	return 0;
}

void ph_ring_release(struct ph_ring *r)
{
	free(r->ent);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

void ph_ring_add(struct ph_ring *r, uint64_t seq, int64_t t, uint16_t kind,
		 const char *line, size_t len)
{
	struct ph_ring_entry *e;
	size_t at, first;

	if (len > r->bytes || !r->slots)
		return;
	/* Evict by count, then by bytes, oldest first. */
	if (r->tail - r->head == r->slots)
		r->head++;
	while (r->head < r->tail &&
	       r->text_end + len - r->ent[r->head % r->slots].off > r->bytes)
		r->head++;
	e = &r->ent[r->tail % r->slots];
	e->seq = seq;
	e->t = t;
	e->kind = kind;
	e->off = r->text_end;
	e->len = (uint32_t)len;
	at = (size_t)(r->text_end % r->bytes);
	first = len < r->bytes - at ? len : r->bytes - at;
	memcpy(r->text + at, line, first);
	memcpy(r->text, line + first, len - first);
	r->text_end += len;
	r->tail++;
}

size_t ph_ring_count(const struct ph_ring *r)
{
	return (size_t)(r->tail - r->head);
}

const struct ph_ring_entry *ph_ring_at(const struct ph_ring *r, size_t i)
{
	return &r->ent[(r->head + i) % r->slots];
}

uint64_t ph_ring_oldest_seq(const struct ph_ring *r, uint64_t next_seq)
{
	return r->tail > r->head ? ph_ring_at(r, 0)->seq : next_seq;
}

int ph_ring_copy(const struct ph_ring *r, const struct ph_ring_entry *e,
		 struct ph_buf *out)
{
	size_t at = (size_t)(e->off % r->bytes);
	size_t first = e->len < r->bytes - at ? e->len : r->bytes - at;
	int rc = ph_buf_add(out, r->text + at, first);

	if (!rc)
		rc = ph_buf_add(out, r->text, e->len - first);
	return rc;
}
