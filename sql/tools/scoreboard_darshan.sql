-- scoreboard_darshan: TOKIO's darshan_scoreboard input, one row per Darshan log and mount:
-- user and application (basename of the executable) from `dj` (darshan_job of the period),
-- bytes per file system (the mount of each file record) from `dfl` (darshan_file of the
-- period), POSIX and STDIO modules only (MPI-IO bytes ride on POSIX, as in darshan_job).
-- Records without a mount (STDIO stdout/stderr) and logs without file records (their
-- darshan_job bytes) have a null fs, shown as "(no mount)".
-- Output columns (all scoreboard_* inputs): user, app, fs, job_id, read_bytes, write_bytes.
WITH per_mount AS (
  SELECT log_path, mount, SUM(COALESCE(bytes_read, 0)) AS read_bytes,
         SUM(COALESCE(bytes_written, 0)) AS write_bytes
  FROM dfl WHERE module IN ('POSIX', 'STDIO')
  GROUP BY log_path, mount
),
jobs AS (
  SELECT log_path, job_id, COALESCE(user, CAST(uid AS STRING)) AS user,
         NULLIF(regexp_extract(exe, '([^/]+)$$', 1), '') AS app,
         COALESCE(bytes_read, 0) AS read_bytes, COALESCE(bytes_written, 0) AS write_bytes
  FROM dj
)
SELECT j.user, j.app, m.mount AS fs, j.job_id, m.read_bytes, m.write_bytes
FROM jobs j JOIN per_mount m ON m.log_path = j.log_path
UNION ALL
SELECT j.user, j.app, CAST(NULL AS STRING) AS fs, j.job_id, j.read_bytes, j.write_bytes
FROM jobs j LEFT ANTI JOIN per_mount m ON m.log_path = j.log_path
