-- SPDX-License-Identifier: Apache-2.0
-- @id ask_jank
-- @question: jank
-- @title Janky frames of the app
-- @why SurfaceFlinger's frame timeline judged each frame of the app against its deadline; a late frame is jank the user saw. A frame drawn on several layers is one frame (its token), counted once. Grouped by the field's jank type; self_ms, total_ms and covered_ms are the time past the deadline. A type whose frames all ended by their deadline (early presents, prediction errors) is a note. Then what the late frames ran under (warnings, correlated: the frames and the condition coincided): those in which the app's threads spent at least half their CPU time on a CPU below half its peak frequency, and those that overlapped a cooling device above state 0; on these two rows self_ms is the time past the deadline of the frames they name.
-- @param: error_count = 10
-- @param: error_late_ms = 100
-- @identity: location
-- @module: context
-- one row per frame: the timeline holds one actual and one expected row per
-- layer the frame was drawn on, all with the frame's token (name)
WITH fr AS (SELECT name, is_surface, MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur, MAX(jank_type) AS jank_type,
                   GROUP_CONCAT(DISTINCT present_type) AS present_type
            FROM actual_frame_timeline_slice
            WHERE upid = (SELECT upid FROM _proc) AND jank_type NOT IN ('None', 'Unspecified') AND dur > 0
            GROUP BY name, is_surface),
f AS (SELECT fr.ts, fr.dur, fr.jank_type, fr.present_type, MAX(0, fr.ts + fr.dur - ex.deadline) AS late
      FROM fr JOIN (SELECT name, is_surface, MAX(ts + dur) AS deadline FROM expected_frame_timeline_slice
                    WHERE upid = (SELECT upid FROM _proc) GROUP BY name, is_surface) ex USING (name, is_surface)
      WHERE fr.ts < (SELECT end_ts FROM _window) AND fr.ts + fr.dur > (SELECT ts FROM _window)),
-- each late frame: the part of the app's time on a CPU in it that ran below half the peak frequency,
-- throttled or not, and (only where some ran slow) all its time on a CPU; the searches are bounded by
-- the longest stretch, so each frame reads its neighbourhood through the indexes, not every row
mx AS (SELECT COALESCE((SELECT MAX(dur) FROM _run_lowfreq), 0) AS low,
              COALESCE((SELECT MAX(dur) FROM _tstate_win WHERE state = 'Running'), 0) AS run),
lf0 AS (SELECT f.*,
               (SELECT COALESCE(SUM(MIN(l.ts + l.dur, f.ts + f.dur) - MAX(l.ts, f.ts)), 0) FROM _run_lowfreq l
                WHERE l.ts >= f.ts - (SELECT low FROM mx) AND l.ts < f.ts + f.dur AND l.ts + l.dur > f.ts) AS low,
               (SELECT MAX(h.state) FROM _throttle h WHERE h.ts < f.ts + f.dur AND h.ts + h.dur > f.ts) AS hot
        FROM f WHERE f.late > 0),
lf AS (SELECT lf0.*,
              CASE WHEN low > 0 THEN (SELECT COALESCE(SUM(MIN(r.ts + r.dur, lf0.ts + lf0.dur) - MAX(r.ts, lf0.ts)), 0)
                                      FROM _threads th JOIN _tstate_win r ON r.utid = th.utid
                                      AND r.ts >= lf0.ts - (SELECT run FROM mx) AND r.ts < lf0.ts + lf0.dur
                                      WHERE r.state = 'Running' AND r.ts + r.dur > lf0.ts) ELSE 0 END AS run
       FROM lf0),
slow AS (SELECT COUNT(*) AS n, SUM(late) AS late, SUM(dur) AS dur, MAX(late) AS m, SUM(low) AS low, SUM(run) AS run,
                MIN(ts) AS f, MAX(ts + dur) AS t FROM lf WHERE low > 0 AND 2 * low >= run),
thr AS (SELECT COUNT(*) AS n, SUM(late) AS late, SUM(dur) AS dur, MAX(late) AS m, MAX(hot) AS top,
               MIN(ts) AS f, MAX(ts + dur) AS t FROM lf WHERE hot > 0)
SELECT jank_type AS location, COUNT(*) AS count, ROUND(SUM(late) / 1e6, 3) AS self_ms,
       ROUND(SUM(late) / 1e6, 3) AS total_ms, ROUND(MAX(late) / 1e6, 3) AS max_ms,
       ROUND(SUM(late) / 1e6, 3) AS covered_ms,
       printf('%d janky frame(s) (%s), %.1f ms past their deadlines in all', COUNT(*),
              GROUP_CONCAT(DISTINCT present_type), SUM(late) / 1e6) AS detail,
       CASE WHEN MAX(late) = 0 THEN 'note' WHEN COUNT(*) >= {{error_count}} OR MAX(late) >= {{error_late_ms}} * 1e6 THEN 'error' ELSE 'warning' END AS severity,
       'observed' AS confidence, 'Janky frames: ' || jank_type AS title,
       MIN(ts) AS from_ts, MAX(ts + dur) AS to_ts
FROM f GROUP BY jank_type
UNION ALL
SELECT 'late frames at a low CPU frequency', n, ROUND(late / 1e6, 3), ROUND(dur / 1e6, 3), ROUND(m / 1e6, 3), 0,
       printf('%d of %d late frame(s) ran mostly below half the CPU''s peak frequency (%.1f of the app''s %.1f ms on a CPU in them)',
              n, (SELECT COUNT(*) FROM lf), low / 1e6, run / 1e6),
       'warning', 'correlated', 'Late frames while the CPU ran slow', f, t
FROM slow WHERE n > 0
UNION ALL
SELECT 'late frames while throttled', n, ROUND(late / 1e6, 3), ROUND(dur / 1e6, 3), ROUND(m / 1e6, 3), 0,
       printf('%d of %d late frame(s) overlapped thermal throttling (a cooling device up to state %d)',
              n, (SELECT COUNT(*) FROM lf), CAST(top AS INTEGER)),
       'warning', 'correlated', 'Late frames while throttled for heat', f, t
FROM thr WHERE n > 0
ORDER BY self_ms DESC
-- @unanswered
SELECT 'the trace has no frame timeline for this process (SurfaceFlinger frame timeline, Android 12 and later)' AS reason
WHERE NOT EXISTS (SELECT 1 FROM actual_frame_timeline_slice WHERE upid = (SELECT upid FROM _proc))
-- @ruled_out
SELECT 'the app missing its frame deadline (App Deadline Missed): no frame of the window did' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE '%App Deadline Missed%')
UNION ALL SELECT 'SurfaceFlinger-side jank (its CPU or GPU deadline, scheduling, the display HAL): none in the window' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE '%SurfaceFlinger%' OR location LIKE '%Display HAL%')
UNION ALL SELECT 'buffer stuffing: none in the window' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE '%Buffer Stuffing%')
UNION ALL SELECT 'a low CPU frequency in the late frames: the trace has cpufreq, and none ran mostly below half the CPU''s peak frequency'
WHERE EXISTS (SELECT 1 FROM _env_win WHERE kind = 'cpufreq') AND NOT EXISTS (SELECT 1 FROM _rows WHERE location = 'late frames at a low CPU frequency')
UNION ALL SELECT 'thermal throttling in the late frames: the trace has cooling devices, and none was above state 0 during one'
WHERE EXISTS (SELECT 1 FROM _env_win WHERE kind = 'cooling') AND NOT EXISTS (SELECT 1 FROM _rows WHERE location = 'late frames while throttled')
