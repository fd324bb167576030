"""Periods every stage agrees on: a UTC day in epoch seconds, the baseline period, and how
far back a run that overlaps a day may have started."""

from __future__ import annotations

import datetime as dt

from lassi.core.config import Site

# Launches that can overlap a day started at most this many days before it (ARCHER: 48 h).
MAX_RUN_DAYS = 2


def day_bounds(date: dt.date) -> tuple[int, int]:
    """Epoch seconds of the date's first and the next date's first instant (UTC)."""
    start = int(dt.datetime(date.year, date.month, date.day, tzinfo=dt.timezone.utc).timestamp())
    return start, start + 86400


def minute_bounds(date: dt.date) -> tuple[str, str]:
    """The date's first and last minute (UTC) as SQL timestamp text, 'YYYY-MM-DD HH:MM:SS'."""
    first = dt.datetime.combine(date, dt.time())
    last = first + dt.timedelta(hours=23, minutes=59)
    return f"{first:%Y-%m-%d %H:%M:%S}", f"{last:%Y-%m-%d %H:%M:%S}"


def baseline_period(site: Site, date: dt.date) -> tuple[dt.date, dt.date]:
    """First and last date of the baseline period ending with `date` (inclusive):
    the site's `baseline_days` days (`Site.settings.baseline_period`)."""
    return site.settings.baseline_period(date)
