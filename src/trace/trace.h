/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace.h: the trace engine's model.  A system trace (Perfetto protobuf or
 * ftrace text) is decoded into columnar in-memory tables named and shaped
 * like Perfetto trace_processor's, which trace_sql.c exposes to SQLite as
 * virtual tables.
 *
 * Invariants, once loading has finished (ph_trace_finish()):
 *  - every table's row i has id i; ids never change and are never reused;
 *  - string columns hold ids into the trace's string table; id 0 is NULL,
 *    every other id names a NUL-terminated string that lives as long as the
 *    trace;
 *  - an integer column's NULL is PH_NULL_I64 / PH_NULL_I32;
 *  - every timestamp is in nanoseconds on the trace clock (BOOTTIME for a
 *    Perfetto trace unless its snapshots said otherwise; the recorded
 *    trace_clock for ftrace text), named by ph_trace.clock_name;
 *  - slices of one track are properly nested: depth = parent's depth + 1,
 *    a slice still open at the end has dur -1;
 *  - thread_state rows of one thread never overlap.
 *
 * Decoders do not build rows directly: they push fixed-size events
 * (struct ph_tev) which ph_trace_finish() sorts by time (stable) and runs
 * through the state machines (scheduling, atrace, track events), the way
 * the field's trace processor sorts before it parses.  Per-CPU ftrace
 * bundles arrive out of global order, so that is needed for correctness.
 *
 * Hostile input: decoders never fail on a malformed record; they count it
 * (ph_trace_stat) and go on.  Only a structurally broken container (a
 * truncated packet, bad gzip) stops a decoder, which then records the byte
 * offset in ph_trace.err and returns PH_ECORRUPT with everything before it
 * loaded.
 */
#ifndef PH_TRACE_H
#define PH_TRACE_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_buf.h"
#include "ph_error.h"

#define PH_NULL_I64 INT64_MIN
#define PH_NULL_I32 INT32_MIN

enum ph_col_type {
	PH_COL_ID,  /* the row index; no storage */
	PH_COL_I64, /* int64_t */
	PH_COL_I32, /* int32_t */
	PH_COL_F64, /* double */
	PH_COL_STR, /* uint32_t string id, 0 = NULL */
};

struct ph_colspec {
	const char *name;
	uint8_t type; /* enum ph_col_type */
};

/* One columnar table.  Columns are parallel arrays with rows entries. */
struct ph_table {
	const char *name;
	const struct ph_colspec *spec;
	uint32_t ncols;
	size_t rows;
	size_t filled; /* rows [rows, filled) hold NULLs already */
	size_t cap;    /* rows allocated; past filled, untouched */
	void **data;   /* data[c]: the array of column c, NULL for PH_COL_ID */
	size_t *bytes; /* bytes[c]: data[c]'s size, for ph_trace_big_free */
};

/* Table indices in ph_trace.tables. */
enum ph_tab {
	PH_T_PROCESS,
	PH_T_THREAD,
	PH_T_TRACK,
	PH_T_SLICE,
	PH_T_SCHED,
	PH_T_TSTATE,
	PH_T_COUNTER,
	PH_T_AFRAME,
	PH_T_EFRAME,
	PH_T_LOG,
	PH_T_STATS,
	PH_T_META,
	PH_T_CLOCKSNAP,
	PH_T_INSTANT,
	PH_T_SAMPLE,
	PH_T_COUNT
};

