-- SPDX-License-Identifier: Apache-2.0
-- @id anr_risk
-- @title Longest stretch away from the message loop
-- @why A top-level main-thread slice is one message or frame; while it runs, input waits. The longest ones with nested work inside (depth >= 1 evidence) are the ANR risk: 5 s of this is an ANR. A scenario anchor (a top-level slice that spans the whole window, such as AppStart around a start-up) is not one message and is left out.
-- @param: min_ms = 100
-- @identity: location
-- @module: context
SELECT s.name AS location, COUNT(*) AS count,
       ROUND(SUM(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6, 3) AS self_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS total_ms, ROUND(MAX(s.dur_win) / 1e6, 3) AS max_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS covered_ms,
       printf('%d nested slice(s) as evidence', SUM((SELECT COUNT(*) FROM _slice_win k WHERE k.parent_id = s.id))) AS detail
FROM _slice_win s LEFT JOIN _child_sum c USING (id)
WHERE s.is_main AND s.depth = 0 AND s.dur_win >= {{min_ms}} * 1e6 AND c.child_dur IS NOT NULL
  AND NOT (s.ts <= (SELECT ts FROM _window) AND (s.unfinished OR s.ts + s.dur >= (SELECT end_ts FROM _window)))
GROUP BY s.name ORDER BY max_ms DESC LIMIT 5
-- @intervals
SELECT s.ts, s.dur_win AS dur FROM _slice_win s JOIN _rows r ON r.location = s.name
WHERE s.is_main AND s.depth = 0 AND s.dur_win >= {{min_ms}} * 1e6
  AND NOT (s.ts <= (SELECT ts FROM _window) AND (s.unfinished OR s.ts + s.dur >= (SELECT end_ts FROM _window)))
