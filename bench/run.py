"""`make bench`: wall time of simulate, ingest and node_window for one ARCHER day.

Usage: python bench/run.py [NODES ...]   (default 256 1024). Prints figures; asserts nothing.
The full 4,920-node comparison with DuckDB/pandas arrives with issue #3.
"""

from __future__ import annotations

import datetime as dt
import resource
import sys
import tempfile
import time
from pathlib import Path

from ingest.runner import ingest_raw
from lassi.config import load_site
from lassi.node_window import build_node_window
from lassi.sim.runner import simulate
from lassi.spark import get_spark
from lassi.warehouse import Warehouse

DATE = dt.date(2017, 10, 10)


def bench(nodes: int, root: Path) -> None:
    site = load_site("archer", nodes=nodes)
    raw = root / f"raw{nodes}"
    t = time.time()
    res = simulate(site, DATE, 1, 1, raw)
    t_sim = time.time() - t
    wh = Warehouse(get_spark("lassi bench"), str(root / f"wh{nodes}"))
    t = time.time()
    stats = ingest_raw(wh.spark, wh, site, raw, DATE)
    t_ing = time.time() - t
    t = time.time()
    rows = build_node_window(wh, site, DATE)
    t_nw = time.time() - t
    lines = sum(s.lines_read for s in stats)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"nodes={nodes:5d} runs={res['runs']:5d} simulate={t_sim:6.1f}s "
          f"ingest={t_ing:6.1f}s ({lines / t_ing:,.0f} lines/s) node_window={t_nw:6.1f}s "
          f"rows={rows} driver_peak_rss={rss:,.0f} MiB")


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [256, 1024]
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            bench(n, Path(d))


if __name__ == "__main__":
    main()
