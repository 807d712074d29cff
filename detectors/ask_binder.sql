-- SPDX-License-Identifier: Apache-2.0
-- @id ask_binder
-- @question: binder
-- @title Binder calls that made the app wait
-- @why A binder transaction blocks the calling thread until the other process replies; on the main thread that is a frozen UI. error from error_ms, warning on the main thread from long_ms or when many short calls add up to total_ms.
-- @param: long_ms = 10
-- @param: error_ms = 100
-- @param: min_count = 10
-- @param: total_ms = 30
-- @identity: location
-- @module: context
SELECT thread_name || ': ' || name AS location, COUNT(*) AS count, ROUND(SUM(dur_win) / 1e6, 3) AS self_ms,
       ROUND(SUM(dur_win) / 1e6, 3) AS total_ms, ROUND(MAX(dur_win) / 1e6, 3) AS max_ms,
       ROUND(SUM(dur_win) / 1e6, 3) AS covered_ms,
       CASE WHEN MAX(dur_win) >= {{long_ms}} * 1e6 THEN printf('one call of %.1f ms', MAX(dur_win) / 1e6)
            ELSE printf('%d short calls, %.1f ms in all', COUNT(*), SUM(dur_win) / 1e6) END AS detail,
       CASE WHEN MAX(dur_win) >= {{error_ms}} * 1e6 THEN 'error' WHEN MAX(is_main) THEN 'warning' ELSE 'note' END AS severity,
       'observed' AS confidence,
       CASE WHEN MAX(is_main) THEN 'Binder call on the main thread' ELSE 'Binder call on ' || thread_name END AS title,
       MIN(MAX(ts, (SELECT ts FROM _window))) AS from_ts, MAX(MAX(ts, (SELECT ts FROM _window)) + dur_win) AS to_ts
FROM _slice_win WHERE name LIKE 'binder transaction%'
GROUP BY location
HAVING MAX(dur_win) >= {{long_ms}} * 1e6 OR (COUNT(*) >= {{min_count}} AND SUM(dur_win) >= {{total_ms}} * 1e6)
ORDER BY self_ms DESC
-- @unanswered
SELECT 'the trace holds no binder transaction slices at all (atrace category binder_driver was off)' AS reason
WHERE NOT EXISTS (SELECT 1 FROM slice WHERE name LIKE 'binder%')
-- @ruled_out
SELECT 'binder calls on the main thread: none of {{long_ms}} ms, and not {{min_count}} short ones adding up to {{total_ms}} ms'
WHERE NOT EXISTS (SELECT 1 FROM _rows r JOIN _slice_win s ON r.location = s.thread_name || ': ' || s.name WHERE s.is_main)
