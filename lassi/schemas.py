"""Every table's schema, declared once. Readers and writers use these; nothing is inferred.

The partition column `date` (UTC day, DateType) is part of every warehouse table and is
listed last. Column names are the contract in DESIGN.md.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

OSS_COUNTERS = ["read_kb", "read_ops", "write_kb", "write_ops", "other"]
MDS_COUNTERS = [
    "open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "ren",
    "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "sdr", "cdr",
]
ALL_COUNTERS = OSS_COUNTERS + MDS_COUNTERS

# Lustre OSS ops summed into LASSi's "other" counter.
OSS_OTHER_OPS = [
    "get_info", "set_info_async", "disconnect", "destroy", "punch", "sync", "preprw", "commitrw",
]
# Lustre md_stats names -> LASSi MDS counter names.
MDS_OP_NAMES = {
    "open": "open", "close": "close", "mknod": "mknod", "link": "link", "unlink": "unlink",
    "mkdir": "mkdir", "rmdir": "rmdir", "rename": "ren", "getattr": "getattr",
    "setattr": "setattr", "getxattr": "getxattr", "setxattr": "setxattr", "statfs": "statfs",
    "sync": "sync", "samedir_rename": "sdr", "crossdir_rename": "cdr",
}


def _f(name: str, dtype, nullable: bool = True) -> StructField:
    return StructField(name, dtype, nullable)


DATE = _f("date", DateType(), False)

RAW_LUSTRE_STATS = StructType([
    _f("server", StringType()),        # host the capture came from (OSS/MDS), if known
    _f("target", StringType(), False),  # e.g. fs2-OST0003, fs2-MDT0000
    _f("fs", StringType(), False),      # prefix of the target name
    _f("kind", StringType(), False),    # export | target | job
    _f("nid", StringType()),            # client NID for export stats
    _f("node", StringType()),           # node name the NID maps to
    _f("job_id", StringType()),         # job_stats only
    _f("snapshot_time", TimestampType(), False),
    _f("counter", StringType(), False),  # Lustre's own counter name (read_bytes, open, ...)
    _f("samples", LongType(), False),
    _f("unit", StringType()),
    _f("min", LongType()),
    _f("max", LongType()),
    _f("sum", LongType()),
    _f("sumsq", DoubleType()),
    _f("start_time", TimestampType()),   # newer Lustre: when the counters were (re)started
    _f("file", StringType()),
    DATE,
])

NODE_WINDOW = StructType(
    [
        _f("node", StringType(), False),
        _f("fs", StringType(), False),
        _f("window_start", TimestampType(), False),
        _f("window_s", IntegerType(), False),
    ]
    + [_f(c, DoubleType() if c.endswith("_kb") else LongType(), False) for c in ALL_COUNTERS]
    + [_f("resets", IntegerType(), False), DATE]
)

APP_RUN = StructType([
    _f("app_id", StringType(), False),   # ALPS apid, Slurm step id, or the job id
    _f("job_id", StringType(), False),
    _f("user", StringType()),
    _f("project", StringType()),
    _f("job_name", StringType()),
    _f("exe", StringType()),
    _f("command", StringType()),         # exact launch command
    _f("nodes", ArrayType(StringType())),
    _f("n_nodes", IntegerType()),
    _f("n_procs", IntegerType()),
    _f("start", TimestampType()),
    _f("end", TimestampType()),
    _f("exit_status", IntegerType()),
    _f("source", StringType(), False),   # alps | slurm | pbs | beacon-job
    # Filled by the daily `slowdown` stage (null until then): see sql/run_metrics.sql.
    _f("runtime_s", DoubleType()),
    _f("group_runs", IntegerType()),      # runs of the same exact command in the period
    _f("group_mean_s", DoubleType()),     # their mean runtime
    _f("slowdown", DoubleType()),         # runtime / group mean
    _f("slowed", BooleanType()),          # slowdown >= thresholds.slowdown_factor
    _f("risk_oss_sum", DoubleType()),     # sum of the run's app_hour risk_oss (paper Table 7)
    _f("risk_mds_sum", DoubleType()),
    DATE,
])

# app_run columns written by the analysis, not by ingest.
APP_RUN_ANALYSIS = ["runtime_s", "group_runs", "group_mean_s", "slowdown", "slowed",
                    "risk_oss_sum", "risk_mds_sum"]
# Ops whose risks make up risk_oss; the MDS op set is configurable (thresholds.risk.mds_ops).
RISK_COLS = [f"r_{c}" for c in ALL_COUNTERS]


def _counters() -> list[StructField]:
    return [_f(c, DoubleType() if c.endswith("_kb") else LongType(), False) for c in ALL_COUNTERS]


APP_HOUR = StructType(
    [
        _f("app_id", StringType(), False),
        _f("job_id", StringType()),
        _f("fs", StringType(), False),
        _f("hour", TimestampType(), False),
        _f("user", StringType()),
        _f("exe", StringType()),
        _f("command", StringType()),
        _f("n_nodes", IntegerType()),
        _f("node_windows", LongType(), False),   # node x window cells summed into this row
    ]
    + _counters()
    + [_f(r, DoubleType(), False) for r in RISK_COLS]   # r_x = (x - alpha*mu)/sigma, raw sign
    + [
        _f("risk_oss", DoubleType(), False),      # sum of positive r_x over the OSS ops
        _f("risk_mds", DoubleType(), False),      # sum of positive r_x over the MDS op set
        _f("read_kb_ops", DoubleType()),          # read_ops*1024/read_kb; null if no data read
        _f("write_kb_ops", DoubleType()),
        DATE,
    ]
)

FS_HOUR = StructType(
    [_f("fs", StringType(), False), _f("hour", TimestampType(), False),
     _f("n_apps", LongType(), False)]
    + _counters()
    + [_f(r, DoubleType(), False) for r in RISK_COLS]   # sums of positive per-app risks
    + [
        _f("risk_oss", DoubleType(), False),
        _f("risk_mds", DoubleType(), False),
        _f("read_kb_ops", DoubleType()),
        _f("write_kb_ops", DoubleType()),
        DATE,
    ]
)

FS_BASELINE = StructType([
    _f("fs", StringType(), False),
    _f("op", StringType(), False),
    _f("mean", DoubleType()),
    _f("std", DoubleType()),            # sample standard deviation
    _f("rsd", DoubleType()),            # std / mean
    _f("n", LongType(), False),         # app_hour rows in the period
    _f("period_start", DateType(), False),
    _f("period_end", DateType(), False),
    DATE,
])

RUN_GROUP = StructType([
    _f("command", StringType(), False),
    _f("exe", StringType()),
    _f("user", StringType()),
    _f("n_runs", LongType(), False),
    _f("mean_runtime_s", DoubleType()),
    _f("std_runtime_s", DoubleType()),
    _f("n_slowed", LongType(), False),
    _f("corr_runtime_risk_oss", DoubleType()),   # Pearson r over the group's runs (Fig. 7)
    _f("corr_runtime_risk_mds", DoubleType()),
    _f("period_start", DateType(), False),
    _f("period_end", DateType(), False),
    DATE,
])

QUARANTINE = StructType([
    _f("source", StringType(), False),
    _f("file", StringType(), False),
    _f("line_no", IntegerType(), False),
    _f("raw", StringType()),
    _f("reason", StringType(), False),
    _f("ingested_at", TimestampType(), False),
    DATE,
])

INGEST_LOG = StructType([
    _f("source", StringType(), False),
    _f("files", IntegerType(), False),
    _f("lines_read", LongType(), False),
    _f("lines_used", LongType(), False),
    _f("lines_quarantined", LongType(), False),
    _f("rows", LongType(), False),
    _f("counter_resets", LongType(), False),
    _f("ingested_at", TimestampType(), False),
    DATE,
])

TABLES: dict[str, StructType] = {
    "raw_lustre_stats": RAW_LUSTRE_STATS,
    "node_window": NODE_WINDOW,
    "app_run": APP_RUN,
    "app_hour": APP_HOUR,
    "fs_hour": FS_HOUR,
    "fs_baseline": FS_BASELINE,
    "run_group": RUN_GROUP,
    "quarantine": QUARANTINE,
    "ingest_log": INGEST_LOG,
}


def schema_of(table: str) -> StructType:
    """The declared schema of a warehouse table; KeyError names unknown tables."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known: {', '.join(sorted(TABLES))}") from None


def without_date(schema: StructType) -> StructType:
    """The schema minus the partition column (what a parser produces)."""
    return StructType([f for f in schema.fields if f.name != "date"])
