-- component_minute: what each forwarding node, OST, MDT and MDS did per interval of one
-- day, the observations the knowledge base is built from (lassi.siox.knowledge). Beacon
-- layers per minute; Lustre export statistics per capture window.
-- Inputs: views `cm_ost` (raw_ost of the day), `cm_fwd_ost` (beacon/steps/fwd_ost_minute
-- over the day's raw_lustre_client), `cm_lwfs_minute` (siox/steps/lwfs_minute), `cm_mds_minute`
-- (beacon/steps/mds_minute over the day's raw_mds), `cm_runs` (app_run that may overlap the
-- day), `cm_fwd_map` (fwd_map of the day), `cm_targets` (siox/steps/lustre_target_window)
-- and `cm_peaks` (path_component's OST peaks: ost, peak_bw, peak_iops).
-- Parameters: size_class, load_class and util_class (CASE expressions over rb, wb, ro, wo,
-- clients and util),
-- window_s, day_start, last_minute, date.
-- OST: bytes and RPCs from its own counters (a sample to the minute of its interval's
--   midpoint); clients = forwarding nodes that sent it RPCs in the minute.
-- fwd: bytes and RPCs it moved to and from Lustre (Lustre client layer), requests and
--   service times from the LWFS server; clients = jobs running on its compute nodes.
-- MDS: metadata operations; clients = requesting hosts.
-- rpc_s (OST): the forwarding nodes' Lustre clients' mean wait per RPC to it (osc
--   req_waittime; null when the site's lustre-client lines lack it); util_class: its
--   utilisation, iops / peak_iops + bw / peak_bw, as a class (null without peaks).
WITH ost AS (
  SELECT ost AS component,
         LEAST(GREATEST(date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2)),
                        TIMESTAMP '${day_start}'), TIMESTAMP '${last_minute}') AS minute,
         read_bytes_delta AS rb, write_bytes_delta AS wb,
         read_rpc_delta AS ro, write_rpc_delta AS wo
  FROM cm_ost
  WHERE read_bytes_delta >= 0 AND write_bytes_delta >= 0 AND interval_s > 0
),
ost_clients AS (
  SELECT ost, minute, COUNT(DISTINCT fwd) AS clients,
         SUM(rpc_wait_s) / NULLIF(SUM(CASE WHEN rpc_wait_s IS NOT NULL
                                           THEN read_rpcs + write_rpcs END), 0) AS rpc_s
  FROM cm_fwd_ost WHERE read_rpcs + write_rpcs > 0 GROUP BY ost, minute
),
ost_rows AS (
  SELECT o.component, 'ost' AS kind, o.minute, SUM(rb) AS rb, SUM(wb) AS wb,
         SUM(ro) AS ro, SUM(wo) AS wo, 0.0 AS md, 60 AS interval_s,
         COALESCE(MAX(c.clients), 0) AS clients,
         CAST(NULL AS DOUBLE) AS exe_s, CAST(NULL AS DOUBLE) AS wait_s,
         CAST(NULL AS DOUBLE) AS queue_len, MAX(c.rpc_s) AS rpc_s,
         (SUM(ro) + SUM(wo)) / 60 / MAX(p.peak_iops) + (SUM(rb) + SUM(wb)) / 60 / MAX(p.peak_bw)
           AS util
  FROM ost o LEFT JOIN ost_clients c ON o.component = c.ost AND o.minute = c.minute
  LEFT JOIN cm_peaks p ON p.ost = o.component
  GROUP BY o.component, o.minute
),
fwd_lustre AS (
  SELECT fwd, minute, SUM(read_bytes) AS rb, SUM(write_bytes) AS wb,
         SUM(read_rpcs) AS ro, SUM(write_rpcs) AS wo
  FROM cm_fwd_ost
  WHERE minute >= TIMESTAMP '${day_start}' AND minute <= TIMESTAMP '${last_minute}'
  GROUP BY fwd, minute
),
fwd_jobs AS (
  SELECT DISTINCT r.job_id, m.fwd, r.start, r.`end`
  FROM (SELECT job_id, explode(nodes) AS node, start, `end` FROM cm_runs
        WHERE start IS NOT NULL AND `end` IS NOT NULL) r
  JOIN cm_fwd_map m ON r.node = m.node
),
fwd_obs AS (
  SELECT COALESCE(l.fwd, s.fwd) AS fwd, COALESCE(l.minute, s.minute) AS minute,
         COALESCE(l.rb, 0) AS rb, COALESCE(l.wb, 0) AS wb,
         COALESCE(s.data_requests, 0) AS requests, COALESCE(l.ro, 0) + COALESCE(l.wo, 0) AS rpcs,
         COALESCE(l.ro, 0) AS ro, COALESCE(l.wo, 0) AS wo,
         COALESCE(s.md_requests, 0) AS md, s.exe_s, s.wait_s, s.queue_len
  FROM fwd_lustre l FULL OUTER JOIN cm_lwfs_minute s ON l.fwd = s.fwd AND l.minute = s.minute
),
fwd_rows AS (
  SELECT o.fwd AS component, 'fwd' AS kind, o.minute, o.rb, o.wb,
         -- requests as the LWFS server counts them, split read/write like the RPCs
         CASE WHEN o.requests > 0 AND o.rpcs > 0 THEN o.requests * o.ro / o.rpcs ELSE o.ro END AS ro,
         CASE WHEN o.requests > 0 AND o.rpcs > 0 THEN o.requests * o.wo / o.rpcs ELSE o.wo END AS wo,
         o.md, 60 AS interval_s, COUNT(j.job_id) AS clients, o.exe_s, o.wait_s, o.queue_len,
         CAST(NULL AS DOUBLE) AS rpc_s, CAST(NULL AS DOUBLE) AS util
  FROM fwd_obs o
  LEFT JOIN fwd_jobs j ON o.fwd = j.fwd AND j.start < o.minute + INTERVAL 1 MINUTE
                      AND j.`end` > o.minute
  GROUP BY o.fwd, o.minute, o.rb, o.wb, o.requests, o.rpcs, o.ro, o.wo, o.md, o.exe_s,
           o.wait_s, o.queue_len
),
mds_rows AS (
  SELECT mds AS component, 'mds' AS kind, minute, 0.0 AS rb, 0.0 AS wb, 0.0 AS ro, 0.0 AS wo,
         SUM(ops) AS md, 60 AS interval_s,
         COUNT(DISTINCT CASE WHEN ops > 0 THEN source END) AS clients,
         CAST(NULL AS DOUBLE) AS exe_s, CAST(NULL AS DOUBLE) AS wait_s,
         CAST(NULL AS DOUBLE) AS queue_len, CAST(NULL AS DOUBLE) AS rpc_s,
         CAST(NULL AS DOUBLE) AS util
  FROM cm_mds_minute
  WHERE minute >= TIMESTAMP '${day_start}' AND minute <= TIMESTAMP '${last_minute}'
  GROUP BY mds, minute
),
target_rows AS (
  SELECT target AS component, kind, ts AS minute, rb, wb, ro, wo, md, ${window_s} AS interval_s,
         clients, CAST(NULL AS DOUBLE) AS exe_s, CAST(NULL AS DOUBLE) AS wait_s,
         CAST(NULL AS DOUBLE) AS queue_len, CAST(NULL AS DOUBLE) AS rpc_s,
         CAST(NULL AS DOUBLE) AS util
  FROM cm_targets
),
everything AS (
  SELECT * FROM ost_rows UNION ALL SELECT * FROM fwd_rows UNION ALL SELECT * FROM mds_rows
  UNION ALL SELECT * FROM target_rows
)
SELECT component, kind, minute AS ts, CAST(interval_s AS INT) AS interval_s,
       CAST(rb AS DOUBLE) AS read_bytes, CAST(wb AS DOUBLE) AS write_bytes,
       CAST(ro AS DOUBLE) AS read_ops, CAST(wo AS DOUBLE) AS write_ops,
       CAST(md AS DOUBLE) AS md_ops,
       (rb + wb) / interval_s AS bw, (ro + wo) / interval_s AS iops,
       CASE WHEN ro + wo > 0 THEN ${size_class} END AS size_class,
       CAST(clients AS INT) AS clients, ${load_class} AS load_class,
       exe_s, wait_s, queue_len, rpc_s, ${util_class} AS util_class, DATE '${date}' AS date
FROM everything
WHERE rb + wb + ro + wo + md > 0 OR exe_s IS NOT NULL OR queue_len > 0
