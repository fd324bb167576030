"""The daily report's Beacon section: whole-system views of one day (issue #4, item 4).

`beacon_section(wh, site, date, out_dir)` reads the `system_views` tables and job_summary of
the date, draws five PNGs under `<out_dir>/_beacon/<date>/` and returns an HTML fragment
(figures referenced relative to `out_dir`, where the page's index.html lives). A date
without Beacon data (an ARCHER warehouse, say) gives "".

Figures (matplotlib Agg, the report's style): OST utilisation CDF (Beacon Fig. 7), layer
volumes with the cache-thrashing / write-amplification flags (Figs. 8-9), forwarding-node
load bands per hour (Fig. 10), MDS operations by source kind (Fig. 18b), job bandwidth vs
IOPS by dominant request size (Fig. 19). Tables: layer volumes, load bands, MDS sources,
I/O modes by core-hour bucket (Tables 3, 4, 6) and the day's top jobs by volume.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd
from pyspark.sql import functions as F

from lassi.beacon.system_views import (
    BAND_ORDER,
    IO_MODES,
    MDS_SOURCE_KINDS,
    NONTRIVIAL_BYTES,
    band_legend,
    has_beacon_data,
)
from lassi.beacon.trace_merge import compression_by_app
from lassi.core.config import Site
from lassi.core.plotstyle import LEFT, LEGEND_X, READ_COLOUR, RIGHT, WIDTH, WRITE_COLOUR
from lassi.core.plotstyle import pyplot as plt_
from lassi.core.plotstyle import save as save_
from lassi.core.schemas import REQUEST_SIZE_EDGES, REQUEST_SIZE_LABELS
from lassi.core.warehouse import Warehouse, as_date
from lassi.report.anomaly import anomaly_section, component_section
from lassi.report.html import esc, html_table, integer, is_missing, shorten, sig3, td

TOP_JOBS = 20
TOP_APPS = 15
MAX_SCATTER_JOBS = 50_000     # Fig. 19 points (a day's jobs; a sample beyond this)
UTIL_FLOOR = 1e-4             # the CDF's log axis starts here; lower (and 0) are drawn at it
SUBDIR = "_beacon"
GiB, TiB = 1024**3, 1024**4

BAND_COLOURS = {"high": "#08306b", "mid": "#2b7bba", "low": "#a6cbe3", "idle": "#f2f2f2",
                "unknown": "#fdd9b5"}
KIND_COLOURS = {"forwarding": "#1f77b4", "login": "#ff7f0e", "cluster": "#d62728",
                "other": "#8c8c8c"}
# request-size buckets, small to large: distinct hues in a rainbow order
SIZE_COLOURS = ["#6a3d9a", "#1f78b4", "#17becf", "#33a02c", "#ff7f00", "#e31a1c", "#7f3b08"]
LAYER_NAMES = {"compute": "compute\n(traced clients)", "forwarding": "forwarding\n(Lustre clients)",
               "ost": "OST\n(servers)"}


@dataclass
class BeaconData:
    """Small frames of one day (bounded by #OSTs, #fwd x 24, kinds x 24, top-N, jobs)."""

    date: dt.date
    ost: pd.DataFrame          # per OST: mean, p99, max util, minutes
    ost_cdf: pd.DataFrame      # all OST-minutes: util bin upper edge, count (ascending)
    ost_minutes: int
    ost_below: dict            # 0.01 / 0.05 -> fraction of OST-minutes below
    layers: pd.DataFrame       # view_layer_volume
    fwd: pd.DataFrame          # view_fwd_load
    mds: pd.DataFrame          # view_mds_source
    io: pd.DataFrame           # view_io_mode
    jobs: pd.DataFrame         # top jobs by volume
    scatter: pd.DataFrame      # avg_bw, avg_iops, dominant_size of the day's jobs
    n_jobs: int
    views_built: bool


def load(wh: Warehouse, site: Site, date: dt.date) -> BeaconData:
    """Query the day's views and jobs (all aggregated in Spark before toPandas)."""
    ou = wh.read("view_ost_util", date).cache()
    try:
        ost = ou.groupBy("ost").agg(
            F.avg("util").alias("mean"), F.percentile("util", 0.99).alias("p99"),
            F.max("util").alias("max"), F.count("*").alias("minutes")).toPandas()
        # all OST-minutes on a log grid of 20 bins per decade; 0 and tiny values in one bin
        b = F.when(F.col("util") <= UTIL_FLOOR, F.lit(-80)) \
            .otherwise(F.ceil(F.log10("util") * 20)).alias("bin")
        cdf = ou.filter(F.col("util").isNotNull()).groupBy(b).count().toPandas()
        stats = ou.filter(F.col("util").isNotNull()).agg(
            F.count("*").alias("n"), F.count_if(F.col("util") < 0.01).alias("p1"),
            F.count_if(F.col("util") < 0.05).alias("p5")).first()
    finally:
        ou.unpersist()
    cdf = cdf.sort_values("bin")
    cdf["edge"] = 10.0 ** (cdf["bin"] / 20.0)
    n = int(stats["n"] or 0)
    below = {0.01: stats["p1"] / n, 0.05: stats["p5"] / n} if n else {}

    js = wh.read("job_summary", date).withColumn(
        "volume", F.col("read_bytes") + F.col("write_bytes")).cache()
    try:
        n_jobs = js.count()
        jobs = js.orderBy(F.desc("volume"), "job_id").limit(TOP_JOBS).toPandas()
        pts = js.filter((F.col("avg_bw") > 0) & (F.col("avg_iops") > 0))
        n_pts = pts.count()
        if n_pts > MAX_SCATTER_JOBS:
            pts = pts.sample(fraction=MAX_SCATTER_JOBS / n_pts, seed=1)
        scatter = pts.select("avg_bw", "avg_iops", "dominant_size").toPandas()
    finally:
        js.unpersist()
    views = ("view_ost_util", "view_layer_volume", "view_fwd_load", "view_mds_source",
             "view_io_mode")
    return BeaconData(
        date=date, ost=ost, ost_cdf=cdf, ost_minutes=n, ost_below=below,
        layers=wh.read("view_layer_volume", date).toPandas(),
        fwd=wh.read("view_fwd_load", date).toPandas(),
        mds=wh.read("view_mds_source", date).toPandas(),
        io=wh.read("view_io_mode", date).toPandas(),
        jobs=jobs, scatter=scatter, n_jobs=n_jobs,
        views_built=any(wh.has(t, date) for t in views))


# --- formatting -------------------------------------------------------------------------


def fmt_bytes(v) -> str:
    """Bytes with a binary unit, 3 significant digits."""
    if is_missing(v):
        return "–"
    v = float(v)
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(v) >= size:
            return f"{sig3(v / size)} {unit}"
    return f"{sig3(v)} B"


def _unit(vmax: float) -> tuple[str, float]:
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", 1024**2)):
        if vmax >= size:
            return unit, size
    return "KiB", 1024


def _pct(v) -> str:
    return "–" if is_missing(v) else f"{sig3(100 * float(v))} %"


def volume_ratio(v) -> str:
    """A layer-volume ratio (flagged above 1.2×): two decimals, so 1.24× is not "1.2×"."""
    return "–" if is_missing(v) else f"{float(v):.2f}×"


def _hour_axis(ax, date: dt.date) -> None:
    ax.set_xlim(0, 24)
    ax.set_xticks(range(0, 25, 2))
    ax.set_xticklabels([f"{h:02d}:00" for h in range(0, 25, 2)])
    ax.set_xticks(range(25), minor=True)
    ax.set_xlabel(f"hour of {date.isoformat()} (UTC)")


def _note(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="#555555",
            fontsize=11, bbox={"boxstyle": "round", "fc": "white", "ec": "#cccccc"})


def _empty(fig, ax, title: str, text: str, path: Path) -> Path:
    """A figure that says there is nothing to show (keeps the page's layout)."""
    ax.set_title(title, loc="left")
    ax.set_xticks([])
    ax.set_yticks([])
    _note(ax, text)
    _adjust(fig)
    return save_(fig, path)


def _legend(fig, ax, handles=None, title: str | None = None) -> None:
    kw = {"handles": handles} if handles is not None else {}
    ax.legend(loc="upper left", bbox_to_anchor=(LEGEND_X, ax.get_position().y1),
              bbox_transform=fig.transFigure, borderaxespad=0, title=title, title_fontsize=9,
              alignment="left", **kw)


def _adjust(fig, top_in: float = 0.45, bottom_in: float = 0.7) -> None:
    h = fig.get_figheight()
    fig.subplots_adjust(left=LEFT, right=RIGHT, top=1 - top_in / h, bottom=bottom_in / h)


# --- figures ----------------------------------------------------------------------------


def _util_tick(v, _=None) -> str:
    """Tick of a log fraction axis: 0.01 % .. 100 %; the floor reads "≤ 0.01 %"."""
    if v <= UTIL_FLOOR * 1.001:
        return f"≤{UTIL_FLOOR:.2%}"
    return f"{v:.{max(0, -int(np.floor(np.log10(v) + 1e-9)) - 2)}%}"


def fig_ost_util(d: BeaconData, path: Path) -> Path:
    """Beacon Fig. 7: CDFs of OST utilisation (fraction of peak), log x."""
    plt = plt_()
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(WIDTH, 4.8))
    ost = d.ost.dropna(subset=["mean"])
    title = f"OST utilisation on {d.date}: CDF of bandwidth / peak (Beacon Fig. 7)"
    if ost.empty:
        return _empty(fig, ax, title, "no OST utilisation for this day (no raw_ost samples "
                      "or unknown peaks)", path)
    xmax = max(1.0, float(ost["max"].max()) * 1.2)
    c = d.ost_cdf
    x = np.r_[UTIL_FLOOR, np.clip(c["edge"].to_numpy(), UTIL_FLOOR, None), xmax]
    y = np.r_[0.0, np.cumsum(c["count"].to_numpy()) / d.ost_minutes, 1.0]
    ax.step(x, y, where="post", color="#444444", lw=2.2,
            label=f"all OST-minutes ({d.ost_minutes:,}):\nbusiest sample of the minute")
    for col, colour, lab in (("mean", "#1f77b4", "per OST: daily mean"),
                             ("p99", "#d62728", "per OST: 99th percentile\nof its minutes")):
        v = np.sort(np.clip(ost[col].to_numpy(dtype=float), UTIL_FLOOR, None))
        ys = np.arange(1, len(v) + 1) / len(v)
        ax.step(np.r_[UTIL_FLOOR, v, xmax], np.r_[0.0, ys, 1.0], where="post", color=colour,
                lw=1.6, label=f"{lab} ({len(v)} OSTs)")
    for cut, ls in ((0.01, ":"), (0.05, "--")):
        ax.axvline(cut, color="#888888", ls=ls, lw=1)
    ax.set_xscale("log")
    ax.set_xlim(UTIL_FLOOR, xmax)
    ax.set_ylim(0, 1.02)
    ax.xaxis.set_major_formatter(FuncFormatter(_util_tick))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0%}"))
    ax.set_xlabel("bandwidth as a fraction of the OST's peak (log; 0 is drawn at the left edge)")
    ax.set_ylabel("cumulative share\n(of OSTs or of OST-minutes)")
    ax.set_title(title, loc="left")
    _adjust(fig)
    _legend(fig, ax, title="curve")
    if d.ost_below:
        fig.text(LEGEND_X, ax.get_position().y1 - 2.2 / fig.get_figheight(),
                 f"OST-minutes < 1 % of peak: {d.ost_below[0.01]:.0%}\n"
                 f"OST-minutes < 5 % of peak: {d.ost_below[0.05]:.0%}\n"
                 f"median OST daily mean:     {float(ost['mean'].median()):.1%}\n"
                 "(1 % dotted, 5 % dashed)",
                 fontsize=9, family="monospace", va="top", color="#333333")
    return save_(fig, path)


