-- Each job's share of a forwarding node's load per minute, from compute-side throughput
-- (paper §3.3.2: shared forwarding and storage nodes are split "by using the I/O throughput
-- at the compute layer that is monopolized for each job").
-- Inputs: views `job_trace`, `trace` (every traced line, attributed or not), `fwd_map`.
-- share_read / share_write / share_md: the job's read bytes / write bytes / metadata ops
-- through the forwarding node in that minute over everyone's.
WITH mine AS (
  SELECT t.job_id, m.fwd, date_trunc('MINUTE', t.ts) AS minute,
         SUM(t.read_bytes) AS rb, SUM(t.write_bytes) AS wb, SUM(t.md_ops) AS md
  FROM job_trace t JOIN fwd_map m ON t.node = m.node
  GROUP BY t.job_id, m.fwd, date_trunc('MINUTE', t.ts)
),
everyone AS (
  SELECT m.fwd, date_trunc('MINUTE', t.ts) AS minute,
         SUM(CASE WHEN t.op = 'READ' THEN t.count * t.size ELSE 0 END) AS rb,
         SUM(CASE WHEN t.op = 'WRITE' THEN t.count * t.size ELSE 0 END) AS wb,
         SUM(CASE WHEN t.op IN ('READ', 'WRITE') THEN 0 ELSE t.count END) AS md
  FROM trace t JOIN fwd_map m ON t.node = m.node
  GROUP BY m.fwd, date_trunc('MINUTE', t.ts)
)
SELECT i.job_id, i.fwd, i.minute,
       CASE WHEN e.rb > 0 THEN i.rb / e.rb ELSE 0.0 END AS share_read,
       CASE WHEN e.wb > 0 THEN i.wb / e.wb ELSE 0.0 END AS share_write,
       CASE WHEN e.md > 0 THEN i.md / e.md ELSE 0.0 END AS share_md,
       CASE WHEN e.rb + e.wb > 0 THEN (i.rb + i.wb) / (e.rb + e.wb) ELSE 0.0 END AS share_bytes
FROM mine i JOIN everyone e ON i.fwd = e.fwd AND i.minute = e.minute
