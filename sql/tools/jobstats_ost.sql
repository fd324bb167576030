-- jobstats_ost: which OST served jobs slower than their other OSTs, from Lustre job_stats
-- (`lassi bad-ost --jobstats`; TOKIO's darshan_bad_ost test on (job, OST) pairs).
-- Input view `jobstats_raw` (raw_lustre_stats of the day, of the filesystems asked for).
-- Each job_stats entry of an OST holds cumulative bytes (`read_bytes`/`write_bytes` sums)
-- and the OST's service time of them (`read`/`write` µs sums, Lustre 2.12+); an entry's
-- last capture holds its totals, and an entry recreated after a cleanup is another
-- incarnation (its own start_time). Per job and OST: rate = bytes / service seconds; x =
-- rate / the median rate of the job's OSTs on that filesystem (jobs on two or more OSTs),
-- so a job's own request sizes cancel out. Per OST the sums that Pearson's r between x and
-- "the pair is on this OST" needs, centred on the filesystem's mean x (d = x - mean, so
-- that nearly equal rates lose no precision): n_on and sd_on (sum of d) over its pairs, n
-- and sdd (sum of d * d) over all pairs of the filesystem; relative_rate, the OST's mean x
-- (0.5: its jobs' requests went at half the rate of their other OSTs). One row per OST:
-- collected, it never grows with the jobs.
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
         SUM(CASE WHEN counter IN ('read', 'write') THEN v END) AS usecs
  FROM latest GROUP BY job_id, fs, target
),
rated AS (
  SELECT job_id, fs, target, CAST(bytes AS DOUBLE) / (usecs / 1e6) AS rate
  FROM pairs WHERE bytes > 0 AND usecs > 0
),
obs AS (
  SELECT fs, target, rate / percentile(rate, 0.5) OVER (PARTITION BY job_id, fs) AS x,
         COUNT(*) OVER (PARTITION BY job_id, fs) AS job_osts
  FROM rated
),
kept AS (SELECT fs, target, x FROM obs WHERE job_osts >= 2),
centred AS (SELECT fs, target, x, x - AVG(x) OVER (PARTITION BY fs) AS d FROM kept),
tot AS (SELECT fs, COUNT(*) AS n, SUM(d * d) AS sdd FROM centred GROUP BY fs)
SELECT c.fs, c.target,
       CAST(conv(regexp_extract(c.target, 'OST([0-9A-Fa-f]+)$$', 1), 16, 10) AS INT) AS ost_index,
       COUNT(*) AS n_on, SUM(c.d) AS sd_on, t.n, t.sdd,
       AVG(c.x) AS relative_rate
FROM centred c JOIN tot t ON c.fs = t.fs
GROUP BY c.fs, c.target, t.n, t.sdd
