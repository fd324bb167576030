"""`make bench`: the Beacon server-side layers at ten times the bench day's servers
(issue #15).

Never a test: it prints figures and writes them to bench/results.json
(`ingest_rates.layers_scale`).

On the 4,096-node TaihuLight day the server-side layers are small: 8 LWFS server files
(483,840 lines), 15 OST files (388,800) and one MDS file (81,526), so an ingest's fixed
cost (the Spark job, the commit and the log writes: ~0.4 s) is half of its time. The
whole machine is ten times that day: ten times the forwarding nodes, and a file system
that serves it has more OSS and MDS servers. This bench gives each layer COPIES times its
servers (hard links to the day's files under numbered host folders: one file and one set
of series per server) and ingests each twice in one Spark session (`local[2]`), printing
the warm wall time and lines/s per core (wall x 2 cores), with the bench day's own
figure beside it.

Usage: python bench/layers_scale.py [--day DIR (default: cached_days.cached_day)]
                                    [--copies 10] [--sources ost,mds,lwfs-server]
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from pathlib import Path

from cached_days import bench_day, day_parser
from results_file import record

HERE = Path(__file__).resolve().parent
CORES = 2
DAY = dt.date(2018, 2, 25)
LAYERS = ("lwfs-server", "ost", "mds")


def servers(day_raw: Path, out: Path, layer: str, copies: int) -> Path:
    """The layer's folder with `copies` x its hosts (hard links to the day's files, made
    afresh: no copies of an earlier run with another count)."""
    folder = out / "beacon" / layer
    shutil.rmtree(folder, ignore_errors=True)
    for f in sorted((day_raw / "beacon" / layer).glob(f"*/{DAY}.log")):
        for k in range(copies):
            host = folder / f"{f.parent.name}-{k:02d}"
            host.mkdir(parents=True, exist_ok=True)
            os.link(f, host / f.name)
    return folder


def warm(spark, site, layer: str, inputs: list[str], scratch: Path) -> tuple[float, int]:
    """(wall seconds, lines) of the second of two ingests into fresh warehouses."""
    from lassi.ingest.runner import ingest_source

    from lassi.core.warehouse import Warehouse

    for _ in range(2):
        shutil.rmtree(scratch, ignore_errors=True)
        t = time.time()
        st = ingest_source(spark, Warehouse(spark, str(scratch)), site, layer, inputs, DAY)
        wall = time.time() - t
    return wall, st.lines_read


def main(argv: list[str] | None = None) -> int:
    ap = day_parser(__doc__, LAYERS)
    ap.add_argument("--copies", type=int, default=10)
    args = ap.parse_args(argv)
    opened = bench_day(args.day, "lassi bench layers at scale", CORES)
    if opened is None:
        return 1
    raw, truth, site, spark = opened
    work = HERE / "cache" / "layers-scale"
    results = {}
    print(f"{'source':<12} {'files':>6} {'lines':>11} {'wall s':>7} {'per core':>9}   "
          f"{'day files':>9} {'lines':>9} {'wall s':>7} {'per core':>9}   (warm)", flush=True)
    for layer in args.sources.split(","):
        day_wall, day_lines = warm(spark, site, layer, [str(raw / "beacon" / layer)],
                                   work / "wh")
        folder = servers(raw, work / "raw", layer, args.copies)
        wall, lines = warm(spark, site, layer, [str(folder)], work / "wh")
        files = len(list(folder.glob(f"*/{DAY}.log")))
        results[layer] = {
            "copies": args.copies, "files": files, "lines": lines, "wall_s": round(wall, 2),
            "per_core": round(lines / wall / CORES),
            "day": {"lines": day_lines, "wall_s": round(day_wall, 2),
                    "per_core": round(day_lines / day_wall / CORES)}}
        d = results[layer]["day"]
        print(f"{layer:<12} {files:>6} {lines:>11,} {wall:>7.2f} "
              f"{results[layer]['per_core']:>9,}   {files // args.copies:>9} "
              f"{day_lines:>9,} {day_wall:>7.2f} {d['per_core']:>9,}", flush=True)
    shutil.rmtree(work / "wh", ignore_errors=True)
    print(f"figures: {record(results, 'ingest_rates', 'layers_scale')} "
          f"(ingest_rates.layers_scale)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
