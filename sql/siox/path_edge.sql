-- path_edge: the links of the site's I/O path for one date (lassi.siox.path_model).
-- Inputs: views `site_edge` (the site configuration), `fwd_map` and `ost_map` (the date's
-- static maps; empty on a site or date without them). Parameter: date.
-- When the date has a fwd_map, compute node -> forwarding node links are the map's; when it
-- has an ost_map, OST -> OSS links are the map's (and every mapped OST is striped over by
-- its filesystem). Otherwise the configuration's.
WITH fwd_links AS (
  SELECT DISTINCT node AS src, fwd AS dst, 'forwards' AS relation, 'data+metadata' AS traffic
  FROM fwd_map
),
ost_links AS (
  SELECT DISTINCT ost AS src, oss AS dst, 'hosted_on' AS relation, CAST(NULL AS STRING) AS traffic
  FROM ost_map
  UNION ALL
  SELECT DISTINCT fs, ost, 'stripes', 'data' FROM ost_map
),
configured AS (
  SELECT * FROM site_edge
  WHERE NOT (relation = 'forwards' AND (SELECT COUNT(*) FROM fwd_links) > 0)
    AND NOT (relation = 'hosted_on' AND src LIKE '%-OST%' AND (SELECT COUNT(*) FROM ost_links) > 0)
    AND NOT (relation = 'stripes' AND (SELECT COUNT(*) FROM ost_links) > 0)
)
SELECT *, DATE '${date}' AS date FROM configured
UNION ALL SELECT *, DATE '${date}' AS date FROM fwd_links
UNION ALL SELECT *, DATE '${date}' AS date FROM ost_links
