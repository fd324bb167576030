-- The knowledge base of the day per kind of component (report section "I/O path"): the
-- day's busy minutes and the medians of the baseline (all sizes and loads).
-- Inputs: views `rs_minute` (component_minute of the day), `rs_baseline`
-- (component_baseline of the day; its pooled rows, components named '…*', left out).
WITH today AS (
  SELECT kind, COUNT(DISTINCT component) AS components,
         COUNT_IF(bw > 0 OR md_ops > 0) AS busy_minutes, MAX(CASE WHEN bw > 0 THEN bw END) AS max_bw
  FROM rs_minute GROUP BY kind
),
base AS (
  SELECT kind,
         percentile_approx(CASE WHEN metric = 'bw' THEN p50 END, 0.5) AS bw_p50,
         percentile_approx(CASE WHEN metric = 'bw' THEN p90 END, 0.5) AS bw_p90,
         percentile_approx(CASE WHEN metric = 'exe_s' THEN p50 END, 0.5) AS exe_p50,
         percentile_approx(CASE WHEN metric = 'md_ops' THEN p50 END, 0.5) AS md_p50,
         MAX(n) AS max_n, MIN(period_start) AS period_start
  FROM rs_baseline
  WHERE size_class = 'all' AND load_class = 'all' AND component NOT LIKE '%*'  -- no pools
  GROUP BY kind
)
SELECT t.kind, t.components, t.busy_minutes, t.max_bw, b.bw_p50, b.bw_p90, b.exe_p50,
       b.md_p50, b.max_n, b.period_start
FROM today t LEFT JOIN base b ON t.kind = b.kind
ORDER BY CASE t.kind WHEN 'fwd' THEN 0 WHEN 'ost' THEN 1 ELSE 2 END
