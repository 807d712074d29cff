/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_proto.c: a streaming decoder for Perfetto's protobuf trace format,
 * written from the field numbers of the .proto files in google/perfetto
 * (protos/perfetto/trace/...).  No generated code: every message is walked
 * field by field and unknown fields are skipped by wire type.
 *
 * Wire format (protobuf): a record is a varint key (field << 3 | wire type)
 * then a value: 0 varint, 1 fixed64, 2 length-delimited (varint length,
 * bytes), 5 fixed32; 3/4 (groups) are not used by Perfetto and reject.
 *
 * The file is a `Trace`:
 *
 *   FIELD  TYPE                 DESCRIPTION
 *   1      TracePacket (bytes)  repeated; everything else is inside
 *
 * TracePacket fields decoded here (trace_packet.proto):
 *
 *   FIELD  TYPE        DESCRIPTION
 *   8      uint64      timestamp, on timestamp_clock_id (default BOOTTIME)
 *   58     uint32      timestamp_clock_id
 *   10     uint32      trusted_packet_sequence_id (scope of interning)
 *   13     uint32      sequence_flags (1 = incremental state cleared)
 *   41     bool        incremental_state_cleared (older writers)
 *   12     InternedData  event_categories 1, event_names 2 {iid 1, name 2}
 *   59     TracePacketDefaults  timestamp_clock_id 58,
 *                      track_event_defaults 11 {track_uuid 11}
 *   1      FtraceEventBundle  cpu 1, event 2, compact_sched 4
 *   2      ProcessTree       processes 1 {pid 1 ppid 2 cmdline 3 uid 5},
 *                            threads 2 {tid 1 name 2 tgid 3}
 *   9      ProcessStats      processes 1 {pid 1, vm_rss_kb 3, rss_anon 4,
 *                            rss_file 5, vm_swap_kb 7, oom_score_adj 10}
 *   7      SysStats          meminfo 1 {key 1, value 2}
 *   6      ClockSnapshot     clocks 1 {clock_id 1, timestamp 2,
 *                            is_incremental 3, unit_multiplier_ns 4},
 *                            primary_trace_clock 2
 *   39     AndroidLogPacket  events 1 {pid 2 tid 3 timestamp 5 tag 6
 *                            prio 7 message 8}
 *   45     SystemInfo        utsname 1 {sysname 1 release 3 machine 4}
 *   60     TrackDescriptor   uuid 1, name 2, process 3 {pid 1,
 *                            cmdline 2, process_name 6}, thread 4 {pid 1,
 *                            tid 2, thread_name 5}, parent_uuid 5,
 *                            counter 8, static_name 10
 *   11     TrackEvent        category_iids 3, categories 22, name_iid 10,
 *                            name 23, type 9, track_uuid 11,
 *                            counter_value 30, double_counter_value 44
 *   76     FrameTimelineEvent  1..4 frame starts, 5 frame_end {cookie 1}
 *   50     bytes             compressed_packets: zlib of a Trace
 *   33     TraceConfig       builtin_data_sources 20 {primary_trace_clock 5}
 *   37, 38, 40, 52-54, 56, 57, 62, 65, 68, 71, 84, 91: known, not decoded,
 *                            counted (`not_decoded.NAME`, see undecoded[])
 *
 * FtraceEvent (ftrace_event.proto): timestamp 1, pid 2, and one of print 3
 * {buf 2}, sched_switch 4 {prev_comm 1 prev_pid 2 prev_prio 3 prev_state 4
 * next_comm 5 next_pid 6 next_prio 7}, cpu_frequency 11 {state 1 cpu_id 2},
 * cpu_idle 13 (same), sched_wakeup 17, sched_waking 20, sched_wakeup_new
 * 114 {comm 1 pid 2 prio 3 success 4 target_cpu 5}, sched_blocked_reason
 * 18 {pid 1 caller 2 io_wait 3}, block_rq_issue 45, block_rq_complete 125,
 * thermal_temperature 341 {id 1 temp 2 temp_prev 3 thermal_zone 4},
 * cdev_update 342 {target 1 type 2}, binder_transaction 50 {debug_id 1
 * reply 5 flags 7}, binder_transaction_received 51 {debug_id 1},
 * task_newtask 235 {pid 1 comm 2 clone_flags 3}, task_rename 236 {pid 1
 * oldcomm 2 newcomm 3}, sched_process_exit 238 {comm 1 pid 2 tgid 3},
 * sched_process_free 240 {comm 1 pid 2}.
 *
 * CompactSched (ftrace_event_bundle.proto), all packed: switch_timestamp 1
 * (deltas, the first from 0), switch_prev_state 2, switch_next_pid 3,
 * switch_next_prio 4, intern_table 5 (strings), switch_next_comm_index 6;
 * waking_timestamp 7 (deltas), waking_pid 8, waking_target_cpu 9,
 * waking_prio 10, waking_comm_index 11.  The previous task of a switch is
 * the next task of the previous switch on that CPU.
 */
#include "ph_common.h"
#include "ph_inflate.h"
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

/* --- sequences ----------------------------------------------------------- */

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
 * profiles).  Names as the stats table shows them.
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
static const char *const pstat_names[S_COUNT] = {
	[S_PACKETS] = "packets",
	[S_PERF_SAMPLE] = "perf_sample",
	[S_TRACK_EVENT] = "track_event",
	[S_SWITCH] = "ftrace.sched_switch",
	[S_COMPACT_SWITCH] = "ftrace.compact_sched_switch",
	[S_WAKING] = "ftrace.sched_waking",
	[S_WAKEUP] = "ftrace.sched_wakeup",
	[S_WAKEUP_NEW] = "ftrace.sched_wakeup_new",
	[S_BLOCKED] = "ftrace.sched_blocked_reason",
	[S_PRINT] = "ftrace.print",
	[S_CPUFREQ] = "ftrace.cpu_frequency",
	[S_CPUIDLE] = "ftrace.cpu_idle",
	[S_EXIT] = "ftrace.sched_process_exit",
	[S_FREE] = "ftrace.sched_process_free",
	[S_NEWTASK] = "ftrace.task_newtask",
	[S_RENAME] = "ftrace.task_rename",
	[S_RQ_ISSUE] = "ftrace.block_rq_issue",
	[S_RQ_COMPLETE] = "ftrace.block_rq_complete",
	[S_THERMAL] = "ftrace.thermal_temperature",
	[S_CDEV] = "ftrace.cdev_update",
	[S_BINDER_TXN] = "ftrace.binder_transaction",
	[S_BINDER_RECV] = "ftrace.binder_transaction_received",
	[S_OTHER] = "ftrace.other",
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

/*
 * Packets of kinds this decoder knows by name but does not read: counted
 * as `not_decoded.NAME`, so that stats and ask say what the tables lack
 * rather than leave it unsaid (trace_packet.proto field numbers).
 */
static const struct {
	uint32_t id;
	const char *stat;
} undecoded[] = {
	{ 37, "not_decoded.profile_packet" },
	{ 38, "not_decoded.battery" },
	{ 40, "not_decoded.power_rails" },
	{ 52, "not_decoded.gpu_counter_event" },
	{ 53, "not_decoded.gpu_render_stage_event" },
	{ 54, "not_decoded.streaming_profile_packet" },
	{ 56, "not_decoded.heap_graph" },
	{ 57, "not_decoded.graphics_frame_event" },
	{ 62, "not_decoded.vulkan_memory_event" },
	{ 65, "not_decoded.vulkan_api_event" },
	{ 68, "not_decoded.smaps_packet" },
	{ 71, "not_decoded.gpu_mem_total_event" },
	{ 84, "not_decoded.statsd_atom" },
	{ 91, "not_decoded.entity_state_residency" },
};

struct pstate {
	struct ph_trace *t;
	int64_t stat[S_COUNT];
	int64_t undecoded[PH_ARRAY_SIZE(undecoded)]; /* packets per kind */
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

static struct seq *seq_get(struct pstate *ps, uint32_t id)
{
	uint32_t i;

	/* most packets are of the sequence the last one was of */
	if (ps->last_seq < ps->nseq && ps->seqs[ps->last_seq].id == id)
		return &ps->seqs[ps->last_seq];
	if (ps->seq_ids && ph_intmap_get(ps->seq_ids, id, &i) && i < ps->nseq) {
		ps->last_seq = i;
		return &ps->seqs[i];
	}
	{
		struct seq *s;

		if (PH_GROW(ps->seqs, ps->capseq, ps->nseq + 1, 8))
			return NULL;
		if (!ps->seq_ids)
			ps->seq_ids = ph_intmap_new();
		if (ps->seq_ids)
			(void)ph_intmap_put(ps->seq_ids, id,
					    (uint32_t)ps->nseq);
		ps->last_seq = ps->nseq;
		s = &ps->seqs[ps->nseq++];
		memset(s, 0, sizeof(*s));
		s->id = id;
		s->thread_track = -1;
		s->interned = ph_intmap_new();
		return s;
	}
}

static void seq_clear(struct seq *s)
{
	ph_intmap_free(s->interned);
	s->interned = ph_intmap_new();
	for (int i = 0; i < 64; i++)
		s->clk[i].value = s->clk[i].snap_value;
}

/* --- clocks -------------------------------------------------------------- */

static void add_snapshot(struct pstate *ps, struct seq *sq, const uint8_t *p,
			 size_t n)
{
	struct ph_trace *t = ps->t;
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *cs = &t->tables[PH_T_CLOCKSNAP];
	struct ph_snap snap;
	struct pbf f, g;
	int64_t boot = PH_NULL_I64;

	for (int i = 0; i < PH_NCLK; i++)
		snap.clk[i] = PH_NULL_I64;
	FOR_FIELDS(p, n, f)
	{
		if (f.key == KEY(2, 0) && f.v < PH_NCLK && f.v) {
			t->trace_clock = (int)f.v;
			t->clock_stated = true;
		}
	}
	if (!t->trace_clock)
		t->trace_clock = PH_CLK_BOOTTIME;
	FOR_FIELDS(p, n, f)
	{
		uint64_t id = 0, ts = 0, mult = 1;
		bool incr = false;
		int64_t r;

		if (f.id != 1 || f.wt != 2)
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.id == 1)
				id = g.v;
			else if (g.id == 2)
				ts = g.v;
			else if (g.id == 3)
				incr = g.v;
			else if (g.id == 4 && g.v)
				mult = g.v;
		}
		if (id < PH_NCLK) {
			snap.clk[id] = (int64_t)ts;
		} else if (id >= 64 && id < 128 && sq) {
			int k = (int)id - 64;

			sq->clk[k].set = true;
			sq->clk[k].incremental = incr;
			sq->clk[k].value = sq->clk[k].snap_value = (int64_t)ts;
			sq->clk[k].mult = (int64_t)mult;
			sq->clk[k].at_trace = PH_NULL_I64;
		}
		r = ph_table_add(cs);
		if (r >= 0) {
			ph_col_i64(cs, CS_SNAP)[r] = (int64_t)pv->nsnaps;
			ph_col_i64(cs, CS_CLOCK)[r] = (int64_t)id;
			ph_col_i64(cs, CS_TS)[r] = (int64_t)ts;
		}
	}
	boot = snap.clk[t->trace_clock];
	if (sq)
		for (int k = 0; k < 64; k++)
			if (sq->clk[k].set &&
			    sq->clk[k].at_trace == PH_NULL_I64)
				sq->clk[k].at_trace = boot;
	if (pv->nsnaps == pv->snapcap &&
	    PH_GROW(pv->snaps, pv->snapcap, pv->nsnaps + 1, 16))
		return;
	pv->snaps[pv->nsnaps++] = snap;
}

