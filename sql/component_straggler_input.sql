-- component_straggler_input: per large job, layer and component, the bandwidth the
-- component gave the job over the minutes it moved the job's data (Beacon Figs. 14-15).
-- Inputs: views `cmp_jobs` (job_summary of the day), `cmp_ts` (job_timeseries of the day),
-- `cmp_peaks` (kind, component, peak_bw). Parameter: large_job_nodes.
-- `bw`: the job's bytes through the component / 60 s per active minute (a straggler that
-- moves its part slowly needs more minutes); `max_bw`: the busiest minute.
WITH big AS (
  SELECT job_id FROM cmp_jobs WHERE n_nodes >= ${large_job_nodes}
),
per_minute AS (
  SELECT t.job_id, CASE t.layer WHEN 'forwarding' THEN 'fwd' ELSE 'ost' END AS kind,
         t.component, t.ts,
         (t.read_bytes + t.write_bytes) / GREATEST(t.interval_s, 1) AS bw,
         t.read_bytes + t.write_bytes AS bytes, t.interval_s
  FROM cmp_ts t JOIN big b ON t.job_id = b.job_id
  WHERE t.layer IN ('forwarding', 'ost') AND t.read_bytes + t.write_bytes > 0
)
SELECT m.job_id, m.kind, m.component, MIN(m.ts) AS start,
       MAX(m.ts + make_dt_interval(0, 0, 0, m.interval_s)) AS `end`,
       CAST(COUNT(*) AS INT) AS minutes, SUM(m.bytes) AS bytes,
       SUM(m.bytes) / SUM(m.interval_s) AS bw, MAX(m.bw) AS max_bw,
       CAST(p.peak_bw AS DOUBLE) AS peak_bw
FROM per_minute m LEFT JOIN cmp_peaks p ON m.kind = p.kind AND m.component = p.component
GROUP BY m.job_id, m.kind, m.component, p.peak_bw
