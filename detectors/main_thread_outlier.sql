-- SPDX-License-Identifier: Apache-2.0
-- @id main_thread_outlier
-- @title One occurrence far slower than usual
-- @why The same main-thread slice usually takes its median time; this occurrence took factor times longer (and at least floor_ms), which points at something that happened that once.
-- @param: factor = 3
-- @param: floor_ms = 8
-- @param: min_count = 5
-- @identity: location
-- @module: context
WITH s AS (SELECT name, ts, dur_win FROM _slice_win WHERE is_main),
ranked AS (SELECT name, dur_win, ROW_NUMBER() OVER (PARTITION BY name ORDER BY dur_win) AS rn,
                  COUNT(*) OVER (PARTITION BY name) AS n FROM s),
med AS (SELECT name, AVG(dur_win) AS median, MAX(n) AS n FROM ranked
        WHERE rn IN ((n + 1) / 2, (n + 2) / 2) GROUP BY name)
SELECT s.name AS location, COUNT(*) AS count,
       ROUND(SUM(s.dur_win) / 1e6, 3) AS self_ms, ROUND(SUM(s.dur_win) / 1e6, 3) AS total_ms,
       ROUND(MAX(s.dur_win) / 1e6, 3) AS max_ms, ROUND(SUM(s.dur_win) / 1e6, 3) AS covered_ms,
       printf('median %.3f ms over %d occurrences', med.median / 1e6, med.n) AS detail
FROM s JOIN med USING (name)
WHERE med.n >= {{min_count}} AND s.dur_win > {{factor}} * med.median AND s.dur_win >= {{floor_ms}} * 1e6
GROUP BY s.name ORDER BY max_ms DESC
-- @intervals
SELECT s.ts, s.dur_win AS dur FROM _slice_win s JOIN _rows r ON r.location = s.name
WHERE s.is_main AND s.dur_win >= {{floor_ms}} * 1e6
