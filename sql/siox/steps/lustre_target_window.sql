-- Per Lustre target and capture window, what its own statistics moved and how many client
-- NIDs it served (sites with Lustre export statistics, e.g. ARCHER).
-- Input: view `cm_capture` (raw_lustre_stats of the day and the next day's first capture,
-- kinds target and export). Parameters: window_s, day_start, day_end (epoch s).
-- A target's counters between the captures at t0 and t1 belong to the window starting at
-- t0 = t1 - window_s (captures are regular); a counter that went down was reset (the
-- delta is its value). OST: read/write bytes and requests from read_bytes/write_bytes
-- (sum, samples); MDT: metadata operations, the samples of every md_stats counter. A
-- client is an export whose counters moved in the window. The day's first capture of a
-- series is its baseline.
WITH c AS (
  SELECT target, kind, nid, counter, samples, COALESCE(sum, 0) AS total, snapshot_time,
         CAST(FLOOR(unix_micros(snapshot_time) / 1000000 / ${window_s}) * ${window_s} AS BIGINT)
           AS slot,
         target LIKE '%-MDT%' AS is_mdt
  FROM cm_capture
  WHERE kind IN ('target', 'export')
    AND (counter IN ('read_bytes', 'write_bytes') OR target LIKE '%-MDT%')
),
d AS (
  SELECT target, kind, nid, counter, is_mdt, slot - ${window_s} AS window_slot,
         samples, total, LAG(samples) OVER w AS prev_samples, LAG(total) OVER w AS prev_total
  FROM c WINDOW w AS (PARTITION BY target, kind, nid, counter ORDER BY snapshot_time)
),
clean AS (
  SELECT target, kind, nid, counter, is_mdt, window_slot,
         CASE WHEN samples < prev_samples THEN samples ELSE samples - prev_samples END AS ops,
         CASE WHEN samples < prev_samples THEN total ELSE total - prev_total END AS bytes
  FROM d
  WHERE prev_samples IS NOT NULL AND window_slot >= ${day_start} AND window_slot < ${day_end}
)
SELECT target, CASE WHEN MAX(is_mdt) THEN 'mdt' ELSE 'ost' END AS kind,
       timestamp_seconds(window_slot) AS ts,
       SUM(CASE WHEN kind = 'target' AND counter = 'read_bytes' AND NOT is_mdt THEN bytes ELSE 0 END) AS rb,
       SUM(CASE WHEN kind = 'target' AND counter = 'write_bytes' AND NOT is_mdt THEN bytes ELSE 0 END) AS wb,
       SUM(CASE WHEN kind = 'target' AND counter = 'read_bytes' AND NOT is_mdt THEN ops ELSE 0 END) AS ro,
       SUM(CASE WHEN kind = 'target' AND counter = 'write_bytes' AND NOT is_mdt THEN ops ELSE 0 END) AS wo,
       SUM(CASE WHEN kind = 'target' AND is_mdt THEN ops ELSE 0 END) AS md,
       COUNT(DISTINCT CASE WHEN kind = 'export' AND ops > 0 THEN nid END) AS clients
FROM clean
GROUP BY target, window_slot
