"""The daily report's data: Spark queries over the warehouse -> small pandas frames.

Everything that grows with the site is aggregated (per fs-hour, top-N per filesystem) in
Spark before `toPandas()`; nothing here collects raw rows.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pandas as pd
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.period import MAX_RUN_DAYS
from lassi.core.schemas import ALL_COUNTERS
from lassi.core.schemas.common import MDS_COUNTERS
from lassi.core.sqltext import sql
from lassi.core.warehouse import Warehouse, days

TOP_CONTRIBUTORS = 8     # applications named in the stacked risk figures (per fs)
TOP_APPS = 10            # rows of the "top risky applications" table
TOP_SLOWED = 50          # rows of the slowed-runs table per filesystem
TOP_GROUPS = 25          # rows of the run-groups table
SCATTER_GROUPS = 4       # groups in the runtime-vs-risk figure
MIN_GROUP_RUNS = 3


@dataclass
class ReportData:
    """What one report shows; every frame is small (bounded by fs x hours or a top-N)."""

    site: str
    first: dt.date
    last: dt.date
    generated_at: dt.datetime
    alpha: float
    slowdown_factor: float
    oss_ops: list[str]
    mds_ops: list[str]
    dates_with_data: list[dt.date]
    filesystems: list[str]
    summary: dict
    quality: Quality             # ingest accounting, quarantine reasons, data checks
    fs_hour: pd.DataFrame        # fs, hour, n_apps, risk_oss, risk_mds, read/write_kb_ops
    app_risk: dict[str, pd.DataFrame]  # 'oss'/'mds' -> fs, hour, app_id, rank, label, risk
    baseline: pd.DataFrame       # fs, op, mean, std, rsd, n, period_start, period_end
    top_apps: pd.DataFrame
    slowed: pd.DataFrame
    groups: pd.DataFrame
    n_groups: int                # groups with >= MIN_GROUP_RUNS runs (table shows the top)
    group_runs: pd.DataFrame     # runs of the scatter groups: command, runtime_s, risk sums
    groups_date: dt.date | None = None
    notes: list[str] = field(default_factory=list)
    has_beacon: bool = False     # the page carries Beacon sections (set when rendering)
    has_tokio: bool = False      # ... and TOKIO (job_metrics) sections
    has_siox: bool = False       # ... and SIOX (I/O path) sections

    @property
    def missing_dates(self) -> list[dt.date]:
        return [d for d in days(self.first, self.last) if d not in self.dates_with_data]


def app_label(exe, user, app_id) -> str:
    """How an application is named in figures and tables: "exe (user) app_id"."""
    exe = exe if isinstance(exe, str) and exe else "(no exe)"
    user = user if isinstance(user, str) and user else "?"
    return f"{exe} ({user}) {app_id}"


def _pdf(df) -> pd.DataFrame:
    return df.toPandas()


def dates_with_app_hour(wh: Warehouse, first: dt.date, last: dt.date) -> list[dt.date]:
    """Dates of the period that have an app_hour partition."""
    return [d for d in days(first, last) if wh.has("app_hour", d)]


def load(wh: Warehouse, site: Site, first: dt.date, last: dt.date) -> ReportData:
    """Query everything the report shows for the dates first..last (inclusive)."""
    spark = wh.spark
    present = dates_with_app_hour(wh, first, last)
    if not present:
        span = first.isoformat() if first == last else f"{first}..{last}"
        raise ValueError(f"no app_hour data for {span} in {wh.root} "
                         f"(run `lassi run daily` first)")
    period = days(first, last)
    oss_ops = list(site.settings.risk.oss_ops)
    mds_ops = list(site.settings.risk.mds_ops)

    # app_hour and fs_hour from the first day until the period's runs can have ended (for
    # the slowed runs' concurrent risk); the period's own rows are a filter of those.
    ext = days(first, last + dt.timedelta(days=MAX_RUN_DAYS))
    ah_ext = wh.read("app_hour", ext).cache()
    ah_ext.createOrReplaceTempView("ah_ext")
    ah = ah_ext.filter(F.col("date").isin(present))
    ah.createOrReplaceTempView("ah")
    fh_ext = wh.read("fs_hour", ext).cache()
    fh_ext.createOrReplaceTempView("fh_ext")
    wh.read("app_run", period).createOrReplaceTempView("period_runs")
    wh.read("run_slowdown", period).createOrReplaceTempView("period_slowdown")
    try:
        summary = _pdf(spark.sql(sql("report/summary"))).iloc[0].to_dict()
        summary = {k: int(v) for k, v in summary.items()}

        fs_hour = _pdf(fh_ext.filter(F.col("date").isin(present)).select(
            "fs", "hour", "n_apps", "risk_oss", "risk_mds", "read_kb", "write_kb",
            "read_kb_ops", "write_kb_ops"))

        app_risk = {}
        for kind in ("oss", "mds"):
            pdf = _pdf(spark.sql(sql("report/app_risk", risk=f"risk_{kind}",
                                     top_n=TOP_CONTRIBUTORS)))
            pdf["label"] = [a if isinstance(a, str) else "other apps" for a in pdf["app_id"]]
            app_risk[kind] = pdf

        risk_ops = [o for o in ALL_COUNTERS if o in oss_ops or o in mds_ops]
        op_max = ",\n         ".join(f"MAX(r_{o}) AS max_r_{o}" for o in risk_ops)
        top = _pdf(spark.sql(sql("report/top_apps", op_max=op_max, top_n=TOP_APPS)))
        top_op, top_r = [], []
        for _, row in top.iterrows():
            vals = {o: row[f"max_r_{o}"] for o in risk_ops}
            best = max(vals, key=lambda o: (vals[o], o)) if vals else None
            top_op.append(best if best and vals[best] > 0 else None)
            top_r.append(vals[best] if best else None)
        top["top_op"], top["top_op_r"] = top_op, top_r
        top = top.drop(columns=[f"max_r_{o}" for o in risk_ops])
        top = top.sort_values(["fs", "rank"]).reset_index(drop=True)

        slowed = _pdf(spark.sql(sql("report/slowed_runs", top_n=TOP_SLOWED)))
        slowed = slowed.sort_values(["fs", "rank"]).reset_index(drop=True)

        baseline = _pdf(wh.read("fs_baseline", [present[-1]]).drop("date"))

        quality = load_quality(wh, period)
        groups, n_groups, group_runs, groups_date = _groups(wh, period)

        filesystems = sorted(set(fs_hour["fs"]) | {f.name for f in site.filesystems})
    finally:
        ah_ext.unpersist()
        fh_ext.unpersist()

    return ReportData(
        site=site.name, first=first, last=last,
        generated_at=dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
        alpha=site.settings.thresholds.alpha,
        slowdown_factor=site.settings.thresholds.slowdown_factor, oss_ops=oss_ops,
        mds_ops=mds_ops,
        dates_with_data=present, filesystems=filesystems, summary=summary,
        quality=quality, fs_hour=fs_hour, app_risk=app_risk,
        baseline=baseline, top_apps=top, slowed=slowed, groups=groups, n_groups=n_groups,
        group_runs=group_runs, groups_date=groups_date)


@dataclass
class Quality:
    """What the data-quality box shows for a period."""

    log: pd.DataFrame            # per source: files, lines read/used/quarantined, resets
    quarantine: pd.DataFrame     # per source and reason: lines (the ten commonest)
    checks: pd.DataFrame         # data_check rows: source, check, n_bad, n_total, examples,
                                 # warning (summed over the period, examples of its last day)
    jobstats: pd.DataFrame = field(default_factory=pd.DataFrame)   # job_window per id_kind:
                                 # ids, jobs, GiB moved, metadata ops
    attribution: pd.DataFrame = field(default_factory=pd.DataFrame)  # GiB per `counted`
                                 # (exports, job_stats: what the servers counted) and per
                                 # `attributed_by` (app_hour: exports, job_stats)


def load_quality(wh: Warehouse, period: list[dt.date]) -> Quality:
    """The period's ingest accounting, commonest quarantine reasons and data checks."""
    log = wh.read("ingest_log", period).groupBy("source").agg(
        F.sum("files").alias("files"), F.sum("lines_read").alias("lines_read"),
        F.sum("lines_used").alias("lines_used"),
        F.sum("lines_quarantined").alias("lines_quarantined"),
        F.sum("counter_resets").alias("counter_resets")).orderBy("source")
    q = (wh.read("quarantine", period).groupBy("source", "reason").count()
         .orderBy(F.desc("count"), "source", "reason").limit(10))
    checks = (wh.read("data_check", period).groupBy("source", "check").agg(
        F.sum("n_bad").alias("n_bad"), F.sum("n_total").alias("n_total"),
        F.max_by("examples", "date").alias("examples"),
        F.max_by("warning", "date").alias("warning")).orderBy("source", "check"))
    js = wh.read("job_window", period).groupBy("id_kind").agg(
        F.countDistinct("job_id").alias("ids"), F.countDistinct("job").alias("jobs"),
        ((F.sum("read_kb") + F.sum("write_kb")) / 1024**2).alias("gib"),
        sum((F.sum(c) for c in MDS_COUNTERS), F.lit(0)).alias("md_ops")).orderBy("id_kind")
    return Quality(_pdf(log), _pdf(q), _pdf(checks), _pdf(js), _attribution(wh, period))


