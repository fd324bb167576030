-- The pinpoint's observations on a site with Lustre export statistics (lassi.siox.export_path):
-- per hour, every launch that did I/O in it with its runtime excess (LASSi slowdown - 1,
-- >= 0) and each Lustre target it touched that hour (one row per launch and target), copied
-- to every `centre` hour within ${span_h} hours of it (the fit of a centre hour pools them),
-- with `busy`: the target reached `load_util` of its peak in some window of the hour. A
-- busy target's runs are slowed by its load (their neighbours), not by a fault: it stays a
-- candidate of the fit, so it takes up that excess, but is not named.
-- Inputs: views `xp_hops` (siox/steps/export_hops.sql), `xp_runs` (per launch: excess) and
-- `xp_util` (siox/steps/export_target_util.sql). Parameters: load_util, span_h.
SELECT centre, hour, app_id, excess, component, kind, busy
FROM (SELECT DISTINCT h.hour, h.app_id, r.excess, h.target AS component, h.kind,
             COALESCE(u.util >= ${load_util}, FALSE) AS busy
      FROM xp_hops h JOIN xp_runs r ON r.app_id = h.app_id
      LEFT JOIN xp_util u ON u.component = h.target AND u.hour = h.hour)
LATERAL VIEW explode(sequence(hour - make_dt_interval(0, ${span_h}),
                              hour + make_dt_interval(0, ${span_h}),
                              make_dt_interval(0, 1))) c AS centre
