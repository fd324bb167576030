"""`lassi archive-lmt`: archive a time window of an LMT database into the warehouse.

The rows of the database's file systems with ts in [from, to) replace exactly those rows of
`lmt_ost` and `lmt_mds` in the day partitions the window touches; every other row is kept
(each touched partition is read, the window's rows dropped, the new ones added and the
partition written atomically, by `lassi.ingest.writer`). Deltas are seeded by the sample
before the window (see `lassi.ingest.lmt_rows`), so archiving hour by hour gives the table
of archiving the whole day at once, and rerunning a window changes nothing. Quarantined
rows are added to the `quarantine` partition of the window's first day, without duplicates.

The spark-submit entry point (the hourly Airflow DAG runs it) is `jobs/archive_lmt.py`.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lassi.core.quarantine import ParseStats


def parse_time(text: str) -> dt.datetime:
    """An ISO date or datetime as naive UTC (a given offset is converted; none means UTC)."""
    try:
        t = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"not an ISO date or datetime (e.g. 2018-01-28T08:00): {text!r}") \
            from None
    if t.tzinfo is not None:
        t = t.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return t


def check_window(start: dt.datetime, end: dt.datetime) -> None:
    """ValueError unless start < end."""
    if not start < end:
        raise ValueError(f"--from {start.isoformat()} is not before --to {end.isoformat()}")


def archive(spark, wh, db, start: dt.datetime, end: dt.datetime) -> ParseStats:
    """Archive [start, end) (naive UTC) of an open `lassi.ingest.lmt.LmtDb`; returns the counts.

    The connector reads, `lassi.ingest.lmt_rows` makes the rows, `lassi.ingest.writer`
    writes them (`spark` is the warehouse's session, kept for the callers)."""
    from lassi.ingest.lmt_rows import window_tables
    from lassi.ingest.writer import merge_quarantine, write_tables

    del spark
    check_window(start, end)
    res = db.read(start, end)
    write_tables(wh, window_tables(res, start, end))
    if res.quarantined:
        merge_quarantine(wh, res.quarantined, start.date())
    return res.stats


def summary(stats: ParseStats, name: str, start: dt.datetime, end: dt.datetime) -> str:
    """One line for the end of an archive run."""
    return (f"archive-lmt {name} [{start.isoformat()}Z, {end.isoformat()}Z): "
            f"{stats.extra.get('ost_rows', 0)} lmt_ost + {stats.extra.get('mds_rows', 0)} "
            f"lmt_mds rows; {stats.lines_read} rows read = {stats.lines_used} used + "
            f"{stats.lines_quarantined} quarantined"
            + (f"; {stats.counter_resets} counter resets" if stats.counter_resets else ""))
