-- Per launch that may overlap the day (lassi.siox.export_path): its runtime excess over its
-- command group's mean (LASSi's slowdown - 1) and the seconds that is, both >= 0; null
-- without a history. Input: view `xp_slowdown` (run_slowdown of the day and the day before).
SELECT app_id, GREATEST(slowdown - 1, 0) AS excess,
       GREATEST(runtime_s - group_mean_s, 0) AS lost_s
FROM xp_slowdown
WHERE slowdown IS NOT NULL AND group_mean_s > 0
