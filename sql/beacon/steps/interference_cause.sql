-- interference rows: per abnormal job and neighbour, the neighbour's strongest rates and
-- features over the job's abnormal phases, and one cause per abnormal job (Fig. 12).
-- Inputs: views `nb` (beacon/interference.sql), `ab_job` (job_id, app of the day's abnormal jobs),
-- `ab_phase`, `js`, `comp` (component_anomaly of the period). Parameters: significant,
-- date.
-- Cause, first match wins:
-- 1. a forwarding node or OST of the job failing (component_anomaly, system rule) during
--    one of its abnormal phases -> system anomaly. Fig. 12 lists it last, but a slow
--    component costs the jobs on it more than their neighbours do (on simulated TaihuLight
--    days, checking neighbours first turns most fault victims into "multiple jobs");
-- 2. the significant neighbours (each made >= `significant` of all its neighbours' load
--    on the shared forwarding nodes during the abnormal phases): their features, one kind
--    -> that kind (N:1, high MDOPS, high bandwidth, high IOPS), several kinds -> mix;
-- 3. significant neighbours without explicit features: their load together -> multiple
--    jobs;
-- 4. no neighbour did I/O during the abnormal phases -> unknown.
WITH feat AS (
  SELECT job_id, neighbour, FIRST(io_mode) AS io_mode, MAX(bw) AS bw, MAX(iops) AS iops,
         MAX(mdops) AS mdops, SUM(load) AS load, BOOL_OR(n1) AS n1,
         BOOL_OR(high_mdops) AS high_mdops, BOOL_OR(high_bw) AS high_bw,
         BOOL_OR(high_iops) AS high_iops
  FROM nb GROUP BY job_id, neighbour
),
sig AS (
  SELECT f.* FROM feat f
  JOIN (SELECT job_id, SUM(load) AS total FROM feat GROUP BY job_id) t
    ON f.job_id = t.job_id
  WHERE f.load > 0 AND f.load >= ${significant} * t.total
),
agg AS (
  SELECT job_id, COUNT(*) AS n_sig,
         array_distinct(flatten(collect_list(filter(array(
           IF(n1, 'N:1', NULL), IF(high_mdops, 'high MDOPS', NULL),
           IF(high_bw, 'high bandwidth', NULL), IF(high_iops, 'high IOPS', NULL)),
           x -> x IS NOT NULL)))) AS kinds
  FROM sig GROUP BY job_id
),
parts AS (
  SELECT s.job_id, c AS component FROM js s
  LATERAL VIEW explode(concat(COALESCE(s.fwd_nodes, array()), COALESCE(s.osts, array()))) t AS c
),
failing AS (
  SELECT DISTINCT a.job_id FROM ab_phase a
  JOIN parts p ON a.job_id = p.job_id
  JOIN comp c ON c.component = p.component AND c.start < a.`end` AND c.`end` > a.start
  WHERE c.rule = 'system'
),
cause AS (
  SELECT j.job_id, j.app,
         CASE WHEN f.job_id IS NOT NULL THEN 'system anomaly'
              WHEN size(g.kinds) = 1 THEN g.kinds[0]
              WHEN size(g.kinds) > 1 THEN 'mix'
              WHEN g.n_sig > 0 THEN 'multiple jobs'
              ELSE 'unknown' END AS cause
  FROM ab_job j LEFT JOIN agg g ON j.job_id = g.job_id LEFT JOIN failing f ON j.job_id = f.job_id
)
SELECT c.job_id, c.app, c.cause, x.neighbour, x.io_mode AS neighbour_mode, x.bw, x.iops,
       x.mdops, COALESCE(x.n1, FALSE) AS n1, COALESCE(x.high_mdops, FALSE) AS high_mdops,
       COALESCE(x.high_bw, FALSE) AS high_bw, COALESCE(x.high_iops, FALSE) AS high_iops,
       DATE '${date}' AS date
FROM cause c LEFT JOIN feat x ON c.job_id = x.job_id
