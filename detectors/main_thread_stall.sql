-- @id main_thread_stall
-- @title Main thread busy without a break
-- @why The main thread ran, or waited for a CPU, this long without once going back to sleep, so nothing else it owes the app (input, the next frame) could run. This is the scheduler's own record: it finds a stall whether or not the app labelled the work. The location is the top-level slice the stretch began in, or none.
-- @param: min_ms = 100
-- @identity: location
-- @module: context
WITH st AS (
  SELECT ts, dur, state, tid,
         SUM(CASE WHEN state IN ('Running', 'R', 'R+') THEN 0 ELSE 1 END) OVER (ORDER BY ts) AS grp
  FROM _tstate_win WHERE is_main),
busy AS (
  SELECT MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur, MIN(tid) AS tid,
         SUM(CASE WHEN state = 'Running' THEN dur ELSE 0 END) AS run
  FROM st WHERE state IN ('Running', 'R', 'R+') GROUP BY grp),
long AS (
  SELECT b.*, (SELECT s.name FROM _slice_win s WHERE s.is_main AND s.depth = 0 AND s.ts <= b.ts
               AND s.ts + s.dur > b.ts ORDER BY s.ts DESC LIMIT 1) AS slice
  FROM busy b WHERE b.dur >= {{min_ms}} * 1e6)
SELECT COALESCE(slice, 'main thread, no slice') AS location, COUNT(*) AS count,
       ROUND(SUM(run) / 1e6, 3) AS self_ms, ROUND(SUM(dur) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur) / 1e6, 3) AS max_ms, ROUND(SUM(dur) / 1e6, 3) AS covered_ms,
       printf('tid %d: %d stretch(es) of at least {{min_ms}} ms without sleeping, the longest %.1f ms from ts %d; %.0f%% of it on a CPU, the rest runnable',
              MIN(tid), COUNT(*), MAX(dur) / 1e6,
              (SELECT l2.ts FROM long l2 WHERE COALESCE(l2.slice, 'main thread, no slice') = COALESCE(long.slice, 'main thread, no slice') ORDER BY l2.dur DESC LIMIT 1),
              100.0 * SUM(run) / MAX(SUM(dur), 1)) AS detail
FROM long GROUP BY location ORDER BY max_ms DESC
-- @intervals
WITH st AS (
  SELECT ts, dur, state,
         SUM(CASE WHEN state IN ('Running', 'R', 'R+') THEN 0 ELSE 1 END) OVER (ORDER BY ts) AS grp
  FROM _tstate_win WHERE is_main),
busy AS (
  SELECT MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur
  FROM st WHERE state IN ('Running', 'R', 'R+') GROUP BY grp)
SELECT ts, dur FROM busy WHERE dur >= {{min_ms}} * 1e6
