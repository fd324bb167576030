-- The pinpoint's observations (lassi.siox.pinpoint): per forwarding node and minute with
-- data requests, the excess of its LWFS execution time over its knowledge base (queueing
-- is left out: it grows with load, execution with a slow node or target), and the
-- share of its Lustre requests (RPCs) that went to each OST in that minute.
-- Inputs: views `jp_state` (siox/steps/component_state.sql) and `jp_fwd_ost`
-- (beacon/steps/fwd_ost_minute.sql over the day's raw_lustre_client).
WITH obs AS (
  SELECT component AS fwd, ts AS minute, exe_s / base_exe_s - 1 AS excess
  FROM jp_state
  WHERE kind = 'fwd' AND ops > 0 AND exe_s IS NOT NULL AND base_exe_s > 0
),
sh AS (
  SELECT fwd, minute, ost,
         (read_rpcs + write_rpcs) / SUM(read_rpcs + write_rpcs) OVER (PARTITION BY fwd, minute)
           AS share
  FROM jp_fwd_ost WHERE read_rpcs + write_rpcs > 0
)
SELECT date_trunc('HOUR', o.minute) AS hour, o.fwd, o.minute, o.excess, sh.ost, sh.share
FROM obs o LEFT JOIN sh ON sh.fwd = o.fwd AND sh.minute = o.minute
