"""Every warehouse table: its schema (declared once, per family in this package; nothing is
inferred) and where it is built, so a table's producer is one hop away.

The partition column `date` (UTC day, DateType) is part of every table and listed last.
Column names are the contract in DESIGN.md. `REGISTRY[name].producer` is the module (and
function) that writes the table; `.sql` the file under `sql/` holding its final query, when
there is one (intermediate steps live in `sql/<family>/steps/`).
"""

from __future__ import annotations

from typing import NamedTuple

from pyspark.sql.types import StructType

from lassi.core.schemas.beacon import (
    ALERT,
    ANOMALY,
    COMPONENT_ANOMALY,
    INTERFERENCE,
    IO_PHASE,
    JOB_SUMMARY,
    JOB_TIMESERIES,
    TRACE_COMPRESSION,
    TRACE_MERGED,
    VIEW_FWD_LOAD,
    VIEW_IO_MODE,
    VIEW_LAYER_VOLUME,
    VIEW_MDS_SOURCE,
    VIEW_OST_UTIL,
    VIEW_TABLES,
)
from lassi.core.schemas.common import (
    ALL_COUNTERS,
    BEACON_MDS_OPS,
    DARSHAN_SIZE_EDGES,
    LATENCY_BUCKETS,
    MDS_COUNTERS,
    MDS_OP_NAMES,
    OSS_COUNTERS,
    OSS_OTHER_OPS,
    REQUEST_SIZE_EDGES,
    REQUEST_SIZE_LABELS,
    RISK_COLS,
)
from lassi.core.schemas.raw import (
    APP_RUN,
    DARSHAN_FILE,
    DARSHAN_JOB,
    DATA_CHECK,
    FWD_MAP,
    INGEST_LOG,
    LMT_MDS,
    LMT_OST,
    OST_HEALTH,
    OST_MAP,
    QUARANTINE,
    RAW_LUSTRE_CLIENT,
    RAW_LUSTRE_STATS,
    RAW_LWFS_SERVER,
    RAW_LWFS_TRACE,
    RAW_MDS,
    RAW_OST,
)
from lassi.core.schemas.risk import (
    APP_HOUR,
    FS_BASELINE,
    FS_HOUR,
    JOB_WINDOW,
    NODE_WINDOW,
    RUN_GROUP,
    RUN_SLOWDOWN,
)
from lassi.core.schemas.siox import (
    COMPONENT_BASELINE,
    COMPONENT_MINUTE,
    COMPONENT_PINPOINT,
    JOB_DIAGNOSIS,
    JOB_PATH,
    LOAD_CLASSES,
    PATH_COMPONENT,
    PATH_EDGE,
    UTIL_CLASSES,
)
from lassi.core.schemas.tokio import JOB_METRICS


class Table(NamedTuple):
    """A warehouse table: schema, family, the module[:function] that writes it, its SQL."""

    schema: StructType
    family: str
    producer: str
    sql: str | None = None


_INGEST = "lassi.ingest.runner:ingest_source"
_B = "lassi.beacon"
_S = "lassi.siox"

