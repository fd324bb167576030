"""Driver-side rows -> Spark DataFrame through Arrow (one buffer per column, no per-row
Python work on the JVM side).

`spark.createDataFrame(list_of_tuples, schema)` verifies and converts every field of every
row in Python and pickles the rows: about 30 µs a row, so a day of LMT samples (280k rows)
spent 8 s there. `local_frame` builds one Arrow array per column with the declared types
and hands the table over in one piece; values Arrow cannot take as the declared type (text
in a number column, an out-of-range integer) and nulls in a non-nullable column raise
ValueError, as the row-by-row verification did.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructType,
    TimestampType,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_SCALARS: dict[type, pa.DataType] = {
    StringType: pa.string(), LongType: pa.int64(), IntegerType: pa.int32(),
    DoubleType: pa.float64(), BooleanType: pa.bool_(), DateType: pa.date32(),
    TimestampType: pa.timestamp("us", tz="UTC"),   # naive datetimes are UTC (session zone)
}


def arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type Spark reads back as `t` (the types lassi's schemas use)."""
    if isinstance(t, ArrayType):
        return pa.list_(arrow_type(t.elementType))
    try:
        return _SCALARS[type(t)]
    except KeyError:
        raise TypeError(f"no Arrow mapping for {t.simpleString()}") from None


def _array(values: Sequence, t: DataType) -> pa.Array:
    """One column; a string column takes any value as its text, as Spark's own conversion
    of Python rows does."""
    try:
        return pa.array(values, type=arrow_type(t))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        if not isinstance(t, StringType):
            raise
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def arrow_table(rows: Sequence[Sequence | dict] | pa.Table, schema: StructType) -> pa.Table:
    """Tuples in schema order (or dicts by field name) as an Arrow table of the schema's
    types; an Arrow table is checked to have them (columns and types, in order)."""
    if isinstance(rows, pa.Table):
        want = pa.schema([pa.field(f.name, arrow_type(f.dataType)) for f in schema.fields])
        if rows.schema.remove_metadata() != want:
            raise ValueError(f"rows are {rows.schema}, the schema {want}")
        return rows
    n = len(schema.fields)
    if rows and isinstance(rows[0], dict):
        names = schema.fieldNames()
        rows = [tuple(r.get(k) for k in names) for r in rows]
    cols = list(zip(*rows, strict=True)) if rows else [()] * n
    if len(cols) != n:
        raise ValueError(f"rows have {len(cols)} fields, the schema {n}")
    arrays = []
    for f, values in zip(schema.fields, cols, strict=True):
        if isinstance(f.dataType, (LongType, IntegerType)) and any(
                isinstance(v, float) for v in values):     # Arrow would truncate them
            raise ValueError(f"field {f.name} ({f.dataType.simpleString()}): float values")
        try:
            arr = _array(values, f.dataType)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError) as exc:
            raise ValueError(f"field {f.name} ({f.dataType.simpleString()}): {exc}") from None
        if not f.nullable and arr.null_count:
            raise ValueError(f"field {f.name}: not nullable, but {arr.null_count} rows have None")
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, names=schema.fieldNames())


def empty_frame(spark: SparkSession, schema: StructType) -> DataFrame:
    """No rows of `schema`, as a relation the optimizer knows to be empty (an always-false
    filter becomes an empty LocalRelation), so the joins, unions and aggregates a query
    builds on it are pruned at planning instead of run; `createDataFrame([])` alone is an
    RDD the optimizer cannot see into."""
    from pyspark.sql import functions as F

    return spark.createDataFrame([], schema).where(F.lit(False))


def local_frame(spark: SparkSession, rows: Sequence[Sequence | dict] | pa.Table,
                schema: StructType
                ) -> DataFrame:
    """Driver-side rows (tuples in schema order, or dicts) as a DataFrame of exactly
    `schema`."""
    if len(rows) == 0:
        return empty_frame(spark, schema)
    return spark.createDataFrame(arrow_table(rows, schema), schema=schema)


