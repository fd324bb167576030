-- scoreboard_beacon: the scoreboard's fallback from Beacon jobs, one row per job of `js`
-- (job_summary of the period): user, app and the job's compute-layer bytes. job_summary
-- has no file-system split, so fs is null (shown as "(no fs split)").
SELECT user, app, CAST(NULL AS STRING) AS fs, job_id, read_bytes, write_bytes FROM js
