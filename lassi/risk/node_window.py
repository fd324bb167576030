"""Stage `node_window`: per-node, per-filesystem LASSi counters per window for one date."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.period import day_bounds
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse


def capture_dates(date: dt.date) -> list[dt.date]:
    """The raw_lustre_stats dates node_window of `date` reads: the date and the morning
    after (its captures close the date's last window)."""
    return [date, date + dt.timedelta(days=1)]


def node_window(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """node_window rows of `date` from raw_lustre_stats of its capture dates."""
    start, end = day_bounds(date)
    raw = (wh.read("raw_lustre_stats", capture_dates(date))
           .filter(F.col("kind").isin("export", "target"))
           .filter(F.col("snapshot_time") < F.timestamp_seconds(F.lit(end + site.window_s))))
    raw.createOrReplaceTempView("raw_capture")
    return wh.spark.sql(sql("risk/node_window", window_s=site.window_s, day_start=start,
                            day_end=end))


@scoped
def build_node_window(wh: Warehouse, site: Site, date: dt.date) -> int:
    """Compute and write the date's node_window partition; returns its row count. A date
    without Lustre captures (of the date or the morning after) has none."""
    if not any(wh.has("raw_lustre_stats", d) for d in capture_dates(date)):
        wh.clear("node_window", [date])
        return 0
    df = node_window(wh, site, date)
    wh.write(df, "node_window", [date])
    return wh.read("node_window", [date]).count()
