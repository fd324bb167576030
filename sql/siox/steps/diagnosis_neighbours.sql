-- The neighbour causes of each job (lassi.siox.diagnosis; see sql/siox/job_diagnosis.sql):
-- Beacon interference neighbours share the path's load part by bandwidth (no path: half
-- of what no component explains, marked weak); on export statistics the jobs loading the
-- busy targets it used, by their share there. Inputs: views `dg_job`, `dg_comp_causes`,
-- `dg_interference`, `dg_shared`. Materialised once: the remainder reads it.
WITH ctot AS (
  SELECT job_id, SUM(lost_s) AS comp_lost FROM dg_comp_causes GROUP BY job_id
),
nb AS (
  SELECT job_id, neighbour, MAX(cause) AS cause, CAST(NULL AS STRING) AS target,
         MAX(COALESCE(bw, 0)) AS weight, 0.0 AS self_weight, CAST(NULL AS DOUBLE) AS mean_share,
         CAST(NULL AS INT) AS windows, MAX(COALESCE(bw, 0)) AS bw,
         MAX(COALESCE(iops, 0)) AS iops, MAX(COALESCE(mdops, 0)) AS mdops
  FROM dg_interference WHERE neighbour IS NOT NULL GROUP BY job_id, neighbour
  UNION ALL
  SELECT job_id, neighbour, 'shared target', target, weight, self_weight, mean_share, windows,
         bw, iops, mdops
  FROM dg_shared
)
SELECT n.job_id, 'neighbour' AS kind, n.neighbour AS name,
       CASE WHEN j.has_path THEN j.load_lost
            ELSE 0.5 * GREATEST(j.lost_s - COALESCE(t.comp_lost, 0), 0) END
         * CASE WHEN SUM(n.weight) OVER w > 0
                THEN n.weight / (SUM(n.weight) OVER w + MAX(n.self_weight) OVER w)
                ELSE 1.0 / COUNT(*) OVER w END AS lost_s,
       concat('job ', n.neighbour,
              CASE WHEN n.target IS NULL
                   THEN concat(' shared its forwarding nodes (', n.cause, '; ')
                   ELSE concat(' loaded ', n.target, ' while it ran near its peak and this ',
                               'job used it (on average ', format_number(100 * n.mean_share, 0),
                               ' % of its traffic in the ', CAST(n.windows AS STRING),
                               ' capture windows they shared; ') END,
              format_number(n.bw / 1048576, 0), ' MiB/s, ', format_number(n.iops, 0),
              ' IOPS, ', format_number(n.mdops, 0), ' MDOPS)',
              CASE WHEN j.has_path THEN ''
                   ELSE ' - no path data: the share is a rough split' END) AS evidence,
       CASE WHEN n.target IS NULL
         THEN 'Run at another time or ask for nodes on other forwarding nodes; the admins can throttle the neighbour''s I/O.'
         ELSE 'Run at another time or on another file system; the admins can throttle the neighbour''s I/O (Lustre NRS TBF rules per job).'
       END AS recommendation
FROM nb n JOIN dg_job j ON j.job_id = n.job_id LEFT JOIN ctot t ON t.job_id = n.job_id
WINDOW w AS (PARTITION BY n.job_id)