/*
 * The snapshot that converts raw on clock clk: the last one (in trace
 * order) that has both clocks and reads clk <= raw, else the first that
 * has both.  Fills the memo with it and the range of raw values that
 * would choose it too; false when no snapshot has both clocks.
 */
static bool clock_pick(struct pstate *ps, struct clkmemo *m, uint32_t clk,
		       int tc, int64_t raw)
{
	const struct ph_trace_priv *pv = ps->t->priv;
	size_t first = SIZE_MAX, best = SIZE_MAX;
	int64_t lo = INT64_MIN, hi = INT64_MAX;

	m->nsnaps = 0;
	for (size_t i = 0; i < pv->nsnaps; i++) {
		const struct ph_snap *s = &pv->snaps[i];

		if (s->clk[clk] == PH_NULL_I64 || s->clk[tc] == PH_NULL_I64)
			continue;
		if (first == SIZE_MAX)
			first = i;
		if (s->clk[clk] <= raw) {
			best = i;
			lo = s->clk[clk];
			hi = INT64_MAX; /* a later one may still take over */
		} else if (s->clk[clk] < hi) {
			hi = s->clk[clk];
		}
	}
	if (first == SIZE_MAX)
		return false;
	if (best == SIZE_MAX)
		best = first; /* lo stays INT64_MIN: below every snapshot */
	m->nsnaps = pv->nsnaps;
	m->tc = tc;
	m->lo = lo;
	m->hi = hi;
	m->best = best;
	return true;
}

/* A packet timestamp on clock `clk` to the trace clock, or NULL. */
static int64_t to_trace(struct pstate *ps, struct seq *sq, uint32_t clk,
			uint64_t raw)
{
	struct ph_trace *t = ps->t;
	struct ph_trace_priv *pv = t->priv;
	int tc = t->trace_clock ? t->trace_clock : PH_CLK_BOOTTIME;

	if (clk == 0 || clk == (uint32_t)tc)
		return (int64_t)raw;
	if (clk < PH_NCLK) {
		struct clkmemo *m = &ps->memo[clk];
		const struct ph_snap *best;

		if (m->nsnaps != pv->nsnaps || m->tc != tc ||
		    (int64_t)raw < m->lo || (int64_t)raw >= m->hi)
			if (!clock_pick(ps, m, clk, tc, (int64_t)raw)) {
				ph_trace_stat(t, "clock_sync_failure", 1);
				return PH_NULL_I64;
			}
		best = &pv->snaps[m->best];
		return (int64_t)raw - best->clk[clk] + best->clk[tc];
	}
	if (clk >= 64 && clk < 128 && sq && sq->clk[clk - 64].set) {
		struct seqclk *c = &sq->clk[clk - 64];
		int64_t v;

		if (c->at_trace == PH_NULL_I64)
			return PH_NULL_I64;
		if (c->incremental)
			c->value += (int64_t)raw;
		else
			c->value = (int64_t)raw;
		v = c->value;
		return c->at_trace + (v - c->snap_value) * c->mult;
	}
	ph_trace_stat(t, "clock_sync_failure", 1);
	return PH_NULL_I64;
}

/* --- ftrace -------------------------------------------------------------- */

static uint32_t str_of(struct ph_trace *t, const struct pbf *f)
{
	if (f->wt != 2)
		return 0;
	return ph_trace_intern(t, (const char *)f->p, f->v);
}

/*
 * The hot messages (an FtraceEvent, sched_switch, sched_waking, cpu_idle)
 * come from Perfetto's writer with their fields in field order, each once.
 * take_*() consumes the next field only when it has the expected one-byte
 * key (field number below 16), so a decoder reads them in sequence without
 * a dispatch per field; anything else (another order, another wire type,
 * a repeated or unknown field, a bad varint) is left where it is for the
 * generic walk that every decoder ends with, and that walk assigns exactly
 * what it would have had it seen the whole message: the result is the
 * same, only the common layout is quicker.
 */
PB_INLINE bool take_varint(const uint8_t **pp, const uint8_t *end, uint32_t key,
			   uint64_t *v)
{
	const uint8_t *p = *pp;

	if (p >= end || *p != key)
		return false;
	p++;
	if (!varint(&p, end, v))
		return false;
	*pp = p;
	return true;
}

/* take_varint for a field that is usually long (a timestamp). */
PB_INLINE bool take_wide(const uint8_t **pp, const uint8_t *end, uint32_t key,
			 uint64_t *v)
{
	const uint8_t *p = *pp;

	if (p >= end || *p != key)
		return false;
	p++;
	if (!varint_wide(&p, end, v))
		return false;
	*pp = p;
	return true;
}

PB_INLINE bool take_bytes(const uint8_t **pp, const uint8_t *end, uint32_t key,
			  const uint8_t **s, uint64_t *n)
{
	const uint8_t *p = *pp;

	if (p >= end || *p != key)
		return false;
	p++;
	if (!length(&p, end, n) || *n > (uint64_t)(end - p))
		return false;
	*s = p;
	*pp = p + *n;
	return true;
}

static __attribute__((noinline)) uint32_t comm_miss(struct pstate *ps,
						    struct comm_slot *c,
						    const uint8_t *s, size_t n,
						    uint64_t w0, uint64_t w1)
{
	c->id = ph_trace_intern(ps->t, (const char *)s, n);
	c->w0 = w0;
	c->w1 = w1;
	c->len = c->id ? (uint32_t)n : 0;
	return c->id;
}

/*
 * A short string (a comm) through the cache, else interned.  The key is
 * the length and two words that, for that length, cover every byte
 * (overlapping when shorter than 16): no byte-wise copy.
 */
static inline uint32_t comm_bytes(struct pstate *ps, const uint8_t *s, size_t n)
{
	uint64_t w0, w1 = 0;
	struct comm_slot *c;

	if (n > 16 || !n || !ps->comms)
		return ph_trace_intern(ps->t, (const char *)s, n);
	if (n >= 8) {
		memcpy(&w0, s, 8);
		memcpy(&w1, s + n - 8, 8);
	} else if (n >= 4) {
		uint32_t lo, hi;

		memcpy(&lo, s, 4);
		memcpy(&hi, s + n - 4, 4);
		w0 = lo | (uint64_t)hi << 32;
	} else {
		w0 = s[0] | (uint32_t)s[n >> 1] << 8 | (uint32_t)s[n - 1] << 16;
	}
	c = &ps->comms[((w0 * 0x9e3779b97f4a7c15ull) ^
			(w1 * 0xc2b2ae3d27d4eb4full) ^ n) >>
		       54];
	if (c->len == n && c->w0 == w0 && c->w1 == w1)
		return c->id;
	return comm_miss(ps, c, s, n, w0, w1);
}

static uint32_t comm_of(struct pstate *ps, const struct pbf *f)
{
	return f->wt == 2 ? comm_bytes(ps, f->p, f->v) : 0;
}

static struct lastsw *last_of(struct pstate *ps, uint32_t cpu)
{
	if (cpu >= 4096)
		return NULL;
	if (cpu >= ps->nlast) {
		size_t had = ps->nlast;

		if (PH_GROW(ps->last, ps->nlast, (size_t)cpu + 1, 16))
			return NULL;
		memset(ps->last + had, 0,
		       (ps->nlast - had) * sizeof(*ps->last));
	}
	return &ps->last[cpu];
}

/*
 * cpu_idle, written by the CPU it is about (cpu_id = the bundle's CPU),
 * arrives in time order for its track: its counter row is written here
 * rather than through the time sort, which it does not need (a fifth of
 * an Android trace's events).  The counter table is not kept in global
 * time order (trace_sql.c does not assume it is).  true when done.
 */
static bool cpu_idle_direct(struct pstate *ps, uint32_t cpu, int64_t ts,
			    const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	const uint8_t *q = p, *end = p + n;
	struct pbf g;
	uint64_t v;
	int64_t state = 0, id = -1;

	if (take_varint(&q, end, KEY(1, 0), &v))
		state = (int64_t)(uint32_t)v;
	if (take_varint(&q, end, KEY(2, 0), &v))
		id = (int64_t)v;
	while (next_field(&q, end, &g) > 0) {
		if (g.key == KEY(1, 0))
			state = (int64_t)(uint32_t)g.v;
		else if (g.key == KEY(2, 0))
			id = (int64_t)g.v;
	}
	if (id != (int64_t)cpu)
		return false;
	if (cpu >= PH_ARRAY_SIZE(ps->idle_track))
		return false;
	if (!ps->idle_track[cpu]) {
		uint32_t name = ph_trace_intern(t, "cpuidle", 7);

		ps->idle_track[cpu] = ph_trace_keyed_track(t, PH_TK_CPU_COUNTER,
							   name, PH_NULL_I64,
							   (int64_t)cpu) +
				      1;
	}
	ph_trace_see_ts(t, ts);
	ph_trace_counter(t, ts, ps->idle_track[cpu] - 1, (double)state);
	return true;
}

