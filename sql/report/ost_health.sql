-- From the day's last snapshot of each source and file system (view rt_health = ost_health
-- of the day): the ${top} fullest OSTs per file system (lfs df), the file system's OST
-- count and mean fullness, and the targets `lctl dl -t` shows failed over (at most 100).
WITH last AS (
  SELECT source, fs, max(ts) AS ts FROM rt_health GROUP BY source, fs
), snap AS (
  SELECT h.* FROM rt_health h JOIN last l ON h.source = l.source AND h.fs = l.fs AND h.ts = l.ts
), fullest AS (
  SELECT *, row_number() OVER (PARTITION BY fs ORDER BY use_pct DESC, target) AS rank,
         count(*) OVER (PARTITION BY fs) AS osts, avg(use_pct) OVER (PARTITION BY fs) AS fs_mean
  FROM snap WHERE source = 'lfs-df' AND kind = 'OST'
)
SELECT 'fullest' AS what, fs, ts, target, use_pct, used_kib, total_kib, osts, fs_mean,
       CAST(NULL AS STRING) AS server_nid
FROM fullest WHERE rank <= ${top}
UNION ALL
SELECT * FROM (
  SELECT 'failed_over' AS what, fs, ts, target, use_pct, used_kib, total_kib,
         CAST(NULL AS BIGINT) AS osts, CAST(NULL AS DOUBLE) AS fs_mean, server_nid
  FROM snap WHERE source = 'lctl-dl' AND failed_over ORDER BY fs, target LIMIT 100)
