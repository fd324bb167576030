"""LASSi reports: `write_daily_report` renders one HTML page with PNG figures per filesystem.

Submodules: `data` (Spark queries -> small pandas frames), `figures` (matplotlib, Agg),
`html` (the page) and `daily` (puts them together, atomically).
"""

from __future__ import annotations


def write_daily_report(wh, site, first, last, out):
    """See `lassi.report.daily.write_daily_report` (imported lazily: no Spark at import)."""
    from lassi.report.daily import write_daily_report as _write

    return _write(wh, site, first, last, out)


__all__ = ["write_daily_report"]
