-- MDS operations per MDS, requesting source and minute (the midpoint of each sample's
-- interval), from raw_mds deltas. Input: view `mds` (raw_mds of the period).
SELECT mds, source, source_node, source_kind,
       date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2)) AS minute,
       SUM(ops) AS ops
FROM mds
WHERE ops IS NOT NULL AND interval_s IS NOT NULL
GROUP BY mds, source, source_node, source_kind,
         date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2))