/* sched_switch; l: the bundle CPU's last switch, for compact_sched. */
static void sched_switch(struct pstate *ps, struct ph_tev *e, struct lastsw *l,
			 const uint8_t *p, size_t n)
{
	const uint8_t *q = p, *end = p + n, *s;
	uint64_t v, sn;
	struct pbf g;

	e->kind = PH_EV_SWITCH;
	if (take_bytes(&q, end, KEY(1, 2), &s, &sn))
		e->s1 = comm_bytes(ps, s, sn);
	if (take_varint(&q, end, KEY(2, 0), &v))
		e->a = (int32_t)v;
	(void)take_varint(&q, end, KEY(3, 0), &v); /* prev_prio: unused */
	if (take_varint(&q, end, KEY(4, 0), &v))
		e->v.d = (int64_t)v;
	if (take_bytes(&q, end, KEY(5, 2), &s, &sn))
		e->s2 = comm_bytes(ps, s, sn);
	if (take_varint(&q, end, KEY(6, 0), &v))
		e->b = (int32_t)v;
	if (take_varint(&q, end, KEY(7, 0), &v))
		e->c = (int32_t)v;
	while (next_field(&q, end, &g) > 0) {
		switch (g.id) {
		case 1: e->s1 = comm_of(ps, &g); break;
		case 2: e->a = (int32_t)g.v; break;
		case 4: e->v.d = (int64_t)g.v; break;
		case 5: e->s2 = comm_of(ps, &g); break;
		case 6: e->b = (int32_t)g.v; break;
		case 7: e->c = (int32_t)g.v; break;
		}
	}
	if (l) {
		l->pid = e->b;
		l->prio = e->c;
		l->comm = e->s2;
		l->set = true;
	}
}

/* sched_waking, sched_wakeup, sched_wakeup_new: the same fields. */
static void sched_wake(struct pstate *ps, struct ph_tev *e, const uint8_t *p,
		       size_t n)
{
	const uint8_t *q = p, *end = p + n, *s;
	uint64_t v, sn;
	struct pbf g;

	if (take_bytes(&q, end, KEY(1, 2), &s, &sn))
		e->s1 = comm_bytes(ps, s, sn);
	if (take_varint(&q, end, KEY(2, 0), &v))
		e->a = (int32_t)v;
	(void)take_varint(&q, end, KEY(3, 0), &v); /* prio */
	(void)take_varint(&q, end, KEY(4, 0), &v); /* success */
	if (take_varint(&q, end, KEY(5, 0), &v))
		e->b = (int32_t)v;
	while (next_field(&q, end, &g) > 0) {
		if (g.id == 1)
			e->s1 = comm_of(ps, &g);
		else if (g.id == 2)
			e->a = (int32_t)g.v;
		else if (g.id == 5)
			e->b = (int32_t)g.v;
	}
}

static void ftrace_event(struct pstate *ps, uint32_t cpu, struct lastsw *l,
			 const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	const uint8_t *q = p, *end = p + n;
	struct pbf f, g;
	uint64_t ts = 0, v;
	int64_t pid = -1;
	const uint8_t *ev = NULL;
	size_t evn = 0;
	uint32_t kind = 0;
	struct ph_tev *e;

	if (take_wide(&q, end, KEY(1, 0), &v))
		ts = v;
	if (take_varint(&q, end, KEY(2, 0), &v))
		pid = (int64_t)v;
	if (q < end) { /* the event itself, normally the last field */
		const uint8_t *r = q;
		uint64_t key, len;

		if (varint(&r, end, &key) && (key & 7) == 2 &&
		    (uint32_t)(key >> 3) != 5 && length(&r, end, &len) &&
		    len == (uint64_t)(end - r)) {
			kind = (uint32_t)(key >> 3);
			ev = r;
			evn = len;
			q = end;
		}
	}
	while (next_field(&q, end, &f) > 0) {
		if (f.key == KEY(1, 0))
			ts = f.v;
		else if (f.key == KEY(2, 0))
			pid = (int64_t)f.v;
		else if (f.wt == 2 && f.id != 5) {
			kind = f.id;
			ev = f.p;
			evn = f.v;
		}
	}
	if (!ev)
		return;
	switch (kind) {
	case 4: /* sched_switch */
		ps->stat[S_SWITCH]++;
		if (!(e = ph_trace_push(t)))
			return;
		sched_switch(ps, e, l, ev, evn);
		break;
	case 17:
	case 20:
	case 114:
		ps->stat[kind == 17 ? S_WAKEUP :
			 kind == 20 ? S_WAKING :
				      S_WAKEUP_NEW]++;
		/* with sched_waking in the trace every sched_wakeup is
		 * ignored (trace_finish.c): once one was seen, they are not
		 * even kept (a fifth of an Android trace's events) */
		if (kind == 17 && ps->stat[S_WAKING])
			return;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 17 ? PH_EV_WAKEUP :
			  kind == 20 ? PH_EV_WAKING :
				       PH_EV_WAKEUP_NEW;
		e->c = (int32_t)pid;
		sched_wake(ps, e, ev, evn);
		break;
	case 18:
		ps->stat[S_BLOCKED]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = PH_EV_BLOCKED;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 1)
				e->a = (int32_t)g.v;
			else if (g.id == 3)
				e->b = (int32_t)g.v;
			else if (g.key == KEY(2, 0)) {
				char buf[32];
				int k = snprintf(buf, sizeof(buf), "0x%" PRIx64,
						 g.v);

				e->s1 = ph_trace_intern(t, buf, (size_t)k);
			}
		}
		break;
	case 3:
		ps->stat[S_PRINT]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = PH_EV_PRINT;
		e->a = (int32_t)pid;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 2)
				e->s1 = str_of(t, &g);
		}
		break;
	case 11:
	case 13:
		ps->stat[kind == 11 ? S_CPUFREQ : S_CPUIDLE]++;
		if (kind == 13 &&
		    cpu_idle_direct(ps, cpu, (int64_t)ts, ev, evn))
			return;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 11 ? PH_EV_CPUFREQ : PH_EV_CPUIDLE;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 1)
				e->v.d = (int64_t)(uint32_t)g.v;
			else if (g.id == 2)
				e->cpu = (uint16_t)g.v;
		}
		break;
	case 238:
	case 240:
		ps->stat[kind == 238 ? S_EXIT : S_FREE]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 238 ? PH_EV_EXIT : PH_EV_FREE;
		e->b = -1;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 1)
				e->s1 = str_of(t, &g);
			else if (g.id == 2)
				e->a = (int32_t)g.v;
			else if (g.id == 3 && kind == 238)
				e->b = (int32_t)g.v;
		}
		break;
	case 235:
	case 236:
		ps->stat[kind == 235 ? S_NEWTASK : S_RENAME]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 235 ? PH_EV_NEWTASK : PH_EV_RENAME;
		e->b = (int32_t)pid;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.id == 1)
				e->a = (int32_t)g.v;
			else if (g.id == 2 && kind == 235)
				e->s1 = str_of(t, &g);
			else if (g.id == 3 && kind == 235)
				e->v.d = (int64_t)g.v;
			else if (g.id == 3 && kind == 236)
				e->s1 = str_of(t, &g);
		}
		break;
	case 45:
	case 125: ps->stat[kind == 45 ? S_RQ_ISSUE : S_RQ_COMPLETE]++; return;
	case 50:
	case 51:
		/* the same events as ftrace text's binder_transaction and
		 * _received (trace_finish.c slices them) */
		ps->stat[kind == 50 ? S_BINDER_TXN : S_BINDER_RECV]++;
		if (!(e = ph_trace_push(t)))
			return;
		e->kind = kind == 50 ? PH_EV_BINDER_TXN : PH_EV_BINDER_RECV;
		e->a = (int32_t)pid;
		FOR_FIELDS(ev, evn, g)
		{
			if (g.key == KEY(1, 0))
				e->v.d = (int32_t)g.v;
			else if (kind == 50 && g.key == KEY(5, 0))
				e->b = g.v != 0;
			else if (kind == 50 && g.key == KEY(7, 0))
				e->c = (int32_t)(g.v & 0x7fffffff);
		}
		break;
	case 341:
	case 342: {
		const uint8_t *name = NULL;
		size_t namen = 0;
		int64_t tv = 0;

		ps->stat[kind == 341 ? S_THERMAL : S_CDEV]++;
		FOR_FIELDS(ev, evn, g)
		{
			if (kind == 341 && g.key == KEY(2, 0))
				tv = (int32_t)g.v; /* int32: may be < 0 */
			else if (kind == 342 && g.key == KEY(1, 0))
				tv = (int64_t)g.v;
			else if (g.id == (kind == 341 ? 4u : 2u) && g.wt == 2) {
				name = g.p;
				namen = g.v;
			}
		}
		ph_trace_thermal(t, (int64_t)ts, (const char *)name, namen,
				 kind == 342, (double)tv);
		return;
	}
	default: ps->stat[S_OTHER]++; return;
	}
	e->ts = (int64_t)ts;
	if (kind != 11 && kind != 13)
		e->cpu = (uint16_t)cpu;
}

/* Iterates one packed varint field. */
struct packed {
	const uint8_t *p, *end;
};

PB_INLINE bool packed_next(struct packed *k, uint64_t *v)
{
	if (!k->p || k->p >= k->end)
		return false;
	return varint(&k->p, k->end, v);
}

