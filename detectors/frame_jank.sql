-- @id frame_jank
-- @title Janky frames (frame timeline)
-- @why SurfaceFlinger's frame timeline judged these frames of the process late; self_ms is the time past the deadline (actual end minus expected end), grouped by the field's jank type.
-- @param: min_late_ms = 0
-- @identity: location
-- @module: context
WITH a AS (SELECT f.*, e.ts + e.dur AS deadline FROM actual_frame_timeline_slice f
           JOIN expected_frame_timeline_slice e ON e.upid = f.upid AND e.name = f.name
           AND e.is_surface = f.is_surface
           WHERE f.upid = (SELECT upid FROM _proc) AND f.jank_type NOT IN ('None', 'Unspecified')
           AND f.ts < (SELECT end_ts FROM _window) AND f.ts + f.dur > (SELECT ts FROM _window))
SELECT jank_type AS location, COUNT(*) AS count,
       ROUND(SUM(MAX(0, ts + dur - deadline)) / 1e6, 3) AS self_ms,
       ROUND(SUM(dur) / 1e6, 3) AS total_ms, ROUND(MAX(MAX(0, ts + dur - deadline)) / 1e6, 3) AS max_ms,
       ROUND(SUM(dur) / 1e6, 3) AS covered_ms,
       printf('%d frame(s); present: %s', COUNT(*), GROUP_CONCAT(DISTINCT present_type)) AS detail
FROM a WHERE ts + dur - deadline >= {{min_late_ms}} * 1e6
GROUP BY jank_type ORDER BY self_ms DESC
-- @intervals
SELECT f.ts, f.dur FROM actual_frame_timeline_slice f
WHERE f.upid = (SELECT upid FROM _proc) AND f.jank_type NOT IN ('None', 'Unspecified') AND f.dur > 0
