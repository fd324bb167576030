-- launch_meta: per application launch, what app_hour names it by, its node count and its
-- span as µs (a launch still running at the day's end: to day_end).
-- Input: view `app_launch` (risk/steps/app_launch.sql). Parameter: day_end (epoch s).
SELECT app_id, FIRST(job_id) AS job_id, FIRST(user) AS user, FIRST(exe) AS exe,
       FIRST(command) AS command, CAST(FIRST(size(nodes)) AS INT) AS n_nodes,
       unix_micros(MIN(start)) AS t0,
       MAX(COALESCE(unix_micros(`end`), CAST(${day_end} AS BIGINT) * 1000000)) AS t1
FROM app_launch GROUP BY app_id
