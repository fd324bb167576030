-- scoreboard_lassi: the scoreboard's fallback from LASSi tables, one row per application
-- run, file system and hour: `ah` (app_hour of the period) gives fs and read_kb/write_kb
-- (KiB, x 1024 = bytes) with user and exe; `ar` (app_run of the period and the day before,
-- runs crossing midnight) fills user and exe where app_hour has none. app = basename of exe.
SELECT COALESCE(ah.user, ar.user) AS user,
       NULLIF(regexp_extract(COALESCE(ah.exe, ar.exe), '([^/]+)$$', 1), '') AS app,
       ah.fs, COALESCE(ah.job_id, ar.job_id) AS job_id,
       CAST(ROUND(ah.read_kb * 1024) AS BIGINT) AS read_bytes,
       CAST(ROUND(ah.write_kb * 1024) AS BIGINT) AS write_bytes
FROM ah LEFT JOIN (SELECT app_id, FIRST(user, TRUE) AS user, FIRST(exe, TRUE) AS exe,
                          FIRST(job_id, TRUE) AS job_id
                   FROM ar GROUP BY app_id) ar
  ON ar.app_id = ah.app_id
