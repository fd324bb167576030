-- component_chains: system-rule anomalies joined across days. An anomaly still open at its
-- day's end (`ongoing`) continues into the next one of the same component when that
-- starts within max_gap minutes of its end (the next day's first minutes).
-- Input: view `cmp_hist` (component_anomaly rows, rule 'system', of a range of days).
-- Parameter: max_gap (minutes).
WITH ordered AS (
  SELECT kind, component, start, `end`, ongoing, date, max_bw_fraction, peak_bw,
         CASE WHEN LAG(ongoing) OVER w
                   AND start <= LAG(`end`) OVER w + make_dt_interval(0, 0, ${max_gap}, 0)
              THEN 0 ELSE 1 END AS new_chain
  FROM cmp_hist
  WINDOW w AS (PARTITION BY kind, component ORDER BY start)
),
numbered AS (
  SELECT *, SUM(new_chain) OVER (PARTITION BY kind, component ORDER BY start
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS chain
  FROM ordered
)
SELECT kind, component, MIN(start) AS start, MAX(`end`) AS `end`,
       CAST((unix_timestamp(MAX(`end`)) - unix_timestamp(MIN(start))) / 60 AS INT)
         AS duration_min,
       CAST(COUNT(*) AS INT) AS pieces, MIN(date) AS first_date, MAX(date) AS last_date,
       max_by(ongoing, start) AS ongoing, MAX(max_bw_fraction) AS max_bw_fraction,
       MAX(peak_bw) AS peak_bw
FROM numbered
GROUP BY kind, component, chain
