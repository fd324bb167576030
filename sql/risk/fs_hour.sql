-- fs_hour: per filesystem and hour, the day's app_hour totals, per-op sums of the positive
-- per-application risks, and the filesystem's ops metrics (quality of the hour's I/O).
-- Input view `ah` (app_hour of the day). Parameters: sum_counters, sum_risks.
-- app_hour has one row per (app_id, fs, hour) (risk/steps/node_counts.sql and
-- job_counts.sql group by them, and counts_by_source.sql takes one of the two per launch
-- and filesystem), so a count of rows is the count of applications: no distinct
-- aggregate, whose extra shuffle cost a quarter of the stage.
SELECT fs, hour, COUNT(*) AS n_apps,
       ${sum_counters},
       ${sum_risks},
       SUM(risk_oss) AS risk_oss, SUM(risk_mds) AS risk_mds,
       CASE WHEN SUM(read_kb) > 0 THEN SUM(read_ops) * 1024.0 / SUM(read_kb) END AS read_kb_ops,
       CASE WHEN SUM(write_kb) > 0 THEN SUM(write_ops) * 1024.0 / SUM(write_kb) END AS write_kb_ops,
       FIRST(date) AS date
FROM ah
GROUP BY fs, hour
