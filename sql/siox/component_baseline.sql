-- component_baseline: the knowledge base (SIOX §4.1): what each component normally
-- achieves, per metric, request-size class and load class, as percentiles of its busy
-- minutes over the baseline period (lassi.siox.knowledge).
-- Inputs: views `cb_minutes` (component_minute of the period) and `cb_anomaly`
-- (component_anomaly of the period, system rule). Parameters: ost_pool (SQL: an OST
-- component's pool name, null otherwise), fwd_pool (the forwarding nodes' pool name),
-- period_start, period_end (dates), date.
-- Minutes inside a component's own anomaly window (Beacon's system rule: it ran far below
-- its peak while busy) are left out: the knowledge base is what the component normally
-- achieves, and a fault of hours in a short period would otherwise become its normal.
-- A minute counts for bw and iops when the component moved data, for md_ops when it served
-- metadata, for exe_s / wait_s when the LWFS server reported them, for rpc_s when the
-- Lustre clients reported their wait for the OST. rpc_s is kept per utilisation class
-- (util_class) in place of the load class (an OST's queueing grows with its utilisation)
-- and pooled over the OSTs of a file system, under component `<fs>-OST*`: what an OST of
-- that file system normally waits at that utilisation, which one slow OST cannot shift.
-- The forwarding nodes' exe_s and wait_s are kept per node and also pooled over all of
-- them, under component '${fwd_pool}': what a forwarding node normally takes to serve a
-- request at that size and load, which a node slow for longer than its anomaly window
-- cannot shift (the pinpoint judges against the pool).
-- Rows per (size class, load class), per size class over all loads ('all'), and over
-- everything ('all', 'all').
WITH m0 AS (
  SELECT CASE WHEN metric = 'rpc_s' THEN COALESCE(${ost_pool}, component)
              ELSE component END AS component,
         kind, COALESCE(size_class, 'none') AS size_class,
         CASE WHEN metric = 'rpc_s' THEN COALESCE(util_class, load_class) ELSE load_class END
           AS load_class, metric, v
  FROM (SELECT * FROM cb_minutes m
        WHERE NOT EXISTS (SELECT 1 FROM cb_anomaly a WHERE a.component = m.component
                          AND m.ts >= a.start AND m.ts < a.`end`))
  LATERAL VIEW stack(6, 'bw', CASE WHEN bw > 0 THEN bw END,
                        'iops', CASE WHEN iops > 0 THEN iops END,
                        'md_ops', CASE WHEN md_ops > 0 THEN md_ops / interval_s END,
                        'exe_s', exe_s, 'wait_s', wait_s, 'rpc_s', rpc_s) s AS metric, v
  WHERE v IS NOT NULL
),
m AS (
  SELECT * FROM m0
  UNION ALL
  SELECT '${fwd_pool}' AS component, kind, size_class, load_class, metric, v
  FROM m0 WHERE kind = 'fwd' AND metric IN ('exe_s', 'wait_s')
),
p AS (
  SELECT component, kind, metric,
         CASE WHEN GROUPING(size_class) = 1 THEN 'all' ELSE size_class END AS size_class,
         CASE WHEN GROUPING(load_class) = 1 THEN 'all' ELSE load_class END AS load_class,
         COUNT(*) AS n, percentile_approx(v, array(0.1, 0.5, 0.9), 10000) AS q, AVG(v) AS mean
  FROM m
  GROUP BY GROUPING SETS ((component, kind, metric, size_class, load_class),
                         (component, kind, metric, size_class), (component, kind, metric))
)
SELECT component, kind, metric, size_class, load_class, n,
       CAST(q[0] AS DOUBLE) AS p10, CAST(q[1] AS DOUBLE) AS p50, CAST(q[2] AS DOUBLE) AS p90,
       mean, DATE '${period_start}' AS period_start, DATE '${period_end}' AS period_end,
       DATE '${date}' AS date
FROM p
