-- Per job and component on its causal path with lost time (lassi.siox.diagnosis): what
-- it lost there, when, its worst rate ratio and whether an OST hop was measured directly
-- (its clients' wait per RPC). Input: view `dg_path` (the jobs' job_path rows).
-- Materialised once: the component causes and job_diagnosis's notes read it.
SELECT p.job_id, p.component, MAX(p.kind) AS kind, SUM(p.lost_s) AS lost_s,
       MIN(CASE WHEN p.lost_s > 0 THEN p.ts END) AS first_ts,
       MAX(CASE WHEN p.lost_s > 0 THEN p.ts END) AS last_ts,
       MIN(CASE WHEN p.lat_s IS NOT NULL AND p.lost_s > 0 THEN p.rate_ratio END) AS worst_ratio,
       -- an OST hop with its clients' wait per RPC: named on direct evidence
       MAX(p.layer = 'ost' AND p.lat_s IS NOT NULL) AS measured
FROM dg_path p GROUP BY p.job_id, p.component HAVING SUM(p.lost_s) > 0
