-- Per job, the access pattern its Darshan logs recorded (job_diagnosis's Darshan checks,
-- lassi.siox.diagnosis). Inputs: views `dg_darshan_file` (darshan_file rows of the jobs),
-- `dg_darshan_job` (their darshan_job rows). Parameters: darshan_edges (SQL array of
-- DARSHAN_SIZE_EDGES), small_request (bytes).
-- POSIX counts every call; a file shared by all ranks (rank -1) is aggregated when its MPI-IO
-- requests are collective; a shared file without an MPI-IO record was written with POSIX by
-- every rank (no aggregation at all).
WITH rec AS (
  SELECT job_id, record_id,
         MAX(rank = -1) AS shared,
         SUM(IF(module = 'POSIX', reads + writes, 0)) AS posix_req,
         SUM(IF(module = 'POSIX', aggregate(
               zip_with(zip_with(COALESCE(read_size_hist, array()), COALESCE(write_size_hist, array()),
                                 (a, b) -> COALESCE(a, 0) + COALESCE(b, 0)),
                        ${darshan_edges}, (n, lo) -> IF(lo < ${small_request}, COALESCE(n, 0), 0)),
               CAST(0 AS BIGINT), (a, x) -> a + x), 0)) AS small_req,
         SUM(IF(module = 'POSIX' AND seq_reads IS NOT NULL,
                reads + writes - seq_reads - seq_writes, 0)) AS random_req,
         SUM(IF(module = 'POSIX', COALESCE(file_not_aligned, 0), 0)) AS unaligned_req,
         SUM(IF(module = 'POSIX', COALESCE(rw_switches, 0), 0)) AS switches,
         MAX(module = 'MPI-IO') AS has_mpiio,
         SUM(IF(module = 'MPI-IO', reads + writes, 0)) AS mpiio_req,
         SUM(IF(module = 'MPI-IO', COALESCE(coll_ops, 0), 0)) AS coll_req,
         SUM(IF(module = 'POSIX', meta_time_s, 0)) AS meta_s,
         SUM(IF(module = 'POSIX', read_time_s + write_time_s + meta_time_s, 0)) AS io_s
  FROM dg_darshan_file GROUP BY job_id, record_id
),
job AS (
  SELECT job_id, MAX(nprocs) AS nprocs FROM dg_darshan_job GROUP BY job_id
)
SELECT r.job_id, MAX(j.nprocs) AS nprocs,
       SUM(r.posix_req) AS n_req, SUM(r.small_req) AS n_small,
       SUM(r.random_req) AS n_random, SUM(r.unaligned_req) AS n_unaligned,
       SUM(r.switches) AS n_switch,
       COUNT_IF(r.shared AND (r.posix_req > 0 OR r.mpiio_req > 0)) AS shared_files,
       SUM(IF(r.shared, IF(r.has_mpiio, r.mpiio_req, r.posix_req), 0)) AS shared_req,
       SUM(IF(r.shared AND r.has_mpiio, r.coll_req, 0)) AS shared_coll,
       SUM(r.meta_s) AS meta_s, SUM(r.io_s) AS io_s
FROM rec r LEFT JOIN job j ON j.job_id = r.job_id
GROUP BY r.job_id