/* Columns, per table (ids first, the order of the schema in trace_model.c). */
enum {
	P_ID,
	P_UPID,
	P_PID,
	P_NAME,
	P_CMDLINE,
	P_PARENT,
	P_UID,
	P_START,
	P_END
};
enum { TH_ID, TH_UTID, TH_TID, TH_NAME, TH_UPID, TH_MAIN, TH_START, TH_END };
enum { TR_ID, TR_NAME, TR_KIND, TR_UTID, TR_UPID, TR_CPU, TR_UUID };
enum {
	SL_ID,
	SL_TS,
	SL_DUR,
	SL_TRACK,
	SL_CAT,
	SL_NAME,
	SL_DEPTH,
	SL_PARENT,
	SL_COOKIE
};
enum { SC_ID, SC_TS, SC_DUR, SC_CPU, SC_UTID, SC_END_STATE, SC_PRIO };
enum {
	TS_ID,
	TS_TS,
	TS_DUR,
	TS_CPU,
	TS_UTID,
	TS_STATE,
	TS_IOWAIT,
	TS_BLOCKED,
	TS_WAKER
};
enum { CT_ID, CT_TS, CT_TRACK, CT_VALUE };
enum {
	AF_ID,
	AF_TS,
	AF_DUR,
	AF_NAME,
	AF_UPID,
	AF_DTOKEN,
	AF_STOKEN,
	AF_LAYER,
	AF_PRESENT,
	AF_ONTIME,
	AF_GPU,
	AF_JANK,
	AF_PRED,
	AF_SEV,
	AF_SURFACE,
	AF_COOKIE
};
enum { LG_ID, LG_TS, LG_UTID, LG_PRIO, LG_TAG, LG_MSG };
enum { ST_ID, ST_NAME, ST_VALUE };
enum { MT_ID, MT_NAME, MT_STR, MT_INT };
enum { CS_ID, CS_SNAP, CS_CLOCK, CS_TS };
enum { IN_ID, IN_TS, IN_TRACK, IN_NAME };
enum { PS_ID, PS_TS, PS_UTID, PS_CPU, PS_LEAF, PS_APP, PS_STACK };

/* Track kinds (track.type): where a track's slices or counters belong. */
enum ph_track_kind {
	PH_TK_THREAD,
	PH_TK_PROCESS, /* async slices of a process */
	PH_TK_COUNTER, /* process or global counter */
	PH_TK_CPU_COUNTER,
	PH_TK_GLOBAL,
};

/* A decoded event waiting for the time sort. */
enum ph_tev_kind {
	PH_EV_SWITCH, /* cpu, a=prev_pid, b=next_pid, c=next_prio,
			 d=prev_state (text: -1 - state str), s1, s2 comm */
	PH_EV_WAKING, /* a=pid, b=target_cpu, c=waker tid, s1=comm */
	PH_EV_WAKEUP, /* same; only used when no waking was seen */
	PH_EV_WAKEUP_NEW,
	PH_EV_BLOCKED,	   /* a=pid, b=io_wait, s1=caller */
	PH_EV_PRINT,	   /* a=tid, s1=buf (atrace text) */
	PH_EV_CPUFREQ,	   /* cpu, d=kHz */
	PH_EV_CPUIDLE,	   /* cpu, d=state */
	PH_EV_EXIT,	   /* a=pid, b=tgid or -1, s1=comm */
	PH_EV_FREE,	   /* a=pid */
	PH_EV_NEWTASK,	   /* a=pid, b=parent tid, s1=comm, d=clone_flags */
	PH_EV_RENAME,	   /* a=pid, s1=newcomm */
	PH_EV_TE_BEGIN,	   /* a=track id, s1=name, s2=category */
	PH_EV_TE_END,	   /* a=track id */
	PH_EV_TE_INSTANT,  /* a=track id, s1=name, s2=category */
	PH_EV_TE_COUNTER,  /* a=track id, f=value */
	PH_EV_BLOCK_RQ,	   /* counted only */
	PH_EV_GCOUNTER,	   /* s1=global counter track name, f=value */
	PH_EV_BINDER_TXN,  /* a=tid, b=reply, c=flags, d=transaction id */
	PH_EV_BINDER_RECV, /* a=tid, d=transaction id */
	PH_EV_NKINDS
};

