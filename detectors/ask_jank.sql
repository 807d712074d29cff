-- @id ask_jank
-- @question: jank
-- @title Janky frames of the app
-- @why SurfaceFlinger's frame timeline judged each frame of the app against its deadline; a late frame is jank the user saw. Grouped by the field's jank type; self_ms is the time past the deadline. A type whose frames all ended by their deadline (early presents, prediction errors) is a note.
-- @param: error_count = 10
-- @param: error_late_ms = 100
-- @identity: location
-- @module: context
WITH f AS (SELECT a.ts, a.dur, a.jank_type, a.present_type, MAX(0, a.ts + a.dur - e.ts - e.dur) AS late
           FROM actual_frame_timeline_slice a
           JOIN expected_frame_timeline_slice e ON e.upid = a.upid AND e.name = a.name AND e.is_surface = a.is_surface
           WHERE a.upid = (SELECT upid FROM _proc) AND a.jank_type NOT IN ('None', 'Unspecified') AND a.dur > 0
           AND a.ts < (SELECT end_ts FROM _window) AND a.ts + a.dur > (SELECT ts FROM _window))
SELECT jank_type AS location, COUNT(*) AS count, ROUND(SUM(late) / 1e6, 3) AS self_ms,
       ROUND(SUM(dur) / 1e6, 3) AS total_ms, ROUND(MAX(late) / 1e6, 3) AS max_ms,
       ROUND(SUM(dur) / 1e6, 3) AS covered_ms,
       printf('%d janky frame(s) (%s), %.1f ms past their deadlines in all', COUNT(*),
              GROUP_CONCAT(DISTINCT present_type), SUM(late) / 1e6) AS detail,
       CASE WHEN MAX(late) = 0 THEN 'note' WHEN COUNT(*) >= {{error_count}} OR MAX(late) >= {{error_late_ms}} * 1e6 THEN 'error' ELSE 'warning' END AS severity,
       'observed' AS confidence, 'Janky frames: ' || jank_type AS title,
       MIN(ts) AS from_ts, MAX(ts + dur) AS to_ts
FROM f GROUP BY jank_type ORDER BY self_ms DESC
-- @unanswered
SELECT 'the trace has no frame timeline for this process (SurfaceFlinger frame timeline, Android 12 and later)' AS reason
WHERE NOT EXISTS (SELECT 1 FROM actual_frame_timeline_slice WHERE upid = (SELECT upid FROM _proc))
-- @ruled_out
SELECT 'the app missing its frame deadline (App Deadline Missed): no frame of the window did' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE '%App Deadline Missed%')
UNION ALL SELECT 'SurfaceFlinger-side jank (its CPU or GPU deadline, scheduling, the display HAL): none in the window' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE '%SurfaceFlinger%' OR location LIKE '%Display HAL%')
UNION ALL SELECT 'buffer stuffing: none in the window' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE '%Buffer Stuffing%')
