-- Every job a job-info source knows, one row per (source, job), then the first source in the
-- site's priority order (tokio.jobinfo) that knows the job. Views: jm_app_run (app_run rows),
-- jm_job_summary (Beacon), jm_darshan_job. Slurm = app_run rows ingested from sacct;
-- scheduler = every other app_run source and Beacon's job log; darshan = the job's logs.
WITH runs AS (
  SELECT job_id,
         CASE WHEN source = 'slurm' THEN 'slurm' ELSE 'scheduler' END AS src,
         max_by(user, n_nodes) AS user,
         max_by(coalesce(exe, job_name),
                named_struct('launch', exe IS NOT NULL, 'nodes', n_nodes)) AS app,
         CAST(max(n_nodes) AS BIGINT) AS n_nodes,
         CAST(max(n_procs) AS BIGINT) AS nprocs,
         min(start) AS start, max(`end`) AS `end`
  FROM jm_app_run
  GROUP BY job_id, CASE WHEN source = 'slurm' THEN 'slurm' ELSE 'scheduler' END
), beacon AS (
  SELECT job_id, 'scheduler' AS src, user, app, CAST(n_nodes AS BIGINT) AS n_nodes,
         CAST(NULL AS BIGINT) AS nprocs, start, `end`
  FROM jm_job_summary
), darshan AS (
  SELECT job_id, 'darshan' AS src, max_by(user, nprocs) AS user,
         max_by(element_at(split(exe, '/'), -1), nprocs) AS app,
         CAST(NULL AS BIGINT) AS n_nodes, max(nprocs) AS nprocs,
         min(start) AS start, max(`end`) AS `end`
  FROM jm_darshan_job
  GROUP BY job_id
), known AS (
  SELECT *, array_position(array(${sources}), src) AS priority
  FROM (SELECT * FROM runs UNION ALL SELECT * FROM beacon UNION ALL SELECT * FROM darshan)
  WHERE start IS NOT NULL AND `end` IS NOT NULL
)
SELECT job_id, src AS jobinfo_source, user, app, n_nodes, nprocs, start, `end`,
       CAST(unix_micros(`end`) - unix_micros(start) AS DOUBLE) / 1e6 AS runtime_s
FROM (SELECT *, row_number() OVER (PARTITION BY job_id ORDER BY priority, start) AS rn
      FROM known WHERE priority > 0)
WHERE rn = 1
