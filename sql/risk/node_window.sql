-- node_window: per compute node, filesystem and window, LASSi's counters as deltas; the
-- same per job_stats job id for job_window (key = job_id, kind = 'job').
-- Input view `raw_capture`: raw_lustre_stats rows for the date and the next day's first
-- capture (target rows give every capture's time; export rows carry the per-node data,
-- job rows the per-job data).
-- Parameters: window_s, day_start, day_end (epoch s); key: node | job_id; kind: 'export' |
-- 'job'; expired: when a series restarted although its counters did not go down (FALSE
-- for exports; for job_stats, `prev_seen < window_slot`: an entry missing at its server's
-- previous capture was cleaned up, job_cleanup_interval, and counts again from zero);
-- by_target: empty for node_window, `, target` for one row per node, filesystem, target
-- and window (SIOX's export path, lassi.siox.export_path).
-- The delta between captures at t0 and t1 belongs to the window starting at t0 (floored
-- to the grid). The day's first capture is every series' baseline; a series that first
-- appears later started from zero; a counter that goes down, or whose series' start_time
-- moved on, was reset (delta = value).
-- Lustre omits zero counters, so a target (or a whole server) whose counters are all zero
-- yields no rows at a capture: it was captured but is invisible. A target's previous
-- capture slot is therefore its server's previous visible capture slot, or, before the
-- server's first visible capture, the previous capture slot of the site; and the day's
-- first capture (the baseline) is the site's first capture slot, not the target's.
-- An export block holding only snapshot_time (a client that has just connected: all its
-- counters zero) is a marker row, counter 'snapshot_time': every series of that export is
-- zero at that capture, so the next capture's delta is its whole value.
-- The plan (a test reads it): the capture rows are read once, each turned into its series
-- values by one generator (a union of a query per kind of counter read the raw table seven
-- times), and shuffled once, by ${key}: the capture slots are broadcast to them, and the
-- series' window and the sums per ${key}, filesystem and window need no other exchange
-- (there were three of these rows' size). The dense ARCHER day: 60-66 -> 33-39 s warm,
-- 97-111 -> 54-62 CPU-s (README, Scale, session 51).
WITH captures AS (
  SELECT server, target, kind, fs, ${key}, snapshot_time, start_time,
         CAST(FLOOR(unix_micros(snapshot_time) / 1000000 / ${window_s}) * ${window_s} AS BIGINT) AS slot,
         CASE WHEN target LIKE '%-MDT%' THEN 'mdt' ELSE 'ost' END AS side,
         counter, samples, sum
  FROM raw_capture
),
obs AS (SELECT * FROM captures WHERE kind = ${kind} AND ${key} IS NOT NULL),
metric AS (                       -- one row per series value: bytes and ops are two series;
  -- a marker row gives every series of its side a zero
  SELECT server, target, fs, ${key}, slot, snapshot_time, start_time, side, s.m, s.v
  FROM obs
  LATERAL VIEW inline(CASE
    WHEN side = 'ost' AND counter = 'read_bytes' THEN
      array(named_struct('m', 'read_kb', 'v', CAST(sum AS DOUBLE)),
            named_struct('m', 'read_ops', 'v', CAST(samples AS DOUBLE)))
    WHEN side = 'ost' AND counter = 'write_bytes' THEN
      array(named_struct('m', 'write_kb', 'v', CAST(sum AS DOUBLE)),
            named_struct('m', 'write_ops', 'v', CAST(samples AS DOUBLE)))
    WHEN side = 'ost' AND counter IN ('get_info', 'set_info_async', 'set_info', 'disconnect',
                                      'destroy', 'punch', 'sync', 'preprw', 'commitrw') THEN
      array(named_struct('m', 'other:' || counter, 'v', CAST(samples AS DOUBLE)))
    WHEN side = 'mdt' AND counter IN ('open', 'close', 'mknod', 'link', 'unlink', 'mkdir',
      'rmdir', 'rename', 'getattr', 'setattr', 'getxattr', 'setxattr', 'statfs', 'sync',
      'samedir_rename', 'crossdir_rename') THEN
      array(named_struct('m', CASE counter WHEN 'rename' THEN 'ren'
                                           WHEN 'samedir_rename' THEN 'sdr'
                                           WHEN 'crossdir_rename' THEN 'cdr'
                                           ELSE counter END,
                         'v', CAST(samples AS DOUBLE)))
    WHEN counter = 'snapshot_time' AND side = 'ost' THEN
      transform(array('read_kb', 'read_ops', 'write_kb', 'write_ops', 'other:get_info',
                      'other:set_info_async', 'other:set_info', 'other:disconnect',
                      'other:destroy', 'other:punch', 'other:sync', 'other:preprw',
                      'other:commitrw'), x -> named_struct('m', x, 'v', 0D))
    WHEN counter = 'snapshot_time' AND side = 'mdt' THEN
      transform(array('open', 'close', 'mknod', 'link', 'unlink', 'mkdir', 'rmdir', 'ren',
                      'getattr', 'setattr', 'getxattr', 'setxattr', 'statfs', 'sync', 'sdr',
                      'cdr'), x -> named_struct('m', x, 'v', 0D))
  END) s
),
site_slots AS (                   -- every capture slot of the site (all servers), with the
  -- one before it: the day's slots (one per capture interval, a few thousand at most)
  -- sorted in one array (a window without a partition would do the same, but Spark moves
  -- its rows to one task and warns of it at every run)
  SELECT s.slot, CASE WHEN s.i > 0 THEN a.slots[s.i - 1] END AS site_prev,
         a.slots[0] AS first_slot
  FROM (SELECT array_sort(collect_set(slot)) AS slots FROM captures) a
  LATERAL VIEW posexplode(a.slots) s AS i, slot
),
server_slots AS (                 -- the slots at which a server had any row
  SELECT server, slot, LAG(slot) OVER (PARTITION BY server ORDER BY slot) AS server_prev
  FROM (SELECT DISTINCT server, slot FROM captures)
),
slots AS (
  SELECT v.server, v.slot, COALESCE(v.server_prev, g.site_prev) AS prev_slot, g.first_slot
  FROM server_slots v JOIN site_slots g ON v.slot = g.slot
),
placed AS (                       -- each series value with its window, moved to the task
  -- of its ${key} (the slots: a row per server and capture, a few hundred thousand at most)
  SELECT /*+ BROADCAST(s) */ m.fs, m.target, m.${key}, m.m, s.prev_slot AS window_slot,
         s.first_slot, m.slot, m.snapshot_time, m.start_time, m.v
  FROM metric m JOIN slots s ON m.server = s.server AND m.slot = s.slot
  DISTRIBUTE BY ${key}
),
delta AS (
  SELECT fs, target, ${key}, m, window_slot, first_slot, slot,
         v, LAG(v) OVER w AS prev_v, LAG(slot) OVER w AS prev_seen,
         COALESCE(start_time > LAG(start_time) OVER w, FALSE) AS restarted
  FROM placed
  WINDOW w AS (PARTITION BY target, ${key}, m ORDER BY snapshot_time)
),
clean AS (
  SELECT fs, target, ${key}, m, window_slot,
         CASE WHEN prev_v IS NULL OR v < prev_v OR restarted OR ${expired} THEN v
              ELSE v - prev_v END AS d,
         CASE WHEN prev_v IS NOT NULL AND (v < prev_v OR restarted) THEN 1 ELSE 0 END AS reset
  FROM delta
  WHERE slot > first_slot AND window_slot >= ${day_start} AND window_slot < ${day_end}
)
SELECT ${key}, fs${by_target},
       timestamp_seconds(window_slot) AS window_start,
       ${window_s} AS window_s,
       SUM(CASE WHEN m = 'read_kb' THEN d ELSE 0 END) / 1024.0 AS read_kb,
       CAST(SUM(CASE WHEN m = 'read_ops' THEN d ELSE 0 END) AS BIGINT) AS read_ops,
       SUM(CASE WHEN m = 'write_kb' THEN d ELSE 0 END) / 1024.0 AS write_kb,
       CAST(SUM(CASE WHEN m = 'write_ops' THEN d ELSE 0 END) AS BIGINT) AS write_ops,
       CAST(SUM(CASE WHEN m LIKE 'other:%' THEN d ELSE 0 END) AS BIGINT) AS other,
       CAST(SUM(CASE WHEN m = 'open' THEN d ELSE 0 END) AS BIGINT) AS open,
       CAST(SUM(CASE WHEN m = 'close' THEN d ELSE 0 END) AS BIGINT) AS close,
       CAST(SUM(CASE WHEN m = 'mknod' THEN d ELSE 0 END) AS BIGINT) AS mknod,
       CAST(SUM(CASE WHEN m = 'link' THEN d ELSE 0 END) AS BIGINT) AS link,
       CAST(SUM(CASE WHEN m = 'unlink' THEN d ELSE 0 END) AS BIGINT) AS unlink,
       CAST(SUM(CASE WHEN m = 'mkdir' THEN d ELSE 0 END) AS BIGINT) AS mkdir,
       CAST(SUM(CASE WHEN m = 'rmdir' THEN d ELSE 0 END) AS BIGINT) AS rmdir,
       CAST(SUM(CASE WHEN m = 'ren' THEN d ELSE 0 END) AS BIGINT) AS ren,
       CAST(SUM(CASE WHEN m = 'getattr' THEN d ELSE 0 END) AS BIGINT) AS getattr,
       CAST(SUM(CASE WHEN m = 'setattr' THEN d ELSE 0 END) AS BIGINT) AS setattr,
       CAST(SUM(CASE WHEN m = 'getxattr' THEN d ELSE 0 END) AS BIGINT) AS getxattr,
       CAST(SUM(CASE WHEN m = 'setxattr' THEN d ELSE 0 END) AS BIGINT) AS setxattr,
       CAST(SUM(CASE WHEN m = 'statfs' THEN d ELSE 0 END) AS BIGINT) AS statfs,
       CAST(SUM(CASE WHEN m = 'sync' THEN d ELSE 0 END) AS BIGINT) AS sync,
       CAST(SUM(CASE WHEN m = 'sdr' THEN d ELSE 0 END) AS BIGINT) AS sdr,
       CAST(SUM(CASE WHEN m = 'cdr' THEN d ELSE 0 END) AS BIGINT) AS cdr,
       CAST(SUM(reset) AS INT) AS resets,
       to_date(timestamp_seconds(window_slot)) AS date
FROM clean
GROUP BY ${key}, fs${by_target}, window_slot
