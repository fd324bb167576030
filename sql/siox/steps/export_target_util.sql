-- Per Lustre target and hour, its highest utilisation in any capture window of the hour
-- (lassi.siox.export_path): OST bw / peak bw + IOPS / peak IOPS; MDT metadata ops/s / peak
-- ops. Inputs: views `jp_minute` (component_minute of the day) and `xp_peaks`
-- (path_component: component, peak_bw, peak_iops).
SELECT m.component, date_trunc('HOUR', m.ts) AS hour,
       MAX(CASE WHEN m.kind = 'mdt' THEN m.md_ops / m.interval_s / p.peak_iops
                ELSE COALESCE(m.bw / p.peak_bw, 0) + COALESCE(m.iops / p.peak_iops, 0) END)
         AS util
FROM jp_minute m JOIN xp_peaks p ON p.component = m.component
WHERE m.kind IN ('ost', 'mdt')
GROUP BY m.component, date_trunc('HOUR', m.ts)
