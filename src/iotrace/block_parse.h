/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block_parse.h: one line of ftrace text -> one block request event.
 *
 * The line format (kernel/trace/trace_output.c, trace_print_context(), and
 * include/trace/events/block.h; SQLite's btreeInt.h habit of drawing the
 * format above the code that reads it):
 *
 *   FIELD      EXAMPLE            NOTES
 *   comm       "      <idle>"     %16s, right-aligned; may hold '-', ' ',
 *                                 ':' and brackets, so it is found last
 *   '-' pid    "-0      "         %-7d (%-5d on older kernels)
 *   tgid       "(   1977) "       only with options/record-tgid; "(-------)"
 *                                 when unknown
 *   cpu        "[001] "           %03d
 *   flags      "d.s1. "           4 (older kernels, Android) or 5 chars;
 *                                 absent when options/irq-info is off
 *   timestamp  "  1969.415749: "  %5llu.%06lu for nanosecond clocks
 *   event      "block_rq_issue: "
 *   body       see below
 *
 * Bodies (TP_printk of the block_rq_* events):
 *
 *   issue, insert  MAJ,MIN RWBS BYTES (CMD) SECTOR + NR_SECTOR [IOPRIO] [COMM]
 *   complete       MAJ,MIN RWBS (CMD) SECTOR + NR_SECTOR [IOPRIO] [[ERROR]]
 *
 *   6.x:   254,0 RA 16384 () 13095728 + 32 be,0,4 [dd]
 *          254,0 RA () 13095728 + 32 be,0,4 [0]
 *   older: 8,0 R 4096 () 97045376 + 8 [pool-2-thread-3]
 *          8,0 R () 97045376 + 8 [0]
 *
 * IOPRIO ("be,0,4", "none,0,0") appeared in 6.x; ERROR is absent on some
 * kernels.  CMD is empty except for passthrough requests, where it holds
 * hex bytes separated by spaces.  A flush prints sector 0 on issue and the
 * kernel's "no sector" value 2^64-1 on completion, both with 0 sectors.
 *
 * RWBS (block/blk-core.c, blk_fill_rwbs()): an optional leading 'F' for
 * REQ_PREFLUSH, one operation letter (R read, W write, F flush, D discard,
 * DE secure erase, N anything else), then F (FUA), A (readahead), S (sync),
 * M (meta) in that order.  Kernels before 4.8 add E (secure) and B
 * (barrier) the same way.
 *
 * The parser is the hot loop of `porthole iotrace`: no allocation, no
 * sscanf, no locale; the header is read right to left from the timestamp,
 * so a comm full of dashes and brackets cannot confuse it.
 */
#ifndef PH_IOTRACE_BLOCK_PARSE_H
#define PH_IOTRACE_BLOCK_PARSE_H

#include "ph_common.h"

enum ph_iot_event {
	PH_IOT_EV_ISSUE = 1,
	PH_IOT_EV_INSERT,
	PH_IOT_EV_COMPLETE,
	/* the request went back to its queue: its next issue is a re-issue */
	PH_IOT_EV_REQUEUE,
	PH_IOT_EV_COUNT
};

/* The base operation; the order is the column value table's order. */
enum ph_iot_op {
	PH_IOT_OP_READ,
	PH_IOT_OP_WRITE,
	PH_IOT_OP_FLUSH,
	PH_IOT_OP_DISCARD,
	PH_IOT_OP_SECURE_ERASE,
	PH_IOT_OP_NONE,
	PH_IOT_OP_COUNT
};

/* rwbs sub-flags, in the order blk_fill_rwbs() prints them. */
enum {
	PH_IOT_F_PREFLUSH = 1 << 0,
	PH_IOT_F_FUA = 1 << 1,
	PH_IOT_F_AHEAD = 1 << 2,
	PH_IOT_F_SYNC = 1 << 3,
	PH_IOT_F_META = 1 << 4,
	PH_IOT_F_SECURE = 1 << 5,  /* pre-4.8 'E' after another op */
	PH_IOT_F_BARRIER = 1 << 6, /* pre-2.6.36 'B' */
	PH_IOT_F_COUNT = 7
};

/* The longest comm a kernel prints (TASK_COMM_LEN - 1 is 15). */
#define PH_IOT_COMM_MAX 16

