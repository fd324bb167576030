"""`lassi demo` / `make demo`: a small simulated site-day through the whole pipeline."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from pathlib import Path

from lassi.core.config import load_site

# the simulated day of each site when --date is not given (the papers' periods)
DEFAULT_DATES = {"archer": dt.date(2017, 10, 10), "taihulight": dt.date(2018, 2, 25)}


def demo(site_name: str, nodes: int, date: dt.date | None, seed: int, root: Path
         ) -> Iterator[str]:
    """Simulate, ingest, run the daily stages; yield what happened and where it is.

    Each site gets its own warehouse (`<root>/warehouse/<site>`); a forwarding site traces
    every job (Beacon's per-job profiles need the LWFS client trace); a Lustre-capture
    site's servers print both export statistics and job_stats (node_window and job_window).
    """
    from pyspark.sql import functions as F

    from lassi.core.spark import get_spark
    from lassi.core.warehouse import Warehouse
    from lassi.ingest.runner import ingest_raw
    from lassi.pipeline.daily import run_daily
    from lassi.sim.runner import simulate

    site = load_site(site_name, nodes=nodes)
    date = date or DEFAULT_DATES.get(site.name, DEFAULT_DATES["archer"])
    raw, wh_root = root / "raw" / site.name, root / "warehouse" / site.name
    if not (raw / "truth.json").exists():
        shutil.rmtree(raw, ignore_errors=True)     # what an interrupted simulation left
        res = simulate(site, date, 1, seed, raw,
                       traced_fraction=1.0 if site.has_forwarding else 0.1,
                       lustre_stats="exports" if site.has_forwarding else "both")
        yield f"simulated {res['runs']} runs on {nodes} {site.name} nodes -> {raw}"
    else:
        yield f"reusing simulated raw files in {raw}"
    wh = Warehouse(get_spark("lassi demo"), str(wh_root.resolve()))
    wh.lock_writes("lassi demo")
    try:
        warnings: list[str] = []
        for st in ingest_raw(wh.spark, wh, site, raw, date, warn=warnings.append):
            yield "ingest " + st.summary()
        yield from warnings
        yield from run_daily(wh, site, date)
        from lassi.report.daily import write_daily_report

        index = write_daily_report(wh, site, date, date, root / "report")
        yield f"warehouse: {wh_root.resolve()}  (tables: {', '.join(sorted(_tables(wh_root)))})"
        if site.has_forwarding:
            yield (f"query it: lassi sql --warehouse {wh_root} \"SELECT io_mode, count(*), "
                   f"sum(read_bytes + write_bytes) / 1e9 AS gb FROM job_summary GROUP BY 1\"")
        else:
            yield (f"query it: lassi sql --warehouse {wh_root} "
                   f"\"SELECT exe, user, max(risk_oss), max(risk_mds) FROM app_hour GROUP BY 1, 2 "
                   f"ORDER BY 4 DESC LIMIT 5\"")
        job = (wh.read("job_metrics", date).filter(F.col("perf_mibs") > 0)
               .orderBy("perf_mibs").select("job_id").first())
        if job is not None:
            yield (f"one job, all layers: lassi summarize-job {job.job_id} --site {site.name} "
                   f"--warehouse {wh_root}; lassi umami {job.job_id} ...")
        slow = (wh.read("job_diagnosis", date).orderBy(F.desc("job_lost_s"), "job_id")
                .select("job_id").first())
        if slow is not None:
            yield (f"why was it slow: lassi why {slow.job_id} --site {site.name} "
                   f"--warehouse {wh_root} [--json] [--html why.html]")
        yield f"daily report: {index.resolve()}"
    finally:
        wh.release_writes()


def _tables(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("_")]