# the session setting that names the Parquet codec of Spark's writes (lassi's own files follow it)
SPARK_CODEC_KEY = "spark.sql.parquet.compression.codec"
# pyarrow's names of the codecs that setting may name
PARQUET_CODECS = {"none": "none", "uncompressed": "none", "snappy": "snappy", "gzip": "gzip",
                  "zstd": "zstd", "brotli": "brotli", "lz4_raw": "lz4"}


def parquet_codec(spark_codec: str | None) -> str:
    """pyarrow's codec for Spark's codec name (snappy, Spark's default, when unknown)."""
    return PARQUET_CODECS.get((spark_codec or "snappy").lower(), "snappy")


WRITE_THREADS = 2               # Parquet files written at once by the driver
ROWS_PER_FILE = 20_000          # a date's rows per file before it is cut in several


def file_slices(rows: pa.Table) -> list[pa.Table]:
    """A day's rows cut into the files written at once: one slice up to ROWS_PER_FILE
    rows, else up to WRITE_THREADS of about equal size (views, no copy)."""
    k = max(1, min(WRITE_THREADS, -(-rows.num_rows // ROWS_PER_FILE)))
    step = -(-rows.num_rows // k)
    return [rows.slice(i * step, step) for i in range(k)]


DISTINCT_SAMPLE = 1000          # values of a text column looked at for its dictionary


def dictionary_columns(rows: pa.Table) -> list[str]:
    """The columns (Parquet paths) written with a dictionary: all but the texts whose
    first DISTINCT_SAMPLE values are mostly distinct (job and app ids; a list's items, such
    as a job's nodes, repeat across rows and keep theirs). Such a column's dictionary is as
    long as the column: the PBS site-scale day's 50k-row files took 35 ms and 1.61 MB with
    dictionaries for its ids, 30 ms and 1.41 MB without."""
    out = []
    for f in rows.schema:
        if pa.types.is_list(f.type):
            out.append(f"{f.name}.list.element")
            continue
        values = rows.column(f.name).slice(0, DISTINCT_SAMPLE)
        valid = len(values) - values.null_count
        if (pa.types.is_string(f.type) and valid > 1
                and pc.count_distinct(values).as_py() > valid // 2):
            continue
        out.append(f.name)
    return out


def statistics_columns(schema: pa.Schema) -> list[str]:
    """The columns written with Parquet min/max statistics: all but lists, whose items'
    bounds prune no query Spark pushes down (`array_contains` is not pushed) and cost a
    PBS file's node lists 3.5 of its 30 ms."""
    return [f.name for f in schema if not pa.types.is_list(f.type)]


def write_date_files(rows: pa.Table, folder: str | Path, codec: str = "snappy") -> None:
    """Rows with a `date` column (`arrow_table` of a warehouse schema) as Parquet files
    `folder/date=YYYY-MM-DD/part-0000k.parquet` without that column, as Spark's partitioned
    write lays them out (a staged write of `Warehouse.write_rows`). A date of more than
    ROWS_PER_FILE rows is cut into up to WRITE_THREADS files written at once (encoding
    and compression run outside the GIL): a 186k-row Beacon job log, 0.11 s -> 0.07 s."""
    dates = rows.column("date")
    if dates.null_count:
        raise ValueError(f"{dates.null_count} rows without a date")
    data = rows.drop_columns(["date"])
    files = []
    days = pc.unique(dates).to_pylist()
    for d in days:
        part = Path(folder) / f"date={d.isoformat() if isinstance(d, dt.date) else d}"
        part.mkdir(parents=True, exist_ok=True)
        day = data if len(days) == 1 else data.filter(pc.equal(dates, pa.scalar(d, dates.type)))
        files += [(t, part / f"part-{i:05d}.parquet") for i, t in enumerate(file_slices(day))]
    options = {"compression": codec, "use_dictionary": dictionary_columns(data),
               "write_statistics": statistics_columns(data.schema)}
    if len(files) == 1:
        pq.write_table(*files[0], **options)
        return
    with ThreadPoolExecutor(WRITE_THREADS) as pool:
        for done in [pool.submit(pq.write_table, t, path, **options) for t, path in files]:
            done.result()
