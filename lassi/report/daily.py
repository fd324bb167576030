"""`lassi report daily`: the LASSi daily (or period) report as one folder.

Layout: `<out>/<site>-<date>/` (or `<site>-<first>_<last>/`) with `index.html` and one
subfolder of PNGs per filesystem (`fs2/risk_stats.png`, ...) plus `_groups/` for the run
groups figure. The folder is rendered under a temporary name beside its final place and
renamed into place at the end, so a half-written report never replaces a good one.
"""

from __future__ import annotations

import datetime as dt
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import lassi.report.figures as figures
from lassi.beacon.system_views import has_beacon_data
from lassi.core.config import Site
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days
from lassi.report.beacon import beacon_section
from lassi.report.data import ReportData, load, load_quality
from lassi.report.html import beacon_page, page
from lassi.report.siox import siox_section
from lassi.report.tokio import tokio_section

FIGURES = ("risk_stats", "oss_risk", "mds_risk", "ops_metric")
GROUPS_DIR = "_groups"


def report_name(site: Site, first: dt.date, last: dt.date) -> str:
    """The report folder's name: `<site>-<date>` or `<site>-<first>_<last>`."""
    span = first.isoformat() if first == last else f"{first}_{last}"
    return f"{site.name}-{span}"


def render(d: ReportData, folder: Path, beacon: str = "", tokio: str = "",
           siox: str = "") -> Path:
    """Write figures and the page of `d` into `folder`; return index.html. `beacon`, `tokio`
    and `siox` are the HTML of those sections (may be empty)."""
    missing = d.missing_dates
    images: dict[str, dict[str, str]] = {}
    for fs in d.filesystems:
        if not (d.fs_hour["fs"] == fs).any():
            continue
        sub = folder / fs
        figures.risk_stats(d.fs_hour, fs, d.first, d.last, missing, sub / "risk_stats.png")
        labels = _contributors(d, fs)
        colours = figures.app_colours(labels)
        for kind in ("oss", "mds"):
            figures.app_risk(d.app_risk[kind], kind, fs, d.first, d.last, missing, colours,
                             sub / f"{kind}_risk.png")
        figures.ops_metric(d.fs_hour, fs, d.first, d.last, missing, sub / "ops_metric.png")
        images[fs] = {k: f"{fs}/{k}.png" for k in FIGURES}
    groups_png = figures.run_groups(d.group_runs, d.groups,
                                    folder / GROUPS_DIR / "run_groups.png")
    groups_img = f"{GROUPS_DIR}/run_groups.png" if groups_png else None
    index = folder / "index.html"
    d.has_beacon, d.has_tokio, d.has_siox = bool(beacon), bool(tokio), bool(siox)
    index.write_text(page(d, images, groups_img, beacon + tokio + siox), encoding="utf-8")
    return index


def _contributors(d: ReportData, fs: str) -> list[str]:
    """Named applications of the fs's OSS and MDS figures in one colour order.

    Interleaved (OSS #1, MDS #1, OSS #2, ...) so each figure's main contributors get the
    strongest colours while an application in both figures keeps its colour.
    """
    ranked = []
    for kind in ("oss", "mds"):
        f = d.app_risk[kind]
        f = f[(f["fs"] == fs) & f["app_id"].notna()].sort_values("rank")
        ranked.append(list(dict.fromkeys(f["label"])))
    out: list[str] = []
    for i in range(max(len(r) for r in ranked)):
        for r in ranked:
            if i < len(r) and r[i] not in out:
                out.append(r[i])
    return out


@scoped
def write_daily_report(wh: Warehouse, site: Site, first: dt.date, last: dt.date,
                       out: Path) -> Path:
    """Render the report of first..last under `out`; return the path of its index.html.

    ValueError (one line) when the period has no app_hour data or the dates are reversed.
    """
    if last < first:
        raise ValueError(f"--from {first} is after --to {last}")
    period = days(first, last)
    try:
        data = load(wh, site, first, last)
    except ValueError:
        if not any(has_beacon_data(wh, d) for d in period):
            raise
        data = None     # a Beacon-only site (forwarding layers, no Lustre export stats)

    def build(folder: Path) -> Path:
        beacon = "\n".join(filter(None, (beacon_section(wh, site, d, folder) for d in period)))
        tokio = "\n".join(filter(None, (tokio_section(wh, site, d, folder) for d in period)))
        siox = "\n".join(filter(None, (siox_section(wh, site, d, folder) for d in period)))
        if data is not None:
            return render(data, folder, beacon, tokio, siox)
        folder.mkdir(parents=True, exist_ok=True)
        index = folder / "index.html"
        index.write_text(beacon_page(site.name, first, last, beacon + tokio + siox,
                                     load_quality(wh, period)), encoding="utf-8")
        return index

    return publish(Path(out), report_name(site, first, last), build)


def publish(out: Path, name: str, build: Callable[[Path], Path]) -> Path:
    """`build(folder)` into a temporary folder, then swap it in as `out/name`.

    Returns what `build` returned, relocated to the final folder. If `build` fails, the
    previous `out/name` is untouched and the temporary folder is removed.
    """
    out.mkdir(parents=True, exist_ok=True)
    final = out / name
    tmp = out / f".{name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        made = build(tmp)
        old = None
        if final.exists():
            old = out / f".{name}.old-{uuid.uuid4().hex[:8]}"
            final.rename(old)
        tmp.rename(final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final / Path(made).relative_to(tmp)
