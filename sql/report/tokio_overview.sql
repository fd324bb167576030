-- One row: what the day's job_metrics (view rt_day) hold, per connector.
SELECT count(*) AS jobs,
       count_if(darshan_logs > 0) AS with_darshan,
       count_if(lmt_bytes_read IS NOT NULL OR lmt_bytes_written IS NOT NULL) AS with_lmt,
       count_if(ost_fullest_pct IS NOT NULL) AS with_health,
       percentile_approx(coverage_bw, 0.5) AS median_coverage,
       count_if(coverage_bw > 1.0 AND runtime_s >= 600) AS over_covered,
       sum(job_bytes) AS job_bytes,
       max(lmt_oss_cpu_max) AS oss_cpu_max,
       max(lmt_mds_cpu_max) AS mds_cpu_max
FROM rt_day
