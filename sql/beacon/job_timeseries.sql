-- job_timeseries: one job's I/O per layer and component over time (Beacon's per-job view).
-- Inputs: views `beacon_jobs`, `job_trace`, `job_share` (beacon/steps/job_share.sql), `fwd_ost`
-- (beacon/steps/fwd_ost_minute.sql), `mds_minute` (MDS ops per mds, source node and minute).
--   compute  '*'     per second: the job's whole compute side, exact from the trace
--   compute  <node>  per minute
--   forwarding <fwd> per minute: the node's Lustre-client traffic x the job's share
--   ost      <ost>   per minute: sum over the job's forwarding nodes of share x traffic
--   mds      <mds>   per minute: ops the job's forwarding nodes sent x the metadata share
-- `date` is the job's start day.
WITH jd AS (SELECT job_id, CAST(start AS DATE) AS date FROM beacon_jobs),
per_second AS (
  SELECT job_id, 'compute' AS layer, '*' AS component, timestamp_seconds(sec) AS ts,
         1 AS interval_s, CAST(read_bytes AS DOUBLE) AS read_bytes,
         CAST(write_bytes AS DOUBLE) AS write_bytes, CAST(read_ops AS DOUBLE) AS read_ops,
         CAST(write_ops AS DOUBLE) AS write_ops, CAST(md_ops AS DOUBLE) AS md_ops,
         CAST(NULL AS DOUBLE) AS share
  FROM job_compute_second
),
per_node AS (
  SELECT job_id, 'compute' AS layer, node AS component, date_trunc('MINUTE', ts) AS ts,
         60 AS interval_s, CAST(SUM(read_bytes) AS DOUBLE), CAST(SUM(write_bytes) AS DOUBLE),
         CAST(SUM(read_ops) AS DOUBLE), CAST(SUM(write_ops) AS DOUBLE),
         CAST(SUM(md_ops) AS DOUBLE), CAST(NULL AS DOUBLE)
  FROM job_trace GROUP BY job_id, node, date_trunc('MINUTE', ts)
),
fwd_total AS (
  SELECT fwd, minute, SUM(read_bytes) AS rb, SUM(write_bytes) AS wb,
         SUM(read_rpcs) AS rr, SUM(write_rpcs) AS wr
  FROM fwd_ost GROUP BY fwd, minute
),
per_fwd AS (
  SELECT s.job_id, 'forwarding' AS layer, s.fwd AS component, s.minute AS ts, 60 AS interval_s,
         COALESCE(f.rb, 0) * s.share_read, COALESCE(f.wb, 0) * s.share_write,
         COALESCE(f.rr, 0) * s.share_read, COALESCE(f.wr, 0) * s.share_write,
         COALESCE(m.ops, 0) * s.share_md, s.share_bytes
  FROM job_share s
  LEFT JOIN fwd_total f ON s.fwd = f.fwd AND s.minute = f.minute
  LEFT JOIN (SELECT source_node, minute, SUM(ops) AS ops FROM mds_minute
             GROUP BY source_node, minute) m
    ON s.fwd = m.source_node AND s.minute = m.minute
),
per_ost AS (
  SELECT s.job_id, 'ost' AS layer, o.ost AS component, s.minute AS ts, 60 AS interval_s,
         SUM(o.read_bytes * s.share_read), SUM(o.write_bytes * s.share_write),
         SUM(o.read_rpcs * s.share_read), SUM(o.write_rpcs * s.share_write),
         0.0, CAST(NULL AS DOUBLE)
  FROM job_share s JOIN fwd_ost o ON s.fwd = o.fwd AND s.minute = o.minute
  GROUP BY s.job_id, o.ost, s.minute
),
per_mds AS (
  SELECT s.job_id, 'mds' AS layer, m.mds AS component, s.minute AS ts, 60 AS interval_s,
         0.0, 0.0, 0.0, 0.0, SUM(m.ops * s.share_md), CAST(NULL AS DOUBLE)
  FROM job_share s JOIN mds_minute m ON s.fwd = m.source_node AND s.minute = m.minute
  GROUP BY s.job_id, m.mds, s.minute
),
everything AS (
  SELECT * FROM per_second UNION ALL SELECT * FROM per_node UNION ALL SELECT * FROM per_fwd
  UNION ALL SELECT * FROM per_ost UNION ALL SELECT * FROM per_mds
)
SELECT e.*, jd.date FROM everything e JOIN jd ON e.job_id = jd.job_id
WHERE e.read_bytes + e.write_bytes + e.read_ops + e.write_ops + e.md_ops > 0
