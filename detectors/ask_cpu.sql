-- @id ask_cpu
-- @question: cpu
-- @title Where the process's CPU time went
-- @why CPU time per thread from the scheduler (what the app really ran, instrumented or not), and the main thread's CPU time inside no top-level slice (work the trace cannot name). Notes unless the main thread ran uninstrumented for unnamed_ms or more.
-- @param: min_ms = 20
-- @param: unnamed_ms = 50
-- @identity: location
-- @module: context
WITH run AS (SELECT utid, thread_name, is_main, ts, dur FROM _tstate_win WHERE state = 'Running'),
per AS (SELECT thread_name || CASE WHEN MAX(is_main) THEN ' (main thread)' ELSE '' END AS location, COUNT(*) AS count,
               SUM(dur) AS d, MAX(dur) AS m, MIN(ts) AS f, MAX(ts + dur) AS t
        FROM run GROUP BY utid HAVING SUM(dur) >= {{min_ms}} * 1e6),
mrun AS (SELECT COALESCE(SUM(dur), 0) AS d, MIN(ts) AS f, MAX(ts + dur) AS t FROM run WHERE is_main),
ins AS (SELECT COALESCE(SUM(c.cpu_dur), 0) AS d FROM _cpu_in_slice c JOIN _slice_win s USING (id) WHERE s.depth = 0)
SELECT location, count, ROUND(d / 1e6, 3) AS self_ms, ROUND(d / 1e6, 3) AS total_ms, ROUND(m / 1e6, 3) AS max_ms,
       0 AS covered_ms, printf('%.1f ms on a CPU', d / 1e6) AS detail, 'note' AS severity, 'observed' AS confidence,
       'CPU time: ' || location AS title, f AS from_ts, t AS to_ts
FROM per
UNION ALL
SELECT 'main thread outside slices', 1, ROUND((mrun.d - ins.d) / 1e6, 3), ROUND(mrun.d / 1e6, 3), ROUND((mrun.d - ins.d) / 1e6, 3), 0,
       printf('%.1f%% of the main thread''s CPU time is in no top-level slice', 100.0 * (mrun.d - ins.d) / MAX(mrun.d, 1)),
       'warning', 'observed', 'Main thread CPU time no slice explains', NULL, NULL
FROM mrun, ins WHERE mrun.d - ins.d >= {{unnamed_ms}} * 1e6
ORDER BY self_ms DESC
-- @unanswered
SELECT 'the trace has no scheduling data (sched_switch) for the process' AS reason
WHERE NOT EXISTS (SELECT 1 FROM _tstate_win)
-- @ruled_out
SELECT 'uninstrumented CPU time on the main thread: under {{unnamed_ms}} ms' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location = 'main thread outside slices')
UNION ALL SELECT 'a low CPU frequency: the trace has cpufreq and no CPU sat below half its peak during the window'
WHERE EXISTS (SELECT 1 FROM counter c JOIN cpu_counter_track t ON c.track_id = t.id WHERE t.name = 'cpufreq')
  AND NOT EXISTS (SELECT 1 FROM counter c JOIN cpu_counter_track t ON c.track_id = t.id WHERE t.name = 'cpufreq'
                  AND c.ts BETWEEN (SELECT ts FROM _window) AND (SELECT end_ts FROM _window)
                  AND c.value < 0.5 * (SELECT MAX(c2.value) FROM counter c2 WHERE c2.track_id = c.track_id))
