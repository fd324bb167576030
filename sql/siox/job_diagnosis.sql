-- job_diagnosis: why each job was slow, and what should be done (issue #14; the logic of
-- `lassi why`, lassi.siox.diagnosis). Ranked causes per job with the share of its lost time.
-- Inputs: views `dg_job` (siox/steps/diagnosis_lost.sql: the jobs to explain, with runtime,
-- slowdown and lost time), `dg_path` (their job_path rows), `dg_interference`
-- (their interference rows), `dg_shared` (siox/steps/diagnosis_shared.sql: their neighbours
-- on busy Lustre targets, sites with export statistics), `dg_summary` (their job_summary rows), `dg_app_hour` (their
-- app_hour rows: LASSi counters, the pattern evidence of a job without a Beacon profile),
-- `dg_anomaly` (component_anomaly of the days), `dg_darshan` (siox/steps/darshan_io.sql:
-- their Darshan access patterns), `dg_darshan_ost` (the OSTs whose files were slower in their
-- Darshan logs, lassi.siox.ost_correlation.slow_osts), `dg_jobstats_ost` (the OSTs the day's
-- Lustre job_stats flag that served them slower, lassi.siox.jobstats_ost). Parameters: the `diagnosis:` settings
-- (small_request bytes, small_share, min_requests, random_share, unaligned_share,
-- rw_switch_share, collective_share, metadata_time_share, metadata_rank_s), small_text (the
-- Darshan small-request limit in words), single_fwd (TRUE: the site has one forwarding
-- node), export_path (TRUE: the site's path comes from Lustre export statistics, its
-- faults judged on the runs), high_mdops, size_edges and darshan_edges (SQL arrays), md_sum
-- (the sum of the MDS counters), date.
-- Causes:
--   component  pinpointed faults on the path (their lost_s), OSTs whose files were slower
--              in the job's Darshan log (the longest file time on it - elsewhere) and OSTs
--              the day's job_stats flag that served the job slower than its other OSTs (the
--              extra service time of its requests there, at most its runtime);
--   neighbour  Beacon interference neighbours share the path's load part by bandwidth
--              (no path: half of what no component explains, marked weak); on export
--              statistics the jobs loading the busy targets it used, by their share there
--              (the job's own share of that load stays with it: pattern / history);
--   pattern    small requests / N:1 without aggregation / metadata-heavy / random access /
--              unaligned / read-after-write share what is left (listed with share 0 when
--              nothing is left: the recommendation still holds);
--   history    what is left when no pattern is flagged.
WITH dost AS (
  SELECT job_id, ost_name, coefficient, p_value, n_files, n_total, slowest_on_s,
         slowest_off_s,
         GREATEST(slowest_on_s - COALESCE(slowest_off_s, 0), 0) AS lost_s
  FROM dg_darshan_ost
),
job AS (SELECT * FROM dg_job),
comp AS (
  SELECT p.job_id, p.component, MAX(p.kind) AS kind, SUM(p.lost_s) AS lost_s,
         MIN(CASE WHEN p.lost_s > 0 THEN p.ts END) AS first_ts,
         MAX(CASE WHEN p.lost_s > 0 THEN p.ts END) AS last_ts,
         MIN(CASE WHEN p.lat_s IS NOT NULL AND p.lost_s > 0 THEN p.rate_ratio END) AS worst_ratio,
         -- an OST hop with its clients' wait per RPC: named on direct evidence
         MAX(p.layer = 'ost' AND p.lat_s IS NOT NULL) AS measured
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
path_causes AS (
  SELECT c.job_id, 'component' AS kind, c.component AS name, c.lost_s, 0 AS src,
         concat(CASE c.kind WHEN 'fwd' THEN 'forwarding node ' WHEN 'mdt' THEN 'MDT '
                            ELSE 'OST ' END, c.component,
                ' was pinpointed at fault ', date_format(c.first_ts, 'HH:mm'), '-',
                date_format(c.last_ts, 'HH:mm'), ' UTC while the job used it; the job lost ',
                format_number(c.lost_s / 60, 1), ' min there',
                CASE WHEN c.worst_ratio > 0 THEN concat(' (service up to ',
                     format_number(1 / c.worst_ratio, 1), 'x its normal time)')
                     WHEN ${export_path} THEN ' (the runs that used it that hour ran longer than their command groups; the runs that avoided it did not)'
                     ELSE '' END,
                COALESCE(concat('; ', a.text), '')) AS evidence,
         CASE c.kind WHEN 'fwd'
           THEN 'Report it to the admins (LWFS server); rerun on compute nodes served by another forwarding node.'
           WHEN 'mdt'
           THEN 'Report it to the storage team (metadata server); until it is fixed, keep metadata-heavy work (many small files, frequent opens and stats) off this file system.'
           ELSE 'Report it to the storage team; until it is fixed, stripe new files away from it (lfs setstripe with an OST pool or index list without it).'
         END AS recommendation
  FROM comp c LEFT JOIN anom a ON a.job_id = c.job_id AND a.component = c.component
),
darshan_causes AS (
  SELECT job_id, 'component' AS kind, ost_name AS name, lost_s, 1 AS src,
         concat('files on OST ', ost_name, ' were slower in its Darshan log (Pearson r ',
                format_number(coefficient, 2), ' over ', CAST(n_total AS STRING), ' files, ',
                CAST(n_files AS STRING), ' on it, p ', format_string('%.1g', p_value),
                '): they took up to ',
                format_number(slowest_on_s, 0), ' s, its files elsewhere up to ',
                COALESCE(format_number(slowest_off_s, 0), '?'), ' s') AS evidence,
         'Report it to the storage team; until it is fixed, stripe new files away from it (lfs setstripe with an OST pool or index list without it).'
           AS recommendation
  FROM dost WHERE lost_s > 0
),
jobstats_causes AS (
  SELECT o.job_id, 'component' AS kind, o.ost_name AS name,
         LEAST(o.service_s * (1 - o.x), COALESCE(j.runtime_s, o.service_s)) AS lost_s, 2 AS src,
         concat('OST ', o.ost_name, ' served its requests at ', format_number(o.x, 2),
                'x the rate of its other OSTs in Lustre job_stats (',
                format_number(o.bytes / 1048576.0, 1), ' MiB in ',
                format_number(o.service_s, 1), ' s of OST service time); across the jobs of',
                ' the day its pairs were the slow ones (Pearson r ',
                format_number(o.coefficient, 2), ' over ', CAST(o.n_total AS STRING),
                ' job-OST pairs, ', CAST(o.n_pairs AS STRING), ' on it, p ',
                format_string('%.1g', o.p_value), ')') AS evidence,
         'Report it to the storage team; until it is fixed, stripe new files away from it (lfs setstripe with an OST pool or index list without it).'
           AS recommendation
  FROM dg_jobstats_ost o JOIN job j ON j.job_id = o.job_id
  WHERE o.service_s * (1 - o.x) > 0
),
comp_causes AS (      -- one cause per component: the path's evidence, Darshan's, job_stats'
  SELECT job_id, kind, name, lost_s, evidence, recommendation FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY job_id, name ORDER BY src) AS k
    FROM (SELECT * FROM path_causes UNION ALL SELECT * FROM darshan_causes
          UNION ALL SELECT * FROM jobstats_causes))
  WHERE k = 1
),
ctot AS (
  SELECT job_id, SUM(lost_s) AS comp_lost FROM comp_causes GROUP BY job_id
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
),
nb_causes AS (
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
  FROM nb n JOIN job j ON j.job_id = n.job_id LEFT JOIN ctot t ON t.job_id = n.job_id
  WINDOW w AS (PARTITION BY n.job_id)
),
rest AS (
  SELECT j.job_id,
         GREATEST(j.lost_s - COALESCE(MAX(t.comp_lost), 0) - COALESCE(SUM(n.lost_s), 0), 0)
           AS rest_s
  FROM job j LEFT JOIN nb_causes n ON n.job_id = j.job_id LEFT JOIN ctot t ON t.job_id = j.job_id
  GROUP BY j.job_id, j.lost_s
),
lassi_io AS (
  SELECT a.job_id, SUM(a.read_ops + a.write_ops) AS ops,
         SUM(a.read_kb + a.write_kb) * 1024 AS bytes,
         SUM(${md_sum}) AS md
  FROM dg_app_hour a GROUP BY a.job_id
),
pat_in AS (
  SELECT job_id, 'beacon' AS src, io_mode, n_io_nodes, avg_mdops,
         aggregate(size_hist, CAST(0 AS BIGINT), (a, x) -> a + x) AS n_req,
         aggregate(zip_with(size_hist, ${size_edges}, (n, lo) -> IF(lo < ${small_request}, n, 0)),
                   CAST(0 AS BIGINT), (a, x) -> a + x) AS n_small,
         CAST(NULL AS DOUBLE) AS mean_req, CAST(NULL AS STRUCT<n_random: BIGINT,
         n_unaligned: BIGINT, n_switch: BIGINT, shared_files: BIGINT, shared_req: BIGINT,
         shared_coll: BIGINT, nprocs: BIGINT, meta_s: DOUBLE, io_s: DOUBLE>) AS d
  FROM dg_summary
  UNION ALL
  -- a job without a Beacon profile: LASSi's per-job counters (mean request size only)
  SELECT l.job_id, 'lassi', CAST(NULL AS STRING), CAST(NULL AS INT),
         l.md / NULLIF(j.runtime_s, 0),
         CAST(l.ops AS BIGINT),
         CAST(IF(l.bytes / NULLIF(l.ops, 0) < ${small_request}, l.ops, 0) AS BIGINT),
         l.bytes / NULLIF(l.ops, 0), NULL
  FROM lassi_io l JOIN job j ON j.job_id = l.job_id
  LEFT ANTI JOIN dg_summary s ON s.job_id = l.job_id
  UNION ALL
  -- the job's Darshan logs: every check, and the most precise evidence
  SELECT job_id, 'darshan', NULL, NULL, NULL, n_req, n_small, NULL,
         named_struct('n_random', n_random, 'n_unaligned', n_unaligned, 'n_switch', n_switch,
                      'shared_files', shared_files, 'shared_req', shared_req,
                      'shared_coll', shared_coll, 'nprocs', nprocs, 'meta_s', meta_s,
                      'io_s', io_s)
  FROM dg_darshan WHERE n_req >= ${min_requests}
),
checks AS (
  SELECT s.job_id, s.src, f.code, f.flag, f.evidence, f.recommendation
  FROM pat_in s
  LATERAL VIEW inline(array(
    named_struct('code', 'small-requests',
      'flag', s.n_req > 0 AND s.n_small >= ${small_share} * s.n_req,
      'evidence', CASE s.src
        WHEN 'beacon' THEN concat(format_number(100 * s.n_small / GREATEST(s.n_req, 1), 0),
                    ' % of its ', format_number(s.n_req, 0), ' requests were smaller than ',
                    CAST(${small_request} / 1024 AS INT), ' KiB')
        WHEN 'darshan' THEN concat(format_number(100 * s.n_small / GREATEST(s.n_req, 1), 0),
                    ' % of its ', format_number(s.n_req, 0), ' POSIX requests were under ',
                    '${small_text} (Darshan)')
        ELSE concat('its ', format_number(s.n_req, 0), ' requests averaged ',
                    format_number(s.mean_req / 1024, 1), ' KiB (Lustre export counters), under ',
                    CAST(${small_request} / 1024 AS INT), ' KiB') END,
      'recommendation', 'Buffer or aggregate writes (collective I/O, larger transfer sizes, an I/O library such as HDF5/ADIOS with aggregation).'),
    named_struct('code', 'n1-no-aggregation',
      'flag', CASE WHEN s.src = 'darshan'
                THEN s.d.shared_files > 0 AND s.d.nprocs > 1 AND s.d.shared_req >= ${min_requests}
                     AND s.d.shared_coll < ${collective_share} * s.d.shared_req
                ELSE s.io_mode = 'N:1' END,
      'evidence', IF(s.src = 'darshan',
        concat(CAST(s.d.nprocs AS STRING), ' ranks shared ', CAST(s.d.shared_files AS STRING),
               ' file(s); ', format_number(100 * s.d.shared_coll / GREATEST(s.d.shared_req, 1), 0),
               ' % of their ', format_number(s.d.shared_req, 0),
               ' requests were collective (Darshan)'),
        concat('N:1 mode: ', COALESCE(CAST(s.n_io_nodes AS STRING), '?'),
               ' nodes wrote one shared file')),
      'recommendation', 'Use collective I/O with aggregators, or one file per node (N:N), and stripe the shared file over more OSTs.'),
    named_struct('code', 'metadata-heavy',
      'flag', CASE WHEN s.src = 'darshan'
                THEN s.d.meta_s >= ${metadata_time_share} * s.d.io_s AND s.d.io_s > 0
                     AND s.d.meta_s / GREATEST(s.d.nprocs, 1) >= ${metadata_rank_s}
                ELSE COALESCE(s.avg_mdops, 0) >= ${high_mdops} END,
      'evidence', CASE s.src
        WHEN 'darshan' THEN concat('metadata took ', format_number(100 * s.d.meta_s / NULLIF(s.d.io_s, 0), 0),
                    ' % of its I/O time, ', format_number(s.d.meta_s / GREATEST(s.d.nprocs, 1), 0),
                    ' s per rank (Darshan)')
        ELSE concat(format_number(COALESCE(s.avg_mdops, 0), 0),
                    IF(s.src = 'beacon', ' metadata operations/s during its I/O phases',
                       ' metadata operations/s over its runtime (Lustre export counters)'),
                    ' (>= ', format_number(${high_mdops}, 0), ')') END,
      'recommendation', 'Open files once and keep them open; avoid stat/ls in loops; put many small files in an archive or a container file.'),
    named_struct('code', 'random-access',
      'flag', s.d.n_random >= ${random_share} * s.n_req,
      'evidence', concat(format_number(100 * s.d.n_random / GREATEST(s.n_req, 1), 0),
                         ' % of its ', format_number(s.n_req, 0),
                         ' POSIX requests were not sequential (Darshan)'),
      'recommendation', 'Read and write in large contiguous blocks in file order: sort or batch the accesses, or let collective I/O or an I/O library reorder them.'),
    named_struct('code', 'unaligned',
      'flag', s.d.n_unaligned >= ${unaligned_share} * s.n_req,
      'evidence', concat(format_number(100 * s.d.n_unaligned / GREATEST(s.n_req, 1), 0),
                         ' % of its ', format_number(s.n_req, 0),
                         ' POSIX requests did not start on the file system alignment (Darshan)'),
      'recommendation', 'Align requests and file offsets to the stripe size (lfs getstripe): MPI-IO hints striping_unit/romio_cb_*, or H5Pset_alignment in HDF5.'),
    named_struct('code', 'read-after-write',
      'flag', s.d.n_switch >= ${rw_switch_share} * s.n_req,
      'evidence', concat('its files switched between writing and reading ',
                         format_number(s.d.n_switch, 0), ' times in ',
                         format_number(s.n_req, 0), ' POSIX requests (Darshan)'),
      'recommendation', 'Separate the write and read phases: keep data just written in memory instead of reading it back, or read it after one flush.')
  )) f AS code, flag, evidence, recommendation
),
flags AS (      -- one per job and code: Darshan's evidence, then Beacon's, then LASSi's
  SELECT job_id, code, evidence, recommendation FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY job_id, code
                                 ORDER BY CASE src WHEN 'darshan' THEN 0
                                                   WHEN 'beacon' THEN 1 ELSE 2 END) AS k
    FROM checks WHERE flag)
  WHERE k = 1
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
         CASE WHEN NOT j.has_path AND dj.job_id IS NULL THEN 'no causal path for this job (no Beacon job trace or Lustre export statistics): component evidence is missing, shares are weak'
              WHEN NOT j.has_path THEN 'no causal path for this job (no Beacon job trace or Lustre export statistics): the component evidence is its Darshan log alone' END,
         CASE WHEN j.slowdown IS NULL AND j.lost_s > 0 THEN 'no command-group history for this run: lost time is what the causal path or the Darshan log measured' END,
         CASE WHEN ${single_fwd} AND j.has_path AND ost.job_id IS NOT NULL THEN 'the site has one forwarding node: its own slowness and slow OSTs raise the same LWFS service times, so an OST named here may be the forwarding node (and the reverse)' END,
         CASE WHEN j.lost_s <= 0 THEN 'no lost time measured (no command-group history, causal path or slow OST): the patterns are listed without a share' END
       ), x -> x IS NOT NULL) AS notes,
       DATE '${date}' AS date
FROM job j JOIN causes c ON c.job_id = j.job_id
LEFT JOIN (SELECT DISTINCT job_id FROM dg_darshan) dj ON dj.job_id = j.job_id
LEFT JOIN (SELECT DISTINCT job_id FROM comp WHERE kind = 'ost' AND NOT measured) ost
  ON ost.job_id = j.job_id
WHERE c.lost_s > 0 OR c.kind = 'pattern'
