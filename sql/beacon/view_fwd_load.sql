-- view_fwd_load (Beacon Fig. 10): per forwarding node and hour, the peak per-minute load as a
-- fraction of the node's benchmarked peak bandwidth, and its band.
-- Inputs: views `sv_fwd_sample` (beacon/steps/fwd_sample.sql), `sv_fwds` (fwd, fwd_peak_bw:
-- the known forwarding nodes and their peaks, from fwd_map or the site configuration).
-- Parameters: day_start, last_minute, date, band (a CASE expression over `load`).
-- Bytes are the Lustre client estimate of beacon/steps/fwd_ost_minute.sql (RPCs x the interval's average
-- pages per RPC x 4 KiB). A minute's bandwidth is its bytes over the seconds its samples
-- cover (samples summed over OSTs first, one interval per sample), at the interval
-- midpoint as in beacon/view_ost_util.sql. Every known node has a row for every hour of the day:
-- without samples its load is 0 (idle) and `minutes` says so.
WITH samples AS (SELECT * FROM sv_fwd_sample),
minutes AS (
  SELECT fwd,
         LEAST(GREATEST(date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, secs / 2)),
                        TIMESTAMP '${day_start}'), TIMESTAMP '${last_minute}') AS minute,
         SUM(rb) AS rb, SUM(wb) AS wb, SUM(secs) AS secs
  FROM samples GROUP BY 1, 2
),
hours AS (
  SELECT fwd, date_trunc('HOUR', minute) AS hour, COUNT(*) AS minutes,
         SUM(rb) AS rb, SUM(wb) AS wb, MAX((rb + wb) / secs) AS peak_bw,
         max_by(minute, (rb + wb) / secs) AS peak_minute
  FROM minutes GROUP BY 1, 2
),
nodes AS (
  SELECT fwd, MAX(fwd_peak_bw) AS fwd_peak_bw
  FROM (SELECT fwd, fwd_peak_bw FROM sv_fwds
        UNION ALL SELECT DISTINCT fwd, CAST(NULL AS DOUBLE) FROM samples)
  GROUP BY fwd
),
grid AS (
  SELECT n.fwd, n.fwd_peak_bw, h.hour
  FROM nodes n
  CROSS JOIN (SELECT explode(sequence(TIMESTAMP '${day_start}',
                                      TIMESTAMP '${day_start}' + INTERVAL 23 HOURS,
                                      INTERVAL 1 HOUR)) AS hour) h
),
loads AS (
  SELECT g.fwd, g.hour, CAST(COALESCE(h.minutes, 0) AS INT) AS minutes,
         CAST(COALESCE(h.rb, 0) AS BIGINT) AS read_bytes,
         CAST(COALESCE(h.wb, 0) AS BIGINT) AS write_bytes,
         CAST(COALESCE(h.peak_bw, 0) AS DOUBLE) AS peak_bw,
         CASE WHEN h.peak_bw > 0 THEN h.peak_minute END AS peak_minute,
         CAST(g.fwd_peak_bw AS DOUBLE) AS fwd_peak_bw,
         CASE WHEN g.fwd_peak_bw > 0 THEN COALESCE(h.peak_bw, 0) / g.fwd_peak_bw END AS load
  FROM grid g LEFT JOIN hours h ON g.fwd = h.fwd AND g.hour = h.hour
)
SELECT fwd, hour, minutes, read_bytes, write_bytes, peak_bw, peak_minute, fwd_peak_bw, load,
       ${band} AS band, DATE '${date}' AS date
FROM loads
