/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_proto_int.h: what the Perfetto protobuf decoder's files share
 * (trace_proto.c reads the packets and hands each payload to the file of
 * its kind: _ftrace, _process, _track, _perf, _frames).  The wire
 * primitives are here as forced-inline functions so that every file's
 * field loops inline them as one file did; the per-sequence and
 * per-decode state (struct seq, struct pstate) lives as long as one
 * ph_trace_parse_proto() call.  The wire format and the packet fields
 * decoded are drawn at the top of trace_proto.c.
 */
#ifndef PH_TRACE_PROTO_INT_H
#define PH_TRACE_PROTO_INT_H

#include "ph_common.h"
#include "trace/trace.h"
#include "trace/trace_int.h"

/* --- wire primitives ----------------------------------------------------- */

struct pbf {
	uint32_t key; /* id << 3 | wt: compare both at once with KEY() */
	uint32_t id;
	uint32_t wt;
	uint64_t v;	  /* varint / fixed value, or length */
	const uint8_t *p; /* wire type 2: the bytes */
};

/*
 * The decoder's hot path: every field of every event goes through these,
 * so they are forced inline (gcc otherwise keeps one out-of-line copy, and
 * the call was a quarter of the ingest) and take the one-byte case first
 * (field numbers below 16 and small values are one byte on the wire).
 */
#define PB_INLINE static inline __attribute__((always_inline))

/*
 * A varint up to 8 bytes long read at once (timestamps are 6-8): find the
 * last byte by its clear top bit, keep the bytes up to it, then squeeze
 * the 7-bit groups together in three shifts instead of a loop with a
 * branch per byte.  Longer ones, and the end of a buffer, byte by byte.
 */
PB_INLINE bool varint_wide(const uint8_t **pp, const uint8_t *end,
			   uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;

	if (end - p >= 8) {
		uint64_t w, stop;

		memcpy(&w, p, 8);
		stop = ~w & 0x8080808080808080ull;
		if (stop) {
			w &= (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full;
			w = (w & 0x007f007f007f007full) |
			    ((w & 0x7f007f007f007f00ull) >> 1);
			w = (w & 0x00003fff00003fffull) |
			    ((w & 0x3fff00003fff0000ull) >> 2);
			w = (w & 0x000000000fffffffull) |
			    ((w & 0x0fffffff00000000ull) >> 4);
			*out = w;
			*pp = p + (__builtin_ctzll(stop) >> 3) + 1;
			return true;
		}
	}
	for (int shift = 0; shift < 64; shift += 7) {
		if (p >= end)
			return false;
		v |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80)) {
			*out = v;
			*pp = p;
			return true;
		}
	}
	return false;
}

/* A varint, small ones first: one byte, two (tids below 16384). */
PB_INLINE bool varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;

	if (p < end && !(*p & 0x80)) {
		*out = *p;
		*pp = p + 1;
		return true;
	}
	if (end - p >= 2 && !(p[1] & 0x80)) {
		*out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		*pp = p + 2;
		return true;
	}
	return varint_wide(pp, end, out);
}

/*
 * A length: one byte for short strings; Perfetto's writer reserves 4
 * bytes for every nested message's length and leaves the varint padded
 * (0x80 0x80 0x80 0x00 style), so that form comes next, before the
 * general varint.
 */
PB_INLINE bool length(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;

	if (p < end && !(*p & 0x80)) {
		*out = *p;
		*pp = p + 1;
		return true;
	}
	if (end - p >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		if ((w & 0xffffff80u) == 0x00808080u) { /* below 128 */
			*out = w & 0x7f;
			*pp = p + 4;
			return true;
		}
		if ((w & 0x80808080u) == 0x00808080u) {
			w = (w & 0x007f007fu) | (w >> 1 & 0x3f803f80u);
			*out = (w & 0x3fffu) | (w >> 2 & 0xfffc000u);
			*pp = p + 4;
			return true;
		}
	}
	return varint(pp, end, out);
}

