/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_env.c: the environment phase: what the durations of a report or
 * an answer were measured under (CPU frequency, thermal, memory), built
 * once per context and stated by analyze (report.md / report.json) and by
 * ask (the answer's `environment`, and each finding's own window in its
 * evidence).
 *
 * Everything reads one context table, _env_win(kind, name, cpu, ts, dur,
 * value): the counter stretches that touch the window, a stretch being a
 * sample and the time until the next sample on its track (a counter holds
 * its value until then), clipped to the window; the sample in force at
 * the window's start is included, starting there.  Kinds:
 *
 *   kind            name                 value           source
 *   cpufreq         the CPU, as text     kHz             cpu_frequency
 *   temperature     the thermal zone     millidegrees C  thermal_temperature
 *   cooling         the cooling device   its state       cdev_update
 *   system_memory   mem.available        bytes           sys_stats meminfo
 *   process_memory  mem.rss, .anon,      bytes           process_stats of
 *                   .file, mem.swap                      the window's process
 *
 * "Low frequency" is below half the highest frequency that CPU reached
 * anywhere in the trace (_cpufreq_peak): the trace does not say what the
 * hardware's maximum is, so a CPU capped for the whole trace reads as
 * normal.  CPUs that share a peak are one cluster (_cpu_cluster(peak,
 * ncpu, cpus)): a phone's little and big cores differ in their peaks, and a
 * little core's frequency is only ever compared with its own cluster's
 * peak.  "Throttled" is a cooling device above state 0 (_throttle): a
 * temperature alone does not say whether anything was slowed.
 *
 * The questions (detectors/ask_cpu.sql, ask_startup.sql, ask_jank.sql)
 * read _run_lowfreq (the process's threads' Running time on a CPU while
 * that CPU ran below half its peak: SPAN_JOIN of the Running stretches
 * with the low-frequency ones, partitioned by CPU) and _throttle, and so
 * rule throttling and low frequency in or out.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

#include <stdarg.h>