def fig_layer_volume(d: BeaconData, path: Path) -> Path:
    """Beacon Figs. 8-9: read and write volume per layer, flags annotated."""
    plt = plt_()
    from matplotlib.patches import Patch

    fig, ax = plt.subplots(figsize=(WIDTH, 4.8))
    lv = d.layers.set_index("layer").reindex(["compute", "forwarding", "ost"]).dropna(
        subset=["source"])
    if lv.empty:
        return _empty(fig, ax, f"Daily volume per layer on {d.date} (Beacon Figs. 8-9)",
                      "no layer volumes for this day", path)
    vmax = float(np.nanmax(lv[["read_bytes", "write_bytes", "read_bytes_est",
                               "write_bytes_est"]].to_numpy(dtype=float)))
    unit, size = _unit(max(vmax, 1.0))
    x = np.arange(len(lv))
    w = 0.36
    handles = [Patch(color=READ_COLOUR, label="read"), Patch(color=WRITE_COLOUR, label="write")]
    scaled = False
    for off, col, colour in ((-w / 2, "read", READ_COLOUR), (w / 2, "write", WRITE_COLOUR)):
        vals = lv[f"{col}_bytes"].to_numpy(dtype=float) / size
        est = lv[f"{col}_bytes_est"].to_numpy(dtype=float) / size
        ax.bar(x + off, vals, width=w, color=colour)
        for i, layer in enumerate(lv.index):
            cov = lv.loc[layer, "coverage"]
            label, top = f"{vals[i]:.3g}", vals[i]
            if layer == "compute" and not is_missing(cov) and cov < 0.999 and np.isfinite(est[i]):
                scaled = True
                ax.bar(x[i] + off, est[i], width=w, fill=False, edgecolor=colour, ls="--",
                       lw=1.3)
                label, top = f"{vals[i]:.3g} traced\n≈{est[i]:.3g} all", max(top, est[i])
            ax.text(x[i] + off, top, label, ha="center", va="bottom", fontsize=8.5)
    if scaled:
        cov = float(lv.loc["compute", "coverage"])
        handles.append(Patch(fill=False, edgecolor="#555555", ls="--",
                             label=f"compute scaled to all clients\n(trace covers {cov:.0%} "
                                   "of the\nrequests the forwarding\nnodes served)"))
    ax.set_xticks(x)
    ax.set_xticklabels([LAYER_NAMES[lay] for lay in lv.index])
    ax.set_xlim(-0.6, len(lv) - 0.4)
    ax.set_ylim(0, max(vmax / size, 1e-9) * 1.22)
    ax.set_ylabel(f"volume of the day ({unit})")
    ax.set_title(f"Daily volume per layer on {d.date} (Beacon Figs. 8-9)", loc="left")
    _adjust(fig, bottom_in=0.8)
    _legend(fig, ax, handles=handles)
    r = lv.iloc[0]
    lines = []
    for flag, col, ratio, fac, what in (
            ("cache thrashing", "cache_thrashing", ("forwarding", "read_ratio"),
             "thrashing_factor", "forwarding reads"),
            ("write amplification", "write_amplification", ("ost", "write_ratio"),
             "amplification_factor", "OST writes")):
        val = r[col]
        rv = lv.loc[ratio[0], ratio[1]] if ratio[0] in lv.index else None
        state = "n/a" if is_missing(val) else ("YES" if bool(val) else "no")
        lines.append((f"{flag}: {state}\n  {what} = {volume_ratio(rv)} compute\n"
                      f"  (flag when > {float(r[fac]):g}×)", not is_missing(val) and bool(val)))
    y = ax.get_position().y1 - 1.75 / fig.get_figheight()
    for text, on in lines:
        fig.text(LEGEND_X, y, text, fontsize=9, va="top", family="monospace",
                 color="#b22222" if on else "#333333", weight="bold" if on else "normal")
        y -= 0.62 / fig.get_figheight()
    return save_(fig, path)


