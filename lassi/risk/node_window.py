"""Stage `node_window`: per-node, per-filesystem LASSi counters per window for one date
(the query: lassi.core.captures.node_windows)."""

from __future__ import annotations

import datetime as dt

from lassi.core.captures import has_captures, node_windows
from lassi.core.config import Site
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse


@scoped
def build_node_window(wh: Warehouse, site: Site, date: dt.date) -> int:
    """Compute and write the date's node_window partition; returns its row count. A date
    without Lustre captures (of the date or the morning after) has none."""
    if not has_captures(wh, date):
        wh.clear("node_window", [date])
        return 0
    # each file's rows by node, then time: the attribution join (app_hour, SIOX's export
    # hops) probes its (node, hour) cells in turn instead of at random, and reads by node
    # skip pages (the files' page index). The dense ARCHER day's warm app_hour + fs_hour,
    # repetitions 4-6: 4.55 -> 3.9 s; the sort costs this stage nothing measurable
    # (bench/scale-history.md). `date` first: the partitioned write's own required order,
    # which would replace a sort that does not begin with it.
    df = node_windows(wh, site, date).sortWithinPartitions("date", "node", "window_start")
    wh.write(df, "node_window", [date])
    return wh.read("node_window", [date]).count()
