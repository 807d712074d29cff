/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_proto_process.c: the Perfetto decoder's process and system data:
 * ProcessTree (the process and thread tables, their names and parents),
 * ProcessStats and SysStats (memory counters), SystemInfo (the kernel
 * and build, as metadata) and AndroidLogPacket (the log table).  Field
 * numbers are listed at the top of trace_proto.c.
 */
#include "trace/trace_proto_int.h"

void ph_proto_process_tree(struct pstate *ps, const uint8_t *p, size_t n)
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
void ph_proto_process_stats(struct pstate *ps, int64_t ts, const uint8_t *p,
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

void ph_proto_sys_stats(struct pstate *ps, int64_t ts, const uint8_t *p,
			size_t n)
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

void ph_proto_system_info(struct pstate *ps, const uint8_t *p, size_t n)
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

void ph_proto_android_log(struct pstate *ps, const uint8_t *p, size_t n)
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
