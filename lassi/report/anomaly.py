"""Report part of issue #5: the day's abnormal jobs and, per abnormal job, a figure of its
abnormal phases against the normal phases of its application's history.

Data: `anomaly` (jobs with abnormal phases, the `io_phase` stage), `io_phase` (per phase its
bandwidth series `bw_series`, stage-1 category and flags) over the baseline period.
"""

from __future__ import annotations

import datetime as dt
from html import escape
from pathlib import Path

import pandas as pd
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.period import baseline_period
from lassi.core.plotstyle import LEFT, RIGHT, WIDTH
from lassi.core.plotstyle import pyplot as plt_
from lassi.core.plotstyle import save as save_
from lassi.core.warehouse import Warehouse, days
from lassi.report.html import esc, html_table, integer, shorten, sig3, td

TOP_ABNORMAL = 15      # jobs in the table
FIGURES = 6            # abnormal jobs with a figure
HISTORY_LINES = 30     # normal phases drawn per figure


def abnormal_jobs(wh: Warehouse, date: dt.date) -> pd.DataFrame:
    """The day's abnormal jobs, worst first (small: one row per abnormal job)."""
    if not wh.has("anomaly", date):
        return pd.DataFrame()
    jobs = wh.read("job_summary", [date]).select("job_id", "user", "n_nodes", "io_mode",
                                                 "fwd_nodes")
    a = wh.read("anomaly", [date]).join(jobs, "job_id", "left")
    if wh.has("interference", date):
        why = (wh.read("interference", [date]).groupBy("job_id")
               .agg(F.first("cause").alias("cause"),
                    F.array_join(F.array_sort(F.collect_set("neighbour")), ", ")
                    .alias("neighbours")))
        a = a.join(why, "job_id", "left")
    else:
        a = a.withColumn("cause", F.lit(None).cast("string")) \
             .withColumn("neighbours", F.lit(None).cast("string"))
    return a.orderBy(F.desc("worst_slowdown_est")).limit(TOP_ABNORMAL).toPandas()


def _history(wh: Warehouse, site: Site, date: dt.date, apps: list[str]) -> pd.DataFrame:
    """io_phase rows of `apps` over the baseline period ending with `date`."""
    first, _ = baseline_period(site, date)
    return (wh.read("io_phase", days(first, date)).where(F.col("app").isin(apps))
            .select("job_id", "app", "phase_no", "category", "bytes", "duration_s", "mean_bw",
                    "is_abnormal", "bw_series").toPandas())


