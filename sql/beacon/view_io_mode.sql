-- view_io_mode (Beacon Tables 3, 4, 6): jobs with non-trivial I/O that started on the day,
-- per I/O mode and per core-hour bucket, with the totals of each ('all'). A fixed grid:
-- every mode (N:N N:M N:1 1:1, all) x every bucket (and all), zeros included.
-- Inputs: views `sv_jobs` (job_summary of the day), `sv_buckets` (bucket_no, ch_bucket,
-- ch_lo, ch_hi: core-hours in (ch_lo, ch_hi], null = open). Parameters: min_bytes (a job's
-- read + write bytes that make its I/O non-trivial), date. A job without core_hours counts
-- in its mode's 'all' row only.
WITH jobs AS (
  SELECT j.io_mode, b.ch_bucket, j.read_bytes, j.write_bytes, COALESCE(j.core_hours, 0) AS ch
  FROM sv_jobs j
  LEFT JOIN sv_buckets b
    ON j.core_hours IS NOT NULL AND (b.ch_lo IS NULL OR j.core_hours > b.ch_lo)
       AND (b.ch_hi IS NULL OR j.core_hours <= b.ch_hi)
  WHERE j.io_mode IS NOT NULL AND j.read_bytes + j.write_bytes >= ${min_bytes}
),
grouped AS (
  SELECT io_mode, ch_bucket, grouping(io_mode) AS all_modes, grouping(ch_bucket) AS all_buckets,
         COUNT(*) AS jobs, COUNT_IF(read_bytes > 0) AS read_jobs,
         COUNT_IF(write_bytes > 0) AS write_jobs, SUM(read_bytes) AS rb,
         SUM(write_bytes) AS wb, SUM(ch) AS ch
  FROM jobs
  GROUP BY GROUPING SETS ((io_mode, ch_bucket), (io_mode), (ch_bucket), ())
),
agg AS (
  SELECT CASE WHEN all_modes = 1 THEN 'all' ELSE io_mode END AS io_mode,
         CASE WHEN all_buckets = 1 THEN 'all' ELSE ch_bucket END AS ch_bucket,
         jobs, read_jobs, write_jobs, rb, wb, ch
  FROM grouped WHERE all_buckets = 1 OR ch_bucket IS NOT NULL
),
modes AS (SELECT explode(array('N:N', 'N:M', 'N:1', '1:1', 'all')) AS io_mode),
buckets AS (
  SELECT bucket_no, ch_bucket, ch_lo, ch_hi FROM sv_buckets
  UNION ALL SELECT -1, 'all', CAST(NULL AS DOUBLE), CAST(NULL AS DOUBLE)
)
SELECT m.io_mode, b.ch_bucket, CAST(b.bucket_no AS INT) AS bucket_no,
       CAST(b.ch_lo AS DOUBLE) AS ch_lo, CAST(b.ch_hi AS DOUBLE) AS ch_hi,
       COALESCE(a.jobs, 0) AS jobs, COALESCE(a.read_jobs, 0) AS read_jobs,
       COALESCE(a.write_jobs, 0) AS write_jobs,
       CAST(COALESCE(a.rb, 0) AS BIGINT) AS read_bytes,
       CAST(COALESCE(a.wb, 0) AS BIGINT) AS write_bytes,
       CASE WHEN a.jobs > 0 THEN a.rb / a.jobs END AS avg_read_bytes,
       CASE WHEN a.jobs > 0 THEN a.wb / a.jobs END AS avg_write_bytes,
       CAST(COALESCE(a.ch, 0) AS DOUBLE) AS core_hours,
       DATE '${date}' AS date
FROM modes m CROSS JOIN buckets b
LEFT JOIN agg a ON m.io_mode = a.io_mode AND b.ch_bucket = a.ch_bucket
