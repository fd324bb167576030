-- path_component: every component on the site's I/O path for one date (lassi.siox.path_model).
-- Inputs: views `site_component` (the site configuration), `fwd_map` and `ost_map` (the
-- date's static maps written at ingest; empty on a site or date without them).
-- Parameter: date.
-- A forwarding node's or OST's benchmarked peak bandwidth, and an OST's OSS and filesystem,
-- come from the maps when they have them; a forwarding node or OST only the maps know is
-- added with the configuration's software layers and no IOPS peak.
WITH fwd AS (SELECT fwd, MAX(fwd_peak_bw) AS peak FROM fwd_map GROUP BY fwd),
ost AS (
  SELECT ost, MAX(oss) AS oss, MAX(fs) AS fs, MAX(ost_peak_bw) AS peak
  FROM ost_map GROUP BY ost
),
configured AS (
  SELECT s.component, s.kind, s.level, s.software,
         COALESCE(o.oss, s.host) AS host, COALESCE(o.fs, s.fs) AS fs,
         COALESCE(f.peak, o.peak, s.peak_bw) AS peak_bw, s.peak_iops, s.threads,
         CASE WHEN f.fwd IS NOT NULL THEN 'fwd_map'
              WHEN o.ost IS NOT NULL THEN 'ost_map' ELSE s.source END AS source
  FROM site_component s
  LEFT JOIN fwd f ON s.kind = 'fwd' AND s.component = f.fwd
  LEFT JOIN ost o ON s.kind = 'ost' AND s.component = o.ost
),
layers AS (SELECT kind, FIRST(software) AS software, FIRST(level) AS level
           FROM site_component GROUP BY kind),
only_mapped AS (
  SELECT f.fwd AS component, 'fwd' AS kind, 1 AS level,
         COALESCE(l.software, array('LWFS server', 'Lustre client')) AS software,
         f.fwd AS host, CAST(NULL AS STRING) AS fs, f.peak AS peak_bw,
         CAST(NULL AS DOUBLE) AS peak_iops, CAST(NULL AS INT) AS threads, 'fwd_map' AS source
  FROM fwd f LEFT JOIN layers l ON l.kind = 'fwd'
  LEFT ANTI JOIN site_component s ON s.component = f.fwd
  UNION ALL
  SELECT o.ost, 'ost', 3, COALESCE(l.software, array('OST service (obdfilter)')), o.oss, o.fs,
         o.peak, CAST(NULL AS DOUBLE), CAST(NULL AS INT), 'ost_map'
  FROM ost o LEFT JOIN layers l ON l.kind = 'ost'
  LEFT ANTI JOIN site_component s ON s.component = o.ost
)
SELECT *, DATE '${date}' AS date FROM configured
UNION ALL
SELECT *, DATE '${date}' AS date FROM only_mapped
