"""`make bench`: a Beacon counter layer's ingest the day after its previous day, with the
delta seeds stored and without (issue #15).

Never a test: it prints figures and writes them to bench/results.json
(`ingest_rates.daily_seeds`).

The counter layers (`ost`, `lustre-client`, `mds`, `lwfs-server`) seed each series' first
delta of a day with the previous day's last sample of the same host's file. The other
ingest benches measure a day without a previous day; a site that ingests daily always has
one. For the 4,096-node TaihuLight day of bench/taihulight_day.py (cached by
bench/ingest_rates.py), this bench writes the previous day (the same files one day
earlier) beside links to the day's files, then, in one Spark session (`local[2]`), per
layer, twice each (the second, warm, is reported):

  parsed   the day ingested into a warehouse that never ingested the previous day: the
           previous day's files are parsed again for their seeds (as every ingest did
           before lassi.ingest.beacon_seeds)
  stored   the day ingested after the previous day: the seeds come from the store

Lines/s per core count the day's lines only (wall x 2 cores).

Usage: python bench/daily_seeds.py [--day DIR (default: cached_days.cached_day)]
                                   [--sources ost,mds,...]
"""

from __future__ import annotations

import datetime as dt
import shutil
import time
from pathlib import Path

from cached_days import bench_day, day_parser
from results_file import record

HERE = Path(__file__).resolve().parent
CORES = 2
DAY = dt.date(2018, 2, 25)
PREV = DAY - dt.timedelta(days=1)
LAYERS = ("lwfs-server", "lustre-client", "ost", "mds")


def two_days(day_raw: Path, out: Path, layer: str) -> list[Path]:
    """The layer's files of DAY (links) with their previous day's (DAY's text one day
    earlier) under `out`; the DAY files."""
    files = []
    for f in sorted((day_raw / "beacon" / layer).glob(f"*/{DAY}.log")):
        host = out / "beacon" / layer / f.parent.name
        host.mkdir(parents=True, exist_ok=True)
        link, prev = host / f.name, host / f"{PREV}.log"
        if not link.exists():
            link.symlink_to(f.resolve())
        if not prev.exists():
            text = f.read_bytes()
            for k in (-1, 0, 1):            # every date one day earlier, oldest first
                text = text.replace(str(DAY + dt.timedelta(days=k)).encode(),
                                    str(DAY + dt.timedelta(days=k - 1)).encode())
            tmp = prev.with_suffix(".tmp")
            tmp.write_bytes(text)
            tmp.rename(prev)
        files.append(link)
    return files


def measure(spark, site, layer: str, files: list[Path], scratch: Path) -> dict:
    """Warm wall seconds of the day's ingest, seeds parsed and seeds stored."""
    from lassi.ingest.runner import ingest_source

    from lassi.core.warehouse import Warehouse

    def ingest(wh: Warehouse, date: dt.date, inputs: list[str]):
        t = time.time()
        st = ingest_source(spark, wh, site, layer, inputs, date)
        return time.time() - t, st

    day_files = [str(f) for f in files]
    prev_files = [str(f.parent / f"{PREV}.log") for f in files]
    out = {}
    for label in ("parsed", "stored"):
        for _ in range(2):
            shutil.rmtree(scratch, ignore_errors=True)
            wh = Warehouse(spark, str(scratch))
            if label == "stored":
                ingest(wh, PREV, prev_files)
            wall, st = ingest(wh, DAY, day_files)
        out[label] = {"wall_s": round(wall, 2), "per_core": round(st.lines_read / wall / CORES)}
        out["lines"] = st.lines_read
    return out


def main(argv: list[str] | None = None) -> int:
    ap = day_parser(__doc__, LAYERS)
    args = ap.parse_args(argv)
    opened = bench_day(args.day, "lassi bench daily seeds", CORES)
    if opened is None:
        return 1
    raw, truth, site, spark = opened
    work = HERE / "cache" / "daily-seeds"
    results = {}
    print(f"{'source':<14} {'files':>5} {'lines':>10} {'parsed s':>9} {'stored s':>9} "
          f"{'parsed/core':>12} {'stored/core':>12}   (warm; {truth['nodes']} nodes, "
          f"the day after its previous day)", flush=True)
    for layer in args.sources.split(","):
        files = two_days(raw, work / "raw", layer)
        m = measure(spark, site, layer, files, work / "wh")
        results[layer] = {"nodes": truth["nodes"], "files": len(files), **m}
        print(f"{layer:<14} {len(files):>5} {m['lines']:>10,} {m['parsed']['wall_s']:>9.2f} "
              f"{m['stored']['wall_s']:>9.2f} {m['parsed']['per_core']:>12,} "
              f"{m['stored']['per_core']:>12,}", flush=True)
    shutil.rmtree(work / "wh", ignore_errors=True)
    print(f"figures: {record(results, 'ingest_rates', 'daily_seeds')} (ingest_rates.daily_seeds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
