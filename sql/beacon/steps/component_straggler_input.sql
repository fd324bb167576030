-- component_straggler_input: per large job, layer and component, the bandwidth the
-- component gave the job over the time it moved the job's data (Beacon Figs. 14-15).
-- Inputs: views `cmp_jobs` (job_summary of the day), `cmp_ts` (job_timeseries of the day:
-- the job's per-minute share of each forwarding node's traffic, `share` of its forwarding
-- rows), `sv_client` (raw_lustre_client of the day), `cmp_peaks` (kind, component,
-- peak_bw). Parameters: large_job_nodes, active_fraction, main_pair_fraction.
-- The job's bytes through a forwarding node / OST per Lustre-client sample (about 10 s:
-- an I/O phase often lasts less than a minute) are the node's (node -> OST) bytes of the
-- sample x the job's share of the node in that minute. `bw`: those bytes / the seconds of
-- the busy samples, a busy sample moving at least `active_fraction` x the component's
-- busiest sample for the job (a straggler moves its part slowly, so it needs more busy
-- samples; a component that only carries a trickle to or from a straggler of the other
-- layer once its own part is done adds samples that do not count); `max_bw`: the busiest
-- sample; `minutes`: the busy time in minutes (rounded up); start / end: the first and
-- last sample with bytes. `pair_bw`: per (forwarding node, OST) pair of the job its bytes
-- over the seconds of the samples that moved them, and per component the median over its
-- main pairs, those with at least `main_pair_fraction` x the bytes of its largest pair
-- (what lassi.beacon.components compares: an OST fed by more of the job's forwarding nodes moves
-- more per second without being faster, and small pairs are mostly other jobs' traffic
-- attributed through the per-minute shares). A pair has no busy threshold: a slow pair
-- moves its part in long slow stretches that a threshold relative to its fastest sample
-- (often taken after the fault) would leave out. A job without Lustre-client samples uses
-- job_timeseries' per-minute bytes of its forwarding nodes and OSTs instead (pair_bw NULL).
WITH big AS (
  SELECT job_id FROM cmp_jobs WHERE n_nodes >= ${large_job_nodes}
),
job_share AS (
  SELECT t.job_id, t.component AS fwd, t.ts AS minute, t.share
  FROM cmp_ts t JOIN big b ON t.job_id = b.job_id
  WHERE t.layer = 'forwarding' AND t.share > 0
),
sample AS (
  SELECT fwd, ost, interval_s,
         timestamp_seconds(CAST(floor(unix_timestamp(ts) / interval_s) AS BIGINT)
                           * interval_s) AS slot,
         date_trunc('MINUTE', ts - make_dt_interval(0, 0, 0, interval_s / 2)) AS minute,
         (read_rpc_delta + write_rpc_delta) * COALESCE(pages_per_rpc, 0) * 4096 AS bytes
  FROM sv_client
  WHERE read_rpc_delta IS NOT NULL AND interval_s > 0 AND fwd IS NOT NULL
),
mine AS (
  SELECT s.job_id, c.fwd, c.ost, c.slot, c.interval_s, c.bytes * s.share AS bytes
  FROM sample c JOIN job_share s ON c.fwd = s.fwd AND c.minute = s.minute
  WHERE c.bytes > 0
),
from_samples AS (
  SELECT job_id, 'fwd' AS kind, fwd AS component, slot, MAX(interval_s) AS interval_s,
         SUM(bytes) AS bytes
  FROM mine GROUP BY job_id, fwd, slot
  UNION ALL
  SELECT job_id, 'ost' AS kind, ost AS component, slot, MAX(interval_s) AS interval_s,
         SUM(bytes) AS bytes
  FROM mine GROUP BY job_id, ost, slot
),
from_minutes AS (   -- jobs without Lustre-client samples: job_timeseries' minutes
  SELECT t.job_id, CASE t.layer WHEN 'forwarding' THEN 'fwd' ELSE 'ost' END AS kind,
         t.component, t.ts AS slot, CAST(t.interval_s AS DOUBLE) AS interval_s,
         t.read_bytes + t.write_bytes AS bytes
  FROM cmp_ts t JOIN big b ON t.job_id = b.job_id
  LEFT ANTI JOIN (SELECT DISTINCT job_id FROM from_samples) h ON t.job_id = h.job_id
  WHERE t.layer IN ('forwarding', 'ost') AND t.read_bytes + t.write_bytes > 0
),
per_sample AS (
  SELECT * FROM from_samples UNION ALL SELECT * FROM from_minutes
),
marked AS (
  SELECT m.*, m.bytes / m.interval_s AS bw,
         m.bytes / m.interval_s >= ${active_fraction}
           * MAX(m.bytes / m.interval_s) OVER (PARTITION BY m.job_id, m.kind, m.component)
           AS busy
  FROM per_sample m
),
pair_bw AS (        -- the same per (forwarding node, OST) pair of the job, over every
                    -- sample with its bytes (see above: no busy threshold)
  SELECT job_id, fwd, ost, SUM(bytes) AS bytes, SUM(bytes) / SUM(interval_s) AS bw
  FROM mine GROUP BY job_id, fwd, ost
),
pair_main AS (      -- the pairs that carry the component's traffic for the job, not the
                    -- trickles other jobs' traffic adds through the per-minute shares
  SELECT *,
         bytes >= ${main_pair_fraction} * MAX(bytes) OVER (PARTITION BY job_id, fwd) AS main_fwd,
         bytes >= ${main_pair_fraction} * MAX(bytes) OVER (PARTITION BY job_id, ost) AS main_ost
  FROM pair_bw
),
per_pair AS (       -- a component's bandwidth per pair: the median over its main pairs
  SELECT job_id, 'fwd' AS kind, fwd AS component, percentile(bw, 0.5) AS pair_bw
  FROM pair_main WHERE main_fwd GROUP BY job_id, fwd
  UNION ALL
  SELECT job_id, 'ost' AS kind, ost AS component, percentile(bw, 0.5) AS pair_bw
  FROM pair_main WHERE main_ost GROUP BY job_id, ost
)
SELECT m.job_id, m.kind, m.component, MIN(m.slot) AS start,
       MAX(m.slot + make_dt_interval(0, 0, 0, m.interval_s)) AS `end`,
       CAST(ceil(SUM(CASE WHEN m.busy THEN m.interval_s ELSE 0 END) / 60) AS INT) AS minutes,
       SUM(m.bytes) AS bytes,
       SUM(CASE WHEN m.busy THEN m.bytes END)
         / SUM(CASE WHEN m.busy THEN m.interval_s END) AS bw, MAX(m.bw) AS max_bw,
       CAST(p.peak_bw AS DOUBLE) AS peak_bw, FIRST(q.pair_bw) AS pair_bw
FROM marked m LEFT JOIN cmp_peaks p ON m.kind = p.kind AND m.component = p.component
LEFT JOIN per_pair q ON m.job_id = q.job_id AND m.kind = q.kind AND m.component = q.component
GROUP BY m.job_id, m.kind, m.component, p.peak_bw
