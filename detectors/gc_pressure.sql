-- SPDX-License-Identifier: Apache-2.0
-- @id gc_pressure
-- @title Garbage collection pressure
-- @why Time the process spent in GC slices (ART's "... GC" slices and waits for them). On the main thread it is a pause; elsewhere it takes CPU from the app. The slice names are name_glob's masks (GLOB, separated by '|').
-- @param: min_ms = 20
-- @param: name_glob = '*GC*|WaitForGcToComplete*'
-- @identity: location
-- @module: context
SELECT thread_name || ': ' || name AS location, COUNT(*) AS count,
       ROUND(SUM(dur_win) / 1e6, 3) AS self_ms, ROUND(SUM(dur_win) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur_win) / 1e6, 3) AS max_ms, ROUND(SUM(dur_win) / 1e6, 3) AS covered_ms,
       CASE WHEN MAX(is_main) THEN 'on the main thread' ELSE 'on a background thread' END AS detail
FROM _slice_win WHERE depth = 0 AND EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector = 'gc_pressure' AND name GLOB g.glob)
GROUP BY location HAVING SUM(dur_win) >= {{min_ms}} * 1e6 ORDER BY self_ms DESC
-- @intervals
SELECT ts, dur_win AS dur FROM _slice_win WHERE is_main AND EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector = 'gc_pressure' AND name GLOB g.glob)