static void compact_sched(struct pstate *ps, uint32_t cpu, struct lastsw *l,
			  const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct packed pk[13];
	uint32_t *intern = NULL;
	size_t nintern = 0, cap = 0, nsw = 0, nwk = 0;
	struct pbf f;
	uint64_t ts = 0, v;

	memset(pk, 0, sizeof(pk));
	FOR_FIELDS(p, n, f)
	{
		if (f.wt != 2 || f.id >= 13)
			continue;
		if (f.id == 5) {
			if (PH_GROW(intern, cap, nintern + 1, 64))
				break;
			intern[nintern++] = comm_of(ps, &f);
		} else {
			pk[f.id].p = f.p;
			pk[f.id].end = f.p + f.v;
		}
	}
	while (packed_next(&pk[1], &v)) {
		struct ph_tev *e = ph_trace_push(t);
		uint64_t x;

		if (!e)
			break;
		ts += v;
		nsw++;
		e->kind = PH_EV_SWITCH;
		e->ts = (int64_t)ts;
		e->cpu = (uint16_t)cpu;
		e->v.d = packed_next(&pk[2], &x) ? (int64_t)x : 0;
		e->b = packed_next(&pk[3], &x) ? (int32_t)x : 0;
		e->c = packed_next(&pk[4], &x) ? (int32_t)x : 0;
		e->s2 = packed_next(&pk[6], &x) && x < nintern ? intern[x] : 0;
		if (l && l->set) {
			e->a = l->pid;
			e->s1 = l->comm;
		} else {
			e->a = -1; /* the first switch on a CPU: unknown */
		}
		if (l) {
			l->pid = e->b;
			l->comm = e->s2;
			l->prio = e->c;
			l->set = true;
		}
	}
	ts = 0;
	while (packed_next(&pk[7], &v)) {
		struct ph_tev *e = ph_trace_push(t);
		uint64_t x;

		if (!e)
			break;
		ts += v;
		nwk++;
		e->kind = PH_EV_WAKING;
		e->ts = (int64_t)ts;
		e->cpu = (uint16_t)cpu;
		e->a = packed_next(&pk[8], &x) ? (int32_t)x : 0;
		e->b = packed_next(&pk[9], &x) ? (int32_t)x : 0;
		(void)packed_next(&pk[10], &x);
		e->s1 = packed_next(&pk[11], &x) && x < nintern ? intern[x] : 0;
		e->c = -2; /* the waker: whoever runs on this CPU then */
	}
	ps->stat[S_SWITCH] += (int64_t)nsw;
	ps->stat[S_COMPACT_SWITCH] += (int64_t)nsw;
	ps->stat[S_WAKING] += (int64_t)nwk;
	free(intern);
}

/*
 * One CPU's events.  The CPU is needed before the first event; Perfetto
 * writes it first, but the last one wins in protobuf, so a first pass
 * skims the bundle for it (an event costs a key and a length there).
 */
static void ftrace_bundle(struct pstate *ps, const uint8_t *p, size_t n)
{
	const uint8_t *q, *end = p + n;
	struct pbf f;
	uint32_t cpu = 0;
	struct lastsw *l;

	for (q = p;;) {
		if (q < end && *q == KEY(2, 2)) {
			const uint8_t *r = q + 1;
			uint64_t len;

			if (length(&r, end, &len) &&
			    len <= (uint64_t)(end - r)) {
				q = r + len;
				continue;
			}
		}
		if (next_field(&q, end, &f) <= 0)
			break;
		if (f.key == KEY(1, 0))
			cpu = (uint32_t)f.v;
	}
	if (cpu >= 4096) {
		ph_trace_stat(ps->t, "ftrace_bad_cpu", 1);
		return;
	}
	l = last_of(ps, cpu);
	for (q = p;;) {
		if (q < end && *q == KEY(2, 2)) {
			const uint8_t *r = q + 1;
			uint64_t len;

			if (length(&r, end, &len) &&
			    len <= (uint64_t)(end - r)) {
				ftrace_event(ps, cpu, l, r, len);
				q = r + len;
				continue;
			}
		}
		if (next_field(&q, end, &f) <= 0)
			break;
		if (f.key == KEY(2, 2))
			ftrace_event(ps, cpu, l, f.p, f.v);
		else if (f.key == KEY(4, 2))
			compact_sched(ps, cpu, l, f.p, f.v);
		else if (f.key == KEY(3, 0) && f.v)
			ph_trace_stat(ps->t, "ftrace_lost_events", 1);
	}
}

/* --- process data -------------------------------------------------------- */

static void process_tree(struct pstate *ps, const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f, g;

	FOR_FIELDS(p, n, f)
	{
		if (f.wt != 2)
			continue;
		if (f.id == 1) {
			int64_t pid = -1, ppid = -1, uid = PH_NULL_I64, upid;
			struct ph_buf cmd = PH_BUF_INIT(1 << 16);
			const uint8_t *name = NULL;
			size_t namelen = 0;

			ph_trace_stat(t, "process_tree.processes", 1);
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 1)
					pid = (int64_t)g.v;
				else if (g.id == 2)
					ppid = (int64_t)g.v;
				else if (g.id == 5)
					uid = (int64_t)g.v;
				else if (g.key == KEY(3, 2)) {
					if (!name) {
						name = g.p;
						namelen = g.v;
					}
					if ((cmd.len &&
					     ph_buf_addch(&cmd, ' ')) ||
					    ph_buf_add(&cmd, g.p, g.v))
						break;
				}
			}
			if (pid < 0) {
				ph_buf_release(&cmd);
				continue;
			}
			upid = ph_trace_upid(t, pid);
			if (name)
				ph_trace_process_set_name(
					t, upid,
					ph_trace_intern(t, (const char *)name,
							namelen),
					true);
			if (cmd.len)
				ph_col_str(&t->tables[PH_T_PROCESS],
					   P_CMDLINE)[upid] =
					ph_trace_intern(t, cmd.buf, cmd.len);
			ph_buf_release(&cmd);
			ph_col_i64(&t->tables[PH_T_PROCESS], P_UID)[upid] = uid;
			if (ppid >= 0 && ppid != pid)
				ph_col_i64(&t->tables[PH_T_PROCESS],
					   P_PARENT)[upid] =
					ph_trace_upid(t, ppid);
			/* the main thread exists and belongs to it */
			ph_trace_thread_set_pid(t, ph_trace_utid(t, pid), pid);
		} else if (f.id == 2) {
			int64_t tid = -1, tgid = -1, utid;
			uint32_t name = 0;

			ph_trace_stat(t, "process_tree.threads", 1);
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 1)
					tid = (int64_t)g.v;
				else if (g.id == 3)
					tgid = (int64_t)g.v;
				else if (g.id == 2)
					name = str_of(t, &g);
			}
			if (tid < 0)
				continue;
			utid = ph_trace_utid(t, tid);
			if (tgid >= 0)
				ph_trace_thread_set_pid(t, utid, tgid);
			ph_trace_thread_set_name(t, utid, name);
		}
	}
}

/* process_stats fields 3, 4, 5, 7, 10 as counter tracks, with their scale */
static const struct {
	uint32_t field;
	const char *name;
	double scale; /* 0: the value is signed (oom_score_adj) */
} mem_fields[5] = {
	{ 3, "mem.rss", 1024 },	     { 4, "mem.rss.anon", 1024 },
	{ 5, "mem.rss.file", 1024 }, { 7, "mem.swap", 1024 },
	{ 10, "oom_score_adj", 0 },
};

/* Counter fields of one process entry held until its pid is known. */
#define MEM_HELD 32

static void mem_counter(struct pstate *ps, int64_t ts, int64_t upid, int k,
			uint64_t raw)
{
	struct ph_trace *t = ps->t;
	double v = mem_fields[k].scale ? (double)raw * mem_fields[k].scale :
					 (double)(int64_t)raw;

	/* interned once: a packet names them for every process */
	if (!ps->mem_names[k])
		ps->mem_names[k] = ph_trace_intern(t, mem_fields[k].name,
						   strlen(mem_fields[k].name));
	ph_trace_counter(t, ts,
			 ph_trace_keyed_track(t, PH_TK_COUNTER,
					      ps->mem_names[k], upid,
					      PH_NULL_I64),
			 v);
}

static int mem_field(uint32_t id)
{
	for (int k = 0; k < 5; k++)
		if (mem_fields[k].field == id)
			return k;
	return -1;
}

/*
 * One walk per process: its counters are held until the walk has seen
 * the pid (the last one, wherever it is, each one seen made a process as
 * a second walk would), then written in their order; an entry with more
 * of them than MEM_HELD (only a hostile one) is walked a second time.
 */
static void process_stats(struct pstate *ps, int64_t ts, const uint8_t *p,
			  size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f, g;

	FOR_FIELDS(p, n, f)
	{
		int64_t upid = -1;
		struct {
			int k;
			uint64_t v;
		} held[MEM_HELD];
		size_t nheld = 0;
		int k;

		if (f.id != 1 || f.wt != 2)
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.key == KEY(1, 0)) {
				upid = ph_trace_upid(t, (int64_t)g.v);
			} else if (g.wt == 0 && (k = mem_field(g.id)) >= 0) {
				if (nheld < MEM_HELD) {
					held[nheld].k = k;
					held[nheld].v = g.v;
				}
				nheld++;
			}
		}
		if (upid < 0)
			continue;
		if (nheld <= MEM_HELD) {
			for (size_t i = 0; i < nheld; i++)
				mem_counter(ps, ts, upid, held[i].k, held[i].v);
			continue;
		}
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.wt == 0 && (k = mem_field(g.id)) >= 0)
				mem_counter(ps, ts, upid, k, g.v);
		}
	}
}

static void sys_stats(struct pstate *ps, int64_t ts, const uint8_t *p, size_t n)
{
	/* MeminfoCounters: 1 MemTotal, 2 MemFree, 3 MemAvailable, 4 Buffers,
	 * 5 Cached, 6 SwapCached (sys_stats_counters.proto) */
	static const char *const names[] = {
		NULL,	       "mem.total",  "mem.free",       "mem.available",
		"mem.buffers", "mem.cached", "mem.swap_cached"
	};
	struct ph_trace *t = ps->t;
	struct pbf f, g;

	FOR_FIELDS(p, n, f)
	{
		uint64_t key = 0, val = 0;
		int64_t track;

		if (f.id != 1 || f.wt != 2)
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.id == 1)
				key = g.v;
			else if (g.id == 2)
				val = g.v;
		}
		if (!key || key >= PH_ARRAY_SIZE(names))
			continue;
		track = ph_trace_keyed_track(
			t, PH_TK_COUNTER,
			ph_trace_intern(t, names[key], strlen(names[key])),
			PH_NULL_I64, PH_NULL_I64);
		ph_trace_counter(t, ts, track, (double)val * 1024);
	}
}

