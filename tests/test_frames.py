"""lassi.core.frames: driver rows through Arrow give the DataFrame Spark's own conversion
gives, and refuse what it refused."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql.types import (
    ArrayType,
    DateType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lassi.core.frames import local_frame

SCHEMA = StructType([
    StructField("name", StringType(), False),
    StructField("n", LongType(), True),
    StructField("x", DoubleType(), True),
    StructField("t", TimestampType(), True),
    StructField("d", DateType(), True),
    StructField("osts", ArrayType(LongType()), True),
])
ROWS = [("a", 1, 0.5, dt.datetime(2017, 10, 10, 23, 59, 1), dt.date(2017, 10, 10), [3, 4]),
        ("b", None, None, None, None, None),
        ("c", 2**40, -1.0, dt.datetime(2017, 1, 1), dt.date(2017, 1, 1), [])]


def test_same_frame_as_spark_row_conversion(spark):
    got = local_frame(spark, ROWS, SCHEMA)
    want = spark.createDataFrame(ROWS, SCHEMA)
    assert got.schema == want.schema
    assert got.collect() == want.collect()


def test_dicts_empty_and_text_of_other_types(spark):
    dicts = [{"name": 7, "x": 1.0}]             # missing keys are nulls; 7 becomes "7"
    got = local_frame(spark, dicts, SCHEMA).collect()
    assert (got[0]["name"], got[0]["n"], got[0]["x"]) == ("7", None, 1.0)
    assert local_frame(spark, [], SCHEMA).count() == 0


@pytest.mark.parametrize("row, words", [
    (("a", 1.5, None, None, None, None), "field n (bigint): float values"),
    ((None, 1, None, None, None, None), "field name: not nullable"),
    (("a", "one", None, None, None, None), "field n (bigint)"),
    (("a", 1), "rows have"),
])
def test_refused_rows_name_the_field(spark, row, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        local_frame(spark, [row], SCHEMA)
