"""The Parquet warehouse: `<root>/<table>/date=YYYY-MM-DD/*.parquet` at any Hadoop URI.

Writes replace whole date partitions and are atomic per partition: the new partition is
written to `<root>/_staging/` first, then swapped in by two renames (old → `_trash`,
staged → live): through Hadoop's FileSystem API, or Python's own calls on a local root
(lassi.core.warehouse_fs). A run killed at any point leaves either the old or the new
partition; the next read or write of the table repairs a swap that was cut short
(`_recover`), unless another live command holds the warehouse's writer lock (`lock_writes`,
lassi.core.writer_lock), whose swap may be under way.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from lassi.core.frames import (
    SPARK_CODEC_KEY,
    arrow_table,
    arrow_type,
    empty_frame,
    local_frame,
    parquet_codec,
    write_date_files,
)
from lassi.core.schemas import schema_of
from lassi.core.warehouse_fs import HadoopFiles, LocalFiles, WarehouseFiles, local_path
from lassi.core.writer_lock import WriterLock

DateLike = dt.date | str


def as_date(d: DateLike) -> dt.date:
    """Parse YYYY-MM-DD (or pass a date through); ValueError with a one-line message."""
    if isinstance(d, dt.datetime):
        return d.date()
    if isinstance(d, dt.date):
        return d
    try:
        return dt.date.fromisoformat(str(d))
    except ValueError:
        raise ValueError(f"not a date (YYYY-MM-DD): {d!r}") from None


def days(first: dt.date, last: dt.date) -> list[dt.date]:
    """Every date from `first` to `last`, inclusive (empty when last < first)."""
    return [first + dt.timedelta(days=k) for k in range((last - first).days + 1)]


def local_root(root: str) -> Path | None:
    """The local directory of a warehouse root (None for other Hadoop URIs)."""
    return local_path(root)


def may_have_local(root: Path, table: str, dates: list[dt.date]) -> bool:
    """Without Spark: could a local warehouse hold `table` on any of `dates`? True when a
    partition exists or a swap awaits repair (`_trash`), so callers can refuse early."""
    trash = root / "_trash" / table
    if trash.is_dir() and any(trash.iterdir()):
        return True
    return any((root / table / f"date={d.isoformat()}").is_dir() for d in dates)


def _driver_jvm(session: SparkSession | None):
    """The driver JVM's py4j view: the session's, or (deferred) the one already running."""
    if session is not None:
        return session.sparkContext._jvm
    from pyspark import SparkContext

    if SparkContext._jvm is None:
        raise RuntimeError("a deferred Spark session needs the driver JVM started first "
                           "(lassi.core.spark.start_jvm)")
    return SparkContext._jvm


def _hadoop_conf(jvm, session: SparkSession | None):
    """The Hadoop configuration of the session, or (deferred) the one it will have: the
    JVM's Spark settings (spark.hadoop.* among them) as Spark derives it."""
    if session is not None:
        return session.sparkContext._jsc.hadoopConfiguration()
    return jvm.org.apache.spark.deploy.SparkHadoopUtil.get().newConfiguration(
        jvm.org.apache.spark.SparkConf(True))


def _conformed(df: DataFrame, table: str) -> DataFrame:
    """`df` as `table`'s columns in schema order, cast where its types differ (ValueError
    names the missing columns)."""
    schema = schema_of(table)
    missing = [c for c in schema.fieldNames() if c not in df.columns]
    if missing:
        raise ValueError(f"{table}: rows lack columns {missing}")
    types = dict(df.dtypes)
    if df.columns == schema.fieldNames() and all(
            types[f.name] == f.dataType.simpleString() for f in schema.fields):
        return df                   # already so: no select built a JVM call per column
    return df.select(*[F.col(f.name) if types[f.name] == f.dataType.simpleString()
                       else F.col(f.name).cast(f.dataType).alias(f.name)
                       for f in schema.fields])


