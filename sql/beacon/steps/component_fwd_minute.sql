-- component_fwd_minute: per forwarding node and minute of the day, the largest bandwidth a
-- Lustre client sample shows (bytes summed over the node's OSTs / interval_s) and the LWFS
-- server's demand evidence in that minute.
-- Inputs: views `sv_fwd_sample` (beacon/steps/fwd_sample.sql), `sv_server` (raw_lwfs_server of
-- the day), `sv_fwds` (fwd, fwd_peak_bw: known forwarding nodes and their peaks).
-- Parameters: day_start, last_minute (first and last minute of the day, UTC).
-- Bytes are estimated as in beacon/view_fwd_load.sql (RPCs x pages per RPC x 4 KiB); a sample
-- belongs to the minute of its interval's midpoint, clamped into the day. Demand: the
-- Read/Write requests the LWFS server handled (exe histogram counts) and its queue length
-- gauge (average and largest of the minute's Queue lines), each line (its counts cover
-- the interval since the previous line of its kind, the queue is averaged over it) at the
-- midpoint of that interval like the Lustre client samples.
WITH samples AS (SELECT fwd, ts, secs, rb + wb AS bytes, rpcs FROM sv_fwd_sample),
bw AS (
  SELECT fwd,
         LEAST(GREATEST(date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, secs / 2)),
                        TIMESTAMP '${day_start}'), TIMESTAMP '${last_minute}') AS minute,
         MAX(bytes / secs) AS max_bw, SUM(bytes) AS bytes, SUM(rpcs) AS rpcs
  FROM samples GROUP BY 1, 2
),
lines AS (
  SELECT fwd, op_class, kind, requests, queue_len,
         ts - (ts - COALESCE(LAG(ts) OVER (PARTITION BY fwd, op_class, kind ORDER BY ts), ts)) / 2
           AS mid
  FROM sv_server
  WHERE fwd IS NOT NULL
),
srv AS (
  SELECT fwd,
         LEAST(GREATEST(date_trunc('MINUTE', mid), TIMESTAMP '${day_start}'),
               TIMESTAMP '${last_minute}') AS minute,
         SUM(CASE WHEN op_class IN ('Read', 'Write') AND kind = 'exe' AND requests > 0
                  THEN requests ELSE 0 END) AS requests,
         AVG(CASE WHEN op_class = 'Queue' THEN queue_len END) AS queue_avg,
         MAX(CASE WHEN op_class = 'Queue' THEN queue_len END) AS queue_max
  FROM lines
  GROUP BY 1, 2
),
peaks AS (
  SELECT fwd, MAX(fwd_peak_bw) AS peak_bw FROM sv_fwds GROUP BY fwd
)
SELECT 'fwd' AS kind, COALESCE(b.fwd, s.fwd) AS component,
       COALESCE(b.minute, s.minute) AS minute,
       CAST(COALESCE(b.max_bw, 0) AS DOUBLE) AS max_bw,
       CAST(p.peak_bw AS DOUBLE) AS peak_bw,
       CAST(COALESCE(b.bytes, 0) AS DOUBLE) AS bytes,
       CAST(COALESCE(b.rpcs, 0) AS BIGINT) AS rpcs,
       CAST(COALESCE(s.requests, 0) AS BIGINT) AS requests,
       CAST(s.queue_avg AS DOUBLE) AS queue_avg,
       CAST(s.queue_max AS DOUBLE) AS queue_max
FROM bw b FULL OUTER JOIN srv s ON b.fwd = s.fwd AND b.minute = s.minute
LEFT JOIN peaks p ON p.fwd = COALESCE(b.fwd, s.fwd)
