-- Slow jobs explained (report section "I/O path"): the day's jobs with the most lost time,
-- each with its top cause (jobs without lost time are left out). Input: view `rs_diagnosis` (job_diagnosis of the day).
-- Parameter: top (rows).
SELECT job_id, app, user, runtime_s, slowdown, job_lost_s, kind, name, share, evidence,
       recommendation, n_causes
FROM (SELECT *, COUNT(*) OVER (PARTITION BY job_id) AS n_causes FROM rs_diagnosis)
WHERE rank = 1 AND job_lost_s > 0
ORDER BY job_lost_s DESC, job_id
LIMIT ${top}
