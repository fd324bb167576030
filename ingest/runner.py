"""Ingest raw files into the warehouse: parse (in parallel for big sources), write, account.

`ingest_source` handles one source over files/directories; `ingest_raw` everything a
simulator or site collector wrote under one folder for one date. Every run reports
lines read = lines used + lines quarantined, writes the quarantine and an `ingest_log` row.

Every source follows one contract (`lassi.ingest.contract`): its parser or connector gives
table rows, quarantined lines and the accounting, and `lassi.ingest.writer` writes them.
Lustre statistics and Beacon layers are parsed on the executors (their rows stay Spark
DataFrames), scheduler logs on the driver; the TOKIO connectors (`TOKIO`: Darshan, LMT,
`lfs df`, `lctl dl`) each have `read_inputs(site, inputs, date, tz)`.

Beacon layers (`BEACON`): files `beacon/<layer>/<host>/<YYYY-MM-DD>.log[.gz]` are parsed on
the executors, each with the same host's previous-day file as delta seed; a file's lines
of another UTC day than its name's (or the requested date) are quarantined, so a write
never touches a partition it does not own. Every Beacon ingest also writes `fwd_map` and
`ost_map` for its dates from the site configuration.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest import (
    alps_columnar,
    beacon_columnar,
    beacon_job_columnar,
    beacon_maps,
    beacon_seeds,
    darshan,
    data_checks,
    lctl_dl,
    lfs_df,
    lmt,
    lustre_columnar,
    lwfs_client,
    pbs_columnar,
    slurm_columnar,
    writer,
)
from lassi.ingest.beacon_seeds import SeedStore, file_day
from lassi.ingest.contract import (
    ExecutorRows,
    IngestError,
    IngestResult,
    SourceRows,
    TableRows,
)
from lassi.ingest.driver_reads import reader_allocator
from lassi.ingest.parquet_sink import ParquetFolder
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lassi.core.config import Site
from lassi.core.frames import SPARK_CODEC_KEY
from lassi.core.gc_tuning import freeze_imports, paused_gc
from lassi.core.quarantine import QUARANTINED_FIELDS, ParseStats
from lassi.core.schemas import schema_of
from lassi.core.textio import iter_files
from lassi.core.warehouse import Warehouse


def file_by_file(parse: Callable) -> Callable:
    """A per-file parser `parse(path, site, prev, day) -> (rows, quarantine, stats)` as a
    task-list parser (what the wire calls): `(tasks, site[, seeds])` -> (rows, [(task,
    quarantine, stats)]) per file; `seeds` (a counter layer's SeedStore) goes on to `parse`."""
    def many(tasks: list[BeaconTask], site: Site, seeds: SeedStore | None = None):
        for task in tasks:
            f, prev, day = task
            rows, qs, st = (parse(f, site, prev, day) if seeds is None
                            else parse(f, site, prev, day, seeds=seeds))
            yield rows, [(task, qs, st)]
    many.__name__ = f"file_by_file({getattr(parse, '__name__', 'parse')})"
    return many


# scheduler -> its column-wise reader (each falls back to its line parser per line)
SCHEDULER = {"pbs": pbs_columnar, "slurm": slurm_columnar, "alps": alps_columnar,
             "beacon-job": beacon_job_columnar}
# Beacon layer -> (table, task-list parser `(tasks, site)` -> per batch of files: (rows as
# dicts or a pyarrow Table of lassi.ingest.columnar.row_schema(table), [(task, quarantined
# lines, ParseStats)]); `file_by_file` makes one of a per-file parser). The LWFS client
# traces (one small file per compute node) are parsed many files per fast-path call. The
# counter layers (SEEDED) also take `seeds=`, their delta seeds' store (beacon_seeds).
BEACON: dict[str, tuple[str, Callable]] = {
    "lwfs-client": ("raw_lwfs_trace", lwfs_client.parse_files_arrow),
    "lwfs-server": ("raw_lwfs_server", file_by_file(beacon_columnar.parse_lwfs_server_arrow)),
    "lustre-client": ("raw_lustre_client",
                      file_by_file(beacon_columnar.parse_lustre_client_arrow)),
    "ost": ("raw_ost", file_by_file(beacon_columnar.parse_ost_arrow)),
    "mds": ("raw_mds", file_by_file(beacon_columnar.parse_mds_arrow)),
}
SEEDED = tuple(beacon_columnar.LAYOUTS)
# TOKIO connectors: source -> module with `read_inputs(site, inputs, date, tz)`, which reads
# its source and gives `IngestResult`s (one per input for LMT databases)
TOKIO = {"darshan": darshan, "lmt": lmt, "lfs-df": lfs_df, "lctl-dl": lctl_dl}
SOURCES = ["lustre", *SCHEDULER, *BEACON, *TOKIO]
URI_SCHEMES = ("mysql://",)   # inputs that are not paths (a live LMT database)
# (file, previous-day file or None, the UTC day the file holds or None)
BeaconTask = tuple[str, str | None, dt.date | None]
# a quarantined line as the executors send it (Lustre: a row; Beacon: JSON in the wire
# rows' `aux`)
_Q_FIELDS = StructType([StructField(n, IntegerType() if n == "line_no" else StringType())
                        for n in QUARANTINED_FIELDS])
# a file's line accounting as the executors send it (JSON in the wire rows' `aux`), summed
# on the JVM side while the rows are written; `task` names the file's task for a re-parse
_COUNTS = ("files", "lines_read", "lines_used", "lines_quarantined", "rows", "counter_resets")
_STATS = StructType([*[StructField(c, LongType()) for c in _COUNTS],
                     StructField("extra", MapType(StringType(), LongType())),
                     StructField("task", StringType())])


def _progress(done: int, total: int, label: str) -> None:
    if total >= 20 and sys.stderr.isatty():
        bar = "#" * int(30 * done / total)
        print(f"\r{label} [{bar:<30}] {done}/{total} files", end="", file=sys.stderr)
        if done == total:
            print(file=sys.stderr)


def _parse_lustre(tasks: list[BeaconTask], site: Site):
    """Lustre statistics files as a task-list parser (the server is the file's folder): the
    columnar fast path for captures, else the line parser, in chunks of rows (a file's
    quarantine and accounting come with its last chunk)."""
    for task in tasks:
        f = task[0]
        for rows, end in lustre_columnar.stream_file_arrow(f, server=Path(f).parent.name,
                                                           nid_map=site.nid_map):
            yield rows, ([] if end is None else [(task, *end)])


def ingest_lustre(spark: SparkSession, wh: Warehouse, site: Site, files: list[Path],
                  date: dt.date, ledger: writer.Ledger | None = None) -> ParseStats:
    """Parse Lustre statistics files in parallel into `raw_lustre_stats` (whole partitions of
    the rows' days); quarantine and ingest_log rows of `date`."""
    site.nid_map  # noqa: B018 - computed once here, shipped to the executors with the site
    tasks = [(str(f), None, None) for f in files]
    part = _parse_parallel(spark, site, "lustre", "raw_lustre_stats",
                           _parse_lustre, tasks, "snapshot_time", owned=None)
    return writer.write_ingest(wh, "lustre", [part], date, ledger=ledger)


def prev_day_file(path: str | Path) -> str | None:
    """The same host's previous-day file beside `path` (`.log` or `.log.gz`), if any."""
    day = file_day(path)
    if day is None:
        return None
    p = Path(path)
    prev = (day - dt.timedelta(days=1)).isoformat()
    rest = p.name.split(".", 1)[1] if "." in p.name else ""
    names = [f"{prev}.{rest}" if rest else prev, f"{prev}.log", f"{prev}.log.gz"]
    for name in dict.fromkeys(names):
        if (p.parent / name).is_file():
            return str(p.parent / name)
    return None


def beacon_tasks(files: list[Path], date: dt.date | None) -> list[BeaconTask]:
    """(file, seed, day) of every file to ingest: with `date`, the files named for that
    day (and files without a date in their name); each with its previous-day seed."""
    out = []
    for f in files:
        day = file_day(f)
        if date is not None and day is not None and day != date:
            continue
        out.append((str(f), prev_day_file(f), date or day))
    return out


def _size(task: BeaconTask) -> int:
    """The task's file size in bytes, plus one (1 when it cannot be read)."""
    try:
        return Path(task[0]).stat().st_size + 1
    except OSError:
        return 1


def _text_size(task: BeaconTask) -> int:
    """`_size`, as text: a gzip file counts ten times its bytes (the driver's bound on
    what it parses itself, `DRIVER_BYTES`)."""
    return _size(task) * (10 if task[0].endswith(".gz") else 1)


def _byte_size(text: str) -> int:
    """Bytes of a Spark size setting (`134217728b`, `128m`, `1g`)."""
    m = re.fullmatch(r"(\d+)\s*([kmgtp]?)i?b?", text.strip().lower())
    if m is None:
        raise ValueError(f"not a size: {text!r}")
    return int(m.group(1)) * 1024 ** " kmgtp".index(m.group(2) or " ")


def _bin_count(spark: SparkSession, sizes: list[int]) -> int:
    """How many tasks parse files of `sizes` bytes: bins of at most Spark's
    `spark.sql.files.maxPartitionBytes` (128 MiB) as its file reader makes them, a whole
    number per core (no half-empty last wave), at most one per file. Each Python task
    has a fixed cost (~40 ms of a core), so a few small files are one task per core: for
    the 4,096-node day's OST layer (15 files, 39 MB), 0.96 s → 0.75 s warm against four
    bins per core (README, Scale; bench/scale-history.md)."""
    cores = max(1, spark.sparkContext.defaultParallelism)
    cap = _byte_size(spark.conf.get("spark.sql.files.maxPartitionBytes", "128m"))
    per_core = max(1, -(-sum(sizes) // (cores * cap)))
    return max(1, min(len(sizes), cores * per_core))


def _balanced(tasks: list[BeaconTask], n: int,
              sizes: list[int] | None = None) -> list[list[BeaconTask]]:
    """Split tasks (of `sizes` bytes, read when not given) into n bins of about equal
    bytes (largest file first)."""
    sizes = [_size(t) for t in tasks] if sizes is None else sizes
    bins: list[list[BeaconTask]] = [[] for _ in range(n)]
    load = [0] * n
    for nbytes, t in sorted(zip(sizes, tasks, strict=True), key=lambda x: -x[0]):
        i = load.index(min(load))
        bins[i].append(t)
        load[i] += nbytes
    return [b for b in bins if b]


def _wire_schema(table: str) -> StructType:
    """What the executors emit for a parsed table: `tag` ('r' a row, 'q' a quarantined line,
    's' a file's stats), the table's columns (nullable, no date; timestamps as epoch
    microseconds) and `aux` (JSON of q/s)."""
    cols = [StructField(f.name, LongType() if isinstance(f.dataType, TimestampType)
                        else f.dataType, True)
            for f in schema_of(table).fields if f.name != "date"]
    return StructType([StructField("tag", StringType(), False), *cols,
                       StructField("aux", StringType(), True)])


def _task_json(task: BeaconTask) -> list:
    """A task as JSON-able list (the day as ISO text)."""
    f, prev, day = task
    return [f, prev, day and str(day)]


def _parsed_files(bins: Iterable[str], parse: Callable, site: Site,
                  seeds: SeedStore | None) -> Iterator[tuple[Any, list]]:
    """Parse the files of each task bin (JSON) with the task-list parser `parse`: per call
    of it, (rows, [(task, quarantined lines, ParseStats)]). `seeds`: the counter layer's
    store of delta seeds, or None."""
    for tasks in bins:
        todo = [(f, prev, day and dt.date.fromisoformat(day))
                for f, prev, day in json.loads(tasks)]
        yield from (parse(todo, site) if seeds is None else parse(todo, site, seeds=seeds))


def _arrow_rows(rows: Any, schema: pa.Schema) -> pa.Table:
    """A parser's rows (a table of the row schema, or dicts) as an Arrow table."""
    from lassi.ingest.columnar import rows_table

    return rows if isinstance(rows, pa.Table) else rows_table(rows, schema)


def _wire_batches(batches, table: str, parse: Callable, site: Site, only_quarantine: bool,
                  seeds: SeedStore | None):
    """Executor side (`mapInArrow`): `_parsed_files` of the task bins; emit rows, quarantine
    and stats as Arrow wire batches (no Python object per row for the columnar parsers,
    one Arrow conversion per file for the others). A file's stats carry its task, so its
    quarantine can be parsed again (`only_quarantine`: no rows)."""
    from lassi.ingest.columnar import row_schema

    rows_schema = row_schema(table)
    freeze_imports()
    wire = pa.schema([pa.field("tag", pa.string()), *rows_schema,
                      pa.field("aux", pa.string())])

    def side(tag: str, aux: list[str]) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays(
            [pa.array([tag] * len(aux), pa.string()),
             *[pa.nulls(len(aux), f.type) for f in rows_schema], pa.array(aux, pa.string())],
            schema=wire)

    bins = (tasks for batch in batches for tasks in batch.column(0).to_pylist())
    for rows, parsed in _parsed_files(bins, parse, site, seeds):
        for _, qs, _ in parsed:
            if qs:
                yield side("q", [json.dumps({"source": q.source, "file": q.file,
                                             "line_no": q.line_no, "raw": q.raw,
                                             "reason": q.reason}) for q in qs])
        if only_quarantine:
            continue
        for b in _arrow_rows(rows, rows_schema).to_batches():
            yield pa.RecordBatch.from_arrays(
                [pa.array(["r"] * b.num_rows, pa.string()), *b.columns,
                 pa.nulls(b.num_rows, pa.string())], schema=wire)
        yield side("s", [json.dumps({**{c: getattr(st, c) for c in _COUNTS},
                                     "extra": st.extra, "task": json.dumps(_task_json(task))})
                         for task, _, st in parsed])


DRIVER_BYTES = 64 << 20        # one bin of this much text is parsed by the driver (`_written`)
DRIVER_FILE_BYTES = 2 << 20    # files of this much text at least: several too (two blocks each)


def _task_bins(spark: SparkSession, tasks: list[BeaconTask]) -> list[str]:
    """The tasks in `_bin_count` bins of about equal bytes, each as JSON."""
    sizes = [_size(t) for t in tasks]
    bins = _balanced(tasks, _bin_count(spark, sizes), sizes)
    return [json.dumps([_task_json(t) for t in b]) for b in bins]


def _wire(spark: SparkSession, site: Site, table: str, parse: Callable,
          tasks: list[BeaconTask], only_quarantine: bool = False,
          seeds: SeedStore | None = None) -> DataFrame:
    """The wire rows of parsing `tasks` on the executors, one task per `_task_bins` bin
    (`seeds`: a counter layer's store of delta seeds)."""
    jobs = [(b,) for b in _task_bins(spark, tasks)]
    inp = spark.createDataFrame(spark.sparkContext.parallelize(jobs, len(jobs)),
                                "tasks string")
    return inp.mapInArrow(
        lambda it: _wire_batches(it, table, parse, site, only_quarantine, seeds),
        _wire_schema(table))


def _written(spark: SparkSession, site: Site, table: str, parse: Callable,
             tasks: list[BeaconTask], files: ParquetFolder, seeds: SeedStore | None
             ) -> list[dict]:
    """Parse `tasks` on the executors, which write the rows as Parquet files under `files`
    themselves: one plain Spark job (no DataFrame of wire rows to plan, observe and
    write to `noop`, ~0.2-0.3 s a layer), giving one accounting summary per bin
    (`_bin_summary`). Tasks of at most DRIVER_BYTES in all are parsed by the driver
    instead when they make one bin (a day's one small MDS file: the job would run it as
    one task on one core, after ~0.1 s of its own) or when each file is one its block
    threads cut in two at least (DRIVER_FILE_BYTES): the 64-node bench day's two OST
    files, 0.15 s -> 0.07 s; the 4,096-node day's fifteen, 0.51 s -> 0.45 s. Many smaller
    files (the LWFS clients') are parsed faster by one task per core."""
    bins = _task_bins(spark, tasks)
    if on_driver(tasks, len(bins)):
        return [_bin_summary(bins, table, parse, site, files, seeds, on_driver=True)]
    return spark.sparkContext.parallelize(bins, len(bins)).mapPartitions(   # a summary per
        lambda it: [_bin_summary(it, table, parse, site, files, seeds)]).collect()  # bin, no row


def on_driver(tasks: list[BeaconTask], bins: int) -> bool:
    """Whether the driver parses these tasks itself (`_written`): at most DRIVER_BYTES of
    text in one bin, or in files of DRIVER_FILE_BYTES each at least."""
    text = [_text_size(t) for t in tasks]
    return sum(text) <= DRIVER_BYTES and (bins == 1 or min(text, default=0) >= DRIVER_FILE_BYTES)


def _bin_summary(bins: Iterable[str], table: str, parse: Callable, site: Site,
                 files: ParquetFolder, seeds: SeedStore | None, on_driver: bool = False
                 ) -> dict:
    """Executor side of `_written`: `_parsed_files` of the bins, the rows written under
    `files`; the files' line counts summed, their extra counts summed, and the tasks (JSON)
    of the files with quarantined lines (parsed again for their quarantine: the parsers
    are deterministic). `on_driver`: run by the driver (its objects are not frozen out of
    the collector)."""
    from lassi.ingest.columnar import row_schema

    if not on_driver:
        freeze_imports()
    rows_schema = row_schema(table)
    sink = files.sink(rows_schema)
    out: dict = {c: 0 for c in _COUNTS} | {"extra": {}, "redo": []}
    for rows, parsed in _parsed_files(bins, parse, site, seeds):
        sink.add(_arrow_rows(rows, rows_schema))
        for task, _, st in parsed:
            for c in _COUNTS:
                out[c] += getattr(st, c)
            for k, v in st.extra.items():
                out["extra"][k] = out["extra"].get(k, 0) + v
            if st.lines_quarantined:
                out["redo"].append(json.dumps(_task_json(task)))
    sink.close()
    return out


def _parse_parallel(spark: SparkSession, site: Site, source: str, table: str, parse: Callable,
                    tasks: list[BeaconTask], time_col: str, owned: list[dt.date] | None,
                    seeds: SeedStore | None = None) -> IngestResult:
    """Parse files in parallel into `table` in ONE pass over the input: the result's rows
    (partitions by `time_col`'s day; whole partitions of `owned` days when given) are
    computed by the write itself, which also gives the files' line accounting: Spark's
    writer (the accounting observed on the wire rows), or for a local warehouse the
    executors' own Parquet files (`ExecutorRows`, `_written`: the accounting summed per
    bin). Its `after_write` gives the stats, and the quarantine, parsed again from only
    the files that had quarantined lines (the parsers are deterministic)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    obs = Observation(f"ingest {source}")
    fields = [f for f in schema_of(table).fields if f.name != "date"]
    stamps = tuple(f.name for f in fields if isinstance(f.dataType, TimestampType))

    written: dict[str, list[dict]] = {}   # "bins": the executors' own files' accounting

    def observed() -> DataFrame:
        # built here, not up front: a local warehouse never plans this frame, and these
        # Columns cost ~8 ms of JVM calls a layer
        s = F.from_json("aux", _STATS)
        is_s = F.col("tag") == "s"
        return _wire(spark, site, table, parse, tasks, seeds=seeds).observe(
            obs, *[F.sum(F.when(is_s, s[c])).alias(c) for c in _COUNTS],
            F.collect_list(F.when(is_s & (F.size(s["extra"]) > 0), F.to_json(s["extra"])))
            .alias("extra"),
            F.collect_list(F.when(is_s & (s["lines_quarantined"] > 0), s["task"]))
            .alias("redo"))

    def frame() -> DataFrame:
        cols = [F.timestamp_micros(f.name).alias(f.name) if f.name in stamps
                else F.col(f.name) for f in fields]
        return (observed().filter(F.col("tag") == "r").select(*cols)
                .withColumn("date", F.to_date(time_col)))

    def write_files(folder: str) -> None:
        codec = spark.conf.get(SPARK_CODEC_KEY, "snappy")    # parquet_codec maps it
        written["bins"] = _written(spark, site, table, parse, tasks,
                                   ParquetFolder(folder, time_col, stamps, codec), seeds)

    def after_write() -> tuple[ParseStats, Any]:
        if "bins" in written:
            bins = written["bins"]
            counts = [sum(w[c] for w in bins) for c in _COUNTS]
            extras = [w["extra"] for w in bins]
            redo = [t for w in bins for t in w["redo"]]
        else:
            m = obs.get
            counts = [int(m[c] or 0) for c in _COUNTS]
            extras = [json.loads(e) for e in m["extra"]]
            redo = list(m["redo"])
        extra: dict[str, int] = {}
        for e in extras:
            for k, v in e.items():
                extra[k] = extra.get(k, 0) + int(v)
        stats = ParseStats(source, *counts, extra)
        redo = [tuple(json.loads(t)) for t in redo]
        if not redo:
            return stats, []
        q = F.from_json("aux", _Q_FIELDS)
        qs = (_wire(spark, site, table, parse, redo, only_quarantine=True, seeds=seeds)
              .select(*[q[c].alias(c) for c in _Q_FIELDS.fieldNames()]).localCheckpoint())
        return stats, qs

    rows = ExecutorRows(frame, write_files)
    return IngestResult(ParseStats(source), [TableRows(table, rows, owned)], [], after_write)


def _parse_layer(spark: SparkSession, site: Site, source: str, tasks: list[BeaconTask],
                 warehouse: Path | None = None) -> IngestResult:
    """Parse one Beacon layer in parallel (see _parse_parallel): whole partitions of the
    tasks' days; a counter layer keeps its delta seeds under a local `warehouse`."""
    table, parse = BEACON[source]
    owned = sorted({d for _, _, d in tasks if d is not None})
    seeds = beacon_seeds.layer_store(warehouse, source) if source in SEEDED else None
    return _parse_parallel(spark, site, source, table, parse, tasks, "ts", owned, seeds)


def ingest_beacon(spark: SparkSession, wh: Warehouse, site: Site,
                  plan: dict[str, list[BeaconTask]], date: dt.date | None,
                  ledger: writer.Ledger | None = None,
                  progress: Callable[[ParseStats], None] | None = None) -> list[ParseStats]:
    """Ingest Beacon layers ({source: tasks}) into their tables, then one quarantine and
    ingest_log rewrite for all of them (or hand them to `ledger`), and `fwd_map`/`ost_map`
    for every date written. `progress(stats)` is called as each layer's table is written.
    The counter layers keep their delta seeds under a local warehouse (beacon_seeds:
    tomorrow's ingest does not parse today's files again), pruned after `date`'s ingest.

    Quarantine and log rows go to `date` (today when None), as for the other sources.
    """
    qdate = writer.ingest_day(date)
    now = writer.utc_now()
    site.nid_map  # noqa: B018 - computed once here, shipped to the executors with the site
    parts, dates = [], set()
    for source, tasks in plan.items():
        part = _parse_layer(spark, site, source, tasks, wh.local)
        dates |= set(writer.write_tables(wh, part.tables))
        parts.append(writer.finished(part))
        if progress is not None:
            progress(parts[-1].stats)
    if ledger is not None:
        for p in parts:
            ledger.add(p.source, [p.quarantined], [p.stats])
    else:
        writer.write_quarantine(wh, [p.quarantined for p in parts], qdate, list(plan), now)
        writer.write_log(wh, [p.stats for p in parts], qdate, now)
    writer.write_tables(wh, beacon_maps.map_tables(site, dates | ({date} if date else set())))
    if date is not None:
        beacon_seeds.prune(wh.local, date)
    return [p.stats for p in parts]


def scheduler_result(site: Site, source: str, files: list[Path], date: dt.date | None,
                     primary: set[Path] | None = None, tz: str | None = None) -> IngestResult:
    """Parse scheduler records into `app_run` rows (partitioned by their start day) that
    replace this source's rows of those days (and of `date`).

    With `date`, only runs starting that day are kept; `primary` (default: all files)
    names the files whose quarantined lines are kept — neighbouring days' files only
    complete launches that cross midnight. Each scheduler's records are read column-wise
    (`*_columnar`).
    """
    tz = tz or site.tz(source.replace("-", "_") if source != "beacon-job" else "beacon_job")
    table, qs, stats = SCHEDULER[source].parse_files(
        files, tz=tz, progress=lambda done, total: _progress(done, total, source), day=date)
    if source == "beacon-job":
        table = beacon_job_columnar.named_nodes(table, site.nid_map)
    out = _run_days(table, date)
    dates = sorted(set(pc.unique(out.column("date")).to_pylist()) | ({date} if date else set()))
    keep = {str(p) for p in (primary or files)}
    qs = [q for q in qs if q.file in keep]
    return IngestResult(stats, [TableRows("app_run", out, dates, SourceRows((source,)))], qs)


def _run_days(table: pa.Table, date: dt.date | None) -> pa.Table:
    """app_run columns with their `date` (the start's day, else the end's), only `date`'s
    when given."""
    day = pc.cast(pc.coalesce(table.column("start"), table.column("end")), pa.date32())
    table = table.append_column("date", day)
    keep = pc.is_valid(day) if date is None else pc.fill_null(
        pc.equal(day, pa.scalar(date, pa.date32())), False)
    if pc.all(keep).as_py():                # all kept: no copy of every column
        return table
    return table.filter(keep)


def ingest_scheduler(spark: SparkSession, wh: Warehouse, site: Site, source: str,
                     files: list[Path], date: dt.date | None, primary: set[Path] | None = None,
                     tz: str | None = None, ledger: writer.Ledger | None = None) -> ParseStats:
    """`scheduler_result` written: `app_run`, this source's quarantine and ingest_log rows
    of `date` (today when None; or handed to `ledger`)."""
    del spark
    with reader_allocator():                        # the parse's and the write's buffers
        part = scheduler_result(site, source, files, date, primary, tz)
        return writer.write_ingest(wh, source, [part], date, ledger=ledger)


def ingest_source(spark: SparkSession, wh: Warehouse, site: Site, source: str,
                  inputs: list[str], date: dt.date | None = None, tz: str | None = None,
                  ledger: writer.Ledger | None = None) -> ParseStats:
    """Ingest one source from files or directories (or a database URI for LMT); returns the
    line accounting. `tz` overrides the site's zone for sources with local times; with
    `ledger`, the quarantine and ingest_log rows are left to it (one write per run). The
    caller runs the date's data checks (`check_date`) when it has ingested all it will."""
    if source not in SOURCES:
        raise IngestError(f"unknown source {source!r}; known: {', '.join(SOURCES)}")
    if source in TOKIO:
        with paused_gc():
            result = TOKIO[source].read_inputs(site, inputs, date, tz)
        return writer.write_ingest(wh, source, result, date, ledger=ledger)
    files = list(iter_files(inputs))
    if not files:
        raise IngestError(f"no input files under {' '.join(inputs)}")
    if source in BEACON:
        tasks = beacon_tasks(files, date)
        if not tasks:
            raise IngestError(f"no {source} files for {date} under {' '.join(inputs)}")
        return ingest_beacon(spark, wh, site, {source: tasks}, date, ledger)[0]
    if source == "lustre":
        return ingest_lustre(spark, wh, site, files, writer.ingest_day(date), ledger)
    return ingest_scheduler(spark, wh, site, source, files, date, tz=tz, ledger=ledger)


def _day_files(folder: Path, day: dt.date, fmt: Callable[[dt.date], str]) -> list[Path]:
    return sorted(p for p in folder.rglob(fmt(day) + "*") if p.is_file()) if folder.is_dir() else []


def ingest_raw(spark: SparkSession, wh: Warehouse, site: Site, raw: Path, date: dt.date,
               progress: Callable[[ParseStats], None] | None = None,
               warn: Callable[[str], None] | None = None) -> list[ParseStats]:
    """Everything under a simulator/collector folder for one date (and the next day's
    first captures, which close the date's last window); Beacon layers
    `beacon/<layer>/*/<date>.log[.gz]` with the previous day's files as delta seeds. The
    quarantine and ingest_log rows of every source are written once, at the end, then the
    date's `data_check` rows (`lassi.ingest.data_checks`; `warn(line)` gets each warning).
    `progress(stats)` is called as each source's tables are written."""
    raw = Path(raw)
    if not raw.is_dir():
        raise IngestError(f"no such raw folder: {raw}")
    day = lambda d: d.isoformat()  # noqa: E731
    nxt, prev = date + dt.timedelta(days=1), date - dt.timedelta(days=1)
    out: list[ParseStats] = []

    def add(*stats: ParseStats) -> None:
        for st in stats:
            out.append(st)
            if progress is not None:
                progress(st)

    ledger = writer.Ledger()
    lustre = _day_files(raw / "lustre", date, day) + _day_files(raw / "lustre", nxt, day)
    if lustre:
        add(ingest_source(spark, wh, site, "lustre", [str(p) for p in lustre], date,
                          ledger=ledger))
    plan = [("pbs", raw / "pbs", lambda d: d.strftime("%Y%m%d")), ("alps", raw / "alps", day),
            ("slurm", raw / "slurm", day), ("beacon-job", raw / "beacon" / "jobs", day)]
    for source, folder, fmt in plan:
        main = _day_files(folder, date, fmt)
        if not main:
            continue
        ctx = _day_files(folder, prev, fmt) + main + _day_files(folder, nxt, fmt)
        add(ingest_scheduler(spark, wh, site, source, ctx, date, primary=set(main),
                             ledger=ledger))
    layers = {}
    for layer in BEACON:
        main = _day_files(raw / "beacon" / layer, date, day)
        if main:
            layers[layer] = beacon_tasks(main, date)
    if layers:
        out += ingest_beacon(spark, wh, site, layers, date, ledger, progress)
    add(*_ingest_tokio_raw(spark, wh, site, raw, date, ledger))
    if not out:
        raise IngestError(f"nothing for {date} under {raw}")
    ledger.write(wh, date)
    check_date(wh, site, date, warn)
    return out


def check_date(wh: Warehouse, site: Site, date: dt.date | None,
               warn: Callable[[str], None] | None) -> None:
    """The date's data checks (none without a date); each warning line to `warn`."""
    if date is None:
        return
    for c in data_checks.run_checks(wh, site, date):
        if c.warning is not None and warn is not None:
            warn(c.warning)


def _ingest_tokio_raw(spark: SparkSession, wh: Warehouse, site: Site, raw: Path,
                      date: dt.date, ledger: writer.Ledger) -> list[ParseStats]:
    """TOKIO sources of a raw folder for `date`: `lmt/<fs>/<date>.sqlite3`,
    `lfs-df/<date>*`, `lctl-dl/<date>*` and a Darshan repository day `darshan/YYYY/M/D/`."""
    out = []
    for source, folder in (("lmt", raw / "lmt"), ("lfs-df", raw / "lfs-df"),
                           ("lctl-dl", raw / "lctl-dl")):
        files = _day_files(folder, date, lambda d: d.isoformat())
        if files:
            out.append(ingest_source(spark, wh, site, source, [str(f) for f in files], date,
                                     ledger=ledger))
    logs = raw / "darshan" / str(date.year) / str(date.month) / str(date.day)
    if logs.is_dir() and any(logs.iterdir()):
        out.append(ingest_source(spark, wh, site, "darshan", [str(logs)], date,
                                 ledger=ledger))
    return out
