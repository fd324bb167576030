-- Components at fault of the day (report section "I/O path"): per pinpointed component,
-- the hours it was named, its largest slowdown, and the jobs whose causal path lost time
-- to it. Inputs: views `rs_pinpoint` (component_pinpoint of the day), `rs_job_path`
-- (job_path of the day).
WITH pins AS (
  SELECT component, kind, COUNT(*) AS hours, array_sort(collect_list(hour)) AS named,
         MAX(beta) AS max_beta, AVG(explained) AS explained,
         array_sort(collect_set(COALESCE(evidence, 'lwfs_fit'))) AS evidence
  FROM rs_pinpoint GROUP BY component, kind
),
lost AS (
  SELECT component, COUNT(DISTINCT job_id) AS jobs, SUM(lost_s) AS lost_s,
         max_by(job_id, lost_s) AS worst_job
  FROM (SELECT component, job_id, SUM(lost_s) AS lost_s FROM rs_job_path
        WHERE lost_s > 0 GROUP BY component, job_id)
  GROUP BY component
)
SELECT p.component, p.kind, p.hours, p.named, p.max_beta, p.explained, p.evidence,
       COALESCE(l.jobs, 0) AS jobs, COALESCE(l.lost_s, 0) AS lost_s, l.worst_job
FROM pins p LEFT JOIN lost l ON l.component = p.component
ORDER BY lost_s DESC, hours DESC, component
