-- interference: for every abnormal phase of the day's abnormal jobs, the neighbour jobs that
-- shared one of its forwarding nodes and did I/O during the phase, their interference-prone
-- features, and the load they put on the shared node during the phase (Beacon §3.3.1,
-- Fig. 12).
-- Inputs: views `ab_phase` (job_id, phase_no, start, end of the abnormal phases), `js`
-- (job_summary of the period), `jts` (job_timeseries compute '*' per second of the period).
-- Parameters: high_mdops (ops/s), high_bw (bytes/s), high_iops (requests/s), peak_bw and
-- peak_iops (of one forwarding node), mdops_weight.
-- A neighbour's load in one second is bytes/peak_bw + (requests + mdops_weight x metadata
-- ops)/peak_iops, split evenly over
-- its forwarding nodes (what one node must serve for it, as a fraction of its capacity);
-- `load` sums it over the phase: the neighbour's weight in the time the job lost there.
-- (Weighting only the seconds the node looked saturated was tried and is worse: merged
-- traces smooth the per-second series, and the resource that binds is often an OST.)
-- Features are the neighbour's, over its whole run: N:1 mode, mean MDOPS of its I/O seconds
-- above high_mdops, peak bandwidth >= high_bw, peak IOPS >= high_iops (a contended
-- neighbour's rate inside the phase understates what it demands).
WITH mine AS (
  SELECT a.job_id, a.phase_no, a.start, a.`end`,
         GREATEST(unix_timestamp(a.`end`) - unix_timestamp(a.start), 1) AS dur_s, f.fwd
  FROM ab_phase a JOIN js s ON a.job_id = s.job_id
  LATERAL VIEW explode(s.fwd_nodes) f AS fwd
),
theirs AS (
  SELECT s.job_id, s.io_mode, f.fwd, GREATEST(size(s.fwd_nodes), 1) AS n_fwd
  FROM js s LATERAL VIEW explode(s.fwd_nodes) f AS fwd
),
pairs AS (
  SELECT m.job_id, m.phase_no, FIRST(m.start) AS start, FIRST(m.`end`) AS `end`,
         FIRST(m.dur_s) AS dur_s, t.job_id AS neighbour, FIRST(t.io_mode) AS io_mode,
         FIRST(t.n_fwd) AS n_fwd, COUNT(DISTINCT m.fwd) AS n_shared
  FROM mine m JOIN theirs t ON m.fwd = t.fwd AND m.job_id <> t.job_id
  GROUP BY m.job_id, m.phase_no, t.job_id
),
activity AS (
  SELECT p.job_id, p.phase_no, p.neighbour, FIRST(p.io_mode) AS io_mode,
         FIRST(p.start) AS start, FIRST(p.`end`) AS `end`, FIRST(p.dur_s) AS dur_s,
         SUM(x.read_bytes + x.write_bytes) AS bytes, SUM(x.read_ops + x.write_ops) AS ops,
         SUM(x.md_ops) AS md,
         SUM((x.read_bytes + x.write_bytes) / ${peak_bw}
             + (x.read_ops + x.write_ops + ${mdops_weight} * x.md_ops) / ${peak_iops})
           * FIRST(p.n_shared) / FIRST(p.n_fwd)
           AS load
  FROM pairs p JOIN jts x
    ON x.job_id = p.neighbour AND x.ts >= p.start AND x.ts < p.`end`
  GROUP BY p.job_id, p.phase_no, p.neighbour
),
peaks AS (
  SELECT job_id, MAX(read_ops + write_ops) AS peak_iops FROM jts GROUP BY job_id
),
jobs AS (
  SELECT job_id, MAX(avg_mdops) AS avg_mdops, MAX(peak_bw) AS peak_bw FROM js GROUP BY job_id
)
SELECT a.job_id, a.phase_no, a.start, a.`end`, a.neighbour, a.io_mode,
       a.bytes / a.dur_s AS bw, a.ops / a.dur_s AS iops, a.md / a.dur_s AS mdops, a.load,
       (a.io_mode = 'N:1' AND a.bytes > 0) AS n1,
       COALESCE(s.avg_mdops, 0) > ${high_mdops} AS high_mdops,
       COALESCE(s.peak_bw, 0) >= ${high_bw} AS high_bw,
       COALESCE(k.peak_iops, 0) >= ${high_iops} AS high_iops
FROM activity a JOIN jobs s ON a.neighbour = s.job_id
LEFT JOIN peaks k ON a.neighbour = k.job_id
WHERE a.bytes + a.md > 0
