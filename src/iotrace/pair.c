/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair.c: the in-flight tables and the pairing rules of pair.h.
 *
 * Linear probing with backward-shift deletion: every entry of a key lies
 * in the run of occupied slots that starts at the key's home slot, in the
 * order they came, so the oldest entry of a key is the first one of it met
 * walking that run, and deleting never leaves a tombstone.  The runs stay
 * short: the table is at most half full.
 */
#include "ph_common.h"
#include "ph_error.h"
#include "iotrace/pair.h"

struct ph_iot_slot {
	uint64_t key;	  /* dev << 2 | flush << 1 | 1; 0 marks a free slot */
	uint64_t sector;  /* with key, what is paired on */
	uint64_t seq;	  /* FIFO order; the request_id of an issue */
	int64_t ts_ns;	  /* when it was issued (inserted) */
	int64_t queue_ns; /* issue: insert -> issue, or -1; insert: 0, or -1
			   * for a requeued request whose insert was not seen */
	uint32_t home;	  /* the slot its key hashes to */
	uint32_t bytes;
	uint32_t nr_sector;
	int32_t pid;
	int32_t tgid;
	uint8_t op;
	uint8_t flags;
	uint8_t requeued; /* insert: put back by a requeue, not reinserted */
	uint8_t comm_len;
	char comm[PH_IOT_COMM_MAX];
};

#define TABLE_MIN 256u
#define SWEEP_MIN 65536u

#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE uint32_t home(const struct ph_iot_table *t, uint64_t key,
				   uint64_t sector)
{
	/* the key rotated into the high half: dev spans bits 2-33 */
	uint64_t h = (sector ^ (key << 32 | key >> 32)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> t->shift);
}

