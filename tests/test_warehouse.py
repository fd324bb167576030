"""Warehouse: partitioned by date, reruns replace exactly their date, swaps are atomic."""

import datetime as dt

import pytest
from pyspark.testing import assertDataFrameEqual

from lassi.core.warehouse import Warehouse
from lassi.core.warehouse_fs import HadoopFiles, LocalFiles

D1, D2 = dt.date(2024, 1, 1), dt.date(2024, 1, 2)
NOW = dt.datetime(2024, 1, 3)


def _through(wh: Warehouse, files: str) -> Warehouse:
    """The warehouse with its swaps through Python's calls (a local root's default) or
    through Hadoop's FileSystem API (any other root's)."""
    assert isinstance(wh._files, LocalFiles)
    if files == "hadoop":
        wh._files = HadoopFiles(wh._jvm, wh._fs)
    return wh


@pytest.fixture(params=["local", "hadoop"])
def warehouse(request, spark, tmp_path):
    """An empty warehouse in a fresh directory, once per way to its files."""
    return _through(Warehouse(spark, str(tmp_path / "wh")), request.param)


def q(line: int, d: dt.date, reason: str = "bad") -> tuple:
    return ("lustre", "f.txt", line, f"raw {line}", reason, NOW, d)


def test_rerun_of_a_date_leaves_one_copy_and_other_dates_alone(warehouse):
    warehouse.write_rows([q(1, D1), q(2, D1), q(3, D2)], "quarantine")
    warehouse.write_rows([q(1, D1), q(2, D1)], "quarantine")     # rerun of D1 only
    assert warehouse.dates("quarantine") == [D1, D2]
    got = warehouse.read("quarantine").orderBy("line_no")
    want = warehouse.spark.createDataFrame([q(1, D1), q(2, D1), q(3, D2)], got.schema)
    assertDataFrameEqual(got, want)


def test_rerun_that_finds_nothing_empties_its_date(warehouse):
    warehouse.write_rows([q(1, D1), q(3, D2)], "quarantine")
    warehouse.write_rows([], "quarantine", dates=[D1])
    assert warehouse.dates("quarantine") == [D2]
    assert warehouse.read("quarantine", [D1]).count() == 0


def test_clear_empties_its_dates_like_an_empty_write(warehouse, tmp_path):
    warehouse.write_rows([q(1, D1), q(3, D2)], "quarantine")
    assert warehouse.clear("quarantine", [D1, dt.date(2024, 1, 9)]) == [D1, dt.date(2024, 1, 9)]
    assert warehouse.dates("quarantine") == [D2]
    assert warehouse.read("quarantine", [D2]).count() == 1
    assert not any((tmp_path / "wh" / "_trash" / "quarantine").iterdir())
    assert warehouse.clear("node_window", [D1]) == [D1]    # nothing there: nothing created
    assert not (tmp_path / "wh" / "node_window").exists()
    with pytest.raises(KeyError, match="unknown table"):
        warehouse.clear("no_such_table", [D1])


def test_reading_an_empty_table_gives_its_schema(warehouse):
    df = warehouse.read("node_window", [D1])
    assert df.count() == 0 and "read_kb" in df.columns and "date" in df.columns


def test_a_table_reads_back_in_its_declared_columns_and_types(warehouse):
    """read() selects nothing when the files give the declared order (the partition column
    `date` last, as every table declares it): the frame has exactly the table's schema."""
    from lassi.core.schemas import TABLES, schema_of

    assert [t for t in TABLES if schema_of(t).fieldNames()[-1] != "date"] == []
    warehouse.write_rows([q(1, D1), q(2, D2)], "quarantine")
    for dates in (None, [D1], [D1, D2]):
        df = warehouse.read("quarantine", dates)
        assert [(f.name, f.dataType) for f in df.schema] == \
            [(f.name, f.dataType) for f in schema_of("quarantine")]


class _KilledMidSwap(Warehouse):
    """Dies after moving the old partition aside, before the new one is in place."""

    def _swap(self, table, d, staged, token):
        live = self.partition_path(table, d)
        trash = f"{self.root}/_trash/{table}/date={d.isoformat()}.{token}"
        self._files.mkdirs(f"{self.root}/_trash/{table}")
        self._files.rename(live, trash)
        raise KeyboardInterrupt("killed")


@pytest.mark.parametrize("files", ["local", "hadoop"])
def test_killed_write_leaves_old_partition(spark, tmp_path, files):
    root = str(tmp_path / "wh")
    _through(Warehouse(spark, root), files).write_rows([q(1, D1), q(2, D1)], "quarantine")
    with pytest.raises(KeyboardInterrupt):
        _through(_KilledMidSwap(spark, root), files).write_rows([q(9, D1, "new")],
                                                                "quarantine")
    fresh = _through(Warehouse(spark, root), files)
    rows = sorted(r.line_no for r in fresh.read("quarantine", [D1]).collect())
    assert rows == [1, 2]
    fresh.write_rows([q(9, D1, "new")], "quarantine")    # and the next write works
    assert [r.line_no for r in fresh.read("quarantine", [D1]).collect()] == [9]


