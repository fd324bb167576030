-- app_hour counters: node_window attributed to application launches by an equi-join.
-- Inputs: views `app_launch` (see risk/steps/app_launch.sql), `launch_cells`
-- (risk/steps/launch_cells.sql over it) and `nw` (node_window of the day).
-- Parameters: sum_counters, counter_names.
-- Each launch is exploded to node x hour (launch_cells); node_window joins on (node,
-- hour) — an equi-join, never a range-only join — and keeps the windows inside the
-- launch's first..last window.
-- (node x hour makes about 8x fewer cells than node x window at 3-minute windows.)
-- Nodes are allocated exclusively and the scheduler's epilogue keeps a node idle for at
-- least one window between launches, so no window is claimed by two launches.
WITH counts AS (
  SELECT c.app_id, w.fs, c.hour,
         COUNT(*) AS node_windows,
         ${sum_counters}
  FROM launch_cells c JOIN nw w
    ON c.node = w.node AND c.hour = date_trunc('HOUR', w.window_start)
   AND w.window_start BETWEEN c.first_window AND c.last_window
  GROUP BY c.app_id, w.fs, c.hour
),
meta AS (
  SELECT app_id, FIRST(job_id) AS job_id, FIRST(user) AS user, FIRST(exe) AS exe,
         FIRST(command) AS command, CAST(FIRST(size(nodes)) AS INT) AS n_nodes
  FROM app_launch GROUP BY app_id
)
SELECT k.app_id, m.job_id, k.fs, k.hour, m.user, m.exe, m.command, m.n_nodes,
       k.node_windows, ${counter_names}
FROM counts k JOIN meta m ON k.app_id = m.app_id
