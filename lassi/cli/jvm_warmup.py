"""The warm-up job `lassi jvm-archive` runs under spark-submit (lassi.cli.jvm).

It loads the classes a daily run loads, on a few thousand synthetic rows: Parquet reads and
partitioned writes, joins (broadcast and shuffled), aggregates, window functions,
`explode(sequence(...))`, `stack`, percentiles, Arrow hand-over to Python workers
(`mapInArrow`, `applyInPandas`, `toPandas`). Measured on an 8-node day under spark-submit:
the archive of this job makes the LASSi and SIOX families as fast as an archive of a
simulated day's ingest and LASSi stages does (31 s to build instead of 44 s; a whole
daily run: 83 s). Usage: spark-submit jvm_warmup.py WORKDIR
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.pop(0)   # this folder (lassi/cli) must not shadow top-level modules


def main(work: str) -> None:
    import datetime as dt
    from pathlib import Path

    import pandas as pd
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from lassi.core.spark import get_spark

    spark = get_spark("lassi jvm warm-up")
    table = str(Path(work) / "warehouse" / "warmup")
    date = dt.date(2017, 10, 10)
    rows = spark.range(20000).selectExpr(
        "concat('nid', lpad(CAST(id % 64 AS STRING), 5, '0')) AS node",
        "concat('fs', id % 3) AS fs", "timestamp_seconds(1507593600 + id * 4) AS window_start",
        "id % 1000 AS ops", "CAST(id AS DOUBLE) * 1.5 AS kb", f"DATE '{date}' AS date")
    rows.write.partitionBy("date").mode("overwrite").parquet(table)
    nw = spark.read.parquet(table).filter(F.col("date") == F.lit(date))
    runs = nw.groupBy("node").agg(F.min("window_start").alias("first_w"),
                                  F.max("window_start").alias("last_w"),
                                  F.collect_set("fs").alias("fss"))
    cells = runs.selectExpr("node", "first_w", "last_w",
                            "explode(sequence(date_trunc('HOUR', first_w), "
                            "date_trunc('HOUR', last_w), INTERVAL 1 HOUR)) AS hour")
    joined = nw.join(F.broadcast(cells), (nw.node == cells.node)
                     & (F.date_trunc("HOUR", nw.window_start) == cells.hour)
                     & nw.window_start.between(cells.first_w, cells.last_w)).drop(cells.node)
    agg = joined.groupBy("node", "fs", "hour").agg(F.sum("ops").alias("ops"),
                                                   F.sum("kb").alias("kb"), F.count("*"))
    w = Window.partitionBy("fs").orderBy(F.desc("kb"))
    ranked = agg.withColumn("rank", F.row_number().over(w)).withColumn(
        "prev", F.lag("kb").over(Window.partitionBy("node").orderBy("hour")))
    ranked.join(nw.select("node", "fs").distinct(), ["node", "fs"]).localCheckpoint().count()
    stats = agg.selectExpr("fs", "stack(2, 'ops', CAST(ops AS DOUBLE), 'kb', kb) AS (op, v)")
    stats.groupBy("fs", "op").agg(F.percentile_approx("v", 0.5), F.stddev("v")).collect()  # 6 rows

    def per_node(pdf: pd.DataFrame) -> pd.DataFrame:
        return pdf.groupby(["node"], as_index=False)["kb"].sum()

    nw.groupBy("node").applyInPandas(per_node, "node STRING, kb DOUBLE").toPandas()

    def batches(it):
        yield from it

    nw.mapInArrow(batches, nw.schema).count()
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
