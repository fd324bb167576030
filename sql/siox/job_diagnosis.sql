-- job_diagnosis: why each job was slow, and what should be done (issue #14; the logic of
-- `lassi why`, lassi.siox.diagnosis). Ranked causes per job with the share of its lost time.
-- Inputs: views `dg_job` (siox/steps/diagnosis_lost.sql: the jobs to explain, with runtime,
-- slowdown and lost time), `dg_comp` (siox/steps/diagnosis_comp.sql: the components on
-- their paths that lost them time), `dg_comp_causes` (siox/steps/diagnosis_comp_causes.sql:
-- their component causes), `dg_nb_causes` (siox/steps/diagnosis_neighbours.sql: their
-- neighbour causes), `dg_summary` (their job_summary rows), `dg_app_hour` (their app_hour
-- rows: LASSi counters, the pattern evidence of a job without a Beacon profile), `dg_darshan`
-- (siox/steps/darshan_io.sql: their Darshan access patterns). The steps are materialised
-- one by one: each is read several times here, and one SQL over all of them planned 46
-- Spark jobs. Parameters: the `diagnosis:` settings
-- (small_request bytes, small_share, min_requests, random_share, unaligned_share,
-- rw_switch_share, collective_share, metadata_time_share, metadata_rank_s), small_text (the
-- Darshan small-request limit in words), single_fwd (TRUE: the site has one forwarding
-- node), high_mdops, size_edges (an SQL array), md_sum (the sum of the MDS counters), date.
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
WITH job AS (SELECT * FROM dg_job),
ctot AS (
  SELECT job_id, SUM(lost_s) AS comp_lost FROM dg_comp_causes GROUP BY job_id
),
rest AS (
  SELECT j.job_id,
         GREATEST(j.lost_s - COALESCE(MAX(t.comp_lost), 0) - COALESCE(SUM(n.lost_s), 0), 0)
           AS rest_s
  FROM job j LEFT JOIN dg_nb_causes n ON n.job_id = j.job_id LEFT JOIN ctot t ON t.job_id = j.job_id
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
  SELECT * FROM dg_comp_causes UNION ALL SELECT * FROM dg_nb_causes
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
LEFT JOIN (SELECT DISTINCT job_id FROM dg_comp WHERE kind = 'ost' AND NOT measured) ost
  ON ost.job_id = j.job_id
WHERE c.lost_s > 0 OR c.kind = 'pattern'
