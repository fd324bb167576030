-- component_system: the day's system-rule anomalies from the islands of
-- beacon/steps/component_islands.sql, without the islands that are consequences of another one.
-- Inputs: views `cmp_islands`, `cmp_fwd_ost` (beacon/steps/fwd_ost_minute.sql over the day: forwarding
-- node -> OST bytes per minute). Parameters: lead, max_gap (minutes), slower, min_share,
-- date.
-- A slow component throttles every job that uses it, and the jobs' other components then
-- serve little: with enough such jobs they too stay under the threshold, though asked to
-- serve (their clients queue behind the slow one). Island A explains island B of another
-- component when A covers B (A starts at most max_gap minutes after B and ends at most
-- max_gap minutes before it) and
--   * A began `lead` minutes or more before B, or
--   * both are of one kind and A is clearly slower (the 90th percentile of its
--     bandwidth fraction over its low minutes below `slower` x B's), or
--   * they are of different kinds and at least `min_share` of B's traffic during B went
--     through A (an OST fed by a slow forwarding node, a forwarding node writing to a
--     slow OST).
-- B is dropped when an island explains it that B does not explain in turn.
WITH isl AS (
  SELECT *, concat(kind, ':', component, ':', CAST(start AS STRING)) AS id FROM cmp_islands
),
pairs AS (
  SELECT a.id AS a_id, b.id AS b_id, a.kind AS a_kind, a.component AS a_comp,
         b.kind AS b_kind, b.component AS b_comp, a.start AS a_start, b.start AS b_start,
         b.`end` AS b_end, a.p90_fraction AS a_frac, b.p90_fraction AS b_frac
  FROM isl a JOIN isl b
    ON NOT (a.kind = b.kind AND a.component = b.component)
   AND a.start <= b.start + make_dt_interval(0, 0, ${max_gap}, 0)
   AND a.`end` >= b.`end` - make_dt_interval(0, 0, ${max_gap}, 0)
),
shares AS (
  SELECT p.a_id, p.b_id,
         SUM(CASE WHEN (p.b_kind = 'ost' AND f.fwd = p.a_comp)
                    OR (p.b_kind = 'fwd' AND f.ost = p.a_comp)
                  THEN f.read_bytes + f.write_bytes ELSE 0 END)
           / NULLIF(SUM(f.read_bytes + f.write_bytes), 0) AS share
  FROM pairs p JOIN cmp_fwd_ost f
    ON p.a_kind <> p.b_kind
   AND ((p.b_kind = 'ost' AND f.ost = p.b_comp) OR (p.b_kind = 'fwd' AND f.fwd = p.b_comp))
   AND f.minute >= p.b_start AND f.minute < p.b_end
  GROUP BY p.a_id, p.b_id
),
explains AS (
  SELECT p.a_id, p.b_id
  FROM pairs p LEFT JOIN shares s ON p.a_id = s.a_id AND p.b_id = s.b_id
  WHERE p.a_start <= p.b_start - make_dt_interval(0, 0, ${lead}, 0)
     OR (p.a_kind = p.b_kind AND p.a_frac < ${slower} * p.b_frac)
     OR (p.a_kind <> p.b_kind AND s.share >= ${min_share})
),
dropped AS (
  SELECT e.b_id FROM explains e
  LEFT ANTI JOIN explains r ON r.a_id = e.b_id AND r.b_id = e.a_id
)
SELECT b.kind, b.component, 'system' AS rule, CAST(NULL AS STRING) AS job_id,
       b.start, b.`end`, b.duration_min, b.max_bw_fraction, b.peak_bw,
       CASE WHEN b.kind = 'fwd'
            THEN format_string('max %.0f %% of peak over %d low minutes while serving; '
                               || 'LWFS queue %.1f on average',
                               100 * b.max_bw_fraction, b.low_minutes, b.evidence_value)
            ELSE format_string('max %.0f %% of peak over %d low minutes busy in every sample',
                               100 * b.max_bw_fraction, b.low_minutes)
       END AS evidence,
       CAST(NULL AS DOUBLE) AS est_slowdown, b.ongoing, DATE '${date}' AS date
FROM isl b LEFT ANTI JOIN dropped d ON b.id = d.b_id