/* What a parsed block_rq_* line says.  Only the fields of its event. */
struct ph_iot_rec {
	int64_t ts_ns;	      /* timestamp, nanoseconds of the trace clock */
	uint64_t sector;      /* starting sector, 512-byte units */
	uint32_t dev;	      /* major << 20 | minor, the kernel's dev_t */
	uint32_t nr_sector;   /* sectors */
	uint32_t bytes;	      /* issue and insert only */
	int32_t pid;	      /* the task (thread) id of the header */
	int32_t tgid;	      /* the tgid column; -1 absent or unknown */
	int32_t error;	      /* complete only; valid when has_error */
	uint32_t cpu;	      /* the header's CPU */
	uint8_t event;	      /* enum ph_iot_event */
	uint8_t op;	      /* enum ph_iot_op */
	uint8_t flags;	      /* PH_IOT_F_* */
	uint8_t has_error;    /* the complete line carried [ERROR] */
	uint8_t unknown_rwbs; /* letters in rwbs we do not know (kept) */
	uint8_t comm_len;     /* bytes in comm */
	char comm[PH_IOT_COMM_MAX]; /* issue/insert: the event's [COMM] */
};

/* Why a line that names a block_rq_* event was rejected. */
enum ph_iot_bad {
	PH_IOT_BAD_HEADER,    /* no comm-pid [cpu] before the timestamp */
	PH_IOT_BAD_TIMESTAMP, /* not SECONDS.FRACTION, or out of range */
	PH_IOT_BAD_DEVICE,    /* not MAJ,MIN within dev_t */
	PH_IOT_BAD_RWBS,      /* empty, too long, or no operation letter */
	PH_IOT_BAD_BYTES,
	PH_IOT_BAD_CMD,	   /* no "(...)" */
	PH_IOT_BAD_SECTOR, /* not "SECTOR + NR_SECTOR" */
	PH_IOT_BAD_IOPRIO,
	PH_IOT_BAD_COMM,     /* missing, unterminated or longer than 16 */
	PH_IOT_BAD_ERROR,    /* "[ERROR]" not a 32-bit integer */
	PH_IOT_BAD_TRAILING, /* bytes after the last field */
	PH_IOT_BAD_COUNT
};

/* The manifest's name for a reason: "bad_header", ... */
const char *ph_iot_bad_name(enum ph_iot_bad why);

/* What a line is, as far as the block parser is concerned. */
enum ph_iot_line {
	PH_IOT_LINE_BLOCK,     /* a block_rq_{issue,insert,complete}: *rec */
	PH_IOT_LINE_MALFORMED, /* it names one but does not parse: *why */
	PH_IOT_LINE_OTHER,     /* an ftrace line of another event */
	PH_IOT_LINE_UNKNOWN,   /* no "TIMESTAMP: EVENT:" in it at all */
};

/*
 * Classifies and, for the three block events, parses line[0..len) (no
 * newline).  Never reads outside the line.  Returns PH_IOT_LINE_BLOCK with
 * *rec filled, PH_IOT_LINE_MALFORMED with *why set, or one of the others;
 * for PH_IOT_LINE_OTHER the header fields (ts_ns, pid, tgid, cpu) are
 * filled too.
 */
enum ph_iot_line ph_iot_parse_line(const char *line, size_t len,
				   struct ph_iot_rec *rec,
				   enum ph_iot_bad *why);

/*
 * ph_iot_parse_line() without the fixed-offset fast path for the kernel's
 * own layout: the general reader alone.  For tests and the fuzz target,
 * which check that the two always agree.
 */
enum ph_iot_line ph_iot_parse_line_general(const char *line, size_t len,
					   struct ph_iot_rec *rec,
					   enum ph_iot_bad *why);

/* One line as ph_iot_parse_lines() read it. */
struct ph_iot_parsed {
	struct ph_iot_rec rec; /* what ph_iot_parse_line() filled */
	const char *line;      /* the line, in the buffer */
	size_t len;	       /* its bytes, without the newline */
	uint8_t kind;	       /* enum ph_iot_line */
	uint8_t why;	       /* enum ph_iot_bad, when kind is MALFORMED */
};

/* Numbers a line shape records where to find. */
#define PH_IOT_SHAPE_LANES 12

/*
 * The shape of a block line the fast path read whole: where its digits
 * are, its other bytes, and where each number is.  A later line of the
 * same shape differs only in its digits' values, so it is read by
 * converting its numbers at those places (block_lines.c, "Shapes").  The
 * parser's own: nothing in it is for callers.
 */