int ph_tctx_build_env(sqlite3 *db, struct ph_tctx *c, char *err, size_t errlen)
{
	char sql[6144];
	int rc;

	snprintf(
		sql, sizeof(sql),
		"DROP TABLE IF EXISTS temp._env_win;"
		"DROP TABLE IF EXISTS temp._cpufreq_peak;"
		"DROP TABLE IF EXISTS temp._cpu_cluster;"
		"DROP TABLE IF EXISTS temp._throttle;"
		"DROP TABLE IF EXISTS temp._run_lowfreq;"
		"DROP TABLE IF EXISTS temp._sj_lowfreq;"
		"DROP VIEW IF EXISTS temp._sj_prun;"
		"DROP VIEW IF EXISTS temp._sj_low;"
		"CREATE TEMP TABLE _env_win AS WITH k AS ("
		"SELECT id, 'cpufreq' AS kind, CAST(cpu AS TEXT) AS name, cpu "
		"FROM cpu_counter_track WHERE name = 'cpufreq' "
		"UNION ALL SELECT id, 'temperature', substr(name, 1, "
		"length(name) - 12), NULL FROM counter_track WHERE name LIKE "
		"'%% Temperature' AND upid IS NULL AND cpu IS NULL "
		"UNION ALL SELECT id, 'cooling', substr(name, 1, length(name) "
		"- 15), NULL FROM counter_track WHERE name LIKE '%% Cooling "
		"Device' AND upid IS NULL AND cpu IS NULL "
		"UNION ALL SELECT id, 'system_memory', name, NULL FROM "
		"counter_track WHERE name = 'mem.available' AND upid IS NULL "
		"AND cpu IS NULL "
		"UNION ALL SELECT id, 'process_memory', name, NULL FROM "
		"process_counter_track WHERE upid = %" PRId64
		" AND name LIKE 'mem.%%'), "
		"s AS (SELECT k.kind, k.name, k.cpu, c.ts, c.value, LEAD(c.ts) "
		"OVER (PARTITION BY c.track_id ORDER BY c.ts) AS nx FROM k "
		"JOIN counter c ON c.track_id = k.id) "
		"SELECT kind, name, cpu, MAX(ts, %" PRId64 ") AS ts, "
		"MIN(COALESCE(nx, %" PRId64 "), %" PRId64 ") - MAX(ts, %" PRId64
		") AS dur, value FROM s WHERE ts <= %" PRId64
		" AND (nx IS NULL OR nx > %" PRId64 ");"
		"CREATE INDEX temp._env_win_k ON _env_win(kind, name, ts);"
		"CREATE TEMP TABLE _cpufreq_peak AS SELECT t.cpu, "
		"MAX(c.value) AS peak FROM cpu_counter_track t JOIN counter c "
		"ON c.track_id = t.id WHERE t.name = 'cpufreq' GROUP BY t.cpu;"
		/* CPUs of one peak are one cluster ("0-3", or "0,2,5") */
		"CREATE TEMP TABLE _cpu_cluster AS SELECT peak, COUNT(*) AS "
		"ncpu, CASE WHEN MAX(cpu) - MIN(cpu) + 1 = COUNT(*) AND "
		"COUNT(*) > 1 THEN MIN(cpu) || '-' || MAX(cpu) ELSE "
		"group_concat(cpu, ',') END AS cpus FROM (SELECT * FROM "
		"_cpufreq_peak ORDER BY cpu) GROUP BY peak;"
		"CREATE TEMP TABLE _throttle AS SELECT name AS device, ts, "
		"dur, value AS state FROM _env_win WHERE kind = 'cooling' AND "
		"value > 0 AND dur > 0;"
		"CREATE TEMP VIEW _sj_prun AS SELECT ts, dur, cpu, utid, "
		"is_main FROM _tstate_win WHERE state = 'Running' AND cpu IS "
		"NOT NULL AND dur > 0;"
		"CREATE TEMP VIEW _sj_low AS SELECT e.ts, e.dur, e.cpu, "
		"e.value AS khz, p.peak AS peak_khz FROM _env_win e JOIN "
		"_cpufreq_peak p USING (cpu) WHERE e.kind = 'cpufreq' AND "
		"e.dur > 0 AND e.value < 0.5 * p.peak;"
		"CREATE VIRTUAL TABLE temp._sj_lowfreq USING SPAN_JOIN("
		"_sj_prun PARTITIONED cpu, _sj_low PARTITIONED cpu);",
		c->upid, c->from, c->to, c->to, c->from, c->to, c->from);
	if ((rc = ph_tsql_exec(db, sql, err, errlen)))
		return rc;
	/*
	 * One thread's Running stretches never overlap, nor do two threads'
	 * on one CPU; should a broken trace say otherwise, SPAN_JOIN refuses
	 * it and the table stays empty (the warning says why) rather than
	 * count a stretch twice.
	 */
	c->env_err[0] = 0;
	if (!ph_tsql_exec(db,
			  "CREATE TEMP TABLE _run_lowfreq AS SELECT ts, dur, "
			  "cpu, utid, is_main, khz, peak_khz FROM _sj_lowfreq;"
			  "CREATE INDEX temp._run_lowfreq_ts ON "
			  "_run_lowfreq(ts);",
			  c->env_err, sizeof(c->env_err)))
		return 0;
	ph_warn("_run_lowfreq: %s", c->env_err);
	return ph_tsql_exec(db,
			    "DROP TABLE IF EXISTS temp._run_lowfreq;"
			    "CREATE TEMP TABLE _run_lowfreq(ts INTEGER, dur "
			    "INTEGER, cpu INTEGER, utid INTEGER, is_main "
			    "INTEGER, khz REAL, peak_khz REAL);",
			    err, errlen);
}

/* --- the Markdown lines -------------------------------------------------- */

struct env {
	sqlite3 *db;
	struct ph_jw *w;
	struct ph_buf *md; /* "- line\n" each */
	int err;	   /* sticky: out of memory */
};

static void PH_PRINTF(2, 3) line(struct env *e, const char *fmt, ...)
{
	va_list ap;

	if (!e->err)
		e->err = ph_buf_addstr(e->md, "- ");
	va_start(ap, fmt);
	if (!e->err)
		e->err = ph_buf_vaddf(e->md, fmt, ap);
	va_end(ap);
	if (!e->err)
		e->err = ph_buf_addstr(e->md, "\n");
}