struct ph_tev {
	int64_t ts;
	union {
		int64_t d;
		double f;
	} v;
	int32_t a, b, c;
	uint16_t cpu;
	uint8_t kind;
	uint8_t pad;
	uint32_t s1, s2;
};

/* Clock ids as Perfetto's BuiltinClocks numbers them. */
enum {
	PH_CLK_REALTIME = 1,
	PH_CLK_MONOTONIC = 3,
	PH_CLK_MONO_RAW = 5,
	PH_CLK_BOOTTIME = 6,
};

struct ph_strtab {
	char **strs;   /* id -> string; strs[0] = NULL */
	uint32_t *len; /* id -> length */
	uint32_t n;    /* ids in use, counting 0 */
	uint32_t alloc;
	uint32_t *slots; /* open addressing: 0 empty, else id */
	uint32_t nslots; /* power of two */
	struct ph_arena arena;
};

struct ph_intmap; /* trace_intern.c: int64 -> uint32 hash */

struct ph_trace {
	struct ph_table tables[PH_T_COUNT];
	struct ph_strtab strs;
	struct ph_tev *ev;
	size_t nev, evcap;
	int64_t first_ts, last_ts; /* bounds of everything seen */
	const char *format;	   /* "perfetto", "ftrace", "systrace" */
	const char *clock_name;	   /* "BOOTTIME", "MONOTONIC", "unknown" ... */
	int trace_clock;	   /* PH_CLK_* the timestamps are on, or 0 */
	bool clock_stated;	   /* the trace names its clock (else clock_name
				      is "unknown" and trace_clock a default) */
	int64_t ts0_packets; /* Perfetto packets stamped 0 (the span leaves
				them out when they are outliers) */
	int kernel_major, kernel_minor; /* 0 when unknown */
	bool state_text;   /* prev_state arrived as text (ftrace) */
	struct ph_err err; /* where a decoder stopped, if it did */
	bool truncated;	   /* a decoder stopped early */
	size_t input_bytes;
	/* ftrace text read as a file: what `trace stats` says was read */
	uint64_t text_lines;	  /* lines, blank ones excluded */
	uint64_t text_rejected;	  /* lines no rule parsed */
	int64_t text_rejected_at; /* byte offset of the first, -1 none */
	/* stats, by name (ph_trace_stat) */
	struct ph_intmap *pid_upid;   /* pid -> upid */
	struct ph_intmap *tid_utid;   /* tid -> utid (the live thread) */
	struct ph_intmap *uuid_track; /* track_event uuid -> track id */
	struct ph_intmap *trk_keys;   /* misc key -> track id */
	void *priv;		      /* trace_model.c state */
};

/*
 * Makes t an empty trace (idle process and swapper in place): 0, or
 * PH_ENOMEM with t left empty and safe to release.
 */
int ph_trace_init(struct ph_trace *t) PH_WUR;
void ph_trace_release(struct ph_trace *t);
void ph_trace_free(struct ph_trace *t);

/*
 * Reads a file (Perfetto protobuf, gzip-wrapped or not, ftrace text,
 * systrace HTML, or any of these inside a zip) and finishes the trace.
 * Returns 0, PH_ECORRUPT with t->err filled when the input stopped being
 * sound (everything before it is loaded), or PH_EIO / PH_ENOMEM.
 */
int ph_trace_load_file(struct ph_trace *t, const char *path);
/* The same on bytes in memory (borrowed); name is for messages only. */
int ph_trace_load_mem(struct ph_trace *t, const void *data, size_t n);

/* Decoders; they push events and rows, and do not finish the trace. */
int ph_trace_parse_proto(struct ph_trace *t, const uint8_t *p, size_t n);
int ph_trace_parse_ftrace(struct ph_trace *t, const char *p, size_t n);
int ph_trace_parse_systrace_html(struct ph_trace *t, const char *p, size_t n);
/* Sorts the events and builds the derived tables; call once. */
int ph_trace_finish(struct ph_trace *t);

