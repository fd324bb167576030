"""The executors' own Parquet files (lassi.ingest.parquet_sink) against Spark's writer: the
day split, buffering, a failed task attempt, and the same tables either way (and with a
single small bin parsed by the driver or by a Spark task) for Lustre statistics over
midnight and every Beacon layer."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lassi.ingest import runner, writer
from lassi.ingest.parquet_sink import US_PER_DAY, DaySink, ParquetFolder

from lassi.core import frames
from lassi.core.config import load_site
from lassi.core.warehouse import Warehouse

ROWS = pa.schema([pa.field("host", pa.string()), pa.field("ts", pa.int64()),
                  pa.field("n", pa.int64()), pa.field("h", pa.list_(pa.int64()))])
DAY = (dt.date(2018, 2, 25) - dt.date(1970, 1, 1)).days      # day number of 2018-02-25


def _rows(days: list[int], start: int = 0) -> pa.Table:
    """One row per entry of `days`, at 01:00 of that day, n counting from `start`."""
    return pa.table({"host": [f"h{k % 3}" for k in range(len(days))],
                     "ts": [d * US_PER_DAY + 3_600_000_000 for d in days],
                     "n": list(range(start, start + len(days))),
                     "h": [[k, k + 1] for k in range(len(days))]}, schema=ROWS)


def test_rows_go_to_one_file_per_day(tmp_path):
    spec = ParquetFolder(str(tmp_path), "ts", ("ts",), "zstd")
    sink = DaySink(spec, ROWS, part=3, attempt=11)
    sink.BUFFER_ROWS = 4                      # several row groups per file
    sink.add(_rows([DAY] * 5))
    sink.add(_rows([DAY, DAY + 1, DAY, DAY + 1], start=5))
    sink.add(_rows([]))
    sink.close()
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.parquet"))
    assert files == ["date=2018-02-25/part-00003.parquet", "date=2018-02-26/part-00003.parquet"]
    first = pq.read_table(tmp_path / files[0])
    assert first.column("n").to_pylist() == [0, 1, 2, 3, 4, 5, 7]       # line order kept
    assert first.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert first.column("ts")[0].as_py() == dt.datetime(2018, 2, 25, 1, tzinfo=dt.timezone.utc)
    assert first.column("h").to_pylist()[5] == [0, 1]
    assert pq.read_table(tmp_path / files[1]).column("n").to_pylist() == [6, 8]
    meta = pq.ParquetFile(tmp_path / files[0]).metadata
    assert meta.num_row_groups == 2 and meta.row_group(0).column(1).compression == "ZSTD"
    assert not list((tmp_path / "_tmp").rglob("*.parquet"))


def test_a_failed_attempt_leaves_no_rows_and_a_retry_replaces_them(tmp_path):
    spec = ParquetFolder(str(tmp_path), "ts", ("ts",))
    failed = DaySink(spec, ROWS, part=0, attempt=1)
    failed.BUFFER_ROWS = 1                    # its rows are on disk, but under _tmp/
    failed.add(_rows([DAY] * 3))
    assert not list(tmp_path.glob("date=*"))  # killed here: close() never runs
    for attempt in (2, 3):                    # a retry, then a speculative copy of it
        sink = DaySink(spec, ROWS, part=0, attempt=attempt)
        sink.add(_rows([DAY] * 2))
        sink.close()
    [only] = tmp_path.glob("date=*/*.parquet")
    assert pq.read_table(only).num_rows == 2


def test_a_large_day_is_written_as_two_files_at_once(tmp_path, monkeypatch):
    """More than ROWS_PER_FILE rows of a day: two files (lanes) written by two threads,
    each in line order; a flush of fewer rows, or a small day, goes to one file."""
    monkeypatch.setattr(frames, "ROWS_PER_FILE", 4)
    sink = DaySink(ParquetFolder(str(tmp_path), "ts", ("ts",)), ROWS, part=2, attempt=0)
    sink.BUFFER_ROWS = 7
    sink.add(_rows([DAY] * 9))                    # flushed: 9 rows cut 5 + 4
    sink.add(_rows([DAY, DAY, DAY + 1], start=9))  # at close: 2 rows, one file's worth
    sink.close()
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.parquet"))
    assert files == ["date=2018-02-25/part-00002-1.parquet", "date=2018-02-25/part-00002.parquet",
                     "date=2018-02-26/part-00002.parquet"]
    lanes = [pq.read_table(tmp_path / f).column("n").to_pylist() for f in files]
    assert lanes == [[5, 6, 7, 8], [0, 1, 2, 3, 4, 9, 10], [11]]
    assert [pq.ParquetFile(tmp_path / f).metadata.num_row_groups for f in files] == [1, 2, 1]
    assert not list((tmp_path / "_tmp").rglob("*.parquet"))


def test_rows_without_a_time_are_refused(tmp_path):
    sink = DaySink(ParquetFolder(str(tmp_path), "ts", ("ts",)), ROWS, part=0, attempt=0)
    rows = _rows([DAY, DAY]).set_column(1, "ts", pa.array([None, 1], pa.int64()))
    with pytest.raises(ValueError, match="1 rows without ts"):
        sink.add(rows)


# --- Spark's writer and the executors' files give the same tables -----------------------------
def _both_ways(spark, tmp_path: Path, build, monkeypatch) -> tuple[Warehouse, ...]:
    """`build()` (an IngestResult of executor-parsed rows) written by Spark's writer into
    warehouse `spark/`, as the executors' own files into `files/` (a single small bin parsed
    by the driver, `runner.DRIVER_BYTES`) and into `job/` (every bin a Spark task); the same
    accounting."""
    out, stats = [], []
    for name in ("spark", "files", "job"):
        monkeypatch.setattr(runner, "DRIVER_BYTES", -1 if name == "job" else 64 << 20)
        wh = Warehouse(spark, str(tmp_path / name))
        part = build()
        [t] = part.tables
        if name == "spark":
            wh.write(t.rows.frame(), t.table, t.dates)
        else:
            wh.write_files(t.rows.write_files, t.table, t.dates)
        stats.append(writer.finished(part).stats)
        out.append(wh)
    assert stats[0] == stats[1] == stats[2] and stats[0].rows > 0
    return tuple(out)


def _same(a: Warehouse, *others: Warehouse, table: str, days: int) -> None:
    from pyspark.testing import assertDataFrameEqual

    for b in others:
        assert a.dates(table) == b.dates(table) and len(a.dates(table)) == days
        assertDataFrameEqual(a.read(table), b.read(table))
        assert not (Path(b.root) / "_staging").exists() or not any(
            (Path(b.root) / "_staging").rglob("*.parquet"))


def test_lustre_captures_over_midnight_either_way(spark, archer_day, tmp_path, monkeypatch):
    """One server's captures of the shared ARCHER day with the next day's first ones: rows
    on two dates."""
    site = load_site("archer", nodes=archer_day.nodes)
    server = sorted((archer_day.raw / "lustre").glob("*-oss*"))[0]
    tasks = [(str(f), None, None) for f in sorted(server.iterdir())]
    assert len(tasks) == 2
    whs = _both_ways(spark, tmp_path, lambda: runner._parse_parallel(
        spark, site, "lustre", "raw_lustre_stats", runner._parse_lustre, tasks,
        "snapshot_time", None), monkeypatch)
    _same(*whs, table="raw_lustre_stats", days=2)


def test_every_beacon_layer_either_way(spark, tmp_path, monkeypatch):
    """The hand-made Beacon day of test_beacon_ingest (a seed, bad lines, lists, maps); its
    one-file layers are parsed by the driver or by a Spark task."""
    from tests.test_beacon_ingest import D, _hand_raw

    site = load_site("taihulight")
    _hand_raw(tmp_path / "raw")
    single = 0
    for layer, (table, _) in runner.BEACON.items():
        files = sorted((tmp_path / "raw" / "beacon" / layer).rglob(f"{D}.log*"))
        tasks = runner.beacon_tasks(files, D)
        single += len(runner._task_bins(spark, tasks)) == 1
        whs = _both_ways(spark, tmp_path / layer,
                         lambda tasks=tasks, layer=layer: runner._parse_layer(
                             spark, site, layer, tasks), monkeypatch)
        _same(*whs, table=table, days=1)
    assert single >= 2


def test_the_driver_parses_one_bin_or_a_few_large_files(tmp_path, monkeypatch):
    """`runner.on_driver`: one bin of at most DRIVER_BYTES, or files of DRIVER_FILE_BYTES
    each (its block threads cut each in two) up to DRIVER_BYTES in all; many small files
    and more text go to one Spark task per core. A gzip file counts ten times its size."""
    monkeypatch.setattr(runner, "DRIVER_BYTES", 10_000)
    monkeypatch.setattr(runner, "DRIVER_FILE_BYTES", 2_000)

    def tasks(*sizes: int, suffix: str = ".log") -> list:
        out = []
        for k, size in enumerate(sizes):
            path = tmp_path / f"{len(sizes)}-{k}-{size}{suffix}"
            path.write_bytes(b"x" * size)
            out.append((str(path), None, None))
        return out

    assert runner.on_driver(tasks(500), 1)
    assert runner.on_driver(tasks(300, 400, 500), 1)
    assert runner.on_driver(tasks(3_000, 4_000), 2)
    assert not runner.on_driver(tasks(3_000, 1_000), 2)         # a small file among them
    assert not runner.on_driver(tasks(*[300] * 20), 2)          # the LWFS clients' many
    assert not runner.on_driver(tasks(6_000, 6_000), 2)         # more text than the bound
    assert not runner.on_driver(tasks(20_000), 1)
    assert not runner.on_driver(tasks(1_500, suffix=".gz"), 1)  # 15,000 bytes of text