def fig_fwd_load(d: BeaconData, bands: tuple, path: Path) -> Path:
    """Beacon Fig. 10: forwarding node x hour, coloured by the peak-load band."""
    plt = plt_()
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch

    f = d.fwd
    nodes = sorted(f["fwd"].unique()) if not f.empty else []
    n = len(nodes)
    height = min(max(2.6, (0.22 if n <= 40 else 0.15) * n + 1.5), 16)
    fig, ax = plt.subplots(figsize=(WIDTH, height))
    order = ["idle", "low", "mid", "high", "unknown"]
    if not nodes:
        return _empty(fig, ax, f"Forwarding-node load on {d.date} (Beacon Fig. 10)",
                      "no forwarding-node load for this day", path)
    hours = pd.to_datetime(f["hour"])
    f = f.assign(h=hours.dt.hour, code=f["band"].map({b: i for i, b in enumerate(order)}))
    grid = (f.pivot_table(index="fwd", columns="h", values="code", aggfunc="max")
            .reindex(index=nodes, columns=range(24)))
    cmap = ListedColormap([BAND_COLOURS[b] for b in order]).with_extremes(bad="white")
    norm = BoundaryNorm(np.arange(-0.5, len(order)), cmap.N)
    ax.pcolormesh(np.arange(25), np.arange(n + 1), np.ma.masked_invalid(grid.to_numpy(float)),
                  cmap=cmap, norm=norm, edgecolors="white", linewidth=0.6 if n <= 60 else 0)
    ax.set_ylim(n, 0)
    ax.grid(False)
    step = max(1, int(np.ceil(n / 40)))
    ax.set_yticks(np.arange(n)[::step] + 0.5)
    ax.set_yticklabels(nodes[::step], fontsize=8 if n > 20 else 9)
    ax.set_ylabel("forwarding node")
    _hour_axis(ax, d.date)
    ax.set_title(f"Forwarding-node load on {d.date}: busiest minute of each hour vs the node's "
                 "peak bandwidth (Beacon Fig. 10)", loc="left", fontsize=11)
    words = band_legend(bands)
    counts = f["band"].value_counts()
    handles = [Patch(facecolor=BAND_COLOURS[b], edgecolor="#999999",
                     label=f"{b:<5} {words.get(b, 'no peak known')}  "
                           f"({counts.get(b, 0) / len(f):.0%} of cells)")
               for b in BAND_ORDER if b != "unknown" or counts.get(b, 0)]
    _adjust(fig, top_in=0.45, bottom_in=0.65)
    _legend(fig, ax, handles=handles, title="peak load in the hour\n(% of the node's peak bw)")
    return save_(fig, path)


