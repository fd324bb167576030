-- Per application launch, compute node, Lustre target and capture window: what the launch
-- moved there, from Lustre export statistics (sites without forwarding nodes, e.g. ARCHER;
-- lassi.siox.export_path). A client NID is one compute node and nodes are allocated
-- exclusively, so a node's export counters in a window belong to the launch running on it;
-- a window that two launches of a job share (one ending, the next starting) is split by
-- their seconds in it, as in risk/steps/node_counts.sql.
-- Inputs: views `launch_cells` and `launch_claims` (risk/steps/launch_cells.sql and
-- launch_claims.sql) and `xp_target_window` (risk/node_window.sql with by_target: per
-- node, filesystem, target and window). Parameter: md_sum (the sum of the MDT counters).
-- Joined on (node, hour), an equi-join, as in risk/steps/node_counts.sql; a window
-- belongs to a launch when it lies inside the launch's first..last window.
SELECT c.app_id, c.job_id, w.node, w.fs, w.target,
       CASE WHEN w.target LIKE '%-MDT%' THEN 'mdt' ELSE 'ost' END AS kind,
       w.window_start AS ts, c.hour,
       w.read_kb * 1024 * COALESCE(k.share, 1.0) AS read_bytes,
       w.write_kb * 1024 * COALESCE(k.share, 1.0) AS write_bytes,
       CAST(w.read_ops + w.write_ops AS DOUBLE) * COALESCE(k.share, 1.0) AS ops,
       CAST(${md_sum} AS DOUBLE) * COALESCE(k.share, 1.0) AS md_ops
FROM launch_cells c JOIN xp_target_window w
  ON c.node = w.node AND c.hour = date_trunc('HOUR', w.window_start)
 AND w.window_start BETWEEN c.first_window AND c.last_window
LEFT JOIN launch_claims k
  ON k.app_id = c.app_id AND k.node = w.node AND k.window_start = w.window_start
WHERE w.read_kb + w.write_kb + w.read_ops + w.write_ops + ${md_sum} > 0
