/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair.h: block_rq_issue -> block_rq_complete, one row per request.
 *
 * Requests in flight are kept by (device, sector), first in first out per
 * key: when a sector is issued again while an earlier request to it is
 * still in flight (a re-issue, or two requests queued to the same place),
 * the first completion belongs to the oldest issue, and neither request
 * overwrites the other.  Flushes carry no sector (issue prints 0, the
 * completion prints 2^64-1, both with 0 sectors), so every zero-length
 * request marked F (REQ_OP_FLUSH or REQ_PREFLUSH) shares one key per
 * device: a flush completion pairs with that device's oldest flush.
 *
 * block_rq_insert, when traced, pairs the same way with the issue that
 * follows it and gives the time spent in the I/O scheduler.
 *
 * block_rq_requeue puts the newest issue of its key back among the
 * inserts, with its submitter and insert time: the request's next issue
 * (a re-issue, often by a kworker) pairs with it, and the request makes
 * one row, its latency from the issue that completed.
 *
 * A completion whose issue was not seen (it started before tracing did)
 * still makes a row, with latency, pid, command and request_id empty:
 * the completion line's task is whoever took the interrupt, not the
 * submitter, so it is not used.  request_id counts issues from 1.
 *
 * The in-flight tables live in one open-addressed array each, sized for
 * twice what is in flight; a table that passes 65,536 entries first drops
 * entries older than a minute (their completions were lost), and never
 * holds more than PH_IOT_INFLIGHT_MAX.
 */
#ifndef PH_IOTRACE_PAIR_H
#define PH_IOTRACE_PAIR_H

#include "ph_common.h"
#include "iotrace/block_parse.h"

#define PH_IOT_INFLIGHT_MAX (1u << 20)
#define PH_IOT_STALE_NS	    ((int64_t)60 * 1000000000)

/* One finished request: what a ds row says. */
struct ph_iot_row {
	int64_t mono_ns;      /* completion time, trace clock */
	int64_t latency_ns;   /* issue -> complete, or -1 when unknown */
	int64_t queue_ns;     /* insert -> issue, or -1 when unknown */
	uint64_t sector;      /* starting sector */
	uint64_t size;	      /* bytes */
	uint64_t request_id;  /* 0 when the issue was not seen */
	uint32_t dev;	      /* major << 20 | minor */
	int32_t pid;	      /* -1 unknown; the tgid when the trace has it */
	int32_t tid;	      /* -1 unknown; the task id when pid is the tgid */
	int32_t ppid;	      /* -1 unknown; filled by the live collector */
	int32_t error;	      /* the completion's error, 0 when none */
	uint32_t cpu;	      /* the CPU that logged the completion */
	uint8_t op;	      /* enum ph_iot_op */
	uint8_t flags;	      /* PH_IOT_F_* */
	uint8_t sector_known; /* 0 for an unmatched flush's 2^64-1 */
	uint8_t comm_len;     /* 0: command unknown */
	char comm[PH_IOT_COMM_MAX];
};

/* How pairing went; the manifest's "pairing" object. */
struct ph_iot_pair_stats {
	uint64_t paired;	    /* completions matched with their issue */
	uint64_t paired_flushes;    /* of which flushes */
	uint64_t unmatched;	    /* completions with no issue seen */
	uint64_t reissued_inflight; /* issues to a key already in flight */
	uint64_t requeued;	    /* block_rq_requeue events */
	uint64_t queue_paired;	    /* issues matched with an insert */
	uint64_t negative_latency;  /* completion stamped before its issue */
	uint64_t expired_issues;    /* dropped after PH_IOT_STALE_NS */
	uint64_t expired_inserts;
	uint64_t dropped_full; /* not kept: a table was full */
	uint64_t errors;       /* completions with error != 0 */
	struct {
		int32_t code;
		uint64_t count;
	} error_codes[8];     /* the first eight distinct error values */
	uint64_t error_other; /* errors with a ninth or later value */
};

struct ph_iot_slot;

/* A FIFO-per-key table of requests; see the top of this file. */
struct ph_iot_table {
	struct ph_iot_slot *slots;
	uint32_t mask;	   /* slots - 1; slots is a power of two */
	uint32_t shift;	   /* 64 - log2(slots): a hash's top bits index */
	uint32_t count;	   /* entries */
	uint32_t sweep_at; /* count at which stale entries are dropped */
	uint32_t limit;	   /* count + 1 from which adding needs a look */
	uint64_t seq;	   /* last FIFO sequence handed out */
};

struct ph_iot_pairer {
	struct ph_iot_table issued;
	struct ph_iot_table inserted;
	struct ph_iot_pair_stats st;
};

void ph_iot_pairer_init(struct ph_iot_pairer *p);
void ph_iot_pairer_release(struct ph_iot_pairer *p);

/*
 * Takes one parsed event.  Returns 1 when it finished a request and *row
 * holds it, 0 when not, PH_ENOMEM when a table could not grow (the event
 * is then counted in dropped_full and pairing goes on).
 */
int ph_iot_pairer_feed(struct ph_iot_pairer *p, const struct ph_iot_rec *r,
		       struct ph_iot_row *row);

/* Issues still waiting for their completion. */
static inline uint64_t ph_iot_pairer_inflight(const struct ph_iot_pairer *p)
{
	return p->issued.count;
}

#endif