static void system_info(struct pstate *ps, const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f, g;

	FOR_FIELDS(p, n, f)
	{
		if (f.key == KEY(1, 2)) {
			FOR_FIELDS(f.p, f.v, g)
			{
				char buf[128];
				size_t k = g.v < sizeof(buf) - 1 ?
						   g.v :
						   sizeof(buf) - 1;

				if (g.wt != 2)
					continue;
				memcpy(buf, g.p, k);
				buf[k] = 0;
				if (g.id == 1)
					ph_trace_meta(t, "system_name", buf, 0);
				else if (g.id == 4)
					ph_trace_meta(t, "system_machine", buf,
						      0);
				else if (g.id == 3) {
					ph_trace_meta(t, "system_release", buf,
						      0);
					if (sscanf(buf, "%d.%d",
						   &t->kernel_major,
						   &t->kernel_minor) != 2)
						t->kernel_major =
							t->kernel_minor = 0;
				}
			}
		} else if (f.key == KEY(2, 2)) {
			char buf[256];
			size_t k = f.v < sizeof(buf) - 1 ? f.v :
							   sizeof(buf) - 1;

			memcpy(buf, f.p, k);
			buf[k] = 0;
			ph_trace_meta(t, "android_build_fingerprint", buf, 0);
		}
	}
}

static void android_log(struct pstate *ps, const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct ph_table *lg = &t->tables[PH_T_LOG];
	struct pbf f, g;

	FOR_FIELDS(p, n, f)
	{
		int64_t pid = -1, tid = -1, ts = 0, r, utid;
		uint32_t tag = 0, msg = 0;
		int32_t prio = 0;

		if (f.id != 1 || f.wt != 2)
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			switch (g.id) {
			case 2: pid = (int64_t)g.v; break;
			case 3: tid = (int64_t)g.v; break;
			case 5: ts = (int64_t)g.v; break;
			case 6: tag = str_of(t, &g); break;
			case 7: prio = (int32_t)g.v; break;
			case 8: msg = str_of(t, &g); break;
			}
		}
		r = ph_table_add(lg);
		if (r < 0)
			return;
		utid = tid >= 0 ? ph_trace_utid(t, tid) : PH_NULL_I64;
		if (tid >= 0 && pid >= 0)
			ph_trace_thread_set_pid(t, utid, pid);
		ph_col_i64(lg, LG_TS)[r] = ts;
		ph_col_i64(lg, LG_UTID)[r] = utid;
		ph_col_i32(lg, LG_PRIO)[r] = prio;
		ph_col_str(lg, LG_TAG)[r] = tag;
		ph_col_str(lg, LG_MSG)[r] = msg;
	}
}

/* --- track events -------------------------------------------------------- */

static int64_t track_of_uuid(struct ph_trace *t, uint64_t uuid)
{
	uint32_t v;

	if (ph_intmap_get(t->uuid_track, uuid, &v))
		return v;
	return -1;
}

static void track_descriptor(struct pstate *ps, const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct ph_table *tr = &t->tables[PH_T_TRACK];
	struct pbf f, g;
	uint64_t uuid = 0, parent = 0;
	uint32_t name = 0;
	int64_t pid = -1, tid = -1, track, upid = PH_NULL_I64;
	uint32_t pname = 0, tname = 0;
	bool counter = false, has_proc = false, has_thread = false;

	FOR_FIELDS(p, n, f)
	{
		switch (f.id) {
		case 1: uuid = f.v; break;
		case 5: parent = f.v; break;
		case 2:
		case 10:
		case 13: name = str_of(t, &f); break;
		case 8: counter = true; break;
		case 3:
			if (f.wt != 2)
				break;
			has_proc = true;
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 1)
					pid = (int64_t)g.v;
				else if (g.id == 6 || (g.id == 2 && !pname))
					pname = str_of(t, &g);
			}
			break;
		case 4:
			if (f.wt != 2)
				break;
			has_thread = true;
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 1)
					pid = (int64_t)g.v;
				else if (g.id == 2)
					tid = (int64_t)g.v;
				else if (g.id == 5)
					tname = str_of(t, &g);
			}
			break;
		}
	}
	ph_trace_stat(t, "track_descriptor", 1);
	if (pid >= 0) {
		upid = ph_trace_upid(t, pid);
		ph_trace_process_set_name(t, upid, pname, false);
	}
	track = track_of_uuid(t, uuid);
	if (track >= 0) {
		if (name)
			ph_col_str(tr, TR_NAME)[track] = name;
		return;
	}
	if (has_thread && tid >= 0) {
		int64_t utid = ph_trace_utid(t, tid);

		if (pid >= 0)
			ph_trace_thread_set_pid(t, utid, pid);
		ph_trace_thread_set_name(t, utid, tname);
		track = ph_trace_track_new(t, PH_TK_THREAD, name, utid,
					   PH_NULL_I64, PH_NULL_I64);
	} else {
		int64_t pt = parent ? track_of_uuid(t, parent) : -1;

		if (pt >= 0 && upid == PH_NULL_I64)
			upid = ph_col_i64(tr, TR_UPID)[pt];
		track = ph_trace_track_new(t,
					   counter ? PH_TK_COUNTER :
					   has_proc || upid != PH_NULL_I64 ?
						     PH_TK_PROCESS :
						     PH_TK_GLOBAL,
					   name ? name : pname, PH_NULL_I64,
					   upid, PH_NULL_I64);
	}
	ph_col_i64(tr, TR_UUID)[track] = (int64_t)uuid;
	(void)ph_intmap_put(t->uuid_track, uuid, (uint32_t)track);
}

/* The legacy ThreadDescriptor packet: the sequence's default track. */
static void thread_descriptor(struct pstate *ps, struct seq *sq,
			      const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f;
	int64_t pid = -1, tid = -1, utid;
	uint32_t name = 0;

	FOR_FIELDS(p, n, f)
	{
		if (f.id == 1)
			pid = (int64_t)f.v;
		else if (f.id == 2)
			tid = (int64_t)f.v;
		else if (f.id == 5)
			name = str_of(t, &f);
	}
	if (tid < 0 || !sq)
		return;
	utid = ph_trace_utid(t, tid);
	if (pid >= 0)
		ph_trace_thread_set_pid(t, utid, pid);
	ph_trace_thread_set_name(t, utid, name);
	sq->thread_track = ph_trace_thread_track(t, utid);
}

static uint32_t interned(struct seq *sq, uint64_t iid, int is_name)
{
	uint32_t v;

	if (sq && ph_intmap_get(sq->interned, iid << 1 | (uint64_t)is_name, &v))
		return v;
	return 0;
}

static void track_event(struct pstate *ps, struct seq *sq, int64_t ts,
			const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f;
	uint64_t type = 0, uuid = 0;
	bool has_uuid = false, has_value = false;
	uint32_t name = 0, cat = 0;
	double value = 0;
	int64_t track;
	struct ph_tev *e;

	FOR_FIELDS(p, n, f)
	{
		switch (f.id) {
		case 9: type = f.v; break;
		case 11:
			uuid = f.v;
			has_uuid = true;
			break;
		case 10: name = interned(sq, f.v, 1); break;
		case 23: name = str_of(t, &f); break;
		case 3:
			if (!cat)
				cat = interned(sq, f.v, 0);
			break;
		case 22:
			if (!cat)
				cat = str_of(t, &f);
			break;
		case 30:
			value = (double)(int64_t)f.v;
			has_value = true;
			break;
		case 44:
			if (f.wt == 1) {
				memcpy(&value, &f.v, sizeof(value));
				has_value = true;
			}
			break;
		}
	}
	ps->stat[S_TRACK_EVENT]++;
	if (!has_uuid && sq && sq->has_default_track) {
		uuid = sq->default_track;
		has_uuid = true;
	}
	track = has_uuid ? track_of_uuid(t, uuid) : -1;
	if (track < 0 && sq && sq->thread_track >= 0 && !has_uuid)
		track = sq->thread_track;
	if ((track < 0 && (!has_uuid || type == 4)) || ts == PH_NULL_I64) {
		ph_trace_stat(t,
			      track < 0 ? "track_event_no_track" :
					  "track_event_no_timestamp",
			      1);
		return;
	}
	if (!(e = ph_trace_push(t)))
		return;
	e->ts = ts;
	e->a = (int32_t)track;
	e->s1 = name;
	e->s2 = cat;
	if (track < 0) {
		/* its descriptor may come later: resolved in ph_trace_finish */
		e->a = -1;
		e->v.d = (int64_t)uuid;
	}
	switch (type) {
	case 1: e->kind = PH_EV_TE_BEGIN; break;
	case 2: e->kind = PH_EV_TE_END; break;
	case 4:
		e->kind = PH_EV_TE_COUNTER;
		e->v.f = has_value ? value : 0;
		break;
	default: e->kind = PH_EV_TE_INSTANT; break;
	}
}

/* --- perf samples --------------------------------------------------------- */

/*
 * Profiling's interned data (profile_common.proto) shares the sequence's
 * map under its own keys: function_names 5 and mapping_paths 17
 * {iid 1, str 2} to a string, mappings 19 {iid 1, path_string_ids 7} to
 * the joined path, frames 6 {iid 1, function_name_id 2, mapping_id 3} to
 * an index in ps->frames, callstacks 7 {iid 1, frame_ids 2, root first}
 * to the index of its run in ps->stk (a run: its length, then frames).
 */
enum { K_FN = 1, K_MPATH, K_MAP, K_FRAME, K_STACK };
/* A callstack's run in ps->stk: length, then its leaf, app frame and stack
 * text once the first sample resolved them (0: not yet), then frames. */
#define STK_HEAD 4
#define PROF_KEY(k, iid) \
	((1ull << 62) | (uint64_t)(k) << 56 | ((iid) & ((1ull << 56) - 1)))

