-- Per job and second, the compute layer (all its nodes): bytes, requests and metadata ops.
-- Input: view `job_trace` (beacon/steps/job_trace.sql).
SELECT job_id, sec,
       SUM(read_bytes) AS read_bytes, SUM(write_bytes) AS write_bytes,
       SUM(read_ops) AS read_ops, SUM(write_ops) AS write_ops, SUM(md_ops) AS md_ops
FROM job_trace
GROUP BY job_id, sec
