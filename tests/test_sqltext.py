"""SQL literals that lassi writes into its queries read back as exactly their values."""

from __future__ import annotations

import math

from lassi.core.sqltext import double_literal, string_literal

TEXTS = ["scratch", "fs'with'quotes", "back\\slash", "\\'", "tab\there", ""]
DOUBLES = [0.1, 1 / 3, 1e-300, 123456789.123456789, -2.5e17, 5e-324, 0.0]


def test_literals_read_back_as_written(spark):
    cols = [f"{string_literal(t)} AS s{i}" for i, t in enumerate(TEXTS)]
    cols += [f"{double_literal(v)} AS d{i}" for i, v in enumerate(DOUBLES)]
    cols.append(f"{double_literal(None)} AS missing")
    row = spark.sql("SELECT " + ", ".join(cols)).collect()[0]
    assert [row[f"s{i}"] for i in range(len(TEXTS))] == TEXTS
    got = [row[f"d{i}"] for i in range(len(DOUBLES))]
    assert got == DOUBLES and all(isinstance(v, float) for v in got)
    assert row["missing"] is None
    special = spark.sql(f"SELECT {double_literal(-0.0)} AS z, {double_literal(math.inf)} AS i, "
                        f"{double_literal(-math.inf)} AS j, {double_literal(math.nan)} AS n"
                        ).collect()[0]
    assert math.copysign(1.0, special["z"]) == -1.0
    assert (special["i"], special["j"]) == (math.inf, -math.inf) and math.isnan(special["n"])
