-- SPDX-License-Identifier: Apache-2.0
-- @id frame_jank
-- @title Janky frames (frame timeline)
-- @why SurfaceFlinger's frame timeline judged these frames of the process late; self_ms is the time past the deadline (actual end minus expected end), grouped by the field's jank type. A frame drawn on several layers is one frame (its token), counted once. The time a row stands for is the time past the deadline; it covers the window only where the main thread was busy then (running, runnable or in D).
-- @param: min_late_ms = 0
-- @identity: location
-- @module: context
-- one row per frame: the timeline holds one actual and one expected row per
-- layer the frame was drawn on, all with the frame's token (name)
WITH fr AS (SELECT name, is_surface, MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur, MAX(jank_type) AS jank_type,
                   GROUP_CONCAT(DISTINCT present_type) AS present_type
            FROM actual_frame_timeline_slice
            WHERE upid = (SELECT upid FROM _proc) AND jank_type NOT IN ('None', 'Unspecified') AND dur > 0
            GROUP BY name, is_surface),
ex AS (SELECT name, is_surface, MAX(ts + dur) AS deadline FROM expected_frame_timeline_slice
       WHERE upid = (SELECT upid FROM _proc) GROUP BY name, is_surface),
a AS (SELECT fr.*, ex.deadline, fr.ts + fr.dur - ex.deadline AS over, MAX(0, fr.ts + fr.dur - ex.deadline) AS late
      FROM fr JOIN ex USING (name, is_surface)
      WHERE fr.ts < (SELECT end_ts FROM _window) AND fr.ts + fr.dur > (SELECT ts FROM _window))
SELECT jank_type AS location, COUNT(*) AS count,
       ROUND(SUM(late) / 1e6, 3) AS self_ms,
       ROUND(SUM(late) / 1e6, 3) AS total_ms, ROUND(MAX(late) / 1e6, 3) AS max_ms,
       ROUND(SUM(late) / 1e6, 3) AS covered_ms,
       printf('%d frame(s), %.1f ms long in all; present: %s', COUNT(*), SUM(dur) / 1e6,
              GROUP_CONCAT(DISTINCT present_type)) AS detail
FROM a WHERE over >= {{min_late_ms}} * 1e6
GROUP BY jank_type ORDER BY self_ms DESC
-- @intervals
-- the late part of each frame (deadline to end), where the main thread was busy
WITH fr AS (SELECT name, is_surface, MAX(ts + dur) AS e FROM actual_frame_timeline_slice
            WHERE upid = (SELECT upid FROM _proc) AND jank_type NOT IN ('None', 'Unspecified') AND dur > 0
            GROUP BY name, is_surface),
late AS (SELECT ex.deadline AS s, fr.e FROM fr
         JOIN (SELECT name, is_surface, MAX(ts + dur) AS deadline FROM expected_frame_timeline_slice
               WHERE upid = (SELECT upid FROM _proc) GROUP BY name, is_surface) ex USING (name, is_surface)
         WHERE fr.e > ex.deadline)
SELECT MAX(l.s, t.ts) AS ts, MIN(l.e, t.ts + t.dur) - MAX(l.s, t.ts) AS dur
FROM late l JOIN _tstate_win t ON t.utid = (SELECT utid FROM _threads WHERE is_main LIMIT 1)
AND t.ts < l.e AND t.ts + t.dur > l.s AND (t.state IN ('Running', 'R', 'R+') OR t.state LIKE 'D%')
