-- The jobs `job_diagnosis` explains with the time each lost (lassi.siox.diagnosis), one row
-- per job. Inputs: views `dg_jobs` (siox/steps/diagnosis_jobs.sql), `dg_path` (their
-- job_path rows), `dg_darshan_ost` (the OSTs whose files were slower in their Darshan logs),
-- `dg_jobstats_ost` (the OSTs Lustre job_stats flag that served them slower).
-- Lost time: the largest of runtime - command group mean (LASSi), the causal path's measured
-- excess (lost_s + lost_load_s), the wait on a slow OST in the Darshan log (its slowest
-- file there - its slowest file elsewhere) and the extra OST service time of its requests on
-- a slow OST in job_stats (its `lost_s`, service_s * (1 - x) summed over the job's ids: what
-- they took beyond the rate of its other OSTs, at most the runtime).
WITH tot AS (
  SELECT job_id, SUM(lost_s) AS comp_lost, SUM(COALESCE(lost_load_s, 0)) AS load_lost,
         COUNT(*) AS hops
  FROM dg_path GROUP BY job_id
),
dost AS (
  SELECT job_id, MAX(GREATEST(slowest_on_s - COALESCE(slowest_off_s, 0), 0)) AS lost_s
  FROM dg_darshan_ost GROUP BY job_id
),
jost AS (
  SELECT job_id, MAX(lost_s) AS lost_s FROM dg_jobstats_ost GROUP BY job_id
)
SELECT j.*, COALESCE(t.load_lost, 0) AS load_lost, COALESCE(t.hops, 0) > 0 AS has_path,
       GREATEST(COALESCE(j.hist_lost_s, 0), COALESCE(t.comp_lost, 0) + COALESCE(t.load_lost, 0),
                COALESCE(d.lost_s, 0),
                LEAST(COALESCE(o.lost_s, 0), COALESCE(j.runtime_s, o.lost_s, 0)), 0) AS lost_s
FROM dg_jobs j LEFT JOIN tot t ON t.job_id = j.job_id LEFT JOIN dost d ON d.job_id = j.job_id
LEFT JOIN jost o ON o.job_id = j.job_id