/* 1 a field, 0 the end, -1 corrupt (*pp then points at the bad key). */
PB_INLINE int next_field(const uint8_t **pp, const uint8_t *end, struct pbf *f)
{
	const uint8_t *p = *pp;
	uint64_t key;

	if (p >= end)
		return 0;
	if (!(*p & 0x80))
		key = *p++;
	else if (!varint(&p, end, &key))
		return -1;
	/* a key past 32 bits matches no KEY() (wire type 7 is refused) */
	f->key = key >> 32 ? UINT32_MAX : (uint32_t)key;
	f->id = (uint32_t)(key >> 3);
	f->wt = key & 7;
	f->p = p; /* set on every path: inlined, gcc tracks each member */
	switch (f->wt) {
	case 0:
		if (p < end && !(*p & 0x80))
			f->v = *p++;
		else if (!varint(&p, end, &f->v))
			return -1;
		break;
	case 1:
		if (end - p < 8)
			return -1;
		memcpy(&f->v, p, 8);
		p += 8;
		break;
	case 2:
		if (!length(&p, end, &f->v))
			return -1;
		if (f->v > (uint64_t)(end - p))
			return -1;
		f->p = p;
		p += f->v;
		break;
	case 5: {
		uint32_t v32;

		if (end - p < 4)
			return -1;
		memcpy(&v32, p, 4);
		f->v = v32;
		p += 4;
		break;
	}
	default: return -1;
	}
	*pp = p;
	return 1;
}

/*
 * `f.id == ID && f.wt == WT` as one compare of f.key.  Written as two,
 * gcc loads id and wt together as one 64-bit word just after storing them
 * as two 32-bit ones, and that load stalls (no store forwarding): a fifth
 * of the decoder's time went there.
 */
#define KEY(id, wt) ((uint32_t)(id) << 3 | (uint32_t)(wt))