/* --- helpers for decoders ------------------------------------------------ */
uint32_t ph_trace_intern(struct ph_trace *t, const char *s, size_t n);
/* The string table's hash of s[0..n) (also used for lookups in SQL). */
uint64_t ph_trace_strhash(const char *s, size_t n);
/*
 * realloc(p, bytes) for the big arrays (old_bytes: p's current size; p
 * NULL for a new one).  A block of 4 MiB or more is a mapping of its own
 * on 2 MiB boundaries with huge pages asked for, so it faults in 2 MiB at
 * a time and grows without a copy.  Free with ph_trace_big_free, at the
 * size it was last given.
 */
void *ph_trace_big_realloc(void *p, size_t old_bytes, size_t bytes);
void ph_trace_big_free(void *p, size_t bytes);
/* Under AddressSanitizer big blocks stay on malloc, so its redzones still
 * guard the columns (the fuzzer runs there). */
#if defined(__SANITIZE_ADDRESS__)
#define PH_TRACE_BIG_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PH_TRACE_BIG_MALLOC 1
#endif
#endif
/*
 * Sorts n packed words, key << idx_bits | index, by their key_bits key
 * bits, stably (equal keys keep their index order), 11 bits a pass, with b
 * (n words) as scratch.  Returns whichever of a and b holds the result.
 */
uint64_t *ph_trace_radix_packed(uint64_t *a, uint64_t *b, size_t n,
				int idx_bits, int key_bits);
/* Reserves room for n more events (a guess from the input's size). */
int ph_trace_reserve(struct ph_trace *t, size_t n);
static inline const char *ph_trace_str(const struct ph_trace *t, uint32_t id)
{
	return id < t->strs.n ? t->strs.strs[id] : NULL;
}
/* Grows the event array and pushes; NULL without memory. */
struct ph_tev *ph_trace_push_grow(struct ph_trace *t);
/* Appends a zeroed event and returns it, or NULL without memory. */
static inline struct ph_tev *ph_trace_push(struct ph_trace *t)
{
	if (t->nev < t->evcap)
		return memset(&t->ev[t->nev++], 0, sizeof(struct ph_tev));
	return ph_trace_push_grow(t);
}
/* Adds n to the named counter in the stats table. */
void ph_trace_stat(struct ph_trace *t, const char *name, int64_t n);
int64_t ph_trace_stat_get(struct ph_trace *t, const char *name);
void ph_trace_meta(struct ph_trace *t, const char *name, const char *s,
		   int64_t i);
/* ph_table_add past the rows NULL-filled ahead: fills more, or grows. */
int64_t ph_table_add_slow(struct ph_table *tb);
/* Appends a row (all NULL) and returns its index, or -1 without memory. */
static inline int64_t ph_table_add(struct ph_table *tb)
{
	if (tb->rows < tb->filled)
		return (int64_t)tb->rows++;
	return ph_table_add_slow(tb);
}
/*
 * The same for a row the caller then writes in every column (the state
 * machines' sched, thread_state and counter rows): no NULL fill first,
 * which for those tables was written only to be overwritten.
 */
static inline int64_t ph_table_add_full(struct ph_table *tb)
{
	if (tb->rows < tb->cap) {
		if (tb->rows == tb->filled)
			tb->filled++;
		return (int64_t)tb->rows++;
	}
	return ph_table_add_slow(tb);
}
/* Makes room for n rows in all (a guess that saves regrowing); 0 or -1. */
int ph_table_reserve(struct ph_table *tb, size_t n);
/* Gives back the capacity past the rows filled so far (after loading). */
void ph_table_trim(struct ph_table *tb);
/*
 * end - start for durations: timestamps come from the input, and a hostile
 * trace can put them at opposite ends of int64 (found by fuzz_trace), so an
 * overflowing difference is -1, the tables' "unknown / not finished".
 */
static inline int64_t ph_ts_span(int64_t end, int64_t start)
{
	int64_t d;

	return __builtin_sub_overflow(end, start, &d) ? -1 : d;
}

