"""The TOKIO section of the daily report: jobs against the file system, per connector.

For one day: what the connectors gave (`job_metrics`), the jobs that ran slowest against
their application's history with an UMAMI diagram each, the scoreboard of users,
applications and file systems, OST fullness and failovers, and the correlation of job
performance with every metric over the history window.
"""

from __future__ import annotations

import datetime as dt
from html import escape
from pathlib import Path

import pandas as pd

from lassi.core.config import Site
from lassi.core.sqltext import sql
from lassi.core.warehouse import Warehouse, as_date
from lassi.report.beacon import fmt_bytes
from lassi.report.html import esc, html_table, integer, sig3, td
from lassi.tools.umami import history_dates, plot_umami, umami_data

SUBDIR = "_tokio"
TOP_SLOW = 5           # jobs with an UMAMI diagram
MIN_HISTORY_RUNS = 4   # an application needs this many runs to judge a job against them
TOP_FULLEST = 5
TOP_SCOREBOARD = 10


def _pct(v) -> str:
    """A percentage already in per cent (job_metrics' CPU and fullness columns)."""
    return "–" if v is None or pd.isna(v) else f"{float(v):.0f} %"


def tokio_section(wh: Warehouse, site: Site, date, out_dir: Path) -> str:
    """The HTML fragment of `date` ("" when the day has no job_metrics). PNGs go to
    `<out_dir>/_tokio/<date>/`, linked relative to `out_dir`."""
    date = as_date(date)
    if not wh.has("job_metrics", date):
        return ""
    spark = wh.spark
    wh.read("job_metrics", date).createOrReplaceTempView("rt_day")
    wh.read("job_metrics", history_dates(site, date)).createOrReplaceTempView("rt_hist")
    wh.read("ost_health", date).createOrReplaceTempView("rt_health")
    rel, folder = f"{SUBDIR}/{date.isoformat()}", Path(out_dir) / SUBDIR / date.isoformat()
    ov = spark.sql(sql("report/tokio_overview")).collect()[0].asDict()
    slow = spark.sql(sql("report/tokio_slow_jobs", top=TOP_SLOW,
                         min_runs=MIN_HISTORY_RUNS)).toPandas()
    health = spark.sql(sql("report/ost_health", top=TOP_FULLEST)).toPandas()
    out = [f'<h2 id="tokio-{date}">Jobs and the file system (TOKIO), {date}</h2>',
           _overview(ov, date)]
    out.append(_slow_html(wh, site, date, slow, folder, rel))
    out.append(_scoreboard_html(wh, date, folder, rel))
    out.append(_health_html(health))
    out.append(_correlate_html(wh, site, date, folder, rel))
    return "\n".join(out)


def _overview(ov: dict, date: dt.date) -> str:
    jobs = ov["jobs"] or 0
    parts = [f"<b>{integer(jobs)}</b> jobs started on {date} have a row in "
             "<code>job_metrics</code> (<code>lassi summarize-job</code>): "
             f"{integer(ov['with_darshan'])} with Darshan logs, {integer(ov['with_lmt'])} "
             f"with LMT file-system data, {integer(ov['with_health'])} with an OST fullness "
             "snapshot."]
    if ov["median_coverage"] is not None:
        parts.append(f" Median bandwidth coverage {sig3(ov['median_coverage'])}: the typical "
                     "job moved that share of what its file system moved while it ran.")
    if ov["over_covered"]:
        parts.append(f" <span class='warn'>{integer(ov['over_covered'])} jobs of 10 minutes "
                     "or more moved more than the file system recorded (coverage above 1): "
                     "check the LMT feed or client caching.</span>")
    if ov["oss_cpu_max"] is not None:
        parts.append(f" Busiest OSS CPU {_pct(ov['oss_cpu_max'])}, busiest MDS CPU "
                     f"{_pct(ov['mds_cpu_max'])}.")
    return f"<p class='summary'>{''.join(parts)}</p>"


