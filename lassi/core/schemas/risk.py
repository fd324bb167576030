"""Schemas of the LASSi (risk) tables: node_window, job_window, app_hour, fs_hour,
fs_baseline, run_slowdown, run_group."""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructType,
    TimestampType,
)

from lassi.core.schemas.common import ALL_COUNTERS, DATE, RISK_COLS, counter_fields, field

NODE_WINDOW = StructType(
    [
        field("node", StringType(), False),
        field("fs", StringType(), False),
        field("window_start", TimestampType(), False),
        field("window_s", IntegerType(), False),
    ]
    + [field(c, DoubleType() if c.endswith("_kb") else LongType(), False) for c in ALL_COUNTERS]
    + [field("resets", IntegerType(), False), DATE]
)

# job_window: node_window's counters per Lustre job_stats job id (lassi.risk.job_window)
JOB_WINDOW = StructType(
    [
        field("job_id", StringType(), False),    # the id job_stats names (jobid_var/jobid_name)
        field("job", StringType()),              # the scheduler's job id it maps to (jobstats:)
        field("id_kind", StringType(), False),   # job | daemon | unknown
        field("fs", StringType(), False),
        field("window_start", TimestampType(), False),
        field("window_s", IntegerType(), False),
    ]
    + [field(c, DoubleType() if c.endswith("_kb") else LongType(), False) for c in ALL_COUNTERS]
    + [field("resets", IntegerType(), False), DATE]
)

APP_HOUR = StructType(
    [
        field("app_id", StringType(), False),
        field("job_id", StringType()),
        field("fs", StringType(), False),
        field("hour", TimestampType(), False),
        field("user", StringType()),
        field("exe", StringType()),
        field("command", StringType()),
        field("n_nodes", IntegerType()),
        field("node_windows", LongType(), False),   # node x window cells summed into this row
        field("attributed_by", StringType()),      # exports (node join) | job_stats
    ]
    + counter_fields()
    + [field(r, DoubleType(), False) for r in RISK_COLS]   # r_x = (x - alpha*mu)/sigma, raw sign
    + [
        field("risk_oss", DoubleType(), False),      # sum of positive r_x over the OSS ops
        field("risk_mds", DoubleType(), False),      # sum of positive r_x over the MDS op set
        field("read_kb_ops", DoubleType()),          # read_ops*1024/read_kb; null if no data read
        field("write_kb_ops", DoubleType()),
        DATE,
    ]
)

FS_HOUR = StructType(
    [field("fs", StringType(), False), field("hour", TimestampType(), False),
     field("n_apps", LongType(), False)]
    + counter_fields()
    + [field(r, DoubleType(), False) for r in RISK_COLS]   # sums of positive per-app risks
    + [
        field("risk_oss", DoubleType(), False),
        field("risk_mds", DoubleType(), False),
        field("read_kb_ops", DoubleType()),
        field("write_kb_ops", DoubleType()),
        DATE,
    ]
)

FS_BASELINE = StructType([
    field("fs", StringType(), False),
    field("op", StringType(), False),
    field("mean", DoubleType()),
    field("std", DoubleType()),            # sample standard deviation
    field("rsd", DoubleType()),            # std / mean
    field("n", LongType(), False),         # app_hour rows in the period
    field("period_start", DateType(), False),
    field("period_end", DateType(), False),
    DATE,
])

# run_slowdown: one row per application launch (risk/steps/app_launch.sql) that has a start
# and an end, keyed like its app_run row (app_id, source, date = the launch's app_run date).
# Written by the `slowdown` stage for the date and the day before; app_run (ingest) stays as
# ingest wrote it, and readers join the two on (app_id, source, date).
RUN_SLOWDOWN = StructType([
    field("app_id", StringType(), False),   # app_run.app_id
    field("source", StringType(), False),   # app_run.source
    field("runtime_s", DoubleType(), False),  # end - start
    field("group_runs", IntegerType()),      # runs of the same exact command in the period
    field("group_mean_s", DoubleType()),     # their mean runtime
    field("slowdown", DoubleType()),         # runtime / group mean (null: no launch command)
    field("slowed", BooleanType()),          # slowdown >= thresholds.slowdown_factor
    field("risk_oss_sum", DoubleType(), False),  # sum of the run's app_hour risk_oss (Table 7)
    field("risk_mds_sum", DoubleType(), False),
    DATE,
])

RUN_GROUP = StructType([
    field("command", StringType(), False),
    field("exe", StringType()),
    field("user", StringType()),
    field("n_runs", LongType(), False),
    field("mean_runtime_s", DoubleType()),
    field("std_runtime_s", DoubleType()),
    field("n_slowed", LongType(), False),
    field("corr_runtime_risk_oss", DoubleType()),   # Pearson r over the group's runs (Fig. 7)
    field("corr_runtime_risk_mds", DoubleType()),
    field("period_start", DateType(), False),
    field("period_end", DateType(), False),
    DATE,
])
