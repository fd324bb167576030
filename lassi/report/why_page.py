"""`lassi why JOBID --html OUT`: one job's answer as a page with its causal path drawn.

- the activity graph (SIOX Fig. 9): the layers the job's data went through, top to bottom
  (compute nodes, forwarding nodes, OSTs, MDS), one box per component with the bytes it
  carried for the job, the time its requests spent there and the rate against the
  knowledge base; components at fault on the job's path in red;
- the job's bandwidth in every layer over time (Beacon Fig. 3a);
- its bandwidth per forwarding node and per OST (Figs. 3b, 14-15): a straggler stands out;
- with a Darshan log that has Lustre striping: each file's I/O time by the OST it is
  striped on (TOKIO's bad-OST view), slow OSTs in red;
- the ranked causes with evidence and recommendations, and the notes.

Data: the job's `job_path` rows (per minute and hop; a few thousand rows for a long job)
and its POSIX `darshan_file` rows with OST lists (one per file and rank).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pyspark.sql import functions as F

from lassi.core.plotstyle import READ_COLOUR, WIDTH, WRITE_COLOUR, pyplot, save
from lassi.core.warehouse import Warehouse
from lassi.report.beacon import fmt_bytes
from lassi.report.html import CSS, esc, html_table, td
from lassi.siox.ost_correlation import file_performance
from lassi.tools.why import Diagnosis

LAYERS = [("compute", "compute nodes"), ("forwarding", "forwarding nodes"), ("ost", "OSTs"),
          ("mds", "metadata servers")]
MAX_BOXES = 12                 # per layer in the activity graph; the rest summed in one box
FAULT, NORMAL = "#d62728", "#4c72b0"
# tab10 without its red, which marks a component at fault
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#aec7e8"]


def _hhmm(ax) -> None:
    import matplotlib.dates as mdates

    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M"))


def job_path_frame(wh: Warehouse, d: Diagnosis) -> pd.DataFrame:
    """The job's job_path rows (one job: bounded by its minutes x hops)."""
    if not wh.has("job_path", d.date):
        return pd.DataFrame()
    return (wh.read("job_path", [d.date]).filter(F.col("job_id") == d.job_id)
            .drop("date").toPandas())


def _layers(path: pd.DataFrame) -> list[tuple[str, str]]:
    """The layers to draw: without forwarding nodes (Lustre export statistics) the compute
    nodes reach the OSTs and MDTs directly."""
    fwd = (path["layer"] == "forwarding").any()
    return [(k, t) for k, t in LAYERS if k != "forwarding" or fwd]


def _interval_s(path: pd.DataFrame) -> float:
    """Seconds per job_path row: a minute from Beacon traces, the capture window from
    Lustre export statistics (the smallest step between the job's timestamps)."""
    ts = pd.Series(sorted(path["ts"].unique()))
    steps = ts.diff().dt.total_seconds().dropna()
    steps = steps[steps > 0]
    return float(steps.min()) if len(steps) else 60.0


def _on_grid(p: pd.DataFrame, step: float) -> pd.DataFrame:
    """Rows indexed by ts on a regular grid of `step` seconds: an interval without a row
    moved nothing (0), so a line drops to zero instead of bridging the gap."""
    if p.empty:
        return p
    grid = pd.date_range(p.index.min(), p.index.max(), freq=pd.Timedelta(seconds=step))
    return p.reindex(grid.union(p.index), fill_value=0)


def _hops(path: pd.DataFrame) -> pd.DataFrame:
    """Per hop: bytes, spent/expected seconds, lost seconds, median rate ratio."""
    path = path.assign(bytes=path["read_bytes"] + path["write_bytes"])
    return (path.groupby(["layer", "component"], as_index=False)
            .agg(bytes=("bytes", "sum"), md_ops=("md_ops", "sum"), spent_s=("spent_s", "sum"),
                 expected_s=("expected_s", "sum"), lost_s=("lost_s", "sum"),
                 ratio=("rate_ratio", "median")))


