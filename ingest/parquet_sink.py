"""Parquet files written by the executors themselves, for a local warehouse.

The Beacon layers and Lustre statistics are parsed on the executors into Arrow tables.
Handing those to the JVM for Spark's Parquet writer converts every row twice (Arrow to
Spark rows, rows to Parquet); for a warehouse on a local or POSIX-mounted path the
executors write the same files with pyarrow instead (`Warehouse.write_files` stages and
swaps them in). The files hold the table's declared columns but `date` (the folder names
it), timestamps as UTC microseconds, as Spark writes them.

Each task writes one file per UTC day of its rows, `date=YYYY-MM-DD/part-<task>.parquet`
(a flush of more than ROWS_PER_FILE rows: up to WRITE_THREADS files, `part-<task>-<k>` for
the others, written at once), first under `_tmp/<attempt>/`, moved into place when the
task has parsed everything, so a failed attempt leaves nothing in a `date=` folder and a
retried or speculative one replaces the same files with the same rows.
"""

from __future__ import annotations

import datetime as dt
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lassi.core.frames import WRITE_THREADS, file_slices, parquet_codec, statistics_columns

US_PER_DAY = 86_400_000_000


def file_schema(row_schema: pa.Schema, timestamps: set[str]) -> pa.Schema:
    """The files' schema: the parsers' rows (`columnar.row_schema`) with the `timestamps`
    columns as UTC microseconds instead of epoch-microsecond integers."""
    return pa.schema([pa.field(f.name, pa.timestamp("us", tz="UTC"))
                      if f.name in timestamps else f for f in row_schema])


@dataclass(frozen=True)
class ParquetFolder:
    """Where and how the executors write one table's rows: `folder` (a local path every
    executor sees), split into days by `time_col`, compressed with `codec` (Spark's name)."""

    folder: str
    time_col: str
    timestamps: tuple[str, ...]
    codec: str = "snappy"

    def sink(self, row_schema: pa.Schema) -> DaySink:
        """A writer for this task's rows."""
        from pyspark import TaskContext

        ctx = TaskContext.get()
        part, attempt = (ctx.partitionId(), ctx.taskAttemptId()) if ctx else (0, os.getpid())
        return DaySink(self, row_schema, part, attempt)


class DaySink:
    """One task's rows, buffered per UTC day and written as one file per day."""

    BUFFER_ROWS = 1 << 17          # rows buffered per day before a row group is written

    def __init__(self, spec: ParquetFolder, row_schema: pa.Schema, part: int,
                 attempt: int) -> None:
        self.spec = spec
        self.schema = file_schema(row_schema, set(spec.timestamps))
        # dictionary pages for the texts only: a counter's values rarely repeat, and the
        # dictionary tried and dropped for each such column cost time and bytes (the MDS
        # bench day's file: 74 -> 54 ms, 1.78 -> 1.30 MB)
        self.dictionary = [f.name for f in self.schema if pa.types.is_string(f.type)]
        self.part = part
        self.tmp = Path(spec.folder) / "_tmp" / f"{part:05d}-{attempt}"
        self.buffers: dict[int, list[pa.Table]] = {}
        self.buffered: dict[int, int] = {}
        self.writers: dict[tuple[int, int], pq.ParquetWriter] = {}   # (day, lane)
        self.pool: ThreadPoolExecutor | None = None

    def add(self, rows: pa.Table) -> None:
        """Take a table of the parsers' row schema (timestamps as epoch microseconds)."""
        if rows.num_rows == 0:
            return
        ts = rows.column(self.spec.time_col)
        if ts.null_count:
            raise ValueError(f"{ts.null_count} rows without {self.spec.time_col}")
        days = np.floor_divide(ts.to_numpy(), US_PER_DAY)
        rows = pa.Table.from_arrays(
            [c.cast(pa.timestamp("us", tz="UTC")) if f.name in self.spec.timestamps else c
             for f, c in zip(rows.schema, rows.columns, strict=True)], schema=self.schema)
        first = days[0]
        if (days == first).all():
            self._buffer(int(first), rows)
            return
        for day in np.unique(days):
            self._buffer(int(day), rows.filter(pa.array(days == day)))

    def _buffer(self, day: int, rows: pa.Table) -> None:
        self.buffers.setdefault(day, []).append(rows)
        self.buffered[day] = self.buffered.get(day, 0) + rows.num_rows
        if self.buffered[day] >= self.BUFFER_ROWS:
            self._flush(day)

    def _flush(self, day: int) -> None:
        """Write a day's buffered rows: more than ROWS_PER_FILE are cut into up to
        WRITE_THREADS slices (`frames.file_slices`, as the driver's own writes cut them),
        each appended to its own file (lane) by its own thread
        (encoding and compression run outside the GIL: the MDS bench day's 81k rows,
        54 -> 35 ms in its ingest)."""
        parts = self.buffers.pop(day, [])
        self.buffered.pop(day, None)
        if not parts:
            return
        slices = [(self._writer(day, lane), t)
                  for lane, t in enumerate(file_slices(pa.concat_tables(parts)))]
        if len(slices) == 1:
            slices[0][0].write_table(slices[0][1])
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(WRITE_THREADS)
        for done in [self.pool.submit(w.write_table, t) for w, t in slices]:
            done.result()

    def _writer(self, day: int, lane: int) -> pq.ParquetWriter:
        """The open file of a day's lane."""
        if (day, lane) not in self.writers:
            self.tmp.mkdir(parents=True, exist_ok=True)
            self.writers[day, lane] = pq.ParquetWriter(
                self.tmp / f"{day}-{lane}.parquet", self.schema,
                compression=parquet_codec(self.spec.codec), use_dictionary=self.dictionary,
                write_statistics=statistics_columns(self.schema))
        return self.writers[day, lane]

    def close(self) -> None:
        """Write what is buffered and move every day's files into its `date=` folder."""
        for day in list(self.buffers):
            self._flush(day)
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        for (day, lane), w in self.writers.items():
            w.close()
            folder = Path(self.spec.folder) / f"date={_iso(day)}"
            folder.mkdir(parents=True, exist_ok=True)
            name = f"part-{self.part:05d}" + (f"-{lane}" if lane else "") + ".parquet"
            os.replace(self.tmp / f"{day}-{lane}.parquet", folder / name)
        self.writers.clear()


def _iso(day: int) -> str:
    """YYYY-MM-DD of a day number since the epoch."""
    return (dt.date(1970, 1, 1) + dt.timedelta(days=day)).isoformat()
