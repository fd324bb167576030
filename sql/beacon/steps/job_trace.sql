-- job_trace: LWFS client trace lines of the profiled jobs, with their bytes and ops.
-- Inputs: views `attributed` (raw_lwfs_trace lines with their job, from
-- lassi.beacon.trace_merge.attribute_trace: the one attribution rule — a line belongs to the
-- Beacon job whose node list holds its node and whose [start, end] holds its second, an
-- equi-join on node) and `beacon_jobs` (the jobs being profiled).
SELECT t.job_id, t.node, timestamp_seconds(t.sec) AS ts, t.sec,
       t.op, t.fd, t.offset, t.size, t.count, t.path,
       CASE WHEN t.op = 'READ' THEN t.count * t.size ELSE 0 END AS read_bytes,
       CASE WHEN t.op = 'WRITE' THEN t.count * t.size ELSE 0 END AS write_bytes,
       CASE WHEN t.op = 'READ' THEN t.count ELSE 0 END AS read_ops,
       CASE WHEN t.op = 'WRITE' THEN t.count ELSE 0 END AS write_ops,
       CASE WHEN t.op IN ('READ', 'WRITE') THEN 0 ELSE t.count END AS md_ops
FROM attributed t LEFT SEMI JOIN beacon_jobs j ON t.job_id = j.job_id
