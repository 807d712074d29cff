-- SPDX-License-Identifier: Apache-2.0
-- @id ask_monitor_contention
-- @question: monitor_contention
-- @title Threads waiting for a Java lock
-- @why ART writes a "monitor contention with owner ..." (or "Lock contention on ...") slice while a thread waits for a monitor another thread holds; on the main thread that wait is a stall. One long wait (long_ms) or many short ones (min_count adding up to total_ms).
-- @param: long_ms = 5
-- @param: min_count = 10
-- @param: total_ms = 20
-- @identity: location
-- @module: context
SELECT thread_name || ': ' || substr(name, 1, 120) AS location, COUNT(*) AS count,
       ROUND(SUM(dur_win) / 1e6, 3) AS self_ms, ROUND(SUM(dur_win) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur_win) / 1e6, 3) AS max_ms, ROUND(SUM(dur_win) / 1e6, 3) AS covered_ms,
       CASE WHEN MAX(dur_win) >= {{long_ms}} * 1e6 THEN printf('one wait of %.1f ms', MAX(dur_win) / 1e6)
            ELSE printf('%d short waits, %.1f ms in all', COUNT(*), SUM(dur_win) / 1e6) END AS detail,
       CASE WHEN MAX(is_main) THEN 'warning' ELSE 'note' END AS severity, 'observed' AS confidence,
       CASE WHEN MAX(is_main) THEN 'Main thread waited for a lock' ELSE thread_name || ' waited for a lock' END AS title,
       MIN(MAX(ts, (SELECT ts FROM _window))) AS from_ts, MAX(MAX(ts, (SELECT ts FROM _window)) + dur_win) AS to_ts
FROM _slice_win WHERE name LIKE '%monitor contention%' OR name LIKE 'Lock contention%'
GROUP BY location
HAVING MAX(dur_win) >= {{long_ms}} * 1e6 OR (COUNT(*) >= {{min_count}} AND SUM(dur_win) >= {{total_ms}} * 1e6)
ORDER BY self_ms DESC
-- @unanswered
SELECT 'no slices on the process''s threads at all, so ART''s lock-contention slices (atrace category dalvik) cannot have been recorded' AS reason
WHERE NOT EXISTS (SELECT 1 FROM _slice_win)
-- @ruled_out
SELECT 'lock contention on the main thread: no wait of {{long_ms}} ms and not {{min_count}} waits adding up to {{total_ms}} ms'
WHERE NOT EXISTS (SELECT 1 FROM _rows r JOIN _slice_win s ON r.location = s.thread_name || ': ' || substr(s.name, 1, 120) WHERE s.is_main)
