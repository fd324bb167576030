-- fwd_sample: per forwarding node and Lustre-client sample, the bytes it moved summed over
-- its OSTs (RPCs x the interval's average pages per RPC x 4 KiB, the estimate of
-- beacon/steps/fwd_ost_minute.sql) and the seconds the sample covers. Input: view `sv_client`
-- (raw_lustre_client of the day). Used by beacon/view_fwd_load.sql and beacon/steps/component_fwd_minute.sql.
SELECT fwd, ts, MAX(interval_s) AS secs,
       SUM(read_rpc_delta * COALESCE(pages_per_rpc, 0) * 4096) AS rb,
       SUM(write_rpc_delta * COALESCE(pages_per_rpc, 0) * 4096) AS wb,
       SUM(read_rpc_delta + write_rpc_delta) AS rpcs
FROM sv_client
WHERE fwd IS NOT NULL AND read_rpc_delta >= 0 AND write_rpc_delta >= 0 AND interval_s > 0
GROUP BY fwd, ts
