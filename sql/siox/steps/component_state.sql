-- Each component's observed interval next to what its knowledge base expects at the same
-- request-size and load class (lassi.siox.job_path).
-- Inputs: views `jp_minute` (component_minute of the day) and `jp_baseline`
-- (component_baseline of the day). Parameters: ost_pool (SQL over `component`:
-- lassi.siox.knowledge.ost_pool_sql), fwd_pool (lassi.siox.knowledge.FWD_POOL).
-- The expectation is the baseline's median (p50) for the interval's size and load class,
-- else for its size class over all loads, else for the component over everything. exe_s /
-- lat_s: mean LWFS execution / execution + queueing time of a data request (forwarding
-- nodes only); rpc_s: the Lustre clients' mean wait per RPC (OSTs, when reported), its
-- expectation at the OST's utilisation class and size class from the file system's pooled
-- OSTs (component_baseline keeps rpc_s under `<fs>-OST*`, per util_class): its median
-- (base_rpc_s) and 90th percentile (base_rpc90_s). A forwarding node's exe_s / lat_s
-- expectation is the forwarding nodes' pool (component_baseline's '${fwd_pool}' rows) at
-- the same classes, its own baseline only where no pool rows exist.
WITH b AS (
  SELECT component, size_class, load_class,
         MAX(CASE WHEN metric = 'bw' THEN p50 END) AS bw,
         MAX(CASE WHEN metric = 'iops' THEN p50 END) AS iops,
         MAX(CASE WHEN metric = 'exe_s' THEN p50 END) AS exe,
         MAX(CASE WHEN metric = 'exe_s' THEN p50 END)
           + MAX(CASE WHEN metric = 'wait_s' THEN p50 END) AS lat,
         MAX(CASE WHEN metric = 'rpc_s' THEN p50 END) AS rpc,
         MAX(CASE WHEN metric = 'rpc_s' THEN p90 END) AS rpc90
  FROM jp_baseline GROUP BY component, size_class, load_class
),
m AS (
  SELECT *, CASE WHEN kind = 'ost' THEN ${ost_pool} END AS pool,
         CASE WHEN kind = 'fwd' THEN '${fwd_pool}' END AS fwd_pool
  FROM jp_minute
)
SELECT m.component, m.kind, m.ts, m.interval_s, m.bw, m.iops,
       m.read_ops + m.write_ops AS ops, m.size_class, m.load_class, m.clients,
       m.exe_s, m.exe_s + m.wait_s AS lat_s, m.rpc_s,
       COALESCE(b1.bw, b2.bw, b3.bw) AS base_bw,
       COALESCE(b1.iops, b2.iops, b3.iops) AS base_iops,
       COALESCE(f1.exe, f2.exe, f3.exe, b1.exe, b2.exe, b3.exe) AS base_exe_s,
       COALESCE(f1.lat, f2.lat, f3.lat, b1.lat, b2.lat, b3.lat) AS base_lat_s,
       COALESCE(r1.rpc, r2.rpc, r3.rpc) AS base_rpc_s,
       COALESCE(r1.rpc90, r2.rpc90, r3.rpc90) AS base_rpc90_s
FROM m
LEFT JOIN b b1 ON b1.component = m.component AND b1.size_class = COALESCE(m.size_class, 'none')
               AND b1.load_class = m.load_class
LEFT JOIN b b2 ON b2.component = m.component AND b2.size_class = COALESCE(m.size_class, 'none')
               AND b2.load_class = 'all'
LEFT JOIN b b3 ON b3.component = m.component AND b3.size_class = 'all' AND b3.load_class = 'all'
LEFT JOIN b f1 ON f1.component = m.fwd_pool AND f1.size_class = COALESCE(m.size_class, 'none')
               AND f1.load_class = m.load_class
LEFT JOIN b f2 ON f2.component = m.fwd_pool AND f2.size_class = COALESCE(m.size_class, 'none')
               AND f2.load_class = 'all'
LEFT JOIN b f3 ON f3.component = m.fwd_pool AND f3.size_class = 'all' AND f3.load_class = 'all'
LEFT JOIN b r1 ON r1.component = m.pool AND r1.size_class = COALESCE(m.size_class, 'none')
               AND r1.load_class = m.util_class
LEFT JOIN b r2 ON r2.component = m.pool AND r2.size_class = COALESCE(m.size_class, 'none')
               AND r2.load_class = 'all'
LEFT JOIN b r3 ON r3.component = m.pool AND r3.size_class = 'all' AND r3.load_class = 'all'
