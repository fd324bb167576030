-- app_launch: one row per application launch, from the `app_run_in` view (app_run rows of
-- the dates that can overlap the processed day). ALPS apids, Slurm steps and Beacon jobs are
-- launches; a PBS job is a launch only when no finer row shares its job_id. Finer rows take
-- user, project and job name from their PBS job when their own are missing.
WITH fine AS (
  SELECT * FROM app_run_in WHERE source <> 'pbs'
),
pbs AS (
  SELECT job_id, FIRST(user, TRUE) AS user, FIRST(project, TRUE) AS project,
         FIRST(job_name, TRUE) AS job_name
  FROM app_run_in WHERE source = 'pbs' GROUP BY job_id
)
SELECT f.app_id, f.job_id, COALESCE(f.user, p.user) AS user,
       COALESCE(f.project, p.project) AS project, COALESCE(f.job_name, p.job_name) AS job_name,
       f.exe, f.command, f.nodes, f.n_nodes, f.n_procs, f.start, f.`end`, f.exit_status, f.source
FROM fine f LEFT JOIN pbs p ON f.job_id = p.job_id
UNION ALL
SELECT r.app_id, r.job_id, r.user, r.project, r.job_name, r.exe, r.command, r.nodes, r.n_nodes,
       r.n_procs, r.start, r.`end`, r.exit_status, r.source
FROM app_run_in r LEFT ANTI JOIN fine f ON r.job_id = f.job_id
WHERE r.source = 'pbs'