REGISTRY: dict[str, Table] = {
    # ingest: raw files -> Parquet (lassi ingest; one parser per format under lassi.ingest)
    "raw_lustre_stats": Table(RAW_LUSTRE_STATS, "ingest", _INGEST + " (lustre_stats)"),
    "app_run": Table(APP_RUN, "ingest", _INGEST + " (pbs, slurm, alps, beacon_job)"),
    "quarantine": Table(QUARANTINE, "ingest", _INGEST + " (every parser)"),
    "ingest_log": Table(INGEST_LOG, "ingest", _INGEST),
    "data_check": Table(DATA_CHECK, "ingest", "lassi.ingest.data_checks:run_checks"),
    "raw_lwfs_trace": Table(RAW_LWFS_TRACE, "ingest", _INGEST + " (lwfs_client)"),
    "raw_lwfs_server": Table(RAW_LWFS_SERVER, "ingest", _INGEST + " (lwfs_server)"),
    "raw_lustre_client": Table(RAW_LUSTRE_CLIENT, "ingest", _INGEST + " (beacon_layers)"),
    "raw_ost": Table(RAW_OST, "ingest", _INGEST + " (beacon_layers)"),
    "raw_mds": Table(RAW_MDS, "ingest", _INGEST + " (beacon_layers)"),
    "fwd_map": Table(FWD_MAP, "ingest", "lassi.ingest.beacon_maps:map_tables"),
    "ost_map": Table(OST_MAP, "ingest", "lassi.ingest.beacon_maps:map_tables"),
    "darshan_job": Table(DARSHAN_JOB, "ingest", _INGEST + " (darshan)"),
    "darshan_file": Table(DARSHAN_FILE, "ingest", _INGEST + " (darshan)"),
    "lmt_ost": Table(LMT_OST, "ingest", _INGEST + " (lmt)"),
    "lmt_mds": Table(LMT_MDS, "ingest", _INGEST + " (lmt)"),
    "ost_health": Table(OST_HEALTH, "ingest", _INGEST + " (lfs_df, lctl_dl)"),
    # risk (LASSi)
    "node_window": Table(NODE_WINDOW, "risk", "lassi.risk.node_window:build_node_window",
                         "risk/node_window.sql"),
    # job_window's SQL is node_window's, with key job_id (lassi.core.captures.job_windows)
    "job_window": Table(JOB_WINDOW, "risk", "lassi.risk.job_window:build_job_window "
                        "(sql/risk/node_window.sql, key job_id)"),
    "app_hour": Table(APP_HOUR, "risk", "lassi.risk.metrics:build_app_hour", "risk/app_hour.sql"),
    "fs_baseline": Table(FS_BASELINE, "risk", "lassi.risk.metrics:build_app_hour",
                         "risk/fs_baseline.sql"),
    "fs_hour": Table(FS_HOUR, "risk", "lassi.risk.metrics:build_fs_hour", "risk/fs_hour.sql"),
    "run_slowdown": Table(RUN_SLOWDOWN, "risk", "lassi.risk.slowdown:build_run_metrics",
                          "risk/run_slowdown.sql"),
    "run_group": Table(RUN_GROUP, "risk", "lassi.risk.slowdown:build_run_metrics",
                       "risk/run_group.sql"),
    # beacon
    "trace_merged": Table(TRACE_MERGED, "beacon", f"{_B}.trace_merge:build_trace_merged",
                          "beacon/trace_merged.sql"),
    "trace_compression": Table(TRACE_COMPRESSION, "beacon",
                               f"{_B}.trace_merge:build_trace_merged",
                               "beacon/trace_compression.sql"),
    "job_timeseries": Table(JOB_TIMESERIES, "beacon", f"{_B}.job_profile:build_job_profile",
                            "beacon/job_timeseries.sql"),
    "job_summary": Table(JOB_SUMMARY, "beacon", f"{_B}.job_profile:build_job_profile",
                         "beacon/job_summary.sql"),
    **{name: Table(schema, "beacon", f"{_B}.system_views:build_system_views",
                   f"beacon/{name}.sql") for name, schema in VIEW_TABLES.items()},
    "component_anomaly": Table(COMPONENT_ANOMALY, "beacon",
                               f"{_B}.components:build_component_anomaly"),
    "alert": Table(ALERT, "beacon", f"{_B}.alerts:build_alerts"),
    "io_phase": Table(IO_PHASE, "beacon", f"{_B}.io_phase:build_io_phase"),
    "anomaly": Table(ANOMALY, "beacon", f"{_B}.io_phase:build_io_phase"),
    "interference": Table(INTERFERENCE, "beacon", f"{_B}.interference:build_interference",
                          "beacon/interference.sql"),
    # tokio
    "job_metrics": Table(JOB_METRICS, "tokio", "lassi.tokio.job_metrics:build_job_metrics",
                         "tokio/job_metrics.sql"),
    # siox
    "path_component": Table(PATH_COMPONENT, "siox", f"{_S}.path_model:build_io_path",
                            "siox/path_component.sql"),
    "path_edge": Table(PATH_EDGE, "siox", f"{_S}.path_model:build_io_path", "siox/path_edge.sql"),
    "component_minute": Table(COMPONENT_MINUTE, "siox",
                              f"{_S}.knowledge:build_component_baseline",
                              "siox/component_minute.sql"),
    "component_baseline": Table(COMPONENT_BASELINE, "siox",
                                f"{_S}.knowledge:build_component_baseline",
                                "siox/component_baseline.sql"),
    "component_pinpoint": Table(COMPONENT_PINPOINT, "siox", f"{_S}.job_path:build_job_path"),
    "job_path": Table(JOB_PATH, "siox", f"{_S}.job_path:build_job_path", "siox/job_path.sql"),
    "job_diagnosis": Table(JOB_DIAGNOSIS, "siox", f"{_S}.diagnosis:build_job_diagnosis",
                           "siox/job_diagnosis.sql"),
}

TABLES: dict[str, StructType] = {name: t.schema for name, t in REGISTRY.items()}


def schema_of(table: str) -> StructType:
    """The declared schema of a warehouse table; KeyError names unknown tables."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known: {', '.join(sorted(TABLES))}") from None


def without_date(schema: StructType) -> StructType:
    """The schema minus the partition column (what a parser produces)."""
    return StructType([f for f in schema.fields if f.name != "date"])


__all__ = [
    "ALERT", "ALL_COUNTERS", "ANOMALY", "APP_HOUR", "APP_RUN", "BEACON_MDS_OPS",
    "COMPONENT_ANOMALY", "COMPONENT_BASELINE", "COMPONENT_MINUTE", "COMPONENT_PINPOINT",
    "JOB_DIAGNOSIS", "JOB_PATH", "LOAD_CLASSES", "UTIL_CLASSES", "PATH_COMPONENT",
    "PATH_EDGE", "DARSHAN_FILE", "DARSHAN_JOB", "FS_BASELINE", "FS_HOUR", "FWD_MAP",
    "INGEST_LOG", "INTERFERENCE", "IO_PHASE", "JOB_METRICS", "JOB_SUMMARY", "JOB_TIMESERIES",
    "LATENCY_BUCKETS", "LMT_MDS", "LMT_OST", "MDS_COUNTERS", "MDS_OP_NAMES", "NODE_WINDOW",
    "OSS_COUNTERS", "OSS_OTHER_OPS", "OST_HEALTH", "OST_MAP", "QUARANTINE", "RAW_LUSTRE_CLIENT",
    "RAW_LUSTRE_STATS", "RAW_LWFS_SERVER", "RAW_LWFS_TRACE", "RAW_MDS", "RAW_OST",
    "REQUEST_SIZE_EDGES", "REQUEST_SIZE_LABELS", "DARSHAN_SIZE_EDGES", "RISK_COLS",
    "RUN_GROUP", "RUN_SLOWDOWN",
    "TRACE_COMPRESSION",
    "TRACE_MERGED", "VIEW_FWD_LOAD", "VIEW_IO_MODE", "VIEW_LAYER_VOLUME", "VIEW_MDS_SOURCE",
    "VIEW_OST_UTIL", "VIEW_TABLES", "REGISTRY", "TABLES", "Table", "schema_of", "without_date",
]
