-- The jobs `job_diagnosis` explains, one row per job (lassi.siox.diagnosis).
-- Inputs: views `dg_runs` (app_run rows), `dg_slowdown` (run_slowdown rows of those runs).
-- A job's runs (ALPS apruns, Slurm steps) are summed: runtime from its first start to its
-- last end; hist_lost_s: seconds its runs took beyond their command groups' mean runtime;
-- slowdown and group_runs: those of its most slowed run; app: its executable, else its job name.
SELECT r.job_id, MAX(COALESCE(r.exe, r.job_name)) AS app, MAX(r.user) AS user, MIN(r.start) AS start,
       MAX(r.end) AS end,
       CAST(unix_micros(MAX(r.end)) - unix_micros(MIN(r.start)) AS DOUBLE) / 1e6 AS runtime_s,
       MAX(s.slowdown) AS slowdown, max_by(s.group_runs, s.slowdown) AS group_runs,
       SUM(GREATEST(s.runtime_s - s.group_mean_s, 0)) AS hist_lost_s,
       BOOL_OR(COALESCE(s.slowed, FALSE)) AS slowed
FROM dg_runs r
LEFT JOIN dg_slowdown s ON s.app_id = r.app_id AND s.source = r.source
WHERE r.start IS NOT NULL AND r.end IS NOT NULL
GROUP BY r.job_id