static uint32_t prof_get(struct seq *sq, int k, uint64_t iid)
{
	uint32_t v;

	return ph_intmap_get(sq->interned, PROF_KEY(k, iid), &v) ? v : 0;
}

/* Each value of a repeated uint64 field, packed or not, through fn. */
#define FOR_REPEATED(f, v, body)                                        \
	do {                                                            \
		if ((f).wt == 0) {                                      \
			uint64_t v = (f).v;                             \
			body;                                           \
		} else if ((f).wt == 2) {                               \
			const uint8_t *q_ = (f).p, *e_ = (f).p + (f).v; \
			uint64_t v;                                     \
			while (q_ < e_ && varint_wide(&q_, e_, &v)) {   \
				body;                                   \
			}                                               \
		}                                                       \
	} while (0)

static struct pframe frame_of(struct pstate *ps, uint32_t name, uint32_t path);

static void interned_profile(struct pstate *ps, struct seq *sq,
			     const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f, g;

	/* strings, then mappings, then frames, then callstacks: each may
	 * name the one before in the same message */
	for (int pass = 0; pass < 4; pass++) {
		FOR_FIELDS(p, n, f)
		{
			uint64_t iid = 0, a = 0, b = 0;
			uint32_t str = 0;
			char path[1024];
			size_t plen = 0, start = ps->nstk;

			if (f.wt != 2 ||
			    (pass == 0 && f.id != 5 && f.id != 17) ||
			    (pass == 1 && f.id != 19) ||
			    (pass == 2 && f.id != 6) ||
			    (pass == 3 && f.id != 7))
				continue;
			if (pass == 3 && PH_GROW(ps->stk, ps->capstk,
						 ps->nstk + STK_HEAD, 64))
				return;
			/* its length, then leaf, app, stack: unresolved */
			for (int k = 0; pass == 3 && k < STK_HEAD; k++)
				ps->stk[ps->nstk++] = 0;
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 1) {
					iid = g.v;
				} else if (pass == 0 && g.id == 2) {
					str = str_of(t, &g);
				} else if (pass == 1 && g.id == 7) {
					FOR_REPEATED(g, v, {
						const char *c = ph_trace_str(
							t, prof_get(sq, K_MPATH,
								    v));
						int k = snprintf(
							path + plen,
							sizeof(path) - plen,
							"/%s", c ? c : "?");

						if (k > 0 &&
						    plen + (size_t)k <
							    sizeof(path))
							plen += (size_t)k;
					});
				} else if (pass == 2 && g.id == 2) {
					a = g.v;
				} else if (pass == 2 && g.id == 3) {
					b = g.v;
				} else if (pass == 3 && g.id == 2) {
					FOR_REPEATED(g, v, {
						if (PH_GROW(ps->stk, ps->capstk,
							    ps->nstk + 1, 64))
							return;
						ps->stk[ps->nstk++] = prof_get(
							sq, K_FRAME, v);
					});
				}
			}
			if (!iid)
				continue;
			if (pass == 0) {
				(void)ph_intmap_put(
					sq->interned,
					PROF_KEY(f.id == 5 ? K_FN : K_MPATH,
						 iid),
					str);
			} else if (pass == 1) {
				(void)ph_intmap_put(
					sq->interned, PROF_KEY(K_MAP, iid),
					ph_trace_intern(t, path, plen));
			} else if (pass == 2) {
				if (PH_GROW(ps->frames, ps->capframes,
					    ps->nframes + 2, 64))
					return;
				uint32_t fn = prof_get(sq, K_FN, a),
					 mp = prof_get(sq, K_MAP, b), idx;

				if (!ps->nframes) /* index 0: unknown */
					ps->frames[ps->nframes++] =
						(struct pframe){ 0 };
				/* a frame re-interned is the one seen */
				if (!ps->frame_ids)
					ps->frame_ids = ph_intmap_new();
				if (!ps->frame_ids ||
				    !ph_intmap_get(ps->frame_ids,
						   (uint64_t)fn << 32 | mp,
						   &idx)) {
					idx = (uint32_t)ps->nframes;
					ps->frames[ps->nframes++] =
						frame_of(ps, fn, mp);
					if (ps->frame_ids)
						(void)ph_intmap_put(
							ps->frame_ids,
							(uint64_t)fn << 32 | mp,
							idx);
				}
				(void)ph_intmap_put(sq->interned,
						    PROF_KEY(K_FRAME, iid),
						    idx);
			} else {
				ps->stk[start] =
					(uint32_t)(ps->nstk - start - STK_HEAD);
				/* index + 1: 0 is "unknown" */
				(void)ph_intmap_put(sq->interned,
						    PROF_KEY(K_STACK, iid),
						    (uint32_t)start + 1);
			}
		}
	}
}

/*
 * "Class.method" of a frame's function name, as a person reads a stack:
 * ART's "void com.example.GzipSink.write(byte[])" reads GzipSink.write;
 * a native name is kept as it is (up to its arguments).
 */
static uint32_t short_name(struct ph_trace *t, const char *s)
{
	const char *end, *sp, *dot1 = NULL, *dot2 = NULL;

	if (!s || !*s)
		return ph_trace_intern(t, "?", 1);
	end = strchr(s, '(');
	if (!end || end == s)
		end = s + strlen(s);
	for (sp = end; sp > s && sp[-1] != ' '; sp--)
		;
	for (const char *c = sp; c < end; c++)
		if (*c == '.') {
			dot2 = dot1;
			dot1 = c;
		}
	if (dot2 && !memchr(sp, ':', (size_t)(end - sp)))
		sp = dot2 + 1;
	return ph_trace_intern(t, sp, (size_t)(end - sp));
}

/*
 * Whether a frame is the app's own code: mapped from the app's install
 * (/data/...: its APK, oat and .so files), or Java code (a dotted name)
 * compiled from an APK outside the boot class path (/system/framework,
 * /apex: the platform's), or JIT-compiled outside the platform's and
 * common libraries' packages.
 */
static bool frame_is_app(const char *name, const char *path)
{
	static const char *const platform[] = {
		"java.",
		"javax.",
		"android.",
		"androidx.",
		"com.android.",
		"dalvik.",
		"libcore.",
		"sun.",
		"kotlin.",
		"kotlinx.",
		"com.google.android.",
	};
	static const char *const dex[] = { ".oat", ".odex", ".vdex", ".apk",
					   ".dex" };
	size_t pl;

	if (!path)
		return false;
	if (!strncmp(path, "/data/", 6))
		return true;
	if (!name || !strchr(name, '.') || strchr(name, ' '))
		return false;
	if (strstr(path, "jit-cache")) {
		for (size_t i = 0; i < PH_ARRAY_SIZE(platform); i++)
			if (!strncmp(name, platform[i], strlen(platform[i])))
				return false;
		return true;
	}
	if (!strncmp(path, "/system/framework/", 18) ||
	    !strncmp(path, "/apex/", 6))
		return false;
	pl = strlen(path);
	for (size_t i = 0; i < PH_ARRAY_SIZE(dex); i++)
		if (pl > strlen(dex[i]) &&
		    !strcmp(path + pl - strlen(dex[i]), dex[i]))
			return true;
	return false;
}

/* The kernel's frames (traced_perf's mapping path for them). */
static bool frame_is_kernel(const char *path)
{
	return path &&
	       (!strcmp(path, "/kernel") || strstr(path, "kernel.kallsyms") ||
		!strncmp(path, "/[kernel", 8));
}

/* A frame with what a stack needs of it worked out once. */
static struct pframe frame_of(struct pstate *ps, uint32_t name, uint32_t path)
{
	struct ph_trace *t = ps->t;
	const char *n = ph_trace_str(t, name), *pa = ph_trace_str(t, path);
	struct pframe fr = { name, path, 0, 0, 0 };

	if (!ps->shorts)
		ps->shorts = ph_intmap_new();
	if (!ps->shorts || !ph_intmap_get(ps->shorts, name, &fr.sh)) {
		fr.sh = short_name(t, n);
		if (ps->shorts)
			(void)ph_intmap_put(ps->shorts, name, fr.sh);
	}
	fr.kernel = frame_is_kernel(pa);
	/* an unsymbolized frame or an ART trampoline names nothing */
	fr.app = n && *n && strncmp(n, "art_", 4) && frame_is_app(n, pa);
	return fr;
}

/*
 * PerfSample (66): cpu 1, pid 2, tid 3, callstack_iid 4, at the packet's
 * timestamp.  A row of perf_sample per sample with a callstack: its leaf
 * frame outside the kernel (the syscall path under it is how it waited,
 * not what it ran; the kernel's own leaf when the whole stack is the
 * kernel's), the leaf-most frame of the app's own code (NULL: none), and the
 * stack, root first, as "a;b;c" (short names, at most its 64 leaf-most
 * frames).
 */
/* A callstack's leaf, app frame and stack text into its run's head. */
static void resolve_stack(struct pstate *ps, uint32_t at, uint32_t k0,
			  uint32_t len)
{
	struct ph_trace *t = ps->t;
	uint32_t leaf = 0, user = 0, app = 0;
	char stack[4096];
	size_t sl = 0;

	for (uint32_t k = k0; k < len; k++) {
		uint32_t fi = ps->stk[at + STK_HEAD + k];
		const struct pframe *fr =
			&ps->frames[fi < ps->nframes ? fi : 0];
		const char *sh = ph_trace_str(t, fr->sh);
		size_t n = sh ? strlen(sh) : 0;

		if (sl + n + 1 < sizeof(stack)) {
			if (sl)
				stack[sl++] = ';';
			memcpy(stack + sl, sh, n);
			sl += n;
		}
		leaf = fr->sh;
		/* the syscall path under a user frame is not what ran */
		if (!fr->kernel)
			user = fr->sh;
		if (fr->app)
			app = fr->sh;
	}
	ps->stk[at + 1] = user ? user : leaf;
	ps->stk[at + 2] = app;
	ps->stk[at + 3] = ph_trace_intern(t, stack, sl);
}

