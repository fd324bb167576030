"""Ingest raw files into the warehouse: parse (in parallel for big sources), write, account.

`ingest_source` handles one source over files/directories; `ingest_raw` everything a
simulator or site collector wrote under one folder for one date. Every run reports
lines read = lines used + lines quarantined, writes the quarantine and an `ingest_log` row.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession

from ingest import alps, beacon_job, lustre_stats, pbs, slurm
from lassi.config import Site
from lassi.quarantine import ParseStats, Quarantined
from lassi.schemas import schema_of
from lassi.textio import iter_files
from lassi.warehouse import Warehouse

SCHEDULER = {"pbs": pbs, "slurm": slurm, "alps": alps, "beacon-job": beacon_job}
LATER = {
    "lmt": 6, "darshan": 6, "lfs-df": 6, "lctl-dl": 6, "lwfs-client": 4, "lwfs-server": 4,
    "lustre-client": 4, "ost": 4, "mds": 4,
}
SOURCES = ["lustre", *SCHEDULER, *LATER]


class IngestError(Exception):
    """A problem with the request itself (unknown source, no input), said in one line."""


def _progress(done: int, total: int, label: str) -> None:
    if total >= 20 and sys.stderr.isatty():
        bar = "#" * int(30 * done / total)
        print(f"\r{label} [{bar:<30}] {done}/{total} files", end="", file=sys.stderr)
        if done == total:
            print(file=sys.stderr)


def _q_rows(qs: list[Quarantined], date: dt.date, now: dt.datetime) -> list[tuple]:
    return [(q.source, q.file, q.line_no, q.raw, q.reason, now, date) for q in qs]


def _log_row(stats: ParseStats, date: dt.date, now: dt.datetime) -> tuple:
    return (stats.source, stats.files, stats.lines_read, stats.lines_used,
            stats.lines_quarantined, stats.rows, stats.counter_resets, now, date)


def _lustre_partition(files, nid_map: dict[str, str]):
    """Executor side: parse Lustre files, emit tagged rows, quarantine and stats."""
    fields = schema_of("raw_lustre_stats").fieldNames()[:-1]
    for f in files:
        server = Path(f).parent.name
        rows, qs, st = lustre_stats.parse_file(f, server=server, nid_map=nid_map)
        for r in rows:
            yield ("r", (*[r[k] for k in fields], r["snapshot_time"].date()))
        for q in qs:
            yield ("q", (q.source, q.file, q.line_no, q.raw, q.reason))
        yield ("s", (st.files, st.lines_read, st.lines_used, st.lines_quarantined, st.rows,
                     st.counter_resets))


def ingest_lustre(spark: SparkSession, wh: Warehouse, site: Site, files: list[Path],
                  date: dt.date) -> ParseStats:
    """Parse Lustre statistics files in parallel into `raw_lustre_stats`."""
    sc = spark.sparkContext
    nid_map = site.nid_map
    n = max(1, min(len(files), sc.defaultParallelism * 4))
    tagged = (sc.parallelize([str(f) for f in files], n)
              .mapPartitions(lambda it: _lustre_partition(it, nid_map))
              .persist())
    rows = spark.createDataFrame(tagged.filter(lambda x: x[0] == "r").map(lambda x: x[1]),
                                 schema_of("raw_lustre_stats"))
    wh.write(rows, "raw_lustre_stats")
    stats = ParseStats("lustre")
    for s in tagged.filter(lambda x: x[0] == "s").map(lambda x: x[1]).collect():  # one per file
        stats.add(ParseStats("lustre", *s))
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    qs = tagged.filter(lambda x: x[0] == "q").map(lambda x: (*x[1], now, date))
    _append_quarantine(spark, wh, spark.createDataFrame(qs, schema_of("quarantine")), date,
                       "lustre")
    tagged.unpersist()
    return stats


def replace_source_rows(wh: Warehouse, table: str, df, dates: list[dt.date],
                        source: str) -> None:
    """Replace `source`'s rows of `table` on `dates` by `df`, keeping other sources' rows.

    Tables shared by several sources (quarantine, ingest_log, app_run) are rewritten whole
    per date; the old rows are materialised first, detached from the files being replaced.
    """
    from pyspark.sql import functions as F

    old = wh.read(table, dates).filter(F.col("source") != source)
    wh.write(old.unionByName(df).localCheckpoint(), table, dates)


def _append_quarantine(spark, wh: Warehouse, df, date: dt.date, source: str) -> None:
    """Replace this source's quarantine rows of `date`."""
    replace_source_rows(wh, "quarantine", df, [date], source)