#define FOR_FIELDS(ptr, len, f)                                    \
	for (const uint8_t *p_##f = (ptr), *e_##f = (ptr) + (len); \
	     next_field(&p_##f, e_##f, &(f)) > 0;)

/* --- decoder state ------------------------------------------------------- */

struct seqclk {
	bool set, incremental;
	int64_t value;	  /* last value, in the clock's units */
	int64_t at_trace; /* the trace clock at the snapshot */
	int64_t snap_value;
	int64_t mult;
};

struct seq {
	uint32_t id;
	struct ph_intmap *interned; /* (iid << 1 | is_name) -> string id */
	uint32_t default_clock;
	uint64_t default_track;
	bool has_default_track;
	struct seqclk clk[64]; /* sequence-scoped clocks, ids 64..127 */
	int64_t thread_track;  /* from a ThreadDescriptor packet, or -1 */
};

/*
 * Counters bumped once per event, kept here and written to the stats table
 * when the decoder ends (ph_trace_stat's lookup per event showed in
 * profiles).  trace_proto.c's pstat_names[] names them.
 */
enum pstat {
	S_PACKETS,
	S_PERF_SAMPLE,
	S_TRACK_EVENT,
	S_SWITCH,
	S_COMPACT_SWITCH,
	S_WAKING,
	S_WAKEUP,
	S_WAKEUP_NEW,
	S_BLOCKED,
	S_PRINT,
	S_CPUFREQ,
	S_CPUIDLE,
	S_EXIT,
	S_FREE,
	S_NEWTASK,
	S_RENAME,
	S_RQ_ISSUE,
	S_RQ_COMPLETE,
	S_THERMAL,
	S_CDEV,
	S_BINDER_TXN,
	S_BINDER_RECV,
	S_OTHER,
	S_COUNT
};

/*
 * Task names (comm, at most 15 bytes) arrive twice per sched_switch and
 * once per waking; a direct-mapped cache of their bytes answers most of
 * them without hashing into the string table.
 */
#define COMM_CACHE 1024
struct comm_slot {
	uint64_t w0, w1;
	uint32_t len; /* 0: empty */
	uint32_t id;
};

/* Entries of trace_proto.c's undecoded[] (packet kinds counted, not read). */
#define PROTO_NUNDECODED 14

struct pstate {
	struct ph_trace *t;
	int64_t stat[S_COUNT];
	int64_t undecoded[PROTO_NUNDECODED]; /* packets per kind */
	struct comm_slot *comms;
	int64_t idle_track[64]; /* cpuidle track id + 1 per CPU, 0 unknown */
	struct seq *seqs;
	size_t nseq, capseq;
	struct ph_intmap *seq_ids; /* sequence id -> index in seqs */
	size_t last_seq;	   /* index of the last one looked up */
	/* compact_sched: the last task switched in, per CPU */
	struct lastsw {
		int32_t pid, prio;
		uint32_t comm;
		bool set;
	} * last;
	size_t nlast;
	/*
	 * to_trace()'s last answer per clock: the snapshot it chose stays
	 * the answer for every raw value in [lo, hi) until a snapshot is
	 * added or the trace clock changes (packets come in time order, so
	 * almost every lookup hits instead of scanning all snapshots).
	 */
	struct clkmemo {
		size_t nsnaps; /* 0: empty (no snapshot, no answer) */
		int tc;
		int64_t lo, hi;
		size_t best;
	} memo[PH_NCLK];
	uint32_t mem_names[5]; /* process_stats counter names, 0 unset */
	/* perf samples' interned frames and callstacks (see perf_sample) */
	struct pframe {
		uint32_t name, path; /* function, mapping path (0 unknown) */
		uint32_t sh;	     /* short_name() of name */
		uint8_t kernel, app; /* frame_is_kernel(), frame_is_app() */
	} * frames;
	size_t nframes, capframes;
	struct ph_intmap *shorts;    /* function name id -> short name id */
	struct ph_intmap *frame_ids; /* name << 32 | path -> frame index */
	/* resolved stacks by their frames' content (a hash of each frame's
	 * short name and kind): traced_perf re-interns the same stacks */
	struct ph_intmap *stack_ids;
	uint32_t (*resolved)[3]; /* leaf, app frame, stack text */
	size_t nresolved, capresolved;
	uint32_t *stk; /* callstacks' frame indices, root first, one run each */
	size_t nstk, capstk;
	int depth;     /* compressed_packets nesting */
	uint64_t base; /* offset of the current buffer in the input */
};

/* A length-delimited field's bytes as an interned string; 0 otherwise. */
static inline uint32_t str_of(struct ph_trace *t, const struct pbf *f)
{
	if (f->wt != 2)
		return 0;
	return ph_trace_intern(t, (const char *)f->p, f->v);
}

/*
 * Each payload's decoder, by the file that holds it.  p, n: the payload's
 * bytes; sq: the packet's sequence (NULL when it names none); ts: the
 * packet's timestamp on the trace clock, PH_NULL_I64 when it has none.
 */

/* trace_proto_ftrace.c: FtraceEventBundle (1), compact_sched within */
void ph_proto_ftrace_bundle(struct pstate *ps, const uint8_t *p, size_t n);

/* trace_proto_process.c: ProcessTree (2), ProcessStats (9), SysStats
 * (7), SystemInfo (45), AndroidLogPacket (39) */
void ph_proto_process_tree(struct pstate *ps, const uint8_t *p, size_t n);
void ph_proto_process_stats(struct pstate *ps, int64_t ts, const uint8_t *p,
			    size_t n);
void ph_proto_sys_stats(struct pstate *ps, int64_t ts, const uint8_t *p,
			size_t n);
void ph_proto_system_info(struct pstate *ps, const uint8_t *p, size_t n);
void ph_proto_android_log(struct pstate *ps, const uint8_t *p, size_t n);

/* trace_proto_track.c: TrackDescriptor (60), ThreadDescriptor (44),
 * TrackEvent (11), and the sequence's InternedData (12) and
 * TracePacketDefaults (59) */
void ph_proto_track_descriptor(struct pstate *ps, const uint8_t *p, size_t n);
void ph_proto_thread_descriptor(struct pstate *ps, struct seq *sq,
				const uint8_t *p, size_t n);
void ph_proto_track_event(struct pstate *ps, struct seq *sq, int64_t ts,
			  const uint8_t *p, size_t n);
void ph_proto_interned_data(struct pstate *ps, struct seq *sq, const uint8_t *p,
			    size_t n);
void ph_proto_packet_defaults(struct seq *sq, const uint8_t *p, size_t n);

/* trace_proto_perf.c: PerfSample (66) and profiling's interned data */
void ph_proto_interned_profile(struct pstate *ps, struct seq *sq,
			       const uint8_t *p, size_t n);
void ph_proto_perf_sample(struct pstate *ps, struct seq *sq, int64_t ts,
			  const uint8_t *p, size_t n);

/* trace_proto_frames.c: FrameTimelineEvent (76) */
void ph_proto_frame_timeline(struct pstate *ps, int64_t ts, const uint8_t *p,
			     size_t n);

#endif
