-- scoreboard_top: TOKIO Fig. 8 (darshan_scoreboard): the top users, applications and file
-- systems by I/O volume over the period. Input view `sb` (user, app, fs, job_id, read_bytes,
-- write_bytes: one of the scoreboard_* queries). jobs = distinct job ids of the group.
-- Ranked by total bytes, ties by name. Parameter: top_n.
WITH cat AS (
  SELECT 'user' AS category, COALESCE(user, '(unknown)') AS name, job_id,
         COALESCE(read_bytes, 0) AS rb, COALESCE(write_bytes, 0) AS wb FROM sb
  UNION ALL
  SELECT 'app', COALESCE(app, '(unknown)'), job_id,
         COALESCE(read_bytes, 0), COALESCE(write_bytes, 0) FROM sb
  UNION ALL
  SELECT 'fs', COALESCE(fs, '${no_fs}'), job_id,
         COALESCE(read_bytes, 0), COALESCE(write_bytes, 0) FROM sb
),
agg AS (
  SELECT category, name, SUM(rb) AS read_bytes, SUM(wb) AS write_bytes,
         SUM(rb + wb) AS total_bytes, COUNT(DISTINCT job_id) AS jobs
  FROM cat GROUP BY category, name
)
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY total_bytes DESC, name) AS rank
  FROM agg)
WHERE rank <= ${top_n}
