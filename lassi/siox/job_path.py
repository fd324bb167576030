"""SIOX stage `job_path`: each job's causal I/O path and where it lost time (SIOX §4.4, §6).

Per day, for a site with forwarding nodes:

1. every component's minute next to its knowledge base (sql/siox/steps/component_state.sql:
   `component_minute` with the `component_baseline` median at the same request-size and
   load class);
2. the pinpoint (`lassi.siox.pinpoint`, applyInPandas per hour): which forwarding nodes
   and OSTs explain the forwarding nodes' excess LWFS service time that hour — OSTs by
   their clients' wait for them where the Lustre client layer reports it →
   `component_pinpoint`;
3. per job, minute and hop (compute node, forwarding node, OST, MDS) the job's bytes and
   requests there, the component's rate against its baseline and, at forwarding nodes,
   the time its requests spent in service against the time the baseline predicts; the
   excess is divided among the hour's pinpointed faults on the job's path and load →
   `job_path` (sql/siox/job_path.sql).

Job hops come from `job_timeseries` (the Beacon profiles' share rule for forwarding, OST
and MDS bytes: column `attribution`), so `job_path` of a date holds the jobs that started
that day; minutes after midnight have no component state yet (their component_minute is
the next date's) and carry no lost time. A site without forwarding nodes (ARCHER) has no
LWFS service times: its path comes from Lustre export statistics (lassi.siox.export_path).
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
from pyspark.sql import DataFrame

from lassi.core.captures import has_captures
from lassi.core.config import Site
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse
from lassi.siox import export_path
from lassi.siox.knowledge import FWD_POOL, ost_pool_sql
from lassi.siox.pinpoint import fault_rows, pinpoint, pinpoint_frame


def _pinpoint_hour(min_excess: float):
    """applyInPandas function: one hour's observations -> its component_pinpoint rows."""

    def fit(pdf: pd.DataFrame) -> pd.DataFrame:
        obs = pdf.drop_duplicates(["fwd", "minute"])[["fwd", "minute", "excess",
                                                      "base_exe_time_s"]]
        obs = obs.reset_index(drop=True)
        key = {(f, m): i for i, (f, m) in enumerate(zip(obs["fwd"], obs["minute"],
                                                        strict=True))}
        sh = pdf.dropna(subset=["ost"])
        shares = pd.DataFrame({"i": [key[(f, m)] for f, m in zip(sh["fwd"], sh["minute"],
                                                                  strict=True)],
                               **{c: sh[c].to_numpy() for c in
                                  ("ost", "share", "rpc_wait_s", "expected_wait_s",
                                   "expected_wait90_s")}})
        return fault_rows(pdf["hour"].iloc[0], pinpoint(obs, shares, min_excess))

    return fit


def register_inputs(wh: Warehouse, date: dt.date) -> None:
    """The views of sql/siox/job_path.sql and its steps, over `date`."""
    spark = wh.spark
    wh.read("component_minute", [date]).createOrReplaceTempView("jp_minute")
    wh.read("component_baseline", [date]).createOrReplaceTempView("jp_baseline")
    spark.sql(sql("siox/steps/component_state", ost_pool=ost_pool_sql("component"),
                  fwd_pool=FWD_POOL)) \
        .createOrReplaceTempView("jp_state")
    wh.read("raw_lustre_client", [date]).createOrReplaceTempView("lustre_client")
    spark.sql(sql("beacon/steps/fwd_ost_minute")).createOrReplaceTempView("jp_fwd_ost")
    wh.read("job_timeseries", [date]).createOrReplaceTempView("jp_ts")
    wh.read("fwd_map", [date]).createOrReplaceTempView("jp_fwd_map")
    (wh.read("path_component", [date]).filter("kind = 'fwd'")
     .selectExpr("component", "threads").createOrReplaceTempView("jp_threads"))


def component_pinpoint(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """component_pinpoint rows of `date` (needs register_inputs)."""
    spark = wh.spark
    inp = spark.sql(sql("siox/steps/pinpoint_input")).localCheckpoint()
    inp.createOrReplaceTempView("jp_pin_input")
    return pinpoint_frame(inp, "hour", _pinpoint_hour(site.settings.thresholds.pinpoint_min_excess),
                          date)


def job_path(wh: Warehouse, pins: DataFrame, date: dt.date) -> DataFrame:
    """job_path rows of `date` from the registered views and the hour's pinpoint."""
    spark = wh.spark
    inp = spark.table("jp_pin_input")
    inp.selectExpr("fwd", "minute", "excess", "base_exe_time_s") \
        .dropDuplicates(["fwd", "minute"]).createOrReplaceTempView("jp_obs")
    inp.filter("ost IS NOT NULL") \
        .selectExpr("fwd", "minute", "ost", "share", "rpc_wait_s", "expected_wait_s") \
        .createOrReplaceTempView("jp_shares")
    pins.createOrReplaceTempView("jp_pin")
    return spark.sql(sql("siox/job_path", date=date.isoformat()))


def _pinpoint_and_paths(wh: Warehouse, site: Site, date: dt.date) -> tuple[DataFrame, DataFrame]:
    """The day's component_pinpoint and job_path frames: from the forwarding layer's service
    times where there is one, else from Lustre export statistics (lassi.siox.export_path)."""
    if site.has_forwarding:
        register_inputs(wh, date)
        pins = component_pinpoint(wh, site, date).localCheckpoint()
        return pins, job_path(wh, pins.drop("date"), date)
    export_path.register_inputs(wh, site, date)
    pins = export_path.component_pinpoint(wh, site, date).localCheckpoint()
    return pins, export_path.job_path(wh, pins.drop("date"), date)


@scoped
def build_job_path(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `job_path`: component_pinpoint and job_path of `date`; a one-line summary."""
    missing = (None if (wh.has("job_timeseries", date) if site.has_forwarding
                        else has_captures(wh, date))
               else "no job time series" if site.has_forwarding else "no Lustre captures")
    if missing:
        wh.clear("component_pinpoint", [date])
        wh.clear("job_path", [date])
        return f"no job paths: {missing} for the day"
    pins, paths = _pinpoint_and_paths(wh, site, date)
    wh.write(pins, "component_pinpoint", [date])
    paths = paths.localCheckpoint()
    wh.write(paths, "job_path", [date])
    n = paths.selectExpr("count(DISTINCT job_id) AS jobs", "count(*) AS hops",
                         "sum(lost_s) AS lost",
                         "count(DISTINCT CASE WHEN lost_s > 0 THEN job_id END) AS hit").first()
    faults = pins.selectExpr("concat_ws(', ', array_sort(collect_set(component))) AS c").first()
    return (f"{n['hops']} hops of {n['jobs']} jobs; {n['hit']} jobs lost "
            f"{(n['lost'] or 0) / 3600:.1f} h to components at fault "
            f"({faults['c'] or 'none pinpointed'})")
