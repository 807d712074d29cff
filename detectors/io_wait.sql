-- SPDX-License-Identifier: Apache-2.0
-- @id io_wait
-- @title Main thread waiting for I/O
-- @why Uninterruptible sleep (D) on the main thread is usually disk or a lock in the kernel; blocked_function names where, when the trace recorded sched_blocked_reason.
-- @param: min_ms = 5
-- @identity: location
-- @module: context
SELECT COALESCE(blocked_function, 'unknown kernel function') AS location, COUNT(*) AS count,
       ROUND(SUM(dur) / 1e6, 3) AS self_ms, ROUND(SUM(dur) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur) / 1e6, 3) AS max_ms, ROUND(SUM(dur) / 1e6, 3) AS covered_ms,
       printf('%d of them flagged io_wait', SUM(COALESCE(io_wait, 0))) AS detail
FROM _tstate_win WHERE is_main AND (state LIKE 'D%' OR io_wait = 1)
GROUP BY location HAVING SUM(dur) >= {{min_ms}} * 1e6 ORDER BY self_ms DESC
-- @intervals
SELECT ts, dur FROM _tstate_win WHERE is_main AND (state LIKE 'D%' OR io_wait = 1)
