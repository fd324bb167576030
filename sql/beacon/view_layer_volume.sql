-- view_layer_volume (Beacon Figs. 8-9): the day's read and write volume of three layers and
-- the two flags that compare them.
--   compute     LWFS client trace, READ/WRITE count x size: the traced clients only
--   forwarding  Lustre clients on the forwarding nodes: RPCs x pages per RPC x 4 KiB, the
--               format's one average for reads and writes together; a sample with both is
--               split by the bytes per read and per write RPC the OST counters show for that
--               OST and minute (the same RPCs seen from the server; the sample's own average
--               where the OST shows none), so the total stays the client's
--   ost         OST counters: exact bytes
-- Inputs: views `sv_trace`, `sv_server`, `sv_client`, `sv_ost` (raw_lwfs_trace,
-- raw_lwfs_server, raw_lustre_client, raw_ost of the day). Parameters: has_compute,
-- has_forwarding, has_ost (TRUE when the layer has a partition for the day), factor_read,
-- factor_write (the flags' thresholds), date.
-- coverage: the trace may hold only some jobs, so the compute layer is also scaled to all
-- clients: the traced data requests over the data requests the forwarding nodes' LWFS
-- servers served (their Read and Write exe histograms count every client's requests).
-- The ratios and flags compare these estimates: cache_thrashing = forwarding reads >
-- factor_read x compute reads, write_amplification = OST writes > factor_write x compute
-- writes; null when a layer they need is missing or the trace covers no request.
WITH compute AS (
  SELECT SUM(CASE WHEN op = 'READ' THEN count * COALESCE(size, 0) ELSE 0 END) AS rb,
         SUM(CASE WHEN op = 'WRITE' THEN count * COALESCE(size, 0) ELSE 0 END) AS wb,
         SUM(CASE WHEN op = 'READ' THEN count ELSE 0 END) AS ro,
         SUM(CASE WHEN op = 'WRITE' THEN count ELSE 0 END) AS wo
  FROM sv_trace WHERE op IN ('READ', 'WRITE')
),
served AS (
  SELECT SUM(requests) AS n FROM sv_server
  WHERE op_class IN ('Read', 'Write') AND kind = 'exe' AND requests >= 0
),
ost_rpc AS (
  SELECT ost, date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2)) AS minute,
         CASE WHEN SUM(read_rpc_delta) > 0
              THEN SUM(read_bytes_delta) / SUM(read_rpc_delta) END AS r_size,
         CASE WHEN SUM(write_rpc_delta) > 0
              THEN SUM(write_bytes_delta) / SUM(write_rpc_delta) END AS w_size
  FROM sv_ost
  WHERE read_rpc_delta >= 0 AND write_rpc_delta >= 0 AND read_bytes_delta >= 0
    AND write_bytes_delta >= 0 AND interval_s > 0
  GROUP BY 1, 2
),
client AS (
  SELECT c.read_rpc_delta AS r, c.write_rpc_delta AS w,
         (c.read_rpc_delta + c.write_rpc_delta) * COALESCE(c.pages_per_rpc, 0) * 4096 AS total,
         c.read_rpc_delta * COALESCE(o.r_size, COALESCE(c.pages_per_rpc, 0) * 4096) AS r_part,
         c.write_rpc_delta * COALESCE(o.w_size, COALESCE(c.pages_per_rpc, 0) * 4096) AS w_part
  FROM sv_client c
  LEFT JOIN ost_rpc o
    ON c.ost = o.ost
   AND o.minute = date_trunc('MINUTE', c.ts - make_dt_interval(0, 0, 0, c.interval_s / 2))
  WHERE c.read_rpc_delta >= 0 AND c.write_rpc_delta >= 0
),
fwd AS (
  SELECT ROUND(SUM(CASE WHEN r_part + w_part > 0 THEN total * r_part / (r_part + w_part)
                        ELSE 0 END)) AS rb,
         ROUND(SUM(CASE WHEN r_part + w_part > 0 THEN total * w_part / (r_part + w_part)
                        ELSE 0 END)) AS wb,
         SUM(r) AS ro, SUM(w) AS wo
  FROM client
),
ost AS (
  SELECT SUM(read_bytes_delta) AS rb, SUM(write_bytes_delta) AS wb,
         SUM(read_rpc_delta) AS ro, SUM(write_rpc_delta) AS wo
  FROM sv_ost WHERE read_bytes_delta >= 0 AND write_bytes_delta >= 0
),
layers AS (
  SELECT 0 AS k, 'compute' AS layer, 'LWFS client trace (traced clients only)' AS source,
         c.rb, c.wb, c.ro, c.wo,
         CASE WHEN s.n > 0
              THEN LEAST(1.0, (COALESCE(c.ro, 0) + COALESCE(c.wo, 0)) / s.n) END AS coverage
  FROM compute c CROSS JOIN served s WHERE ${has_compute}
  UNION ALL
  SELECT 1, 'forwarding', 'Lustre clients on forwarding nodes (RPCs x pages x 4 KiB, estimate)',
         rb, wb, ro, wo, 1.0 FROM fwd WHERE ${has_forwarding}
  UNION ALL
  SELECT 2, 'ost', 'OST counters (exact bytes)', rb, wb, ro, wo, 1.0 FROM ost WHERE ${has_ost}
),
est AS (
  SELECT k, layer, source,
         COALESCE(rb, 0) AS rb, COALESCE(wb, 0) AS wb, COALESCE(ro, 0) AS ro,
         COALESCE(wo, 0) AS wo, coverage,
         CASE WHEN coverage IS NULL THEN CAST(COALESCE(rb, 0) AS DOUBLE)
              WHEN coverage > 0 THEN COALESCE(rb, 0) / coverage END AS rbe,
         CASE WHEN coverage IS NULL THEN CAST(COALESCE(wb, 0) AS DOUBLE)
              WHEN coverage > 0 THEN COALESCE(wb, 0) / coverage END AS wbe
  FROM layers
),
basis AS (
  SELECT MAX(CASE WHEN layer = 'compute' THEN rbe END) AS c_r,
         MAX(CASE WHEN layer = 'compute' THEN wbe END) AS c_w,
         MAX(CASE WHEN layer = 'forwarding' THEN rbe END) AS f_r,
         MAX(CASE WHEN layer = 'ost' THEN wbe END) AS o_w
  FROM est
)
SELECT e.layer, e.source, CAST(e.rb AS BIGINT) AS read_bytes, CAST(e.wb AS BIGINT) AS write_bytes,
       CAST(e.ro AS BIGINT) AS read_ops, CAST(e.wo AS BIGINT) AS write_ops,
       CAST(e.coverage AS DOUBLE) AS coverage,
       e.rbe AS read_bytes_est, e.wbe AS write_bytes_est,
       CASE WHEN b.c_r > 0 THEN e.rbe / b.c_r END AS read_ratio,
       CASE WHEN b.c_w > 0 THEN e.wbe / b.c_w END AS write_ratio,
       CASE WHEN b.c_r IS NOT NULL AND b.f_r IS NOT NULL
            THEN b.f_r > ${factor_read} * b.c_r END AS cache_thrashing,
       CASE WHEN b.c_w IS NOT NULL AND b.o_w IS NOT NULL
            THEN b.o_w > ${factor_write} * b.c_w END AS write_amplification,
       CAST(${factor_read} AS DOUBLE) AS thrashing_factor,
       CAST(${factor_write} AS DOUBLE) AS amplification_factor,
       DATE '${date}' AS date
FROM est e CROSS JOIN basis b