def phase_figure(job: str, app: str, hist: pd.DataFrame, path: Path) -> Path:
    """Bandwidth over time since phase start: the job's abnormal phases against normal ones
    of the same application and stage-1 category."""
    plt = plt_()
    fig, ax = plt.subplots(figsize=(WIDTH * 0.75, 3.6))
    fig.subplots_adjust(left=LEFT + 0.02, right=RIGHT - 0.03, top=0.86, bottom=0.16)
    mine = hist[(hist.job_id == job) & hist.is_abnormal]
    cats = set(mine.category)
    normal = hist[(hist.category.isin(cats)) & ~hist.is_abnormal].head(HISTORY_LINES)
    for i, (_, r) in enumerate(normal.iterrows()):
        ax.plot(range(len(r.bw_series)), [v / 1e6 for v in r.bw_series], color="0.6",
                lw=0.8, alpha=0.6, label="normal phases of the application" if i == 0 else None)
    reds = plt.get_cmap("Reds")
    for i, (_, r) in enumerate(mine.iterrows()):
        ax.plot(range(len(r.bw_series)), [v / 1e6 for v in r.bw_series],
                color=reds(0.95 - 0.5 * i / max(len(mine) - 1, 1)), lw=1.8,
                label=f"abnormal phase {r.phase_no} ({r.duration_s:.0f} s)")
    ax.set_title(f"Job {job} ({app}): abnormal I/O phases vs its history", loc="left")
    ax.set_xlabel("seconds since the phase started")
    ax.set_ylabel("bandwidth (MB/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    return save_(fig, path)


def anomaly_section(wh: Warehouse, site: Site, date: dt.date, out_dir: Path, sub: str) -> str:
    """HTML for the abnormal jobs of `date` ("" when the io_phase stage has not run); PNGs
    under `out_dir/sub/`, linked relative to `out_dir`."""
    if not wh.has("io_phase", date):
        return ""
    jobs = abnormal_jobs(wh, date)
    out = ["<h3>Abnormal jobs (two-stage DBSCAN over each application's history)</h3>"]
    if jobs.empty:
        out.append("<p class='note'>No job of the day has an abnormal I/O phase.</p>")
        return "\n".join(out)
    rows = [[td(esc(r.job_id)), td(esc(r.app)), td(esc(r.user)), td(integer(r.n_nodes), "num"),
             td(esc(r.io_mode)), td(f"{integer(r.n_abnormal)} of {integer(r.n_phases)}", "num"),
             td(f"{r.first_abnormal_start:%H:%M:%S}" if pd.notna(r.first_abnormal_start)
                 else "–"),
             td(f"{sig3(r.worst_slowdown_est)}×", "num"),
             td(escape(", ".join(r.fwd_nodes)) if r.fwd_nodes is not None else "–"),
             td(esc(r.cause)), td(shorten(r.neighbours, 40) if r.neighbours else "–")]
            for r in jobs.itertuples()]
    out.append(html_table(["job_id", "application", "user", "nodes", "mode", "abnormal phases",
                           "first abnormal", "slower than usual", "forwarding nodes", "cause",
                           "neighbour jobs"], rows))
    out.append("<p class='note'>A phase is abnormal when its throughput profile falls outside "
               "its category's main cluster and it runs at most 1/1.5 of the category's usual "
               "throughput. Cause (Beacon Fig. 12): a forwarding node or OST failing during "
               "the phase → system anomaly; else the interference-prone features (N:1, high "
               "MDOPS, bandwidth or IOPS) of the jobs that put a significant share of the load "
               "on its forwarding nodes during the phase; several kinds → mix; significant "
               "neighbours without such features → multiple jobs; else unknown. Worst first; "
               "the figures show the worst jobs.</p>")
    hist = _history(wh, site, date, sorted(set(jobs.app.dropna())))
    for r in jobs.head(FIGURES).itertuples():
        name = f"phases_{r.job_id}.png"
        phase_figure(r.job_id, r.app, hist, Path(out_dir) / sub / name)
        out.append(f'<img src="{escape(sub)}/{escape(name)}" alt="phases of job '
                   f'{escape(str(r.job_id))}">')
    return "\n".join(out)


def _alerts_html(wh: Warehouse, date: dt.date) -> str:
    """The day's rows of `alert` (stage `alerts`) with their status ("" before it ran)."""
    if not wh.has("alert", date):
        return ""
    a = (wh.read("alert", [date]).orderBy("kind", "key")
         .select("subject", "status", "sent_at").toPandas())     # a handful of alerts
    rows = [[td(esc(r.subject)), td(esc(r.status)),
             td(f"{r.sent_at:%Y-%m-%d %H:%M} UTC" if pd.notna(r.sent_at) else "–")]
            for r in a.itertuples()]
    return ("<p class='note'>Alerts the day calls for (each key is sent once; dates older "
            "than <code>alerts.max_age_days</code> are not mailed):</p>"
            + html_table(["alert", "status", "sent"], rows))


def component_section(wh: Warehouse, site: Site, date: dt.date) -> str:
    """HTML: the day's failing components (system rule and stragglers) with durations, and
    Beacon's Table 2 over the baseline period ("" when the stage has not run)."""
    from lassi.beacon.components import component_anomaly_summary

    if not wh.has("component_anomaly", date):
        return ""
    rows_df = (wh.read("component_anomaly", [date]).orderBy("start")
               .select("kind", "component", "rule", "job_id", "start", "end", "duration_min",
                       "max_bw_fraction", "est_slowdown", "ongoing", "evidence").toPandas())
    out = ["<h3>Failing components (forwarding nodes and OSTs)</h3>"]
    if rows_df.empty:
        out.append("<p class='note'>No forwarding node or OST ran below "
                   f"{site.settings.thresholds.anomaly_peak_fraction:.0%} of its peak for "
                   f"{site.settings.thresholds.anomaly_min_minutes} minutes while asked to serve, "
                   "and no straggler was found in large jobs.</p>")
    else:
        rows = [[td(esc(r.kind)), td(esc(r.component)), td(esc(r.rule)), td(esc(r.job_id)),
                 td(f"{r.start:%H:%M}"), td(f"{r.end:%H:%M}" + (" (ongoing)" if r.ongoing
                                                                   else "")),
                 td(integer(r.duration_min), "num"),
                 td(f"{r.max_bw_fraction:.0%}" if pd.notna(r.max_bw_fraction) else "–", "num"),
                 td(f"{sig3(r.est_slowdown)}×" if pd.notna(r.est_slowdown) else "–", "num"),
                 td(esc(r.evidence))] for r in rows_df.itertuples()]
        out.append(html_table(["kind", "component", "rule", "job", "start", "end", "minutes",
                               "max bw / peak", "job slowdown", "evidence"], rows))
    out.append(_alerts_html(wh, date))
    first, _ = baseline_period(site, date)
    t2 = component_anomaly_summary(wh, first, date)
    body = [[td(esc(r.bucket)), td(integer(r.fwd), "num"), td(integer(r.ost), "num")]
            for r in t2.itertuples()]
    out.append(f"<p class='note'>Beacon Table 2, {first} to {date}: system-rule anomalies "
               "by duration (anomalies that continue past midnight joined).</p>")
    out.append(html_table(["duration", "forwarding nodes", "OSTs"], body))
    return "\n".join(out)
