-- node_counts: node_window attributed to application launches by an equi-join, per launch,
-- filesystem and hour, on a day where some node-windows are claimed by two launches.
-- Inputs: views `launch_cells`, `launch_claims` (risk/steps/launch_cells.sql and
-- launch_claims.sql) and `nw` (node_window of the day). Parameter: share_counters (each
-- counter's sum of its windows' values x the launch's share: kB stay doubles, operations
-- are rounded to counts; a share of 1 keeps the sums exact).
-- Each launch is exploded to node x hour (launch_cells); node_window joins on (node,
-- hour) — an equi-join, never a range-only join — and keeps the windows inside the
-- launch's first..last window. (node x hour makes about 8x fewer cells than node x window
-- at 3-minute windows.)
-- Nodes are allocated exclusively and the scheduler's epilogue keeps a node idle between
-- jobs, but one job's launches follow each other on the same nodes: a window in which one
-- ends and the next starts (or job steps sharing a node) is split between them by their
-- seconds in it (launch_claims; every other window has share 1). A day without claims
-- reads risk/steps/node_counts_whole.sql instead: the same rows, plain sums.
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
