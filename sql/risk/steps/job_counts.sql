-- job_counts: a launch's counters from its job's own job_stats windows, per launch,
-- filesystem and hour.
-- Inputs: views `launch_cells` (risk/steps/launch_cells.sql), `launch_meta`
-- (risk/steps/launch_meta.sql) and `job_window_in` (job_window of the day). Parameters:
-- job_sums (SUM(x) AS x per counter), share_counters (as in risk/steps/node_counts.sql),
-- window_s.
-- job_stats name the job, not the node: a launch takes its job's windows inside its own
-- first..last window. Where several launches of one job cover a window (concurrent
-- launches, or one ending and the next starting in it), each takes the share of its node
-- count x its seconds in the window (operation counts rounded: the sum of the launches'
-- counts can differ from the job's by a unit per launch there). node_windows counts
-- job x window cells.
WITH jw AS (          -- the job_window ids that name a scheduler job, per job, fs, window
  SELECT job, fs, window_start, ${job_sums}
  FROM job_window_in WHERE id_kind = 'job'
  GROUP BY job, fs, window_start
),
launch_span AS (
  SELECT DISTINCT app_id, job_id, first_window, last_window FROM launch_cells
),
job_cells AS (        -- a launch's job windows, weighted by its node-seconds in each
  SELECT c.app_id, w.*,
         t.n_nodes * CAST(GREATEST(LEAST(t.t1, unix_micros(w.window_start)
                                               + ${window_s} * 1000000)
                                   - GREATEST(t.t0, unix_micros(w.window_start)), 1) AS DOUBLE)
           AS weight
  FROM launch_span c JOIN launch_meta t ON t.app_id = c.app_id
  JOIN jw w ON c.job_id = w.job AND w.window_start BETWEEN c.first_window AND c.last_window
)
SELECT w.app_id, w.fs, date_trunc('HOUR', w.window_start) AS hour,
       COUNT(*) AS node_windows,
       ${share_counters}
FROM (SELECT *, weight / SUM(weight) OVER (PARTITION BY job, fs, window_start) AS share
      FROM job_cells) w
GROUP BY w.app_id, w.fs, date_trunc('HOUR', w.window_start)
