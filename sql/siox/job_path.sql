-- job_path: each job's causal I/O path per minute (SIOX §4.4, §6; lassi.siox.job_path).
-- Inputs: views `jp_ts` (job_timeseries of the day), `jp_fwd_map` (fwd_map of the day),
-- `jp_state` (siox/steps/component_state.sql), `jp_threads` (path_component's LWFS
-- threads per forwarding node), `jp_shares` (forwarding node -> OST RPC shares per minute,
-- from siox/steps/pinpoint_input.sql, with the client's wait for the OST and the wait its
-- knowledge base expects), `jp_obs` (forwarding-node excess and expected thread time per
-- minute) and `jp_pin` (the hour's pinpointed components: hour, component, kind, beta,
-- evidence).
-- Hops: the job's compute nodes, forwarding nodes, OSTs and MDS as job_timeseries gives
-- them (forwarding/OST/MDS bytes by the profiles' share rule: attribution 'share';
-- compute nodes exact from the trace).
-- lat_s / base_lat_s: at a forwarding node its LWFS service time, at an OST its clients'
-- wait per RPC (when reported), each next to its knowledge base.
-- Time at a forwarding node: the job's LWFS requests there (exact: its nodes' trace
-- lines, mapped through fwd_map) x the node's mean service time (execution + queueing)
-- / its service threads; expected_s the same at the knowledge base's median. The excess
-- (spent - expected) is divided among the hour's pinpointed faults in proportion to the
-- excess each predicts at that node and minute (a faulty forwarding node: its beta; a
-- faulty OST: its measured part — the node's extra wait for it / the thread time the
-- node's requests were expected to take — when pinpointed on its wait, else its beta x
-- the node's share of requests to it), what remains is load
-- (lost_load_s: queueing behind other work). A fault's part lands on its own hop row
-- (an OST's on the job's row for that OST) as lost_s.
WITH req AS (
  SELECT t.job_id, t.ts, f.fwd, SUM(t.read_ops + t.write_ops) AS req
  FROM jp_ts t JOIN jp_fwd_map f ON t.component = f.node
  WHERE t.layer = 'compute' AND t.component <> '*'
  GROUP BY t.job_id, t.ts, f.fwd
),
ft AS (
  SELECT r.job_id, r.ts, r.fwd, r.req, s.lat_s, s.base_lat_s,
         r.req * s.lat_s / COALESCE(th.threads, 1) AS spent_s,
         r.req * s.base_lat_s / COALESCE(th.threads, 1) AS expected_s,
         GREATEST(r.req * (s.lat_s - s.base_lat_s) / COALESCE(th.threads, 1), 0) AS excess_s
  FROM req r
  JOIN jp_state s ON s.component = r.fwd AND s.ts = r.ts AND s.kind = 'fwd'
  LEFT JOIN jp_threads th ON th.component = r.fwd
  WHERE r.req > 0 AND s.lat_s IS NOT NULL AND s.base_lat_s > 0
),
parts AS (
  SELECT o.fwd, o.minute, p.component, p.kind,
         CASE WHEN p.kind = 'fwd' THEN p.beta
              WHEN p.evidence = 'rpc_wait' THEN
                GREATEST(sh.rpc_wait_s - sh.expected_wait_s, 0) / o.base_exe_time_s
              ELSE p.beta * sh.share END AS part,
         GREATEST(o.excess, 0) AS excess
  FROM jp_obs o
  JOIN jp_pin p ON p.hour = date_trunc('HOUR', o.minute)
  LEFT JOIN jp_shares sh ON sh.fwd = o.fwd AND sh.minute = o.minute AND sh.ost = p.component
  WHERE (p.kind = 'fwd' AND p.component = o.fwd) OR (p.kind = 'ost' AND sh.share > 0)
),
frac AS (
  SELECT fwd, minute, component, kind,
         part / GREATEST(MAX(excess) OVER (PARTITION BY fwd, minute),
                         SUM(part) OVER (PARTITION BY fwd, minute)) AS frac
  FROM parts WHERE part > 0
),
fault_lost AS (
  SELECT ft.job_id, ft.ts, fr.component, fr.kind, SUM(ft.excess_s * fr.frac) AS lost_s
  FROM ft JOIN frac fr ON fr.fwd = ft.fwd AND fr.minute = ft.ts
  GROUP BY ft.job_id, ft.ts, fr.component, fr.kind
),
load_lost AS (
  SELECT ft.job_id, ft.ts, ft.fwd,
         ft.excess_s * (1 - COALESCE(SUM(fr.frac), 0)) AS lost_load_s
  FROM ft LEFT JOIN frac fr ON fr.fwd = ft.fwd AND fr.minute = ft.ts
  GROUP BY ft.job_id, ft.ts, ft.fwd, ft.excess_s
),
hop AS (
  SELECT job_id, ts, layer, component, read_bytes, write_bytes,
         read_ops + write_ops AS ops, md_ops, share,
         CASE WHEN layer = 'compute' THEN 'exact' ELSE 'share' END AS attribution
  FROM jp_ts
  WHERE layer IN ('forwarding', 'ost', 'mds') OR (layer = 'compute' AND component <> '*')
),
hop_all AS (
  SELECT COALESCE(h.job_id, l.job_id) AS job_id, COALESCE(h.ts, l.ts) AS ts,
         COALESCE(h.layer, CASE l.kind WHEN 'fwd' THEN 'forwarding' ELSE 'ost' END) AS layer,
         COALESCE(h.component, l.component) AS component,
         COALESCE(h.read_bytes, 0) AS read_bytes, COALESCE(h.write_bytes, 0) AS write_bytes,
         COALESCE(h.ops, 0) AS ops, COALESCE(h.md_ops, 0) AS md_ops, h.share,
         COALESCE(h.attribution, 'share') AS attribution, COALESCE(l.lost_s, 0) AS lost_s
  FROM hop h FULL OUTER JOIN fault_lost l
    ON h.job_id = l.job_id AND h.ts = l.ts AND h.component = l.component
)
SELECT a.job_id, a.ts, a.layer, a.component,
       CASE a.layer WHEN 'compute' THEN 'compute' WHEN 'forwarding' THEN 'fwd'
                    ELSE COALESCE(s.kind, a.layer) END AS kind,
       a.read_bytes, a.write_bytes, a.ops, a.md_ops, a.share, a.attribution,
       s.bw AS comp_bw, s.base_bw, s.iops AS comp_iops, s.base_iops,
       COALESCE(s.lat_s, s.rpc_s) AS lat_s, COALESCE(s.base_lat_s, s.base_rpc_s) AS base_lat_s,
       CASE WHEN a.layer = 'forwarding' AND s.lat_s > 0 THEN s.base_lat_s / s.lat_s
            WHEN a.layer = 'ost' AND s.rpc_s > 0 THEN s.base_rpc_s / s.rpc_s
            WHEN a.layer IN ('ost', 'mds') AND s.base_bw > 0 THEN s.bw / s.base_bw END
         AS rate_ratio,
       ft.spent_s, ft.expected_s, a.lost_s, ll.lost_load_s,
       DATE '${date}' AS date
FROM hop_all a
LEFT JOIN jp_state s ON s.component = a.component AND s.ts = a.ts
LEFT JOIN ft ON a.layer = 'forwarding' AND ft.job_id = a.job_id AND ft.ts = a.ts
             AND ft.fwd = a.component
LEFT JOIN load_lost ll ON a.layer = 'forwarding' AND ll.job_id = a.job_id AND ll.ts = a.ts
                       AND ll.fwd = a.component
