"""The one writer of ingest results (`lassi.ingest.contract`) into the warehouse.

Every table write goes through `Warehouse`, atomically per date partition: `write`
(Spark DataFrames), `write_rows` (rows made on the driver: no Spark job into a local
warehouse) or `write_files` (the executors' own Parquet files, `ExecutorRows`) for a
whole-partition replace, `replace_rows`/`replace_with_rows` when only some rows of the
partitions are replaced (one source's, one Darshan log's, one LMT window's; the others are
kept). After the tables,
the source's quarantine rows and its `ingest_log` row of the ingest date are replaced, so a
rerun of the same input changes nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from lassi.ingest.contract import (
    ExecutorRows,
    IngestResult,
    LogRows,
    SourceRows,
    TableRows,
    WholePartitions,
    WindowRows,
)

from lassi.core.frames import local_frame
from lassi.core.quarantine import QUARANTINED_FIELDS, ParseStats, Quarantined, quarantine_rows
from lassi.core.schemas import schema_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from lassi.core.warehouse import Warehouse


def utc_now() -> dt.datetime:
    """Now, naive UTC (the `ingested_at` of quarantine and ingest_log rows)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def ingest_day(date: dt.date | None) -> dt.date:
    """The partition of an ingest's quarantine and ingest_log rows: `date`, else today (UTC)."""
    return date or dt.datetime.now(dt.timezone.utc).date()


# --- rows -> Spark ------------------------------------------------------------------------------
def _py(v: Any) -> Any:
    """A pandas cell as the Python value Spark takes (NA -> None, numpy scalars unwrapped)."""
    import numpy as np
    import pandas as pd

    if isinstance(v, (list, tuple, dict)):
        return v
    if isinstance(v, np.ndarray):
        return v.tolist()
    if pd.isna(v):
        return None
    if isinstance(v, pd.Timestamp):
        return v.to_pydatetime()
    if isinstance(v, np.generic):
        return v.item()
    return v


def local_rows(table: str, rows: Any) -> list:
    """A table's driver-side rows (tuples in schema order, or a pandas DataFrame with the
    schema's columns) as tuples in schema order; an Arrow table is passed on as it is."""
    if isinstance(rows, pa.Table):
        return rows
    if not hasattr(rows, "itertuples"):
        return list(rows)
    names = schema_of(table).fieldNames()
    missing = [c for c in names if c not in rows.columns]
    if missing:
        raise ValueError(f"{table}: rows lack columns {missing}")
    return [tuple(_py(v) for v in r) for r in rows[names].itertuples(index=False, name=None)]


def _where(replace) -> Column:
    """The rows of the owned partitions that `replace` names."""
    from pyspark.sql import functions as F

    if isinstance(replace, SourceRows):
        return F.col("source").isin(list(replace.sources))
    if isinstance(replace, LogRows):
        base = F.regexp_extract(F.col("log_path"), r"([^/\\]*)$", 1)
        return base.isin(sorted(replace.names))
    if isinstance(replace, WindowRows):
        return (F.col("fs").isin(list(replace.filesystems)) & (F.col("ts") >= F.lit(replace.start))
                & (F.col("ts") < F.lit(replace.end)))
    raise TypeError(f"not a partial replace: {replace!r}")


# --- tables -------------------------------------------------------------------------------------
def write_table(wh: Warehouse, t: TableRows) -> list[dt.date]:
    """Write one table's rows; returns the date partitions written."""
    if isinstance(t.rows, ExecutorRows):
        if not isinstance(t.replace, WholePartitions):
            raise ValueError(f"{t.table}: executors' rows replace whole partitions only")
        if wh.local is not None:
            return wh.write_files(t.rows.write_files, t.table, t.dates)
        return wh.write(t.rows.frame(), t.table, t.dates)
    from pyspark.sql import DataFrame

    spark_rows = isinstance(t.rows, DataFrame)
    if isinstance(t.replace, WholePartitions):
        if spark_rows:
            return wh.write(t.rows, t.table, t.dates)
        return wh.write_rows(local_rows(t.table, t.rows), t.table, t.dates)
    if not t.dates:
        return []
    if spark_rows:
        return wh.replace_rows(t.rows, t.table, t.dates, _where(t.replace))
    return wh.replace_with_rows(local_rows(t.table, t.rows), t.table, t.dates,
                                lambda: _where(t.replace))


def write_tables(wh: Warehouse, tables: Iterable[TableRows]) -> list[dt.date]:
    """Write tables in order; returns every date partition written."""
    out: set[dt.date] = set()
    for t in tables:
        out |= set(write_table(wh, t))
    return sorted(out)


