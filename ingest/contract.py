"""The one ingest contract: what a parser or connector hands back to be written.

Parsers and connectors only read their source. Each returns (a connector reading several
inputs, such as LMT databases, yields one per input) an `IngestResult`:

- `tables`: per target table a `TableRows` — the rows, as tuples in `schema_of(table)`
  order (`date` last), a pandas DataFrame with the schema's columns, or, for the parsers
  that run on the Spark executors (Lustre, Beacon), a Spark DataFrame; the date partitions
  the rows belong to (`dates`); and which rows of those partitions they replace
  (`Replace`): all of them, or only those of some sources, some Darshan logs or an LMT
  window;
- `quarantined`: the lines it could not use (`lassi.core.quarantine.Quarantined`, or a
  Spark DataFrame of their five fields for the executor-side parsers);
- `stats`: the line accounting (`ParseStats`; lines read = used + quarantined).

The executor-side parsers compute their rows while the writer writes them, so their
accounting and quarantine are known only then: such a result has `after_write`, which the
writer calls once the tables are written to get (stats, quarantined).

`lassi.ingest.writer` is the only module that writes them: the tables, the quarantine rows
and the `ingest_log` row, each date partition atomically through `Warehouse`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lassi.core.quarantine import ParseStats, Quarantined


class IngestError(Exception):
    """A problem with the request itself (unknown source, no input), said in one line."""


class SourceUnavailable(IngestError):
    """A service the source is read from (the LMT database) did not answer: nothing was
    written, and the same request may succeed later (`lassi ingest` exits 75)."""


# --- which rows of the owned partitions a write replaces --------------------------------------
@dataclass(frozen=True)
class WholePartitions:
    """Every row of the partitions written (those of the rows, plus `TableRows.dates`)."""


@dataclass(frozen=True)
class SourceRows:
    """The rows whose `source` is one of `sources` (tables several sources share:
    `app_run`, `ost_health`, `quarantine`, `ingest_log`)."""

    sources: tuple[str, ...]


@dataclass(frozen=True)
class LogRows:
    """The rows of the Darshan logs whose file name (last part of `log_path`) is in `names`
    (a rerun replaces those logs' rows and keeps the others)."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class WindowRows:
    """The rows of the file systems `filesystems` with start <= ts < end (an LMT window:
    archiving hour by hour equals archiving the day)."""

    filesystems: tuple[str, ...]
    start: dt.datetime
    end: dt.datetime


Replace = WholePartitions | SourceRows | LogRows | WindowRows
WHOLE = WholePartitions()


@dataclass(frozen=True)
class ExecutorRows:
    """Rows the executors parse, computed by the write itself: as a Spark DataFrame of the
    table's columns (`frame()`, for Spark's writer), or as Parquet files the executors
    write into a local folder (`write_files(folder)`, see `Warehouse.write_files`). Only
    one of the two is called, once."""

    frame: Callable[[], Any]                  # () -> pyspark.sql.DataFrame
    write_files: Callable[[str], None]


@dataclass
class TableRows:
    """Rows for one table and what they replace.

    `dates`: the partitions this write owns besides those of the rows (emptied when no row
    falls on them); required unless the whole partitions are replaced, since the rows kept
    are read from them. An empty `dates` with a partial replace writes nothing.
    """

    table: str
    rows: Any      # list[tuple] | pandas.DataFrame | pyspark.sql.DataFrame | ExecutorRows
    dates: list[dt.date] | None = None
    replace: Replace = WHOLE

    def __post_init__(self) -> None:
        if not isinstance(self.replace, WholePartitions) and self.dates is None:
            raise ValueError(f"{self.table}: a partial replace needs the dates it reads")


@dataclass
class IngestResult:
    """What one parse or read gives: table rows, quarantined lines, accounting."""

    stats: ParseStats
    tables: list[TableRows] = field(default_factory=list)
    quarantined: Any = field(default_factory=list)   # list[Quarantined] | Spark DataFrame
    after_write: Callable[[], tuple[ParseStats, Any]] | None = None

    @property
    def source(self) -> str:
        return self.stats.source


__all__ = ["WHOLE", "ExecutorRows", "IngestError", "IngestResult", "LogRows", "ParseStats",
           "Quarantined", "Replace", "SourceRows", "SourceUnavailable", "TableRows",
           "WholePartitions", "WindowRows"]
