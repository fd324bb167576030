-- app_launch: one row per application launch, from the `app_run_in` view (app_run rows of
-- the dates that can overlap the processed day). ALPS apids, Slurm steps and Beacon jobs are
-- launches; a PBS job is a launch only when no finer row shares its job_id. Finer rows take
-- user, project and job name from their PBS job when their own are missing (a non-null
-- one among the job's PBS rows, usually its only one).
-- One window over the rows by job_id (app_run's job_id and source are never null), not a
-- join of the finer rows to an aggregate of the PBS rows plus an anti-join: the same rows,
-- one shuffle instead of three scans and their exchanges (the dense ARCHER day's launches
-- checkpointed in 0.25-0.32 s against 0.41-0.47 s, two sessions alternating both;
-- bench/scale-history.md, session 48).
WITH runs AS (
  SELECT *,
         MAX(source <> 'pbs') OVER job AS finer,
         FIRST(CASE WHEN source = 'pbs' THEN user END, TRUE) OVER job AS pbs_user,
         FIRST(CASE WHEN source = 'pbs' THEN project END, TRUE) OVER job AS pbs_project,
         FIRST(CASE WHEN source = 'pbs' THEN job_name END, TRUE) OVER job AS pbs_job_name
  FROM app_run_in
  WINDOW job AS (PARTITION BY job_id)
)
SELECT app_id, job_id,
       IF(source = 'pbs', user, COALESCE(user, pbs_user)) AS user,
       IF(source = 'pbs', project, COALESCE(project, pbs_project)) AS project,
       IF(source = 'pbs', job_name, COALESCE(job_name, pbs_job_name)) AS job_name,
       exe, command, nodes, n_nodes, n_procs, start, `end`, exit_status, source
FROM runs
WHERE source <> 'pbs' OR NOT finer
