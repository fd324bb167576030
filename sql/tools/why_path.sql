-- `lassi why`: one job's causal path summed per hop (lassi.tools.why).
-- Input: view `why_path` (job_path rows of the job). Per component: the job's bytes and
-- requests through it, minutes, time lost to it being at fault and to load, its worst
-- observed rate against its knowledge base, and the first and last minute it lost time.
SELECT layer, component, kind,
       SUM(read_bytes + write_bytes) AS bytes, SUM(ops) AS ops, COUNT(*) AS minutes,
       SUM(lost_s) AS lost_s, SUM(COALESCE(lost_load_s, 0)) AS lost_load_s,
       SUM(COALESCE(spent_s, 0)) AS spent_s, SUM(COALESCE(expected_s, 0)) AS expected_s,
       MIN(rate_ratio) AS worst_ratio,
       MIN(CASE WHEN lost_s > 0 THEN ts END) AS first_lost,
       MAX(CASE WHEN lost_s > 0 THEN ts END) AS last_lost,
       MAX(attribution) AS attribution
FROM why_path
GROUP BY layer, component, kind
ORDER BY lost_s DESC, bytes DESC
