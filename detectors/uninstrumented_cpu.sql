-- SPDX-License-Identifier: Apache-2.0
-- @id uninstrumented_cpu
-- @title Main thread CPU time no slice explains
-- @why The main thread was Running outside every top-level slice: work the trace cannot name (no atrace section around it). Add a section, or sample it. When the trace has CPU samples (perf_sample) of the main thread in that time, the detail quotes them merged by their leaf-most frame of the app's own code (else their leaf frame), the five most frequent with their share: "28 stacks: GzipSink.write 54%, ..."; without samples it says the trace has none to name it.
-- @param: min_ms = 50
-- @identity: location
-- @module: context
WITH run AS (SELECT COALESCE(SUM(dur), 0) AS d FROM _tstate_win WHERE is_main AND state = 'Running'),
ins AS (SELECT COALESCE(SUM(c.cpu_dur), 0) AS d FROM _cpu_in_slice c JOIN _slice_win s USING (id) WHERE s.depth = 0),
-- the main thread's samples in the window outside every top-level slice: the top-level slice a sample
-- falls in is the last one to begin before it (they never overlap), found by a running maximum
smp AS (SELECT s.ts, COALESCE(s.app_frame, s.leaf) AS fr FROM perf_sample s JOIN _threads th ON th.utid = s.utid AND th.is_main
        WHERE s.ts >= (SELECT ts FROM _window) AND s.ts < (SELECT end_ts FROM _window)),
top AS (SELECT ts, MAX(ts + dur_win) AS e FROM _slice_win WHERE is_main AND depth = 0 GROUP BY ts),
ev AS (SELECT ts, 0 AS k, NULL AS fr FROM top UNION ALL SELECT ts, 1, fr FROM smp),
lst AS (SELECT ts, k, fr, MAX(CASE WHEN k = 0 THEN ts END) OVER (ORDER BY ts, k ROWS UNBOUNDED PRECEDING) AS sts FROM ev),
agg AS (SELECT l.fr, COUNT(*) AS n FROM lst l LEFT JOIN top t ON t.ts = l.sts WHERE l.k = 1 AND (t.e IS NULL OR t.e <= l.ts) GROUP BY l.fr),
tot AS (SELECT COALESCE(SUM(n), 0) AS n FROM agg),
quote AS (SELECT CASE WHEN tot.n = 0 THEN 'the trace has no CPU samples of it to name it'
                      ELSE printf('%d stacks: %s', tot.n, (SELECT group_concat(x, ', ') FROM
                           (SELECT printf('%s %d%%', fr, CAST(ROUND(100.0 * n / tot.n) AS INTEGER)) AS x FROM agg ORDER BY n DESC, fr LIMIT 5)))
                 END AS txt FROM tot)
SELECT 'main thread outside slices' AS location, 1 AS count,
       ROUND((run.d - ins.d) / 1e6, 3) AS self_ms, ROUND(run.d / 1e6, 3) AS total_ms,
       ROUND((run.d - ins.d) / 1e6, 3) AS max_ms, ROUND((run.d - ins.d) / 1e6, 3) AS covered_ms,
       printf('%.1f%% of the main thread''s CPU time; %s', 100.0 * (run.d - ins.d) / MAX(run.d, 1), quote.txt) AS detail
FROM run, ins, quote WHERE run.d - ins.d >= {{min_ms}} * 1e6
