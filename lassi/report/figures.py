"""The report's matplotlib figures (PNG). The Agg backend is chosen when a figure is drawn.

Each function takes the small pandas frames of `lassi.report.data`, writes one PNG and
returns its path. Hours are UTC; every figure spans the whole report period, days
without data are shaded and labelled "no data".
"""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from lassi.core.plotstyle import (
    LEFT,
    LEGEND_X,
    MDS_COLOUR,
    OSS_COLOUR,
    OTHER_COLOUR,
    READ_COLOUR,
    RIGHT,
    WIDTH,
    WRITE_COLOUR,
    pyplot,
    save,
)
from lassi.core.warehouse import days

LABEL_CHARS = 38


def _palette() -> list:
    """Distinct colours for named applications (tab20 without its greys)."""
    import matplotlib

    tab = matplotlib.colormaps["tab20"].colors
    order = [0, 2, 4, 6, 8, 10, 12, 16, 18, 1, 3, 5, 7, 9, 11, 13, 17, 19]
    return [tab[i] for i in order]


def app_colours(labels: list[str]) -> dict[str, tuple]:
    """A colour per application label, in the given order; "other apps" is grey."""
    pal = _palette()
    out = {lab: pal[i % len(pal)] for i, lab in enumerate(x for x in labels
                                                          if x != "other apps")}
    out["other apps"] = OTHER_COLOUR
    return out


def _period(first: dt.date, last: dt.date) -> tuple[pd.Timestamp, pd.Timestamp]:
    return pd.Timestamp(first), pd.Timestamp(last + dt.timedelta(days=1))


def _hours(first: dt.date, last: dt.date) -> pd.DatetimeIndex:
    lo, hi = _period(first, last)
    return pd.date_range(lo, hi, freq="h", inclusive="left")


