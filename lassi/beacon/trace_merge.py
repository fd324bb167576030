"""Beacon's second pass (daily stage `trace_merged`): each job's first-pass LWFS client trace
merged across its nodes, and the compression it achieved (tables trace_merged and
trace_compression).

Attribution: a raw_lwfs_trace line belongs to the Beacon job (app_run, source
'beacon-job', launched on the day or up to MAX_RUN_DAYS before) whose node list holds the
line's node and whose [start, end] holds the line's second (times compared at second
granularity: the job log has whole seconds; a job still running runs to the day's end).
Jobs are exploded to their nodes and joined on node, an equi-join. Nodes are exclusive;
should two jobs of one node overlap anyway, the later-starting one owns the shared
seconds from its start on (ties: the larger job_id), so a line is never counted twice.
Lines of no job (also lines whose ip maps to no node) are kept under job_id '-'.

Node identity is `node`, or the ip when the parser could not name the node. Merging
(sql/beacon/trace_merged.sql): entries of one job with the same vector <second, op, fd, size,
offset, count, path> become one row listing the nodes; data entries have a null path,
metadata entries a null size and offset. Timestamps are kept to the second (the trace's
granularity); the milliseconds of raw_lwfs_trace are not.

Losslessness (sql/beacon/trace_compression.sql) is checked against the stored trace_merged: per
job, exploding it over its nodes must give exactly the multiset of the job's
raw_lwfs_trace entries projected on (node, second, op, fd, size, offset, count, path).
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.period import MAX_RUN_DAYS, day_bounds
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import DateLike, Warehouse, as_date, days

UNATTRIBUTED = "-"
JOB_SOURCE = "beacon-job"


def beacon_jobs(wh: Warehouse, date: dt.date) -> DataFrame:
    """Beacon jobs that may overlap `date`: job_id, app, nodes, start, end."""
    start, end = day_bounds(date)
    launched = days(date - dt.timedelta(days=MAX_RUN_DAYS), date)
    return (wh.read("app_run", launched)
            .where((F.col("source") == JOB_SOURCE) & F.col("start").isNotNull()
                   & F.col("nodes").isNotNull()
                   & (F.col("start") < F.timestamp_seconds(F.lit(end)))
                   & (F.col("end").isNull() | (F.col("end") >= F.timestamp_seconds(F.lit(start)))))
            .select("job_id", F.coalesce("exe", "job_name").alias("app"), "nodes", "start", "end"))


def job_node_intervals(jobs: DataFrame, date: dt.date) -> DataFrame:
    """One row per (job, node): the half-open [t0, t1) of the seconds the job owns there."""
    _, day_end = day_bounds(date)
    one_s = F.expr("INTERVAL 1 SECOND")
    jn = jobs.select(
        "job_id", F.explode(F.array_distinct("nodes")).alias("node"),
        F.date_trunc("second", "start").alias("t0"),
        (F.date_trunc("second", F.coalesce(F.col("end"), F.timestamp_seconds(F.lit(day_end))))
         + one_s).alias("t1"))
    nxt = F.lead("t0").over(Window.partitionBy("node").orderBy("t0", "job_id"))
    return jn.withColumn("t1", F.least("t1", F.coalesce(nxt, F.col("t1"))))


def attribute_trace(wh: Warehouse, date: dt.date) -> DataFrame:
    """raw_lwfs_trace of `date` with the job of each line (UNATTRIBUTED when none):
    job_id, node, sec, op, fd, size, offset, count, path."""
    iv = job_node_intervals(beacon_jobs(wh, date), date).alias("j")
    t = wh.read("raw_lwfs_trace", [date]).alias("t")
    cond = ((F.col("t.node") == F.col("j.node")) & (F.col("t.ts") >= F.col("j.t0"))
            & (F.col("t.ts") < F.col("j.t1")))
    return t.join(iv, cond, "left").select(
        F.coalesce(F.col("j.job_id"), F.lit(UNATTRIBUTED)).alias("job_id"),
        F.coalesce(F.col("t.node"), F.col("t.ip")).alias("node"),
        F.floor(F.unix_millis(F.col("t.ts")) / 1000).cast("bigint").alias("sec"),
        "t.op", "t.fd", "t.size", "t.offset", "t.count", "t.path")


def _register(wh: Warehouse, date: dt.date) -> None:
    """Views `trace_job` and `job_meta` for the SQL of `date`."""
    attribute_trace(wh, date).createOrReplaceTempView("trace_job")
    (beacon_jobs(wh, date).groupBy("job_id").agg(F.first("app", True).alias("app"))
     .createOrReplaceTempView("job_meta"))


def write_trace_compression(wh: Warehouse, date: DateLike) -> DataFrame:
    """Compute and write trace_compression of `date` from raw_lwfs_trace, app_run and the
    trace_merged partition as stored (so the lossless check reads what was written);
    returns the written rows (checkpointed)."""
    date = as_date(date)
    _register(wh, date)
    wh.read("trace_merged", [date]).createOrReplaceTempView("merged_in")
    out = wh.spark.sql(sql("beacon/trace_compression", date=date.isoformat())).localCheckpoint()
    wh.write(out, "trace_compression", [date])
    return out


def _summary(comp: DataFrame, date: dt.date) -> str:
    """One line: jobs, entries per pass, ratios, unattributed lines, lossless jobs."""
    attributed = F.col("job_id") != UNATTRIBUTED
    r = comp.agg(
        F.sum(F.when(attributed, 1).otherwise(0)).alias("jobs"),
        F.sum("raw_entries").alias("raw"), F.sum("first_pass_entries").alias("first"),
        F.sum("merged_entries").alias("merged"),
        F.sum(F.when(~attributed, F.col("first_pass_entries")).otherwise(0)).alias("unatt"),
        F.sum(F.when(F.col("lossless"), 0).otherwise(1)).alias("lossy"),
        F.count("*").alias("groups")).first()
    if not r["groups"]:
        return "no LWFS client trace"
    raw, first, merged = r["raw"], r["first"], r["merged"]
    return (f"{r['jobs']} jobs: {raw} requests -> {first} first-pass -> {merged} merged "
            f"entries ({raw / max(first, 1):.1f}x, {first / max(merged, 1):.1f}x); "
            f"{r['unatt']} unattributed lines; "
            + ("lossless" if r["lossy"] == 0 else f"NOT LOSSLESS in {r['lossy']} job(s)"))


def write_trace_merged(wh: Warehouse, date: DateLike) -> None:
    """Merge and write trace_merged of `date` (sql/beacon/trace_merged.sql)."""
    date = as_date(date)
    _register(wh, date)
    merged = wh.spark.sql(sql("beacon/trace_merged", date=date.isoformat()))
    wh.write(merged, "trace_merged", [date])


@scoped
def build_trace_merged(wh: Warehouse, site: Site | None, date: DateLike) -> str:
    """Stage `trace_merged`: write trace_merged, then trace_compression (checked against
    the stored trace_merged) of `date`; returns a one-line summary. `site` is unused."""
    date = as_date(date)
    if not wh.has("raw_lwfs_trace", date) and not wh.has("trace_merged", date):
        return "no LWFS client trace (nothing to merge)"
    write_trace_merged(wh, date)
    return _summary(write_trace_compression(wh, date), date)


def compression_by_app(wh: Warehouse, first: DateLike, last: DateLike) -> pd.DataFrame:
    """Per application over [first, last]: jobs, entries after each pass and the ratios
    (sums over the jobs, so large jobs weigh more), and whether every job was lossless.
    Unattributed lines (job '-') are left out; jobs without a name are app '(unknown)'."""
    comp = wh.read("trace_compression", days(as_date(first), as_date(last)))
    agg = (comp.where(F.col("job_id") != UNATTRIBUTED)
           .groupBy(F.coalesce("app", F.lit("(unknown)")).alias("app"))
           .agg(F.countDistinct("job_id").alias("jobs"),
                F.sum("raw_entries").alias("raw_entries"),
                F.sum("first_pass_entries").alias("first_pass_entries"),
                F.sum("merged_entries").alias("merged_entries"),
                F.min(F.col("lossless").cast("int")).cast("boolean").alias("lossless"))
           .orderBy("app"))
    pdf = agg.toPandas()
    cols = ["app", "jobs", "raw_entries", "first_pass_entries", "merged_entries",
            "first_pass_ratio", "second_pass_ratio", "total_ratio", "lossless"]
    if pdf.empty:
        return pd.DataFrame(columns=cols)

    def ratio(a: str, b: str) -> pd.Series:
        return pdf[a] / pdf[b].where(pdf[b] > 0)

    pdf["first_pass_ratio"] = ratio("raw_entries", "first_pass_entries")
    pdf["second_pass_ratio"] = ratio("first_pass_entries", "merged_entries")
    pdf["total_ratio"] = ratio("raw_entries", "merged_entries")
    return pdf[cols]
