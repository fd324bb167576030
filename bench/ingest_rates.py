"""`make bench`: ingest throughput per text source, against issue #15's 250k lines/s per core.

Never a test: it prints figures and PASS/FAIL and writes bench/ingest_results.json.

Two simulated days are cached under bench/cache/ingest/: an ARCHER day (Lustre export
statistics, PBS, ALPS, lfs df, lctl dl) and a TaihuLight day with full LWFS traces (the six
Beacon layers, lfs df, lctl dl). Every source is ingested through `ingest_source` into a
scratch warehouse twice in one Spark session: the first pass pays the JVM's and the Python
workers' warm-up, the second is the marginal rate a long-running ingest sees. Both are
printed: wall seconds, lines read, lines/s, and lines/s per core (wall x the cores Spark
had: `local[2]` here). CPU seconds of the JVM and workers are not split per source; the
wall figure is the conservative one.

Usage: python bench/ingest_rates.py [--archer-nodes 256] [--tl-nodes 64] [--fresh]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / "cache" / "ingest"
TARGET = 250_000            # lines/s per core, end to end (issue #15)
CORES = 2
DATE = {"archer": dt.date(2017, 10, 10), "taihulight": dt.date(2018, 2, 25)}


def raw_day(site_name: str, nodes: int, fresh: bool) -> Path:
    """The cached simulated day (simulated when missing): its raw folder."""
    from lassi.core.config import load_site
    from lassi.sim.runner import simulate

    raw = CACHE / f"{site_name}-{nodes}" / "raw"
    if fresh or not (raw / "truth.json").exists():
        shutil.rmtree(raw, ignore_errors=True)
        t = time.time()
        simulate(load_site(site_name, nodes=nodes), DATE[site_name], 1, 5, raw,
                 traced_fraction=1.0)
        print(f"simulated {site_name} {nodes} nodes in {time.time() - t:.0f} s", flush=True)
    return raw


def source_inputs(site_name: str, raw: Path) -> dict[str, list[str]]:
    """Per source, the files `lassi ingest --raw` would give it for the day."""
    d = DATE[site_name]
    day = d.isoformat()
    nxt = (d + dt.timedelta(days=1)).isoformat()

    def files(folder: Path, *stems: str) -> list[str]:
        return sorted(str(p) for s in stems for p in folder.rglob(f"{s}*") if p.is_file())

    out = {"lustre": files(raw / "lustre", day, nxt),
           "pbs": files(raw / "pbs", d.strftime("%Y%m%d")),
           "alps": files(raw / "alps", day),
           "beacon-job": files(raw / "beacon" / "jobs", day),
           "lfs-df": files(raw / "lfs-df", day), "lctl-dl": files(raw / "lctl-dl", day)}
    for layer in ("lwfs-client", "lwfs-server", "lustre-client", "ost", "mds"):
        out[layer] = files(raw / "beacon" / layer, day)
    return {k: v for k, v in out.items() if v}


def measure(spark, site, source: str, inputs: list[str], date: dt.date, scratch: Path) -> dict:
    """Two ingests of one source (cold, warm) into fresh scratch warehouses."""
    from lassi.ingest.runner import ingest_source

    from lassi.core.warehouse import Warehouse

    out = {}
    for label in ("cold", "warm"):
        shutil.rmtree(scratch, ignore_errors=True)
        wh = Warehouse(spark, str(scratch))
        t = time.time()
        st = ingest_source(spark, wh, site, source, inputs, date)
        wall = time.time() - t
        out[label] = {"wall_s": round(wall, 2), "lines": st.lines_read, "rows": st.rows,
                      "lines_per_s": round(st.lines_read / wall),
                      "per_core": round(st.lines_read / wall / CORES)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--archer-nodes", type=int, default=256)
    ap.add_argument("--tl-nodes", type=int, default=64)
    ap.add_argument("--fresh", action="store_true", help="simulate the days again")
    ap.add_argument("--sources", help="comma-separated sources to measure (default: all)")
    args = ap.parse_args(argv)
    from lassi.core.config import load_site
    from lassi.core.spark import get_spark

    spark = get_spark("lassi bench ingest", master=f"local[{CORES}]")
    results = {}
    print(f"{'source':<14} {'files':>5} {'lines':>11} {'cold s':>7} {'warm s':>7} "
          f"{'lines/s':>10} {'per core':>10}  target {TARGET:,}/core", flush=True)
    for site_name, nodes in (("archer", args.archer_nodes), ("taihulight", args.tl_nodes)):
        site = load_site(site_name, nodes=nodes)
        raw = raw_day(site_name, nodes, args.fresh)
        for source, inputs in source_inputs(site_name, raw).items():
            if args.sources and source not in args.sources.split(","):
                continue
            m = measure(spark, site, source, inputs, DATE[site_name],
                        CACHE / "scratch-warehouse")
            w = m["warm"]
            ok = "PASS" if w["per_core"] >= TARGET else "FAIL"
            print(f"{source:<14} {len(inputs):>5} {w['lines']:>11,} {m['cold']['wall_s']:>7.1f} "
                  f"{w['wall_s']:>7.1f} {w['lines_per_s']:>10,} {w['per_core']:>10,}  {ok}",
                  flush=True)
            results[f"{site_name}/{source}"] = {"files": len(inputs), **m, "pass": ok == "PASS"}
    shutil.rmtree(CACHE / "scratch-warehouse", ignore_errors=True)
    (HERE / "ingest_results.json").write_text(json.dumps(results, indent=1))
    print(f"figures: {HERE / 'ingest_results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
