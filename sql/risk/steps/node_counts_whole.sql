-- node_counts on a day where no node-window is claimed by two launches (no `launch_claims`
-- row): every launch takes its windows whole, so the counters are plain sums. The same
-- rows as risk/steps/node_counts.sql with every share 1, in a smaller plan: no claims
-- join, integer sums (the dense ARCHER day's counts 1.31 -> 1.07 s warm; bench/scale-history.md,
-- session 50).
-- Inputs: views `launch_cells` (risk/steps/launch_cells.sql) and `nw` (node_window of the
-- day). Parameter: counter_sums (SUM(w.x) AS x per counter).
SELECT c.app_id, w.fs, c.hour,
       COUNT(*) AS node_windows,
       ${counter_sums}
FROM launch_cells c JOIN nw w
  ON c.node = w.node AND c.hour = date_trunc('HOUR', w.window_start)
 AND w.window_start BETWEEN c.first_window AND c.last_window
GROUP BY c.app_id, w.fs, c.hour
