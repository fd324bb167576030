"""TOKIO's summarize_job: one row of metrics per job from every connector → `job_metrics`.

A job's start, end, size and application come from the first job-info source of the
site's `tokio.jobinfo` list that knows it (slurm: app_run rows from sacct; scheduler: the
other app_run sources and Beacon's job log; darshan: the job's Darshan logs). Then, over
the job's window: Darshan's bytes, opens and performance; the file system's LMT bytes,
metadata ops and OSS/MDS CPU; OST fullness and failovers at the nearest `lfs df` /
`lctl dl` snapshot; the jobs running at the same time; and the coverage factors (the
job's bytes / the file system's bytes, the job's opens / the file system's opens).
Without Darshan, a job's bytes come from LASSi's app_hour (Lustre export statistics, or
the job's own job_stats counters where the servers keep them: `lustre_job_stats`) or
Beacon's traces (job_summary), named in `bytes_source`. SQL: sql/tokio/steps/job_info.sql,
sql/tokio/job_metrics.sql.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from lassi.core.config import Site
from lassi.core.schemas import schema_of
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse

_MOUNTS = StructType([StructField("mount", StringType(), False),
                      StructField("fs", StringType(), False)])


class JobNotFound(ValueError):
    """Job ids that no job-info source knows; `found` holds the metrics of the others."""

    def __init__(self, message: str, found: pd.DataFrame) -> None:
        super().__init__(message)
        self.found = found


def _days(dates: Iterable[dt.date], before: int = 0, after: int = 0) -> list[dt.date]:
    out = set()
    for d in dates:
        out |= {d + dt.timedelta(days=k) for k in range(-before, after + 1)}
    return sorted(out)


def _view(df: DataFrame, name: str) -> None:
    df.createOrReplaceTempView(name)


def _info_views(wh: Warehouse, dates: list[dt.date] | None,
                job_ids: list[str] | None = None) -> None:
    """jm_app_run, jm_job_summary, jm_darshan_job(+file), jm_app_hour for `dates` (None: all),
    limited to `job_ids` when given."""
    for view, table in (("jm_app_run", "app_run"), ("jm_job_summary", "job_summary"),
                        ("jm_darshan_job", "darshan_job"), ("jm_darshan_file", "darshan_file"),
                        ("jm_app_hour", "app_hour")):
        df = wh.read(table, dates)
        if job_ids is not None:
            df = df.filter(F.col("job_id").isin(job_ids))
        _view(df, view)


def _context_views(wh: Warehouse, site: Site, days: list[dt.date]) -> None:
    """The file-system side of the jobs' days: LMT, OST health, every job (concurrency)."""
    spark = wh.spark
    lmt_days = _days(days, after=1)
    _view(wh.read("lmt_ost", lmt_days), "jm_lmt_ost")
    _view(wh.read("lmt_mds", lmt_days), "jm_lmt_mds")
    _view(wh.read("ost_health", _days(days, before=1, after=1)), "jm_ost_health")
    _view(spark.createDataFrame(list(site.settings.tokio.mounts), _MOUNTS), "jm_mounts")
    around = _days(days, before=1, after=1)
    runs = wh.read("app_run", around).select("job_id", "start", "end")
    beacon = wh.read("job_summary", around).select("job_id", "start", "end")
    darshan = wh.read("darshan_job", around).select("job_id", "start", "end")
    _view(runs.unionByName(beacon).unionByName(darshan)
          .filter(F.col("start").isNotNull() & F.col("end").isNotNull())
          .groupBy("job_id").agg(F.min("start").alias("start"), F.max("end").alias("end")),
          "jm_all_jobs")


def _sources_sql(site: Site) -> str:
    return ", ".join(f"'{s}'" for s in site.settings.tokio.jobinfo)


def job_metrics_df(wh: Warehouse, site: Site, jobs: DataFrame) -> DataFrame:
    """The metrics of `jobs` (rows of sql/tokio/steps/job_info.sql), with the declared schema."""
    _view(jobs, "jm_jobs")
    out = wh.spark.sql(sql("tokio/job_metrics"))
    return out.select(*[F.col(f.name).cast(f.dataType).alias(f.name)
                        for f in schema_of("job_metrics").fields])


@scoped
def build_job_metrics(wh: Warehouse, site: Site, date: dt.date) -> int:
    """Daily stage: the metrics of every job that started on `date` → `job_metrics`."""
    _info_views(wh, [date])
    jobs = wh.spark.sql(sql("tokio/steps/job_info", sources=_sources_sql(site)))
    jobs = jobs.filter(F.to_date("start") == F.lit(date)).localCheckpoint()
    _context_views(wh, site, [date])
    rows = job_metrics_df(wh, site, jobs).localCheckpoint()
    wh.write(rows, "job_metrics", [date])
    return rows.count()


@scoped
def summarize_jobs(wh: Warehouse, site: Site, job_ids: list[str],
                   write: bool = True) -> pd.DataFrame:
    """`lassi summarize-job`: the metrics of the given jobs (any dates), merged into
    `job_metrics` (each job replaces its own row) unless `write` is False.

    Raises JobNotFound naming the ids no job-info source knows (after writing the others).
    """
    ids = list(dict.fromkeys(str(j) for j in job_ids))
    _info_views(wh, None, ids)
    info = wh.spark.sql(sql("tokio/steps/job_info", sources=_sources_sql(site)))
    found = info.collect()                                  # one row per requested job
    jobs = wh.spark.createDataFrame(found, info.schema)
    days = sorted({r["start"].date() for r in found})
    if found:
        _context_views(wh, site, days)
        got = job_metrics_df(wh, site, jobs).collect()     # one row per requested job
        rows = wh.spark.createDataFrame(got, schema_of("job_metrics"))
        if write:
            _merge_rows(wh, rows, days)
        pdf = rows.toPandas()
    else:
        pdf = pd.DataFrame(columns=schema_of("job_metrics").fieldNames())
    missing = [j for j in ids if j not in {r["job_id"] for r in found}]
    if missing:
        raise JobNotFound(_missing_text(missing, site.settings.tokio.jobinfo), pdf)
    return pdf


def fetch_darshan_logs(wh: Warehouse, site: Site, job_ids: list[str],
                       root: str | Path) -> int:
    """Find the jobs' Darshan logs in a site log repository (by job id, over the days the
    scheduler records give, one day either side for local dates) and ingest them; returns
    the number of logs found. Jobs without scheduler records are not searched."""
    from lassi.ingest.darshan_repo import find_logs
    from lassi.ingest.runner import ingest_source

    runs = (wh.read("app_run").filter(F.col("job_id").isin(job_ids)).groupBy("job_id")
            .agg(F.min("start").alias("start"), F.max("end").alias("end")).collect())
    one = dt.timedelta(days=1)
    logs = [str(p) for r in runs if r["start"] is not None
            for p in find_logs(root, r["start"] - one, (r["end"] or r["start"]) + one,
                               jobid=r["job_id"])]
    if logs:
        ingest_source(wh.spark, wh, site, "darshan", logs)
    return len(logs)


def _missing_text(missing: list[str], order: tuple[str, ...]) -> str:
    names = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
    return (f"no job-info source ({', '.join(order)}) knows job {names}: ingest its "
            "scheduler records or Darshan logs first")


def _merge_rows(wh: Warehouse, rows: DataFrame, days: list[dt.date]) -> None:
    """Replace these jobs' rows in their start-day partitions, keeping the other jobs."""
    ids = [r["job_id"] for r in rows.select("job_id").collect()]   # the requested jobs
    wh.replace_rows(rows, "job_metrics", days, F.col("job_id").isin(ids))
