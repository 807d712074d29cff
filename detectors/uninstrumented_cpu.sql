-- @id uninstrumented_cpu
-- @title Main thread CPU time no slice explains
-- @why The main thread was Running outside every top-level slice: work the trace cannot name (no atrace section around it). Add a section, or sample it.
-- @param: min_ms = 50
-- @identity: location
-- @module: context
WITH run AS (SELECT COALESCE(SUM(dur), 0) AS d FROM _tstate_win WHERE is_main AND state = 'Running'),
ins AS (SELECT COALESCE(SUM(c.cpu_dur), 0) AS d FROM _cpu_in_slice c JOIN _slice_win s USING (id) WHERE s.depth = 0)
SELECT 'main thread outside slices' AS location, 1 AS count,
       ROUND((run.d - ins.d) / 1e6, 3) AS self_ms, ROUND(run.d / 1e6, 3) AS total_ms,
       ROUND((run.d - ins.d) / 1e6, 3) AS max_ms, ROUND((run.d - ins.d) / 1e6, 3) AS covered_ms,
       printf('%.1f%% of the main thread''s CPU time', 100.0 * (run.d - ins.d) / MAX(run.d, 1)) AS detail
FROM run, ins WHERE run.d - ins.d >= {{min_ms}} * 1e6
