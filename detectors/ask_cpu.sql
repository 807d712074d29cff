-- SPDX-License-Identifier: Apache-2.0
-- @id ask_cpu
-- @question: cpu
-- @title Where the process's CPU time went
-- @why CPU time per thread from the scheduler (what the app really ran, instrumented or not), and the main thread's CPU time inside no top-level slice (work the trace cannot name). Notes unless the main thread ran uninstrumented for unnamed_ms or more. Then what the CPU ran at: the main thread's time on a CPU running below half that CPU's peak frequency (a warning from low_freq_ms: the same work took longer), and each cooling device that throttled during the window (a warning, correlated: the throttling and the work coincided; self_ms is the main thread's CPU time while it lasted).
-- @param: min_ms = 20
-- @param: unnamed_ms = 50
-- @param: low_freq_ms = 10
-- @identity: location
-- @module: context
WITH run AS (SELECT utid, thread_name, is_main, ts, dur FROM _tstate_win WHERE state = 'Running'),
per AS (SELECT thread_name || CASE WHEN MAX(is_main) THEN ' (main thread)' ELSE '' END AS location, COUNT(*) AS count,
               SUM(dur) AS d, MAX(dur) AS m, MIN(ts) AS f, MAX(ts + dur) AS t
        FROM run GROUP BY utid HAVING SUM(dur) >= {{min_ms}} * 1e6),
mrun AS (SELECT COALESCE(SUM(dur), 0) AS d, MIN(ts) AS f, MAX(ts + dur) AS t FROM run WHERE is_main),
ins AS (SELECT COALESCE(SUM(c.cpu_dur), 0) AS d FROM _cpu_in_slice c JOIN _slice_win s USING (id) WHERE s.depth = 0),
low AS (SELECT COUNT(*) AS n, COALESCE(SUM(dur), 0) AS d, MAX(dur) AS m, MIN(khz) AS khz, MAX(peak_khz) AS peak,
               MIN(ts) AS f, MAX(ts + dur) AS t FROM _run_lowfreq WHERE is_main),
-- the low time per cluster (CPUs of one peak): a little core is only compared with its own peak
lowc AS (SELECT group_concat(printf('%s %s (peak %.0f kHz) %.1f ms, as low as %.0f kHz',
                                    CASE WHEN c.ncpu = 1 THEN 'CPU' ELSE 'CPUs' END, c.cpus, x.peak, x.d / 1e6, x.khz), '; ') AS txt
         FROM (SELECT peak_khz AS peak, SUM(dur) AS d, MIN(khz) AS khz FROM _run_lowfreq WHERE is_main
               GROUP BY peak_khz ORDER BY peak_khz) x JOIN _cpu_cluster c ON c.peak = x.peak),
rmx AS (SELECT COALESCE(MAX(dur), 0) AS d FROM run),
-- the main thread's time on a CPU while each device throttled (searched through the (utid, ts) index,
-- from the longest Running stretch before each throttled one)
thr AS (SELECT device, COUNT(*) AS n, SUM(dur) AS d, MAX(dur) AS m, MAX(state) AS top, MIN(ts) AS f, MAX(ts + dur) AS t,
               (SELECT COALESCE(SUM(MIN(r.ts + r.dur, h.ts + h.dur) - MAX(r.ts, h.ts)), 0)
                FROM _throttle h JOIN _threads th ON th.is_main JOIN _tstate_win r ON r.utid = th.utid
                AND r.ts >= h.ts - (SELECT d FROM rmx) AND r.ts < h.ts + h.dur
                WHERE h.device = x.device AND r.state = 'Running' AND r.ts + r.dur > h.ts) AS mine
        FROM _throttle x GROUP BY device)
SELECT location, count, ROUND(d / 1e6, 3) AS self_ms, ROUND(d / 1e6, 3) AS total_ms, ROUND(m / 1e6, 3) AS max_ms,
       0 AS covered_ms, printf('%.1f ms on a CPU', d / 1e6) AS detail, 'note' AS severity, 'observed' AS confidence,
       'CPU time: ' || location AS title, f AS from_ts, t AS to_ts
FROM per
UNION ALL
SELECT 'main thread outside slices', 1, ROUND((mrun.d - ins.d) / 1e6, 3), ROUND(mrun.d / 1e6, 3), ROUND((mrun.d - ins.d) / 1e6, 3), 0,
       printf('%.1f%% of the main thread''s CPU time is in no top-level slice', 100.0 * (mrun.d - ins.d) / MAX(mrun.d, 1)),
       'warning', 'observed', 'Main thread CPU time no slice explains', NULL, NULL
FROM mrun, ins WHERE mrun.d - ins.d >= {{unnamed_ms}} * 1e6
UNION ALL
SELECT 'main thread at a low CPU frequency', low.n, ROUND(low.d / 1e6, 3), ROUND(mrun.d / 1e6, 3), ROUND(low.m / 1e6, 3), 0,
       printf('%.1f ms of the main thread''s %.1f ms on a CPU ran below half the CPU''s peak frequency: %s',
              low.d / 1e6, mrun.d / 1e6, lowc.txt),
       'warning', 'observed', 'Main thread ran at a low CPU frequency', low.f, low.t
FROM low, mrun, lowc WHERE low.d >= {{low_freq_ms}} * 1e6
UNION ALL
SELECT 'thermal throttling: ' || device, n, ROUND(mine / 1e6, 3), ROUND(d / 1e6, 3), ROUND(m / 1e6, 3), 0,
       printf('cooling device %s above state 0 (up to %d) for %.1f ms of the window; the main thread ran %.1f ms of that time',
              device, CAST(top AS INTEGER), d / 1e6, mine / 1e6),
       'warning', 'correlated', 'Throttled for heat while the app ran', f, t
FROM thr
ORDER BY self_ms DESC
-- @unanswered
SELECT 'the trace has no scheduling data (sched_switch) for the process' AS reason
WHERE NOT EXISTS (SELECT 1 FROM _tstate_win)
-- @ruled_out
SELECT 'uninstrumented CPU time on the main thread: under {{unnamed_ms}} ms' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location = 'main thread outside slices')
UNION ALL SELECT 'a low CPU frequency: the trace has cpufreq, and the main thread ran under {{low_freq_ms}} ms on a CPU below half its peak frequency'
WHERE EXISTS (SELECT 1 FROM _env_win WHERE kind = 'cpufreq') AND NOT EXISTS (SELECT 1 FROM _rows WHERE location = 'main thread at a low CPU frequency')
UNION ALL SELECT 'thermal throttling: the trace has cooling devices, and none went above state 0 during the window'
WHERE EXISTS (SELECT 1 FROM _env_win WHERE kind = 'cooling') AND NOT EXISTS (SELECT 1 FROM _throttle)
