"""SIOX stage `job_path` on a site with Lustre export statistics and no forwarding layer
(ARCHER): each job's causal path compute node -> OST/MDT per capture window (SIOX §4.4, §6).

Export statistics name the client (NID -> compute node -> the launch running on it, nodes
being exclusive) and the target, so a job's bytes and requests per target are exact. They
carry no service times, so "slow" is measured on the runs, against their own history:

1. hops (sql/siox/steps/export_hops.sql): per launch, node, target and window, what it moved;
2. pinpoint (`lassi.siox.pinpoint`, applyInPandas per hour, evidence `slow_runs`): the runs
   that did I/O within SPAN_H hours of the hour are the observations (a fault lasts hours,
   and at a small site one hour rarely has two runs through one OST), their excess the
   LASSi slowdown − 1 (runtime over their command group's mean); each target is a
   candidate touching the runs that used it when at least MIN_SLOW_RUNS runs slowed by
   `pinpoint_min_run_excess` or more used it (one slow run with a dozen targets cannot tell
   which of them held it back, and its own variance must not name a component). A slow
   OST slows every run using it while the runs that avoid it keep their pace, so least
   squares finds it. A target is named for the hour when a slowed run used it in that
   hour, and not when another target fits exactly as well (the same slowed runs and no
   more healthy ones: the runs cannot tell them apart). A target that reached LOAD_UTIL of
   its peak in the hour was busy: its runs were slowed by load (their neighbours), not by
   a fault, so it is a candidate that takes up their excess but is not named;
3. `job_path` (sql/siox/steps/export_path.sql): per job, window and hop, with each
   target's rate against its knowledge base and the run's LASSi lost time split over the
   pinpointed targets on its path (`lost_s`) and, for what they leave, over its windows on
   busy targets (`lost_load_s`: queueing behind its neighbours there, who are named by
   lassi.siox.diagnosis).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame

from lassi.core.captures import node_windows, register_launch_cells
from lassi.core.config import Site
from lassi.core.schemas import MDS_COUNTERS
from lassi.core.sqltext import sql
from lassi.core.warehouse import Warehouse
from lassi.siox.knowledge import FWD_POOL, ost_pool_sql
from lassi.siox.pinpoint import fault_rows, pinpoint, pinpoint_frame

SPAN_H = 1                 # the fit of hour h pools the runs of hours h-1 .. h+1
MIN_SLOW_RUNS = 2          # slowed runs (in the pooled hours) a candidate target must share
LOAD_UTIL = 0.8            # a target this close to its peak in the hour is busy, not faulty


def _pinpoint_hour(min_excess: float):
    """applyInPandas function: the (run, target) rows pooled for one centre hour -> its
    component_pinpoint rows."""

    def fit(pdf: pd.DataFrame) -> pd.DataFrame:
        centre = pdf["centre"].iloc[0]
        pair = pdf.drop_duplicates(["app_id", "component"])
        obs = pair.drop_duplicates("app_id")[["app_id", "excess"]].reset_index(drop=True)
        here = pdf[pdf["hour"] == centre]
        busy = set(here.loc[here["busy"], "component"])
        n_slowed = pair[pair["excess"] >= min_excess].groupby("component")["app_id"].nunique()
        pair = pair[pair["component"].map(n_slowed).fillna(0).ge(MIN_SLOW_RUNS)
                    | pair["component"].isin(busy)]
        pos = {a: i for i, a in enumerate(obs["app_id"])}
        shares = pd.DataFrame({"i": pair["app_id"].map(pos).to_numpy(),
                               "ost": pair["component"].to_numpy(),
                               "kind": pair["kind"].to_numpy(), "share": 1.0})
        slowed_here = set(here.loc[here["excess"] >= min_excess, "component"])
        tied = _tied(obs["excess"].to_numpy(float), shares)
        faults = [f for f in pinpoint(obs[["excess"]], shares, min_excess)
                  if f.component in slowed_here and f.component not in busy | tied]
        return fault_rows(centre, faults, "slow_runs")

    return fit


def _tied(excess: np.ndarray, shares: pd.DataFrame) -> set[str]:
    """Targets whose fit to the excess another target equals (the same slowed runs and no
    more healthy ones): the runs cannot tell them apart, so neither is named."""
    e = np.clip(excess, 0.0, None)
    gain = {}
    for name, g in shares.groupby("ost"):
        x = np.zeros(len(e))
        x[g["i"].to_numpy()] = 1.0
        gain[str(name)] = float(x @ e) ** 2 / float(x @ x)
    out = set()
    for name, v in gain.items():
        if v > 0 and sum(abs(w - v) <= 1e-9 * v for w in gain.values()) > 1:
            out.add(name)
    return out


def register_inputs(wh: Warehouse, site: Site, date: dt.date) -> None:
    """The views of sql/siox/steps/export_path.sql and its steps, over `date`."""
    spark = wh.spark
    node_windows(wh, site, date, by_target=True).createOrReplaceTempView("xp_target_window")
    register_launch_cells(wh, site, date)
    md_sum = " + ".join(f"w.{c}" for c in MDS_COUNTERS)
    spark.sql(sql("siox/steps/export_hops", md_sum=md_sum)).localCheckpoint() \
        .createOrReplaceTempView("xp_hops")
    wh.read("run_slowdown", [date - dt.timedelta(days=1), date]) \
        .createOrReplaceTempView("xp_slowdown")
    spark.sql(sql("siox/steps/export_runs")).createOrReplaceTempView("xp_runs")
    wh.read("component_minute", [date]).createOrReplaceTempView("jp_minute")
    wh.read("component_baseline", [date]).createOrReplaceTempView("jp_baseline")
    spark.sql(sql("siox/steps/component_state", ost_pool=ost_pool_sql("component"),
                  fwd_pool=FWD_POOL)).createOrReplaceTempView("xp_state")
    (wh.read("path_component", [date]).filter("kind IN ('ost', 'mdt')")
     .selectExpr("component", "peak_bw", "peak_iops").createOrReplaceTempView("xp_peaks"))
    spark.sql(sql("siox/steps/export_target_util")).createOrReplaceTempView("xp_util")


def component_pinpoint(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """component_pinpoint rows of `date` (needs register_inputs)."""
    inp = wh.spark.sql(sql("siox/steps/export_pinpoint_input", load_util=LOAD_UTIL,
                           span_h=SPAN_H))
    fit = _pinpoint_hour(site.settings.thresholds.pinpoint_min_run_excess)
    return pinpoint_frame(inp, "centre", fit, date)


def job_path(wh: Warehouse, pins: DataFrame, date: dt.date) -> DataFrame:
    """job_path rows of `date` from the registered views and the day's pinpoint."""
    pins.createOrReplaceTempView("xp_pin")
    return wh.spark.sql(sql("siox/steps/export_path", load_util=LOAD_UTIL,
                            date=date.isoformat()))
