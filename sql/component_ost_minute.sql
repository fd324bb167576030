-- component_ost_minute: per OST and minute of the day, the bandwidth columns of
-- view_ost_util.sql (max_bw, peak_bw) and the demand evidence of the OST counters.
-- Inputs: views `cmp_ost_util` (view_ost_util.sql over the day), `sv_ost` (raw_ost of the
-- day). Parameters: day_start, last_minute.
-- Samples go to the minute of their interval's midpoint, clamped into the day, exactly as
-- in view_ost_util.sql. `busy_samples`: samples whose interval moved bytes; an OST that
-- had traffic in every sample of the minute had requests waiting the whole minute (a
-- lightly used OST goes idle between requests), which is the demand evidence used.
WITH s AS (
  SELECT ost,
         LEAST(GREATEST(date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2)),
                        TIMESTAMP '${day_start}'), TIMESTAMP '${last_minute}') AS minute,
         read_bytes_delta + write_bytes_delta AS bytes,
         COALESCE(read_rpc_delta, 0) + COALESCE(write_rpc_delta, 0) AS rpcs
  FROM sv_ost
  WHERE read_bytes_delta >= 0 AND write_bytes_delta >= 0 AND interval_s > 0
),
busy AS (
  SELECT ost, minute, COUNT(*) AS samples, COUNT_IF(bytes > 0) AS busy_samples,
         SUM(rpcs) AS rpcs
  FROM s GROUP BY ost, minute
)
SELECT 'ost' AS kind, u.ost AS component, u.minute, u.max_bw, u.peak_bw,
       CAST(u.read_bytes + u.write_bytes AS DOUBLE) AS bytes,
       CAST(b.rpcs AS BIGINT) AS rpcs, CAST(b.samples AS INT) AS samples,
       CAST(b.busy_samples AS INT) AS busy_samples
FROM cmp_ost_util u JOIN busy b ON u.ost = b.ost AND u.minute = b.minute
