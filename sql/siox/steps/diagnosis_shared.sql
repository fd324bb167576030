-- Neighbours on a site with Lustre export statistics (lassi.siox.diagnosis): for each job's
-- windows on busy targets (its OST/MDT job_path rows with lost_load_s > 0: the target ran
-- near its peak; a forwarding node's load part is Beacon's interference), the other jobs
-- on the same target in the same window, weighted by their share of the target's traffic
-- there (OST: bytes; MDT: metadata operations), summed over the
-- windows; `self_weight` is the job's own share summed the same way (its own load: that
-- part of the queueing is its own doing). The top ${max_neighbours} per job, in the columns
-- of the Beacon interference neighbours, with its mean share per shared window.
-- Inputs: views `dg_path` (the explained jobs' job_path rows) and `dg_day_path` (job_path
-- of the day, every job). Parameter: window_s.
WITH mine AS (
  SELECT DISTINCT job_id, ts, component, kind FROM dg_path
  WHERE lost_load_s > 0 AND layer IN ('ost', 'mds')   -- not Beacon's forwarding load
),
tot AS (
  SELECT component, ts, SUM(read_bytes + write_bytes) AS bytes, SUM(md_ops) AS md
  FROM dg_day_path WHERE layer <> 'compute' GROUP BY component, ts
),
pair AS (
  SELECT m.job_id, p.job_id AS neighbour, m.component, m.kind,
         SUM(CASE WHEN m.kind = 'mdt' THEN p.md_ops / NULLIF(t.md, 0)
                  ELSE (p.read_bytes + p.write_bytes) / NULLIF(t.bytes, 0) END) AS weight,
         SUM(p.read_bytes + p.write_bytes) AS bytes, SUM(p.ops) AS ops, SUM(p.md_ops) AS md,
         COUNT(DISTINCT m.ts) AS windows
  FROM mine m
  JOIN dg_day_path p ON p.component = m.component AND p.ts = m.ts
  JOIN tot t ON t.component = m.component AND t.ts = m.ts
  GROUP BY m.job_id, p.job_id, m.component, m.kind
),
per_nb AS (
  SELECT job_id, neighbour,
         MAX_BY(concat(CASE kind WHEN 'mdt' THEN 'MDT ' ELSE 'OST ' END, component), weight)
           AS target,
         SUM(weight) AS weight, SUM(weight) / SUM(windows) AS mean_share,
         CAST(SUM(windows) AS INT) AS windows, SUM(bytes) / (MAX(windows) * ${window_s}) AS bw,
         SUM(ops) / (MAX(windows) * ${window_s}) AS iops,
         SUM(md) / (MAX(windows) * ${window_s}) AS mdops
  FROM pair GROUP BY job_id, neighbour
)
SELECT job_id, neighbour, target, weight, self_weight, mean_share, windows, bw, iops, mdops
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY job_id ORDER BY weight DESC, neighbour) AS k,
             MAX(CASE WHEN neighbour = job_id THEN weight ELSE 0 END)
               OVER (PARTITION BY job_id) AS self_weight
      FROM per_nb WHERE weight > 0)
WHERE k <= ${max_neighbours} + 1 AND neighbour <> job_id