# --- quarantine and ingest_log -------------------------------------------------------------------
def quarantine_frame(spark: SparkSession, parts: Iterable[Any], date: dt.date,
                     now: dt.datetime) -> DataFrame:
    """`quarantine` rows of `date` from lists of `Quarantined` and/or Spark DataFrames of
    their five fields (executor-side parsers), all ingested at `now`."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    listed: list[Quarantined] = []
    frames: list[DataFrame] = []
    for p in parts:
        if isinstance(p, DataFrame):
            frames.append(p.select(*QUARANTINED_FIELDS, F.lit(now).alias("ingested_at"),
                                   F.lit(date).alias("date")))
        else:
            listed += list(p)
    out = None
    if listed or not frames:
        out = local_frame(spark, quarantine_rows(listed, date, now), schema_of("quarantine"))
    for f in frames:
        out = f if out is None else out.unionByName(f)
    return out


def write_quarantine(wh: Warehouse, parts: Iterable[Any], date: dt.date, sources: list[str],
                     now: dt.datetime | None = None) -> None:
    """Replace the quarantine rows of `sources` on `date` by these (see `quarantine_frame`).
    Nothing quarantined and no quarantine yet on `date`: nothing to replace, no Spark job."""
    parts = list(parts)
    listed = all(isinstance(p, (list, tuple)) for p in parts)
    if listed and not any(parts) and not wh.has("quarantine", date):
        return
    def where() -> Column:
        return _where(SourceRows(tuple(sources)))

    if listed:                                   # rows on the driver: no Spark job to make
        rows = quarantine_rows([q for p in parts for q in p], date, now or utc_now())
        wh.replace_with_rows(rows, "quarantine", [date], where)
        return
    df = quarantine_frame(wh.spark, parts, date, now or utc_now())
    wh.replace_rows(df, "quarantine", [date], where())


def merge_quarantine(wh: Warehouse, qs: list[Quarantined], date: dt.date,
                     now: dt.datetime | None = None) -> None:
    """Add quarantined lines to `date`, keeping every earlier row; a line already there
    (same source, file, line, raw, reason) is not added twice, so reruns change nothing
    (`lassi archive-lmt`, whose windows share a day)."""
    new = quarantine_frame(wh.spark, [qs], date, now or utc_now())
    old = wh.read("quarantine", [date])
    merged = old.unionByName(new).dropDuplicates(list(QUARANTINED_FIELDS))
    wh.write(merged.localCheckpoint(), "quarantine", [date])


def write_log(wh: Warehouse, stats: list[ParseStats], date: dt.date,
              now: dt.datetime | None = None) -> None:
    """Replace these sources' `ingest_log` rows of `date` (one row per ParseStats)."""
    now = now or utc_now()
    wh.replace_with_rows([st.log_row(date, now) for st in stats], "ingest_log", [date],
                         lambda: _where(SourceRows(tuple(st.source for st in stats))))


def finished(part: IngestResult) -> IngestResult:
    """A result whose tables are written, with its stats and quarantine (`after_write`)."""
    if part.after_write is None:
        return part
    stats, quarantined = part.after_write()
    return IngestResult(stats, part.tables, quarantined)


class Ledger:
    """The quarantine and ingest_log rows of several sources, written together at the end
    of one ingest run (`lassi ingest --raw`): one rewrite of each table per run, not one
    per source. A run killed before `write` leaves the tables written and the old
    quarantine and log rows; the rerun writes them all again."""

    def __init__(self) -> None:
        self.sources: list[str] = []
        self.quarantined: list[Any] = []
        self.stats: list[ParseStats] = []

    def add(self, source: str, quarantined: list[Any], stats: list[ParseStats]) -> None:
        self.sources.append(source)
        self.quarantined += quarantined
        self.stats += stats

    def write(self, wh: Warehouse, date: dt.date | None) -> None:
        """Replace these sources' quarantine and ingest_log rows of `date` (today: None)."""
        if not self.sources:
            return
        day, now = ingest_day(date), utc_now()
        write_quarantine(wh, self.quarantined, day, list(dict.fromkeys(self.sources)), now)
        write_log(wh, self.stats, day, now)


# --- one source's ingest -------------------------------------------------------------------------
def write_ingest(wh: Warehouse, source: str, parts: Iterable[IngestResult],
                 date: dt.date | None, log: bool = True, ledger: Ledger | None = None
                 ) -> ParseStats:
    """Write one source's results: each part's tables as it comes (a connector yields one
    part per input), then the source's quarantine rows and (with `log`) its ingest_log row
    of `date` (today when None), or hand those to `ledger`. Returns the summed
    accounting."""
    total = ParseStats(source)
    quarantined = []
    for part in parts:
        write_tables(wh, part.tables)
        part = finished(part)
        quarantined.append(part.quarantined)
        total.add(part.stats)
    if ledger is not None:
        ledger.add(source, quarantined, [total] if log else [])
        return total
    day, now = ingest_day(date), utc_now()
    write_quarantine(wh, quarantined, day, [source], now)
    if log:
        write_log(wh, [total], day, now)
    return total