struct ph_iot_shape {
	uint64_t digit[2];  /* digit masks, cut after the newline */
	uint8_t canon[128]; /* the bytes, each digit made 0xff */
	uint64_t keep[PH_IOT_SHAPE_LANES]; /* each number's digits in ... */
	uint8_t at[PH_IOT_SHAPE_LANES];	   /* ... the 8 bytes from here */
	struct ph_iot_rec rec;		   /* the fields that are not numbers */
	uint8_t len;	 /* bytes with the newline; 0: unused */
	uint8_t comm_at; /* where [COMM]'s bytes start */
	uint8_t neg;	 /* the error is negative */
	uint8_t ok;	 /* the mask reader took it whole */
	uint8_t wide;	 /* a number it records has over 8 digits */
};

#define PH_IOT_SHAPE_BITS 4
#define PH_IOT_SHAPES	  (1 << PH_IOT_SHAPE_BITS)

/* What ph_iot_parse_lines() keeps from one call to the next. */
struct ph_iot_lines {
	struct ph_iot_shape shape[PH_IOT_SHAPES];
};

void ph_iot_lines_init(struct ph_iot_lines *l);

/*
 * ph_iot_parse_line() over the complete lines at the start of buf[0..len),
 * as many as out[0..max) holds (with SIMD, the newlines are found in the
 * same pass that classifies the bytes).  Stops before a line the text reader
 * reads itself (an empty one, or one starting with '#' or 'C') and before one
 * with no newline in buf.  Returns how many lines it read; *used is the bytes
 * they took, newlines included.  Each out[i] is what ph_iot_parse_line() says
 * of that line, whichever instruction set reads it; l remembers the
 * shapes of recent lines, which makes the next ones of the same shapes
 * cheaper to read, never different.
 */
size_t ph_iot_parse_lines(struct ph_iot_lines *l, const char *buf, size_t len,
			  struct ph_iot_parsed *out, size_t max, size_t *used);

/* How ph_iot_parse_lines() reads: the instruction set it classifies with. */
enum ph_iot_isa {
	PH_IOT_ISA_PORTABLE, /* a line at a time, ph_iot_parse_line() */
	PH_IOT_ISA_BASE,     /* SSE2 (x86-64) or NEON (arm64) and shapes;
				else PORTABLE's */
	PH_IOT_ISA_AVX2,     /* AVX2 and BMI2, chosen when the CPU has them */
};

/* The set in use: the best the CPU has, unless a test chose another. */
enum ph_iot_isa ph_iot_parse_isa(void);

/*
 * For tests and the bench: use isa from now on, process-wide.  False, and
 * nothing changes, when the CPU or the build lacks it.
 */
bool ph_iot_parse_set_isa(enum ph_iot_isa isa);

/*
 * Whether the masks of newlines, digits, spaces and colons of p[0..128),
 * its bytes with digits made 0xff, and which of those equal q[0..128),
 * are the same by every instruction set this CPU has.  For tests.
 */
bool ph_iot_classify128_agree(const char *p, const char *q);

/*
 * Whether the portable classification of p[0..n) (16 <= n <= 64) into
 * digit, space and colon masks agrees with the SIMD one the parser uses
 * (true when there is none).  For tests: the portable one is the parser's
 * on machines without SSE2.
 */
bool ph_iot_classify_agree(const char *p, size_t n);

/*
 * Decodes an rwbs string.  Returns false when it names no operation (empty,
 * or an unknown first letter); unknown later letters are counted in
 * *unknown and otherwise ignored, so a future kernel's new flag letter does
 * not drop its lines.
 */
bool ph_iot_rwbs_decode(const char *s, size_t n, uint8_t *op, uint8_t *flags,
			uint8_t *unknown);

/* "read", "write", "flush", "discard", "secure_erase", "none". */
const char *ph_iot_op_name(unsigned op);

/*
 * Writes the sub-flags as "preflush|fua|sync" (empty for none) into buf,
 * which must hold 64 bytes; returns the length.
 */
size_t ph_iot_flags_format(unsigned flags, char *buf);

static inline unsigned ph_iot_dev_major(uint32_t dev)
{
	return dev >> 20;
}

static inline unsigned ph_iot_dev_minor(uint32_t dev)
{
	return dev & ((1u << 20) - 1);
}

#endif
