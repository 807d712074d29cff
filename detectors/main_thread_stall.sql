-- SPDX-License-Identifier: Apache-2.0
-- @id main_thread_stall
-- @title Main thread busy without a break
-- @why The main thread ran, or waited for a CPU, this long without once going back to sleep, so nothing else it owes the app (input, the next frame) could run. This is the scheduler's own record: it finds a stall whether or not the app labelled the work. The location is the top-level slice the stretch spent most of its time in (or none: 'main thread, no slice'); the detail gives the time in each, so a stall that began in one slice and ran on through others is named after where it went.
-- @param: min_ms = 100
-- @identity: location
-- @module: context
WITH st AS (
  SELECT ts, dur, state, tid,
         SUM(CASE WHEN state IN ('Running', 'R', 'R+') THEN 0 ELSE 1 END) OVER (ORDER BY ts) AS grp
  FROM _tstate_win WHERE is_main),
busy AS (
  SELECT grp, MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur, MIN(tid) AS tid,
         SUM(CASE WHEN state = 'Running' THEN dur ELSE 0 END) AS run
  FROM st WHERE state IN ('Running', 'R', 'R+') GROUP BY grp),
long AS (SELECT * FROM busy WHERE dur >= {{min_ms}} * 1e6),
-- the time each stretch spent in each top-level main-thread slice (those
-- never overlap), and what is left: in no slice (name NULL)
ins AS (
  SELECT l.grp, s.name, SUM(MIN(l.ts + l.dur, s.ts + s.dur) - MAX(l.ts, s.ts)) AS d
  FROM long l JOIN _slice_win s ON s.is_main AND s.depth = 0 AND s.ts < l.ts + l.dur AND s.ts + s.dur > l.ts
  GROUP BY l.grp, s.name),
parts AS (
  SELECT grp, name, d FROM ins
  UNION ALL
  SELECT l.grp, NULL, l.dur - COALESCE((SELECT SUM(i.d) FROM ins i WHERE i.grp = l.grp), 0) FROM long l),
named AS (
  SELECT l.*, COALESCE((SELECT p.name FROM parts p WHERE p.grp = l.grp AND p.d > 0
                        ORDER BY p.d DESC, p.name IS NULL, p.name LIMIT 1), 'main thread, no slice') AS location
  FROM long l)
SELECT location, COUNT(*) AS count,
       ROUND(SUM(run) / 1e6, 3) AS self_ms, ROUND(SUM(dur) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur) / 1e6, 3) AS max_ms, ROUND(SUM(dur) / 1e6, 3) AS covered_ms,
       printf('tid %d: %d stretch(es) of at least {{min_ms}} ms without sleeping, the longest %.1f ms from ts %d; %.0f%% of it on a CPU, the rest runnable; time by top-level slice: %s',
              MIN(tid), COUNT(*), MAX(dur) / 1e6,
              (SELECT n2.ts FROM named n2 WHERE n2.location = named.location ORDER BY n2.dur DESC LIMIT 1),
              100.0 * SUM(run) / MAX(SUM(dur), 1),
              (SELECT GROUP_CONCAT(label, ', ') FROM (
                 SELECT printf('%s %.1f ms', COALESCE(p.name, 'no slice'), SUM(p.d) / 1e6) AS label
                 FROM parts p JOIN named n3 ON n3.grp = p.grp
                 WHERE n3.location = named.location AND p.d > 0
                 GROUP BY p.name ORDER BY SUM(p.d) DESC, p.name IS NULL, p.name))) AS detail
FROM named GROUP BY location ORDER BY max_ms DESC
-- @intervals
WITH st AS (
  SELECT ts, dur, state,
         SUM(CASE WHEN state IN ('Running', 'R', 'R+') THEN 0 ELSE 1 END) OVER (ORDER BY ts) AS grp
  FROM _tstate_win WHERE is_main),
busy AS (
  SELECT MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur
  FROM st WHERE state IN ('Running', 'R', 'R+') GROUP BY grp)
SELECT ts, dur FROM busy WHERE dur >= {{min_ms}} * 1e6
