-- run_metrics: per application launch of the period, its runtime, the runtime statistics of
-- its group (same exact launch command), its slowdown factor and flag, and the sums of its
-- app_hour risks over its runtime (LASSi Table 7).
-- Inputs: views `app_launch` (launches of the period) and `period_app_hour` (app_hour of the
-- period). Parameters: factor (slowdown threshold, e.g. 1.5).
WITH runs AS (
  SELECT app_id, source, command,
         CAST(unix_micros(`end`) - unix_micros(start) AS DOUBLE) / 1e6 AS runtime_s
  FROM app_launch
  WHERE start IS NOT NULL AND `end` IS NOT NULL
),
risk AS (
  SELECT app_id, SUM(risk_oss) AS risk_oss_sum, SUM(risk_mds) AS risk_mds_sum
  FROM period_app_hour GROUP BY app_id
),
grouped AS (
  SELECT r.*,
         COUNT(*) OVER g AS group_runs,
         AVG(runtime_s) OVER g AS group_mean_s
  FROM runs r
  WINDOW g AS (PARTITION BY command)
)
SELECT g.app_id, g.source, g.command, g.runtime_s,
       CAST(CASE WHEN g.command IS NOT NULL THEN g.group_runs END AS INT) AS group_runs,
       CASE WHEN g.command IS NOT NULL THEN g.group_mean_s END AS group_mean_s,
       CASE WHEN g.command IS NOT NULL AND g.group_mean_s > 0
            THEN g.runtime_s / g.group_mean_s END AS slowdown,
       CASE WHEN g.command IS NOT NULL AND g.group_mean_s > 0
            THEN g.runtime_s >= ${factor} * g.group_mean_s END AS slowed,
       COALESCE(k.risk_oss_sum, 0.0) AS risk_oss_sum,
       COALESCE(k.risk_mds_sum, 0.0) AS risk_mds_sum
FROM grouped g LEFT JOIN risk k ON g.app_id = k.app_id