/* A statement over _env_win with ?1 from, ?2 to bound, or NULL. */
static sqlite3_stmt *prep(sqlite3 *db, const char *sql, int64_t from,
			  int64_t to)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		ph_warn("environment: %s", sqlite3_errmsg(db));
		return NULL;
	}
	if (sqlite3_bind_parameter_count(st) >= 2) {
		sqlite3_bind_int64(st, 1, from);
		sqlite3_bind_int64(st, 2, to);
	}
	return st;
}

/* A time-weighted average: a sample that held longer counts more.  The
 * stretches of a kind over one window, in SQL, as `avg`. */
#define WAVG                                                            \
	"CASE WHEN SUM(dur) > 0 THEN SUM(value * dur) / SUM(dur) ELSE " \
	"AVG(value) END"

static void env_cpufreq(struct env *e)
{
	sqlite3_stmt *st = prep(
		e->db,
		"SELECT e.cpu, COUNT(*), " WAVG ", MIN(value), MAX(value), "
		"MAX(p.peak), SUM(CASE WHEN value < 0.5 * p.peak THEN dur "
		"ELSE 0 END) FROM _env_win e LEFT JOIN _cpufreq_peak p USING "
		"(cpu) WHERE kind = 'cpufreq' GROUP BY e.cpu ORDER BY e.cpu",
		0, 0);
	bool any = false;

	ph_jw_key(e->w, "cpufreq_khz");
	ph_jw_arr_begin(e->w);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		double low = sqlite3_column_double(st, 6);

		ph_jw_obj_begin(e->w);
		ph_jw_kv_int(e->w, "cpu", sqlite3_column_int64(st, 0));
		ph_jw_kv_int(e->w, "samples", sqlite3_column_int64(st, 1));
		ph_jw_kv_double(e->w, "avg", sqlite3_column_double(st, 2));
		ph_jw_kv_double(e->w, "min", sqlite3_column_double(st, 3));
		ph_jw_kv_double(e->w, "max", sqlite3_column_double(st, 4));
		ph_jw_kv_double(e->w, "peak", sqlite3_column_double(st, 5));
		ph_jw_kv_double(e->w, "low_ms", low / 1e6);
		ph_jw_obj_end(e->w);
		if (low > 0)
			line(e,
			     "cpu %lld: %.0f kHz average (%.0f..%.0f); %.1f ms "
			     "below half its peak (%.0f kHz)",
			     sqlite3_column_int64(st, 0),
			     sqlite3_column_double(st, 2),
			     sqlite3_column_double(st, 3),
			     sqlite3_column_double(st, 4), low / 1e6,
			     sqlite3_column_double(st, 5));
		else
			line(e, "cpu %lld: %.0f kHz average (%.0f..%.0f)",
			     sqlite3_column_int64(st, 0),
			     sqlite3_column_double(st, 2),
			     sqlite3_column_double(st, 3),
			     sqlite3_column_double(st, 4));
		any = true;
	}
	sqlite3_finalize(st);
	ph_jw_arr_end(e->w);
	if (!any)
		line(e, "CPU frequency: not in the trace");
}

/*
 * Thermal: each zone's temperature (average over time, min, max) and the
 * highest state each cooling device reached, with the time it spent above
 * 0.  A trace without either says so in plain words: a duration measured
 * on a hot, throttled device reads differently.
 */
