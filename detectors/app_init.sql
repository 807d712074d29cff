-- SPDX-License-Identifier: Apache-2.0
-- @id app_init
-- @title Application start-up work
-- @why The framework's start-up slices on the main thread (bindApplication, activityStart, activityResume, Application.onCreate, inflate during launch) are what a cold start waits for: the name_glob masks (GLOB, separated by '|'), less the names another detector's name_glob claims.
-- @param: min_ms = 20
-- @param: name_glob = 'bindApplication|activityStart|activityResume|activityRestart|Application.onCreate|OpenDexFilesFromOat|PostFork|ActivityThreadMain|performCreate*'
-- @identity: location
-- @module: context
SELECT name AS location, COUNT(*) AS count,
       ROUND(SUM(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6, 3) AS self_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS total_ms, ROUND(MAX(s.dur_win) / 1e6, 3) AS max_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS covered_ms, 'start-up phase' AS detail
FROM _slice_win s LEFT JOIN _child_sum c USING (id)
WHERE s.is_main AND EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector = 'app_init' AND name GLOB g.glob)
  AND NOT EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector <> 'app_init' AND name GLOB g.glob)
GROUP BY name HAVING SUM(s.dur_win) >= {{min_ms}} * 1e6 ORDER BY total_ms DESC
-- @intervals
SELECT s.ts, s.dur_win AS dur FROM _slice_win s JOIN _rows r ON r.location = s.name WHERE s.is_main
