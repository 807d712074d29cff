-- SPDX-License-Identifier: Apache-2.0
-- @id monitor_contention
-- @title Lock (monitor) contention
-- @why ART marks a thread that waits for a Java monitor held by another thread with a "monitor contention with owner ..." slice. Fires on one long wait (long_ms) or many short ones (min_count and total_ms). The slice names are name_glob's masks (GLOB, separated by '|').
-- @param: long_ms = 5
-- @param: name_glob = '*monitor contention*|Lock contention*'
-- @param: min_count = 10
-- @param: total_ms = 20
-- @identity: location
-- @module: context
SELECT thread_name || ': ' || substr(name, 1, 120) AS location, COUNT(*) AS count,
       ROUND(SUM(dur_win) / 1e6, 3) AS self_ms, ROUND(SUM(dur_win) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur_win) / 1e6, 3) AS max_ms, ROUND(SUM(dur_win) / 1e6, 3) AS covered_ms,
       CASE WHEN MAX(dur_win) >= {{long_ms}} * 1e6 THEN 'one long wait' ELSE 'many short waits' END AS detail
FROM _slice_win WHERE EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector = 'monitor_contention' AND name GLOB g.glob)
GROUP BY location
HAVING MAX(dur_win) >= {{long_ms}} * 1e6 OR (COUNT(*) >= {{min_count}} AND SUM(dur_win) >= {{total_ms}} * 1e6)
-- @intervals
SELECT ts, dur_win AS dur FROM _slice_win WHERE is_main AND EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector = 'monitor_contention' AND name GLOB g.glob)
