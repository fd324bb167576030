-- launch_counts: per launch, filesystem and hour, the counters app_hour takes and where
-- they come from (`attributed_by`): where a launch's job has job_stats on a filesystem,
-- they replace the node join's counters of that launch and filesystem.
-- Inputs: views `job_counts` (risk/steps/job_counts.sql) and `node_counts`
-- (risk/steps/node_counts.sql or node_counts_whole.sql). A day without job_window rows
-- takes node_counts as they are ('exports') and reads no job_stats query.
SELECT *, 'job_stats' AS attributed_by FROM job_counts
UNION ALL
SELECT n.*, 'exports' AS attributed_by FROM node_counts n
LEFT ANTI JOIN (SELECT DISTINCT app_id, fs FROM job_counts) j
  ON n.app_id = j.app_id AND n.fs = j.fs
