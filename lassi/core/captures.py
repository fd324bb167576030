"""Per-node deltas of Lustre export statistics between captures (sql/risk/node_window.sql):
the query LASSi's `node_window` stage writes, and SIOX's export path reads per target."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.period import day_bounds
from lassi.core.sqltext import sql
from lassi.core.warehouse import Warehouse


def capture_dates(date: dt.date) -> list[dt.date]:
    """The raw_lustre_stats dates a day's windows read: the date and the morning after (its
    captures close the date's last window)."""
    return [date, date + dt.timedelta(days=1)]


def node_windows(wh: Warehouse, site: Site, date: dt.date, by_target: bool = False) -> DataFrame:
    """node_window rows of `date` from raw_lustre_stats of its capture dates; with
    `by_target`, one row per Lustre target too (column `target`)."""
    start, end = day_bounds(date)
    raw = (wh.read("raw_lustre_stats", capture_dates(date))
           .filter(F.col("kind").isin("export", "target"))
           .filter(F.col("snapshot_time") < F.timestamp_seconds(F.lit(end + site.window_s))))
    raw.createOrReplaceTempView("raw_capture")
    return wh.spark.sql(sql("risk/node_window", window_s=site.window_s, day_start=start,
                            day_end=end, by_target=", target" if by_target else ""))
