-- report_summary: headline counts of the report period. Input views `period_runs` (app_run
-- of the period), `period_slowdown` (run_slowdown of the period) and `ah` (app_hour of the
-- period). A PBS row is a run only when no finer (ALPS/Slurm/Beacon) row shares its job id,
-- as in risk/steps/app_launch.sql.
WITH runs AS (
  SELECT r.app_id, r.job_id, r.source, s.slowed
  FROM period_runs r LEFT JOIN period_slowdown s
    ON r.app_id = s.app_id AND r.source = s.source AND r.date = s.date
),
fine AS (
  SELECT app_id, job_id, slowed FROM runs WHERE source <> 'pbs'
),
launch AS (
  SELECT app_id, slowed FROM fine
  UNION ALL
  SELECT r.app_id, r.slowed FROM runs r LEFT ANTI JOIN fine f ON r.job_id = f.job_id
  WHERE r.source = 'pbs'
),
hours AS (
  SELECT COUNT(*) AS app_hours, COUNT(DISTINCT app_id) AS apps, COUNT(DISTINCT fs) AS filesystems
  FROM ah
)
SELECT l.runs, l.slowed_runs, h.app_hours, h.apps, h.filesystems
FROM (SELECT COUNT(*) AS runs, COUNT_IF(slowed) AS slowed_runs FROM launch) l CROSS JOIN hours h