static void env_thermal(struct env *e)
{
	sqlite3_stmt *st;
	int nzones = 0, ndev = 0;

	ph_jw_key(e->w, "thermal");
	ph_jw_arr_begin(e->w);
	st = prep(e->db,
		  "SELECT name, COUNT(*), (" WAVG ") / 1000.0, MIN(value) / "
		  "1000.0, MAX(value) / 1000.0 FROM _env_win WHERE kind = "
		  "'temperature' GROUP BY name ORDER BY name",
		  0, 0);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		ph_jw_obj_begin(e->w);
		ph_jw_kv_str(e->w, "zone", name ? name : "");
		ph_jw_kv_int(e->w, "samples", sqlite3_column_int64(st, 1));
		ph_jw_kv_double(e->w, "avg_c", sqlite3_column_double(st, 2));
		ph_jw_kv_double(e->w, "min_c", sqlite3_column_double(st, 3));
		ph_jw_kv_double(e->w, "max_c", sqlite3_column_double(st, 4));
		ph_jw_obj_end(e->w);
		line(e, "thermal zone %s: %.1f C average (%.1f..%.1f)",
		     name ? name : "", sqlite3_column_double(st, 2),
		     sqlite3_column_double(st, 3),
		     sqlite3_column_double(st, 4));
		nzones++;
	}
	sqlite3_finalize(st);
	ph_jw_arr_end(e->w);
	ph_jw_key(e->w, "cooling_devices");
	ph_jw_arr_begin(e->w);
	st = prep(e->db,
		  "SELECT name, COUNT(*), MAX(value), SUM(CASE WHEN value > 0 "
		  "THEN dur ELSE 0 END) FROM _env_win WHERE kind = 'cooling' "
		  "GROUP BY name ORDER BY name",
		  0, 0);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		double top = sqlite3_column_double(st, 2);
		double hot = sqlite3_column_double(st, 3) / 1e6;

		ph_jw_obj_begin(e->w);
		ph_jw_kv_str(e->w, "device", name ? name : "");
		ph_jw_kv_int(e->w, "samples", sqlite3_column_int64(st, 1));
		ph_jw_kv_double(e->w, "max_state", top);
		ph_jw_kv_double(e->w, "throttled_ms", hot);
		ph_jw_obj_end(e->w);
		if (top > 0)
			line(e,
			     "cooling device %s: state up to %.0f (throttling), "
			     "above 0 for %.1f ms",
			     name ? name : "", top, hot);
		else
			line(e, "cooling device %s: state 0 throughout",
			     name ? name : "");
		ndev++;
	}
	sqlite3_finalize(st);
	ph_jw_arr_end(e->w);
	if (!nzones)
		line(e, "thermal: not in the trace (no thermal_temperature "
			"events up to the window's end); durations cannot be "
			"read against temperature");
	if (!nzones && !ndev)
		ph_jw_kv_str(e->w, "thermal_note",
			     "the trace has no thermal_temperature or "
			     "cdev_update events up to the window's end");
}

/* "mem.rss" -> "RSS": the names people read. */
static const char *mem_label(const char *counter)
{
	static const char *const names[][2] = {
		{ "mem.rss", "RSS" },
		{ "mem.rss.anon", "RSS anon" },
		{ "mem.rss.file", "RSS file" },
		{ "mem.rss.shmem", "RSS shmem" },
		{ "mem.swap", "swap" },
	};

	for (size_t i = 0; i < PH_ARRAY_SIZE(names); i++)
		if (!strcmp(counter, names[i][0]))
			return names[i][1];
	return counter;
}

/*
 * The window's process: each memory counter (process_stats) at the
 * window's start (the sample in force there, else the first one in it,
 * with how far in), at its highest sample, and at the end.
 */
