-- report_top_apps: per filesystem, the applications with the highest peak hourly risk
-- (risk_oss + risk_mds) of the report period, ties broken by summed risk; only applications
-- with positive risk. Per op, the largest hourly r_x (parameter op_max) so the report can
-- name the op that contributes most. Input view `ah` (app_hour of the period).
-- Parameters: op_max, top_n.
WITH app AS (
  SELECT fs, app_id, FIRST(job_id, TRUE) AS job_id, FIRST(exe, TRUE) AS exe,
         FIRST(user, TRUE) AS user, FIRST(command, TRUE) AS command,
         COUNT(DISTINCT hour) AS hours,
         MAX(risk_oss) AS peak_oss, MAX(risk_mds) AS peak_mds,
         MAX(risk_oss + risk_mds) AS peak_risk,
         SUM(risk_oss) AS sum_oss, SUM(risk_mds) AS sum_mds,
         SUM(risk_oss + risk_mds) AS total_risk,
         ${op_max}
  FROM ah GROUP BY fs, app_id
)
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY fs
                               ORDER BY peak_risk DESC, total_risk DESC, app_id) AS rank
  FROM app WHERE total_risk > 0)
WHERE rank <= ${top_n}