def fig_mds_source(d: BeaconData, site: Site, path: Path) -> Path:
    """Beacon Fig. 18b: MDS ops/s per hour, stacked by source kind."""
    plt = plt_()
    fig, ax = plt.subplots(figsize=(WIDTH, 4.4))
    m = d.mds
    if m.empty:
        return _empty(fig, ax, f"MDS load by requesting source on {d.date} (Beacon Fig. 18)",
                      "no MDS samples for this day", path)
    m = m.assign(h=pd.to_datetime(m["hour"]).dt.hour)
    kinds = [k for k in MDS_SOURCE_KINDS if k in set(m["source_kind"])]
    kinds += sorted(set(m["source_kind"]) - set(kinds))
    rate = m.pivot_table(index="h", columns="source_kind", values="ops_per_s",
                         aggfunc="sum").reindex(index=range(24)).fillna(0.0)
    total_ops = m.groupby("source_kind")["ops"].sum()
    all_ops = float(total_ops.sum()) or 1.0
    bottom = np.zeros(24)
    for k in kinds:
        vals = rate[k].to_numpy() if k in rate.columns else np.zeros(24)
        ax.bar(np.arange(24) + 0.5, vals, width=0.85, bottom=bottom,
               color=KIND_COLOURS.get(k, "#bcbd22"), edgecolor="white", linewidth=0.3,
               label=f"{k:<10} {total_ops.get(k, 0) / all_ops:5.1%} of ops")
        bottom += vals
    ax.set_ylim(0, max(1.0, float(bottom.max()) * 1.1))
    _hour_axis(ax, d.date)
    ax.set_ylabel("MDS operations per second\n(mean over the hour)")
    ax.set_title(f"MDS load by requesting source on {d.date} (Beacon Fig. 18)", loc="left")
    _adjust(fig)
    _legend(fig, ax, title="source kind: share of the\nday's metadata operations")
    peaks = ", ".join(f"{fs.name} {fs.mds_peak_ops:,.0f}" for fs in site.filesystems)
    fig.text(LEGEND_X, ax.get_position().y1 - 1.6 / fig.get_figheight(),
             f"busiest hour: {bottom.max():,.0f} ops/s\nMDS peak (ops/s): {peaks}",
             fontsize=8.5, color="#555555", va="top")
    return save_(fig, path)


