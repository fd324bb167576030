-- trace_merged: Beacon's second pass, inter-node merge of each job's first-pass trace.
-- Input: view `trace_job` (raw_lwfs_trace of the day attributed to jobs, see
-- lassi/trace_merge.py: job_id, node, sec, op, fd, size, offset, count, path).
-- Parameter: date (the partition written).
-- A merged entry is one vector of the job: <second, op, fd, size, offset, count, path>.
-- Data entries (READ/WRITE) carry no path, so theirs is <second, op, fd, size, offset,
-- count>; metadata entries carry no size or offset, so theirs is <second, op, fd, path,
-- count>. Every node that logged exactly that vector is listed in `nodes` (sorted); a node
-- that logged the same vector twice in one second is listed twice, so exploding `nodes`
-- gives back every first-pass entry and n_nodes = size(nodes) (volume = size x count x
-- n_nodes stays exact). Nulls compare equal in GROUP BY.
SELECT job_id,
       sec AS ts,
       op, fd, size, `offset`, `count`, path,
       CAST(COUNT(*) AS INT) AS n_nodes,
       array_sort(collect_list(node)) AS nodes,
       DATE '${date}' AS date
FROM trace_job
GROUP BY job_id, sec, op, fd, size, `offset`, `count`, path
