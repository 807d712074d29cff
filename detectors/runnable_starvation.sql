-- SPDX-License-Identifier: Apache-2.0
-- @id runnable_starvation
-- @title Main thread runnable but not scheduled
-- @why The main thread was ready to run (R, or R+ when preempted) but no CPU ran it: CPU contention, a low frequency or a priority problem, not the app's own code.
-- @param: min_ms = 4
-- @identity: location
-- @module: context
SELECT 'main thread ' || state AS location, COUNT(*) AS count,
       ROUND(SUM(dur) / 1e6, 3) AS self_ms, ROUND(SUM(dur) / 1e6, 3) AS total_ms,
       ROUND(MAX(dur) / 1e6, 3) AS max_ms, ROUND(SUM(dur) / 1e6, 3) AS covered_ms,
       'stretches of at least {{min_ms}} ms' AS detail
FROM _tstate_win WHERE is_main AND state IN ('R', 'R+') AND dur >= {{min_ms}} * 1e6
GROUP BY state ORDER BY self_ms DESC
-- @intervals
SELECT ts, dur FROM _tstate_win WHERE is_main AND state IN ('R', 'R+') AND dur >= {{min_ms}} * 1e6
