-- launch_claims: the node x capture windows that two or more launches of the day cover (a
-- job's next launch starting on the nodes in the window its previous one ended in, or job
-- steps sharing a node), with each claiming launch's share of the node-window: its seconds
-- in the window over the claiming launches' seconds. A node-window that one launch covers
-- has no row (its share is 1). Read by risk/steps/node_counts.sql and
-- siox/steps/export_hops.sql, which scale a claimed window's counters by the share.
-- Inputs: views `launch_cells` (risk/steps/launch_cells.sql) and `app_launch`
-- (risk/steps/app_launch.sql). Parameters: window_s, day_end (epoch s).
-- Only the (node, hour) cells whose first..last window range meets another cell's range
-- are exploded to windows, so the view stays as small as the day's shared windows: one
-- job's launches that follow each other on the same nodes share an hour but seldom a
-- window. The cells looked at are those of the launches whose range meets another's on
-- the node (`shared`, launch_cells.sql): every cell that meets another is one of them, and
-- so is the cell it meets. In its (node, hour) ordered by first window, a cell meets an
-- earlier cell iff the earlier cells' latest last window is >= its first, and a later
-- cell iff the next cell's first window is <= its last. (Two ranges that meet and both
-- reach the cell's hour meet inside it: intervals that meet pairwise share a point.)
WITH ordered AS (
  SELECT app_id, node, hour, first_window, last_window,
         MAX(last_window) OVER (PARTITION BY node, hour ORDER BY first_window, app_id
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_last,
         LEAD(first_window) OVER (PARTITION BY node, hour ORDER BY first_window, app_id)
           AS next_first
  FROM launch_cells WHERE shared
),
shared AS (
  SELECT app_id, node, hour, first_window, last_window
  FROM ordered
  WHERE before_last >= first_window OR next_first <= last_window
),
span AS (            -- per launch, its seconds as µs (a launch still running: to day_end)
  SELECT app_id, unix_micros(MIN(start)) AS t0,
         MAX(COALESCE(unix_micros(`end`), CAST(${day_end} AS BIGINT) * 1000000)) AS t1
  FROM app_launch GROUP BY app_id
),
slots AS (           -- the windows of each shared cell inside its launch's first..last
  SELECT s.app_id, s.node, s.hour, slot, t.t0, t.t1
  FROM shared s JOIN span t ON t.app_id = s.app_id
  LATERAL VIEW explode(sequence(
      GREATEST(CAST(CEIL(unix_seconds(s.hour) / ${window_s}) * ${window_s} AS BIGINT),
               unix_seconds(s.first_window)),
      LEAST(unix_seconds(s.hour) + 3599, unix_seconds(s.last_window)),
      CAST(${window_s} AS BIGINT))) x AS slot
),
weighed AS (       -- a slot lies in its cell's hour: (node, hour, slot) is (node, slot),
                   -- and rows already hashed by (node, hour) need no second shuffle
  SELECT app_id, node, hour, slot,
         CAST(GREATEST(LEAST(t1, (slot + ${window_s}) * 1000000) - GREATEST(t0, slot * 1000000),
                       1) AS DOUBLE) AS weight,
         COUNT(*) OVER (PARTITION BY node, hour, slot) AS claims
  FROM slots
)
SELECT app_id, node, timestamp_seconds(slot) AS window_start,
       weight / SUM(weight) OVER (PARTITION BY node, hour, slot) AS share
FROM weighed
WHERE claims > 1