static void perf_sample(struct pstate *ps, struct seq *sq, int64_t tts,
			const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct ph_table *tb = &t->tables[PH_T_SAMPLE];
	struct pbf f;
	uint64_t cpu = 0, pid = 0, tid = 0, cs = 0;
	uint32_t at, len;
	int64_t r, utid;

	ps->stat[S_PERF_SAMPLE]++;
	FOR_FIELDS(p, n, f)
	{
		switch (f.key) {
		case KEY(1, 0): cpu = f.v; break;
		case KEY(2, 0): pid = f.v; break;
		case KEY(3, 0): tid = f.v; break;
		case KEY(4, 0): cs = f.v; break;
		}
	}
	if (!sq || !cs || tts == PH_NULL_I64 ||
	    !(at = prof_get(sq, K_STACK, cs)))
		return;
	at--;
	len = ps->stk[at];
	if (!len || !ps->nframes)
		return;
	/* resolved once per callstack, and per content across callstacks
	 * re-interned with the same frames */
	if (!ps->stk[at + 3]) {
		uint32_t k0 = len > 64 ? len - 64 : 0, got;
		uint64_t h = 1469598103934665603ull;

		for (uint32_t k = k0; k < len; k++) {
			uint32_t fi = ps->stk[at + STK_HEAD + k];
			const struct pframe *fr =
				&ps->frames[fi < ps->nframes ? fi : 0];

			h = (h ^ ((uint64_t)fr->sh << 2 | fr->kernel << 1 |
				  fr->app)) *
			    1099511628211ull;
		}
		if (!ps->stack_ids)
			ps->stack_ids = ph_intmap_new();
		if (ps->stack_ids && ph_intmap_get(ps->stack_ids, h, &got)) {
			memcpy(&ps->stk[at + 1], ps->resolved[got],
			       sizeof(ps->resolved[got]));
		} else {
			resolve_stack(ps, at, k0, len);
			if (ps->stack_ids &&
			    !PH_GROW(ps->resolved, ps->capresolved,
				     ps->nresolved + 1, 64)) {
				memcpy(ps->resolved[ps->nresolved],
				       &ps->stk[at + 1],
				       sizeof(ps->resolved[0]));
				(void)ph_intmap_put(ps->stack_ids, h,
						    (uint32_t)ps->nresolved++);
			}
		}
	}
	r = ph_table_add(tb);
	if (r < 0)
		return;
	utid = ph_trace_utid(t, (int64_t)tid);
	if (pid)
		ph_trace_thread_set_pid(t, utid, (int64_t)pid);
	ph_col_i64(tb, PS_TS)[r] = tts;
	ph_col_i64(tb, PS_UTID)[r] = utid;
	ph_col_i32(tb, PS_CPU)[r] = (int32_t)cpu;
	ph_col_str(tb, PS_LEAF)[r] = ps->stk[at + 1];
	ph_col_str(tb, PS_APP)[r] = ps->stk[at + 2];
	ph_col_str(tb, PS_STACK)[r] = ps->stk[at + 3];
}

static void interned_data(struct pstate *ps, struct seq *sq, const uint8_t *p,
			  size_t n)
{
	struct pbf f, g;
	bool prof = false;

	if (!sq || !sq->interned)
		return;
	FOR_FIELDS(p, n, f)
	{
		uint64_t iid = 0;
		uint32_t s = 0;

		if (f.id == 5 || f.id == 6 || f.id == 7 || f.id == 17 ||
		    f.id == 19)
			prof = true;
		if ((f.id != 1 && f.id != 2) || f.wt != 2)
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.id == 1)
				iid = g.v;
			else if (g.id == 2)
				s = str_of(ps->t, &g);
		}
		(void)ph_intmap_put(sq->interned, iid << 1 | (f.id == 2), s);
	}
	if (prof)
		interned_profile(ps, sq, p, n);
}

static void packet_defaults(struct seq *sq, const uint8_t *p, size_t n)
{
	struct pbf f, g;

	if (!sq)
		return;
	FOR_FIELDS(p, n, f)
	{
		if (f.id == 58)
			sq->default_clock = (uint32_t)f.v;
		else if (f.key == KEY(11, 2)) {
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 11) {
					sq->default_track = g.v;
					sq->has_default_track = true;
				}
			}
		}
	}
}

/* --- frame timeline ------------------------------------------------------ */

static const char *const jank_names[] = {
	"SurfaceFlinger Scheduling",
	"Prediction Error",
	"Display HAL",
	"SurfaceFlinger CPU Deadline Missed",
	"SurfaceFlinger GPU Deadline Missed",
	"App Deadline Missed",
	"Buffer Stuffing",
	"Unknown Jank",
	"SurfaceFlinger Stuffing",
	"Dropped Frame",
	"Non Animating",
	"App Resynced Jitter",
	"Display not ON",
	"ModeChange in progress",
	"PowerModeChange in progress",
};

/* JankType bits (1 = none, 2.. = reasons) as the field's comma-joined text */
static uint32_t jank_str(struct ph_trace *t, uint64_t bits)
{
	struct ph_buf b = PH_BUF_INIT(1024);
	uint32_t id;

	if (bits == 0)
		return ph_trace_intern(t, "Unspecified", 11);
	if (bits == 1)
		return ph_trace_intern(t, "None", 4);
	for (int i = 1; i <= 15; i++) {
		if (!(bits & (1ull << i)))
			continue;
		if ((b.len && ph_buf_addstr(&b, ", ")) ||
		    ph_buf_addstr(&b, jank_names[i - 1]))
			break;
	}
	id = ph_trace_intern(t, b.buf, b.len);
	ph_buf_release(&b);
	return id;
}

static void frame_timeline(struct pstate *ps, int64_t ts, const uint8_t *p,
			   size_t n)
{
	static const char *const present[] = {
		"Unspecified Present", "On-time Present", "Late Present",
		"Early Present",       "Dropped Frame",	  "Unknown Present"
	};
	static const char *const pred[] = { "Unspecified Prediction",
					    "Valid Prediction",
					    "Expired Prediction",
					    "Unknown Prediction" };
	static const char *const sev[] = { "Unknown", "None", "Partial",
					   "Full" };
	struct ph_trace *t = ps->t;
	struct ph_trace_priv *pv = t->priv;
	struct pbf f, g;

	FOR_FIELDS(p, n, f)
	{
		bool actual = f.id == 2 || f.id == 4, surface = f.id >= 3;
		struct ph_table *tb;
		int64_t cookie = 0, token = 0, dtoken = 0, pid = -1, r;
		int64_t jank = -1, pt = -1, pr = -1, sv = -1, ontime = -1,
			gpu = -1;
		uint32_t layer = 0;
		char name[32];
		int k;

		if (f.wt != 2 || f.id < 1 || f.id > 5)
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.id == 1)
				cookie = (int64_t)g.v;
			if (f.id == 5)
				continue;
			if (g.id == 2)
				token = (int64_t)g.v;
			else if (!surface) {
				switch (g.id) {
				case 3: pid = (int64_t)g.v; break;
				case 4: pt = (int64_t)g.v; break;
				case 5: ontime = (int64_t)g.v; break;
				case 6: gpu = (int64_t)g.v; break;
				case 7: jank = (int64_t)g.v; break;
				case 8: pr = (int64_t)g.v; break;
				case 9: sv = (int64_t)g.v; break;
				}
			} else {
				switch (g.id) {
				case 3: dtoken = (int64_t)g.v; break;
				case 4: pid = (int64_t)g.v; break;
				case 5: layer = str_of(t, &g); break;
				case 6: pt = (int64_t)g.v; break;
				case 7: ontime = (int64_t)g.v; break;
				case 8: gpu = (int64_t)g.v; break;
				case 9: jank = (int64_t)g.v; break;
				case 10: pr = (int64_t)g.v; break;
				case 12: sv = (int64_t)g.v; break;
				}
			}
		}
		if (f.id == 5) {
			ph_trace_stat(t, "frame_timeline.frame_end", 1);
			ph_trace_frames_end(t, cookie, ts);
			continue;
		}
		ph_trace_stat(t,
			      f.id == 1 ? "frame_timeline.expected_display" :
			      f.id == 2 ? "frame_timeline.actual_display" :
			      f.id == 3 ? "frame_timeline.expected_surface" :
					  "frame_timeline.actual_surface",
			      1);
		tb = &t->tables[actual ? PH_T_AFRAME : PH_T_EFRAME];
		r = ph_table_add(tb);
		if (r < 0)
			return;
		k = snprintf(name, sizeof(name), "%" PRId64, token);
		ph_col_i64(tb, AF_TS)[r] = ts;
		ph_col_i64(tb, AF_DUR)[r] = -1;
		ph_col_str(tb, AF_NAME)[r] =
			ph_trace_intern(t, name, (size_t)k);
		ph_col_i64(tb, AF_UPID)[r] = pid >= 0 ? ph_trace_upid(t, pid) :
							PH_NULL_I64;
		ph_col_i64(tb, AF_DTOKEN)[r] = surface ? dtoken : token;
		ph_col_i64(tb, AF_STOKEN)[r] = surface ? token : PH_NULL_I64;
		ph_col_str(tb, AF_LAYER)[r] = layer;
		ph_col_i32(tb, AF_SURFACE)[r] = surface;
		ph_col_i64(tb, AF_COOKIE)[r] = cookie;
		if (actual) {
			if (pt >= 0 && pt < 6)
				ph_col_str(tb, AF_PRESENT)[r] = ph_trace_intern(
					t, present[pt], strlen(present[pt]));
			if (pr >= 0 && pr < 4)
				ph_col_str(tb, AF_PRED)[r] = ph_trace_intern(
					t, pred[pr], strlen(pred[pr]));
			if (sv >= 0 && sv < 4)
				ph_col_str(tb, AF_SEV)[r] = ph_trace_intern(
					t, sev[sv], strlen(sev[sv]));
			if (jank >= 0)
				ph_col_str(tb, AF_JANK)[r] =
					jank_str(t, (uint64_t)jank);
			if (ontime >= 0)
				ph_col_i32(tb, AF_ONTIME)[r] = (int32_t)ontime;
			if (gpu >= 0)
				ph_col_i32(tb, AF_GPU)[r] = (int32_t)gpu;
		}
		if (!pv->frame_cookie)
			pv->frame_cookie = ph_intmap_new();
		if (pv->frame_cookie)
			(void)ph_intmap_put(pv->frame_cookie, (uint64_t)cookie,
					    (uint32_t)r |
						    (actual ? 1u << 31 : 0));
	}
}

