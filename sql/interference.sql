-- interference: for every abnormal phase of the day's abnormal jobs, the neighbour jobs that
-- shared one of its forwarding nodes and did I/O during the phase, with their
-- interference-prone features in that window (Beacon §3.3.1, Fig. 12).
-- Inputs: views `ab_phase` (job_id, phase_no, start, end of the abnormal phases), `js`
-- (job_summary of the period), `jts` (job_timeseries compute '*' per second of the period).
-- Parameters: high_mdops (ops/s), high_bw (bytes/s), high_iops (requests/s).
-- An equi-join on forwarding node (both sides exploded), then the neighbour's seconds
-- inside the phase; features are the neighbour's rates over the phase's duration.
WITH mine AS (
  SELECT a.job_id, a.phase_no, a.start, a.`end`,
         GREATEST(unix_timestamp(a.`end`) - unix_timestamp(a.start), 1) AS dur_s, f.fwd
  FROM ab_phase a JOIN js s ON a.job_id = s.job_id
  LATERAL VIEW explode(s.fwd_nodes) f AS fwd
),
theirs AS (
  SELECT s.job_id, s.io_mode, f.fwd FROM js s LATERAL VIEW explode(s.fwd_nodes) f AS fwd
),
pairs AS (
  SELECT DISTINCT m.job_id, m.phase_no, m.start, m.`end`, m.dur_s, t.job_id AS neighbour,
         t.io_mode
  FROM mine m JOIN theirs t ON m.fwd = t.fwd AND m.job_id <> t.job_id
),
activity AS (
  SELECT p.job_id, p.phase_no, p.neighbour, FIRST(p.io_mode) AS io_mode,
         FIRST(p.start) AS start, FIRST(p.`end`) AS `end`, FIRST(p.dur_s) AS dur_s,
         SUM(x.read_bytes + x.write_bytes) AS bytes, SUM(x.read_ops + x.write_ops) AS ops,
         SUM(x.md_ops) AS md
  FROM pairs p JOIN jts x
    ON x.job_id = p.neighbour AND x.ts >= p.start AND x.ts < p.`end`
  GROUP BY p.job_id, p.phase_no, p.neighbour
)
SELECT job_id, phase_no, start, `end`, neighbour, io_mode,
       bytes / dur_s AS bw, ops / dur_s AS iops, md / dur_s AS mdops,
       (io_mode = 'N:1' AND bytes > 0) AS n1,
       md / dur_s > ${high_mdops} AS high_mdops,
       bytes / dur_s >= ${high_bw} AS high_bw,
       ops / dur_s >= ${high_iops} AS high_iops
FROM activity
WHERE bytes + md > 0
