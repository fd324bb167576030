-- component_ost_minute: per OST and minute of the day, the bandwidth columns of
-- beacon/view_ost_util.sql (max_bw, peak_bw) and the demand evidence of the OST counters.
-- Inputs: views `cmp_ost_util` (beacon/view_ost_util.sql over the day), `sv_ost` (raw_ost of the
-- day). Parameters: day_start, last_minute.
-- Samples go to the minute of their interval's midpoint, clamped into the day, exactly as
-- in beacon/view_ost_util.sql. `busy_samples`: samples whose interval moved bytes; an OST that
-- had traffic in every sample of the minute had requests waiting the whole minute (a
-- lightly used OST goes idle between requests), which is one demand evidence.
-- `ceiling_samples`: busy samples at the OST's ceiling, within 5 % of the fastest sample of
-- the surrounding hour (±30 min): requests kept it at a rate it could not exceed, even if
-- it went idle between bursts — a capped OST serves every burst at the same rate, an
-- OST limited by its clients' demand follows their varying demand.
WITH s AS (
  SELECT ost,
         LEAST(GREATEST(date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2)),
                        TIMESTAMP '${day_start}'), TIMESTAMP '${last_minute}') AS minute,
         read_bytes_delta + write_bytes_delta AS bytes,
         (read_bytes_delta + write_bytes_delta) / interval_s AS bw,
         COALESCE(read_rpc_delta, 0) + COALESCE(write_rpc_delta, 0) AS rpcs
  FROM sv_ost
  WHERE read_bytes_delta >= 0 AND write_bytes_delta >= 0 AND interval_s > 0
),
busy AS (
  SELECT ost, minute, COUNT(*) AS samples, COUNT_IF(bytes > 0) AS busy_samples,
         SUM(rpcs) AS rpcs, MAX(bw) AS top_bw
  FROM s GROUP BY ost, minute
),
near AS (
  SELECT *, MAX(top_bw) OVER (PARTITION BY ost ORDER BY minute RANGE BETWEEN
                              INTERVAL 30 MINUTES PRECEDING AND INTERVAL 30 MINUTES FOLLOWING)
              AS near_max
  FROM busy
),
ceiling AS (
  SELECT s.ost, s.minute, COUNT_IF(s.bytes > 0 AND s.bw >= 0.95 * n.near_max) AS ceiling_samples
  FROM s JOIN near n ON s.ost = n.ost AND s.minute = n.minute
  GROUP BY s.ost, s.minute
)
SELECT 'ost' AS kind, u.ost AS component, u.minute, u.max_bw, u.peak_bw,
       CAST(u.read_bytes + u.write_bytes AS DOUBLE) AS bytes,
       CAST(b.rpcs AS BIGINT) AS rpcs, CAST(b.samples AS INT) AS samples,
       CAST(b.busy_samples AS INT) AS busy_samples, CAST(c.ceiling_samples AS INT) AS ceiling_samples
FROM cmp_ost_util u JOIN busy b ON u.ost = b.ost AND u.minute = b.minute
JOIN ceiling c ON u.ost = c.ost AND u.minute = c.minute