static void env_process_memory(struct env *e, int64_t from)
{
	sqlite3_stmt *st = prep(
		e->db,
		"SELECT e.name, COUNT(*), (SELECT value FROM _env_win f WHERE "
		"f.kind = e.kind AND f.name = e.name ORDER BY ts, dur LIMIT 1), "
		"MIN(e.ts), MAX(e.value), (SELECT value FROM _env_win f WHERE "
		"f.kind = e.kind AND f.name = e.name ORDER BY ts DESC, dur DESC "
		"LIMIT 1) FROM _env_win e WHERE e.kind = 'process_memory' "
		"GROUP BY e.name ORDER BY CASE e.name WHEN 'mem.rss' THEN 0 "
		"WHEN 'mem.rss.anon' THEN 1 WHEN 'mem.rss.file' THEN 2 WHEN "
		"'mem.rss.shmem' THEN 3 WHEN 'mem.swap' THEN 4 ELSE 5 END, "
		"e.name",
		0, 0);
	bool any = false;

	ph_jw_key(e->w, "process_memory");
	ph_jw_arr_begin(e->w);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int64_t start = sqlite3_column_int64(st, 2);
		int64_t first = sqlite3_column_int64(st, 3);
		int64_t peak = sqlite3_column_int64(st, 4);
		int64_t end = sqlite3_column_int64(st, 5);
		char when[64] = "at the start";

		if (!name)
			continue;
		ph_jw_obj_begin(e->w);
		ph_jw_kv_str(e->w, "counter", name);
		ph_jw_kv_int(e->w, "samples", sqlite3_column_int64(st, 1));
		ph_jw_kv_int(e->w, "start_bytes", start);
		ph_jw_kv_int(e->w, "start_ts", first);
		ph_jw_kv_int(e->w, "peak_bytes", peak);
		ph_jw_kv_int(e->w, "end_bytes", end);
		ph_jw_obj_end(e->w);
		if (first > from)
			snprintf(when, sizeof(when),
				 "when first sampled (+%.1f ms)",
				 (double)(first - from) / 1e6);
		line(e,
		     "process %s: %.1f MB %s, %.1f MB at its highest sample, "
		     "%.1f MB at the end",
		     mem_label(name), (double)start / 1e6, when,
		     (double)peak / 1e6, (double)end / 1e6);
		any = true;
	}
	sqlite3_finalize(st);
	ph_jw_arr_end(e->w);
	if (!any) {
		line(e, "process memory: not in the trace (no process_stats "
			"memory counters for this process)");
		ph_jw_kv_str(e->w, "process_memory_note",
			     "the trace has no process_stats memory counters "
			     "(mem.rss ...) for this process up to the "
			     "window's end");
	}
}

void ph_trace_env_phase(sqlite3 *db, struct ph_jw *w, struct ph_buf *md,
			const char *summary)
{
	struct ph_buf own = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct env e = { db, w, md ? md : &own, 0 };
	struct ph_buf sum = PH_BUF_INIT(PH_BUF_NO_CAP);
	int64_t from = ph_tsql_int(db, "SELECT ts FROM _window", 0);
	int64_t to = ph_tsql_int(db, "SELECT end_ts FROM _window", 0);
	size_t start = e.md->len;
	int64_t mem;

	ph_jw_key(w, "environment");
	ph_jw_obj_begin(w);
	env_cpufreq(&e);
	env_thermal(&e);
	/* the samples in the window and the one in force at its start */
	mem = ph_tsql_int(db,
			  "SELECT MIN(value) FROM _env_win WHERE kind = "
			  "'system_memory' AND name = 'mem.available'",
			  -1);
	ph_jw_kv_int(w, "mem_available_min_bytes", mem);
	if (mem >= 0)
		line(&e, "memory available: at least %.0f MB",
		     (double)mem / 1e6);
	else
		line(&e, "memory: not in the trace");
	env_process_memory(&e, from);
	/* the same lines for a program, and the whole in one sentence */
	ph_jw_key(w, "lines");
	ph_jw_arr_begin(w);
	for (size_t i = start; !e.err && i < e.md->len;) {
		const char *s = e.md->buf + i,
			   *nl = memchr(s, '\n', e.md->len - i);
		size_t n = nl ? (size_t)(nl - s) : e.md->len - i;

		if (n >= 2 && s[0] == '-' && s[1] == ' ')
			ph_jw_strn(w, s + 2, n - 2);
		i += n + 1;
	}
	ph_jw_arr_end(w);
	if (!e.err && !summary)
		e.err = ph_trace_env_summary(db, from, to, &sum);
	ph_jw_kv_str(w, "summary", e.err ? NULL : summary ? summary : sum.buf);
	ph_jw_obj_end(w);
	ph_buf_release(&sum);
	ph_buf_release(&own);
}

/* --- one sentence for any stretch of the window -------------------------- */

/* The stretches of _env_win that held some time of [?1, ?2] (or were
 * sampled inside it), with ov the time they held inside it. */