void ph_trace_frames_end(struct ph_trace *t, int64_t cookie, int64_t ts)
{
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *tb;
	uint32_t v, r;

	if (!pv->frame_cookie ||
	    !ph_intmap_get(pv->frame_cookie, (uint64_t)cookie, &v) ||
	    v == UINT32_MAX - 1) {
		ph_trace_stat(t, "frame_timeline.end_without_start", 1);
		return;
	}
	tb = &t->tables[v >> 31 ? PH_T_AFRAME : PH_T_EFRAME];
	r = v & 0x7fffffff;
	if (r < tb->rows)
		ph_col_i64(tb, AF_DUR)[r] =
			ph_ts_span(ts, ph_col_i64(tb, AF_TS)[r]);
	ph_intmap_del(pv->frame_cookie, (uint64_t)cookie);
}

/* --- packets ------------------------------------------------------------- */

static int parse_trace(struct pstate *ps, const uint8_t *p, size_t n);

/* A packet's payload field id (wire type 2), once its header is known. */
/*
 * TraceConfig (33): builtin_data_sources 20 {primary_trace_clock 5}, the
 * clock the service stamped the trace with.  The clock snapshots name it
 * too; a trace whose config does is on that clock even without them.
 */
static void trace_config(struct pstate *ps, const uint8_t *p, size_t n)
{
	struct pbf f, g;

	FOR_FIELDS(p, n, f)
	{
		if (f.key != KEY(20, 2))
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.key == KEY(5, 0) && g.v && g.v < PH_NCLK) {
				ps->t->trace_clock = (int)g.v;
				ps->t->clock_stated = true;
			}
		}
	}
}

static void payload(struct pstate *ps, struct seq *sq, int64_t tts, uint32_t id,
		    const uint8_t *q, size_t len)
{
	struct ph_trace *t = ps->t;

	switch (id) {
	case 1: ftrace_bundle(ps, q, len); break;
	case 2: process_tree(ps, q, len); break;
	case 9:
		ph_trace_stat(t, "process_stats", 1);
		process_stats(ps, tts, q, len);
		break;
	case 7:
		ph_trace_stat(t, "sys_stats", 1);
		sys_stats(ps, tts, q, len);
		break;
	case 6: add_snapshot(ps, sq, q, len); break;
	case 39: android_log(ps, q, len); break;
	case 45: system_info(ps, q, len); break;
	case 60: track_descriptor(ps, q, len); break;
	case 44: thread_descriptor(ps, sq, q, len); break;
	case 11: track_event(ps, sq, tts, q, len); break;
	case 76: frame_timeline(ps, tts, q, len); break;
	case 47: ph_trace_stat(t, "packages_list", 1); break;
	case 66: perf_sample(ps, sq, tts, q, len); break;
	case 33: trace_config(ps, q, len); break;
	case 50: {
		struct ph_buf b = PH_BUF_INIT(PH_INFLATE_MAX_OUT);
		struct ph_err zerr = { 0 };
		int zrc = ps->depth > 0 ? PH_ECORRUPT :
					  ph_inflate(q, len, PH_INFLATE_ZLIB,
						     NULL, &b, NULL, &zerr);

		ph_trace_stat(t, "compressed_packets", 1);
		if (zrc == PH_ETOOBIG) {
			/*
			 * A bomb: refused, and the trace is read in part.
			 * The offset is within the compressed packet.
			 */
			ph_trace_stat(t, "compressed_packets_refused", 1);
			if (!t->err.code)
				t->err = zerr;
			t->truncated = true;
		} else if (zrc) {
			ph_trace_stat(t, "compressed_packets_bad", 1);
		} else {
			uint64_t base = ps->base;

			ps->depth++;
			if (parse_trace(ps, (const uint8_t *)b.buf, b.len))
				ph_trace_stat(t, "compressed_packets_bad", 1);
			ps->depth--;
			ps->base = base;
		}
		ph_buf_release(&b);
		break;
	}
	default:
		for (size_t i = 0; i < PH_ARRAY_SIZE(undecoded); i++)
			if (undecoded[i].id == id)
				ps->undecoded[i]++;
		break;
	}
}

/* Most packets have a header and one payload: room to remember them. */
#define PAYLOAD_MAX 8

static void packet(struct pstate *ps, const uint8_t *p, size_t n)
{
	struct pbf f;
	uint64_t ts = 0;
	bool has_ts = false;
	uint32_t clk = 0, seqid = 0, flags = 0;
	struct seq *sq = NULL;
	int64_t tts;
	const uint8_t *defaults = NULL, *intern = NULL;
	size_t ndefaults = 0, nintern = 0, npay = 0;
	struct {
		uint32_t id;
		const uint8_t *p;
		size_t n;
	} pay[PAYLOAD_MAX];

	/*
	 * The header fields (timestamp, clock, sequence, interning) decide
	 * how the payload reads, wherever they are in the packet: one walk
	 * for them that remembers where the payload is, then the payload,
	 * in the order it came (a second walk only past PAYLOAD_MAX).
	 */
	FOR_FIELDS(p, n, f)
	{
		switch (f.id) {
		case 8:
			ts = f.v;
			has_ts = true;
			break;
		case 58: clk = (uint32_t)f.v; break;
		case 10: seqid = (uint32_t)f.v; break;
		case 13: flags = (uint32_t)f.v; break;
		case 41:
			if (f.v)
				flags |= 1;
			break;
		case 59:
			if (f.wt == 2) {
				defaults = f.p;
				ndefaults = f.v;
			}
			break;
		case 12:
			if (f.wt == 2) {
				intern = f.p;
				nintern = f.v;
			}
			break;
		default:
			if (f.wt != 2)
				break;
			if (npay < PAYLOAD_MAX) {
				pay[npay].id = f.id;
				pay[npay].p = f.p;
				pay[npay].n = f.v;
			}
			npay++;
			break;
		}
	}
	ps->stat[S_PACKETS]++;
	if (seqid)
		sq = seq_get(ps, seqid);
	if (sq && (flags & 1))
		seq_clear(sq);
	if (defaults)
		packet_defaults(sq, defaults, ndefaults);
	if (intern)
		interned_data(ps, sq, intern, nintern);
	if (!clk && sq)
		clk = sq->default_clock;
	tts = has_ts ? to_trace(ps, sq, clk, ts) : PH_NULL_I64;
	/*
	 * An absolute timestamp of 0 is a writer that never set one: it
	 * widens the bounds only if the rest of the trace is near 0 too
	 * (ph_trace_finish decides, and counts it when it sets it aside).
	 */
	if (has_ts && ts == 0 && clk < 64)
		ps->t->ts0_packets++;
	else if (tts != PH_NULL_I64)
		ph_trace_see_ts(ps->t, tts);
	if (npay <= PAYLOAD_MAX) {
		for (size_t i = 0; i < npay; i++)
			payload(ps, sq, tts, pay[i].id, pay[i].p, pay[i].n);
		return;
	}
	FOR_FIELDS(p, n, f)
	{
		if (f.wt == 2 && f.id != 12 && f.id != 59)
			payload(ps, sq, tts, f.id, f.p, f.v);
	}
}

static int parse_trace(struct pstate *ps, const uint8_t *p, size_t n)
{
	const uint8_t *q = p, *end = p + n;
	struct pbf f;
	int rc;

	while ((rc = next_field(&q, end, &f)) > 0) {
		if (f.key == KEY(1, 2))
			packet(ps, f.p, f.v);
	}
	if (rc < 0)
		return PH_CORRUPT(&ps->t->err, ps->base + (uint64_t)(q - p),
				  "truncated or corrupt packet");
	return 0;
}

int ph_trace_parse_proto(struct ph_trace *t, const uint8_t *p, size_t n)
{
	struct pstate ps;
	struct ph_buf gz = PH_BUF_INIT(PH_INFLATE_MAX_OUT);
	struct ph_err zerr = { 0 };
	int rc;

	memset(&ps, 0, sizeof(ps));
	ps.t = t;
	t->format = "perfetto";
	if (!t->trace_clock)
		t->trace_clock = PH_CLK_BOOTTIME;
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
		/*
		 * A stream refused by a cap or cut short is read as far as
		 * it inflated; the trace is then read in part.
		 */
		rc = ph_inflate(p, n, PH_INFLATE_GZIP, NULL, &gz, NULL, &zerr);
		if (rc == PH_ENOMEM) {
			ph_buf_release(&gz);
			return rc;
		}
		ph_trace_meta(t, "compression", "gzip", (int64_t)gz.len);
		p = (const uint8_t *)gz.buf;
		n = gz.len;
		t->truncated = zerr.code != 0;
	}
	ps.comms = calloc(COMM_CACHE, sizeof(*ps.comms));
	rc = parse_trace(&ps, p, n);
	if (rc)
		t->truncated = true;
	/* the refusal, not the packet it cut in two, is why it ends early */
	if (zerr.code)
		t->err = zerr;
	for (int i = 0; i < S_COUNT; i++)
		if (ps.stat[i])
			ph_trace_stat(t, pstat_names[i], ps.stat[i]);
	for (size_t i = 0; i < PH_ARRAY_SIZE(undecoded); i++)
		if (ps.undecoded[i])
			ph_trace_stat(t, undecoded[i].stat, ps.undecoded[i]);
	free(ps.comms);
	free(ps.frames);
	free(ps.stk);
	free(ps.resolved);
	ph_intmap_free(ps.shorts);
	ph_intmap_free(ps.frame_ids);
	ph_intmap_free(ps.stack_ids);
	for (size_t i = 0; i < ps.nseq; i++)
		ph_intmap_free(ps.seqs[i].interned);
	free(ps.seqs);
	ph_intmap_free(ps.seq_ids);
	free(ps.last);
	ph_buf_release(&gz);
	if (!rc && t->truncated)
		rc = PH_ECORRUPT;
	return rc;
}
