-- SPDX-License-Identifier: Apache-2.0
-- @id anr
-- @title Application Not Responding
-- @why An ANR in the log, or a main-thread slice of 5 s or more. Not clipped to the window: an ANR just outside it is still the answer. covered_ms is 0 because it bends the column contract (the stretch can lie outside the window).
-- @param: anr_ms = 5000
-- @identity: location
-- @module: context
SELECT 'ANR: ' || msg AS location, 1 AS count, 0 AS self_ms, 0 AS total_ms, 0 AS max_ms, 0 AS covered_ms,
       'from the log at ' || ts AS detail
FROM android_logs WHERE msg LIKE 'ANR in %' AND msg LIKE '%' || (SELECT name FROM _proc) || '%'
UNION ALL
SELECT 'main thread: ' || s.name, COUNT(*), ROUND(SUM(s.dur) / 1e6, 3), ROUND(SUM(s.dur) / 1e6, 3),
       ROUND(MAX(s.dur) / 1e6, 3), 0, 'slice of ' || {{anr_ms}} || ' ms or more'
FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN _threads th ON th.utid = tt.utid
WHERE th.is_main AND s.depth = 0 AND s.dur >= {{anr_ms}} * 1e6 GROUP BY s.name
