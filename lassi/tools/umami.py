"""UMAMI (TOKIO): one job against the history of its application, metric by metric.

Each row of the figure is one `job_metrics` column: on the left its value for the
application's earlier runs over time with the job as the last point, on the right the
history's quartiles (box) with the job marked — green when it is better than three
quarters of the history, red when it is worse than three quarters, grey otherwise.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse


@dataclass(frozen=True)
class Metric:
    column: str
    label: str
    unit: str
    higher_is_better: bool


METRICS = [
    Metric("perf_mibs", "I/O performance", "MiB/s", True),
    Metric("runtime_s", "Run time", "s", False),
    Metric("coverage_bw", "Bandwidth coverage", "job / file system", True),
    Metric("lmt_oss_cpu_mean", "OSS CPU load", "%", False),
    Metric("lmt_mds_cpu_mean", "MDS CPU load", "%", False),
    Metric("lmt_md_ops", "File-system metadata ops", "ops", False),
    Metric("ost_fullest_pct", "Fullest OST", "%", False),
    Metric("concurrent_jobs", "Concurrent jobs", "jobs", False),
]
BETTER, WORSE, USUAL = "#1a9850", "#d73027", "#636363"


class NoMetrics(ValueError):
    """The job has no job_metrics row."""


def history_dates(site: Site, date: dt.date, days: int | None = None) -> list[dt.date]:
    """The history window of `date`: the `days` (default tokio.history_days) days before
    it and the day itself, oldest first."""
    days = days or site.settings.tokio.history_days
    return [date - dt.timedelta(days=k) for k in range(days, -1, -1)]


@scoped
def umami_data(wh: Warehouse, site: Site, job_id: str, history_days: int | None = None,
               date: dt.date | None = None) -> tuple[dict, pd.DataFrame]:
    """The job's metrics and its application's earlier runs (oldest first) over the
    `history_days` (default tokio.history_days) before it. `date`, the job's start day
    when known, limits the lookup to that partition (else every date is searched)."""
    found = wh.read("job_metrics", None if date is None else [date]) \
        .filter(F.col("job_id") == job_id).collect()
    if not found:
        on = "" if date is None else f" on {date}"
        raise NoMetrics(f"job {job_id} has no job_metrics row{on} "
                        f"(run `lassi summarize-job {job_id}` or the daily run first)")
    job = max(found, key=lambda r: r["start"]).asDict()    # one job: one row per rerun day
    dates = history_dates(site, job["date"], history_days)
    cols = ["job_id", "start", *[m.column for m in METRICS]]
    hist = (wh.read("job_metrics", dates)
            .filter((F.col("app") == job["app"]) & (F.col("start") < job["start"]))
            .select(*cols).orderBy("start").toPandas())    # one application's runs
    return job, hist


def verdict(value: float | None, history: pd.Series, higher_is_better: bool) -> str:
    """BETTER / WORSE / USUAL colour of a value against the history's quartiles."""
    h = history.dropna()
    if value is None or pd.isna(value) or len(h) < 4:
        return USUAL
    q1, q3 = h.quantile(0.25), h.quantile(0.75)
    if (value > q3) if higher_is_better else (value < q1):
        return BETTER
    if (value < q1) if higher_is_better else (value > q3):
        return WORSE
    return USUAL


def _fmt(v: float) -> str:
    """A value for the eye: 1,500 / 0.52 / 3.2e+09."""
    if abs(v) >= 1e7:
        return f"{v:.2e}"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def plot_umami(job: dict, hist: pd.DataFrame, out: Path) -> Path:
    """Draw the UMAMI diagram of `job` to `out` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [m for m in METRICS if job.get(m.column) is not None or hist[m.column].notna().any()]
    fig, axes = plt.subplots(len(metrics), 2, figsize=(10, 1.5 * len(metrics) + 1.2),
                             gridspec_kw={"width_ratios": [4, 1]}, squeeze=False,
                             sharex="col")
    when = job["start"].strftime("%Y-%m-%d %H:%M")
    fig.suptitle(f"UMAMI: job {job['job_id']} ({job['app']}, {when} UTC) against "
                 f"{len(hist)} earlier runs", fontsize=12, fontweight="bold")
    for (left, right), m in zip(axes, metrics, strict=True):
        values, value = hist[m.column].astype(float), job.get(m.column)
        colour = verdict(value, values, m.higher_is_better)
        left.plot(hist["start"], values, marker="o", ms=3, color="#4575b4", lw=1)
        if value is not None:
            left.plot([job["start"]], [value], marker="o", ms=9, color=colour, ls="none")
        left.set_ylabel(f"{m.label}\n({m.unit})", fontsize=8, rotation=0, ha="right",
                        va="center")
        left.tick_params(labelsize=7)
        left.grid(alpha=0.3)
        if values.notna().sum() >= 1:
            right.boxplot(values.dropna(), widths=0.6, showfliers=False)
        if value is not None:
            right.plot([1], [value], marker="o", ms=9, color=colour)
            right.annotate(_fmt(value), (1, value), xytext=(8, 0),
                           textcoords="offset points", fontsize=8, va="center")
        right.set_xticks([])
        right.tick_params(labelsize=7)
    if hist.empty:                       # no history: a day around the job, not years
        half = dt.timedelta(hours=12)
        axes[-1][0].set_xlim(job["start"] - half, job["start"] + half)
    axes[-1][0].set_xlabel("job start (UTC)")
    handles = [plt.Line2D([], [], marker="o", ls="none", color=c, label=t)
               for c, t in ((BETTER, "better than 3/4 of history"),
                            (WORSE, "worse than 3/4 of history"), (USUAL, "usual"))]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 0.96))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def write_umami(wh: Warehouse, site: Site, job_id: str, out_dir: Path,
                history_days: int | None = None) -> Path:
    """`lassi umami JOBID`: the diagram as `<out_dir>/umami_<job>.png`."""
    job, hist = umami_data(wh, site, job_id, history_days)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in job_id)
    return plot_umami(job, hist, Path(out_dir) / f"umami_{safe}.png")
