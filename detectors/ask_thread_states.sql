-- SPDX-License-Identifier: Apache-2.0
-- @id ask_thread_states
-- @question: thread_states
-- @title Where the main thread's time went
-- @why The main thread is Running, Runnable (R, R+ preempted: waiting for a CPU), in uninterruptible sleep (D: I/O or a kernel lock) or sleeping (S: waiting for something). D and R stretches are time the app did not choose to spend.
-- @param: min_ms = 4
-- @identity: location
-- @module: context
SELECT CASE WHEN state LIKE 'D%' OR io_wait = 1 THEN 'main thread in D (' || COALESCE(blocked_function, 'unknown kernel function') || ')'
            ELSE 'main thread runnable (' || state || ')' END AS location,
       COUNT(*) AS count, ROUND(SUM(dur) / 1e6, 3) AS self_ms, ROUND(SUM(dur) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur) / 1e6, 3) AS max_ms, ROUND(SUM(dur) / 1e6, 3) AS covered_ms,
       printf('%.1f ms in %d stretch(es), the longest %.1f ms', SUM(dur) / 1e6, COUNT(*), MAX(dur) / 1e6) AS detail,
       'warning' AS severity, 'observed' AS confidence,
       CASE WHEN state LIKE 'D%' OR io_wait = 1 THEN 'Main thread blocked in the kernel' ELSE 'Main thread waiting for a CPU' END AS title,
       MIN(ts) AS from_ts, MAX(ts + dur) AS to_ts
FROM _tstate_win WHERE is_main AND (state LIKE 'D%' OR io_wait = 1 OR state IN ('R', 'R+'))
GROUP BY location HAVING SUM(dur) >= {{min_ms}} * 1e6 ORDER BY self_ms DESC
-- @unanswered
SELECT 'the trace has no scheduling data (sched_switch) for the main thread' AS reason
WHERE NOT EXISTS (SELECT 1 FROM _tstate_win WHERE is_main)
-- @ruled_out
SELECT 'uninterruptible sleep (I/O, kernel locks) on the main thread: under {{min_ms}} ms' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE 'main thread in D%')
UNION ALL SELECT 'CPU starvation (runnable, not scheduled) of the main thread: under {{min_ms}} ms' WHERE NOT EXISTS (SELECT 1 FROM _rows WHERE location LIKE 'main thread runnable%')
