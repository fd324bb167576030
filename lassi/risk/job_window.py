"""Stage `job_window`: LASSi's counters per Lustre job_stats job id and window for one date
(the deltas: lassi.core.captures.job_windows), each id resolved to a scheduler job by the
site's `jobstats:` rule (lassi.core.settings.JobStats) or marked as a daemon or unknown.

job_stats entries are the server's own per-job counters, so a job's I/O is known without
joining nodes and times; an entry that Lustre cleaned up (job_cleanup_interval) and that
reappears counts from zero, and two ids of one job (e.g. with and without a suffix) resolve
to the same `job`.
"""

from __future__ import annotations

import datetime as dt
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lassi.core.captures import has_captures, has_job_stats, job_windows
from lassi.core.config import Site
from lassi.core.schemas import schema_of
from lassi.core.settings import JobStats
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse


def resolve_jobs(df: DataFrame, rule: JobStats) -> DataFrame:
    """`df` (a `job_id` column) with `job` (the scheduler's job id, or null) and `id_kind`
    (job | daemon | unknown) by the site's rule; `not_jobs` is tested first."""
    ident = F.col("job_id")
    daemon: Column = reduce(lambda a, b: a | b, (ident.rlike(rx) for rx in rule.not_jobs),
                            F.lit(False))
    group = F.regexp_extract(ident, rule.job, 1)
    is_job = ~daemon & ident.rlike(rule.job) & (group != "")
    fmt = rule.job_format.replace("%", "%%").replace("{}", "%s")
    return (df.withColumn("job", F.when(is_job, F.format_string(fmt, group)))
            .withColumn("id_kind", F.when(is_job, "job").when(daemon, "daemon")
                        .otherwise("unknown")))


@scoped
def build_job_window(wh: Warehouse, site: Site, date: dt.date) -> int | str:
    """Compute and write the date's job_window partition; returns its row count. A date
    without Lustre captures, or whose captures hold no job_stats, has none."""
    if not has_job_stats(wh, date):       # most sites: no delta query on a day without any
        wh.clear("job_window", [date])
        return ("no job_stats in the Lustre captures" if has_captures(wh, date)
                else "no Lustre captures (no job_stats)")
    names = schema_of("job_window").fieldNames()
    out = resolve_jobs(job_windows(wh, site, date), site.settings.jobstats).select(*names)
    wh.write(out, "job_window", [date])
    n = wh.read("job_window", [date]).count()
    return n if n else "no job_stats in the Lustre captures"