def test_unknown_table_and_bad_date(warehouse):
    with pytest.raises(KeyError, match="unknown table"):
        warehouse.read("no_such_table")
    with pytest.raises(ValueError, match="not a date"):
        warehouse.read("quarantine", ["2024-13-01"])


def test_driver_rows_into_a_local_warehouse_start_no_spark_job(spark, warehouse):
    """write_rows writes the Parquet files itself (lassi.core.frames.write_date_files):
    no Spark job, and the table reads back as Spark's own write of the same rows."""
    from lassi.core.frames import local_frame
    from lassi.core.schemas import schema_of

    rows = [q(1, D1), ("lustre", "f.txt", 2, None, "bad", NOW, D1), q(3, D2)]
    sc = spark.sparkContext
    sc.setJobGroup("write_rows", "driver rows")
    try:
        assert warehouse.write_rows(rows, "quarantine") == [D1, D2]
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    assert sc.statusTracker().getJobIdsForGroup("write_rows") == []
    files = sorted(p.relative_to(warehouse.local).as_posix()
                   for p in warehouse.local.rglob("*.parquet"))
    assert files == ["quarantine/date=2024-01-01/part-00000.parquet",
                     "quarantine/date=2024-01-02/part-00000.parquet"]
    import pyarrow.parquet as pq  # the session's codec, as Spark's writes

    meta = pq.ParquetFile(warehouse.local / files[0]).metadata
    codec = spark.conf.get("spark.sql.parquet.compression.codec")
    assert meta.row_group(0).column(0).compression == codec.upper()
    by_spark = Warehouse(spark, str(warehouse.local.parent / "by_spark"))
    by_spark.write(local_frame(spark, rows, schema_of("quarantine")), "quarantine")
    assertDataFrameEqual(warehouse.read("quarantine"), by_spark.read("quarantine"))
    got = warehouse.read("quarantine", [D1]).orderBy("line_no").collect()
    assert [(r.raw, r.ingested_at) for r in got] == [("raw 1", NOW), (None, NOW)]


def test_collected_results_are_written_as_spark_would(spark, warehouse):
    """write_collected: a DataFrame with its columns in another order and an int where the
    schema says bigint is written by the driver (only the collect is a Spark job), reads
    back equal to Spark's own write of the same rows, replaces its dates on a rerun and
    empties them when the result is empty."""
    from pyspark.sql import functions as F

    rows = [q(1, D1), ("lustre", "f.txt", 2, None, "bad", NOW, D1), q(3, D2)]
    df = (spark.createDataFrame(rows, warehouse.read("quarantine").schema)
          .withColumn("line_no", F.col("line_no").cast("int"))
          .select("date", "reason", "line_no", "raw", "file", "source", "ingested_at"))
    assert warehouse.write_collected(df, "quarantine", [D1, D2]) == 3
    by_spark = Warehouse(spark, str(warehouse.local.parent / "by_spark"))
    by_spark.write(df, "quarantine", [D1, D2])
    assertDataFrameEqual(warehouse.read("quarantine"), by_spark.read("quarantine"))
    assert warehouse.write_collected(df.filter("line_no = 3"), "quarantine", [D1, D2]) == 1
    assert [r.line_no for r in warehouse.read("quarantine").collect()] == [3]
    assert warehouse.write_collected(df.limit(0), "quarantine", [D2]) == 0
    assert warehouse.dates("quarantine") == []


def test_what_is_built_on_an_absent_date_is_pruned(warehouse):
    """An absent date reads as an empty relation the optimizer sees: a join with it plans
    as an empty relation (no scan of the present date), and its aggregate still gives the
    one row SQL says an aggregate of nothing gives."""
    warehouse.write_rows([q(1, D1), q(2, D1)], "quarantine")
    absent = warehouse.read("quarantine", [D2])
    joined = warehouse.read("quarantine", [D1]).join(absent.select("line_no"), "line_no")
    plan = joined._jdf.queryExecution().optimizedPlan().toString()
    assert plan.startswith("LocalRelation <empty>") and "parquet" not in plan.lower(), plan
    assert joined.count() == 0
    assert [tuple(r) for r in absent.selectExpr("count(*)", "max(line_no)").collect()] == \
        [(0, None)]


def test_driver_rows_are_checked_against_the_schema(warehouse):
    with pytest.raises(ValueError, match="line_no"):
        warehouse.write_rows([("lustre", "f.txt", "one", "raw", "bad", NOW, D1)],
                             "quarantine")
    with pytest.raises(ValueError, match="reason: not nullable"):
        warehouse.write_rows([("lustre", "f.txt", 1, "raw", None, NOW, D1)], "quarantine")
    assert warehouse.dates("quarantine") == []


