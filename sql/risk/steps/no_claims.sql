-- launch_claims on a day where no launch's window range meets another's on a node: no
-- row, the columns of risk/steps/launch_claims.sql (the optimizer prunes it from the joins
-- that read it).
SELECT CAST(NULL AS STRING) AS app_id, CAST(NULL AS STRING) AS node,
       CAST(NULL AS TIMESTAMP) AS window_start, CAST(NULL AS DOUBLE) AS share
WHERE FALSE
