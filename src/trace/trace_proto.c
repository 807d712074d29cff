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
 * The packet loop, sequences and clocks are here (they run once per
 * packet; each payload goes to the file of its kind, see
 * trace_proto_int.h); ftrace's events and their field numbers are in
 * trace_proto_ftrace.c.
 */
#include "ph_inflate.h"
#include "trace/trace_proto_int.h"

/* --- stats --------------------------------------------------------------- */

/* enum pstat's counters by the names the stats table shows them under */
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
_Static_assert(PH_ARRAY_SIZE(undecoded) == PROTO_NUNDECODED,
	       "trace_proto_int.h counts undecoded[]");

/* --- sequences ----------------------------------------------------------- */

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
	case 1: ph_proto_ftrace_bundle(ps, q, len); break;
	case 2: ph_proto_process_tree(ps, q, len); break;
	case 9:
		ph_trace_stat(t, "process_stats", 1);
		ph_proto_process_stats(ps, tts, q, len);
		break;
	case 7:
		ph_trace_stat(t, "sys_stats", 1);
		ph_proto_sys_stats(ps, tts, q, len);
		break;
	case 6: add_snapshot(ps, sq, q, len); break;
	case 39: ph_proto_android_log(ps, q, len); break;
	case 45: ph_proto_system_info(ps, q, len); break;
	case 60: ph_proto_track_descriptor(ps, q, len); break;
	case 44: ph_proto_thread_descriptor(ps, sq, q, len); break;
	case 11: ph_proto_track_event(ps, sq, tts, q, len); break;
	case 76: ph_proto_frame_timeline(ps, tts, q, len); break;
	case 47: ph_trace_stat(t, "packages_list", 1); break;
	case 66: ph_proto_perf_sample(ps, sq, tts, q, len); break;
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
		ph_proto_packet_defaults(sq, defaults, ndefaults);
	if (intern)
		ph_proto_interned_data(ps, sq, intern, nintern);
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
