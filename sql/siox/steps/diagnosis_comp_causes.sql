-- One cause per job and component (lassi.siox.diagnosis; see sql/siox/job_diagnosis.sql):
-- the path's faults (`dg_comp`, with the component anomalies that overlap the run), the
-- OSTs slower in the job's Darshan log (`dg_darshan_ost`) and the OSTs Lustre job_stats
-- flag that served it slower (`dg_jobstats_ost`), in that order of precedence. Inputs:
-- those views, `dg_job` and `dg_anomaly`; parameter export_path. Materialised once: the
-- neighbours' shares and the remainder read it.
WITH dost AS (
  SELECT job_id, ost_name, coefficient, p_value, n_files, n_total, slowest_on_s,
         slowest_off_s,
         GREATEST(slowest_on_s - COALESCE(slowest_off_s, 0), 0) AS lost_s
  FROM dg_darshan_ost
),
anom AS (
  SELECT c.job_id, c.component,
         concat_ws('; ', collect_list(format_string('%s anomaly %s-%s', a.rule,
                   date_format(a.start, 'HH:mm'), date_format(a.end, 'HH:mm')))) AS text
  FROM dg_comp c JOIN dg_job j ON j.job_id = c.job_id
  JOIN dg_anomaly a ON a.component = c.component AND a.start <= j.end AND a.end >= j.start
  GROUP BY c.job_id, c.component
),
path_causes AS (
  SELECT c.job_id, 'component' AS kind, c.component AS name, c.lost_s, 0 AS src,
         concat(CASE c.kind WHEN 'fwd' THEN 'forwarding node ' WHEN 'mdt' THEN 'MDT '
                            ELSE 'OST ' END, c.component,
                ' was pinpointed at fault ', date_format(c.first_ts, 'HH:mm'), '-',
                date_format(c.last_ts, 'HH:mm'), ' UTC while the job used it; the job lost ',
                format_number(c.lost_s / 60, 1), ' min there',
                CASE WHEN c.worst_ratio > 0 THEN concat(' (service up to ',
                     format_number(1 / c.worst_ratio, 1), 'x its normal time)')
                     WHEN ${export_path} THEN ' (the runs that used it that hour ran longer than their command groups; the runs that avoided it did not)'
                     ELSE '' END,
                COALESCE(concat('; ', a.text), '')) AS evidence,
         CASE c.kind WHEN 'fwd'
           THEN 'Report it to the admins (LWFS server); rerun on compute nodes served by another forwarding node.'
           WHEN 'mdt'
           THEN 'Report it to the storage team (metadata server); until it is fixed, keep metadata-heavy work (many small files, frequent opens and stats) off this file system.'
           ELSE 'Report it to the storage team; until it is fixed, stripe new files away from it (lfs setstripe with an OST pool or index list without it).'
         END AS recommendation
  FROM dg_comp c LEFT JOIN anom a ON a.job_id = c.job_id AND a.component = c.component
),
darshan_causes AS (
  SELECT job_id, 'component' AS kind, ost_name AS name, lost_s, 1 AS src,
         concat('files on OST ', ost_name, ' were slower in its Darshan log (Pearson r ',
                format_number(coefficient, 2), ' over ', CAST(n_total AS STRING), ' files, ',
                CAST(n_files AS STRING), ' on it, p ', format_string('%.1g', p_value),
                '): they took up to ',
                format_number(slowest_on_s, 0), ' s, its files elsewhere up to ',
                COALESCE(format_number(slowest_off_s, 0), '?'), ' s') AS evidence,
         'Report it to the storage team; until it is fixed, stripe new files away from it (lfs setstripe with an OST pool or index list without it).'
           AS recommendation
  FROM dost WHERE lost_s > 0
),
jobstats_causes AS (
  SELECT o.job_id, 'component' AS kind, o.ost_name AS name,
         LEAST(o.lost_s, COALESCE(j.runtime_s, o.lost_s)) AS lost_s, 2 AS src,
         concat('OST ', o.ost_name, ' served its requests at ', format_number(o.x, 2),
                'x the rate of its other OSTs in Lustre job_stats (',
                format_number(o.bytes / 1048576.0, 1), ' MiB in ',
                format_number(o.service_s, 1), ' s of OST service time); across the jobs of',
                ' the day its pairs were the slow ones (Pearson r ',
                format_number(o.coefficient, 2), ' over ', CAST(o.n_total AS STRING),
                ' job-OST pairs, ', CAST(o.n_pairs AS STRING), ' on it, p ',
                format_string('%.1g', o.p_value), ')') AS evidence,
         'Report it to the storage team; until it is fixed, stripe new files away from it (lfs setstripe with an OST pool or index list without it).'
           AS recommendation
  FROM dg_jobstats_ost o JOIN dg_job j ON j.job_id = o.job_id
  WHERE o.lost_s > 0
)
SELECT job_id, kind, name, lost_s, evidence, recommendation FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY job_id, name ORDER BY src) AS k
  FROM (SELECT * FROM path_causes UNION ALL SELECT * FROM darshan_causes
        UNION ALL SELECT * FROM jobstats_causes))
WHERE k = 1
