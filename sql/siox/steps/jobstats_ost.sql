-- jobstats_ost: which OST served jobs slower than their other OSTs, from Lustre job_stats
-- (lassi.siox.jobstats_ost; TOKIO's darshan_bad_ost test on (job, OST) pairs instead of
-- files). Input view `jobstats_pairs` (siox/steps/jobstats_pairs.sql). Per OST the sums that
-- Pearson's r between a pair's x and "the pair is on this OST" needs, over the pairs of jobs
-- on two or more OSTs, centred on the filesystem's mean x (d = x - mean, so that nearly
-- equal rates lose no precision): n_on and sd_on (sum of d) over its pairs, n and sdd (sum
-- of d * d) over all pairs of the filesystem; relative_rate, the OST's mean x (0.5: its
-- jobs' requests went at half the rate of their other OSTs). One row per OST: collected,
-- it never grows with the jobs.
WITH kept AS (SELECT fs, target, x FROM jobstats_pairs WHERE job_osts >= 2),
centred AS (SELECT fs, target, x, x - AVG(x) OVER (PARTITION BY fs) AS d FROM kept),
tot AS (SELECT fs, COUNT(*) AS n, SUM(d * d) AS sdd FROM centred GROUP BY fs)
SELECT c.fs, c.target,
       CAST(conv(regexp_extract(c.target, 'OST([0-9A-Fa-f]+)$$', 1), 16, 10) AS INT) AS ost_index,
       COUNT(*) AS n_on, SUM(c.d) AS sd_on, t.n, t.sdd,
       AVG(c.x) AS relative_rate
FROM centred c JOIN tot t ON c.fs = t.fs
GROUP BY c.fs, c.target, t.n, t.sdd
