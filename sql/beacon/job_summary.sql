-- job_summary: Beacon's coarse-grained per-job record (paper §3.3.2) for jobs that started
-- in the period. Inputs: views `beacon_jobs`, `job_trace`, `job_compute_second`, `fwd_map`,
-- `job_ts` (the jobs' job_timeseries rows). Parameters: size_hist, size_bytes, size_labels
-- (request-size bucket expressions), cores_per_node, ost_min_fraction.
-- Bandwidths are bytes per second of the compute layer: avg = bytes / seconds with data I/O,
-- peak = the largest one-second total over the job's nodes.
-- I/O mode from which nodes touch which files (OPEN paths by node and fd; a job without data
-- I/O is judged by the paths of its metadata operations): one node -> 1:1; a file touched
-- by several nodes -> N:1; else every node its own files: all of the job's nodes -> N:N,
-- fewer -> N:M.
WITH secs AS (
  SELECT job_id, SUM(read_bytes) AS rb, SUM(write_bytes) AS wb,
         COUNT_IF(read_bytes + write_bytes > 0) AS io_s,
         COUNT_IF(read_bytes > 0) AS r_s, COUNT_IF(write_bytes > 0) AS w_s,
         MAX(read_bytes) AS prb, MAX(write_bytes) AS pwb, MAX(read_bytes + write_bytes) AS pb,
         SUM(read_ops + write_ops) AS data_ops, SUM(md_ops) AS md,
         COUNT_IF(read_bytes + write_bytes + md_ops > 0) AS active_s
  FROM job_compute_second GROUP BY job_id
),
opens AS (
  SELECT job_id, node, fd, FIRST(path, TRUE) AS path
  FROM job_trace WHERE op = 'OPEN' GROUP BY job_id, node, fd
),
data_files AS (
  SELECT t.job_id, t.node, COALESCE(o.path, concat(t.node, ':', t.fd)) AS path
  FROM job_trace t LEFT JOIN opens o ON t.job_id = o.job_id AND t.node = o.node AND t.fd = o.fd
  WHERE t.op IN ('READ', 'WRITE')
),
meta_files AS (
  SELECT t.job_id, t.node, t.path FROM job_trace t
  LEFT ANTI JOIN (SELECT DISTINCT job_id FROM data_files) d ON t.job_id = d.job_id
  WHERE t.op NOT IN ('READ', 'WRITE', 'OPEN', 'CLOSE') AND t.path IS NOT NULL
),
access AS (
  SELECT job_id, node, path FROM data_files UNION ALL SELECT job_id, node, path FROM meta_files
),
sharing AS (
  SELECT job_id, MAX(n) AS max_nodes_per_file, COUNT(*) AS n_files
  FROM (SELECT job_id, path, COUNT(DISTINCT node) AS n FROM access GROUP BY job_id, path)
  GROUP BY job_id
),
io_nodes AS (
  SELECT a.job_id, COUNT(DISTINCT a.node) AS n_io_nodes,
         array_sort(collect_set(m.fwd)) AS fwd_nodes
  FROM access a LEFT JOIN fwd_map m ON a.node = m.node GROUP BY a.job_id
),
sizes AS (
  SELECT job_id, array(${size_hist}) AS size_hist, array(${size_bytes}) AS size_bytes
  FROM job_trace WHERE op IN ('READ', 'WRITE') GROUP BY job_id
),
ost_bytes AS (
  SELECT job_id, component AS ost, SUM(read_bytes + write_bytes) AS b
  FROM job_ts WHERE layer = 'ost' GROUP BY job_id, component
),
osts AS (
  SELECT o.job_id, array_sort(collect_list(o.ost)) AS osts
  FROM ost_bytes o JOIN (SELECT job_id, MAX(b) AS top FROM ost_bytes GROUP BY job_id) t
    ON o.job_id = t.job_id
  WHERE o.b > 0 AND o.b >= ${ost_min_fraction} * t.top
  GROUP BY o.job_id
)
SELECT j.job_id, j.app, j.user, j.start, j.`end`,
       CAST(unix_millis(j.`end`) - unix_millis(j.start) AS DOUBLE) / 1000 AS runtime_s,
       j.n_nodes, COALESCE(n.n_io_nodes, 0) AS n_io_nodes, s.n_files,
       CAST(COALESCE(x.rb, 0) AS BIGINT) AS read_bytes,
       CAST(COALESCE(x.wb, 0) AS BIGINT) AS write_bytes,
       CAST(COALESCE(x.io_s, 0) AS BIGINT) AS io_seconds,
       CASE WHEN x.r_s > 0 THEN x.rb / x.r_s END AS avg_read_bw,
       CASE WHEN x.w_s > 0 THEN x.wb / x.w_s END AS avg_write_bw,
       CASE WHEN x.io_s > 0 THEN (x.rb + x.wb) / x.io_s END AS avg_bw,
       CAST(x.prb AS DOUBLE) AS peak_read_bw, CAST(x.pwb AS DOUBLE) AS peak_write_bw,
       CAST(x.pb AS DOUBLE) AS peak_bw,
       CASE WHEN x.io_s > 0 THEN x.data_ops / x.io_s END AS avg_iops,
       CASE WHEN n.n_io_nodes IS NULL OR n.n_io_nodes = 0 THEN NULL
            WHEN n.n_io_nodes = 1 THEN '1:1'
            WHEN s.max_nodes_per_file > 1 THEN 'N:1'
            WHEN n.n_io_nodes >= j.n_nodes THEN 'N:N'
            ELSE 'N:M' END AS io_mode,
       CAST(x.md AS BIGINT) AS md_ops,
       CASE WHEN x.active_s > 0 THEN x.md / x.active_s END AS avg_mdops,
       z.size_hist,
       CASE WHEN array_max(z.size_bytes) > 0
            THEN element_at(array(${size_labels}),
                            CAST(array_position(z.size_bytes, array_max(z.size_bytes)) AS INT))
       END AS dominant_size,
       n.fwd_nodes, o.osts,
       j.n_nodes * ${cores_per_node}
         * (CAST(unix_millis(j.`end`) - unix_millis(j.start) AS DOUBLE) / 3.6e6) AS core_hours,
       CAST(j.start AS DATE) AS date
FROM beacon_jobs j
LEFT JOIN secs x ON j.job_id = x.job_id
LEFT JOIN sharing s ON j.job_id = s.job_id
LEFT JOIN io_nodes n ON j.job_id = n.job_id
LEFT JOIN sizes z ON j.job_id = z.job_id
LEFT JOIN osts o ON j.job_id = o.job_id
