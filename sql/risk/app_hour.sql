-- app_hour with LASSi risk and ops metrics (DESIGN.md "Key definitions").
-- Input: view `app_hour_counts` (this day's counters). Parameters: base_rows (this day's
-- fs_baseline pivoted to a row per fs: fs, mu_<op>, sd_<op>, as VALUES rows: a literal
-- table, the few filesystems the site configures), base_columns (their names), risk_cols
-- (r_x per op), risk_oss, risk_mds (sums of positive r_x over the configured op sets), date.
-- r_x = (x - alpha * mu_x) / sigma_x; 0 where sigma_x is 0 or undefined (one row).
-- read_kb_ops = read_ops * 1024 / read_kb (1 is optimal: 1 MiB per op), null with no data.
WITH base AS (
  SELECT * FROM VALUES ${base_rows} AS b(${base_columns})
),
risk AS (
  SELECT c.*, ${risk_cols}
  FROM app_hour_counts c JOIN base b ON c.fs = b.fs
)
SELECT *, ${risk_oss} AS risk_oss, ${risk_mds} AS risk_mds,
       CASE WHEN read_kb > 0 THEN read_ops * 1024.0 / read_kb END AS read_kb_ops,
       CASE WHEN write_kb > 0 THEN write_ops * 1024.0 / write_kb END AS write_kb_ops,
       DATE '${date}' AS date
FROM risk
