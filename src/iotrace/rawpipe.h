/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rawpipe.h: block events from per_cpu/cpuN/trace_pipe_raw, the binary
 * form of trace_pipe.
 *
 * Why: reading trace_pipe makes the kernel print every event as text, and
 * that printing (vsnprintf and friends, in the reader's system time) costs
 * about 3 us an event here: at 10,000 requests a second (30,000 events
 * with inserts) a tenth of a core, five times the collector's budget.
 * trace_pipe_raw hands over the ring buffer's pages as they are; decoding
 * them costs a tenth of that.  The text path stays for kernels without
 * trace_pipe_raw, and for --text.
 *
 * A page (sub-buffer), as events/header_page describes it:
 *
 *   OFFSET  SIZE  FIELD
 *   0       8     timestamp   trace clock of the page's first event
 *   8       8     commit      bytes of event data; bit 31: events were
 *                             lost before this page, bit 30: how many is
 *                             stored after the data (an unsigned long)
 *   16      ...   data        events, each 4-byte aligned
 *
 * An event (events/header_event; kernel/trace/ring_buffer.c), a 32-bit
 * word then its body:
 *
 *   type_len:5 (low bits)  time_delta:27
 *   0        data; array[0] holds its length + 4, data from array[1]
 *   1..28    data of type_len * 4 bytes, from array[0]
 *   29       padding: with a delta, array[0] is its length; without,
 *            the rest of the page is padding
 *   30       time extend: delta = array[0] << 27 | time_delta
 *   31       absolute time stamp, same encoding
 *
 * and the data of a block event is the record its format file describes
 * (events/block/EVENT/format): common_type, common_pid, then dev, sector,
 * nr_sector, bytes or error, rwbs, comm at the offsets the kernel gives.
 * The offsets are read from those files, never assumed.
 *
 * Each CPU's pages are in time order, but not across CPUs, while pairing
 * needs issue before complete: the collector gathers every CPU's events,
 * sorts them by time, and pairs only those older than a short horizon
 * (an event is stamped when reserved and visible once committed).
 */
#ifndef PH_IOTRACE_RAWPIPE_H
#define PH_IOTRACE_RAWPIPE_H

#include "ph_common.h"
#include "iotrace/block_parse.h"

struct ph_iot_tracefs;

/* Where one field of an event's record is. */
struct ph_iot_raw_field {
	int16_t off; /* -1: the event has no such field */
	int16_t size;
};

struct ph_iot_raw_event {
	int id; /* common_type, or -1 when the event is not there */
	struct ph_iot_raw_field pid, dev, sector, nr_sector, bytes, error, rwbs,
		comm;
};

struct ph_iot_raw {
	struct ph_iot_raw_event ev[PH_IOT_EV_COUNT]; /* by enum ph_iot_event */
	int commit_off, commit_size; /* from events/header_page */
	int data_off;
	size_t subbuf; /* bytes per page read */
	/* what decoding saw */
	uint64_t pages;
	uint64_t events;	/* block events decoded */
	uint64_t other_events;	/* events of other ids */
	uint64_t bad_events;	/* too short for their format */
	uint64_t bad_pages;	/* malformed event headers: rest dropped */
	uint64_t missed_pages;	/* pages that say events were lost */
	uint64_t missed_events; /* how many, where the page says */
};

/*
 * Reads the page layout and the formats of the block events (by name,
 * "block/block_rq_issue", ...) from tracefs.  Returns 0, or PH_EUNSUPP
 * with *why (trace_pipe_raw or a field the decoder needs is missing).
 */
int ph_iot_raw_init(struct ph_iot_raw *r, const struct ph_iot_tracefs *t,
		    char *why, size_t why_size);

/*
 * The same from the text of the files, for tests: header_page, and one
 * format text per event (NULL: not there).
 */
int ph_iot_raw_init_text(struct ph_iot_raw *r, const char *header_page,
			 const char *const formats[PH_IOT_EV_COUNT],
			 size_t subbuf);

typedef int (*ph_iot_raw_fn)(void *ctx, const struct ph_iot_rec *rec);

/*
 * Decodes one page read from cpu's trace_pipe_raw: every block event
 * becomes a record (tgid -1: the binary record has none) handed to fn.
 * A malformed page is counted and decoded only up to the damage.  Returns
 * 0 or the first non-zero value fn returned.
 */
int ph_iot_raw_page(struct ph_iot_raw *r, const uint8_t *page, size_t len,
		    uint32_t cpu, ph_iot_raw_fn fn, void *ctx);

#endif
