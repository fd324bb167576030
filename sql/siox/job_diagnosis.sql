-- job_diagnosis: why each job was slow, and what should be done (issue #14; the logic of
-- `lassi why`, lassi.siox.diagnosis). Ranked causes per job with the share of its lost time.
-- Inputs: views `dg_jobs` (siox/steps/diagnosis_jobs.sql: the jobs to explain, with
-- runtime, slowdown and the seconds their runs took beyond their groups' means), `dg_path` (their job_path rows), `dg_interference`
-- (their interference rows), `dg_summary` (their job_summary rows), `dg_app_hour` (their
-- app_hour rows: LASSi counters, the pattern evidence of a job without a Beacon profile),
-- `dg_anomaly` (component_anomaly of the days). Parameters: small_request (bytes),
-- small_share, high_mdops, size_edges (SQL array of REQUEST_SIZE_EDGES), md_sum (the sum
-- of the MDS counters), date.
-- Lost time: the larger of runtime - command group mean (LASSi) and the causal path's
-- measured excess (lost_s + lost_load_s). Causes:
--   component  pinpointed faults on the path (their lost_s);
--   neighbour  Beacon interference neighbours share the path's load part by bandwidth
--              (no path: half of what no component explains, marked weak);
--   pattern    small requests / N:1 / metadata-heavy share what is left;
--   history    what is left when no pattern is flagged.
WITH tot AS (
  SELECT job_id, SUM(lost_s) AS comp_lost, SUM(COALESCE(lost_load_s, 0)) AS load_lost,
         COUNT(*) AS hops
  FROM dg_path GROUP BY job_id
),
job AS (
  SELECT j.*, COALESCE(t.comp_lost, 0) AS comp_lost, COALESCE(t.load_lost, 0) AS load_lost,
         COALESCE(t.hops, 0) > 0 AS has_path,
         GREATEST(COALESCE(j.hist_lost_s, 0),
                  COALESCE(t.comp_lost, 0) + COALESCE(t.load_lost, 0), 0) AS lost_s
  FROM dg_jobs j LEFT JOIN tot t ON t.job_id = j.job_id
),
comp AS (
  SELECT p.job_id, p.component, MAX(p.kind) AS kind, SUM(p.lost_s) AS lost_s,
         MIN(CASE WHEN p.lost_s > 0 THEN p.ts END) AS first_ts,
         MAX(CASE WHEN p.lost_s > 0 THEN p.ts END) AS last_ts,
         MIN(CASE WHEN p.kind = 'fwd' AND p.lost_s > 0 THEN p.rate_ratio END) AS worst_ratio
  FROM dg_path p GROUP BY p.job_id, p.component HAVING SUM(p.lost_s) > 0
),
anom AS (
  SELECT c.job_id, c.component,
         concat_ws('; ', collect_list(format_string('%s anomaly %s-%s', a.rule,
                   date_format(a.start, 'HH:mm'), date_format(a.end, 'HH:mm')))) AS text
  FROM comp c JOIN job j ON j.job_id = c.job_id
  JOIN dg_anomaly a ON a.component = c.component AND a.start <= j.end AND a.end >= j.start
  GROUP BY c.job_id, c.component
),
comp_causes AS (
  SELECT c.job_id, 'component' AS kind, c.component AS name, c.lost_s,
         concat(CASE c.kind WHEN 'fwd' THEN 'forwarding node ' ELSE 'OST ' END, c.component,
                ' was pinpointed at fault ', date_format(c.first_ts, 'HH:mm'), '-',
                date_format(c.last_ts, 'HH:mm'), ' UTC while the job used it; the job lost ',
                format_number(c.lost_s / 60, 1), ' min there',
                CASE WHEN c.worst_ratio > 0 THEN concat(' (service up to ',
                     format_number(1 / c.worst_ratio, 1), 'x its normal time)') ELSE '' END,
                COALESCE(concat('; ', a.text), '')) AS evidence,
         CASE c.kind WHEN 'fwd'
           THEN 'Report it to the admins (LWFS server); rerun on compute nodes served by another forwarding node.'
           ELSE 'Report it to the storage team; until it is fixed, stripe new files away from it (lfs setstripe with an OST pool or index list without it).'
         END AS recommendation
  FROM comp c LEFT JOIN anom a ON a.job_id = c.job_id AND a.component = c.component
),
nb AS (
  SELECT job_id, neighbour, MAX(cause) AS cause, MAX(COALESCE(bw, 0)) AS bw,
         MAX(COALESCE(iops, 0)) AS iops, MAX(COALESCE(mdops, 0)) AS mdops
  FROM dg_interference WHERE neighbour IS NOT NULL GROUP BY job_id, neighbour
),
nb_causes AS (
  SELECT n.job_id, 'neighbour' AS kind, n.neighbour AS name,
         CASE WHEN j.has_path THEN j.load_lost ELSE 0.5 * GREATEST(j.lost_s - j.comp_lost, 0) END
           * CASE WHEN SUM(n.bw) OVER w > 0 THEN n.bw / SUM(n.bw) OVER w
                  ELSE 1.0 / COUNT(*) OVER w END AS lost_s,
         concat('job ', n.neighbour, ' shared its forwarding nodes (', n.cause, '; ',
                format_number(n.bw / 1048576, 0), ' MiB/s, ', format_number(n.iops, 0),
                ' IOPS, ', format_number(n.mdops, 0), ' MDOPS)',
                CASE WHEN j.has_path THEN ''
                     ELSE ' - no path data: the share is a rough split' END) AS evidence,
         'Run at another time or ask for nodes on other forwarding nodes; the admins can throttle the neighbour''s I/O.'
           AS recommendation
  FROM nb n JOIN job j ON j.job_id = n.job_id
  WINDOW w AS (PARTITION BY n.job_id)
),
rest AS (
  SELECT j.job_id,
         GREATEST(j.lost_s - j.comp_lost - COALESCE(SUM(n.lost_s), 0), 0) AS rest_s
  FROM job j LEFT JOIN nb_causes n ON n.job_id = j.job_id
  GROUP BY j.job_id, j.lost_s, j.comp_lost
),
lassi_io AS (
  SELECT a.job_id, SUM(a.read_ops + a.write_ops) AS ops,
         SUM(a.read_kb + a.write_kb) * 1024 AS bytes,
         SUM(${md_sum}) AS md
  FROM dg_app_hour a GROUP BY a.job_id
),
pat_in AS (
  SELECT job_id, io_mode, n_io_nodes, avg_mdops,
         aggregate(size_hist, CAST(0 AS BIGINT), (a, x) -> a + x) AS n_req,
         aggregate(zip_with(size_hist, ${size_edges}, (n, lo) -> IF(lo < ${small_request}, n, 0)),
                   CAST(0 AS BIGINT), (a, x) -> a + x) AS n_small,
         CAST(NULL AS DOUBLE) AS mean_req, 'beacon' AS src
  FROM dg_summary
  UNION ALL
  -- a job without a Beacon profile: LASSi's per-job counters (mean request size only)
  SELECT l.job_id, CAST(NULL AS STRING), CAST(NULL AS INT),
         l.md / NULLIF(j.runtime_s, 0),
         CAST(l.ops AS BIGINT),
         CAST(IF(l.bytes / NULLIF(l.ops, 0) < ${small_request}, l.ops, 0) AS BIGINT),
         l.bytes / NULLIF(l.ops, 0), 'lassi'
  FROM lassi_io l JOIN job j ON j.job_id = l.job_id
  LEFT ANTI JOIN dg_summary s ON s.job_id = l.job_id
),
flags AS (
  SELECT s.job_id, f.code, f.evidence, f.recommendation
  FROM pat_in s
  LATERAL VIEW inline(array(
    named_struct('code', 'small-requests',
      'flag', s.n_req > 0 AND s.n_small >= ${small_share} * s.n_req,
      'evidence', CASE WHEN s.src = 'beacon'
        THEN concat(format_number(100 * s.n_small / GREATEST(s.n_req, 1), 0), ' % of its ',
                    format_number(s.n_req, 0), ' requests were smaller than ',
                    CAST(${small_request} / 1024 AS INT), ' KiB')
        ELSE concat('its ', format_number(s.n_req, 0), ' requests averaged ',
                    format_number(s.mean_req / 1024, 1), ' KiB (Lustre export counters), under ',
                    CAST(${small_request} / 1024 AS INT), ' KiB') END,
      'recommendation', 'Buffer or aggregate writes (collective I/O, larger transfer sizes, an I/O library such as HDF5/ADIOS with aggregation).'),
    named_struct('code', 'n1-no-aggregation', 'flag', s.io_mode = 'N:1',
      'evidence', concat('N:1 mode: ', COALESCE(CAST(s.n_io_nodes AS STRING), '?'),
                         ' nodes wrote one shared file'),
      'recommendation', 'Use collective I/O with aggregators, or one file per node (N:N), and stripe the shared file over more OSTs.'),
    named_struct('code', 'metadata-heavy', 'flag', COALESCE(s.avg_mdops, 0) >= ${high_mdops},
      'evidence', concat(format_number(COALESCE(s.avg_mdops, 0), 0),
                         IF(s.src = 'beacon', ' metadata operations/s during its I/O phases',
                            ' metadata operations/s over its runtime (Lustre export counters)'),
                         ' (>= ', format_number(${high_mdops}, 0), ')'),
      'recommendation', 'Open files once and keep them open; avoid stat/ls in loops; put many small files in an archive or a container file.')
  )) f AS code, flag, evidence, recommendation
  WHERE f.flag
),
pattern_causes AS (
  SELECT f.job_id, 'pattern' AS kind, f.code AS name,
         r.rest_s / COUNT(*) OVER (PARTITION BY f.job_id) AS lost_s,
         f.evidence, f.recommendation
  FROM flags f JOIN rest r ON r.job_id = f.job_id
),
history_causes AS (
  SELECT r.job_id, 'history' AS kind, 'slower-than-group' AS name, r.rest_s AS lost_s,
         concat('the run took ', format_number(j.slowdown, 2), 'x the mean of its ',
                CAST(j.group_runs AS STRING), ' command-group runs; no component, ',
                'neighbour or pattern explains this part') AS evidence,
         CAST(NULL AS STRING) AS recommendation
  FROM rest r JOIN job j ON j.job_id = r.job_id
  LEFT ANTI JOIN flags f ON f.job_id = r.job_id
  WHERE r.rest_s > 0
),
causes AS (
  SELECT * FROM comp_causes UNION ALL SELECT * FROM nb_causes
  UNION ALL SELECT * FROM pattern_causes UNION ALL SELECT * FROM history_causes
)
SELECT j.job_id, CAST(ROW_NUMBER() OVER (PARTITION BY j.job_id
                                         ORDER BY c.lost_s DESC, c.kind, c.name) AS INT) AS rank,
       c.kind, c.name, CASE WHEN j.lost_s > 0 THEN c.lost_s / j.lost_s ELSE 0.0 END AS share,
       c.lost_s, c.evidence, c.recommendation,
       j.lost_s AS job_lost_s, j.slowdown, j.runtime_s, j.app, j.user, j.start,
       filter(array(
         CASE WHEN NOT j.has_path THEN 'no causal path for this job (no Beacon forwarding layer or job trace): component evidence is missing, shares are weak' END,
         CASE WHEN j.slowdown IS NULL THEN 'no command-group history for this run: lost time is what the causal path measured' END
       ), x -> x IS NOT NULL) AS notes,
       DATE '${date}' AS date
FROM job j JOIN causes c ON c.job_id = j.job_id
WHERE c.lost_s > 0
