-- SPDX-License-Identifier: Apache-2.0
-- @id composables
-- @title Compose recompositions that took long or came often
-- @why Jetpack Compose marks its work on the main thread with slices named "Recompose:..." and "Compose:..." (the runtime's and the composition tracing's names; name_glob's masks, GLOB, separated by '|'). One that takes long_ms or more (half a 60 Hz frame) is a recomposition the user may see as a dropped frame; one name recomposed min_count times or more in the window is state that changes too often or is read too high in the tree. A row is one slice name; count is how often it ran, self_ms its own time (children subtracted), total_ms with its children.
-- @param: long_ms = 8
-- @param: min_count = 30
-- @param: name_glob = 'Recompose:*|Recomposer:*|Compose:*'
-- @identity: location
-- @module: context
WITH c AS (SELECT s.id, s.ts, s.dur_win, s.name, s.unfinished, s.dur_win - COALESCE(k.child_dur, 0) AS self
           FROM _slice_win s LEFT JOIN _child_sum k USING (id)
           WHERE s.is_main AND EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector = 'composables' AND s.name GLOB g.glob))
SELECT name AS location, COUNT(*) AS count,
       ROUND(SUM(self) / 1e6, 3) AS self_ms, ROUND(SUM(dur_win) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur_win) / 1e6, 3) AS max_ms, ROUND(SUM(dur_win) / 1e6, 3) AS covered_ms,
       printf('%d on the main thread, %d of them %g ms or longer (the longest %.1f ms)%s', COUNT(*),
              SUM(dur_win >= {{long_ms}} * 1e6), {{long_ms}}, MAX(dur_win) / 1e6,
              CASE WHEN COUNT(*) >= {{min_count}} THEN printf('; recomposed %d times', COUNT(*)) ELSE '' END ||
              CASE WHEN MAX(unfinished) THEN ' (one still open at the end)' ELSE '' END) AS detail
FROM c GROUP BY name
HAVING MAX(dur_win) >= {{long_ms}} * 1e6 OR COUNT(*) >= {{min_count}}
ORDER BY total_ms DESC
-- @intervals
SELECT s.ts, s.dur_win AS dur FROM _slice_win s JOIN _rows r ON r.location = s.name WHERE s.is_main
