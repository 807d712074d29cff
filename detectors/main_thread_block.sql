-- SPDX-License-Identifier: Apache-2.0
-- @id main_thread_block
-- @title Main thread blocked by long work
-- @why The main thread spent this long in one slice's own code (self time: its children are subtracted, so the row names the slice that did the work, not the one that waited for it). One frame is 16.7 ms at 60 Hz. Top-level (depth 0) slices are left out: a scenario anchor (AppStart around a whole start-up) spans idle time that is no one's work.
-- @param: min_ms = 16
-- @identity: location
-- @module: context
SELECT s.name AS location, COUNT(*) AS count,
       ROUND(SUM(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6, 3) AS self_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS total_ms,
       ROUND(MAX(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6, 3) AS max_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS covered_ms,
       'self time >= {{min_ms}} ms on the main thread' ||
       CASE WHEN MAX(s.unfinished) THEN ' (one still open at the end)' ELSE '' END AS detail
FROM _slice_win s LEFT JOIN _child_sum c USING (id)
WHERE s.is_main AND s.depth > 0 AND s.dur_win - COALESCE(c.child_dur, 0) >= {{min_ms}} * 1e6
GROUP BY s.name ORDER BY self_ms DESC
-- @intervals
SELECT s.ts, s.dur_win AS dur FROM _slice_win s LEFT JOIN _child_sum c USING (id)
WHERE s.is_main AND s.depth > 0 AND s.dur_win - COALESCE(c.child_dur, 0) >= {{min_ms}} * 1e6
