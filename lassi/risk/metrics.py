"""LASSi stages `app_hour` and `fs_hour`: node_window attributed to application launches per
hour, the filesystem baseline, per-op risk and ops metrics (DESIGN.md "Key definitions").

The SQL is in sql/risk/steps/ (app_launch, launch_cells, launch_claims, launch_meta,
node_counts or node_counts_whole, job_counts, counts_by_source, app_hour_counts) and
sql/risk/fs_baseline.sql, risk/app_hour.sql and risk/fs_hour.sql; this module fills in
their column lists and wires the views.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from lassi.core.captures import register_launch_cells
from lassi.core.config import Site
from lassi.core.period import baseline_period, day_bounds
from lassi.core.schemas import ALL_COUNTERS, schema_of
from lassi.core.sqltext import double_literal, sql, string_literal
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, collected, days


def app_hour_counts(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """The day's app_hour counters (no risks yet), one row per (launch, fs, hour).

    The plan is only as large as the day needs: the claims join and share-weighted sums
    only on a day where two launches may claim a node-window, the job_stats branch only on
    a day with job_window rows (each pruned by the optimizer anyway, but analysed and
    optimised at every run: the dense ARCHER day's counts 1.31 -> 1.07 s warm)."""
    claimed = register_launch_cells(wh, site, date)
    wh.spark.sql(sql("risk/steps/launch_meta", day_end=day_bounds(date)[1])) \
        .createOrReplaceTempView("launch_meta")
    wh.read("node_window", [date]).createOrReplaceTempView("nw")
    shares = share_sums()
    node = (wh.spark.sql(sql("risk/steps/node_counts", share_counters=shares)) if claimed else
            wh.spark.sql(sql("risk/steps/node_counts_whole", counter_sums=plain_sums("w."))))
    if wh.has("job_window", date):
        node.createOrReplaceTempView("node_counts")
        wh.read("job_window", [date]).createOrReplaceTempView("job_window_in")
        wh.spark.sql(sql("risk/steps/job_counts", share_counters=shares,
                         job_sums=plain_sums(),
                         window_s=site.window_s)).createOrReplaceTempView("job_counts")
        counts = wh.spark.sql(sql("risk/steps/counts_by_source"))
    else:
        counts = node.withColumn("attributed_by", F.lit("exports"))
    counts.createOrReplaceTempView("launch_counts")
    return wh.spark.sql(sql("risk/steps/app_hour_counts",
                            counter_names=", ".join(f"k.{c}" for c in ALL_COUNTERS)))


def plain_sums(prefix: str = "") -> str:
    """Each counter's sum, named as the counter (`prefix`: its table's alias and a dot)."""
    return ", ".join(f"SUM({prefix}{c}) AS {c}" for c in ALL_COUNTERS)


def share_sums() -> str:
    """Each counter's sum over windows weighted by `share`: kB stay doubles, operations are
    rounded to counts (a share of 1 keeps the sums exact)."""
    return ",\n       ".join(f"SUM(w.{c} * w.share) AS {c}" if c.endswith("_kb") else
                              f"CAST(ROUND(SUM(w.{c} * w.share)) AS BIGINT) AS {c}"
                              for c in ALL_COUNTERS)


def earlier_period_days(site: Site, date: dt.date) -> list[dt.date]:
    """The baseline period's days before `date`, whose app_hour enters fs_baseline."""
    first, last = baseline_period(site, date)
    return days(first, last - dt.timedelta(days=1))


def fs_baseline(wh: Warehouse, site: Site, date: dt.date, today: DataFrame) -> DataFrame:
    """fs_baseline rows of `date`: today's counters plus app_hour of the earlier period days."""
    first, last = baseline_period(site, date)
    cols = ["fs", *ALL_COUNTERS]
    rows = today.select(*cols).unionByName(
        wh.read("app_hour", earlier_period_days(site, date)).select(*cols))
    rows.createOrReplaceTempView("baseline_rows")
    pairs = ", ".join(f"'{c}', CAST({c} AS DOUBLE)" for c in ALL_COUNTERS)
    stack = f"stack({len(ALL_COUNTERS)}, {pairs})"
    return wh.spark.sql(sql("risk/fs_baseline", stack=stack, period_start=first.isoformat(),
                            period_end=last.isoformat()))


def _positive_sum(ops: tuple[str, ...]) -> str:
    return " + ".join(f"GREATEST(r_{op}, 0.0)" for op in ops) if ops else "0.0"


def app_hour_with_risk(wh: Warehouse, site: Site, date: dt.date, counts: DataFrame,
                       base: pa.Table) -> DataFrame:
    """Attach r_<op>, risk_oss, risk_mds and the ops metrics to the day's counters, by
    `base`: the day's fs_baseline rows (collected, a row per fs and op; not empty)."""
    counts.createOrReplaceTempView("app_hour_counts")
    alpha = site.settings.thresholds.alpha
    risk_cols = ",\n         ".join(
        f"CASE WHEN b.sd_{c} > 0 THEN (c.{c} - {alpha} * b.mu_{c}) / b.sd_{c} ELSE 0.0 END "
        f"AS r_{c}" for c in ALL_COUNTERS)
    risk = site.settings.risk
    return wh.spark.sql(sql("risk/app_hour", base_rows=_base_values(base),
                            base_columns=", ".join(["fs", *(f"mu_{c}, sd_{c}"
                                                            for c in ALL_COUNTERS)]),
                            risk_cols=risk_cols, risk_oss=_positive_sum(risk.oss_ops),
                            risk_mds=_positive_sum(risk.mds_ops), date=date.isoformat()))


def _base_values(base: pa.Table) -> str:
    """fs_baseline rows as SQL VALUES rows, one per fs: fs, then mu_<op>, sd_<op> for
    each of ALL_COUNTERS (NULL where the fs lacks the op)."""
    stats: dict[str, dict[str, tuple]] = {}
    for fs, op, mean, std in zip(*(base.column(c).to_pylist()
                                   for c in ("fs", "op", "mean", "std")), strict=True):
        stats.setdefault(fs, {})[op] = (mean, std)
    rows = []
    for fs, ops in stats.items():
        values = [string_literal(fs)]
        for c in ALL_COUNTERS:
            values += [double_literal(v) for v in ops.get(c, (None, None))]
        rows.append("(" + ", ".join(values) + ")")
    return ",\n       ".join(rows)


@scoped
def build_app_hour(wh: Warehouse, site: Site, date: dt.date) -> int:
    """Stage `app_hour`: write app_hour and fs_baseline of `date`; returns app_hour rows.
    A launch's counters come from its job's job_stats where they exist, else from the node
    join of the export statistics. Without node or job windows of the date or app_hour of
    the earlier period days both are empty (no Spark job)."""
    if not wh.has("node_window", date) and not wh.has("job_window", date) and not any(
            wh.has("app_hour", d) for d in earlier_period_days(site, date)):
        wh.clear("fs_baseline", [date])
        wh.clear("app_hour", [date])
        return 0
    counts = app_hour_counts(wh, site, date).localCheckpoint()
    base = collected(fs_baseline(wh, site, date, counts)
                     .selectExpr("*", f"DATE '{date.isoformat()}' AS date"), "fs_baseline")
    wh.write_rows(base, "fs_baseline", [date])                  # a row per fs and counter
    if not base.num_rows:                  # no counters today nor in the earlier days
        wh.clear("app_hour", [date])
        return 0
    written = Observation("app_hour rows")        # counted by the write: no job of its own
    wh.write(app_hour_with_risk(wh, site, date, counts, base)
             .observe(written, F.count(F.lit(1)).alias("rows")), "app_hour", [date])
    return written.get["rows"]


@scoped
def build_fs_hour(wh: Warehouse, site: Site, date: dt.date) -> int:
    """Stage `fs_hour`: per filesystem and hour totals and risk sums from app_hour."""
    if not wh.has("app_hour", date):
        wh.clear("fs_hour", [date])
        return 0
    wh.read("app_hour", [date]).createOrReplaceTempView("ah")
    counters = schema_of("fs_hour").fieldNames()
    sums = ",\n       ".join(f"SUM({c}) AS {c}" for c in ALL_COUNTERS if c in counters)
    risks = ",\n       ".join(f"SUM(GREATEST(r_{c}, 0.0)) AS r_{c}" for c in ALL_COUNTERS)
    out = wh.spark.sql(sql("risk/fs_hour", sum_counters=sums, sum_risks=risks))
    return wh.write_collected(out, "fs_hour", [date])            # a row per fs and hour
