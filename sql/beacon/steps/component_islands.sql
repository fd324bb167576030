-- component_islands: the system rule of Beacon's component anomaly (§4.3.4, Table 2) as
-- gaps and islands over per-minute component rows.
-- Input: view `cmp_minute` (kind, component, minute, max_bw, peak_bw, serving, pressured,
-- evidence_value): one row per component and minute of the day.
-- Parameters: fraction (anomaly_peak_fraction), min_minutes (anomaly_min_minutes),
-- max_gap (minutes without a verdict an island bridges), day_end (the day's end, UTC),
-- date.
-- A serving minute is 'high' when the largest bandwidth reaches fraction x peak (the
-- component showed it can serve), 'low' when it stays below while demand is evidenced
-- (`pressured`); other minutes (idle, or low without demand evidence) give no verdict and
-- only count as gaps. An island is a run of 'low' minutes with no 'high' minute between
-- them and no gap longer than max_gap minutes; it is an anomaly when it lasts at least
-- min_minutes (first low minute to the end of the last). `p90_fraction`: the 90th
-- percentile over its low minutes of the bandwidth / peak (a robust "fastest it got": a
-- slow component is pinned under its reduced capacity, one that merely lacks demand
-- because its jobs wait elsewhere reaches higher whenever demand comes back).
WITH judged AS (
  SELECT kind, component, minute, max_bw, peak_bw, evidence_value,
         CASE WHEN max_bw >= ${fraction} * peak_bw THEN 'high' ELSE 'low' END AS status
  FROM cmp_minute
  WHERE serving AND peak_bw > 0 AND (pressured OR max_bw >= ${fraction} * peak_bw)
),
marked AS (
  SELECT *,
         CASE WHEN LAG(status) OVER w IS NULL OR LAG(status) OVER w <> status
                OR (unix_timestamp(minute) - unix_timestamp(LAG(minute) OVER w)) / 60 > ${max_gap} + 1
              THEN 1 ELSE 0 END AS new_island
  FROM judged
  WINDOW w AS (PARTITION BY kind, component ORDER BY minute)
),
numbered AS (
  SELECT *, SUM(new_island) OVER (PARTITION BY kind, component ORDER BY minute
                                  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
  FROM marked
),
islands AS (
  SELECT kind, component, island, MIN(minute) AS start,
         MAX(minute) + INTERVAL 1 MINUTE AS `end`, COUNT(*) AS low_minutes,
         MAX(max_bw) AS max_bw, MAX(peak_bw) AS peak_bw, AVG(evidence_value) AS evidence_value,
         percentile(max_bw / peak_bw, 0.9) AS p90_fraction
  FROM numbered
  WHERE status = 'low'
  GROUP BY kind, component, island
)
SELECT kind, component, start, `end`,
       CAST((unix_timestamp(`end`) - unix_timestamp(start)) / 60 AS INT) AS duration_min,
       CAST(low_minutes AS INT) AS low_minutes,
       CAST(max_bw / peak_bw AS DOUBLE) AS max_bw_fraction,
       CAST(p90_fraction AS DOUBLE) AS p90_fraction,
       CAST(peak_bw AS DOUBLE) AS peak_bw, CAST(evidence_value AS DOUBLE) AS evidence_value,
       (unix_timestamp(TIMESTAMP '${day_end}') - unix_timestamp(`end`)) / 60 <= ${max_gap}
         AS ongoing,
       DATE '${date}' AS date
FROM islands
WHERE (unix_timestamp(`end`) - unix_timestamp(start)) / 60 >= ${min_minutes}