def _time_axis(ax, first: dt.date, last: dt.date, label: bool = True) -> None:
    """UTC hour ticks over the period; the axis label names the day(s)."""
    import matplotlib.dates as mdates
    from matplotlib.ticker import FuncFormatter

    lo, hi = _period(first, last)
    ax.set_xlim(lo, hi)
    n_days = (last - first).days + 1
    if n_days == 1:
        ax.xaxis.set_major_locator(mdates.HourLocator(byhour=range(0, 24, 2)))
        ax.xaxis.set_minor_locator(mdates.HourLocator())
        end = mdates.date2num(hi)
        ax.xaxis.set_major_formatter(FuncFormatter(
            lambda v, _: "24:00" if abs(v - end) < 1e-6 else mdates.num2date(v).strftime("%H:00")))
        text = f"hour of {first.isoformat()} (UTC)"
    elif n_days <= 4:
        ax.xaxis.set_major_locator(mdates.HourLocator(byhour=range(0, 24, 6)))
        ax.xaxis.set_minor_locator(mdates.HourLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _hour_day(mdates.num2date(v))))
        text = f"time (UTC), {first.isoformat()} to {last.isoformat()}"
    else:
        loc = mdates.DayLocator(interval=max(1, n_days // 12))
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_minor_locator(mdates.DayLocator())
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%d %b"))
        text = f"day (UTC), {first.isoformat()} to {last.isoformat()}"
    if label:
        ax.set_xlabel(text)


def _hour_day(t: dt.datetime) -> str:
    """Tick label: the hour, plus the day under midnight ticks."""
    return t.strftime("%H:00\n%d %b") if t.hour == 0 else t.strftime("%H:00")


def _shade_missing(ax, missing: list[dt.date], text: bool = True) -> None:
    for d in missing:
        lo, hi = _period(d, d)
        ax.axvspan(lo, hi, facecolor="#eeeeee", hatch="//", edgecolor="#cccccc", lw=0, zorder=0)
        if text:
            ax.text(lo + (hi - lo) / 2, 0.5, f"no data\n{d.isoformat()}",
                    transform=ax.get_xaxis_transform(), ha="center", va="center",
                    color="#777777", fontsize=10)


def _note(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center",
            color="#555555", fontsize=11,
            bbox={"boxstyle": "round", "fc": "white", "ec": "#cccccc"})


def _layout(fig, first: dt.date, last: dt.date, hspace: float = 0.25) -> None:
    """Fixed margins (in inches at top and bottom: room for title and 1-2 line ticks)."""
    h = fig.get_figheight()
    bottom = (0.65 if first == last else 0.85) / h
    fig.subplots_adjust(left=LEFT, right=RIGHT, top=1 - 0.4 / h, bottom=bottom, hspace=hspace)


def _legend(fig, ax, title: str | None = None) -> None:
    """The axes' legend in the right-hand strip, top-aligned with the axes."""
    top = ax.get_position().y1
    ax.legend(loc="upper left", bbox_to_anchor=(LEGEND_X, top), bbox_transform=fig.transFigure,
              borderaxespad=0, title=title, title_fontsize=9, alignment="left")


def _clip(text: str, n: int = LABEL_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _bar_x(hours) -> pd.DatetimeIndex:
    """Bars are centred on the middle of their hour."""
    return pd.DatetimeIndex(hours) + pd.Timedelta(minutes=30)


BAR_W = 0.85 / 24  # days


def _stats_text(vals: np.ndarray, hours: pd.DatetimeIndex, has_data: np.ndarray) -> str:
    if not has_data.any():
        return "no data"
    v = vals[has_data]
    if not (v > 0).any():
        return "zero in every hour"
    k = int(np.argmax(vals))
    when = f"{hours[k]:%H:00}" if hours[0].date() == hours[-1].date() else f"{hours[k]:%d %b %H:00}"
    return (f"peak  {vals[k]:.3g}  ({when})\n"
            f"mean  {v.mean():.3g} per hour\n"
            f"hours > 0:  {int((v > 0).sum())} of {len(v)} with data")


def risk_stats(fs_hour: pd.DataFrame, fs: str, first: dt.date, last: dt.date,
               missing: list[dt.date], path: Path) -> Path:
    """OSS and MDS risk of the filesystem per hour: two panels sharing the time axis."""
    plt = pyplot()
    hours = _hours(first, last)
    d = fs_hour[fs_hour["fs"] == fs].set_index("hour").reindex(hours)
    has_data = d["risk_oss"].notna().to_numpy()
    fig, axes = plt.subplots(2, 1, figsize=(WIDTH, 5.6), sharex=True)
    for ax, col, colour, name in ((axes[0], "risk_oss", OSS_COLOUR, "OSS risk"),
                                  (axes[1], "risk_mds", MDS_COLOUR, "MDS risk")):
        vals = d[col].fillna(0.0).to_numpy()
        ax.bar(_bar_x(hours), vals, width=BAR_W, color=colour)
        ax.set_ylabel(f"{name}\n(Σ positive r_x)")
        ax.set_ylim(0, max(1.0, float(vals.max()) * 1.1))
        _shade_missing(ax, missing)
        if has_data.any() and not (vals > 0).any():
            _note(ax, f"no positive {name} on {fs} in this period")
        ax.text(LEGEND_X, ax.get_position().y1, f"{name}\n" + _stats_text(vals, hours, has_data),
                transform=fig.transFigure, va="top", ha="left", fontsize=9.5,
                family="monospace", color=colour)
    axes[0].set_title(f"{fs}: OSS and MDS risk per hour (sum over all applications)",
                      loc="left")
    _time_axis(axes[1], first, last)
    _layout(fig, first, last, hspace=0.12)
    fig.align_ylabels(axes)
    return save(fig, path)


def app_risk(frame: pd.DataFrame, kind: str, fs: str, first: dt.date, last: dt.date,
             missing: list[dt.date], colours: dict[str, tuple], path: Path) -> Path:
    """Hourly stacked bars of the filesystem's risk by application (top apps + other)."""
    plt = pyplot()
    name = {"oss": "OSS risk", "mds": "MDS risk"}[kind]
    hours = _hours(first, last)
    d = frame[frame["fs"] == fs]
    fig, ax = plt.subplots(figsize=(WIDTH, 4.8))
    title = f"{fs}: {name} per hour by application"
    if d.empty:
        _note(ax, f"no application had positive {name} on {fs} in this period")
        ax.set_ylim(0, 1)
    else:
        named = (d[d["app_id"].notna()].groupby("label")
                 .agg(rank=("rank", "min"), total=("total", "max")).sort_values("rank"))
        pivot = d.pivot_table(index="hour", columns="label", values="risk", aggfunc="sum")
        pivot = pivot.reindex(hours).fillna(0.0)
        order = list(named.index) + (["other apps"] if "other apps" in pivot.columns else [])
        bottom = np.zeros(len(hours))
        x = _bar_x(hours)
        for lab in order:
            vals = pivot[lab].to_numpy()
            total = named.loc[lab, "total"] if lab in named.index else vals.sum()
            ax.bar(x, vals, width=BAR_W, bottom=bottom, color=colours.get(lab, OTHER_COLOUR),
                   label=f"{_clip(lab)}  {total:.3g}", edgecolor="white", linewidth=0.3)
            bottom += vals
        ax.set_ylim(0, max(1.0, float(bottom.max()) * 1.08))
        title += f" (top {len(named)} applications of the period named)"
    _shade_missing(ax, missing)
    ax.set_ylabel(f"{name} (Σ positive r_x)")
    ax.set_title(title, loc="left")
    _time_axis(ax, first, last)
    _layout(fig, first, last)
    if not d.empty:
        _legend(fig, ax, title=f"application: exe (user), all runs\nΣ {name} over the period")
    return save(fig, path)


def ops_metric(fs_hour: pd.DataFrame, fs: str, first: dt.date, last: dt.date,
               missing: list[dt.date], path: Path) -> Path:
    """read_kb_ops and write_kb_ops of the filesystem per hour (log scale, 1 is ideal)."""
    plt = pyplot()
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    hours = _hours(first, last)
    d = fs_hour[fs_hour["fs"] == fs].set_index("hour").reindex(hours)
    fig, ax = plt.subplots(figsize=(WIDTH, 4.4))
    x = _bar_x(hours)
    vals, gaps = [], False
    covered = np.isin(hours.date, [d for d in days(first, last) if d not in missing])
    for col, colour, marker, lab in (("read_kb_ops", READ_COLOUR, "o", "read_kb_ops (reads)"),
                                     ("write_kb_ops", WRITE_COLOUR, "s",
                                      "write_kb_ops (writes)")):
        y = d[col].astype(float).to_numpy()
        ok = np.isfinite(y) & (y > 0)
        vals.extend(y[ok])
        gaps = gaps or bool((covered & ~ok).any())
        ax.plot(x, np.where(ok, y, np.nan), color=colour, marker=marker, ms=4, lw=1.4,
                label=lab)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", ls="--", lw=1.2, label="ideal: 1 MiB per op")
    lo = min([0.5] + [v / 1.6 for v in vals])
    hi = max([10.0] + [v * 1.6 for v in vals])
    ax.set_ylim(lo, hi)
    decades = np.log10(hi / lo)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 2.5
                                          else (1.0,)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    _shade_missing(ax, missing)
    if not vals and len(missing) < (last - first).days + 1:
        _note(ax, f"no data read or written on {fs} in this period")
    ax.set_ylabel("ops per MiB moved (log)\nhigher = smaller ops = worse")
    ax.set_title(f"{fs}: I/O quality per hour (ops metric: operations per MiB moved)",
                 loc="left")
    _time_axis(ax, first, last)
    _layout(fig, first, last)
    _legend(fig, ax)
    if gaps:
        ax.text(LEGEND_X, ax.get_position().y1 - 0.85 / fig.get_figheight(),
                "gaps: hours with nothing\nread (or written)",
                transform=fig.transFigure, fontsize=8.5, color="#666666", va="top")
    return save(fig, path)


def run_groups(group_runs: pd.DataFrame, groups: pd.DataFrame, path: Path) -> Path | None:
    """Runtime vs summed risk per run for the largest groups (LASSi Fig. 7).

    risk_oss is drawn on the positive x axis, risk_mds on the negative one.
    """
    if group_runs.empty:
        return None
    plt = pyplot()
    cmds = list(dict.fromkeys(group_runs.sort_values("order")["command"]))
    n = len(cmds)
    cols = 2 if n > 1 else 1
    rows = (n + 1) // 2
    from matplotlib.ticker import FuncFormatter

    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, 3.9 * rows), squeeze=False)
    info = groups.set_index("command") if not groups.empty else pd.DataFrame()
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.set_visible(False)
            continue
        cmd = cmds[i]
        g = group_runs[group_runs["command"] == cmd]
        rt = g["runtime_s"].to_numpy() / 60.0
        slow = g["slowed"].fillna(False).to_numpy(dtype=bool)
        for sign, col, colour, marker, lab in ((1, "risk_oss_sum", OSS_COLOUR, "o",
                                                "Σ risk_oss"),
                                               (-1, "risk_mds_sum", MDS_COLOUR, "^",
                                                "Σ risk_mds (drawn negative)")):
            xs = sign * g[col].fillna(0.0).to_numpy()
            ax.scatter(xs[~slow], rt[~slow], s=22, color=colour, marker=marker, alpha=0.75,
                       label=lab)
            if slow.any():
                ax.scatter(xs[slow], rt[slow], s=60, facecolors="none", edgecolors="black",
                           marker=marker, linewidths=1.2,
                           label="slowed run (outlined)" if sign == 1 else None)
        ax.axvline(0, color="#888888", lw=0.8)
        if not (g[["risk_oss_sum", "risk_mds_sum"]].fillna(0.0).to_numpy() > 0).any():
            ax.text(0.98, 0.04, "every run: zero risk", transform=ax.transAxes, ha="right",
                    va="bottom", color="#555555", fontsize=9)
        xmax = max(1.0, float(np.nanmax(np.abs(np.r_[g["risk_oss_sum"].fillna(0),
                                                     g["risk_mds_sum"].fillna(0)]))))
        ax.set_xlim(-xmax * 1.1, xmax * 1.1)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{abs(v):g}"))
        corr = ""
        if cmd in info.index:
            r = info.loc[cmd]
            co, cm = r.get("corr_runtime_risk_oss"), r.get("corr_runtime_risk_mds")
            corr = (f"n={int(r['n_runs'])}, r(oss)={_fmt_r(co)}, r(mds)={_fmt_r(cm)}")
        ax.set_title("\n".join(textwrap.wrap(cmd, 55)[:2]) + (f"\n{corr}" if corr else ""),
                     fontsize=9, fontweight="normal")
        ax.set_ylabel("runtime (min)")
        ax.set_xlabel("← Σ risk_mds   |   Σ risk_oss →")
        if i == 0:
            ax.legend(loc="best", fontsize=8, frameon=True, framealpha=0.85)
    fig.suptitle("Run groups (same launch command): runtime vs risk summed over each run",
                 fontsize=12, fontweight="bold")
    fig.tight_layout()
    return save(fig, path, tight=True)


def _fmt_r(v) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:+.2f}"