#define OVER(kinds)                                                            \
	"WITH o AS (SELECT e.kind, e.name, e.cpu, e.value, MIN(e.ts + e.dur, " \
	"?2) - MAX(e.ts, ?1) AS ov FROM _env_win e WHERE e.kind IN " kinds     \
	" AND e.ts <= ?2 AND (e.ts + e.dur > ?1 OR e.ts >= ?1)) "

/* One cluster's frequencies over the stretch: "at F MHz" or "A..B MHz
 * (average C)". */
static int sum_freqs(struct ph_buf *b, sqlite3_stmt *st, int col)
{
	double lo = sqlite3_column_double(st, col),
	       hi = sqlite3_column_double(st, col + 1);

	if (lo == hi)
		return ph_buf_addf(b, "at %.0f MHz", lo / 1e3);
	return ph_buf_addf(b, "%.0f..%.0f MHz (average %.0f)", lo / 1e3,
			   hi / 1e3, sqlite3_column_double(st, col + 2) / 1e3);
}

/*
 * The CPU frequencies over the stretch.  CPUs of one peak are a cluster;
 * with more than one, each is stated apart (a little core's lowest next to
 * a big core's highest would say nothing).
 */
static int sum_cpufreq(sqlite3 *db, int64_t from, int64_t to, struct ph_buf *b)
{
	sqlite3_stmt *st =
		prep(db,
		     OVER("('cpufreq')") "SELECT COUNT(DISTINCT o.cpu), "
					 "MIN(value), MAX(value), CASE WHEN "
					 "SUM(ov) > 0 THEN SUM(value * ov) / "
					 "SUM(ov) ELSE AVG(value) END, COUNT("
					 "DISTINCT p.peak) FROM o LEFT JOIN "
					 "_cpufreq_peak p USING (cpu)",
		     from, to);
	int rc = 0, k = 0;

	if (!st || sqlite3_step(st) != SQLITE_ROW ||
	    sqlite3_column_int64(st, 0) == 0) {
		sqlite3_finalize(st);
		return ph_buf_addstr(b, "CPU frequency not in the trace");
	}
	if (sqlite3_column_int64(st, 4) <= 1) {
		rc = ph_buf_addstr(b, "CPU ");
		if (!rc)
			rc = sum_freqs(b, st, 1);
		if (!rc)
			rc = ph_buf_addf(
				b, " on %lld CPU%s",
				sqlite3_column_int64(st, 0),
				sqlite3_column_int64(st, 0) == 1 ? "" : "s");
		sqlite3_finalize(st);
	} else {
		sqlite3_finalize(st);
		st = prep(db,
			  OVER("('cpufreq')") "SELECT c.cpus, c.peak, "
					      "MIN(value), MAX(value), CASE "
					      "WHEN SUM(ov) > 0 THEN SUM(value "
					      "* ov) / SUM(ov) ELSE "
					      "AVG(value) END FROM o JOIN "
					      "_cpufreq_peak p USING (cpu) "
					      "JOIN _cpu_cluster c ON c.peak = "
					      "p.peak GROUP BY c.peak ORDER BY "
					      "c.peak",
			  from, to);
		while (!rc && st && sqlite3_step(st) == SQLITE_ROW) {
			rc = ph_buf_addf(b, "%s %s (peak %.0f MHz) ",
					 k++ ? ", cluster" : "CPU cluster",
					 (const char *)sqlite3_column_text(st,
									   0),
					 sqlite3_column_double(st, 1) / 1e3);
			if (!rc)
				rc = sum_freqs(b, st, 2);
		}
		sqlite3_finalize(st);
		k = 0;
	}
	st = prep(db,
		  OVER("('cpufreq')") "SELECT o.cpu, SUM(ov) FROM o JOIN "
				      "_cpufreq_peak p USING (cpu) WHERE "
				      "o.value < 0.5 * p.peak AND ov > 0 "
				      "GROUP BY o.cpu ORDER BY o.cpu",
		  from, to);
	while (!rc && st && sqlite3_step(st) == SQLITE_ROW)
		rc = ph_buf_addf(b, "%s cpu %lld %.1f ms",
				 k++ ? "," : ", below half its peak on",
				 sqlite3_column_int64(st, 0),
				 sqlite3_column_double(st, 1) / 1e6);
	sqlite3_finalize(st);
	return rc;
}

