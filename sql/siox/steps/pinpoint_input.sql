-- The pinpoint's observations (lassi.siox.pinpoint): per forwarding node and minute with
-- data requests, the excess of its LWFS execution time over its knowledge base (queueing
-- is left out: it grows with load, execution with a slow node or target), and per OST it
-- sent RPCs to in that minute: the share of its Lustre requests (RPCs) that went there,
-- and, where its Lustre client reports its wait for the OST's replies (rpc_wait_s), that
-- wait next to what the OST's knowledge base predicts for as many RPCs (expected_wait_s)
-- and the thread time the node's requests were expected to take (base_exe_time_s): an
-- OST's measured part of the node's excess is (wait - expected) / base_exe_time.
-- expected_wait90_s: the same RPCs at the knowledge base's 90th percentile (the OST's
-- normal spread at that utilisation; the pinpoint's test that it is slow).
-- Inputs: views `jp_state` (siox/steps/component_state.sql) and `jp_fwd_ost`
-- (beacon/steps/fwd_ost_minute.sql over the day's raw_lustre_client).
WITH obs AS (
  SELECT component AS fwd, ts AS minute, exe_s / base_exe_s - 1 AS excess,
         ops * base_exe_s AS base_exe_time_s
  FROM jp_state
  WHERE kind = 'fwd' AND ops > 0 AND exe_s IS NOT NULL AND base_exe_s > 0
),
sh AS (
  SELECT f.fwd, f.minute, f.ost,
         (f.read_rpcs + f.write_rpcs)
           / SUM(f.read_rpcs + f.write_rpcs) OVER (PARTITION BY f.fwd, f.minute) AS share,
         f.rpc_wait_s,
         CASE WHEN f.rpc_wait_s IS NOT NULL
              THEN (f.read_rpcs + f.write_rpcs) * s.base_rpc_s END AS expected_wait_s,
         CASE WHEN f.rpc_wait_s IS NOT NULL
              THEN (f.read_rpcs + f.write_rpcs) * s.base_rpc90_s END AS expected_wait90_s
  FROM jp_fwd_ost f
  LEFT JOIN jp_state s ON s.component = f.ost AND s.ts = f.minute AND s.kind = 'ost'
  WHERE f.read_rpcs + f.write_rpcs > 0
)
SELECT date_trunc('HOUR', o.minute) AS hour, o.fwd, o.minute, o.excess, o.base_exe_time_s,
       sh.ost, sh.share, sh.rpc_wait_s, sh.expected_wait_s, sh.expected_wait90_s
FROM obs o LEFT JOIN sh ON sh.fwd = o.fwd AND sh.minute = o.minute
