-- SPDX-License-Identifier: Apache-2.0
-- @id main_thread_waits
-- @title Main thread waiting inside its work, and who woke it
-- @why The main thread went to sleep (S) or blocked (D) for min_ms or more while inside a slice, so the work that slice stands for waited, not ran. Who woke it says what it waited for: the waker is the thread whose sched_waking ended the sleep (the next thread_state row's waker_utid), with its process; "the kernel (an interrupt)" is a waking from the idle task or interrupt context (I/O done, a timer), and "waker not seen" means the trace holds no waking for it. A sleep in no slice is the message loop waiting for work and is left out, as is a top-level slice that spans the whole window (a scenario anchor). A row is one slice name and one waker; self_ms, total_ms and covered_ms are the time asleep.
-- @param: min_ms = 5
-- @identity: location
-- @module: context
-- a waking starts R (or R+) with its waker; from the idle task (an interrupt) the waker is NULL; no R, no waking seen
WITH st AS (SELECT ts, dur, state, LEAD(waker_utid) OVER (ORDER BY ts) AS waker, LEAD(state) OVER (ORDER BY ts) AS nstate
            FROM _tstate_win WHERE is_main),
w AS (SELECT * FROM st WHERE (state LIKE 'S%' OR state LIKE 'D%') AND dur >= {{min_ms}} * 1e6),
-- the main thread's slices of depth 0 and 1 (each depth never overlaps itself), anchors left out
ms AS (SELECT ts, ts + dur_win AS e, depth, name FROM _slice_win
       WHERE is_main AND depth <= 1
         AND NOT (depth = 0 AND ts <= (SELECT ts FROM _window) AND (unfinished OR ts + dur >= (SELECT end_ts FROM _window)))),
-- the slice at each depth that holds a wait: the last one that began at or before it (by a running maximum, not a scan per wait)
ev AS (SELECT ts, depth AS d, 1 AS is_slice FROM ms
       UNION ALL SELECT w.ts, x.d, 0 FROM w, (SELECT 0 AS d UNION ALL SELECT 1) x),
at AS (SELECT ts, d, is_slice, MAX(CASE WHEN is_slice THEN ts END) OVER (PARTITION BY d ORDER BY ts, is_slice DESC ROWS UNBOUNDED PRECEDING) AS sts
       FROM ev),
aw AS (SELECT ts, d, sts FROM at WHERE NOT is_slice),
held AS (SELECT w.ts, w.dur, w.state, w.waker, w.nstate, COALESCE(m1.name, m0.name) AS in_slice
         FROM w LEFT JOIN aw a1 ON a1.ts = w.ts AND a1.d = 1 LEFT JOIN ms m1 ON m1.depth = 1 AND m1.ts = a1.sts AND m1.e >= w.ts + w.dur
                LEFT JOIN aw a0 ON a0.ts = w.ts AND a0.d = 0 LEFT JOIN ms m0 ON m0.depth = 0 AND m0.ts = a0.sts AND m0.e >= w.ts + w.dur),
named AS (SELECT h.*, CASE WHEN h.waker IS NULL AND h.nstate IN ('R', 'R+') THEN 'woken by the kernel (an interrupt)'
                           WHEN h.waker IS NULL THEN 'waker not seen'
                           WHEN t.tid = 0 THEN 'woken by the kernel (an interrupt)'
                           ELSE 'woken by ' || COALESCE(NULLIF(t.name, ''), 'thread ' || t.tid) || COALESCE(' (' || p.name || ')', '') END AS by
          FROM held h LEFT JOIN thread t ON t.utid = h.waker LEFT JOIN process p ON p.upid = t.upid
          WHERE h.in_slice IS NOT NULL),
ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY in_slice, by ORDER BY dur DESC) AS rn FROM named)
SELECT substr(in_slice, 1, 120) || ': ' || by AS location, COUNT(*) AS count,
       ROUND(SUM(dur) / 1e6, 3) AS self_ms, ROUND(SUM(dur) / 1e6, 3) AS total_ms, ROUND(MAX(dur) / 1e6, 3) AS max_ms,
       ROUND(SUM(dur) / 1e6, 3) AS covered_ms,
       printf('%d wait(s) (%s), the longest %.1f ms at ts %d', COUNT(*),
              group_concat(DISTINCT substr(state, 1, 1)), MAX(dur) / 1e6, MAX(CASE WHEN rn = 1 THEN ts END)) AS detail
FROM ranked GROUP BY in_slice, by ORDER BY self_ms DESC