def _attribution(wh: Warehouse, period: list[dt.date]) -> pd.DataFrame:
    """GiB read + written that the servers counted (`what` = counted: node_window from the
    export statistics, job_window from job_stats) and that app_hour attributed to runs
    (`what` = attributed, by `source`): at most four rows."""
    gib = ((F.sum("read_kb") + F.sum("write_kb")) / 1024**2).alias("gib")
    counted = [wh.read(t, period).agg(gib).select(F.lit("counted").alias("what"),
                                                  F.lit(src).alias("source"), "gib")
               for t, src in (("node_window", "exports"), ("job_window", "job_stats"))]
    attributed = (wh.read("app_hour", period).groupBy("attributed_by").agg(gib)
                  .select(F.lit("attributed").alias("what"),
                          F.col("attributed_by").alias("source"), "gib"))
    out = _pdf(counted[0].unionByName(counted[1]).unionByName(attributed))
    return out[out["gib"].fillna(0) > 0].reset_index(drop=True)


def _groups(wh: Warehouse, period: list[dt.date]):
    """run_group of the period's last date that has one (its groups span the baseline)."""
    have = [d for d in period if wh.has("run_group", d)]
    empty = pd.DataFrame()
    if not have:
        return empty, 0, empty, None
    d = have[-1]
    rg = wh.read("run_group", [d]).filter(F.col("n_runs") >= MIN_GROUP_RUNS).cache()
    try:
        n_groups = rg.count()
        groups = _pdf(rg.orderBy(F.desc("n_slowed"), F.desc("n_runs"), "command")
                      .limit(TOP_GROUPS).drop("date"))
        top = _pdf(rg.orderBy(F.desc("n_runs"), F.desc("n_slowed"), "command")
                   .limit(SCATTER_GROUPS).select("command", "n_runs"))
    finally:
        rg.unpersist()
    if top.empty:
        return groups, n_groups, empty, d
    first, last = groups["period_start"].min(), groups["period_end"].max()
    cmds = list(top["command"])
    span = days(first, last)
    runs = (wh.read("app_run", span).filter(F.col("command").isin(cmds))
            .join(wh.read("run_slowdown", span), ["app_id", "source", "date"])
            .filter(F.col("slowdown").isNotNull())
            .select("command", "app_id", "runtime_s", "risk_oss_sum", "risk_mds_sum",
                    "slowed"))
    group_runs = _pdf(runs)
    order = {c: i for i, c in enumerate(cmds)}
    group_runs["order"] = group_runs["command"].map(order)
    return groups, n_groups, group_runs.sort_values(["order", "app_id"]), d
