-- job_path on a site with Lustre export statistics and no forwarding layer (ARCHER): each
-- job's causal I/O path per capture window (SIOX §4.4, §6; lassi.siox.export_path).
-- Inputs: views `xp_hops` (siox/steps/export_hops.sql: per launch, node, target and
-- window), `xp_state` (siox/steps/component_state.sql: each target's window next to its
-- knowledge base), `xp_pin` (the hours' pinpointed targets: hour, component, beta) and
-- `xp_runs` (per launch: excess = LASSi slowdown - 1, lost_s = runtime - its command
-- group's mean, both >= 0) and `xp_util` (siox/steps/export_target_util.sql). Parameters:
-- load_util, date.
-- Hops: the job's compute nodes, OSTs and MDTs with the bytes and requests it moved there,
-- exact from the export statistics (attribution 'exact'); each target's bandwidth and IOPS
-- next to its knowledge base's median (rate_ratio = bw / base bw: weak, demand-limited).
-- Lost time: export statistics carry no service times, so the yardstick is the run's own
-- history. The pinpoint's beta for a target is how much longer than their command groups'
-- mean the runs that used it that hour ran; a run's part explained by it is beta / max(the
-- run's excess, the sum of the betas of the pinpointed targets on its path that hour),
-- averaged over the hours it was named (weighted by the run's windows on it), and the
-- run's LASSi lost time (runtime - command group mean) times that part is spread evenly
-- over the run's windows on the target in those hours (parts summing over 1 are scaled
-- down). Load: of what no pinpoint explains, the share of the run's I/O windows spent on
-- busy targets (>= load_util of their peak in that hour) is queueing behind its
-- neighbours there, spread evenly over those windows as lost_load_s; the rest stays with
-- LASSi's history cause.
WITH win AS (         -- per launch, hour and target: the windows it touched
  SELECT DISTINCT app_id, job_id, hour, ts, target FROM xp_hops
),
touch AS (            -- per launch, hour and pinpointed target on its path: its windows there
  SELECT w.app_id, w.hour, w.target, p.beta, COUNT(*) AS n_x
  FROM win w JOIN xp_pin p ON p.hour = w.hour AND p.component = w.target
  GROUP BY w.app_id, w.hour, w.target, p.beta
),
frac AS (
  SELECT t.app_id, t.hour, t.target, t.n_x,
         t.beta / GREATEST(r.excess, SUM(t.beta) OVER (PARTITION BY t.app_id, t.hour)) AS f
  FROM touch t JOIN xp_runs r ON r.app_id = t.app_id
  WHERE r.excess > 0 AND r.lost_s > 0
),
per_target AS (
  SELECT app_id, target, SUM(n_x * f) / SUM(n_x) AS f, SUM(n_x) AS n
  FROM frac GROUP BY app_id, target
),
part AS (             -- the launch's lost seconds per window on a target at fault
  SELECT p.app_id, p.target,
         r.lost_s * p.f / GREATEST(1.0, SUM(p.f) OVER (PARTITION BY p.app_id)) / p.n
           AS lost_per_window
  FROM per_target p JOIN xp_runs r ON r.app_id = p.app_id
),
explained AS (        -- per launch: the part of its lost time the pinpoint explains
  SELECT app_id, LEAST(SUM(f), 1.0) AS f FROM per_target GROUP BY app_id
),
busy_win AS (         -- the launch's windows on busy targets, k of them in the window
  SELECT w.app_id, w.job_id, w.ts, w.target,
         COUNT(*) OVER (PARTITION BY w.app_id, w.ts) AS k
  FROM win w JOIN xp_util u ON u.component = w.target AND u.hour = w.hour
  WHERE u.util >= ${load_util}
),
n_io AS (SELECT app_id, COUNT(DISTINCT ts) AS n FROM win GROUP BY app_id),
load AS (             -- each I/O window's part of the unexplained lost time, on busy targets
  SELECT b.job_id, b.ts, b.target AS component,
         SUM(r.lost_s * (1 - COALESCE(e.f, 0)) / n.n / b.k) AS lost_load_s
  FROM busy_win b JOIN xp_runs r ON r.app_id = b.app_id
  JOIN n_io n ON n.app_id = b.app_id
  LEFT JOIN explained e ON e.app_id = b.app_id
  WHERE r.lost_s > 0
  GROUP BY b.job_id, b.ts, b.target
),
lost AS (
  SELECT w.job_id, w.ts, w.target AS component, SUM(p.lost_per_window) AS lost_s
  FROM win w
  JOIN xp_pin q ON q.hour = w.hour AND q.component = w.target
  JOIN part p ON p.app_id = w.app_id AND p.target = w.target
  GROUP BY w.job_id, w.ts, w.target
),
hop AS (
  SELECT job_id, ts, 'compute' AS layer, node AS component, 'compute' AS kind,
         SUM(read_bytes) AS read_bytes, SUM(write_bytes) AS write_bytes, SUM(ops) AS ops,
         SUM(md_ops) AS md_ops
  FROM xp_hops GROUP BY job_id, ts, node
  UNION ALL
  SELECT job_id, ts, CASE kind WHEN 'mdt' THEN 'mds' ELSE 'ost' END AS layer, target, kind,
         SUM(read_bytes), SUM(write_bytes), SUM(ops), SUM(md_ops)
  FROM xp_hops GROUP BY job_id, ts, target, kind
)
SELECT h.job_id, h.ts, h.layer, h.component, h.kind, h.read_bytes, h.write_bytes, h.ops,
       h.md_ops,
       CASE WHEN h.kind = 'ost' AND s.bw > 0
            THEN LEAST((h.read_bytes + h.write_bytes) / (s.bw * s.interval_s), 1.0) END AS share,
       'exact' AS attribution,
       s.bw AS comp_bw, s.base_bw, s.iops AS comp_iops, s.base_iops,
       CAST(NULL AS DOUBLE) AS lat_s, CAST(NULL AS DOUBLE) AS base_lat_s,
       CASE WHEN h.kind = 'ost' AND s.base_bw > 0 THEN s.bw / s.base_bw END AS rate_ratio,
       CAST(NULL AS DOUBLE) AS spent_s, CAST(NULL AS DOUBLE) AS expected_s,
       COALESCE(l.lost_s, 0.0) AS lost_s, ld.lost_load_s,
       DATE '${date}' AS date
FROM hop h
LEFT JOIN xp_state s ON h.layer <> 'compute' AND s.component = h.component AND s.ts = h.ts
LEFT JOIN lost l ON h.layer <> 'compute' AND l.job_id = h.job_id AND l.ts = h.ts
                AND l.component = h.component
LEFT JOIN load ld ON h.layer <> 'compute' AND ld.job_id = h.job_id AND ld.ts = h.ts
                 AND ld.component = h.component
