-- job_trace: LWFS client trace lines attributed to Beacon jobs (paper §3.3.2, first step:
-- "jobs that run on given compute node(s) at the log entry collection time").
-- Inputs: views `beacon_jobs` (one row per job: job_id, nodes, start, end) and `trace`
-- (raw_lwfs_trace of the period). Jobs are exploded to their nodes and joined on node (an
-- equi-join); a line belongs to the job whose [start, end + 1 s) holds it — the job log
-- has whole seconds, nodes are exclusive, so the margin never reaches another job.
WITH job_nodes AS (
  SELECT job_id, node, start,
         COALESCE(`end`, TIMESTAMP '9999-12-31 00:00:00') + INTERVAL 1 SECOND AS stop
  FROM beacon_jobs LATERAL VIEW explode(nodes) n AS node
)
SELECT j.job_id, t.node, t.ts, CAST(FLOOR(unix_millis(t.ts) / 1000) AS BIGINT) AS sec,
       t.op, t.fd, t.offset, t.size, t.count, t.path,
       CASE WHEN t.op = 'READ' THEN t.count * t.size ELSE 0 END AS read_bytes,
       CASE WHEN t.op = 'WRITE' THEN t.count * t.size ELSE 0 END AS write_bytes,
       CASE WHEN t.op = 'READ' THEN t.count ELSE 0 END AS read_ops,
       CASE WHEN t.op = 'WRITE' THEN t.count ELSE 0 END AS write_ops,
       CASE WHEN t.op IN ('READ', 'WRITE') THEN 0 ELSE t.count END AS md_ops
FROM trace t JOIN job_nodes j ON t.node = j.node AND t.ts >= j.start AND t.ts < j.stop
