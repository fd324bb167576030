-- run_slowdown: the slowdown analysis of each launch that started on the day before or on the
-- date (its app_run date), keyed like its app_run row: runtime, its group's runs and mean
-- runtime, slowdown factor and flag, and its summed app_hour risks (LASSi Table 7).
-- Inputs: views `run_metrics` (risk/steps/run_metrics.sql, every launch of the period) and
-- `app_run_in` (app_run rows of the period). Parameters: prev, date (the dates written).
SELECT r.app_id, r.source, m.runtime_s, m.group_runs, m.group_mean_s, m.slowdown, m.slowed,
       m.risk_oss_sum, m.risk_mds_sum, r.date
FROM app_run_in r JOIN run_metrics m ON r.app_id = m.app_id AND r.source = m.source
WHERE r.date IN (DATE '${prev}', DATE '${date}')
