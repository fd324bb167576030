"""The SIOX section of the daily report: the site's I/O path and its knowledge base.

For one day: every kind of component on the path with its count, software layers and total
peak capacity (`path_component`), and what the knowledge base saw (`component_minute`,
`component_baseline`): busy component-minutes and the typical medians the causal path of a
job is measured against.
"""

from __future__ import annotations

from pathlib import Path

from lassi.core.config import Site
from lassi.core.sqltext import sql
from lassi.core.warehouse import Warehouse, as_date
from lassi.report.beacon import fmt_bytes
from lassi.report.html import esc, html_table, integer, sig3, td

TOP_JOBS = 15                  # rows of "slow jobs explained"
KIND_NAMES = {"compute": "compute nodes", "fwd": "forwarding nodes", "filesystem": "filesystems",
              "ost": "OSTs", "mdt": "MDTs", "oss": "OSS servers", "mds": "MDS servers"}


def _rate(v) -> str:
    return "–" if v is None else f"{fmt_bytes(v)}/s"


def siox_section(wh: Warehouse, site: Site, date, folder: Path | None = None) -> str:
    """The HTML fragment of `date` ("" when io_path has not run for it); with `folder`, the
    `why` pages of the slow jobs it lists go under folder/why/ and are linked."""
    date = as_date(date)
    if not wh.has("path_component", date):
        return ""
    spark = wh.spark
    wh.read("path_component", date).createOrReplaceTempView("rs_component")
    path = spark.sql(sql("report/siox_path")).collect()          # one row per kind
    rows = [[td(r["level"], "num"), td(esc(KIND_NAMES.get(r["kind"], r["kind"]))),
             td(integer(r["components"]), "num"), td(esc(r["software"])),
             td(_rate(r["peak_bw"]), "num"), td(sig3(r["peak_iops"]), "num")] for r in path]
    out = [f'<h2 id="siox-{date}">I/O path (SIOX), {date}</h2>',
           "<p>Every component a job's data passes through on its way from the compute "
           "nodes to the disks, level by level (table <code>path_component</code>; links in "
           "<code>path_edge</code>), with the total benchmarked peak of each level: the "
           "narrowest level bounds what the whole machine can move.</p>",
           html_table(["level", "component", "count", "software layers", "peak bandwidth",
                       "peak IOPS / metadata ops/s"], rows)]
    out.append(_knowledge_html(wh, date))
    out.append(_faults_html(wh, date))
    out.append(_diagnosis_html(wh, date, folder))
    return "\n".join(out)


def _knowledge_html(wh: Warehouse, date) -> str:
    head = ("<h3>Knowledge base</h3><p>What each kind of component did today (busy minutes "
            "in <code>component_minute</code>) and what it normally achieves (medians over "
            "its components of <code>component_baseline</code>, all request sizes and loads): "
            "the yardstick of a job's causal path.</p>")
    if not wh.has("component_minute", date) or wh.read("component_minute", date).isEmpty():
        return head + ("<p class='note'>No forwarding, OST or MDS observations for this day "
                       "(the knowledge base reads the Beacon layers).</p>")
    wh.read("component_minute", date).createOrReplaceTempView("rs_minute")
    wh.read("component_baseline", date).createOrReplaceTempView("rs_baseline")
    kb = wh.spark.sql(sql("report/siox_baseline")).collect()      # one row per kind
    rows = [[td(esc(KIND_NAMES.get(r["kind"], r["kind"]))), td(integer(r["components"]), "num"),
             td(integer(r["busy_minutes"]), "num"), td(_rate(r["max_bw"]), "num"),
             td(_rate(r["bw_p50"]), "num"), td(_rate(r["bw_p90"]), "num"),
             td("–" if r["exe_p50"] is None else f"{r['exe_p50'] * 1e3:.2f} ms", "num"),
             td(sig3(r["md_p50"]), "num"),
             td(esc(r["period_start"]), "")] for r in kb]
    return head + html_table(["component", "observed", "busy minutes", "today's max",
                              "median bw", "p90 bw", "LWFS exe time", "metadata ops/s",
                              "baseline since"], rows)


