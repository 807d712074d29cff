/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ring.h: the most recent events, encoded, for clients that arrive late.
 *
 * The writer thread appends every event's JSON line here (and only the
 * writer touches the ring, so it has no lock).  It keeps at most `slots`
 * events and `bytes` bytes of text, evicting the oldest first.  A
 * `timeline` request reads it by seq cursor or by time window.
 */
#ifndef PH_AGENT_RING_H
#define PH_AGENT_RING_H

#include "ph_common.h"
#include "ph_buf.h"

struct ph_ring_entry {
	uint64_t seq;
	int64_t t;
	uint64_t off; /* absolute byte offset of the line in the text stream */
	uint32_t len; /* bytes, without the newline */
	uint16_t kind;
};

struct ph_ring {
	struct ph_ring_entry *ent;
	size_t slots;	   /* capacity in events */
	uint64_t head;	   /* index of the oldest event (absolute) */
	uint64_t tail;	   /* one past the newest (absolute) */
	char *text;	   /* the lines, wrapping */
	size_t bytes;	   /* capacity of text */
	uint64_t text_end; /* absolute offset one past the newest line */
};

int ph_ring_init(struct ph_ring *r, size_t slots, size_t bytes) PH_WUR;
void ph_ring_release(struct ph_ring *r);
/* Appends one line (no newline); a line longer than the text is refused. */
void ph_ring_add(struct ph_ring *r, uint64_t seq, int64_t t, uint16_t kind,
		 const char *line, size_t len);
size_t ph_ring_count(const struct ph_ring *r);
/* The i-th oldest entry still held (i < count). */
const struct ph_ring_entry *ph_ring_at(const struct ph_ring *r, size_t i);
/* The seq of the oldest event held, or the next seq when empty. */
uint64_t ph_ring_oldest_seq(const struct ph_ring *r, uint64_t next_seq);
/* Appends the entry's line to out. */
int ph_ring_copy(const struct ph_ring *r, const struct ph_ring_entry *e,
		 struct ph_buf *out) PH_WUR;

#endif