def activity_graph(path: pd.DataFrame, out: Path) -> Path:
    """The job's causal path, layer by layer (see the module doc)."""
    plt = pyplot()
    hops = _hops(path)
    layers = _layers(path)
    fig, ax = plt.subplots(figsize=(WIDTH, 1.55 * len(layers)))
    ax.set_axis_off()
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.5, len(layers) - 0.3)
    prev_x: list[float] = []
    xs_of: dict[str, list[float]] = {}
    for row, (layer, title) in enumerate(layers):
        y = len(layers) - 1 - row
        h = hops[hops["layer"] == layer].sort_values(["lost_s", "bytes"], ascending=False)
        ax.text(0.0, y + 0.38, title, fontsize=11, fontweight="bold", va="bottom")
        if h.empty:
            ax.text(0.02, y, "no data for this layer", color="grey", va="center")
            prev_x = []
            continue
        if len(h) > MAX_BOXES:
            rest = h.iloc[MAX_BOXES - 1:]
            h = pd.concat([h.iloc[:MAX_BOXES - 1], pd.DataFrame([{
                "layer": layer, "component": f"{len(rest)} more", "bytes": rest["bytes"].sum(),
                "md_ops": rest["md_ops"].sum(),
                "spent_s": rest["spent_s"].sum(), "expected_s": rest["expected_s"].sum(),
                "lost_s": rest["lost_s"].sum(), "ratio": rest["ratio"].min()}])])
        xs = [(i + 0.5) / len(h) for i in range(len(h))]
        xs_of[layer] = xs
        senders = (xs_of.get("forwarding", xs_of.get("compute", prev_x)) if layer == "mds"
                   else prev_x)
        for x in xs:
            for px in senders:
                ax.annotate("", (x, y + 0.3), (px, y + 0.72),
                            arrowprops={"arrowstyle": "->", "color": "#bbbbbb", "lw": 0.6})
        w = min(0.9 / len(h), 0.16)
        crowded = len(h) > 8
        for x, (_, r) in zip(xs, h.iterrows(), strict=True):
            bad = r["lost_s"] > 0
            ax.add_patch(plt.Rectangle((x - w / 2, y - 0.28), w, 0.56, linewidth=2 if bad else 1,
                                       edgecolor=FAULT if bad else NORMAL,
                                       facecolor="#fde0dd" if bad else "#eef3fa"))
            lines = [str(r["component"]), fmt_bytes(r["bytes"]) if r["bytes"] > 0 or
                     not r["md_ops"] > 0 else f"{r['md_ops']:,.0f} metadata ops"]
            if r["spent_s"] > 0:
                lines.append(f"{r['spent_s']:.0f} s (normal {r['expected_s']:.0f} s)")
            if pd.notna(r["ratio"]):
                what = ("service" if layer == "forwarding" else "bw" if crowded
                        else "bandwidth")
                lines.append(f"{what} {r['ratio']:.2f}×" + ("" if crowded else " usual"))
            if bad:
                lines.append(f"lost {r['lost_s'] / 60:.1f} min")
            ax.text(x, y, "\n".join(lines), ha="center", va="center",
                    fontsize=6.5 if crowded else 7.5, color=FAULT if bad else "black")
        prev_x = xs
    ax.set_title("Causal I/O path of the job: bytes, time and rate per component against "
                 "its knowledge base (median interval; red: at fault)")
    return save(fig, out, tight=True)


def layer_bandwidth(path: pd.DataFrame, out: Path) -> Path:
    """Bandwidth per data layer over time (MiB/s per interval), read and write."""
    plt = pyplot()
    layers = [lt for lt in _layers(path) if lt[0] != "mds"]
    step = _interval_s(path)
    fig, axes = plt.subplots(len(layers), 1, figsize=(WIDTH, 2.35 * len(layers)), sharex=True)
    for ax, (layer, title) in zip(axes, layers, strict=True):
        p = _on_grid(path[path["layer"] == layer].groupby("ts")[["read_bytes", "write_bytes"]]
                     .sum(), step)
        if p.empty:
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", color="grey")
        else:
            ax.plot(p.index, p["read_bytes"] / step / 2**20, color=READ_COLOUR, label="read")
            ax.plot(p.index, p["write_bytes"] / step / 2**20, color=WRITE_COLOUR, label="write")
            ax.legend(loc="upper right")
        ax.set_ylabel("MiB/s")
        ax.set_title(f"{title}", loc="left", fontsize=10)
        _hhmm(ax)
    axes[-1].set_xlabel("time (UTC)")
    fig.suptitle(f"The job's bandwidth in every layer (mean per {step / 60:g} min)",
                 fontweight="bold")
    fig.tight_layout()
    return save(fig, out)


def per_component(path: pd.DataFrame, out: Path) -> Path:
    """Bandwidth per forwarding node (where there are any) and per OST within the job."""
    plt = pyplot()
    layers = [lt for lt in _layers(path) if lt[0] in ("forwarding", "ost")]
    step = _interval_s(path)
    fig, axes = plt.subplots(1, len(layers), figsize=(WIDTH, 4.2), sharey=False, squeeze=False)
    for ax, (layer, title) in zip(axes[0], layers, strict=True):
        p = path[path["layer"] == layer].assign(
            mibs=lambda x: (x["read_bytes"] + x["write_bytes"]) / step / 2**20)
        top = p.groupby("component")["mibs"].sum().nlargest(10).index
        for i, comp in enumerate(top):
            c = p[p["component"] == comp]
            bad = c["lost_s"].sum() > 0
            series = _on_grid(c.groupby("ts")[["mibs"]].sum(), step)["mibs"]
            ax.plot(series.index, series.to_numpy(), lw=2 if bad else 1, zorder=3 if bad else 2,
                    color=FAULT if bad else PALETTE[i % len(PALETTE)],
                    label=f"{comp}{' (at fault)' if bad else ''}")
        _hhmm(ax)
        ax.set_title(f"per {title[:-1]} (top 10 by bytes)", loc="left", fontsize=10)
        ax.set_ylabel("MiB/s")
        ax.set_xlabel("time (UTC)")
        if len(top):
            ax.legend(fontsize=7, loc="upper right")
    fig.suptitle("The job's bandwidth per component: a straggler stands out",
                 fontweight="bold")
    fig.tight_layout()
    return save(fig, out)