def collected(df: DataFrame, table: str) -> pa.Table:
    """A result that the site's configuration bounds (`Warehouse.write_collected`) as one
    Arrow table of `table`'s declared schema."""
    schema = schema_of(table)
    return _conformed(df, table).toArrow().cast(
        pa.schema([pa.field(f.name, arrow_type(f.dataType)) for f in schema.fields]))


class Warehouse:
    """Read and write the declared tables under one root URI.

    `spark` is a SparkSession, or a function that builds one: then the session starts at
    the first use of `spark`, and until then the warehouse reaches its filesystem through
    the driver JVM alone (started first, e.g. with lassi.core.spark.start_jvm). A stage
    that finds nothing to do for the day (`has`, `clear`) then costs no Spark application,
    so no executors are asked of a cluster."""

    def __init__(self, spark: SparkSession | Callable[[], SparkSession], root: str) -> None:
        self._session = spark if isinstance(spark, SparkSession) else None
        self._start = None if self._session is not None else spark
        self.root = root.rstrip("/")
        self._jvm = _driver_jvm(self._session)
        self._Path = self._jvm.org.apache.hadoop.fs.Path
        self._fs = self._Path(self.root).getFileSystem(_hadoop_conf(self._jvm, self._session))
        self._files: WarehouseFiles = HadoopFiles(self._jvm, self._fs)
        # a root without a scheme is local unless fs.defaultFS says otherwise: Hadoop decides
        if local_root(self.root) is not None and self._fs.getScheme() == "file":
            self._files = LocalFiles(self.root, self._files.local_path(self.root))
        self.writer_lock: WriterLock | None = None

    @property
    def spark(self) -> SparkSession:
        """The Spark session (built now if it was deferred)."""
        if self._session is None:
            self._session = self._start()
        return self._session

    @property
    def session_started(self) -> bool:
        """Whether the Spark session exists yet (False only while a deferred one is unused)."""
        return self._session is not None

    # paths -------------------------------------------------------------------------------
    def table_path(self, table: str) -> str:
        return f"{self.root}/{table}"

    def partition_path(self, table: str, date: DateLike) -> str:
        return f"{self.table_path(table)}/date={as_date(date).isoformat()}"

    def _exists(self, s: str) -> bool:
        return self._files.exists(s)

    def _ls(self, s: str) -> list[str]:
        return self._files.ls(s)

    # reading -----------------------------------------------------------------------------
    def dates(self, table: str) -> list[dt.date]:
        """Dates that have a partition, sorted."""
        self._recover(table)
        out = []
        for name in self._ls(self.table_path(table)):
            if name.startswith("date="):
                out.append(as_date(name[5:]))
        return sorted(out)

    def has(self, table: str, date: DateLike) -> bool:
        self._recover(table)
        return self._exists(self.partition_path(table, date))

    def read(self, table: str, dates: Iterable[DateLike] | DateLike | None = None) -> DataFrame:
        """The table with its declared schema, optionally limited to some dates.

        A table or date that has nothing yet reads as `empty_frame`: what a query builds on
        it is pruned at planning, not run.
        """
        schema = schema_of(table)
        self._recover(table)
        if dates is None:
            paths = [self.table_path(table)] if self.dates(table) else []
        else:
            ds = [dates] if isinstance(dates, (str, dt.date)) else list(dates)
            paths = [self.partition_path(table, d) for d in ds]
            paths = [p for p in paths if self._exists(p)]
        if not paths:
            return empty_frame(self.spark, schema)
        df = (self.spark.read.schema(schema).option("basePath", self.table_path(table))
              .parquet(*paths))
        # the partition column `date` comes last, where the tables declare it: a select by
        # name (a JVM call per column, ~20 ms for app_hour's 50) only when it is not
        return df if df.columns == schema.fieldNames() else df.select(*schema.fieldNames())

    # writing -----------------------------------------------------------------------------
    def write(self, df: DataFrame, table: str,
              dates: Iterable[DateLike] | None = None) -> list[dt.date]:
        """Replace the date partitions of `table` with the rows of `df`, atomically each.

        `dates` names the partitions this write owns: those without rows in `df` are
        emptied too (a rerun that finds nothing removes the old rows). Returns the dates
        written.
        """
        df = _conformed(df, table)
        self._recover(table)
        token = uuid.uuid4().hex
        staging = f"{self.root}/_staging/{table}/{token}"
        df.write.mode("errorifexists").partitionBy("date").parquet(staging)
        return self._commit(table, staging, dates, token)

    @property
    def local(self) -> Path | None:
        """The warehouse's local directory (None when its root is another Hadoop URI)."""
        return local_root(self.root)

    def write_files(self, write: Callable[[str], None], table: str,
                    dates: Iterable[DateLike] | None = None) -> list[dt.date]:
        """`write` but the Parquet files come from `write(folder)`, which fills the local
        `folder` with `date=YYYY-MM-DD/` subfolders of files in the table's declared
        schema (no `date` column), e.g. from the executors (`lassi.ingest.parquet_sink`).
        Only for a local warehouse (`local`), which every executor must see. The same
        atomic swap per partition; anything else `write` leaves in `folder` is dropped."""
        schema_of(table)                                   # an unknown table fails here
        if self.local is None:
            raise ValueError(f"write_files needs a local warehouse, not {self.root}")
        self._recover(table)
        token = uuid.uuid4().hex
        staging = f"{self.root}/_staging/{table}/{token}"
        self._files.mkdirs(staging)
        write(self._files.local_path(staging))      # absolute, whatever the executors' cwd
        return self._commit(table, staging, dates, token)

    def _commit(self, table: str, staging: str, dates: Iterable[DateLike] | None,
                token: str) -> list[dt.date]:
        """Swap the `date=` folders staged under `staging` in, empty the other `dates`,
        drop `staging`; the dates written."""
        staged = {as_date(n[5:]) for n in self._ls(staging) if n.startswith("date=")}
        owned = staged | {as_date(d) for d in (dates or [])}
        for d in sorted(owned):
            self._swap(table, d, f"{staging}/date={d.isoformat()}" if d in staged else None, token)
        self._files.delete(staging)
        return sorted(owned)

    def clear(self, table: str, dates: Iterable[DateLike]) -> list[dt.date]:
        """Empty the date partitions of `table`, atomically each: what `write` does with a
        DataFrame that has no rows, without a Spark job (a stage with no input for the day).
        Returns the dates cleared."""
        schema_of(table)                                   # an unknown table fails here
        owned = sorted({as_date(d) for d in dates})
        token = uuid.uuid4().hex
        for d in owned:
            if self.has(table, d):                         # nothing to create for the others
                self._swap(table, d, None, token)
        return owned

    def replace_rows(self, df: DataFrame, table: str, dates: Iterable[DateLike],
                     where) -> list[dt.date]:
        """Replace the rows of `table` on `dates` that match `where` (a Column) by `df`,
        keeping the others, atomically per partition (a rerun with the same `df` is a
        no-op). The kept rows are materialised first, detached from the files replaced."""
        dates = list(dates)
        if not any(self.has(table, d) for d in dates):    # nothing to keep: a plain write
            return self.write(df, table, dates)
        old = self.read(table, dates).filter(~where)
        return self.write(old.unionByName(df).localCheckpoint(), table, dates)

    def write_rows(self, rows: list, table: str,
                   dates: Iterable[DateLike] | None = None) -> list[dt.date]:
        """Write Python rows (tuples/dicts in schema order, with `date`) to `table`, as
        `write` does: into a local warehouse the driver writes their Parquet files itself
        (no Spark job, no session needed), else through Spark."""
        schema = schema_of(table)
        if self.local is None:
            return self.write(local_frame(self.spark, rows, schema), table, dates)
        t = arrow_table(rows if isinstance(rows, pa.Table) else list(rows), schema)
        codec = parquet_codec(self._session.conf.get(SPARK_CODEC_KEY, "snappy")
                              if self._session is not None else "snappy")
        return self.write_files(lambda folder: write_date_files(t, folder, codec), table,
                                dates)

    def write_collected(self, df: DataFrame, table: str,
                        dates: Iterable[DateLike] | None = None) -> int:
        """`write` for a result that the site's configuration bounds, never its activity
        (a row per filesystem and hour, per filesystem and counter): collected as one Arrow
        table and written as `write_rows` does, without a Spark write job. Returns its rows."""
        rows = collected(df, table)
        self.write_rows(rows, table, dates)
        return rows.num_rows

    def replace_with_rows(self, rows: list, table: str, dates: Iterable[DateLike],
                          where: Callable[[], Column]) -> list[dt.date]:
        """`replace_rows` with Python rows: `write_rows` when the partitions hold nothing
        to keep. `where()` gives the Column, built only when there is something to keep."""
        dates = list(dates)
        if not any(self.has(table, d) for d in dates):
            return self.write_rows(rows, table, dates)
        return self.replace_rows(local_frame(self.spark, rows, schema_of(table)), table,
                                 dates, where())

    # the writer lock ----------------------------------------------------------------------
    def lock_writes(self, command: str, wait_s: float = 0.0) -> WriterLock:
        """Take the warehouse's writer lock for `command` (released at `release_writes` or
        when the process ends: its heartbeat stops); LockHeld names a live holder."""
        if self.writer_lock is None:
            self.writer_lock = WriterLock(self._jvm, self._fs, self.root,
                                          command, local_root(self.root))
            try:
                self.writer_lock.acquire(wait_s)
            except BaseException:
                self.writer_lock = None
                raise
            self._tidy()
        return self.writer_lock

    def _tidy(self) -> None:
        """With the writer lock: finish every swap a killed writer left halfway, and remove
        its staged files (no other writer can be using them)."""
        for table in self._ls(f"{self.root}/_trash"):
            self._recover(table)
        for leftover in ("_trash", "_staging"):
            self._files.delete(f"{self.root}/{leftover}")

    def release_writes(self) -> None:
        """Give the writer lock back (nothing when not held), leaving no `_staging/` or
        `_trash/` folders behind."""
        if self.writer_lock is not None:
            self._tidy()
            self.writer_lock.release()
            self.writer_lock = None

    def _may_repair(self) -> bool:
        """Half-done swaps are ours to repair: we hold the writer lock, or no live command
        does."""
        if self.writer_lock is not None:
            return True
        h = WriterLock(self._jvm, self._fs, self.root, "",
                       local_root(self.root)).holder()
        return h is None or not h.alive()

    def _swap(self, table: str, d: dt.date, staged: str | None, token: str) -> None:
        live = self.partition_path(table, d)
        trash_dir = f"{self.root}/_trash/{table}"
        trash = f"{trash_dir}/date={d.isoformat()}.{token}"
        self._files.mkdirs(trash_dir)
        self._files.mkdirs(self.table_path(table))
        if self._exists(live) and not self._files.rename(live, trash):
            raise OSError(f"could not move {live} aside")
        if staged is not None and not self._files.rename(staged, live):
            raise OSError(f"could not move {staged} into place")
        self._files.delete(trash)

    def _recover(self, table: str) -> None:
        """Finish or undo a swap that a killed run left halfway (not while another live
        command holds the writer lock: its swap may be under way)."""
        trash_dir = f"{self.root}/_trash/{table}"
        names = self._ls(trash_dir)
        if names and not self._may_repair():
            return
        for name in names:
            part = name.split(".", 1)[0]  # date=YYYY-MM-DD
            live = f"{self.table_path(table)}/{part}"
            old = f"{trash_dir}/{name}"
            if self._exists(live):
                self._files.delete(old)
            else:
                self._files.mkdirs(self.table_path(table))
                self._files.rename(old, live)
