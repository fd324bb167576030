-- TOKIO summarize_job: one row of metrics per job of jm_jobs (sql/tokio/steps/job_info.sql), from every
-- connector. Views: jm_jobs, jm_all_jobs (job_id, start, end: every known job, for
-- concurrency), jm_darshan_job, jm_darshan_file, jm_mounts (mount -> fs), jm_app_hour,
-- jm_job_summary, jm_lmt_ost, jm_lmt_mds, jm_ost_health.
-- LMT samples count for a job when they end inside it (ts in (start, end]); OST fullness
-- and failovers come from the last snapshot at or before the start, else the first after.
WITH dj AS (
  SELECT job_id, count(*) AS logs, sum(bytes_read) AS br, sum(bytes_written) AS bw,
         sum(posix_opens) AS opens, sum(io_time_slowest_s) AS io_t,
         sum(bytes_read + bytes_written) / 1048576.0 / nullif(sum(io_time_slowest_s), 0) AS agg
  FROM jm_darshan_job GROUP BY job_id
), dfs AS (
  SELECT job_id, max_by(fs, b) AS fs FROM (
    SELECT f.job_id, coalesce(m.fs, f.mount) AS fs,
           sum(coalesce(f.bytes_read, 0) + coalesce(f.bytes_written, 0)) AS b
    FROM jm_darshan_file f LEFT JOIN jm_mounts m ON f.mount = m.mount
    WHERE f.mount IS NOT NULL GROUP BY 1, 2)
  GROUP BY job_id
), lfs AS (
  SELECT job_id, max_by(fs, b) AS fs, CAST(sum(b) AS BIGINT) AS bytes, max(js) AS js FROM (
    SELECT job_id, fs, sum(read_kb + write_kb) * 1024 AS b,
           max(coalesce(attributed_by = 'job_stats', FALSE)) AS js
    FROM jm_app_hour WHERE job_id IS NOT NULL GROUP BY job_id, fs)
  GROUP BY job_id
), bfs AS (
  SELECT job_id, substring_index(osts[0], '-', 1) AS fs, read_bytes + write_bytes AS bytes
  FROM jm_job_summary
), j AS (
  SELECT jobs.*, coalesce(dfs.fs, lfs.fs, bfs.fs) AS fs,
         dj.logs, dj.br, dj.bw, dj.opens, dj.io_t, dj.agg,
         CASE WHEN dj.logs IS NOT NULL THEN dj.br + dj.bw
              WHEN lfs.bytes IS NOT NULL THEN lfs.bytes ELSE bfs.bytes END AS job_bytes,
         CASE WHEN dj.logs IS NOT NULL THEN 'darshan'
              WHEN lfs.bytes IS NOT NULL THEN IF(lfs.js, 'lustre_job_stats', 'lustre_stats')
              WHEN bfs.bytes IS NOT NULL THEN 'beacon' END AS bytes_source
  FROM jm_jobs jobs
  LEFT JOIN dj ON dj.job_id = jobs.job_id
  LEFT JOIN dfs ON dfs.job_id = jobs.job_id
  LEFT JOIN lfs ON lfs.job_id = jobs.job_id
  LEFT JOIN bfs ON bfs.job_id = jobs.job_id
), ost AS (
  SELECT fs, ts, sum(read_bytes_delta) AS rd, sum(write_bytes_delta) AS wr,
         avg(oss_cpu_pct) AS cpu_mean, max(oss_cpu_pct) AS cpu_max
  FROM jm_lmt_ost GROUP BY fs, ts
), step AS (
  SELECT fs, percentile_approx(interval_s, 0.5) AS step_s FROM jm_lmt_ost
  WHERE interval_s > 0 GROUP BY fs
), lmt AS (
  SELECT j.job_id, sum(o.rd) AS rd, sum(o.wr) AS wr, avg(o.cpu_mean) AS cpu_mean,
         max(o.cpu_max) AS cpu_max, count(*) AS samples
  FROM j JOIN ost o ON o.fs = j.fs AND o.ts > j.start AND o.ts <= j.`end`
  GROUP BY j.job_id
), mds AS (
  SELECT fs, ts, sum(CASE WHEN op IN ('open', 'close') THEN samples_delta END) AS oc,
         sum(CASE WHEN op = 'open' THEN samples_delta END) AS o,
         sum(samples_delta) AS ops, avg(mds_cpu_pct) AS cpu_mean, max(mds_cpu_pct) AS cpu_max
  FROM jm_lmt_mds GROUP BY fs, ts
), md AS (
  SELECT j.job_id, sum(m.oc) AS oc, sum(m.o) AS o, sum(m.ops) AS ops, avg(m.cpu_mean) AS cpu_mean,
         max(m.cpu_max) AS cpu_max
  FROM j JOIN mds m ON m.fs = j.fs AND m.ts > j.start AND m.ts <= j.`end`
  GROUP BY j.job_id
), snap AS (
  SELECT fs, ts, max(use_pct) AS fullest, avg(use_pct) AS mean_pct FROM jm_ost_health
  WHERE source = 'lfs-df' AND kind = 'OST' GROUP BY fs, ts
), fo AS (
  SELECT fs, ts, CAST(count_if(failed_over) AS BIGINT) AS n FROM jm_ost_health
  WHERE source = 'lctl-dl' GROUP BY fs, ts
), health AS (
  SELECT j.job_id,
         min_by(named_struct('fullest', s.fullest, 'mean_pct', s.mean_pct),
                CASE WHEN s.ts <= j.start THEN unix_seconds(j.start) - unix_seconds(s.ts)
                     ELSE 1000000000000 + unix_seconds(s.ts) - unix_seconds(j.start) END) AS h
  FROM j JOIN snap s ON s.fs = j.fs GROUP BY j.job_id
), failover AS (
  SELECT j.job_id,
         min_by(f.n, CASE WHEN f.ts <= j.start THEN unix_seconds(j.start) - unix_seconds(f.ts)
                          ELSE 1000000000000 + unix_seconds(f.ts) - unix_seconds(j.start) END) AS n
  FROM j JOIN fo f ON f.fs = j.fs GROUP BY j.job_id
), conc AS (
  SELECT j.job_id, CAST(count(DISTINCT a.job_id) AS BIGINT) AS n
  FROM j JOIN jm_all_jobs a
    ON a.job_id <> j.job_id AND a.start < j.`end` AND a.`end` > j.start
  GROUP BY j.job_id
)
SELECT j.job_id, j.jobinfo_source, j.user, j.app, j.fs, j.n_nodes, j.nprocs, j.start, j.`end`,
       j.runtime_s, j.logs AS darshan_logs, j.br AS darshan_bytes_read,
       j.bw AS darshan_bytes_written, j.opens AS darshan_opens, j.io_t AS darshan_io_time_s,
       j.agg AS darshan_agg_perf_mibs,
       lmt.rd AS lmt_bytes_read, lmt.wr AS lmt_bytes_written,
       md.oc AS lmt_opens_closes, md.ops AS lmt_md_ops,
       lmt.cpu_mean AS lmt_oss_cpu_mean, lmt.cpu_max AS lmt_oss_cpu_max,
       md.cpu_mean AS lmt_mds_cpu_mean, md.cpu_max AS lmt_mds_cpu_max,
       CASE WHEN step.step_s IS NULL OR j.runtime_s < step.step_s THEN NULL
            ELSE greatest(0.0, 1.0 - coalesce(lmt.samples, 0) / floor(j.runtime_s / step.step_s))
       END AS lmt_missing_fraction,
       j.job_bytes / nullif(lmt.rd + lmt.wr, 0) AS coverage_bw,
       j.opens / nullif(md.o, 0) AS coverage_opens,
       health.h.fullest AS ost_fullest_pct, health.h.mean_pct AS ost_mean_pct,
       failover.n AS ost_failed_over, coalesce(conc.n, 0) AS concurrent_jobs,
       coalesce(j.agg, j.job_bytes / 1048576.0 / nullif(j.runtime_s, 0)) AS perf_mibs,
       j.job_bytes, j.bytes_source, to_date(j.start) AS date
FROM j
LEFT JOIN lmt ON lmt.job_id = j.job_id
LEFT JOIN step ON step.fs = j.fs
LEFT JOIN md ON md.job_id = j.job_id
LEFT JOIN health ON health.job_id = j.job_id
LEFT JOIN failover ON failover.job_id = j.job_id
LEFT JOIN conc ON conc.job_id = j.job_id