static void table_release(struct ph_iot_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/*
 * The free slot a new entry goes to: the end of the run its home starts,
 * so entries of one key lie in the order they came, oldest nearest their
 * home (deleting keeps that order: see remove_slot()).  Counts it.
 */
static ALWAYS_INLINE struct ph_iot_slot *claim(struct ph_iot_table *t,
					       uint32_t h, uint64_t key,
					       uint64_t sector, bool *dup)
{
	uint32_t i = h;

	while (t->slots[i].key) {
		if (t->slots[i].key == key && t->slots[i].sector == sector)
			*dup = true;
		i = (i + 1) & t->mask;
	}
	t->count++;
	return &t->slots[i];
}

/* The count at which make_room() has something to do. */
static void set_limit(struct ph_iot_table *t)
{
	uint32_t half = (t->mask + 1) / 2 + 1;

	t->limit = t->sweep_at < half ? t->sweep_at : half;
	if (t->limit > PH_IOT_INFLIGHT_MAX + 1)
		t->limit = PH_IOT_INFLIGHT_MAX + 1;
}

/* Moves every entry not older than `keep_after` into a table of n slots. */
static int rebuild(struct ph_iot_table *t, uint32_t n, int64_t keep_after,
		   uint64_t *expired)
{
	struct ph_iot_slot *old = t->slots;
	uint32_t old_n = t->slots ? t->mask + 1 : 0, start = 0;
	bool dup;

	t->slots = calloc(n, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return PH_ENOMEM;
	}
	t->mask = n - 1;
	t->shift = 64 - (unsigned)__builtin_ctz(n);
	t->count = 0;
	/* from a free slot on, so each run moves in its order (one key's
	 * entries oldest first) even where it wraps past the end */
	while (start < old_n && old[start].key)
		start++;
	for (uint32_t k = 0; k < old_n; k++) {
		const struct ph_iot_slot *o = &old[(start + k) & (old_n - 1)];
		struct ph_iot_slot *s;
		uint32_t h;

		if (!o->key)
			continue;
		if (o->ts_ns < keep_after) {
			(*expired)++;
			continue;
		}
		h = home(t, o->key, o->sector);
		s = claim(t, h, o->key, o->sector, &dup);
		*s = *o;
		s->home = h;
	}
	free(old);
	set_limit(t);
	return 0;
}

/* Room for one more entry: grow, or drop what is stale, or refuse. */
static int make_room_slow(struct ph_iot_table *t, int64_t now,
			  uint64_t *expired)
{
	uint32_t n = t->slots ? t->mask + 1 : TABLE_MIN;

	if (!t->slots)
		return rebuild(t, n, INT64_MIN, expired);
	if (t->count + 1 >= t->sweep_at) {
		int rc = rebuild(t, n, now - PH_IOT_STALE_NS, expired);

		if (rc)
			return rc;
		t->sweep_at = t->count * 2 > SWEEP_MIN ? t->count * 2 :
							 SWEEP_MIN;
		set_limit(t);
	}
	if (t->count + 1 > PH_IOT_INFLIGHT_MAX)
		return PH_ETOOBIG;
	if ((t->count + 1) * 2 > n)
		return rebuild(t, n * 2, INT64_MIN, expired);
	return 0;
}

static ALWAYS_INLINE int make_room(struct ph_iot_table *t, int64_t now,
				   uint64_t *expired)
{
	/* below the limit none of make_room_slow()'s cases holds */
	if (PH_LIKELY(t->count + 1 < t->limit))
		return 0;
	return make_room_slow(t, now, expired);
}

/* The oldest entry of (key, sector): the first in its home's run. */
static ALWAYS_INLINE struct ph_iot_slot *oldest(const struct ph_iot_table *t,
						uint64_t key, uint64_t sector)
{
	uint32_t i;

	if (!t->count)
		return NULL;
	for (i = home(t, key, sector); t->slots[i].key; i = (i + 1) & t->mask)
		if (t->slots[i].key == key && t->slots[i].sector == sector)
			return &t->slots[i];
	return NULL;
}

/* The newest entry of (key, sector): the last in its home's run. */
static struct ph_iot_slot *newest(const struct ph_iot_table *t, uint64_t key,
				  uint64_t sector)
{
	struct ph_iot_slot *last = NULL;
	uint32_t i;

	if (!t->count)
		return NULL;
	for (i = home(t, key, sector); t->slots[i].key; i = (i + 1) & t->mask)
		if (t->slots[i].key == key && t->slots[i].sector == sector)
			last = &t->slots[i];
	return last;
}

/*
 * Backward-shift deletion: each entry after the hole moves back into it
 * unless its home lies between; an entry never passes one of its own key
 * (that one, nearer their common home, moved first), so their order holds.
 */
static ALWAYS_INLINE void remove_slot(struct ph_iot_table *t,
				      struct ph_iot_slot *s)
{
	uint32_t i = (uint32_t)(s - t->slots), j = i;

	for (;;) {
		uint32_t h;

		j = (j + 1) & t->mask;
		if (!t->slots[j].key)
			break;
		h = t->slots[j].home;
		/* Move j back to i unless its home lies in (i, j]. */
		if (((j - h) & t->mask) >= ((j - i) & t->mask)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].key = 0;
	t->count--;
}

void ph_iot_pairer_init(struct ph_iot_pairer *p)
{
	memset(p, 0, sizeof(*p));
	p->issued.sweep_at = SWEEP_MIN;
	p->inserted.sweep_at = SWEEP_MIN;
}

void ph_iot_pairer_release(struct ph_iot_pairer *p)
{
	table_release(&p->issued);
	table_release(&p->inserted);
}

static ALWAYS_INLINE bool is_flush(const struct ph_iot_rec *r)
{
	return r->nr_sector == 0 &&
	       (r->op == PH_IOT_OP_FLUSH || (r->flags & PH_IOT_F_PREFLUSH));
}

/* A flush's sector means nothing: all of a device's flushes share one
 * key, and sector 0. */
static ALWAYS_INLINE uint64_t key_of(const struct ph_iot_rec *r, bool flush)
{
	return (uint64_t)r->dev << 2 | (uint64_t)flush << 1 | 1;
}

static void count_error(struct ph_iot_pair_stats *st, int32_t code)
{
	st->errors++;
	for (size_t i = 0; i < PH_ARRAY_SIZE(st->error_codes); i++) {
		if (st->error_codes[i].count == 0)
			st->error_codes[i].code = code;
		if (st->error_codes[i].code == code) {
			st->error_codes[i].count++;
			return;
		}
	}
	st->error_other++;
}

static ALWAYS_INLINE int keep(struct ph_iot_pairer *p, struct ph_iot_table *t,
			      const struct ph_iot_rec *r, uint64_t key,
			      uint64_t sector, int64_t queue_ns,
			      uint64_t *expired)
{
	struct ph_iot_slot *s;
	bool dup = false;
	uint32_t h;
	int rc = make_room(t, r->ts_ns, expired);

	if (rc) {
		p->st.dropped_full++;
		return rc == PH_ENOMEM ? rc : 0;
	}
	h = home(t, key, sector);
	s = claim(t, h, key, sector, &dup);
	s->key = key;
	s->sector = sector;
	s->seq = ++t->seq;
	s->ts_ns = r->ts_ns;
	s->queue_ns = queue_ns;
	s->home = h;
	s->bytes = r->bytes;
	s->nr_sector = r->nr_sector;
	s->pid = r->pid;
	s->tgid = r->tgid;
	s->op = r->op;
	s->flags = r->flags;
	s->requeued = r->event == PH_IOT_EV_REQUEUE;
	s->comm_len = r->comm_len;
	memcpy(s->comm, r->comm, sizeof(s->comm));
	/* several flushes in flight is normal; a sector twice is not */
	if (dup && t == &p->issued && !(key & 2))
		p->st.reissued_inflight++;
	return 0;
}

int ph_iot_pairer_feed(struct ph_iot_pairer *p, const struct ph_iot_rec *r,
		       struct ph_iot_row *row)
{
	struct ph_iot_slot *s;
	int64_t queue_ns = -1;
	bool flush = is_flush(r);
	uint64_t key = key_of(r, flush), sector = flush ? 0 : r->sector;

	switch (r->event) {
	case PH_IOT_EV_INSERT:
		/* a requeued request inserted again (through the scheduler)
		 * is still its submitter's: see PH_IOT_EV_REQUEUE */
		s = p->st.requeued ? newest(&p->inserted, key, sector) : NULL;
		if (s && s->requeued) {
			s->requeued = 0;
			return 0;
		}
		return keep(p, &p->inserted, r, key, sector, 0,
			    &p->st.expired_inserts);
	case PH_IOT_EV_REQUEUE:
		/*
		 * The request goes back to its queue and will be issued again
		 * (often by a kworker, when the device has room): it leaves
		 * the issued table for the inserted one, keeping who caused
		 * it and when it was inserted, so that its next issue pairs
		 * with it as with an insert and its completion makes one
		 * row.  Kept, its first issue would take the completion and
		 * leave the second issue behind, to take the completion of
		 * the next request to that sector.  The newest issue of the
		 * key: a dispatch that finds the device full requeues the
		 * request it has just issued.
		 */
		p->st.requeued++;
		s = newest(&p->issued, key, sector);
		if (s) {
			struct ph_iot_rec back = *r;
			int64_t q = s->queue_ns;

			back.ts_ns = q >= 0 ? s->ts_ns - q : s->ts_ns;
			back.pid = s->pid;
			back.tgid = s->tgid;
			back.bytes = s->bytes;
			back.nr_sector = s->nr_sector;
			back.op = s->op;
			back.flags = s->flags;
			back.comm_len = s->comm_len;
			memcpy(back.comm, s->comm, sizeof(back.comm));
			remove_slot(&p->issued, s);
			if (q >= 0)
				p->st.queue_paired--; /* its next issue counts
						       */
			return keep(p, &p->inserted, &back, key, sector,
				    q >= 0 ? 0 : -1, &p->st.expired_inserts);
		}
		return 0;
	case PH_IOT_EV_ISSUE:
		s = oldest(&p->inserted, key, sector);
		if (s) {
			/*
			 * The insert ran in the submitter's context; the issue
			 * may not (a kworker dispatching a busy queue): the
			 * row names who caused the request.
			 */
			struct ph_iot_rec by = *r;

			if (s->queue_ns >= 0 && r->ts_ns >= s->ts_ns) {
				queue_ns = r->ts_ns - s->ts_ns;
				p->st.queue_paired++;
			}
			by.pid = s->pid;
			/* the same task: either event may carry its tgid */
			by.tgid = s->tgid >= 0 || s->pid != r->pid ? s->tgid :
								     r->tgid;
			by.comm_len = s->comm_len;
			memcpy(by.comm, s->comm, sizeof(by.comm));
			remove_slot(&p->inserted, s);
			return keep(p, &p->issued, &by, key, sector, queue_ns,
				    &p->st.expired_issues);
		}
		return keep(p, &p->issued, r, key, sector, queue_ns,
			    &p->st.expired_issues);
	case PH_IOT_EV_COMPLETE: break;
	default: return 0;
	}

	row->mono_ns = r->ts_ns;
	row->ppid = -1;
	row->error = r->has_error ? r->error : 0;
	row->cpu = r->cpu;
	row->dev = r->dev;
	if (row->error)
		count_error(&p->st, row->error);
	s = oldest(&p->issued, key, sector);
	if (!s) {
		p->st.unmatched++;
		row->latency_ns = -1;
		row->queue_ns = -1;
		row->sector = r->sector;
		row->sector_known = r->sector != UINT64_MAX;
		row->size = (uint64_t)r->nr_sector * 512;
		row->request_id = 0;
		row->pid = row->tid = -1;
		row->op = r->op;
		row->flags = r->flags;
		row->comm_len = 0;
		return 1;
	}
	p->st.paired++;
	if (key & 2)
		p->st.paired_flushes++;
	row->latency_ns = r->ts_ns - s->ts_ns;
	if (row->latency_ns < 0) {
		p->st.negative_latency++;
		row->latency_ns = -1;
	}
	row->queue_ns = s->queue_ns;
	row->sector = s->sector;
	row->sector_known = 1;
	row->size = s->bytes || !s->nr_sector ? s->bytes :
						(uint64_t)s->nr_sector * 512;
	row->request_id = s->seq;
	if (s->tgid >= 0) {
		row->pid = s->tgid;
		row->tid = s->pid;
	} else {
		row->pid = s->pid;
		row->tid = -1;
	}
	row->op = s->op;
	row->flags = s->flags;
	row->comm_len = s->comm_len;
	memcpy(row->comm, s->comm, sizeof(row->comm));
	remove_slot(&p->issued, s);
	return 1;
}
