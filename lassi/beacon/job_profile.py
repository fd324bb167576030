"""Beacon stage `job_profile`: per-job I/O profiles from the multi-layer traces.

Inter-layer correlation as Beacon's §3.3.2: trace lines → jobs (job log: who ran on the node
then; `lassi.beacon.trace_merge.attribute_trace`, the rule the second pass uses too) → forwarding
nodes (static map, `fwd_map`) → OSTs (Lustre client layer of those forwarding nodes) and
the MDS (its per-source counters). Where jobs share a forwarding node, its load is split
by each job's compute-side throughput in that minute (`sql/beacon/steps/job_share.sql`).
Writes `job_timeseries` and `job_summary` for the jobs that started on the date or the day
before (a job that crossed midnight is finished the day after it started), like `slowdown`.

The SQL is in sql/beacon/steps/job_trace.sql, beacon/steps/job_compute_second.sql,
beacon/steps/job_share.sql, beacon/steps/fwd_ost_minute.sql,
beacon/steps/mds_minute.sql, beacon/job_timeseries.sql and beacon/job_summary.sql.
"""

from __future__ import annotations

import datetime as dt
from functools import reduce

from pyspark.sql import DataFrame

from lassi.beacon.trace_merge import attribute_trace
from lassi.core.config import Site
from lassi.core.schemas import REQUEST_SIZE_EDGES, REQUEST_SIZE_LABELS
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days

# An OST is listed among a job's OSTs when the job's share of its traffic is at least this
# fraction of the job's busiest OST (shared forwarding nodes smear small shares elsewhere).
OST_MIN_FRACTION = 0.01


def job_dates(date: dt.date) -> list[dt.date]:
    """Start days of the jobs a run for `date` (re)profiles: the day before and the day."""
    return [date - dt.timedelta(days=1), date]


def register_jobs(wh: Warehouse, dates: list[dt.date]) -> DataFrame:
    """View `beacon_jobs`: one row per Beacon job that started on `dates`."""
    runs = wh.read("app_run", dates)
    runs.createOrReplaceTempView("beacon_runs")
    df = wh.spark.sql(
        "SELECT job_id, FIRST(job_name, TRUE) AS app, FIRST(user, TRUE) AS user, "
        "FIRST(nodes) AS nodes, FIRST(n_nodes) AS n_nodes, MIN(start) AS start, "
        "MAX(`end`) AS `end` FROM beacon_runs "
        "WHERE source = 'beacon-job' AND start IS NOT NULL GROUP BY job_id")
    df.createOrReplaceTempView("beacon_jobs")
    return df


def register_inputs(wh: Warehouse, dates: list[dt.date]) -> None:
    """Views over the raw layers of `dates`: trace, lustre_client, mds, fwd_map, and the
    derived job_trace, job_compute_second, job_share, fwd_ost and mds_minute."""
    spark = wh.spark
    wh.read("raw_lwfs_trace", dates).createOrReplaceTempView("trace")
    wh.read("raw_lustre_client", dates).createOrReplaceTempView("lustre_client")
    wh.read("raw_mds", dates).createOrReplaceTempView("mds")
    maps = wh.read("fwd_map", dates)
    maps.dropDuplicates(["node"]).createOrReplaceTempView("fwd_map")
    attributed = [attribute_trace(wh, d) for d in dates]
    reduce(DataFrame.unionByName, attributed).createOrReplaceTempView("attributed")
    spark.sql(sql("beacon/steps/job_trace")).localCheckpoint().createOrReplaceTempView("job_trace")
    spark.sql(sql("beacon/steps/job_compute_second")).localCheckpoint() \
        .createOrReplaceTempView("job_compute_second")
    spark.sql(sql("beacon/steps/job_share")).localCheckpoint().createOrReplaceTempView("job_share")
    spark.sql(sql("beacon/steps/fwd_ost_minute")).createOrReplaceTempView("fwd_ost")
    spark.sql(sql("beacon/steps/mds_minute")).createOrReplaceTempView("mds_minute")


def _size_exprs() -> dict[str, str]:
    """The request-size bucket expressions of beacon/job_summary.sql."""
    edges = REQUEST_SIZE_EDGES + [None]
    conds = [f"size >= {lo}" + (f" AND size < {hi}" if hi is not None else "")
             for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    return {
        "size_hist": ", ".join(f"SUM(CASE WHEN {c} THEN count ELSE 0 END)" for c in conds),
        "size_bytes": ", ".join(f"SUM(CASE WHEN {c} THEN count * size ELSE 0 END)"
                                for c in conds),
        "size_labels": ", ".join(f"'{lab}'" for lab in REQUEST_SIZE_LABELS),
    }


def job_timeseries(wh: Warehouse) -> DataFrame:
    """job_timeseries rows of the registered jobs (needs register_jobs/register_inputs)."""
    return wh.spark.sql(sql("beacon/job_timeseries"))


def job_summary(wh: Warehouse, site: Site, ts: DataFrame) -> DataFrame:
    """job_summary rows of the registered jobs, given their job_timeseries rows `ts`."""
    ts.createOrReplaceTempView("job_ts")
    cores = int(site.data["compute"].get("procs_per_node", 1))
    return wh.spark.sql(sql("beacon/job_summary", cores_per_node=cores,
                            ost_min_fraction=OST_MIN_FRACTION, **_size_exprs()))


@scoped
def build_job_profile(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `job_profile`: job_timeseries and job_summary of the jobs started on the date
    and the day before; returns a one-line summary."""
    starts = job_dates(date)
    if not any(wh.has("raw_lwfs_trace", d) for d in days(starts[0], date)):
        return "no Beacon traces (nothing to profile)"
    jobs = register_jobs(wh, starts).localCheckpoint()
    jobs.createOrReplaceTempView("beacon_jobs")
    register_inputs(wh, days(starts[0], date))
    ts = job_timeseries(wh).localCheckpoint()
    summary = job_summary(wh, site, ts).localCheckpoint()
    owned = [d for d in starts if wh.has("app_run", d)]
    wh.write(ts, "job_timeseries", owned)
    wh.write(summary, "job_summary", owned)
    n = summary.selectExpr("count(*) AS jobs", "count_if(read_bytes + write_bytes > 0) AS io",
                           "count_if(date = DATE '" + date.isoformat() + "') AS today").first()
    return (f"{n['today']} jobs started on the day ({n['jobs']} with the day before), "
            f"{n['io']} with I/O")
