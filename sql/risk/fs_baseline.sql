-- fs_baseline: per filesystem and op, mean, sample std and RSD (= std/mean) of the op's
-- value over every app_hour row of the baseline period (LASSi Tables 1-2).
-- Input view `baseline_rows` (app_hour counters of the period, the processed day included).
-- Parameters: stack (the stack() expression of the ops), period_start, period_end.
SELECT fs, op, AVG(v) AS mean, STDDEV_SAMP(v) AS std,
       CASE WHEN AVG(v) > 0 THEN STDDEV_SAMP(v) / AVG(v) END AS rsd,
       COUNT(*) AS n,
       DATE '${period_start}' AS period_start, DATE '${period_end}' AS period_end
FROM (SELECT fs, ${stack} AS (op, v) FROM baseline_rows)
GROUP BY fs, op
