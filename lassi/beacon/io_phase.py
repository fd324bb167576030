"""Beacon stage `io_phase`: I/O phases by wavelets and two-stage abnormal-phase detection.

Runs after `job_profile`. For the jobs that started on the date and the day before (the
`job_summary` partitions job_profile has just rewritten):

1. phases, per job (`applyInPandas` grouped by job_id), from the job's compute-side
   per-second series (job_timeseries layer='compute', component='*'), idle seconds filled
   with 0 between the job's start and end: DWT denoising and burst extraction
   (lassi/phase_detect.py; wavelet settings in conf `wavelet:`);
2. detection, per application (job_summary.app, exact name; `applyInPandas` grouped by
   app) and within it per job scale (job_summary.n_nodes in power-of-two classes, with a
   fallback to neighbouring scales for sparse ones: phase_detect.scale_groups) over the
   app's phases of the baseline period (the `baseline_days` ending with the
   date, read back from `io_phase`) plus the new ones: stage 1 DBSCAN on (I/O mode, kind,
   log10 volume), stage 2 DBSCAN on Algorithm 1 performance vectors per category (a phase
   off the main cluster and slower by thresholds.slowdown_factor than the category's
   median or than the same job's best phase of the category is abnormal, `is_abnormal`;
   see lassi/phase_detect.py), and the one-stage IOSI baseline: DBSCAN
   noise on (log10 duration, log10 volume) (`is_abnormal_1stage`). Thresholds:
   perf_vector_intervals, dbscan_stage1 (with scale_min_phases), dbscan_stage2,
   slowdown_factor and dbscan_one_stage (default: dbscan_stage1's). Phases of the history
   keep the flags they got when they were new.

Writes `io_phase` (one row per phase) and `anomaly` (one row per job with at least one
abnormal phase, method 'two-stage') for those start days; reruns rewrite the same
partitions (idempotent).
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from lassi.beacon.job_profile import job_dates
from lassi.beacon.phase_detect import detect, extract_phases
from lassi.core.config import Site
from lassi.core.gc_tuning import frozen_imports
from lassi.core.schemas import IO_PHASE
from lassi.core.settings import Wavelet
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days

_PHASE_ROWS = StructType([
    StructField("job_id", StringType()), StructField("phase_no", IntegerType()),
    StructField("start_s", LongType()), StructField("end_s", LongType()),
    StructField("bytes", LongType()), StructField("duration_s", DoubleType()),
    StructField("mean_bw", DoubleType()), StructField("peak_bw", DoubleType()),
    StructField("kind", StringType()), StructField("bw_series", ArrayType(DoubleType())),
])

_DETECT_IN = ["job_id", "app", "phase_no", "start_s", "end_s", "bytes", "duration_s",
              "mean_bw", "peak_bw", "kind", "io_mode", "bw_series", "date", "new", "n_nodes"]
_DETECTED = StructType([
    StructField("job_id", StringType()), StructField("phase_no", IntegerType()),
    StructField("category", IntegerType()), StructField("perf_vector", ArrayType(DoubleType())),
    StructField("is_abnormal", IntegerType()), StructField("is_abnormal_1stage", IntegerType()),
    StructField("slowdown_est", DoubleType()), StructField("new", IntegerType()),
])


def phases_of_jobs(series: DataFrame, c: Wavelet) -> DataFrame:
    """Phases of every job in `series` (job_id, sec, read_bytes, write_bytes, start_s,
    end_s), one row per phase (_PHASE_ROWS), cut with the wavelet settings `c`."""

    def per_job(pdf: pd.DataFrame) -> pd.DataFrame:
        ph = extract_phases(pdf["sec"].to_numpy(), pdf["read_bytes"].to_numpy(),
                            pdf["write_bytes"].to_numpy(), int(pdf["start_s"].min()),
                            int(pdf["end_s"].max()), c)
        if not ph:
            return pd.DataFrame({f.name: pd.Series([], dtype=object) for f in _PHASE_ROWS.fields})
        out = pd.DataFrame(ph, columns=[f.name for f in _PHASE_ROWS.fields if f.name != "job_id"])
        out.insert(0, "job_id", pdf["job_id"].iloc[0])
        out["bytes"] = out["bytes"].round().astype("int64")
        return out[[f.name for f in _PHASE_ROWS.fields]]

    return series.groupBy("job_id").applyInPandas(frozen_imports(per_job), _PHASE_ROWS)


def detect_by_app(phases: DataFrame, site: Site) -> DataFrame:
    """Detection columns (_DETECTED) of every phase in `phases` (_DETECT_IN), per app."""
    th = site.settings.thresholds
    n_int = th.perf_vector_intervals
    s1, s2, s0 = (th.dbscan_stage1.params(), th.dbscan_stage2.params(),
                  th.dbscan_one_stage.params())
    factor = th.slowdown_factor
    min_scale = th.dbscan_stage1.scale_min_phases

    def per_app(pdf: pd.DataFrame) -> pd.DataFrame:
        d = detect(pdf, n_int, s1, s2, one_stage=s0, slowdown_factor=factor,
                   scale_min_phases=min_scale)
        return pd.DataFrame({
            "job_id": d["job_id"], "phase_no": d["phase_no"].astype("int32"),
            "category": d["category"].astype("int32"), "perf_vector": d["perf_vector"],
            "is_abnormal": d["is_abnormal"].astype("int32"),
            "is_abnormal_1stage": d["is_abnormal_1stage"].astype("int32"),
            "slowdown_est": d["slowdown_est"].astype(float), "new": d["new"].astype("int32")})

    return (phases.select(*_DETECT_IN).groupBy("app")
            .applyInPandas(frozen_imports(per_app), _DETECTED))


@scoped
def build_io_phase(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `io_phase`: phases and abnormal phases of the jobs started on the date and the
    day before; writes io_phase and anomaly; returns a one-line summary."""
    starts = job_dates(date)
    owned = [d for d in starts if wh.has("job_summary", d)]
    if not owned:
        return "no Beacon job profiles (job_summary) for the day"
    spark = wh.spark
    jobs = (wh.read("job_summary", owned)
            .select("job_id", "app", "io_mode", "n_nodes",
                    F.unix_timestamp("start").alias("start_s"),
                    F.unix_timestamp("end").alias("end_s"), "date"))
    ts = (wh.read("job_timeseries", owned)
          .where("layer = 'compute' AND component = '*' AND interval_s = 1")
          .select("job_id", F.unix_timestamp("ts").alias("sec"), "read_bytes", "write_bytes"))
    series = ts.join(jobs.select("job_id", "start_s", "end_s"), "job_id")
    new = (phases_of_jobs(series, site.settings.wavelet)
           .join(jobs.select("job_id", "app", "io_mode", "n_nodes", "date"), "job_id")
           .withColumn("new", F.lit(1)).localCheckpoint())
    first, _ = site.settings.baseline_period(date)
    hist_days = [d for d in days(first, date) if d not in owned]
    hist = (wh.read("io_phase", hist_days)
            .select("job_id", "app", "phase_no", F.unix_timestamp("start").alias("start_s"),
                    F.unix_timestamp("end").alias("end_s"), "bytes", "duration_s", "mean_bw",
                    "peak_bw", "kind", "io_mode", "bw_series", "date")
            .withColumn("new", F.lit(0))
            .join(wh.read("job_summary", hist_days).select("job_id", "n_nodes"), "job_id",
                  "left"))
    apps = new.select(F.col("app").alias("new_app")).distinct()
    same_app = hist.join(apps, hist["app"].eqNullSafe(apps["new_app"]), "left_semi")
    both = new.select(*_DETECT_IN).unionByName(same_app.select(*_DETECT_IN))
    flags = detect_by_app(both, site).where("new = 1").drop("new")
    rows = (new.join(flags, ["job_id", "phase_no"])
            .withColumn("start", F.timestamp_seconds("start_s"))
            .withColumn("end", F.timestamp_seconds("end_s"))
            .withColumn("is_abnormal", F.col("is_abnormal") == 1)
            .withColumn("is_abnormal_1stage", F.col("is_abnormal_1stage") == 1)
            .localCheckpoint())
    wh.write(rows.select(*IO_PHASE.fieldNames()), "io_phase", owned)
    rows.createOrReplaceTempView("io_phase_new")
    anomaly = spark.sql(
        "SELECT job_id, FIRST(app) AS app, COUNT(*) AS n_phases, "
        "COUNT_IF(is_abnormal) AS n_abnormal, "
        "SORT_ARRAY(COLLECT_LIST(CASE WHEN is_abnormal THEN phase_no END)) AS abnormal_phases, "
        "MIN(CASE WHEN is_abnormal THEN start END) AS first_abnormal_start, "
        "MAX(CASE WHEN is_abnormal THEN slowdown_est END) AS worst_slowdown_est, "
        "'two-stage' AS method, FIRST(date) AS date "
        "FROM io_phase_new GROUP BY job_id HAVING COUNT_IF(is_abnormal) > 0")
    wh.write(anomaly, "anomaly", owned)
    n = rows.selectExpr("count(*) AS phases", "count(DISTINCT job_id) AS jobs",
                        "count_if(is_abnormal) AS ab", "count_if(is_abnormal_1stage) AS ab1"
                        ).first()
    return (f"{n['phases']} I/O phases of {n['jobs']} jobs; {n['ab']} abnormal (two-stage), "
            f"{n['ab1']} (one-stage baseline)")
