"""SIOX stage `job_diagnosis`: why each of the day's slowed or abnormal jobs was slow, and what
should be done — the answer of `lassi why`, for every such job at once (issue #14).

One SQL (sql/siox/job_diagnosis.sql) turns what every analysis knows about a set of jobs
into ranked causes, each with the share of the job's lost time it explains, one sentence of
evidence and a recommendation:

- lost time: the larger of the seconds its runs took beyond their command groups' mean
  (LASSi `run_slowdown`) and the excess its causal path measured (`job_path`);
- `component`: faults the SIOX pinpoint named on its path (`job_path.lost_s`), with the
  component anomalies that overlap the run;
- `neighbour`: Beacon's interference neighbours share the path's load part by bandwidth;
- `pattern`: small requests, N:1 without aggregation, metadata-heavy phases
  (`job_summary`; for a job without a Beacon profile, LASSi's per-job counters in
  `app_hour`: mean request size and metadata ops/s; thresholds `thresholds.high_mdops` and
  the module's SMALL_REQUEST / SMALL_SHARE) share what no component or neighbour explains;
- `history`: that remainder when no pattern is flagged.

The stage explains the jobs that started on the date and were slowed (run_slowdown), had
an abnormal I/O phase (io_phase) or lost at least MIN_LOST_S and MIN_LOST_SHARE of their
runtime on their causal path. `lassi why` runs the same SQL for one job.
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.schemas import MDS_COUNTERS, REQUEST_SIZE_EDGES
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days

SMALL_REQUEST = 65536          # bytes: a smaller request is small (Drishti's threshold)
SMALL_SHARE = 0.5              # pattern flagged when at least this share of requests is small
MIN_LOST_S = 60.0              # path-measured loss that makes a job worth explaining ...
MIN_LOST_SHARE = 0.05          # ... when it is also this share of its runtime


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


def diagnose_frame(wh: Warehouse, site: Site, date: dt.date, jobs: DataFrame) -> DataFrame:
    """job_diagnosis rows of `jobs` (dg_jobs columns) that started on `date`."""
    jobs.createOrReplaceTempView("dg_jobs")
    ids = jobs.select("job_id")
    for view, table in (("dg_path", "job_path"), ("dg_interference", "interference"),
                        ("dg_summary", "job_summary"), ("dg_app_hour", "app_hour")):
        _read(wh, table, [date]).join(ids, "job_id", "left_semi").createOrReplaceTempView(view)
    _read(wh, "component_anomaly", days(date, date + dt.timedelta(days=1))) \
        .createOrReplaceTempView("dg_anomaly")
    edges = "array(" + ", ".join(f"CAST({e} AS BIGINT)" for e in REQUEST_SIZE_EDGES) + ")"
    return wh.spark.sql(sql("siox/job_diagnosis", small_request=SMALL_REQUEST,
                            small_share=SMALL_SHARE, size_edges=edges,
                            md_sum=" + ".join(f"a.{c}" for c in MDS_COUNTERS),
                            high_mdops=site.settings.thresholds.high_mdops,
                            date=date.isoformat()))


def day_jobs(wh: Warehouse, date: dt.date) -> DataFrame:
    """The jobs of `date` worth explaining: slowed, abnormal, or losing time on their path."""
    jobs = jobs_frame(wh, date)
    abnormal = _read(wh, "io_phase", [date]).filter("is_abnormal").select("job_id").distinct()
    lost = (_read(wh, "job_path", [date]).groupBy("job_id")
            .agg(F.sum(F.col("lost_s") + F.coalesce("lost_load_s", F.lit(0.0))).alias("l")))
    keep = (jobs.join(abnormal.withColumn("abnormal", F.lit(True)), "job_id", "left")
            .join(lost, "job_id", "left")
            .filter(F.col("slowed") | F.coalesce("abnormal", F.lit(False))
                    | ((F.col("l") >= MIN_LOST_S)
                       & (F.col("l") >= MIN_LOST_SHARE * F.col("runtime_s")))))
    return keep.drop("abnormal", "l")


@scoped
def build_job_diagnosis(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `job_diagnosis` of `date`; a one-line summary."""
    if not wh.has("app_run", date):
        wh.write(wh.read("job_diagnosis", []), "job_diagnosis", [date])
        return "no jobs started on the day"
    jobs = day_jobs(wh, date).localCheckpoint()
    out = diagnose_frame(wh, site, date, jobs).localCheckpoint()
    wh.write(out, "job_diagnosis", [date])
    n = out.filter("rank = 1").groupBy("kind").count().collect()      # at most 4 kinds
    tops = ", ".join(f"{r['count']} {r['kind']}" for r in sorted(n, key=lambda r: -r["count"]))
    return (f"{jobs.count()} slowed or abnormal jobs; top cause: {tops or 'none found'}")
