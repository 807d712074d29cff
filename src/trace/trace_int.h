/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_int.h: state shared by the trace engine's own files, not by its
 * users.  The hash map, the per-track slice stacks and the per-CPU and
 * per-thread scheduling state of ph_trace_finish().
 */
#ifndef PH_TRACE_INT_H
#define PH_TRACE_INT_H

#include "ph_common.h"

struct ph_intmap;
struct ph_intmap *ph_intmap_new(void);
void ph_intmap_free(struct ph_intmap *m);
/* true and *val when key is present */
bool ph_intmap_get(const struct ph_intmap *m, uint64_t key, uint32_t *val);
int ph_intmap_put(struct ph_intmap *m, uint64_t key, uint32_t val);
/* key reads back as UINT32_MAX - 1 ("gone") afterwards */
void ph_intmap_del(struct ph_intmap *m, uint64_t key);

/* Open slices of one track, innermost last. */
struct ph_stack {
	int64_t *rows;
	size_t n, cap;
};

/* One clock snapshot: the same instant on every clock it names. */
#define PH_NCLK 7
struct ph_snap {
	int64_t clk[PH_NCLK]; /* by builtin clock id; PH_NULL_I64 absent */
};

/*
 * tid -> utid for tids below PH_TID_DIRECT (Linux's PID_MAX_LIMIT), read
 * twice per sched_switch: a directory of pages of PH_TID_PAGE entries,
 * utid + 1 each, 0 for none; a page exists once a tid in it was seen, so
 * memory follows the tids in use.  Other tids (a hostile trace's) go
 * through ph_trace.tid_utid.
 */
#define PH_TID_DIRECT (1u << 22)
#define PH_TID_PAGE   1024u

struct ph_trace_priv {
	uint32_t **tid_dir; /* PH_TID_DIRECT / PH_TID_PAGE pages, or NULL */
	struct ph_stack *stacks; /* by track id */
	size_t nstacks;
	int64_t *cpu_sched; /* open sched row per CPU, -1 none */
	int64_t *cpu_utid;
	uint8_t *cpu_seen;
	size_t ncpu;
	int64_t *ts_open; /* open thread_state row per utid, -1 none */
	size_t nts_open;
	struct ph_intmap *async_open;	/* (upid, name, cookie) -> slice */
	struct ph_intmap *frame_cookie; /* cookie -> frame row | table bit */
	struct ph_intmap *stat_ids;	/* stat name id -> stats row */
	struct ph_snap *snaps;
	size_t nsnaps, snapcap;
	uint32_t kind_ids[5];
	const char *stat_key[256]; /* ph_trace_stat cache by name pointer */
	uint32_t stat_row[256];
	bool have_waking; /* sched_waking seen: sched_wakeup is redundant */
};

/* The live thread of tid, or -1 when the direct table does not know it. */
static inline int64_t ph_utid_known(const struct ph_trace_priv *pv, int64_t tid)
{
	const uint32_t *pg;

	if ((uint64_t)tid >= PH_TID_DIRECT || !pv->tid_dir ||
	    !(pg = pv->tid_dir[(uint64_t)tid / PH_TID_PAGE]))
		return -1;
	return (int64_t)pg[(uint64_t)tid % PH_TID_PAGE] - 1;
}

#endif
