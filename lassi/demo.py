"""`lassi demo` / `make demo`: a small simulated site-day through the whole pipeline."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

from lassi.config import load_site


def demo(site_name: str, nodes: int, date: dt.date, seed: int, root: Path) -> Iterator[str]:
    """Simulate, ingest, run the daily stages; yield what happened and where it is."""
    from ingest.runner import ingest_raw
    from lassi.daily import run_daily
    from lassi.sim.runner import simulate
    from lassi.spark import get_spark
    from lassi.warehouse import Warehouse

    site = load_site(site_name, nodes=nodes)
    raw, wh_root = root / "raw" / site.name, root / "warehouse"
    if not (raw / "truth.json").exists():
        res = simulate(site, date, 1, seed, raw)
        yield f"simulated {res['runs']} runs on {nodes} {site.name} nodes -> {raw}"
    else:
        yield f"reusing simulated raw files in {raw}"
    wh = Warehouse(get_spark("lassi demo"), str(wh_root.resolve()))
    for st in ingest_raw(wh.spark, wh, site, raw, date):
        yield "ingest " + st.summary()
    yield from run_daily(wh, site, date)
    from lassi.report.daily import write_daily_report

    index = write_daily_report(wh, site, date, date, root / "report")
    yield f"warehouse: {wh_root.resolve()}  (tables: {', '.join(sorted(_tables(wh_root)))})"
    yield (f"query it: lassi sql --warehouse {wh_root} "
           f"\"SELECT exe, user, max(risk_oss), max(risk_mds) FROM app_hour GROUP BY 1, 2 "
           f"ORDER BY 4 DESC LIMIT 5\"")
    yield f"daily report: {index.resolve()}"


def _tables(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("_")]
