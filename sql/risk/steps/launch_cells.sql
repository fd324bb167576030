-- launch_cells: each application launch of the day exploded to node x hour, the equi-join
-- keys that attribute per-node windows to launches (risk/steps/app_hour_counts.sql,
-- siox/steps/export_hops.sql).
-- Input: view `app_launch` (risk/steps/app_launch.sql). Parameters: window_s, day_start,
-- day_end (epoch s).
-- A launch covers the windows of the day that overlap it (window_start < end and
-- window_start + window_s > start; a launch still running at the day's end runs to it):
-- first_window .. last_window. The cells carry only the join keys and that range; launch
-- metadata joins after aggregation.
WITH runs AS (
  SELECT app_id, job_id, nodes,
         GREATEST(CAST(FLOOR(unix_seconds(start) / ${window_s}) * ${window_s} AS BIGINT),
                  CAST(${day_start} AS BIGINT)) AS first_slot,
         LEAST(CAST(CEIL(COALESCE(unix_micros(`end`) / 1e6, ${day_end}) / ${window_s})
                    * ${window_s} AS BIGINT) - ${window_s},
               CAST(${day_end} - ${window_s} AS BIGINT)) AS last_slot
  FROM app_launch
  WHERE start IS NOT NULL AND nodes IS NOT NULL
    AND start < timestamp_seconds(${day_end})
    AND (`end` IS NULL OR `end` > timestamp_seconds(${day_start}))
)
SELECT app_id, job_id, node, timestamp_seconds(h) AS hour,
       timestamp_seconds(first_slot) AS first_window, timestamp_seconds(last_slot) AS last_window
FROM runs
LATERAL VIEW explode(nodes) n AS node
LATERAL VIEW explode(sequence(CAST(FLOOR(first_slot / 3600) * 3600 AS BIGINT),
                              CAST(FLOOR(last_slot / 3600) * 3600 AS BIGINT),
                              CAST(3600 AS BIGINT))) s AS h
WHERE last_slot >= first_slot
