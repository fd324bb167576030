"""The two sides of attributing Lustre export statistics to jobs, shared by LASSi's risk
stages and SIOX's export path:

- per-node deltas between captures (sql/risk/node_window.sql): the query the
  `node_window` stage writes, and SIOX's export path reads per target;
- the day's application launches exploded to node x hour (sql/risk/steps/app_launch.sql,
  launch_cells.sql), the equi-join keys that attribute those windows to launches, and the
  shares of the node-windows that several launches cover (launch_claims.sql)."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.period import MAX_RUN_DAYS, day_bounds
from lassi.core.sqltext import sql
from lassi.core.warehouse import Warehouse, days


def capture_dates(date: dt.date) -> list[dt.date]:
    """The raw_lustre_stats dates a day's windows read: the date and the morning after (its
    captures close the date's last window)."""
    return [date, date + dt.timedelta(days=1)]


def has_captures(wh: Warehouse, date: dt.date) -> bool:
    """Whether the date has Lustre captures (of the date or the morning after)."""
    return any(wh.has("raw_lustre_stats", d) for d in capture_dates(date))


def has_job_stats(wh: Warehouse, date: dt.date) -> bool:
    """Whether the date's captures hold a job_stats entry: one scan of the `kind` column
    that stops at the first, instead of the whole delta query on a day that has none."""
    dates = [d for d in capture_dates(date) if wh.has("raw_lustre_stats", d)]
    return bool(dates) and not (wh.read("raw_lustre_stats", dates)
                                .filter(F.col("kind") == "job").select("kind").isEmpty())


def node_windows(wh: Warehouse, site: Site, date: dt.date, by_target: bool = False) -> DataFrame:
    """node_window rows of `date` from raw_lustre_stats of its capture dates; with
    `by_target`, one row per Lustre target too (column `target`)."""
    return _capture_deltas(wh, site, date, "node", "export", "FALSE", by_target)


def job_windows(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """Per job_stats job id, filesystem and window of `date`: LASSi's counters as deltas
    (an entry that was cleaned up and reappears counts from zero)."""
    return _capture_deltas(wh, site, date, "job_id", "job",
                           "COALESCE(prev_seen < window_slot, FALSE)", False)


def _capture_deltas(wh: Warehouse, site: Site, date: dt.date, key: str, kind: str,
                    expired: str, by_target: bool) -> DataFrame:
    start, end = day_bounds(date)
    raw = (wh.read("raw_lustre_stats", capture_dates(date))
           .filter(F.col("kind").isin(kind, "target"))
           .filter(F.col("snapshot_time") < F.timestamp_seconds(F.lit(end + site.window_s))))
    raw.createOrReplaceTempView("raw_capture")
    return wh.spark.sql(sql("risk/node_window", window_s=site.window_s, day_start=start,
                            day_end=end, key=key, kind=f"'{kind}'", expired=expired,
                            by_target=", target" if by_target else ""))


def register_launch_cells(wh: Warehouse, site: Site, date: dt.date) -> bool:
    """Register the views `app_launch` (launches that may overlap `date`), `launch_cells`
    (each exploded to node x hour of the day) and `launch_claims` (each launch's share of
    the node-windows that several launches cover); True when some node-window may be
    claimed by two launches (a cell is `shared`).

    `app_launch` and `launch_cells` are materialised (local checkpoints: a job each, kept
    on the executors): the queries over them read them four times and more, and plan
    a short scan instead of their SQL each time (the dense ARCHER day's app_hour 3.7 ->
    3.2 s, the demo day's 2.7 -> 1.8 s; bench/scale-history.md). On a day where no launch's window
    range meets another's on a node (no cell `shared`), `launch_claims` is an empty
    relation the optimizer prunes from the joins that read it, and its query is not even
    analysed (0.08-0.16 s a day, warm). Whether a cell is shared is observed by the
    cells' checkpoint itself (an `Observation`), not asked by a job of its own."""
    launched = days(date - dt.timedelta(days=MAX_RUN_DAYS), date)
    wh.read("app_run", launched).createOrReplaceTempView("app_run_in")
    wh.spark.sql(sql("risk/steps/app_launch")).localCheckpoint() \
        .createOrReplaceTempView("app_launch")
    start, end = day_bounds(date)
    seen = Observation("shared launch cells")   # by the checkpoint's job: no job of its own
    cells = wh.spark.sql(sql("risk/steps/launch_cells", window_s=site.window_s,
                             day_start=start, day_end=end)) \
        .observe(seen, F.max("shared").alias("any")).localCheckpoint()
    cells.createOrReplaceTempView("launch_cells")
    shared = bool(seen.get["any"])                # null: no cell at all
    claims = (wh.spark.sql(sql("risk/steps/launch_claims", window_s=site.window_s, day_end=end))
              if shared else wh.spark.sql(sql("risk/steps/no_claims")))
    claims.createOrReplaceTempView("launch_claims")
    return shared
