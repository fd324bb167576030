-- trace_compression: per job, the size of its trace before the first pass (requests), after
-- it (entries of raw_lwfs_trace) and after the second pass (rows of trace_merged), the
-- ratios, and whether the second pass was lossless.
-- Inputs: views `trace_job` (the day's attributed first-pass entries, as for trace_merged),
-- `merged_in` (trace_merged of the day as stored), `job_meta` (job_id, app).
-- Parameter: date.
-- Lossless check, per job and without collecting: every first-pass entry counts +1 and every
-- (node, vector) of trace_merged exploded over its nodes counts -1; grouped by job, node and
-- vector (nulls equal) every sum must be 0, i.e. both exceptAll differences are empty at
-- second granularity. A merged row whose n_nodes differs from size(nodes) also fails it.
-- One scan of each input and one aggregation by vector give the counts too.
WITH signed AS (
  SELECT job_id, node, sec, op, fd, size, `offset`, `count`, path,
         1 AS side, 0 AS merged_row, FALSE AS bad_row
  FROM trace_job
  UNION ALL
  SELECT job_id, node, ts AS sec, op, fd, size, `offset`, `count`, path,
         -1 AS side,
         CASE WHEN pos = 0 OR pos IS NULL THEN 1 ELSE 0 END AS merged_row,
         nodes IS NULL OR n_nodes <> size(nodes) AS bad_row
  FROM merged_in LATERAL VIEW OUTER posexplode(nodes) e AS pos, node
),
vectors AS (
  SELECT job_id, node,
         SUM(side) AS diff,
         SUM(CASE WHEN side = 1 THEN 1 ELSE 0 END) AS first_pass_entries,
         SUM(CASE WHEN side = 1 THEN `count` ELSE 0 END) AS raw_entries,
         SUM(merged_row) AS merged_entries,
         MAX(bad_row) AS bad_row
  FROM signed
  GROUP BY job_id, node, sec, op, fd, size, `offset`, `count`, path
),
per_job AS (
  SELECT job_id,
         CAST(COUNT(DISTINCT CASE WHEN first_pass_entries > 0 THEN node END) AS INT) AS n_nodes,
         CAST(SUM(raw_entries) AS BIGINT) AS raw_entries,
         CAST(SUM(first_pass_entries) AS BIGINT) AS first_pass_entries,
         CAST(SUM(merged_entries) AS BIGINT) AS merged_entries,
         SUM(CASE WHEN diff <> 0 OR bad_row THEN 1 ELSE 0 END) AS mismatches
  FROM vectors
  GROUP BY job_id
)
SELECT c.job_id, m.app, c.n_nodes, c.raw_entries, c.first_pass_entries, c.merged_entries,
       CAST(c.raw_entries AS DOUBLE) / NULLIF(c.first_pass_entries, 0) AS first_pass_ratio,
       CAST(c.first_pass_entries AS DOUBLE) / NULLIF(c.merged_entries, 0) AS second_pass_ratio,
       CAST(c.raw_entries AS DOUBLE) / NULLIF(c.merged_entries, 0) AS total_ratio,
       c.mismatches = 0 AS lossless,
       DATE '${date}' AS date
FROM per_job c LEFT JOIN job_meta m ON c.job_id = m.job_id
