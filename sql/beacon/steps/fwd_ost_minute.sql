-- Forwarding node -> OST traffic per minute from the Lustre client layer (osc rpc_stats).
-- Input: view `lustre_client` (raw_lustre_client of the period). A sample's deltas cover
-- the interval before it and go to the minute of the interval's midpoint. Bytes are
-- estimated as RPCs x the interval's average pages per RPC x 4 KiB (the format gives one
-- average for reads and writes together). rpc_wait_s: the client's wait for the OST's
-- replies (osc req_waittime, the format's optional 7th field), null unless every sample of
-- the minute has it.
SELECT fwd, ost,
       date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2)) AS minute,
       SUM(read_rpc_delta * COALESCE(pages_per_rpc, 0) * 4096) AS read_bytes,
       SUM(write_rpc_delta * COALESCE(pages_per_rpc, 0) * 4096) AS write_bytes,
       SUM(read_rpc_delta) AS read_rpcs, SUM(write_rpc_delta) AS write_rpcs,
       CASE WHEN COUNT(rpc_wait_us_delta) = COUNT(*) THEN SUM(rpc_wait_us_delta) / 1e6 END
         AS rpc_wait_s
FROM lustre_client
WHERE read_rpc_delta IS NOT NULL AND interval_s IS NOT NULL AND fwd IS NOT NULL
GROUP BY fwd, ost, date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2))