def test_a_relative_root_gives_the_writers_an_absolute_folder(spark, tmp_path):
    """Executors do not share the driver's working folder: `write_files` hands them the
    staging folder as an absolute path, where the swap then finds it."""
    import os
    from pathlib import Path

    from lassi.core.frames import arrow_table, write_date_files
    from lassi.core.schemas import schema_of

    jvm_cwd = spark.sparkContext._jvm.System.getProperty("user.dir")
    wh = Warehouse(spark, os.path.relpath(tmp_path / "wh", jvm_cwd))
    assert not Path(wh.root).is_absolute()
    seen = []

    def write(folder: str) -> None:
        seen.append(folder)
        write_date_files(arrow_table([q(1, D1)], schema_of("quarantine")), folder)

    assert wh.write_files(write, "quarantine") == [D1]
    assert Path(seen[0]).is_absolute()
    assert Path(seen[0]).resolve().is_relative_to(tmp_path.resolve() / "wh" / "_staging")
    assert wh.read("quarantine").count() == 1
    assert (tmp_path / "wh" / "quarantine" / f"date={D1}").is_dir()


def test_local_and_hadoop_files_answer_alike(spark, tmp_path):
    """The swaps' filesystem calls give the same answers through Python as through
    Hadoop's API on the same folders, Hadoop's checksum files (written by Spark's own
    write) hidden from listings by both."""
    wh = Warehouse(spark, str(tmp_path / "wh"))
    rows = spark.createDataFrame([q(1, D1), q(2, D2)], wh.read("quarantine").schema)
    wh.write(rows, "quarantine")
    part = wh.partition_path("quarantine", D1)
    assert any(p.name.endswith(".crc") for p in (tmp_path / "wh" / "quarantine" /
                                                    f"date={D1}").iterdir())
    local, hadoop = wh._files, HadoopFiles(wh._jvm, wh._fs)
    assert isinstance(local, LocalFiles)
    root = wh.root
    for fs in (local, hadoop):
        assert sorted(fs.ls(wh.table_path("quarantine"))) == [f"date={D1}", f"date={D2}"]
        assert fs.ls(f"{root}/nothing") == []
        assert fs.exists(part) and not fs.exists(f"{root}/nothing")
        assert fs.local_path(root) == str((tmp_path / "wh").resolve())
    assert sorted(local.ls(part)) == sorted(hadoop.ls(part))
    assert all(n.startswith("part-") for n in local.ls(part))
    for name, fs in (("l", local), ("h", hadoop)):
        a, b = f"{root}/x{name}/a/b", f"{root}/x{name}/c"
        fs.mkdirs(a)
        fs.mkdirs(a)                                          # again: no error
        assert fs.exists(a)
        assert fs.rename(f"{root}/x{name}/a", b) and fs.exists(f"{b}/b")
        assert fs.delete(f"{root}/x{name}") and not fs.exists(b)
        assert not fs.delete(f"{root}/x{name}")
    with pytest.raises(ValueError, match="not under the warehouse root"):
        local.exists("/elsewhere")


def test_a_large_date_is_written_as_files_at_once(warehouse, monkeypatch):
    """write_rows cuts a date of more than ROWS_PER_FILE rows into WRITE_THREADS files
    written at once; together they hold every row once, in order."""
    import pyarrow.parquet as pq

    from lassi.core import frames

    monkeypatch.setattr(frames, "ROWS_PER_FILE", 2)
    rows = [q(k, D1) for k in range(5)] + [q(9, D2)]
    assert warehouse.write_rows(rows, "quarantine") == [D1, D2]
    d1 = sorted((warehouse.local / "quarantine" / f"date={D1}").glob("*.parquet"))
    assert [p.name for p in d1] == ["part-00000.parquet", "part-00001.parquet"]
    assert [pq.read_table(p).column("line_no").to_pylist() for p in d1] == [[0, 1, 2], [3, 4]]
    assert len(list((warehouse.local / "quarantine" / f"date={D2}").glob("*.parquet"))) == 1
    got = warehouse.read("quarantine").orderBy("line_no").collect()
    assert [(r.line_no, r.date) for r in got] == [(k, D1) for k in range(5)] + [(9, D2)]


def test_driver_files_keep_dictionaries_for_repeated_texts_only(tmp_path):
    """write_date_files writes a text column without a dictionary when its first values
    are mostly distinct (ids); repeated texts, lists of names and numbers keep theirs.
    Lists get no min/max statistics."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lassi.core.frames import dictionary_columns, write_date_files

    n = 3000
    rows = pa.table({"job_id": [f"{k}.sdb" for k in range(n)],
                     "user": [f"u{k % 7}" for k in range(n)],
                     "nodes": [[f"nid{(k + j) % 50:05d}" for j in range(3)] for k in range(n)],
                     "n_nodes": [k % 5 for k in range(n)],
                     "date": [D1] * n})
    assert dictionary_columns(rows.drop_columns(["date"])) == ["user", "nodes.list.element",
                                                               "n_nodes"]
    write_date_files(rows, tmp_path)
    meta = pq.ParquetFile(tmp_path / f"date={D1}" / "part-00000.parquet").metadata
    dicts = [meta.row_group(0).column(i).has_dictionary_page for i in range(4)]
    assert dicts == [False, True, True, True]
    stats = [meta.row_group(0).column(i).is_stats_set for i in range(4)]
    assert stats == [True, True, False, True]                 # none for the list's items
    assert pq.read_table(tmp_path / f"date={D1}").column("job_id").to_pylist() == \
        rows.column("job_id").to_pylist()