def darshan_files_frame(wh: Warehouse, d: Diagnosis) -> pd.DataFrame:
    """The job's POSIX darshan_file rows with OST lists (one job's files)."""
    if not wh.has("darshan_file", d.date):
        return pd.DataFrame()
    return (wh.read("darshan_file", [d.date])
            .filter((F.col("job_id") == d.job_id) & (F.col("module") == "POSIX")
                    & (F.size("ost_ids") > 0)).drop("date").toPandas())


def _slow_indices(d: Diagnosis) -> set[int]:
    """OST indices named by the job's component causes (`<fs>-OST000e`, `OST#14`)."""
    out = set()
    for c in d.causes:
        if c.kind != "component":
            continue
        if c.name.startswith("OST#") and c.name[4:].isdigit():
            out.add(int(c.name[4:]))
        elif "-OST" in c.name:
            try:
                out.add(int(c.name.rsplit("-OST", 1)[1], 16))
            except ValueError:
                pass
    return out


def darshan_osts(perf: pd.DataFrame, slow: set[int], out: Path) -> Path:
    """Each file's I/O time (slowest rank; `file_performance` rows) by the OSTs it is
    striped on; slow OSTs in red."""
    import numpy as np

    perf = perf.explode("ost_ids")
    perf["ost"] = perf["ost_ids"].astype(int)
    osts = sorted(perf["ost"].unique())
    x = {o: i for i, o in enumerate(osts)}
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH, 4.2))
    rng = np.random.default_rng(0)              # jitter: files on one OST side by side
    for bad, colour, label in ((False, NORMAL, "file"), (True, FAULT, "file on a slow OST")):
        p = perf[perf["ost"].isin(slow) == bad]
        if len(p):
            ax.scatter(p["ost"].map(x) + rng.uniform(-0.25, 0.25, len(p)), p["io_time"],
                       s=10, alpha=0.6, color=colour, label=label)
    ax.set_xticks(range(len(osts)))
    ax.set_xticklabels([f"{o}" for o in osts], fontsize=7 if len(osts) > 30 else 9)
    ax.set_xlabel("OST index")
    ax.set_ylabel("file I/O time, slowest rank (s)")
    ax.set_yscale("log")
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title("Each file's I/O time by the OST it is striped on (Darshan)",
                 fontweight="bold", loc="left")
    fig.tight_layout()
    return save(fig, out)


def write_page(wh: Warehouse, d: Diagnosis, out: Path, path: pd.DataFrame | None = None
               ) -> Path:
    """The HTML page (and its PNGs beside it) at `out`; `path`: the job's job_path rows
    when the caller has them."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    path = job_path_frame(wh, d) if path is None else path
    stem = out.with_suffix("")
    figs = []
    if not path.empty:
        figs = [activity_graph(path, Path(f"{stem}_path.png")),
                layer_bandwidth(path, Path(f"{stem}_layers.png")),
                per_component(path, Path(f"{stem}_components.png"))]
    files = darshan_files_frame(wh, d)
    perf = file_performance(files) if not files.empty else pd.DataFrame()
    if not perf.empty:
        figs.append(darshan_osts(perf, _slow_indices(d), Path(f"{stem}_darshan_osts.png")))
    rows = [[td(str(i)), td(esc(c.kind)), td(f"<b>{esc(c.name)}</b>"),
             td(f"{100 * c.share:.0f} %" if c.lost_s > 0 else "-", "num"), td(esc(c.evidence)),
             td(esc(c.recommendation or "–"))] for i, c in enumerate(d.causes, 1)]
    facts = [f"started {d.start:%Y-%m-%d %H:%M} UTC" if d.start else str(d.date)]
    if d.runtime_s is not None:
        facts.append(f"ran {d.runtime_s / 60:.1f} min")
    if d.slowdown is not None:
        facts.append(f"{d.slowdown:.2f}× its command group's mean")
    facts.append(f"lost {d.lost_s / 60:.1f} min")
    body = [f"<h1>Why was job {esc(d.job_id)} slow?</h1>",
            f"<p>{esc(d.app or '')} {esc(d.user or '')} — {esc('; '.join(facts))}</p>",
            html_table(["#", "kind", "cause", "share of lost time", "evidence", "what to do"],
                       rows) if rows else "<p>No cause found.</p>"]
    body += [f"<p class='note'>{esc(n)}</p>" for n in d.notes]
    body += [f'<p><img src="{esc(f.name)}" alt="{esc(f.stem)}" style="max-width:100%"></p>'
             for f in figs]
    if not figs:
        body.append("<p class='note'>No causal path and no Darshan striping for this job: "
                    "no figures.</p>")
    out.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>lassi why "
                   f"{esc(d.job_id)}</title><style>{CSS}</style></head><body>"
                   + "\n".join(body) + "</body></html>", encoding="utf-8")
    return out
