-- launch_cells: each application launch of the day exploded to node x hour, the equi-join
-- keys that attribute per-node windows to launches (risk/steps/node_counts.sql,
-- siox/steps/export_hops.sql).
-- Input: view `app_launch` (risk/steps/app_launch.sql). Parameters: window_s, day_start,
-- day_end (epoch s).
-- A launch covers the windows of the day that overlap it (window_start < end and
-- window_start + window_s > start; a launch still running at the day's end runs to it):
-- first_window .. last_window. The cells carry only the join keys, that range and
-- `shared`: whether the launch's range meets another launch's range on the node (then some
-- of its node-windows may be claimed by both; launch_claims.sql looks only at these cells,
-- and a day with none has no claims). Launch metadata joins after aggregation.
-- On a node ordered by first window, a range meets an earlier one iff the earlier ranges'
-- latest last window is >= its first, and a later one iff the next range's first window
-- is <= its last (a launch x node row before the hours are exploded: half the rows of the
-- cells on the dense ARCHER day).
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
),
on_node AS (         -- per launch and node: whether its range meets another's there
  SELECT app_id, job_id, node, first_slot, last_slot,
         COALESCE(MAX(last_slot) OVER (PARTITION BY node ORDER BY first_slot, app_id
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                    >= first_slot, FALSE)
         OR COALESCE(LEAD(first_slot) OVER (PARTITION BY node ORDER BY first_slot, app_id)
                       <= last_slot, FALSE) AS shared
  FROM runs
  LATERAL VIEW explode(nodes) n AS node
  WHERE last_slot >= first_slot
)
SELECT app_id, job_id, node, timestamp_seconds(h) AS hour,
       timestamp_seconds(first_slot) AS first_window, timestamp_seconds(last_slot) AS last_window,
       shared
FROM on_node
LATERAL VIEW explode(sequence(CAST(FLOOR(first_slot / 3600) * 3600 AS BIGINT),
                              CAST(FLOOR(last_slot / 3600) * 3600 AS BIGINT),
                              CAST(3600 AS BIGINT))) s AS h