static int sum_thermal(sqlite3 *db, int64_t from, int64_t to, struct ph_buf *b)
{
	sqlite3_stmt *st = prep(
		db,
		OVER("('cooling')") "SELECT name, MAX(value), SUM(CASE WHEN "
				    "value > 0 THEN ov ELSE 0 END) FROM o "
				    "GROUP BY name ORDER BY MAX(value) DESC, "
				    "name",
		from, to);
	int rc = 0, ndev = 0, nhot = 0;

	while (!rc && st && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		if (sqlite3_column_double(st, 1) > 0 && !nhot++)
			rc = ph_buf_addf(b,
					 "throttled: %s up to state %.0f for "
					 "%.1f ms",
					 name ? name : "",
					 sqlite3_column_double(st, 1),
					 sqlite3_column_double(st, 2) / 1e6);
		ndev++;
	}
	sqlite3_finalize(st);
	if (!rc && nhot > 1)
		rc = ph_buf_addf(b, " (and %d other device%s)", nhot - 1,
				 nhot > 2 ? "s" : "");
	if (!rc && ndev && !nhot)
		rc = ph_buf_addf(b, "not throttled (%d cooling device%s at 0)",
				 ndev, ndev > 1 ? "s" : "");
	st = prep(db,
		  OVER("('temperature')") "SELECT name, MAX(value) / 1000.0 "
					  "FROM o GROUP BY name ORDER BY "
					  "MAX(value) DESC, name LIMIT 1",
		  from, to);
	if (!rc && st && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		rc = ph_buf_addf(b, "%shottest zone %s %.1f C",
				 ndev ? ", " : "", name ? name : "",
				 sqlite3_column_double(st, 1));
		if (!rc && !ndev)
			rc = ph_buf_addstr(b, ", throttling unknown (no "
					      "cooling-device data)");
	} else if (!rc && !ndev) {
		rc = ph_buf_addstr(b, "no thermal data in the trace");
	}
	sqlite3_finalize(st);
	return rc;
}

static int sum_memory(sqlite3 *db, int64_t from, int64_t to, struct ph_buf *b)
{
	sqlite3_stmt *st = prep(
		db,
		OVER("('process_memory', 'system_memory')") "SELECT "
							    "MIN(CASE WHEN name = 'mem.rss' AND kind = 'process_memory' "
							    "THEN value END), MAX(CASE WHEN name = 'mem.rss' AND kind = "
							    "'process_memory' THEN value END), MIN(CASE WHEN kind = "
							    "'system_memory' THEN value END) FROM o",
		from, to);
	int rc = 0;

	if (!st || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return ph_buf_addstr(b, "memory not in the trace");
	}
	if (sqlite3_column_type(st, 0) == SQLITE_NULL)
		rc = ph_buf_addstr(b, "RSS not in the trace");
	else if (sqlite3_column_double(st, 0) == sqlite3_column_double(st, 1))
		rc = ph_buf_addf(b, "RSS %.1f MB",
				 sqlite3_column_double(st, 0) / 1e6);
	else
		rc = ph_buf_addf(b, "RSS %.1f..%.1f MB",
				 sqlite3_column_double(st, 0) / 1e6,
				 sqlite3_column_double(st, 1) / 1e6);
	if (!rc && sqlite3_column_type(st, 2) != SQLITE_NULL)
		rc = ph_buf_addf(b, ", memory available at least %.0f MB",
				 sqlite3_column_double(st, 2) / 1e6);
	sqlite3_finalize(st);
	return rc;
}

int ph_trace_env_summary(sqlite3 *db, int64_t from, int64_t to,
			 struct ph_buf *out)
{
	int rc = sum_cpufreq(db, from, to, out);

	if (!rc)
		rc = ph_buf_addstr(out, "; ");
	if (!rc)
		rc = sum_thermal(db, from, to, out);
	if (!rc)
		rc = ph_buf_addstr(out, "; ");
	if (!rc)
		rc = sum_memory(db, from, to, out);
	return rc ? PH_ENOMEM : 0;
}
