-- app_hour counters: node_window attributed to application launches by an equi-join.
-- Inputs: views `app_launch` (see app_launch.sql) and `nw` (node_window of the day).
-- Parameters: window_s, day_start, day_end (epoch s).
-- Each launch is exploded to node x window for the windows of the day that overlap it
-- (window_start < end and window_start + window_s > start; a launch still running at the
-- day's end runs to it); node_window joins on (node, window_start) — never a range join.
-- Nodes are allocated exclusively and the scheduler's epilogue keeps a node idle for at
-- least one window between launches, so no window is claimed by two launches.
WITH runs AS (
  SELECT app_id, job_id, user, exe, command, nodes,
         CAST(size(nodes) AS INT) AS n_nodes,
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
cells AS (
  SELECT app_id, job_id, user, exe, command, n_nodes, node,
         timestamp_seconds(slot) AS window_start
  FROM runs
  LATERAL VIEW explode(nodes) n AS node
  LATERAL VIEW explode(sequence(first_slot, last_slot, CAST(${window_s} AS BIGINT))) s AS slot
  WHERE last_slot >= first_slot
)
SELECT c.app_id, FIRST(c.job_id) AS job_id, w.fs, date_trunc('HOUR', w.window_start) AS hour,
       FIRST(c.user) AS user, FIRST(c.exe) AS exe, FIRST(c.command) AS command,
       FIRST(c.n_nodes) AS n_nodes, COUNT(*) AS node_windows,
       ${sum_counters}
FROM cells c JOIN nw w ON c.node = w.node AND c.window_start = w.window_start
GROUP BY c.app_id, w.fs, date_trunc('HOUR', w.window_start)
