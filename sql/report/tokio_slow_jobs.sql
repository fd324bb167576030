-- Jobs of the day (view rt_day) whose I/O performance fell below the first quartile of
-- their application's runs in the history window (view rt_hist, the day included), worst
-- ratio to the application's median first; at most ${top}.
WITH hist AS (
  SELECT app, percentile_approx(perf_mibs, 0.25) AS q1, percentile_approx(perf_mibs, 0.5) AS med,
         count(*) AS runs
  FROM rt_hist WHERE perf_mibs IS NOT NULL AND app IS NOT NULL GROUP BY app
)
SELECT d.job_id, d.app, d.user, d.start, d.runtime_s, d.perf_mibs, h.med, h.runs,
       d.perf_mibs / h.med AS ratio, d.coverage_bw, d.concurrent_jobs, d.lmt_oss_cpu_mean,
       d.ost_fullest_pct, d.bytes_source
FROM rt_day d JOIN hist h ON d.app = h.app
WHERE h.runs >= ${min_runs} AND d.perf_mibs < h.q1 AND h.med > 0
ORDER BY ratio, d.job_id
LIMIT ${top}
