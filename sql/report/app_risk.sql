-- report_app_risk: per filesystem and hour, the risk (column named by the `risk` parameter)
-- of the period's top applications of the filesystem — an application is an executable run
-- by a user, all its launches together, as LASSi names them — ranked by their summed risk
-- over the period (parameter top_n), and of all other applications together (app_id NULL).
-- Input view `ah` (app_hour of the report period). Only hours with positive risk appear.
-- The app_id column carries the number of launches of the application in the hour.
WITH keyed AS (
  SELECT *, COALESCE(exe, '(no exe)') || ' (' || COALESCE(user, '?') || ')' AS app_key
  FROM ah
),
app AS (
  SELECT fs, app_key, SUM(${risk}) AS total FROM keyed GROUP BY fs, app_key
),
top AS (
  SELECT fs, app_key, total, rnk FROM (
    SELECT fs, app_key, total,
           ROW_NUMBER() OVER (PARTITION BY fs ORDER BY total DESC, app_key) AS rnk
    FROM app WHERE total > 0)
  WHERE rnk <= ${top_n}
)
SELECT a.fs, a.hour, t.app_key AS app_id, t.rnk AS rank, t.total,
       FIRST(a.exe, TRUE) AS exe, FIRST(a.user, TRUE) AS user, SUM(a.${risk}) AS risk,
       COUNT(DISTINCT a.app_id) AS launches
FROM keyed a LEFT JOIN top t ON a.fs = t.fs AND a.app_key = t.app_key
WHERE a.${risk} > 0
GROUP BY a.fs, a.hour, t.app_key, t.rnk, t.total