def fig_job_scatter(d: BeaconData, path: Path) -> Path:
    """Beacon Fig. 19: job average bandwidth vs IOPS (log-log) by dominant request size."""
    plt = plt_()
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(WIDTH, 5.2))
    s = d.scatter
    if s.empty:
        return _empty(fig, ax, f"Jobs started on {d.date}: bandwidth vs IOPS (Beacon Fig. 19)",
                      "no job with I/O in the trace started on this day", path)
    labels = list(REQUEST_SIZE_LABELS)
    cols = dict(zip(labels, SIZE_COLOURS, strict=True))
    iops = s["avg_iops"].to_numpy(float)
    bw = s["avg_bw"].to_numpy(float) / 1e6
    for lab in labels + [None]:
        sel = (s["dominant_size"] == lab).to_numpy() if lab else s["dominant_size"].isna() \
            .to_numpy()
        if not sel.any():
            continue
        n = int(sel.sum())
        ax.scatter(iops[sel], bw[sel], s=22, alpha=0.8, color=cols.get(lab, "#999999"),
                   edgecolors="none", label=f"{lab or 'unknown'}  ({n} job{'s' * (n > 1)})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo_x, hi_x = iops.min() / 3, iops.max() * 3
    lo_y, hi_y = bw.min() / 3, bw.max() * 3
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    # guides: a job whose requests all have size s lies on bw = iops x s
    xs = np.array([lo_x, hi_x])
    for size in REQUEST_SIZE_EDGES[1:]:
        mb = size / 1e6
        ax.plot(xs, xs * mb, color="#bbbbbb", lw=0.8, ls="--", zorder=0)
        # label where the line leaves the axes (top or right edge), just inside
        xt = min(hi_x, hi_y / mb) / 1.15
        if lo_x < xt and lo_y < xt * mb:
            ax.text(xt, xt * mb / 1.08, _size_label(size), fontsize=7.5, color="#888888",
                    ha="right", va="top")
    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(fmt)
    ax.yaxis.set_major_formatter(fmt)
    ax.set_xlabel("average IOPS (data requests per second with I/O, log)")
    ax.set_ylabel("average bandwidth (MB/s, log)")
    ax.set_title(f"Jobs started on {d.date}: bandwidth vs IOPS (Beacon Fig. 19)", loc="left")
    _adjust(fig)
    _legend(fig, ax, title="dominant request size\n(bucket with most bytes)")
    fig.text(LEGEND_X, 0.2, "dashed: bandwidth = IOPS × a\nfixed request size",
             fontsize=8.5, color="#666666", va="top")
    return save_(fig, path)


def _size_label(size: int) -> str:
    return f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KiB"


# --- HTML -------------------------------------------------------------------------------


def _img(rel: str, alt: str) -> str:
    return f'<img src="{escape(rel)}" alt="{escape(alt)}">'


def _layer_html(d: BeaconData) -> str:
    lv = d.layers
    if lv.empty:
        return "<p class='note'>No layer volumes for this day.</p>"
    order = {"compute": 0, "forwarding": 1, "ost": 2}
    lv = lv.assign(_o=lv["layer"].map(order)).sort_values("_o")
    rows = []
    for _, r in lv.iterrows():
        cov = "–" if r["layer"] != "compute" else _pct(r["coverage"])
        rows.append([td(escape(str(r["layer"]))), td(esc(r["source"])),
                     td(fmt_bytes(r["read_bytes"]), "num"),
                     td(fmt_bytes(r["write_bytes"]), "num"),
                     td(integer(r["read_ops"]), "num"), td(integer(r["write_ops"]), "num"),
                     td(cov, "num"), td(fmt_bytes(r["read_bytes_est"]), "num"),
                     td(fmt_bytes(r["write_bytes_est"]), "num"),
                     td(volume_ratio(r["read_ratio"]), "num"),
                     td(volume_ratio(r["write_ratio"]), "num")])
    r0 = lv.iloc[0]
    flags = []
    for name, col, fac, what in (("Cache thrashing", "cache_thrashing", "thrashing_factor",
                                  "forwarding-layer reads"),
                                 ("Write amplification", "write_amplification",
                                  "amplification_factor", "OST writes")):
        v = r0[col]
        state = ("<span class='warn'>yes</span>" if not is_missing(v) and bool(v)
                 else "n/a (a layer is missing)" if is_missing(v) else "no")
        flags.append(f"<li><b>{name}</b>: {state} — flagged when {what} exceed "
                     f"{float(r0[fac]):g}× the compute layer's.</li>")
    return (html_table(["layer", "measured from", "read", "written", "read ops", "write ops",
                        "trace coverage", "read (all clients)", "written (all clients)",
                        "read / compute", "written / compute"], rows, cls="layers")
            + "<p class='note'>Compute = the LWFS client trace, which holds only the traced "
              "clients (jobs); “all clients” scales it by the trace's coverage of the "
              "data requests the forwarding nodes' LWFS servers served. Ops: requests at "
              "the compute layer, RPCs below it.</p>"
            + f"<ul>{''.join(flags)}</ul>")


def _fwd_html(d: BeaconData, bands: tuple) -> str:
    f = d.fwd
    if f.empty:
        return "<p class='note'>No forwarding-node load for this day.</p>"
    words = band_legend(bands)
    counts = f["band"].value_counts()
    rows = [[td(b), td(escape(words.get(b, "no peak known")), "num"),
             td(integer(counts.get(b, 0)), "num"), td(_pct(counts.get(b, 0) / len(f)), "num")]
            for b in BAND_ORDER if b != "unknown" or counts.get(b, 0)]
    busiest = f.sort_values("load", ascending=False).head(1)
    top = ""
    if not busiest.empty and busiest["peak_bw"].iloc[0] > 0:
        r = busiest.iloc[0]
        top = (f"<p>Busiest: {esc(r['fwd'])} at {pd.Timestamp(r['peak_minute']):%H:%M}, "
               f"{sig3(r['peak_bw'] / 1e9)} GB/s = {_pct(r['load'])} of its peak.</p>")
    return (html_table(["band", "peak load in the hour", "node-hours", "share"], rows, cls="bands")
            + top + f"<p class='note'>Cut-offs after the paper's Fig. 10; {f['fwd'].nunique()} "
                    "forwarding nodes × 24 hours. A node-hour without Lustre-client samples "
                    "counts as idle.</p>")


def _mds_html(d: BeaconData) -> str:
    m = d.mds
    if m.empty:
        return "<p class='note'>No MDS samples for this day.</p>"
    total = float(m["ops"].sum()) or 1.0
    g = m.groupby("source_kind").agg(ops=("ops", "sum"), hours=("hour", "nunique"),
                                     mean=("ops_per_s", "mean"), peak=("ops_per_s", "max"),
                                     sources=("sources", "max"))
    order = {k: i for i, k in enumerate(MDS_SOURCE_KINDS)}
    g = g.assign(_o=[order.get(k, 99) for k in g.index]).sort_values("_o")
    rows = [[td(escape(str(k))), td(integer(r["sources"]), "num"),
             td(integer(r["ops"]), "num"), td(_pct(r["ops"] / total), "num"),
             td(sig3(r["mean"]), "num"), td(sig3(r["peak"]), "num")]
            for k, r in g.iterrows()]
    return html_table(["source kind", "sources (max per hour)", "operations", "share",
                       "mean ops/s (hours with data)", "peak hour ops/s"], rows, cls="mds")


def _io_html(d: BeaconData) -> str:
    io = d.io
    if io.empty:
        return "<p class='note'>No job_summary for this day.</p>"
    buckets = io[io["bucket_no"] >= 0].drop_duplicates("ch_bucket").sort_values("bucket_no")
    labels = list(buckets["ch_bucket"])
    cell = io.set_index(["io_mode", "ch_bucket"])
    rows = []
    for mode in list(IO_MODES) + ["all"]:
        r = cell.loc[(mode, "all")]
        per = [td(fmt_bytes(cell.loc[(mode, b), "read_bytes"] + cell.loc[(mode, b),
                                                                          "write_bytes"])
                   if cell.loc[(mode, b), "jobs"] else "–", "num") for b in labels]
        rows.append([td(f"<b>{mode}</b>" if mode == "all" else escape(mode)),
                     td(integer(r["jobs"]), "num"), td(integer(r["read_jobs"]), "num"),
                     td(integer(r["write_jobs"]), "num"),
                     td(fmt_bytes(r["read_bytes"]), "num"),
                     td(fmt_bytes(r["write_bytes"]), "num"),
                     td(fmt_bytes(r["avg_read_bytes"]), "num"),
                     td(fmt_bytes(r["avg_write_bytes"]), "num")] + per)
    modes = html_table(["I/O mode", "jobs", "jobs reading", "jobs writing", "read", "written",
                        "avg read per job", "avg written per job"]
                       + [f"volume, {escape(b)} core-h" for b in labels], rows, cls="io-mode")
    ch_rows = []
    for key, name in (("jobs", "jobs"), ("avg_read_bytes", "avg read per job"),
                      ("avg_write_bytes", "avg written per job")):
        vals = [cell.loc[("all", b), key] for b in labels]
        fmt = integer if key == "jobs" else fmt_bytes
        ch_rows.append([td(name)] + [td(fmt(v), "num") for v in vals])
    by_ch = html_table(["core-hours"] + [escape(b) for b in labels], ch_rows, cls="core-hours")
    return ("<p>Per I/O mode (Beacon Tables 4 and 6; volume per core-hour bucket):</p>" + modes
            + "<p>Per-job volume by core-hour consumption (Beacon Table 3):</p>" + by_ch
            + f"<p class='note'>Jobs that started on the day with non-trivial I/O (≥ "
              f"{NONTRIVIAL_BYTES // 1048576} MiB read + written in the trace). The paper's "
              "core-hour buckets (1K, 10K, 100K, 1000K on TaihuLight's 163,840 core groups) "
              "are scaled by the power of ten nearest to this site's share of those "
              "cores.</p>")


def _list_cell(v, n: int = 3) -> str:
    if v is None or (not isinstance(v, (list, np.ndarray)) and is_missing(v)):
        return "–"
    items = [str(x) for x in list(v)]
    if not items:
        return "–"
    text = ", ".join(items[:n]) + (f" … (+{len(items) - n})" if len(items) > n else "")
    return f'<span title="{escape(", ".join(items))}">{escape(text)}</span>'


def _jobs_html(d: BeaconData) -> str:
    j = d.jobs
    if j.empty:
        return "<p class='note'>No jobs in job_summary for this day.</p>"
    rows = []
    for _, r in j.iterrows():
        rows.append([td(esc(r["job_id"])), td(shorten(r["app"], 24)), td(esc(r["user"])),
                     td(integer(r["n_nodes"]), "num"), td(integer(r["n_io_nodes"]), "num"),
                     td(esc(r["io_mode"])), td(sig3(r["read_bytes"] / GiB), "num"),
                     td(sig3(r["write_bytes"] / GiB), "num"),
                     td(sig3(r["avg_bw"] / 1e9) if not is_missing(r["avg_bw"]) else "–", "num"),
                     td(sig3(r["peak_bw"] / 1e9) if not is_missing(r["peak_bw"]) else "–", "num"),
                     td(sig3(r["avg_iops"]), "num"), td(sig3(r["avg_mdops"]), "num"),
                     td(esc(r["dominant_size"])), td(_list_cell(r["fwd_nodes"])),
                     td(_list_cell(r["osts"]))])
    more = (f"<p class='note'>The {len(j)} largest of {integer(d.n_jobs)} jobs that started on the "
            "day (by read + written bytes in the trace).</p>")
    return html_table(["job_id", "app", "user", "nodes", "I/O nodes", "mode", "read GiB",
                       "written GiB", "avg GB/s", "peak GB/s", "IOPS", "MDOPS",
                       "dominant size", "forwarding nodes", "OSTs"], rows, cls="jobs") + more


def _ost_text(d: BeaconData) -> str:
    if d.ost.empty:
        return "<p class='note'>No OST samples for this day.</p>"
    below = d.ost_below
    mean = d.ost["mean"].dropna()
    parts = [f"{len(d.ost)} OSTs, {d.ost_minutes:,} OST-minutes."]
    if below:
        parts.append(f"{_pct(below[0.01])} of OST-minutes stay below 1 % of the OST's peak "
                     f"bandwidth and {_pct(below[0.05])} below 5 % (the paper: at least 60 % "
                     "and about 70 %).")
    if not mean.empty:
        parts.append(f"Median OST daily mean utilisation {_pct(mean.median())}; the busiest "
                     f"OST peaks at {_pct(d.ost['max'].max())}.")
    return f"<p>{' '.join(parts)}</p>"


def beacon_section(wh: Warehouse, site: Site, date, out_dir) -> str:
    """The Beacon section of the daily report for `date`: an HTML fragment ("" when the date
    has no Beacon data). PNGs go to `<out_dir>/_beacon/<date>/`; their links are relative
    to `out_dir` (the folder of the page)."""
    date = as_date(date)
    views = ("view_ost_util", "view_layer_volume", "view_fwd_load", "view_mds_source",
             "view_io_mode")
    if not has_beacon_data(wh, date) and not any(wh.has(t, date) for t in views):
        return ""
    d = load(wh, site, date)
    rel = f"{SUBDIR}/{date.isoformat()}"
    folder = Path(out_dir) / SUBDIR / date.isoformat()
    bands = site.settings.thresholds.fwd_load_bands
    anchor = f"beacon-{date.isoformat()}"
    out = [f'<h2 id="{anchor}">Beacon system views, {date.isoformat()}</h2>']
    if not d.views_built:
        out.append("<p class='warn'>Beacon data is present but the system views were not "
                   f"built for {date} (run <code>lassi run daily --date {date}</code>, stage "
                   "system_views).</p>")
    out.append("<p>The whole I/O path of the day: OSTs, the three layers' volumes, forwarding "
               "nodes, the metadata server and the jobs (after Beacon, Yang et al.). Times "
               "are UTC.</p>")
    figs = [
        ("ost_util", fig_ost_util, (d,), "OST utilisation (Fig. 7)",
         "How busy the OSTs were: each OST's busiest sample per minute as a share of its "
         "peak bandwidth.", _ost_text(d)),
        ("layer_volume", fig_layer_volume, (d,), "Volume per layer (Figs. 8-9)",
         "What the compute nodes asked for, what the forwarding nodes moved to and from "
         "Lustre, and what the OSTs served.", _layer_html(d)),
        ("fwd_load", fig_fwd_load, (d, bands), "Forwarding-node load (Fig. 10)",
         "Each cell: the busiest minute of that hour on that forwarding node, as a share of "
         "the node's benchmarked peak bandwidth.", _fwd_html(d, bands)),
        ("mds_source", fig_mds_source, (d, site), "Metadata load by source (Fig. 18)",
         "MDS operations per second by who sent them: forwarding nodes (the supercomputer's "
         "jobs), login nodes, other clusters.", _mds_html(d)),
        ("job_bw_iops", fig_job_scatter, (d,), "Jobs: bandwidth vs IOPS (Fig. 19)",
         "One point per job that started on the day (traced jobs with data I/O); lines of "
         "points are jobs of one request size.", ""),
    ]
    for key, fn, args, title, caption, extra in figs:
        fn(*args, folder / f"{key}.png")
        out.append(f"<h3>{escape(title)}</h3><p>{escape(caption)}</p>")
        out.append(_img(f"{rel}/{key}.png", f"{title} {date}"))
        if extra:
            out.append(extra)
    out.append("<h3>I/O modes (Tables 3, 4, 6)</h3>")
    out.append(_io_html(d))
    out.append(f"<h3>Top {TOP_JOBS} jobs by volume</h3>")
    out.append(_jobs_html(d))
    out.append(anomaly_section(wh, site, date, Path(out_dir), rel))
    out.append(component_section(wh, site, date))
    out.append("<h3>Trace compression (Table 1)</h3>")
    out.append(_compression_html(compression_by_app(wh, date, date)))
    return "\n".join(out)


def compression_ratio(v) -> str:
    """A trace compression ratio: one decimal."""
    return "–" if is_missing(v) else f"{float(v):.1f}×"


def _compression_html(apps: pd.DataFrame) -> str:
    """Per application: requests, entries after each pass, ratios, lossless (top by size)."""
    if apps.empty:
        return "<p class='note'>No LWFS client trace was merged for this day.</p>"
    top = apps.sort_values("raw_entries", ascending=False).head(TOP_APPS)
    rows = [[td(shorten(r["app"], 28)), td(integer(r["jobs"]), "num"),
             td(integer(r["raw_entries"]), "num"), td(integer(r["first_pass_entries"]), "num"),
             td(integer(r["merged_entries"]), "num"),
             td(compression_ratio(r["first_pass_ratio"]), "num"),
             td(compression_ratio(r["second_pass_ratio"]), "num"),
             td(compression_ratio(r["total_ratio"]), "num"),
             td("yes" if r["lossless"] else "<b>NO</b>")] for _, r in top.iterrows()]
    total = apps[["raw_entries", "first_pass_entries", "merged_entries"]].sum()
    note = (f"<p class='note'>The {len(top)} applications with most requests of {len(apps)}. "
            f"All traced jobs: {integer(total['raw_entries'])} requests → "
            f"{integer(total['first_pass_entries'])} first-pass entries (per node, "
            f"{compression_ratio(total['raw_entries'] / max(total['first_pass_entries'], 1))}) → "
            f"{integer(total['merged_entries'])} merged entries (across a job's nodes, "
            f"{compression_ratio(total['first_pass_entries'] / max(total['merged_entries'], 1))}). "
            "Lossless: expanding the merged trace gives back every request (checked in "
            "Spark per job). The paper reports 5.4–34.6× and 2.1–4.4×.</p>")
    return html_table(["application", "jobs", "requests", "first pass", "merged", "1st ratio",
                       "2nd ratio", "total", "lossless"], rows) + note

