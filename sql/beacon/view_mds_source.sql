-- view_mds_source (Beacon Fig. 18b): MDS operations per source kind (forwarding, login,
-- cluster, other) and hour. Input: view `sv_mds` (raw_mds of the day). Parameters:
-- day_start, last_hour, date. A sample's ops go to the hour of its interval's midpoint,
-- clamped into the day. ops_per_s sums, over the (MDS, source) pairs of the kind, their
-- ops over the seconds their samples cover in that hour (a rate that does not depend on how
-- much of the hour was sampled); share is the kind's part of the hour's ops.
WITH s AS (
  SELECT mds, source, source_kind, ops, interval_s,
         LEAST(GREATEST(date_trunc('HOUR', ts - make_dt_interval(0, 0, 0, interval_s / 2)),
                        TIMESTAMP '${day_start}'), TIMESTAMP '${last_hour}') AS hour
  FROM sv_mds
  WHERE ops >= 0 AND interval_s > 0
),
pairs AS (
  SELECT mds, source, source_kind, hour, SUM(ops) AS ops, SUM(interval_s) AS secs
  FROM s GROUP BY mds, source, source_kind, hour
),
kinds AS (
  SELECT source_kind, hour, COUNT(DISTINCT source) AS sources, SUM(ops) AS ops,
         SUM(ops / secs) AS ops_per_s
  FROM pairs GROUP BY source_kind, hour
)
SELECT source_kind, hour, CAST(sources AS INT) AS sources, CAST(ops AS BIGINT) AS ops,
       CAST(ops_per_s AS DOUBLE) AS ops_per_s,
       CASE WHEN SUM(ops) OVER (PARTITION BY hour) > 0
            THEN CAST(ops AS DOUBLE) / SUM(ops) OVER (PARTITION BY hour) ELSE 0.0 END AS share,
       DATE '${date}' AS date
FROM kinds
