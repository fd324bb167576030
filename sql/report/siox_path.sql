-- The I/O path of the day, one row per kind of component (report section "I/O path").
-- Input: view `rs_component` (path_component of the day).
SELECT level, kind, COUNT(*) AS components, SUM(peak_bw) AS peak_bw,
       SUM(peak_iops) AS peak_iops, concat_ws(' + ', FIRST(software)) AS software
FROM rs_component
GROUP BY level, kind
ORDER BY level, kind
