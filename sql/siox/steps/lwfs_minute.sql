-- LWFS server service per forwarding node and minute (Beacon's Table 5 evidence), from
-- raw_lwfs_server. Input: view `cm_lwfs` (raw_lwfs_server of the day). Parameters:
-- bucket_mid (a SQL array of each latency bucket's representative seconds), day_start,
-- last_minute (UTC).
-- A sample's per-interval histogram (hist_delta) covers the interval since the previous
-- sample of its line; it goes to the minute of the interval's midpoint, clamped into the
-- day. requests: data (Read + Write) and metadata (Meta) requests served, from the exe
-- lines; exe_s / wait_s: mean execution / queueing time of a data request, each bucket
-- counted at its representative value; queue_len: the mean of the Queue gauge.
WITH s AS (
  SELECT fwd, op_class, kind, hist_delta, requests, queue_len,
         ts - make_dt_interval(0, 0, 0, COALESCE(
           (unix_micros(ts) - unix_micros(LAG(ts) OVER (PARTITION BY fwd, op_class, kind
                                                        ORDER BY ts))) / 2e6, 0)) AS mid
  FROM cm_lwfs WHERE fwd IS NOT NULL
),
m AS (
  SELECT fwd, op_class, kind, hist_delta, requests, queue_len,
         LEAST(GREATEST(date_trunc('MINUTE', mid), TIMESTAMP '${day_start}'),
               TIMESTAMP '${last_minute}') AS minute,
         aggregate(zip_with(COALESCE(hist_delta, array()), ${bucket_mid}, (n, v) -> n * v),
                   CAST(0 AS DOUBLE), (acc, x) -> acc + x) AS time_s
  FROM s
)
SELECT fwd, minute,
       SUM(CASE WHEN kind = 'exe' AND op_class IN ('Read', 'Write') THEN requests END) AS data_requests,
       SUM(CASE WHEN kind = 'exe' AND op_class = 'Meta' THEN requests END) AS md_requests,
       SUM(CASE WHEN kind = 'exe' AND op_class IN ('Read', 'Write') THEN time_s END)
         / NULLIF(SUM(CASE WHEN kind = 'exe' AND op_class IN ('Read', 'Write') THEN requests END), 0)
         AS exe_s,
       SUM(CASE WHEN kind = 'wait' AND op_class IN ('Read', 'Write') THEN time_s END)
         / NULLIF(SUM(CASE WHEN kind = 'wait' AND op_class IN ('Read', 'Write') THEN requests END), 0)
         AS wait_s,
       AVG(CASE WHEN op_class = 'Queue' THEN queue_len END) AS queue_len
FROM m
GROUP BY fwd, minute
