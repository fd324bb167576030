"""Slow OSTs from Lustre job_stats: TOKIO's bad-OST test on a day's (job, OST) pairs
instead of Darshan files (`lassi bad-ost --jobstats`), and the pairs of each job on an OST
it flags (a `component` cause of `job_diagnosis` and `lassi why` without a Darshan log).

A job_stats entry of an OST holds the bytes a job moved there and the OST's service time of
them (Lustre 2.12+). A pair's relative rate x is its rate over the median rate of the job's
OSTs (`sql/siox/steps/jobstats_pairs.sql`); an OST is flagged when x correlates with "the
pair is on this OST" (Pearson r below -c, p below the threshold) and its pairs' mean x is at
least `min_effect` away from 1.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StringType, StructType

from lassi.core.frames import empty_frame
from lassi.core.schemas.common import field
from lassi.core.sqltext import sql
from lassi.core.warehouse import Warehouse
from lassi.siox.ost_correlation import COLUMNS, point_biserial

MIN_EFFECT = 0.1     # an OST flagged is >= 10 % slower (or faster) for its jobs

# dg_jobstats_ost: per job, the OSTs a job_stats test flagged that served it slower
JOBSTATS_OST = StructType([
    field("job_id", StringType(), False),
    field("ost_name", StringType(), False),   # the job_stats target, <fs>-OST%04x
    field("coefficient", DoubleType()),       # the OST's r over the day's pairs
    field("p_value", DoubleType()),
    field("n_pairs", LongType()),             # the day's (job, OST) pairs on the OST
    field("n_total", LongType()),             # the day's pairs on its filesystem
    field("x", DoubleType()),                 # this job's rate there / its median OST rate
    field("bytes", LongType()),
    field("service_s", DoubleType()),         # the OST's service time of this job's bytes
    field("lost_s", DoubleType()),            # its extra service time there: the sum over the
])                                            # job's ids of service_s × (1 − x)


def pairs(wh: Warehouse, date: dt.date, fs: str | None = None) -> DataFrame:
    """The day's (job, OST) pairs (jobstats_pairs.sql), of filesystem `fs` when given; also
    the view `jobstats_pairs`."""
    raw = wh.read("raw_lustre_stats", [date])
    (raw if fs is None else raw.filter(F.col("fs") == fs)).createOrReplaceTempView("jobstats_raw")
    out = wh.spark.sql(sql("siox/steps/jobstats_pairs"))
    out.createOrReplaceTempView("jobstats_pairs")
    return out


def ost_test(wh: Warehouse, date: dt.date, p_threshold: float, c_threshold: float,
             fs: str | None = None, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """Per OST of the day: Pearson's r between each (job, OST) pair's relative rate and "the
    pair is on this OST", with its two-sided p-value (`n_files` counts the OST's pairs,
    `relative_rate` is their mean x, `n_total` the pairs of its filesystem). Pearson's r does
    not see scale, so an OST is flagged only when its relative rate is also `min_effect`
    away from 1 (rates that differ by the rounding of the µs sums are not a slow OST). One
    row per OST, sorted by r (NaN where every pair of the filesystem is on it, or the rates
    do not vary)."""
    pairs(wh, date, fs)
    sums = wh.spark.sql(sql("siox/steps/jobstats_ost")).toPandas()   # one row per OST
    rows = []
    for r in sums.itertuples():
        coef, p = point_biserial(int(r.n_on), float(r.sd_on), int(r.n), float(r.sdd))
        flagged = bool(p < p_threshold and abs(coef) > c_threshold       # False for NaN
                       and abs(r.relative_rate - 1.0) >= min_effect)
        rows.append((int(r.ost_index), r.target, coef, p, int(r.n_on), flagged,
                     float(r.relative_rate), int(r.n)))
    out = pd.DataFrame(rows, columns=[*COLUMNS, "relative_rate", "n_total"])
    return out.sort_values(["coefficient", "ost_name"], na_position="last").reset_index(drop=True)


def slow_ost_pairs(wh: Warehouse, date: dt.date, p_threshold: float, r_threshold: float,
                   min_effect: float = MIN_EFFECT) -> DataFrame:
    """JOBSTATS_OST rows: each scheduler job (job_stats ids mapped by `job_window`) on an OST
    the day's test flags as slow (r < -r_threshold), where the job's own relative rate is
    `min_effect` below 1. A job known by several ids there (`123` and `123.sdb`, one per
    launch or node setting) has one row: bytes, service and extra service time summed over
    them, x their service-weighted mean. Empty when the day has no job_stats entry that
    names a scheduler job."""
    spark = wh.spark
    empty = empty_frame(spark, JOBSTATS_OST)
    if not wh.has("job_window", date):
        return empty
    ids = (wh.read("job_window", [date]).filter("id_kind = 'job' AND job IS NOT NULL")
           .select("job_id", "job").distinct())
    if ids.limit(1).count() == 0:                       # exports only, or no job ids
        return empty
    test = ost_test(wh, date, p_threshold, r_threshold, min_effect=min_effect)
    slow = test[test["flagged"] & (test["coefficient"] < 0)]
    if slow.empty:
        return empty
    flagged = spark.createDataFrame(
        [(r.ost_name, float(r.coefficient), float(r.p_value), int(r.n_files), int(r.n_total))
         for r in slow.itertuples()],             # the flagged OSTs: a handful
        "ost_name STRING, coefficient DOUBLE, p_value DOUBLE, n_pairs BIGINT, n_total BIGINT")
    on = (spark.table("jobstats_pairs").filter(F.col("x") <= 1 - min_effect)
          .join(flagged, F.col("target") == F.col("ost_name"))
          .join(ids, "job_id")
          .groupBy(F.col("job").alias("job_id"), "ost_name", "coefficient", "p_value",
                   "n_pairs", "n_total")
          .agg(F.sum("bytes").alias("bytes"), F.sum("service_s").alias("service_s"),
               F.sum(F.col("service_s") * (1 - F.col("x"))).alias("lost_s"))
          .withColumn("x", 1 - F.col("lost_s") / F.col("service_s")))
    return on.select(*[F.col(f.name).cast(f.dataType) for f in JOBSTATS_OST.fields])
