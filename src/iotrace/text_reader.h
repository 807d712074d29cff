/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text_reader.h: ftrace text in, finished requests out.
 *
 * The text reader splits text into lines (no copy unless a line spans two
 * feeds), parses each with block_parse -- plain ftrace text many lines at
 * a time by ph_iot_parse_lines(), which finds the newlines itself and
 * remembers recent line shapes in `lines` -- pairs with pair, and hands
 * every finished request to the caller's emit function.  It reads the
 * three kinds of text the kernel and Android tools write:
 *
 *  - tracefs `trace_pipe` output: event lines, and "CPU:N [LOST M EVENTS]"
 *    when the ring buffer overflowed;
 *  - tracefs `trace` output: the same after a "# ..." header whose
 *    "entries-in-buffer/entries-written: A/B" line tells how many events
 *    the buffer overwrote;
 *  - a systrace HTML file: only the lines inside its
 *    <script class="trace-data" type="application/text"> blocks are read.
 *
 * Nothing in the input is fatal: every line is counted as exactly one of
 * blank, comment, lost-marker, html, block, malformed (by reason), other
 * event, or unknown, and the counts land in the manifest.
 */
#ifndef PH_IOTRACE_TEXT_READER_H
#define PH_IOTRACE_TEXT_READER_H

#include "ph_common.h"
#include "ph_buf.h"
#include "iotrace/block_parse.h"
#include "iotrace/pair.h"

/* The longest line kept across two feeds; longer ones are dropped. */
#define PH_IOT_LINE_MAX (64 * 1024)

/* The first rejected lines kept with where they are (the rest counted). */
#define PH_IOT_BAD_KEPT 5

/* ph_iot_line_at.why beyond enum ph_iot_bad */
#define PH_IOT_AT_NOT_EVENT   PH_IOT_BAD_COUNT	     /* not ftrace at all */
#define PH_IOT_AT_OTHER_EVENT (PH_IOT_BAD_COUNT + 1) /* another event */

/* Where a line is, for a person to find it in the input. */
struct ph_iot_line_at {
	uint64_t line;	 /* 1-based, within its input */
	uint64_t offset; /* of its first byte, within its input (after
			  * decompression) */
	uint32_t input;	 /* which input, counting end_input() calls */
	uint8_t why;	 /* enum ph_iot_bad, or PH_IOT_AT_* */
};

struct ph_iot_parse_stats {
	uint64_t bytes;
	uint64_t lines;
	uint64_t blank;
	uint64_t comments;
	uint64_t html;	       /* systrace HTML outside the trace data */
	uint64_t other_events; /* ftrace lines of events we do not read */
	uint64_t unknown;      /* lines that are not ftrace events at all */
	uint64_t block[PH_IOT_EV_COUNT]; /* by enum ph_iot_event */
	uint64_t malformed; /* block_rq_* lines that did not parse */
	uint64_t bad[PH_IOT_BAD_COUNT]; /* malformed, by reason */
	uint64_t too_long;	  /* lines over PH_IOT_LINE_MAX, dropped */
	uint64_t rwbs_unknown;	  /* rwbs letters we do not know (lines kept) */
	uint64_t lost_markers;	  /* "CPU:N [LOST M EVENTS]" lines */
	uint64_t lost_events;	  /* the sum of their M */
	int64_t header_in_buffer; /* from a `trace` header, or -1 */
	int64_t header_written;	  /* likewise */
	int64_t first_ns;	  /* first block event's timestamp, or -1 */
	int64_t last_ns;	  /* last block event's timestamp, or -1 */
	struct ph_iot_line_at bad_at[PH_IOT_BAD_KEPT]; /* first malformed */
	uint32_t n_bad_at;
	/* an input's last line that had no newline and did not parse: most
	 * likely cut off mid-write (a torn copy, a full disk) */
	bool torn;
	struct ph_iot_line_at torn_at;
	/* The first line that is not an ftrace event (line 0: none yet); a
	 * caller that asks per input clears it before feeding the next. */
	struct ph_iot_line_at not_ftrace_at;
};

struct ph_iot_text_reader;

/*
 * Receives each finished request; returning non-zero stops the reader
 * (the value comes back from feed and finish).
 */
typedef int (*ph_iot_emit_fn)(void *ctx, struct ph_iot_row *row);

struct ph_iot_text_reader {
	struct ph_iot_pairer pair;
	struct ph_iot_lines lines; /* the parser's memory of line shapes */
	struct ph_iot_parse_stats st;
	ph_iot_emit_fn emit;
	void *emit_ctx;
	int err;       /* the first non-zero emit result */
	uint8_t html;  /* enum in text_reader.c: where in a systrace file */
	bool dropping; /* inside a line longer than PH_IOT_LINE_MAX */
	struct ph_buf partial; /* a line split across feeds */
	/* where lines are, for ph_iot_line_at */
	const char *feed; /* the buffer being fed */
	size_t feed_len;
	uint64_t feed_off;     /* its first byte's offset in the input */
	uint64_t partial_off;  /* partial's first byte's offset */
	uint64_t input_bytes;  /* fed so far of this input */
	uint64_t input_lines0; /* st.lines when this input began */
	uint32_t input;	       /* inputs ended so far */
	uint8_t last_why;      /* the last malformed line's enum ph_iot_bad */
};

void ph_iot_text_reader_init(struct ph_iot_text_reader *s, ph_iot_emit_fn emit,
			     void *ctx);
void ph_iot_text_reader_release(struct ph_iot_text_reader *s);

/*
 * Reads buf[0..len): every complete line now, the incomplete last one when
 * the next feed or ph_iot_text_reader_end_input() completes it.  Returns 0, or
 * the first non-zero value emit returned (the reader then stays stopped),
 * or PH_ENOMEM.
 */
int ph_iot_text_reader_feed(struct ph_iot_text_reader *s, const char *buf,
			    size_t len);

/*
 * One input ends: a last line without a newline is read, and the next
 * feed starts a new input (which may be HTML while this one was not).
 * Pairing state carries over, so consecutive pieces of one capture pair
 * across files.
 */
int ph_iot_text_reader_end_input(struct ph_iot_text_reader *s);

/*
 * One block event that did not come from text (the binary trace_pipe_raw
 * reader): counted, paired, and its row emitted, as a parsed line would
 * be.  Events must come in time order.  Returns 0 or emit's error.
 */
int ph_iot_text_reader_record(struct ph_iot_text_reader *s,
			      const struct ph_iot_rec *rec);

/*
 * The first systrace clock marker in buf, "trace_event_clock_sync:
 * realtime_ts=MS" on a line stamped T: sets *offset_ns to MS*1e6 - T and
 * returns true.
 */
bool ph_iot_find_clock_sync(const char *buf, size_t len, int64_t *offset_ns);

#endif
