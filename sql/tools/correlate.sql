-- correlate: TOKIO Fig. 9 — Pearson r of job performance against every other numeric job
-- metric, one row of built-in aggregates over `jm` (job_metrics of the period). For each
-- metric x (y = the performance column) the caller's `aggs` parameter holds, over the jobs where
-- both are non-null: n_x = COUNT of the pairs, r_x = CORR(x, y) (Spark skips rows with a
-- null), vx_x / vy_x = VAR_POP of x / y over the pairs (0: constant, r is undefined).
SELECT COUNT(*) AS jobs, ${aggs} FROM jm
