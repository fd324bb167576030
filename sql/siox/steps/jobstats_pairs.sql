-- jobstats_pairs: each (job, OST) pair of a day's Lustre job_stats with its rate relative to
-- the job's other OSTs (lassi.siox.jobstats_ost: `lassi bad-ost --jobstats`, job_diagnosis).
-- Input view `jobstats_raw` (raw_lustre_stats of the day, of the filesystems asked for).
-- Each job_stats entry of an OST holds cumulative bytes (`read_bytes`/`write_bytes` sums)
-- and the OST's service time of them (`read`/`write` µs sums, Lustre 2.12+); an entry's
-- last capture holds its totals, and an entry recreated after a cleanup is another
-- incarnation (its own start_time). Per job and OST: bytes, service_s, rate = bytes /
-- service_s and x = rate / the median rate of the job's OSTs on that filesystem (so a job's
-- own request sizes cancel out; 0.5: its requests there went at half the rate of its other
-- OSTs), job_osts = the job's OSTs on that filesystem with a rate.
WITH c AS (
  SELECT job_id, fs, target, COALESCE(start_time, TIMESTAMP '1970-01-01 00:00:00') AS inc,
         counter, snapshot_time, `sum` AS v
  FROM jobstats_raw
  WHERE kind = 'job' AND target LIKE '%-OST%'
    AND counter IN ('read_bytes', 'write_bytes', 'read', 'write')
),
latest AS (
  SELECT job_id, fs, target, inc, counter, max_by(v, snapshot_time) AS v
  FROM c GROUP BY job_id, fs, target, inc, counter
),
pairs AS (
  SELECT job_id, fs, target,
         SUM(CASE WHEN counter IN ('read_bytes', 'write_bytes') THEN v END) AS bytes,
         SUM(CASE WHEN counter IN ('read', 'write') THEN v END) / 1e6 AS service_s
  FROM latest GROUP BY job_id, fs, target
),
rated AS (
  SELECT job_id, fs, target, bytes, service_s, CAST(bytes AS DOUBLE) / service_s AS rate
  FROM pairs WHERE bytes > 0 AND service_s > 0
)
SELECT job_id, fs, target, bytes, service_s,
       rate / percentile(rate, 0.5) OVER (PARTITION BY job_id, fs) AS x,
       COUNT(*) OVER (PARTITION BY job_id, fs) AS job_osts
FROM rated
