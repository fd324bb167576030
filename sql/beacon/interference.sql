-- interference: for every abnormal phase of the day's abnormal jobs, the neighbour jobs that
-- shared one of its forwarding nodes and did I/O during the phase, their interference-prone
-- features, and the load they put on the shared node during the phase (Beacon §3.3.1,
-- Fig. 12).
-- Inputs: views `ab_phase` (job_id, phase_no, start, end of the abnormal phases), `js`
-- (job_summary of the period), `jts` (job_timeseries compute '*' per second of the period).
-- Parameters: high_mdops (ops/s), high_bw (bytes/s), high_iops (requests/s), peak_bw and
-- peak_iops (of one forwarding node), mdops_weight, bucket_us (the time join's bucket).
-- A neighbour's load in one second is bytes/peak_bw + (requests + mdops_weight x metadata
-- ops)/peak_iops, split evenly over
-- its forwarding nodes (what one node must serve for it, as a fraction of its capacity);
-- `load` sums it over the phase: the neighbour's weight in the time the job lost there.
-- (Weighting only the seconds the node looked saturated was tried and is worse: merged
-- traces smooth the per-second series, and the resource that binds is often an OST.)
-- Features are the neighbour's, over its whole run: N:1 mode, mean MDOPS of its I/O seconds
-- above high_mdops, peak bandwidth >= high_bw, peak IOPS >= high_iops (a contended
-- neighbour's rate inside the phase understates what it demands).
-- The neighbours are found from the seconds, not the seconds from the neighbours: a job
-- shares a forwarding node with about an eighth of the day's jobs on TaihuLight, and
-- joining every such pair to the neighbour's whole series before keeping the phase's
-- seconds joined 4.0 M pairs with 341k seconds on the 4,096-node bench day. Here the
-- phases meet the series by an equi-join on a time bucket (`bucket_us`; each phase
-- exploded to the buckets it spans), which keeps the few jobs that did I/O during each
-- phase; only those are checked for a shared forwarding node. The same rows.
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
phase_bucket AS (
  SELECT a.job_id, a.phase_no, a.start, a.`end`, b AS bucket
  FROM ab_phase a
  LATERAL VIEW explode(sequence(unix_micros(a.start) DIV ${bucket_us},
                                GREATEST(unix_micros(a.`end`) DIV ${bucket_us},
                                         unix_micros(a.start) DIV ${bucket_us}))) s AS b
),
seconds AS (         -- every other job's compute seconds inside each abnormal phase
  SELECT p.job_id, p.phase_no, x.job_id AS neighbour, x.read_bytes, x.write_bytes,
         x.read_ops, x.write_ops, x.md_ops
  FROM phase_bucket p
  JOIN (SELECT *, unix_micros(ts) DIV ${bucket_us} AS bucket FROM jts) x
    ON x.bucket = p.bucket AND x.ts >= p.start AND x.ts < p.`end` AND x.job_id <> p.job_id
),
busy AS (            -- per phase, each such job's I/O in it, its demand in capacity units
  SELECT job_id, phase_no, neighbour,
         SUM(read_bytes + write_bytes) AS bytes, SUM(read_ops + write_ops) AS ops,
         SUM(md_ops) AS md,
         SUM((read_bytes + write_bytes) / ${peak_bw}
             + (read_ops + write_ops + ${mdops_weight} * md_ops) / ${peak_iops}) AS demand
  FROM seconds
  GROUP BY job_id, phase_no, neighbour
),
activity AS (        -- of those jobs, the ones on one of the phase's forwarding nodes
  SELECT b.job_id, b.phase_no, b.neighbour, FIRST(t.io_mode) AS io_mode,
         FIRST(m.start) AS start, FIRST(m.`end`) AS `end`, FIRST(m.dur_s) AS dur_s,
         FIRST(b.bytes) AS bytes, FIRST(b.ops) AS ops, FIRST(b.md) AS md,
         FIRST(b.demand) * COUNT(DISTINCT m.fwd) / FIRST(t.n_fwd) AS load
  FROM busy b
  JOIN mine m ON m.job_id = b.job_id AND m.phase_no = b.phase_no
  JOIN theirs t ON t.job_id = b.neighbour AND t.fwd = m.fwd
  GROUP BY b.job_id, b.phase_no, b.neighbour
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
