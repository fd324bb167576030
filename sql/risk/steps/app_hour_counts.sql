-- app_hour counters: node_window attributed to application launches by an equi-join, or
-- a launch's job's own job_stats windows.
-- Inputs: views `app_launch` (see risk/steps/app_launch.sql), `launch_cells` and
-- `launch_claims` (risk/steps/launch_cells.sql and launch_claims.sql over it), `nw`
-- (node_window of the day) and `job_window_in` (job_window of the day).
-- Parameters: share_counters, job_sums (SUM(x) AS x per counter), counter_names, window_s,
-- day_end (epoch s).
-- Each launch is exploded to node x hour (launch_cells); node_window joins on (node,
-- hour) — an equi-join, never a range-only join — and keeps the windows inside the
-- launch's first..last window.
-- (node x hour makes about 8x fewer cells than node x window at 3-minute windows.)
-- Nodes are allocated exclusively and the scheduler's epilogue keeps a node idle between
-- jobs, but one job's launches follow each other on the same nodes: a window in which one
-- ends and the next starts (or job steps sharing a node) is split between them by their
-- seconds in it (launch_claims; every other window has share 1).
-- job_stats name the job, not the node: a launch takes its job's windows inside its own
-- first..last window. Where several launches of one job cover a window (concurrent
-- launches, or one ending and the next starting in it), each takes the share of its node
-- count x its seconds in the window (operation counts rounded: the sum of the launches'
-- counts can differ from the job's by a unit per launch there). Where a launch's job has
-- job_stats on a filesystem, they replace the node join's counters of that launch and
-- filesystem (`attributed_by`); node_windows then counts job x window cells.
WITH jw AS (          -- the job_window ids that name a scheduler job, per job, fs, window
  SELECT job, fs, window_start, ${job_sums}
  FROM job_window_in WHERE id_kind = 'job'
  GROUP BY job, fs, window_start
),
node_counts AS (
  SELECT w.app_id, w.fs, w.hour,
         COUNT(*) AS node_windows,
         ${share_counters}
  FROM (SELECT c.app_id, c.hour, w.*, COALESCE(k.share, 1.0) AS share
        FROM launch_cells c JOIN nw w
          ON c.node = w.node AND c.hour = date_trunc('HOUR', w.window_start)
         AND w.window_start BETWEEN c.first_window AND c.last_window
        LEFT JOIN launch_claims k
          ON k.app_id = c.app_id AND k.node = w.node AND k.window_start = w.window_start) w
  GROUP BY w.app_id, w.fs, w.hour
),
launch_span AS (
  SELECT DISTINCT app_id, job_id, first_window, last_window FROM launch_cells
),
meta AS (            -- per launch: what app_hour names it by, its nodes and its span (µs)
  SELECT app_id, FIRST(job_id) AS job_id, FIRST(user) AS user, FIRST(exe) AS exe,
         FIRST(command) AS command, CAST(FIRST(size(nodes)) AS INT) AS n_nodes,
         unix_micros(MIN(start)) AS t0,
         MAX(COALESCE(unix_micros(`end`), CAST(${day_end} AS BIGINT) * 1000000)) AS t1
  FROM app_launch GROUP BY app_id
),
job_cells AS (        -- a launch's job windows, weighted by its node-seconds in each
  SELECT c.app_id, w.*,
         t.n_nodes * CAST(GREATEST(LEAST(t.t1, unix_micros(w.window_start)
                                               + ${window_s} * 1000000)
                                   - GREATEST(t.t0, unix_micros(w.window_start)), 1) AS DOUBLE)
           AS weight
  FROM launch_span c JOIN meta t ON t.app_id = c.app_id
  JOIN jw w ON c.job_id = w.job AND w.window_start BETWEEN c.first_window AND c.last_window
),
job_counts AS (
  SELECT w.app_id, w.fs, date_trunc('HOUR', w.window_start) AS hour,
         COUNT(*) AS node_windows,
         ${share_counters}
  FROM (SELECT *, weight / SUM(weight) OVER (PARTITION BY job, fs, window_start) AS share
        FROM job_cells) w
  GROUP BY w.app_id, w.fs, date_trunc('HOUR', w.window_start)
),
counts AS (
  SELECT *, 'job_stats' AS attributed_by FROM job_counts
  UNION ALL
  SELECT n.*, 'exports' AS attributed_by FROM node_counts n
  LEFT ANTI JOIN (SELECT DISTINCT app_id, fs FROM job_counts) j
    ON n.app_id = j.app_id AND n.fs = j.fs
)
SELECT k.app_id, m.job_id, k.fs, k.hour, m.user, m.exe, m.command, m.n_nodes,
       k.node_windows, k.attributed_by, ${counter_names}
FROM counts k JOIN meta m ON k.app_id = m.app_id