def _slow_html(wh: Warehouse, site: Site, date: dt.date, slow: pd.DataFrame, folder: Path,
               rel: str) -> str:
    head = ("<h3>Slowest jobs against their application's history (UMAMI)</h3><p>Jobs whose "
            "I/O performance fell below the first quartile of their application's runs in "
            f"the history window (≥ {MIN_HISTORY_RUNS} runs), worst first. Each diagram "
            "shows every metric of the job against the application's earlier runs: red "
            "where the job was worse than three quarters of them, green where better.</p>")
    if slow.empty:
        return head + ("<p class='note'>No job ran below its application's first quartile "
                       "(or no application has enough history yet).</p>")
    rows, figs = [], []
    for _, r in slow.iterrows():
        rows.append([td(escape(str(r["job_id"]))), td(esc(r["app"])), td(esc(r["user"])),
                     td(r["start"].strftime("%H:%M")), td(sig3(r["runtime_s"]), "num"),
                     td(sig3(r["perf_mibs"]), "num"), td(sig3(r["med"]), "num"),
                     td(f"{r['ratio']:.2f}×", "num"), td(sig3(r["coverage_bw"]), "num"),
                     td(integer(r["concurrent_jobs"]), "num"),
                     td(_pct(r["lmt_oss_cpu_mean"]), "num"),
                     td(_pct(r["ost_fullest_pct"]), "num")])
        job, hist = umami_data(wh, site, str(r["job_id"]), date=date)   # the day's jobs
        name = f"umami_{len(figs)}.png"
        plot_umami(job, hist, folder / name)
        figs.append(f'<img src="{rel}/{name}" alt="UMAMI of job {escape(str(r["job_id"]))}">')
    table = html_table(["job", "application", "user", "start", "run time (s)", "perf (MiB/s)",
                        "app median", "ratio", "coverage", "concurrent jobs", "OSS CPU",
                        "fullest OST"], rows)
    return head + table + "".join(figs)


def _scoreboard_html(wh: Warehouse, date: dt.date, folder: Path, rel: str) -> str:
    from lassi.tools.scoreboard import scoreboard, write_outputs

    head = ("<h3>Scoreboard (TOKIO Fig. 8)</h3><p>The top users, applications and file "
            "systems of the day by I/O volume.</p>")
    try:
        tables = scoreboard(wh, date, date, top=TOP_SCOREBOARD)
    except ValueError as exc:
        return head + f"<p class='note'>{escape(str(exc))}</p>"
    png = next(p for p in write_outputs(tables, date, date, folder) if p.suffix == ".png")
    source = tables[0].attrs.get("source", "")
    return (head + f'<img src="{rel}/{png.name}" alt="scoreboard {date}">'
            f"<p class='note'>Source: {escape(source)}.</p>")


def _health_html(health: pd.DataFrame) -> str:
    head = ("<h3>OST fullness and failovers</h3><p>From the day's last <code>lfs df</code> "
            "and <code>lctl dl -t</code> snapshots: the fullest OSTs of each file system, "
            "and the targets served by a failover partner.</p>")
    if health.empty:
        return head + "<p class='note'>No lfs df / lctl dl snapshot was ingested for this day.</p>"
    full = health[health["what"] == "fullest"]
    rows = [[td(esc(r["fs"])), td(esc(r["target"])), td(_pct(r["use_pct"]), "num"),
             td(fmt_bytes(r["used_kib"] * 1024), "num"),
             td(fmt_bytes(r["total_kib"] * 1024), "num"),
             td(_pct(r["fs_mean"]), "num"), td(integer(r["osts"]), "num")]
            for _, r in full.iterrows()]
    out = head + html_table(["file system", "OST", "use", "used", "size", "fs mean use",
                             "OSTs"], rows)
    fo = health[health["what"] == "failed_over"]
    if fo.empty:
        out += "<p>No target failed over.</p>"
    else:
        names = ", ".join(f"{escape(str(t))} (via {escape(str(n))})"
                          for t, n in zip(fo["target"], fo["server_nid"], strict=True))
        out += f"<p class='warn'>{len(fo)} targets failed over: {names}.</p>"
    return out


def _correlate_html(wh: Warehouse, site: Site, date: dt.date, folder: Path, rel: str) -> str:
    from lassi.tools.correlate import correlate, write_outputs

    dates = history_dates(site, date)
    p = site.settings.tokio.p_value
    head = ("<h3>What job performance goes with (TOKIO Fig. 9)</h3><p>Pearson correlation "
            "of each job's I/O performance (<code>perf_mibs</code>) with every other job "
            f"metric over the jobs of {dates[0]} to {date}; bold: p &lt; {p:g}.</p>")
    try:
        res = correlate(wh, dates[0], date)
    except ValueError as exc:
        return head + f"<p class='note'>{escape(str(exc))}</p>"
    res.attrs.update(span=f"{dates[0]}..{date}", perf="perf_mibs")
    png = next(x for x in write_outputs(res, folder, p) if x.suffix == ".png")
    return head + f'<img src="{rel}/{png.name}" alt="correlations {date}">'
