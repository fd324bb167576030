"""LASSi stage `slowdown`: runs grouped by exact launch command, each run's slowdown factor
and flag, its summed risk (paper Table 7), and per group the runtime-risk correlation (Fig. 7).

Groups span the baseline period (thresholds: `baseline_days`, `slowdown_factor`). The stage
writes `run_slowdown` (one row per launch, keyed like app_run by app_id, source and the
launch's date) for the date and the day before, so a run that crossed midnight gets its final
risk sum the day after it started; run_group is written per date. app_run belongs to ingest
and is only read, so re-ingesting a date leaves its analysis in place.
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.period import MAX_RUN_DAYS, baseline_period
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days


def run_metrics(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """Per-launch runtime, group statistics, slowdown and risk sums over the period
    (views `app_run_in`, `app_launch` and `run_metrics` stay registered)."""
    first, last = baseline_period(site, date)
    wh.read("app_run", days(first - dt.timedelta(days=MAX_RUN_DAYS), last)) \
        .createOrReplaceTempView("app_run_in")
    wh.spark.sql(sql("risk/steps/app_launch")).createOrReplaceTempView("app_launch")
    wh.read("app_hour", days(first, last)).createOrReplaceTempView("period_app_hour")
    factor = site.settings.thresholds.slowdown_factor
    df = wh.spark.sql(sql("risk/steps/run_metrics", factor=factor))
    df.createOrReplaceTempView("run_metrics")
    return df


def nothing_to_group(wh: Warehouse, site: Site, date: dt.date) -> bool:
    """True when the period has no app_hour (no LASSi counters: every risk sum is 0) and no
    run that run_metrics reads has a launch command (no group, so no slowdown): a Beacon
    site, whose job log names no command. One small Spark job at most."""
    first, last = baseline_period(site, date)
    if set(wh.dates("app_hour")) & set(days(first, last)):
        return False
    runs = wh.read("app_run", days(first - dt.timedelta(days=MAX_RUN_DAYS), last))
    return runs.filter(F.col("command").isNotNull()).limit(1).count() == 0


@scoped
def build_run_metrics(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `slowdown`: run_slowdown of the date and the day before, and run_group."""
    prev = date - dt.timedelta(days=1)
    if nothing_to_group(wh, site, date):
        wh.clear("run_group", [date])
        wh.clear("run_slowdown", [prev, date])
        return "no launch commands and no LASSi counters for the day: no slowdown groups"
    first, last = baseline_period(site, date)
    metrics = run_metrics(wh, site, date).localCheckpoint()
    metrics.createOrReplaceTempView("run_metrics")
    groups = wh.spark.sql(sql("risk/run_group", period_start=first.isoformat(),
                              period_end=last.isoformat(), date=date.isoformat())
                        ).localCheckpoint()
    wh.write(groups, "run_group", [date])
    out = wh.spark.sql(sql("risk/run_slowdown", prev=prev.isoformat(), date=date.isoformat())
                       ).localCheckpoint()
    wh.write(out, "run_slowdown", [prev, date])
    n = out.agg(F.count("slowdown").alias("done"),
                F.count_if(F.col("slowed")).alias("slowed")).first()
    return (f"{n['done']} runs with a slowdown factor, {n['slowed']} slowed, "
            f"{groups.count()} command groups")
