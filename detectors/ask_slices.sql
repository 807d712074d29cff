-- SPDX-License-Identifier: Apache-2.0
-- @id ask_slices
-- @question: slices
-- @title The main thread's slowest slices, by self time
-- @why A slice's self time is its own code, its children subtracted, so the row names the work, not what waited for it. One frame at 60 Hz is 16.7 ms. Top-level (depth 0) slices are left out: a scenario anchor (AppStart around a whole start-up) spans idle time that is no one's work.
-- @param: min_ms = 16
-- @param: error_ms = 100
-- @param: limit = 10
-- @identity: location
-- @module: context
SELECT s.name AS location, COUNT(*) AS count,
       ROUND(SUM(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6, 3) AS self_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS total_ms,
       ROUND(MAX(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6, 3) AS max_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS covered_ms,
       printf('%.1f ms of its own time (%.1f ms with its children), depth %d', SUM(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6,
              SUM(s.dur_win) / 1e6, MIN(s.depth)) || CASE WHEN MAX(s.unfinished) THEN ', one still open at the end' ELSE '' END AS detail,
       CASE WHEN MAX(s.dur_win - COALESCE(c.child_dur, 0)) >= {{error_ms}} * 1e6 THEN 'error' ELSE 'warning' END AS severity,
       'observed' AS confidence, 'Slow on the main thread: ' || s.name AS title,
       MIN(MAX(s.ts, (SELECT ts FROM _window))) AS from_ts, MAX(MAX(s.ts, (SELECT ts FROM _window)) + s.dur_win) AS to_ts
FROM _slice_win s LEFT JOIN _child_sum c USING (id)
WHERE s.is_main AND s.depth > 0 AND s.dur_win - COALESCE(c.child_dur, 0) >= {{min_ms}} * 1e6
GROUP BY s.name ORDER BY self_ms DESC LIMIT {{limit}}
-- @unanswered
SELECT 'no slices on the main thread: the app wrote no trace markers (atrace, Trace.beginSection, porthole marks) while it was traced' AS reason
WHERE NOT EXISTS (SELECT 1 FROM _slice_win WHERE is_main)
-- @ruled_out
SELECT 'main-thread slices with {{min_ms}} ms or more of their own time: none' WHERE NOT EXISTS (SELECT 1 FROM _rows)
