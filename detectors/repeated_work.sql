-- SPDX-License-Identifier: Apache-2.0
-- @id repeated_work
-- @title The same work done over and over
-- @why One slice name on the main thread ran many times and added up: inflation, layout or a query repeated per item or per frame is often cacheable. Names another detector reports (its name_glob masks, overrides applied: monitor contention, GC, binder, start-up) are left to it.
-- @param: min_count = 20
-- @param: min_total_ms = 50
-- @identity: location
-- @module: context
SELECT name AS location, COUNT(*) AS count,
       ROUND(SUM(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6, 3) AS self_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS total_ms, ROUND(MAX(s.dur_win) / 1e6, 3) AS max_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS covered_ms,
       printf('%.3f ms on average', AVG(s.dur_win) / 1e6) AS detail
FROM _slice_win s LEFT JOIN _child_sum c USING (id)
WHERE s.is_main AND s.depth > 0
  AND NOT EXISTS (SELECT 1 FROM _claimed_name g WHERE s.name GLOB g.glob)
GROUP BY name HAVING COUNT(*) >= {{min_count}} AND SUM(s.dur_win) >= {{min_total_ms}} * 1e6
ORDER BY total_ms DESC
-- @intervals
SELECT s.ts, s.dur_win AS dur FROM _slice_win s JOIN _rows r ON r.location = s.name WHERE s.is_main
