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
    df = node_windows(wh, site, date)
    wh.write(df, "node_window", [date])
    return wh.read("node_window", [date]).count()