def _log(spark, wh: Warehouse, stats: ParseStats, date: dt.date) -> None:
    """Replace this source's ingest_log row of `date`."""
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    new = spark.createDataFrame([_log_row(stats, date, now)], schema_of("ingest_log"))
    replace_source_rows(wh, "ingest_log", new, [date], stats.source)


def ingest_scheduler(spark: SparkSession, wh: Warehouse, site: Site, source: str,
                     files: list[Path], date: dt.date | None, primary: set[Path] | None = None
                     ) -> ParseStats:
    """Parse scheduler records into `app_run` (rows partitioned by their start day).

    With `date`, only runs starting that day are written; `primary` (default: all files)
    names the files whose quarantined lines are kept — neighbouring days' files only
    complete launches that cross midnight.
    """
    mod = SCHEDULER[source]
    tz = site.tz(source.replace("-", "_") if source != "beacon-job" else "beacon_job")
    if hasattr(mod, "parse_files"):
        rows, qs, stats = mod.parse_files(files, tz=tz)
    else:
        rows, qs, stats = [], [], ParseStats(source)
        for i, f in enumerate(files, 1):
            r, q, s = mod.parse_file(f, tz=tz)
            rows += r
            qs += q
            stats.add(s)
            _progress(i, len(files), source)
    fields = schema_of("app_run").fieldNames()[:-1]
    out = []
    for r in rows:
        day = (r["start"] or r["end"]).date() if (r["start"] or r["end"]) else None
        if day is None or (date is not None and day != date):
            continue
        out.append((*[r.get(k) for k in fields], day))
    keep = {str(p) for p in (primary or files)}
    qs = [q for q in qs if q.file in keep]
    qdate = date or dt.datetime.now(dt.timezone.utc).date()
    df = spark.createDataFrame(out, schema_of("app_run"))
    dates = sorted({row[-1] for row in out} | ({date} if date else set()))
    replace_source_rows(wh, "app_run", df, dates, source)
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    _append_quarantine(spark, wh, spark.createDataFrame(_q_rows(qs, qdate, now),
                                                        schema_of("quarantine")), qdate, source)
    return stats


def ingest_source(spark: SparkSession, wh: Warehouse, site: Site, source: str,
                  inputs: list[str], date: dt.date | None = None) -> ParseStats:
    """Ingest one source from files or directories; returns the line accounting."""
    if source in LATER:
        raise IngestError(f"source {source!r} arrives with issue #{LATER[source]}; "
                          f"available now: lustre, {', '.join(SCHEDULER)}")
    if source not in SOURCES:
        raise IngestError(f"unknown source {source!r}; known: {', '.join(SOURCES)}")
    files = list(iter_files(inputs))
    if not files:
        raise IngestError(f"no input files under {' '.join(inputs)}")
    qdate = date or dt.datetime.now(dt.timezone.utc).date()
    if source == "lustre":
        stats = ingest_lustre(spark, wh, site, files, qdate)
    else:
        stats = ingest_scheduler(spark, wh, site, source, files, date)
    _log(spark, wh, stats, qdate)
    return stats


def _day_files(folder: Path, day: dt.date, fmt: Callable[[dt.date], str]) -> list[Path]:
    return sorted(p for p in folder.rglob(fmt(day) + "*") if p.is_file()) if folder.is_dir() else []


def ingest_raw(spark: SparkSession, wh: Warehouse, site: Site, raw: Path, date: dt.date
               ) -> list[ParseStats]:
    """Everything under a simulator/collector folder for one date (and the next day's
    first captures, which close the date's last window)."""
    raw = Path(raw)
    if not raw.is_dir():
        raise IngestError(f"no such raw folder: {raw}")
    day = lambda d: d.isoformat()  # noqa: E731
    nxt, prev = date + dt.timedelta(days=1), date - dt.timedelta(days=1)
    out = []
    lustre = _day_files(raw / "lustre", date, day) + _day_files(raw / "lustre", nxt, day)
    if lustre:
        out.append(ingest_source(spark, wh, site, "lustre", [str(p) for p in lustre], date))
    plan = [("pbs", raw / "pbs", lambda d: d.strftime("%Y%m%d")), ("alps", raw / "alps", day),
            ("slurm", raw / "slurm", day), ("beacon-job", raw / "beacon" / "jobs", day)]
    for source, folder, fmt in plan:
        main = _day_files(folder, date, fmt)
        if not main:
            continue
        ctx = _day_files(folder, prev, fmt) + main + _day_files(folder, nxt, fmt)
        stats = ingest_scheduler(spark, wh, site, source, ctx, date, primary=set(main))
        _log(spark, wh, stats, date)
        out.append(stats)
    if not out:
        raise IngestError(f"nothing for {date} under {raw}")
    return out
