"""SIOX stage `job_diagnosis`: why each of the day's jobs was slow, and what should be done —
the answer of `lassi why`, for every job of the day at once (issue #14).

One SQL (sql/siox/job_diagnosis.sql) turns what every analysis knows about a set of jobs
into ranked causes, each with the share of the job's lost time it explains, one sentence of
evidence and a recommendation:

- lost time: the largest of the seconds its runs took beyond their command groups' mean
  (LASSi `run_slowdown`), the excess its causal path measured (`job_path`) and the wait on
  a slow OST in its Darshan log;
- `component`: faults the SIOX pinpoint named on its path (`job_path.lost_s`), with the
  component anomalies that overlap the run, and the OSTs whose files were slower in the
  job's Darshan log (TOKIO's bad-OST test per job, lassi.siox.ost_correlation.slow_osts;
  lost = its slowest file there - its slowest file elsewhere);
- `neighbour`: Beacon's interference neighbours share the path's load part by bandwidth;
  on a site with Lustre export statistics, the jobs that loaded the busy targets the job
  used (sql/siox/steps/diagnosis_shared.sql), by their share of the traffic there;
- `pattern`: small requests, N:1 without aggregation, metadata-heavy, random access,
  unaligned, read-after-write — from the job's Darshan logs (darshan_file's access
  counters), its Beacon profile (`job_summary`) or LASSi's per-job counters (`app_hour`:
  mean request size, metadata ops/s), most precise first; thresholds in `diagnosis:` and
  `thresholds.high_mdops` — share what no component or neighbour explains;
- `history`: that remainder when no pattern is flagged.

The stage explains every job that started on the date (app_run); a job with no lost time
and no flagged pattern has no rows. `lassi why` reads the answer from here, and runs the
same SQL for one job only when the day has not been diagnosed or the job is known from
Darshan or job_metrics alone.
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StringType, StructType

from lassi.core.config import Site
from lassi.core.frames import empty_frame
from lassi.core.gc_tuning import frozen_imports
from lassi.core.schemas import DARSHAN_SIZE_EDGES, MDS_COUNTERS, REQUEST_SIZE_EDGES
from lassi.core.schemas.common import field
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days
from lassi.siox.jobstats_ost import slow_ost_pairs

MAX_SHARED_NEIGHBOURS = 5       # neighbours named per job on busy Lustre targets


def _read(wh: Warehouse, table: str, dates: list[dt.date]) -> DataFrame:
    return wh.read(table, [d for d in dates if wh.has(table, d)])


def jobs_frame(wh: Warehouse, date: dt.date, job_ids: list[str] | None = None,
               runs: DataFrame | None = None) -> DataFrame:
    """dg_jobs rows (sql/siox/steps/diagnosis_jobs.sql) of the jobs that started on `date`
    (only `job_ids` when given), from `app_run` or the given app_run-shaped `runs`."""
    runs = _read(wh, "app_run", [date]) if runs is None else runs
    slow = _read(wh, "run_slowdown", [date])
    if job_ids is not None:
        runs = runs.filter(F.col("job_id").isin(job_ids))
    runs.createOrReplaceTempView("dg_runs")
    slow.createOrReplaceTempView("dg_slowdown")
    return wh.spark.sql(sql("siox/steps/diagnosis_jobs"))


# dg_darshan_ost: per job, the OSTs whose files were slower in its Darshan logs
DARSHAN_OST = StructType([
    field("job_id", StringType(), False),
    field("ost_name", StringType(), False),   # <fs>-OST%04x (tokio.mounts), else OST#<index>
    field("coefficient", DoubleType()),
    field("p_value", DoubleType()),
    field("n_files", LongType()),             # files on the OST
    field("n_total", LongType()),             # files the correlation ran over
    field("slowest_on_s", DoubleType()),
    field("slowest_off_s", DoubleType()),
])


def _sql_array(values: list[int]) -> str:
    return "array(" + ", ".join(f"CAST({v} AS BIGINT)" for v in values) + ")"


def _size_text(n: int) -> str:
    """Bytes in words: 102400 -> '100 KiB'."""
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:g} {unit}"
    return f"{n} B"


def darshan_slow_osts(site: Site, files: DataFrame) -> DataFrame:
    """dg_darshan_ost rows from darshan_file rows: TOKIO's bad-OST test per job and file
    system (OST indices are per file system), on the executors."""
    mounts = dict(site.settings.tokio.mounts)
    p_value, r = site.settings.tokio.p_value, site.settings.diagnosis.slow_ost_r
    names = [f.name for f in DARSHAN_OST.fields]

    def per_job(pdf):
        import pandas as pd

        from lassi.siox.ost_correlation import slow_osts

        out = slow_osts(pdf, mounts.get(pdf["mount"].iat[0]), p_value, r)
        out.insert(0, "job_id", pdf["job_id"].iat[0])
        return out[names] if len(out) else pd.DataFrame(columns=names)

    posix = files.filter((F.col("module") == "POSIX") & (F.size("ost_ids") > 0))
    return posix.groupBy("job_id", "mount").applyInPandas(frozen_imports(per_job), DARSHAN_OST)


def diagnose_frame(wh: Warehouse, site: Site, date: dt.date, jobs: DataFrame) -> DataFrame:
    """job_diagnosis rows of `jobs` (dg_jobs columns) that started on `date`."""
    jobs.createOrReplaceTempView("dg_jobs")
    ids = jobs.select("job_id")
    for view, table in (("dg_path", "job_path"), ("dg_interference", "interference"),
                        ("dg_summary", "job_summary"), ("dg_app_hour", "app_hour"),
                        ("dg_darshan_file", "darshan_file"), ("dg_darshan_job", "darshan_job")):
        _read(wh, table, [date]).join(ids, "job_id", "left_semi").createOrReplaceTempView(view)
    _read(wh, "component_anomaly", days(date, date + dt.timedelta(days=1))) \
        .createOrReplaceTempView("dg_anomaly")
    _read(wh, "job_path", [date]).createOrReplaceTempView("dg_day_path")
    wh.spark.sql(sql("siox/steps/diagnosis_shared", window_s=site.window_s,
                     max_neighbours=MAX_SHARED_NEIGHBOURS)).createOrReplaceTempView("dg_shared")
    dg = site.settings.diagnosis
    darshan_edges = _sql_array(DARSHAN_SIZE_EDGES)
    # the Darshan evidence is read by several CTEs: computed once (a few rows per job)
    darshan = wh.spark.sql(sql("siox/steps/darshan_io", darshan_edges=darshan_edges,
                               small_request=dg.small_request))
    if wh.has("darshan_file", date):
        darshan = darshan.localCheckpoint()
        osts = darshan_slow_osts(site, wh.spark.table("dg_darshan_file")).localCheckpoint()
    else:
        osts = empty_frame(wh.spark, DARSHAN_OST)
    darshan.createOrReplaceTempView("dg_darshan")
    osts.createOrReplaceTempView("dg_darshan_ost")
    # OSTs the day's Lustre job_stats flag as slow, where they served the job slower
    slow_ost_pairs(wh, date, site.settings.tokio.p_value, dg.slow_ost_r) \
        .join(ids, "job_id", "left_semi").localCheckpoint() \
        .createOrReplaceTempView("dg_jobstats_ost")
    # the steps each read several times: materialised one by one (a few rows per job)
    _step(wh, "diagnosis_lost", "dg_job")                  # the jobs with their lost time
    _step(wh, "diagnosis_comp", "dg_comp")
    _step(wh, "diagnosis_comp_causes", "dg_comp_causes",
          export_path=str(not site.has_forwarding).upper())
    _step(wh, "diagnosis_neighbours", "dg_nb_causes")
    small_text = _size_text(next((e for e in DARSHAN_SIZE_EDGES if e >= dg.small_request),
                                 DARSHAN_SIZE_EDGES[-1]))
    return _planned_without_constraints(wh.spark, wh.spark.sql(sql(
        "siox/job_diagnosis", size_edges=_sql_array(REQUEST_SIZE_EDGES),
        small_text=small_text, md_sum=" + ".join(f"a.{c}" for c in MDS_COUNTERS),
        high_mdops=site.settings.thresholds.high_mdops,
        single_fwd=str(site.has_forwarding and len(site.fwd_nodes) == 1).upper(),
        date=date.isoformat(), **dg.__dict__)))


def _step(wh: Warehouse, name: str, view: str, **params: object) -> None:
    """Materialise the step `sql/siox/steps/<name>.sql` as the temp view `view`."""
    wh.spark.sql(sql(f"siox/steps/{name}", **params)).localCheckpoint() \
        .createOrReplaceTempView(view)


CONSTRAINTS = "spark.sql.constraintPropagation.enabled"


def _planned_without_constraints(spark: SparkSession, df: DataFrame) -> DataFrame:
    """`df` with its optimised plan made now, without constraint propagation.

    The final query reads the checkpointed steps several times and UNIONs two of them: a
    checkpoint keeps its plan's constraints (IS NOT NULL of its literal columns) under the
    attribute ids of its first reference, and Spark 4's optimizer then fails on the union
    ("NoSuchElementException: key not found: kind#…"). Executing `df` later (collect,
    localCheckpoint, write) reuses this plan. Measured on a 4-node ARCHER day: the split
    steps and this plan take the stage from 15-17 s to 11-13 s.
    """
    old = spark.conf.get(CONSTRAINTS)
    spark.conf.set(CONSTRAINTS, "false")
    try:
        df._jdf.queryExecution().optimizedPlan()
    finally:
        spark.conf.set(CONSTRAINTS, old)
    return df


@scoped
def build_job_diagnosis(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `job_diagnosis` of `date`; a one-line summary."""
    if not wh.has("app_run", date):
        wh.clear("job_diagnosis", [date])
        return "no jobs started on the day"
    jobs = jobs_frame(wh, date).localCheckpoint()
    out = diagnose_frame(wh, site, date, jobs).localCheckpoint()
    wh.write(out, "job_diagnosis", [date])
    n = (out.filter("rank = 1 AND job_lost_s > 0").groupBy("kind").count()
         .collect())                                                   # at most 4 kinds
    tops = ", ".join(f"{r['count']} {r['kind']}" for r in sorted(n, key=lambda r: -r["count"]))
    lost = sum(r["count"] for r in n)
    return (f"{jobs.count()} jobs diagnosed, {lost} lost time; top cause: "
            f"{tops or 'none found'}")
