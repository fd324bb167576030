"""`lassi run daily`: every analysis stage for one date, in order; each reads and writes tables."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator

from lassi.config import Site
from lassi.node_window import build_node_window
from lassi.warehouse import Warehouse


def run_daily(wh: Warehouse, site: Site, date: dt.date) -> Iterator[str]:
    """Run the stages that exist for `date`; yield one progress line per stage."""
    if not wh.has("raw_lustre_stats", date) and not wh.has("app_run", date):
        raise ValueError(f"nothing ingested for {date} in {wh.root} (run `lassi ingest` first)")
    stages = [("node_window", build_node_window)]
    for name, fn in stages:
        t0 = time.time()
        n = fn(wh, site, date)
        yield f"{name}: {n} rows for {date} ({time.time() - t0:.1f} s)"
