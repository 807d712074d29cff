-- @id ask_startup
-- @question: startup
-- @title The app's start-up, phase by phase
-- @why The framework's start-up slices on the main thread (bindApplication, Application.onCreate, activityStart, activityResume, inflate during launch) are what a cold start waits for; a phase of slow_ms or more is a warning.
-- @param: slow_ms = 50
-- @identity: location
-- @module: context
SELECT s.name AS location, COUNT(*) AS count,
       ROUND(SUM(s.dur_win - COALESCE(c.child_dur, 0)) / 1e6, 3) AS self_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS total_ms, ROUND(MAX(s.dur_win) / 1e6, 3) AS max_ms,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS covered_ms,
       printf('start-up phase: %.1f ms', SUM(s.dur_win) / 1e6) AS detail,
       CASE WHEN MAX(s.dur_win) >= {{slow_ms}} * 1e6 THEN 'warning' ELSE 'note' END AS severity,
       'observed' AS confidence, 'Start-up: ' || s.name AS title,
       MIN(MAX(s.ts, (SELECT ts FROM _window))) AS from_ts, MAX(MAX(s.ts, (SELECT ts FROM _window)) + s.dur_win) AS to_ts
FROM _slice_win s LEFT JOIN _child_sum c USING (id)
WHERE s.is_main AND (s.name IN ('bindApplication', 'activityStart', 'activityResume', 'activityRestart',
       'Application.onCreate', 'OpenDexFilesFromOat', 'PostFork', 'ActivityThreadMain') OR s.name LIKE 'performCreate%')
GROUP BY s.name ORDER BY MIN(s.ts)
-- @unanswered
SELECT 'the window does not contain the app''s start (no bindApplication, activityStart or Application.onCreate slice on its main thread)' AS reason
WHERE NOT EXISTS (SELECT 1 FROM _slice_win WHERE is_main AND (name IN ('bindApplication', 'activityStart', 'activityResume',
      'Application.onCreate', 'ActivityThreadMain') OR name LIKE 'performCreate%'))
-- @ruled_out
SELECT 'a slow start-up phase: none took {{slow_ms}} ms or more' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE max_ms >= {{slow_ms}})
