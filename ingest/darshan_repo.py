"""Find logs in a site's Darshan log repository (pytokio's `find_darshanlogs`).

The repository is laid out `<root>/YYYY/M/D/<user>_<exe>_id<jobid>_<M>-<D>-<sec>-<hash>
[_<n>].darshan` (month and day without leading zeros), one folder per day the job started
(in the site's local time, as Darshan writes it). No log is opened: the answer comes from
the folder and file names only, so a 0-byte placeholder is found like any other log.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from lassi.ingest.darshan import REPO_NAME


def day_dir(root: str | Path, day: dt.date) -> Path:
    """The folder of one day: `<root>/YYYY/M/D`."""
    return Path(root) / str(day.year) / str(day.month) / str(day.day)


def _as_date(d: dt.date | dt.datetime | str) -> dt.date:
    if isinstance(d, dt.datetime):
        return d.date()
    if isinstance(d, dt.date):
        return d
    return dt.date.fromisoformat(str(d)[:10])


def find_logs(root: str | Path, start: dt.date | dt.datetime | str,
              end: dt.date | dt.datetime | str | None = None, user: str | None = None,
              jobid: int | str | None = None) -> list[Path]:
    """Logs of the days start..end (inclusive; end defaults to start), optionally only those
    of one user and/or one job id, sorted by day then name."""
    first = _as_date(start)
    last = _as_date(end) if end is not None else first
    if last < first:
        raise ValueError(f"end {last} is before start {first}")
    out: list[Path] = []
    day = first
    while day <= last:
        folder = day_dir(root, day)
        if folder.is_dir():
            out += sorted(p for p in folder.iterdir() if p.is_file() and _match(p, user, jobid))
        day += dt.timedelta(days=1)
    return out


def _match(p: Path, user: str | None, jobid: int | str | None) -> bool:
    m = REPO_NAME.match(p.name)
    if m is None:
        return False
    if user and m.group("user") != user:
        return False
    return jobid is None or m.group("jobid") == str(jobid)
