-- SPDX-License-Identifier: Apache-2.0
-- @id ask_render
-- @question: render
-- @title Frames that took longer than a refresh to produce
-- @why A frame is produced by Choreographer#doFrame on the main thread (input, animation, measure, layout, draw) and DrawFrame on the RenderThread (GPU commands); either one past the frame budget misses a refresh.
-- @param: budget_ms = 16.7
-- @identity: location
-- @module: context
SELECT thread_name || ': ' || CASE WHEN name LIKE 'Choreographer#doFrame%' THEN 'Choreographer#doFrame' ELSE 'DrawFrame' END AS location,
       COUNT(*) AS count, ROUND(SUM(dur_win) / 1e6, 3) AS self_ms, ROUND(SUM(dur_win) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur_win) / 1e6, 3) AS max_ms, ROUND(SUM(dur_win) / 1e6, 3) AS covered_ms,
       printf('%d over the %.1f ms budget, the longest %.1f ms', COUNT(*), {{budget_ms}}, MAX(dur_win) / 1e6) AS detail,
       CASE WHEN MAX(dur_win) >= 3 * {{budget_ms}} * 1e6 THEN 'error' ELSE 'warning' END AS severity,
       'observed' AS confidence,
       CASE WHEN MAX(is_main) THEN 'Slow frame on the main thread' ELSE 'Slow frame on the RenderThread' END AS title,
       MIN(MAX(ts, (SELECT ts FROM _window))) AS from_ts, MAX(MAX(ts, (SELECT ts FROM _window)) + dur_win) AS to_ts
FROM _slice_win
WHERE (name LIKE 'Choreographer#doFrame%' AND is_main OR name LIKE 'DrawFrame%') AND dur_win > {{budget_ms}} * 1e6
GROUP BY location ORDER BY self_ms DESC
-- @unanswered
SELECT 'no Choreographer#doFrame or DrawFrame slices in the process: the view and gfx atrace categories were off, or it drew nothing' AS reason
WHERE NOT EXISTS (SELECT 1 FROM _slice_win WHERE name LIKE 'Choreographer#doFrame%' OR name LIKE 'DrawFrame%')
-- @ruled_out
SELECT 'slow Choreographer#doFrame on the main thread: none over {{budget_ms}} ms' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE '%Choreographer#doFrame')
UNION ALL SELECT 'slow DrawFrame on the RenderThread: none over {{budget_ms}} ms' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE '%DrawFrame')