static inline int64_t *ph_col_i64(struct ph_table *tb, int c)
{
	return (int64_t *)tb->data[c];
}
static inline int32_t *ph_col_i32(struct ph_table *tb, int c)
{
	return (int32_t *)tb->data[c];
}
static inline double *ph_col_f64(struct ph_table *tb, int c)
{
	return (double *)tb->data[c];
}
static inline uint32_t *ph_col_str(struct ph_table *tb, int c)
{
	return (uint32_t *)tb->data[c];
}

/* Process and thread tracking (trace processor's upid/utid). */
int64_t ph_trace_upid(struct ph_trace *t, int64_t pid);
int64_t ph_trace_utid(struct ph_trace *t, int64_t tid);
/* The tid's thread is gone (exit, reuse): its next use makes a new one. */
void ph_trace_utid_forget(struct ph_trace *t, int64_t tid);
/* Binds thread utid to process pid (tgid); a tid == pid is the main one. */
void ph_trace_thread_set_pid(struct ph_trace *t, int64_t utid, int64_t pid);
void ph_trace_thread_set_name(struct ph_trace *t, int64_t utid, uint32_t s);
void ph_trace_process_set_name(struct ph_trace *t, int64_t upid, uint32_t s,
			       bool cmdline);
/* Track lookups, created on first use. */
int64_t ph_trace_thread_track(struct ph_trace *t, int64_t utid);
int64_t ph_trace_track_new(struct ph_trace *t, int kind, uint32_t name,
			   int64_t utid, int64_t upid, int64_t cpu);
int64_t ph_trace_keyed_track(struct ph_trace *t, int kind, uint32_t name,
			     int64_t upid, int64_t cpu);
void ph_trace_counter(struct ph_trace *t, int64_t ts, int64_t track,
		      double value);
/* Widens the trace's bounds to include ts. */
static inline void ph_trace_see_ts(struct ph_trace *t, int64_t ts)
{
	if (ts < t->first_ts)
		t->first_ts = ts;
	if (ts > t->last_ts)
		t->last_ts = ts;
}

/*
 * Thermal ftrace events (thermal_temperature, cdev_update) as the field's
 * trace processor names them: a global counter track "<zone> Temperature"
 * (the kernel's millidegrees Celsius) or "<device> Cooling Device" (the
 * cooling state).  Pushes the event; false without memory.
 */
bool ph_trace_thermal(struct ph_trace *t, int64_t ts, const char *name,
		      size_t n, bool cdev, double value);

/* Frame timeline (trace_proto_frames.c fills, by cookie). */
void ph_trace_frames_end(struct ph_trace *t, int64_t cookie, int64_t ts);

/* Clock snapshots: convert a trace-clock timestamp to another clock. */
int64_t ph_trace_to_clock(const struct ph_trace *t, int64_t ts, int clock);

/*
 * atrace payload parsing ("B|tgid|name", "E|tgid", "C|tgid|name|value",
 * "S|tgid|name|cookie", "F|...", "I|tgid|name", "N|tgid|track|name",
 * "G|tgid|track|name|cookie", "H|tgid|track|name|cookie").
 */
enum ph_atrace_op {
	PH_AT_NONE,
	PH_AT_B,
	PH_AT_E,
	PH_AT_C,
	PH_AT_S,
	PH_AT_F,
	PH_AT_I,
	PH_AT_N,
	PH_AT_G,
	PH_AT_H,
};
struct ph_atrace {
	int op;
	int64_t tgid;		  /* 0 when absent (E without tgid) */
	const char *name, *track; /* not NUL-terminated */
	size_t name_len, track_len;
	int64_t cookie;
	double value;
};
/* 0, or PH_ECORRUPT for a malformed print (the caller counts it). */
int ph_atrace_parse(const char *s, size_t n, struct ph_atrace *out);

#endif
