"""`lassi run daily`: every analysis stage for one date, in order; each reads and writes tables.

Every stage is idempotent per date (it rewrites its own partitions from its inputs), so the
daily Airflow DAG may retry or backfill any of them. `STAGES` is the order; each entry is
"module:function" imported only when the stage runs, with the signature
`fn(wh, site, date) -> int | str` (rows written, or a one-line summary). `FAMILIES` groups
them by the system they come from.
"""

from __future__ import annotations

import datetime as dt
import importlib
import time
from collections.abc import Iterator

from lassi.core.config import Site
from lassi.core.warehouse import Warehouse

STAGES: dict[str, str] = {
    "node_window": "lassi.risk.node_window:build_node_window",
    "job_window": "lassi.risk.job_window:build_job_window",
    "app_hour": "lassi.risk.metrics:build_app_hour",
    "fs_hour": "lassi.risk.metrics:build_fs_hour",
    "slowdown": "lassi.risk.slowdown:build_run_metrics",
    "trace_merged": "lassi.beacon.trace_merge:build_trace_merged",
    "job_profile": "lassi.beacon.job_profile:build_job_profile",
    "io_phase": "lassi.beacon.io_phase:build_io_phase",
    "component_anomaly": "lassi.beacon.components:build_component_anomaly",
    "alerts": "lassi.beacon.alerts:build_alerts",
    "interference": "lassi.beacon.interference:build_interference",
    "system_views": "lassi.beacon.system_views:build_system_views",
    "job_metrics": "lassi.tokio.job_metrics:build_job_metrics",
    "io_path": "lassi.siox.path_model:build_io_path",
    "component_baseline": "lassi.siox.knowledge:build_component_baseline",
    "job_path": "lassi.siox.job_path:build_job_path",
    "job_diagnosis": "lassi.siox.diagnosis:build_job_diagnosis",
}


def _families() -> dict[str, list[str]]:
    """Stage family (risk, beacon, tokio, siox: the module's subpackage) -> its stages, in
    order; the families are contiguous in STAGES."""
    out: dict[str, list[str]] = {}
    for name, target in STAGES.items():
        out.setdefault(target.split(".")[1], []).append(name)
    return out


# One daily Airflow task per family (`lassi run daily --family NAME`): a JVM per family, not
# per stage, and the task graph shows the four systems.
FAMILIES: dict[str, list[str]] = _families()


def stage_fn(name: str):
    """The callable of stage `name` (ValueError names the known stages)."""
    if name not in STAGES:
        raise ValueError(f"unknown stage {name!r}; known: {', '.join(STAGES)}")
    module, fn = STAGES[name].split(":")
    return getattr(importlib.import_module(module), fn)


def run_daily(wh: Warehouse, site: Site, date: dt.date,
              stages: list[str] | None = None) -> Iterator[str]:
    """Run `stages` (default: all, in order) for `date`; yield one progress line per stage."""
    if not wh.has("raw_lustre_stats", date) and not wh.has("app_run", date):
        raise ValueError(f"nothing ingested for {date} in {wh.root} (run `lassi ingest` first)")
    for name in stages or list(STAGES):
        fn = stage_fn(name)
        t0 = time.time()
        n = fn(wh, site, date)
        what = n if isinstance(n, str) else f"{n} rows"
        yield f"{name}: {what} for {date} ({time.time() - t0:.1f} s)"
