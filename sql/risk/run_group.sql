-- run_group: per exact launch command over the period, the runs' mean and std runtime, how
-- many were slowed, and the Pearson correlation of runtime with the run's summed risk
-- (LASSi Fig. 7; null with fewer than 3 runs or no variation).
-- Inputs: views `run_metrics` (risk/steps/run_metrics.sql) and `app_launch`. Parameters: period_start,
-- period_end, date.
SELECT m.command, FIRST(l.exe, TRUE) AS exe, FIRST(l.user, TRUE) AS user,
       COUNT(*) AS n_runs, AVG(m.runtime_s) AS mean_runtime_s,
       STDDEV_SAMP(m.runtime_s) AS std_runtime_s,
       SUM(CASE WHEN m.slowed THEN 1 ELSE 0 END) AS n_slowed,
       CASE WHEN COUNT(*) >= 3 THEN CORR(m.runtime_s, m.risk_oss_sum) END
         AS corr_runtime_risk_oss,
       CASE WHEN COUNT(*) >= 3 THEN CORR(m.runtime_s, m.risk_mds_sum) END
         AS corr_runtime_risk_mds,
       DATE '${period_start}' AS period_start, DATE '${period_end}' AS period_end,
       DATE '${date}' AS date
FROM run_metrics m JOIN app_launch l ON m.app_id = l.app_id AND m.source = l.source
WHERE m.command IS NOT NULL
GROUP BY m.command