def _faults_html(wh: Warehouse, date) -> str:
    head = ("<h3>Components at fault</h3><p>Forwarding nodes, OSTs and MDTs whose slowness "
            "explains the forwarding nodes' LWFS execution times beyond their knowledge base "
            "(sites with Lustre export statistics: the runs' runtimes beyond their history), "
            "hour by hour (<code>component_pinpoint</code>), and the time the jobs whose "
            "causal path runs through them lost there (<code>job_path</code>). Slowdown: how "
            "much longer than normal a request entirely through the component took. Evidence: "
            "<i>client wait</i> — the forwarding nodes' Lustre clients waited that much longer "
            "for the OST's replies (direct); <i>LWFS fit</i> — fitted to the forwarding "
            "nodes' LWFS execution times (indirect: with one forwarding node in front of "
            "every OST, a slow node and a slow OST look alike); <i>slow runs</i> — from "
            "Lustre export statistics, which carry no service times: the runs that used the "
            "target that hour ran longer than their command groups while the runs that "
            "avoided it did not (slowdown: of those runs, not of a request).</p>")
    if not wh.has("component_pinpoint", date):
        return head + "<p class='note'>No component pinpointed for this day.</p>"
    wh.read("component_pinpoint", date).createOrReplaceTempView("rs_pinpoint")
    wh.read("job_path", date).createOrReplaceTempView("rs_job_path")
    kinds = {"fwd": "forwarding node", "ost": "OST", "mdt": "MDT"}
    evidence = {"rpc_wait": "client wait", "lwfs_fit": "LWFS fit", "slow_runs": "slow runs"}
    rows = [[td(esc(r["component"])), td(esc(kinds.get(r["kind"], r["kind"]))),
             td(esc(", ".join(evidence.get(e, e) for e in r["evidence"]))),
             td(", ".join(f"{h:%H}h" for h in r["named"])), td(integer(r["hours"]), "num"),
             td(f"{1 + r['max_beta']:.1f}×", "num"), td(f"{100 * r['explained']:.0f} %", "num"),
             td(integer(r["jobs"]), "num"), td(f"{r['lost_s'] / 60:.1f}", "num"),
             td(esc(r["worst_job"] or "–"))]
            for r in wh.spark.sql(sql("report/siox_faults")).collect()]   # one per component
    return head + html_table(["component", "kind", "evidence", "hours named (UTC)", "hours",
                              "max slowdown",
                              "excess explained", "jobs slowed", "job time lost (min)",
                              "most slowed job"], rows)


def _why_pages(wh: Warehouse, date, job_ids: list[str], folder: Path) -> dict[str, str]:
    """job id -> its link to the `why` page written under folder/why/ (one query for all)."""
    from pyspark.sql import functions as F

    from lassi.report.why_page import write_page
    from lassi.tools.why import from_rows

    date = as_date(date)
    causes = (wh.read("job_diagnosis", date).filter(F.col("job_id").isin(job_ids))
              .collect())                                   # TOP_JOBS jobs' causes
    paths = (wh.read("job_path", date).filter(F.col("job_id").isin(job_ids)).drop("date")
             .toPandas())                                   # TOP_JOBS jobs' paths
    out = {}
    for job in job_ids:
        d = from_rows(job, date, [r for r in causes if r["job_id"] == job])
        page = write_page(wh, d, folder / "why" / f"{job}.html", paths[paths["job_id"] == job])
        out[job] = f'<a href="why/{esc(page.name)}">{esc(job)}</a>'
    return out


def _diagnosis_html(wh: Warehouse, date, folder: Path | None) -> str:
    head = ("<h3>Slow jobs explained</h3><p>The day's jobs with the most "
            "lost time and the cause that explains most of it (<code>job_diagnosis</code>; "
            "<code>lassi why JOBID</code> gives every cause with its evidence). Lost time: "
            "the larger of the run's excess over its command group's mean and what its "
            "causal path measured.</p>")
    if not wh.has("job_diagnosis", date):
        return head + "<p class='note'>No job diagnosed this day.</p>"
    wh.read("job_diagnosis", date).createOrReplaceTempView("rs_diagnosis")
    top = wh.spark.sql(sql("report/siox_diagnosis", top=TOP_JOBS)).collect()  # TOP_JOBS rows
    if not top:
        return head + "<p class='note'>No job lost time this day.</p>"
    links = _why_pages(wh, date, [r["job_id"] for r in top], folder) if folder else {}
    rows = [[td(links.get(r["job_id"], esc(r["job_id"]))), td(esc(r["app"] or "–")),
             td("–" if r["runtime_s"] is None else f"{r['runtime_s'] / 60:.0f}", "num"),
             td("–" if r["slowdown"] is None else f"{r['slowdown']:.2f}×", "num"),
             td(f"{r['job_lost_s'] / 60:.1f}", "num"),
             td(f"{esc(r['kind'])}: <b>{esc(r['name'])}</b>"),
             td(f"{100 * r['share']:.0f} %", "num"), td(esc(r["evidence"])),
             td(esc(r["recommendation"] or "–")), td(integer(r["n_causes"]), "num")]
            for r in top]
    return head + html_table(["job", "application", "runtime (min)", "slowdown",
                              "lost (min)", "top cause", "share", "evidence",
                              "what to do", "causes"], rows)
