-- app_hour counters: per launch, filesystem and hour, the counters and the launch's names.
-- Inputs: views `launch_counts` (risk/steps/counts_by_source.sql, or node_counts with
-- `attributed_by` on a day without job_stats) and `launch_meta`
-- (risk/steps/launch_meta.sql). Parameter: counter_names (k.x per counter).
-- Launch metadata joins after aggregation: the join above carries only keys.
SELECT k.app_id, m.job_id, k.fs, k.hour, m.user, m.exe, m.command, m.n_nodes,
       k.node_windows, k.attributed_by, ${counter_names}
FROM launch_counts k JOIN launch_meta m ON k.app_id = m.app_id
