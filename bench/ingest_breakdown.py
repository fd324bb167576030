"""`make bench` helper: where one Beacon layer's ingest time goes, step by step (issue #15).

Never a test: it prints figures and writes them to bench/results.json
(`ingest_rates.breakdown.<source>`). For one layer of a cached simulated day (default: the
4,096-node TaihuLight day of bench/taihulight_day.py), in one Spark session (`local[2]`):

  parse     the layer's parser over the day's files in this process alone: lines per CPU
            second (one core), no Spark
  to_jvm    the executors' parse shipped to the JVM as Arrow batches (`_wire`), written
            nowhere (`noop`)
  parquet   the same rows written as Parquet by Spark (no partitioning, no accounting)
  files     the executors write the rows' Parquet files themselves, per UTC day
            (lassi.ingest.parquet_sink: what ingest does into a local warehouse; a
            single small bin is parsed and written by the driver, `runner._written`)
  ingest    `ingest_source` end to end: partitioned atomic write, line accounting,
            quarantine, ingest_log and the forwarding/OST maps

Each Spark step runs twice; the second (warm) wall time is reported, with lines/s per core
(wall x 2 cores). The differences between the steps say what each adds.

Usage: python bench/ingest_breakdown.py [--day DIR (default: cached_days.cached_day)]
                                        [--sources lustre-client,ost,...]
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
DATE = dt.date(2018, 2, 25)
LAYERS = ("lwfs-client", "lwfs-server", "lustre-client", "ost", "mds")


def _tasks(raw: Path, source: str) -> list:
    from lassi.ingest.runner import beacon_tasks

    from lassi.core.textio import iter_files

    return beacon_tasks(list(iter_files([str(raw / "beacon" / source)])), DATE)


def _parse_only(site, source: str, tasks: list) -> tuple[int, float]:
    """(lines, CPU seconds) of the layer's parser over `tasks` in this process."""
    from lassi.ingest.runner import BEACON

    _, parse = BEACON[source]
    c0, lines = time.process_time(), 0
    for _rows, files in parse(tasks, site):
        lines += sum(st.lines_read for _, _, st in files)
    return lines, time.process_time() - c0


def _warm(step, repeats: int = 2) -> float:
    """Wall seconds of the last of `repeats` runs of `step()`."""
    for _ in range(repeats):
        t = time.time()
        step()
        wall = time.time() - t
    return wall


def measure(spark, site, raw: Path, source: str, scratch: Path) -> dict:
    """The five steps of one layer (see the module doc)."""
    from lassi.ingest.runner import BEACON, _wire, _written, ingest_source

    from lassi.core.warehouse import Warehouse

    table, parse = BEACON[source]
    tasks = _tasks(raw, source)
    lines, cpu = _parse_only(site, source, tasks)
    out = {"files": len(tasks), "lines": lines,
           "parse": {"cpu_s": round(cpu, 2), "lines_per_cpu_s": round(lines / cpu)}}

    def to_jvm() -> None:
        _wire(spark, site, table, parse, tasks).write.format("noop").mode("overwrite").save()

    def parquet() -> None:
        (_wire(spark, site, table, parse, tasks).filter("tag = 'r'").write.mode("overwrite")
         .parquet(str(scratch / "plain")))

    def files() -> None:
        from lassi.ingest.parquet_sink import ParquetFolder
        from pyspark.sql.types import TimestampType

        from lassi.core.schemas import schema_of

        shutil.rmtree(scratch / "files", ignore_errors=True)
        stamps = tuple(f.name for f in schema_of(table).fields
                       if isinstance(f.dataType, TimestampType))
        spec = ParquetFolder(str(scratch / "files"), "ts", stamps, "zstd")
        _written(spark, site, table, parse, tasks, spec, None)

    def ingest() -> None:
        shutil.rmtree(scratch / "wh", ignore_errors=True)
        ingest_source(spark, Warehouse(spark, str(scratch / "wh")), site, source,
                      [str(raw / "beacon" / source)], DATE)

    for name, step in (("to_jvm", to_jvm), ("parquet", parquet), ("files", files),
                       ("ingest", ingest)):
        wall = _warm(step)
        out[name] = {"wall_s": round(wall, 2), "per_core": round(lines / wall / CORES)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = day_parser(__doc__, LAYERS)
    args = ap.parse_args(argv)
    opened = bench_day(args.day, "lassi bench ingest breakdown", CORES)
    if opened is None:
        return 1
    raw, truth, site, spark = opened
    scratch = HERE / "cache" / "breakdown-scratch"
    results = {}
    print(f"{'source':<14} {'lines':>10} {'parse/cpu-s':>12} {'to_jvm/core':>12} "
          f"{'parquet/core':>13} {'files/core':>11} {'ingest/core':>12}   "
          f"(lines/s; warm; {truth['nodes']} nodes)",
          flush=True)
    for source in args.sources.split(","):
        m = measure(spark, site, raw, source, scratch)
        results[source] = {"nodes": truth["nodes"], **m}
        print(f"{source:<14} {m['lines']:>10,} {m['parse']['lines_per_cpu_s']:>12,} "
              f"{m['to_jvm']['per_core']:>12,} {m['parquet']['per_core']:>13,} "
              f"{m['files']['per_core']:>11,} {m['ingest']['per_core']:>12,}", flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"figures: {record(results, 'ingest_rates', 'breakdown')} (ingest_rates.breakdown)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
