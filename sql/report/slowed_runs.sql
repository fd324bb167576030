-- report_slowed_runs: slowed runs of the report period per filesystem they used, with the
-- risk other applications put on that filesystem during the run (concurrent risk).
-- Input views: `period_runs` (app_run of the period), `period_slowdown` (run_slowdown of the
-- period: the runs' slowdown and risk sums), `ah` (app_hour of the period: which
-- filesystems a run used), `ah_ext` and `fh_ext` (app_hour and fs_hour from the period's
-- first day until the longest run can have ended). Parameter: top_n (rows per filesystem).
-- A run's hours are the clock hours that overlap [start, end). Concurrent risk = sum over
-- those hours of fs_hour (risk_oss + risk_mds) minus the run's own app_hour risk; the
-- largest other contributor is the application with the most risk in those hours.
WITH slowed AS (
  SELECT r.app_id, r.job_id, r.exe, r.user, r.command, r.start, r.`end`, s.runtime_s,
         s.group_runs, s.group_mean_s, s.slowdown, s.risk_oss_sum, s.risk_mds_sum
  FROM period_runs r JOIN period_slowdown s
    ON r.app_id = s.app_id AND r.source = s.source AND r.date = s.date
  WHERE s.slowed AND s.slowdown IS NOT NULL
),
fs_of AS (
  SELECT a.app_id, a.fs, FIRST(a.exe, TRUE) AS ah_exe, FIRST(a.user, TRUE) AS ah_user
  FROM ah a LEFT SEMI JOIN slowed s ON a.app_id = s.app_id
  GROUP BY a.app_id, a.fs
),
run_hours AS (
  SELECT s.app_id, f.fs, h.hour, h.risk_oss + h.risk_mds AS fs_risk
  FROM slowed s JOIN fs_of f ON s.app_id = f.app_id
  JOIN fh_ext h ON h.fs = f.fs AND h.hour >= date_trunc('HOUR', s.start) AND h.hour < s.`end`
),
own AS (
  SELECT r.app_id, r.fs, COUNT(*) AS busy_hours,
         GREATEST(SUM(r.fs_risk - COALESCE(o.risk_oss + o.risk_mds, 0.0)), 0.0)
           AS concurrent_risk
  FROM run_hours r
  LEFT JOIN ah_ext o ON o.app_id = r.app_id AND o.fs = r.fs AND o.hour = r.hour
  GROUP BY r.app_id, r.fs
),
others AS (
  SELECT r.app_id, r.fs, o.app_id AS other_id, FIRST(o.exe, TRUE) AS other_exe,
         FIRST(o.user, TRUE) AS other_user, SUM(o.risk_oss + o.risk_mds) AS other_risk
  FROM run_hours r
  JOIN ah_ext o ON o.fs = r.fs AND o.hour = r.hour AND o.app_id <> r.app_id
  WHERE o.risk_oss + o.risk_mds > 0
  GROUP BY r.app_id, r.fs, o.app_id
),
top_other AS (
  SELECT * FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY app_id, fs
                                 ORDER BY other_risk DESC, other_id) AS rn
    FROM others)
  WHERE rn = 1
),
rows AS (
  SELECT f.fs, s.app_id, s.job_id, COALESCE(s.exe, f.ah_exe) AS exe,
         COALESCE(s.user, f.ah_user) AS user, s.command, s.start, s.`end`, s.runtime_s,
         s.group_runs, s.group_mean_s, s.slowdown, s.risk_oss_sum, s.risk_mds_sum,
         COALESCE(w.concurrent_risk, 0.0) AS concurrent_risk, w.busy_hours,
         t.other_id, t.other_exe, t.other_user, t.other_risk
  FROM slowed s JOIN fs_of f ON s.app_id = f.app_id
  LEFT JOIN own w ON w.app_id = s.app_id AND w.fs = f.fs
  LEFT JOIN top_other t ON t.app_id = s.app_id AND t.fs = f.fs
)
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY fs ORDER BY slowdown DESC, app_id) AS rank,
         COUNT(*) OVER (PARTITION BY fs) AS n_slowed_fs
  FROM rows)
WHERE rank <= ${top_n}
