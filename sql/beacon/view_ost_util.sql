-- view_ost_util (Beacon Fig. 7): per OST and minute, the largest bandwidth the OST's samples
-- show (read + write byte deltas / interval_s) and that as a fraction of its peak.
-- Inputs: views `sv_ost` (raw_ost of the day), `sv_ost_map` (ost, fs, ost_peak_bw of the
-- day), `sv_site_fs` (fs, ost_peak_bw from the site configuration, the fallback).
-- Parameters: day_start, last_minute (first and last minute of the day, UTC), date.
-- A sample's deltas cover the interval before it: it belongs to the minute of the interval's
-- midpoint, clamped into the day (so the day's bytes all stay in the day). Samples without
-- deltas (a series' first) or with negative ones (a counter reset) are left out.
WITH s AS (
  SELECT ost, oss,
         LEAST(GREATEST(date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2)),
                        TIMESTAMP '${day_start}'), TIMESTAMP '${last_minute}') AS minute,
         read_bytes_delta AS rb, write_bytes_delta AS wb,
         (read_bytes_delta + write_bytes_delta) / interval_s AS bw
  FROM sv_ost
  WHERE read_bytes_delta >= 0 AND write_bytes_delta >= 0 AND interval_s > 0
),
m AS (
  SELECT ost, MAX(oss) AS oss, minute, COUNT(*) AS samples, SUM(rb) AS rb, SUM(wb) AS wb,
         MAX(bw) AS max_bw
  FROM s GROUP BY ost, minute
),
mapped AS (
  SELECT ost, MAX(fs) AS fs, MAX(ost_peak_bw) AS peak FROM sv_ost_map GROUP BY ost
),
named AS (
  SELECT m.*, COALESCE(p.fs, regexp_extract(m.ost, '^(.+)-OST[0-9A-Fa-f]+$$', 1)) AS fs,
         p.peak
  FROM m LEFT JOIN mapped p ON m.ost = p.ost
)
SELECT n.ost, n.oss, n.fs, n.minute, CAST(n.samples AS INT) AS samples,
       CAST(n.rb AS BIGINT) AS read_bytes, CAST(n.wb AS BIGINT) AS write_bytes,
       CAST(n.max_bw AS DOUBLE) AS max_bw,
       CAST(COALESCE(n.peak, f.ost_peak_bw) AS DOUBLE) AS peak_bw,
       CASE WHEN COALESCE(n.peak, f.ost_peak_bw) > 0
            THEN n.max_bw / COALESCE(n.peak, f.ost_peak_bw) END AS util,
       DATE '${date}' AS date
FROM named n LEFT JOIN sv_site_fs f ON n.fs = f.fs
