-- SPDX-License-Identifier: Apache-2.0
-- @id binder_txn
-- @title Binder calls on the main thread
-- @why A binder transaction blocks the caller until another process answers. It fires on one long call (long_ms) or on many short ones that add up (min_count and total_ms both). The slice names are name_glob's masks (GLOB, separated by '|').
-- @param: long_ms = 10
-- @param: name_glob = 'binder transaction*'
-- @param: min_count = 10
-- @param: total_ms = 30
-- @identity: location
-- @module: context
SELECT name AS location, COUNT(*) AS count, ROUND(SUM(dur_win) / 1e6, 3) AS self_ms,
       ROUND(SUM(dur_win) / 1e6, 3) AS total_ms, ROUND(MAX(dur_win) / 1e6, 3) AS max_ms,
       ROUND(SUM(dur_win) / 1e6, 3) AS covered_ms,
       CASE WHEN MAX(dur_win) >= {{long_ms}} * 1e6 THEN 'one long call' ELSE 'many short calls' END AS detail
FROM _slice_win WHERE is_main AND EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector = 'binder_txn' AND name GLOB g.glob)
GROUP BY name
HAVING MAX(dur_win) >= {{long_ms}} * 1e6 OR (COUNT(*) >= {{min_count}} AND SUM(dur_win) >= {{total_ms}} * 1e6)
-- @intervals
SELECT ts, dur_win AS dur FROM _slice_win WHERE is_main AND EXISTS (SELECT 1 FROM _claimed_name g WHERE g.detector = 'binder_txn' AND name GLOB g.glob)
