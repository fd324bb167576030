"""The report page: one self-contained HTML file (inline CSS, no scripts, relative PNGs)."""

from __future__ import annotations

import datetime as dt
import math
from html import escape

import pandas as pd

from lassi.report.data import MIN_GROUP_RUNS, TOP_SLOWED, Quality, ReportData, app_label

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222;
       max-width: 1280px; margin: 1.5em auto; padding: 0 1em; line-height: 1.4; }
h1 { margin-bottom: 0.1em; } h2 { border-bottom: 2px solid #1f77b4; padding-bottom: 0.2em;
     margin-top: 2em; } h3 { margin: 1.4em 0 0.4em; }
.meta { color: #666; margin-top: 0; }
.summary { font-size: 1.1em; background: #f3f7fb; padding: 0.6em 0.9em; border-radius: 6px; }
.boxes { display: flex; gap: 1em; flex-wrap: wrap; align-items: flex-start; }
.box { flex: 1 1 420px; border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 0.9em; }
.box h3 { margin-top: 0.3em; }
.warn { color: #a33; font-weight: bold; }
.note { color: #555; font-style: italic; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 0.4em 0 1em; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 3px 7px; vertical-align: top; }
th { background: #eef2f6; text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.cmd { font-family: monospace; font-size: 0.95em; }
tr.ignored td { color: #999; }
.tag { display: inline-block; padding: 0 5px; border-radius: 3px; font-size: 0.85em;
       color: white; }
.tag.oss { background: #1f77b4; } .tag.mds { background: #d62728; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0 1em; }
code { background: #f4f4f4; padding: 0 3px; }
"""


# --- formatting ---------------------------------------------------------------------------


def is_missing(v) -> bool:
    if v is None or v is pd.NaT:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def sig3(v) -> str:
    """A number with 3 significant digits and thousands separators ("–" when missing)."""
    if is_missing(v):
        return "–"
    v = float(v)
    if v == 0:
        return "0"
    if not math.isfinite(v):
        return str(v)
    exp = math.floor(math.log10(abs(v)))
    if exp >= 3:
        return f"{round(v, -(exp - 2)):,.0f}"
    if exp >= -4:
        decimals = max(0, 2 - exp)
        return f"{round(v, decimals):,.{decimals}f}".rstrip("0").rstrip(".") \
            if decimals else f"{v:,.0f}"
    return f"{v:.2e}"


def integer(v) -> str:
    return "–" if is_missing(v) else f"{int(v):,}"


def duration(seconds) -> str:
    """Seconds as h:mm:ss."""
    if is_missing(seconds):
        return "–"
    s = int(round(float(seconds)))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def shorten(text, width: int = 48) -> str:
    """Text cut in the middle to `width` characters (full text in a title attribute).

    Launch commands differ mostly at their ends (input files), so both ends stay.
    """
    if is_missing(text):
        return "–"
    t = str(text)
    head = (width - 1) * 2 // 5
    shown = t if len(t) <= width else t[:head] + "…" + t[len(t) - (width - 1 - head):]
    return f'<span title="{escape(t)}">{escape(shown)}</span>'


def td(v, cls: str = "") -> str:
    return f'<td class="{cls}">{v}</td>' if cls else f"<td>{v}</td>"


def html_table(headers: list[str], rows: list[list[str]], row_cls: list[str] | None = None,
               cls: str = "") -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = []
    for i, r in enumerate(rows):
        rc = f' class="{row_cls[i]}"' if row_cls and row_cls[i] else ""
        body.append(f"<tr{rc}>{''.join(r)}</tr>")
    c = f' class="{cls}"' if cls else ""
    return f"<table{c}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def esc(v) -> str:
    return "–" if is_missing(v) else escape(str(v))


# --- sections -----------------------------------------------------------------------------


def period_text(d: ReportData) -> str:
    return d.first.isoformat() if d.first == d.last else f"{d.first} to {d.last}"


def beacon_page(site: str, first: dt.date, last: dt.date, beacon: str, quality: Quality
                ) -> str:
    """The page of a site-day with Beacon data but no LASSi (Lustre export) data."""
    span = first.isoformat() if first == last else f"{first} to {last}"
    now = dt.datetime.now(dt.timezone.utc)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lassi report {escape(site)} {span}</title>
<style>{CSS}</style>
</head>
<body>
<h1>lassi daily report: {escape(site)}, {span}</h1>
<p class="meta">Generated {now:%Y-%m-%d %H:%M} UTC. All times are UTC. This site has
Beacon multi-layer data only (no Lustre export statistics, so no LASSi risk figures).</p>
<div class="boxes"><div class="box">{quality_box(quality)}</div></div>
{beacon}
<p class="meta">lassi: Beacon per-job profiles and system views (Yang et al.), computed
with Spark from the LWFS client and server, Lustre client, OST and MDS layers.</p>
</body>
</html>
"""


def _header(d: ReportData) -> str:
    s = d.summary
    missing = d.missing_dates
    miss = (f'<p class="warn">No app_hour data for {", ".join(x.isoformat() for x in missing)}'
            f" (shaded as “no data” in the figures).</p>" if missing else "")
    summary = (f"<b>{integer(s.get('runs'))}</b> application runs started, "
               f"<b>{integer(s.get('slowed_runs'))}</b> slowed "
               f"(runtime ≥ {d.slowdown_factor:g} × their group mean), "
               f"<b>{integer(s.get('app_hours'))}</b> application-hours of I/O "
               f"from <b>{integer(s.get('apps'))}</b> launches on "
               f"<b>{integer(s.get('filesystems'))}</b> filesystem(s).")
    nav = " ".join(f'<a href="#{escape(fs)}">{escape(fs)}</a>' for fs in d.filesystems)
    return f"""
<h1>lassi daily report: {escape(d.site)}, {period_text(d)}</h1>
<p class="meta">Generated {d.generated_at:%Y-%m-%d %H:%M} UTC. All times are UTC;
risks are per hour.</p>
<p class="summary">{summary}</p>
{miss}
<div class="boxes">
<div class="box">{quality_box(d.quality)}</div>
<div class="box">{_how_to_read(d)}</div>
</div>
<nav><b>Filesystems:</b> {nav} <a href="#run-groups">run groups</a>{_beacon_link(d)}</nav>
"""


def _beacon_link(d: ReportData) -> str:
    """Nav link to the first Beacon section (set by the caller when there is one)."""
    out = (f' <b>Beacon:</b> <a href="#beacon-{d.first.isoformat()}">forwarding layer, '
           f"jobs</a>" if d.has_beacon else "")
    if d.has_tokio:
        out += f' <a href="#tokio-{d.first.isoformat()}">jobs and the file system (TOKIO)</a>'
    if d.has_siox:
        out += f' <a href="#siox-{d.first.isoformat()}">I/O path (SIOX)</a>'
    return out


def quality_box(q: Quality) -> str:
    """The data-quality box: data checks against the site's configuration (warnings first),
    lines read/used/quarantined per source, the commonest quarantine reasons."""
    out = ("<h3>Data quality</h3>" + _checks(q.checks) + _attribution(q.attribution)
           + _jobstats(q.jobstats))
    if q.log.empty:
        return out + "<p class='note'>No ingest log for this period.</p>"
    rows = []
    for _, r in q.log.iterrows():
        quarantined = int(r["lines_quarantined"])
        qcls = "num warn" if quarantined else "num"
        rows.append([td(esc(r["source"])), td(integer(r["files"]), "num"),
                     td(integer(r["lines_read"]), "num"),
                     td(integer(r["lines_used"]), "num"),
                     td(integer(quarantined), qcls),
                     td(integer(r["counter_resets"]), "num")])
    total = q.log[["lines_read", "lines_quarantined", "counter_resets"]].sum()
    out += (f"<p>{integer(total['lines_read'])} lines read, "
            f"{integer(total['lines_quarantined'])} quarantined, "
            f"{integer(total['counter_resets'])} Lustre counter resets.</p>"
            + html_table(["source", "files", "lines read", "used", "quarantined",
                          "counter resets"], rows))
    if not q.quarantine.empty:
        items = "".join(f"<li>{esc(r['source'])}: {esc(r['reason'])} ({integer(r['count'])} lines)"
                        "</li>" for _, r in q.quarantine.iterrows())
        out += f"<p>Most common quarantine reasons:</p><ul>{items}</ul>"
    return out


def _attribution(att: pd.DataFrame) -> str:
    """How much of the bytes the servers counted reached a run in app_hour, through which
    source, and how much stayed unattributed (I/O outside every run, daemons, ids that
    name no job). The export statistics are the total when there are any (they count
    every client), else job_stats."""
    if att.empty:
        return ""
    counted = att[att["what"] == "counted"].set_index("source")["gib"]
    if counted.empty:
        return ""
    base = "exports" if "exports" in counted.index else "job_stats"
    total = float(counted[base])
    names = {"exports": "the node join of the export statistics", "job_stats": "job_stats"}
    parts = [f"{r['gib']:,.2f} GiB ({100 * r['gib'] / total:.1f} %) through "
             f"{esc(names.get(r['source'], r['source']))}"
             for _, r in att[att["what"] == "attributed"].sort_values("source").iterrows()]
    left = max(0.0, total - float(att.loc[att["what"] == "attributed", "gib"].sum()))
    what = "export statistics" if base == "exports" else "job_stats"
    return (f"<p>Attribution: the servers counted {total:,.2f} GiB read and written "
            f"({what}); app_hour gives {'; '.join(parts) or 'nothing'} to runs; "
            f"{left:,.2f} GiB ({100 * left / total:.1f} %) stayed unattributed (I/O outside "
            "every run, daemons, ids that name no job).</p>")


def _jobstats(js: pd.DataFrame) -> str:
    """What the Lustre job_stats attributed: ids per kind and their share of the bytes."""
    if js.empty:
        return ""
    total = float(js["gib"].sum())
    names = {"job": "scheduler jobs", "daemon": "daemons and tools (procname_uid)",
             "unknown": "ids naming no job"}
    parts = []
    for _, r in js.iterrows():
        share = f", {100 * r['gib'] / total:.1f} % of the bytes" if total > 0 else ""
        jobs = f" ({integer(r['jobs'])} jobs)" if r["id_kind"] == "job" else ""
        parts.append(f"{integer(r['ids'])} ids of {esc(names.get(r['id_kind'], r['id_kind']))}"
                     f"{jobs}: {r['gib']:,.2f} GiB, {integer(r['md_ops'])} metadata ops{share}")
    return "<p>Lustre job_stats: " + "; ".join(parts) + ".</p>"


def _checks(checks: pd.DataFrame) -> str:
    """Warnings of the data checks (one line each), the identity checks that found
    anything, and how much I/O fell outside every run of each job log."""
    from lassi.ingest.data_checks import OUTSIDE_RUNS

    if checks.empty:
        return ""
    warn = "".join(f"<p class='warn'>{esc(w)}</p>" for w in checks["warning"].dropna())
    timed = checks[checks["check"] == OUTSIDE_RUNS]
    ident = checks[checks["check"] != OUTSIDE_RUNS]
    found = ident[ident["n_bad"] > 0]
    if found.empty:
        out = warn + (f"<p>Checked against the site configuration "
                      f"({esc(', '.join(ident['source']))}): every node identity is one of "
                      "the site's.</p>") if not ident.empty else warn
    else:
        rows = [[td(esc(r["source"])), td(esc(r["check"])),
                 td(f"{integer(r['n_bad'])} of {integer(r['n_total'])}",
                    "num warn" if isinstance(r["warning"], str) else "num"),
                 td(esc(r["examples"] or ""))] for _, r in found.iterrows()]
        out = warn + html_table(["source", "not matching the site's configuration", "rows",
                                 "e.g."], rows)
    if not timed.empty:
        parts = [f"{esc(r['source'])} {integer(r['n_bad'])} of {integer(r['n_total'])} "
                 f"({100 * r['n_bad'] / max(r['n_total'], 1):.1f} %)"
                 for _, r in timed.iterrows()]
        out += ("<p>I/O outside every run of the job log (10-minute node buckets with I/O): "
                + ", ".join(parts) + ".</p>")
    return out


def _how_to_read(d: ReportData) -> str:
    return f"""<h3>How to read this</h3>
<ul>
<li><b>Risk</b> of an op x in one application-hour:
<code>r_x = (x − α·μ_x) / σ_x</code> with α = {d.alpha:g} and μ_x, σ_x the mean and standard
deviation of x over all application-hours of the baseline period (tables per filesystem).
Only positive parts count: <b>risk_oss</b> sums them over the OSS ops, <b>risk_mds</b> over
the MDS ops. 0 is normal; larger means an application did unusually much of that op.</li>
<li>Filesystem risk per hour is the sum over all applications active in that hour.</li>
<li><b>Ops metric</b> <code>read_kb_ops = read_ops × 1024 / read_kb</code> (same for
writes): operations per MiB moved. <b>1 is ideal</b> (1 MiB per op); 8 means 128 KiB ops,
larger is worse.</li>
<li>A run is <b>slowed</b> when its runtime is ≥ {d.slowdown_factor:g} × the mean runtime of
runs with the same launch command. <b>Concurrent risk</b> is the risk other applications put
on the filesystem during the run's hours.</li>
</ul>"""


def _fs_section(d: ReportData, fs: str, images: dict[str, str]) -> str:
    out = [f'<h2 id="{escape(fs)}">Filesystem {escape(fs)}</h2>']
    has = (d.fs_hour["fs"] == fs).any()
    if not has:
        out.append(f"<p class='note'>No application I/O recorded on {escape(fs)} "
                   f"in {period_text(d)}.</p>")
        out.append(_baseline(d, fs))
        return "\n".join(out)
    fh = d.fs_hour[d.fs_hour["fs"] == fs]
    out.append(f"<p>{integer(fh['n_apps'].max())} applications in the busiest hour; "
               f"peak OSS risk {sig3(fh['risk_oss'].max())}, "
               f"peak MDS risk {sig3(fh['risk_mds'].max())}; "
               f"{sig3(fh['read_kb'].sum() / 1024**2)} GiB read, "
               f"{sig3(fh['write_kb'].sum() / 1024**2)} GiB written.</p>")
    captions = {
        "risk_stats": "OSS and MDS risk of the filesystem per hour.",
        "oss_risk": "Which applications made up the OSS risk (stacked per hour).",
        "mds_risk": "Which applications made up the MDS risk (stacked per hour).",
        "ops_metric": "Quality of reads and writes per hour (1 = 1 MiB per op is ideal).",
    }
    for key, cap in captions.items():
        if key in images:
            out.append(f"<h3>{cap}</h3>")
            out.append(f'<img src="{escape(images[key])}" alt="{escape(fs)} {key}">')
    out.append(_top_apps(d, fs))
    out.append(_slowed(d, fs))
    out.append(_baseline(d, fs))
    return "\n".join(out)


def _top_apps(d: ReportData, fs: str) -> str:
    t = d.top_apps[d.top_apps["fs"] == fs] if not d.top_apps.empty else d.top_apps
    title = "<h3>Top risky launches (by peak hourly risk_oss + risk_mds)</h3>"
    if t.empty:
        return title + "<p class='note'>No application had positive risk.</p>"
    rows = []
    for _, r in t.iterrows():
        op = (f"{escape(str(r['top_op']))} (r = {sig3(r['top_op_r'])})"
              if not is_missing(r["top_op"]) else "–")
        rows.append([td(integer(r["rank"]), "num"), td(esc(r["app_id"])), td(esc(r["job_id"])),
                     td(esc(r["exe"])), td(esc(r["user"])), td(shorten(r["command"]), "cmd"),
                     td(integer(r["hours"]), "num"), td(sig3(r["peak_oss"]), "num"),
                     td(sig3(r["peak_mds"]), "num"), td(sig3(r["sum_oss"]), "num"),
                     td(sig3(r["sum_mds"]), "num"), td(op)])
    return title + html_table(
        ["#", "app_id", "job_id", "exe", "user", "command", "hours active", "peak risk_oss",
         "peak risk_mds", "Σ risk_oss", "Σ risk_mds", "top op (largest r_x)"], rows,
        cls="top-apps")


def _slowed(d: ReportData, fs: str) -> str:
    s = d.slowed[d.slowed["fs"] == fs] if not d.slowed.empty else d.slowed
    title = ("<h3>Slowed runs that used this filesystem (most slowed first)</h3>"
             "<p class='note'>Concurrent risk: risk_oss + risk_mds of all other applications "
             "on this filesystem, summed over the hours the run was running.</p>")
    if s.empty:
        return title + "<p class='note'>No slowed runs used this filesystem.</p>"
    rows = []
    for _, r in s.iterrows():
        other = "–"
        if not is_missing(r["other_id"]):
            other = (escape(app_label(r["other_exe"], r["other_user"], r["other_id"]))
                     + f" ({sig3(r['other_risk'])})")
        start = "–" if is_missing(r["start"]) else f"{pd.Timestamp(r['start']):%m-%d %H:%M}"
        rows.append([td(esc(r["app_id"])), td(esc(r["exe"])), td(esc(r["user"])),
                     td(shorten(r["command"], 40), "cmd"), td(start, "num"),
                     td(duration(r["runtime_s"]), "num"), td(duration(r["group_mean_s"]), "num"),
                     td(f"{float(r['slowdown']):.2f}×", "num"),
                     td(sig3(r["risk_oss_sum"]), "num"), td(sig3(r["risk_mds_sum"]), "num"),
                     td(sig3(r["concurrent_risk"]), "num"), td(integer(r["busy_hours"]), "num"),
                     td(other)])
    n = int(s["n_slowed_fs"].iloc[0])
    more = (f"<p class='note'>Showing the {TOP_SLOWED} most slowed of {n} runs.</p>"
            if n > len(s) else "")
    return title + html_table(
        ["app_id", "exe", "user", "command", "start (UTC)", "runtime", "group mean",
         "slowdown", "own Σ risk_oss", "own Σ risk_mds", "concurrent risk (other apps)",
         "run hours with fs data", "largest other contributor (Σ risk)"], rows,
        cls="slowed") + more


def _baseline(d: ReportData, fs: str) -> str:
    b = d.baseline[d.baseline["fs"] == fs] if not d.baseline.empty else d.baseline
    title = "<h3>Baseline statistics per op (what the risk is measured against)</h3>"
    if b.empty:
        return title + "<p class='note'>No baseline for this filesystem.</p>"
    ps, pe = b["period_start"].min(), b["period_end"].max()
    from lassi.core.schemas import ALL_COUNTERS

    order = {op: i for i, op in enumerate(ALL_COUNTERS)}
    b = b.assign(_o=b["op"].map(lambda o: order.get(o, 99))).sort_values("_o")
    rows, cls = [], []
    for _, r in b.iterrows():
        tags = []
        if r["op"] in d.oss_ops:
            tags.append('<span class="tag oss">risk_oss</span>')
        if r["op"] in d.mds_ops:
            tags.append('<span class="tag mds">risk_mds</span>')
        rows.append([td(escape(str(r["op"]))), td(sig3(r["mean"]), "num"),
                     td(sig3(r["std"]), "num"), td(sig3(r["rsd"]), "num"),
                     td(integer(r["n"]), "num"), td(" ".join(tags) or "not counted")])
        cls.append("" if tags else "ignored")
    return (title + f"<p>Per application-hour over {ps} to {pe} (the baseline of "
            f"{d.dates_with_data[-1]}). RSD = std / mean; above 1 means high variance.</p>"
            + html_table(["op", "mean per app-hour", "std", "RSD", "n (app-hours)",
                          "counts towards"], rows, cls, cls="baseline"))


def _groups(d: ReportData, image: str | None) -> str:
    out = ['<h2 id="run-groups">Run groups (all filesystems)</h2>']
    if d.groups.empty:
        out.append(f"<p class='note'>No launch command ran at least {MIN_GROUP_RUNS} times "
                   "in the baseline period.</p>")
        return "\n".join(out)
    g = d.groups
    out.append(f"<p>Runs grouped by their exact launch command over {g['period_start'].min()} "
               f"to {g['period_end'].max()}; groups with ≥ {MIN_GROUP_RUNS} runs, most "
               "slowed first. r = Pearson correlation of runtime with the risk summed over "
               "each run (LASSi Fig. 7); near +1 means runs were slower when risk was "
               "high.</p>")
    rows = []
    for _, r in g.iterrows():
        rows.append([td(shorten(r["command"], 60), "cmd"), td(esc(r["exe"])),
                     td(esc(r["user"])), td(integer(r["n_runs"]), "num"),
                     td(duration(r["mean_runtime_s"]), "num"),
                     td(duration(r["std_runtime_s"]), "num"),
                     td(integer(r["n_slowed"]), "num"),
                     td(_r(r["corr_runtime_risk_oss"]), "num"),
                     td(_r(r["corr_runtime_risk_mds"]), "num")])
    out.append(html_table(["command", "exe", "user", "runs", "mean runtime", "std runtime",
                           "slowed", "r(runtime, Σ risk_oss)", "r(runtime, Σ risk_mds)"], rows,
                          cls="groups"))
    if d.n_groups > len(g):
        out.append(f"<p class='note'>Showing {len(g)} of {d.n_groups} groups.</p>")
    if image:
        out.append("<h3>Runtime vs summed risk of the largest groups</h3>")
        out.append(f'<img src="{escape(image)}" alt="run groups">')
    return "\n".join(out)


def _r(v) -> str:
    return "–" if is_missing(v) else f"{float(v):+.2f}"


def page(d: ReportData, images: dict[str, dict[str, str]], groups_image: str | None,
         beacon: str = "") -> str:
    """The whole HTML page; `images` maps fs -> figure key -> relative PNG path; `beacon`
    the Beacon sections (HTML, may be empty)."""
    sections = "\n".join(_fs_section(d, fs, images.get(fs, {})) for fs in d.filesystems)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lassi report {escape(d.site)} {period_text(d)}</title>
<style>{CSS}</style>
</head>
<body>
{_header(d)}
{sections}
{beacon}
{_groups(d, groups_image)}
<p class="meta">lassi: LASSi risk and ops metrics (Sivalingam et al.), computed with Spark
from Lustre export stats and scheduler logs.</p>
</body>
</html>
"""
