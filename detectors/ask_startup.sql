-- SPDX-License-Identifier: Apache-2.0
-- @id ask_startup
-- @question: startup
-- @title The app's start-up, phase by phase
-- @why The framework's start-up slices on the main thread (bindApplication, Application.onCreate, activityStart, activityResume, inflate during launch) are what a cold start waits for; a phase of slow_ms or more is a warning. A start-up is also slow because the CPU was: the main thread's time on a CPU below half that CPU's peak frequency during the start-up (a warning from low_freq_ms), and each cooling device that throttled during it (a warning, correlated; self_ms is the time it overlapped the start-up).
-- @param: slow_ms = 50
-- @param: low_freq_ms = 10
-- @identity: location
-- @module: context
WITH su AS (SELECT s.*, COALESCE(c.child_dur, 0) AS child_dur FROM _slice_win s LEFT JOIN _child_sum c USING (id)
            WHERE s.is_main AND (s.name IN ('bindApplication', 'activityStart', 'activityResume', 'activityRestart',
                  'Application.onCreate', 'OpenDexFilesFromOat', 'PostFork', 'ActivityThreadMain') OR s.name LIKE 'performCreate%')),
span AS (SELECT MIN(MAX(ts, (SELECT ts FROM _window))) AS f, MAX(MAX(ts, (SELECT ts FROM _window)) + dur_win) AS t FROM su),
mrun AS (SELECT COALESCE(SUM(MIN(r.ts + r.dur, span.t) - MAX(r.ts, span.f)), 0) AS d FROM _tstate_win r, span
         WHERE r.is_main AND r.state = 'Running' AND r.ts < span.t AND r.ts + r.dur > span.f),
low AS (SELECT COUNT(*) AS n, COALESCE(SUM(MIN(l.ts + l.dur, span.t) - MAX(l.ts, span.f)), 0) AS d,
               MAX(MIN(l.ts + l.dur, span.t) - MAX(l.ts, span.f)) AS m, MIN(l.khz) AS khz, MAX(l.peak_khz) AS peak,
               MIN(MAX(l.ts, span.f)) AS f, MAX(MIN(l.ts + l.dur, span.t)) AS t
        FROM _run_lowfreq l, span WHERE l.is_main AND l.ts < span.t AND l.ts + l.dur > span.f),
-- the low time per cluster (CPUs of one peak): a little core is only compared with its own peak
lowc AS (SELECT group_concat(printf('%s %s (peak %.0f kHz) %.1f ms, as low as %.0f kHz',
                                    CASE WHEN c.ncpu = 1 THEN 'CPU' ELSE 'CPUs' END, c.cpus, x.peak, x.d / 1e6, x.khz), '; ') AS txt
         FROM (SELECT l.peak_khz AS peak, SUM(MIN(l.ts + l.dur, span.t) - MAX(l.ts, span.f)) AS d, MIN(l.khz) AS khz
               FROM _run_lowfreq l, span WHERE l.is_main AND l.ts < span.t AND l.ts + l.dur > span.f
               GROUP BY l.peak_khz ORDER BY l.peak_khz) x JOIN _cpu_cluster c ON c.peak = x.peak),
thr AS (SELECT h.device, COUNT(*) AS n, SUM(MIN(h.ts + h.dur, span.t) - MAX(h.ts, span.f)) AS d,
               MAX(MIN(h.ts + h.dur, span.t) - MAX(h.ts, span.f)) AS m, MAX(h.state) AS top,
               MIN(MAX(h.ts, span.f)) AS f, MAX(MIN(h.ts + h.dur, span.t)) AS t
        FROM _throttle h, span WHERE h.ts < span.t AND h.ts + h.dur > span.f GROUP BY h.device)
SELECT name AS location, COUNT(*) AS count,
       ROUND(SUM(dur_win - child_dur) / 1e6, 3) AS self_ms,
       ROUND(SUM(dur_win) / 1e6, 3) AS total_ms, ROUND(MAX(dur_win) / 1e6, 3) AS max_ms,
       ROUND(SUM(dur_win) / 1e6, 3) AS covered_ms,
       printf('start-up phase: %.1f ms', SUM(dur_win) / 1e6) AS detail,
       CASE WHEN MAX(dur_win) >= {{slow_ms}} * 1e6 THEN 'warning' ELSE 'note' END AS severity,
       'observed' AS confidence, 'Start-up: ' || name AS title,
       MIN(MAX(ts, (SELECT ts FROM _window))) AS from_ts, MAX(MAX(ts, (SELECT ts FROM _window)) + dur_win) AS to_ts
FROM su GROUP BY name
UNION ALL
SELECT 'start-up at a low CPU frequency', low.n, ROUND(low.d / 1e6, 3), ROUND(mrun.d / 1e6, 3), ROUND(low.m / 1e6, 3), 0,
       printf('%.1f ms of the main thread''s %.1f ms on a CPU during the start-up ran below half the CPU''s peak frequency: %s',
              low.d / 1e6, mrun.d / 1e6, lowc.txt),
       'warning', 'observed', 'Start-up ran at a low CPU frequency', low.f, low.t
FROM low, mrun, lowc WHERE low.d >= {{low_freq_ms}} * 1e6
UNION ALL
SELECT 'start-up throttled: ' || device, n, ROUND(d / 1e6, 3), ROUND(d / 1e6, 3), ROUND(m / 1e6, 3), 0,
       printf('cooling device %s above state 0 (up to %d) for %.1f ms of the start-up', device, CAST(top AS INTEGER), d / 1e6),
       'warning', 'correlated', 'Throttled for heat during the start-up', f, t
FROM thr
ORDER BY from_ts
-- @unanswered
SELECT 'the window does not contain the app''s start (no bindApplication, activityStart or Application.onCreate slice on its main thread)' AS reason
WHERE NOT EXISTS (SELECT 1 FROM _slice_win WHERE is_main AND (name IN ('bindApplication', 'activityStart', 'activityResume',
      'Application.onCreate', 'ActivityThreadMain') OR name LIKE 'performCreate%'))
-- @ruled_out
SELECT 'a slow start-up phase: none took {{slow_ms}} ms or more'
WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE max_ms >= {{slow_ms}} AND location NOT LIKE 'start-up %')
UNION ALL SELECT 'a low CPU frequency during the start-up: the trace has cpufreq, and its main thread ran under {{low_freq_ms}} ms on a CPU below half its peak frequency'
WHERE EXISTS (SELECT 1 FROM _env_win WHERE kind = 'cpufreq') AND NOT EXISTS (SELECT 1 FROM _rows WHERE location = 'start-up at a low CPU frequency')
UNION ALL SELECT 'thermal throttling during the start-up: the trace has cooling devices, and none was above state 0 while it ran'
WHERE EXISTS (SELECT 1 FROM _env_win WHERE kind = 'cooling') AND NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE 'start-up throttled: %')
