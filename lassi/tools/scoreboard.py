"""`lassi scoreboard`: TOKIO's darshan_scoreboard (paper Fig. 8) — the top users,
applications and file systems by I/O volume over a period.

Sources, first that has rows in the period (partitions = UTC days):
- `darshan`: `darshan_job` (user; application = basename of the executable; job id) and
  `darshan_file` (bytes per file system = the mount of each file record, POSIX + STDIO
  modules) — sql/tools/scoreboard_darshan.sql;
- otherwise the scheduler/LASSi and Beacon tables, together when both have rows:
  `risk` (LASSi): `app_hour` (fs, read_kb/write_kb x 1024, user, exe) with `app_run` filling a
  missing user/exe — sql/tools/scoreboard_risk.sql; `beacon`: `job_summary` (user, app,
  read/write bytes; no file-system split) — sql/tools/scoreboard_beacon.sql.
Ranking (sql/tools/scoreboard_top.sql): read, write and total bytes and the number of distinct
jobs per user, application and file system; top N by total bytes. Only the top-N rows are
collected.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days

CATEGORIES = [("user", "Users"), ("app", "Applications"), ("fs", "File systems")]
GIB = 2.0 ** 30
COLUMNS = ["rank", "name", "read_bytes", "write_bytes", "total_bytes", "jobs",
           "read_gib", "write_gib", "total_gib"]
SOURCE_TABLES = {"darshan": "darshan_job + darshan_file", "risk": "app_hour + app_run",
                 "beacon": "job_summary"}


def _has_rows(wh: Warehouse, table: str, dates: list[dt.date]) -> bool:
    return bool(wh.read(table, dates).limit(1).count())


def _input_view(wh: Warehouse, first: dt.date, last: dt.date) -> tuple[object, list[str]]:
    """The period's rows as the common scoreboard input (user, app, fs, job_id, bytes) and
    the sources used; ValueError when the period has none."""
    from lassi.core.sqltext import sql

    spark, period = wh.spark, days(first, last)
    if _has_rows(wh, "darshan_job", period):
        wh.read("darshan_job", period).createOrReplaceTempView("dj")
        wh.read("darshan_file", period).createOrReplaceTempView("dfl")
        return spark.sql(sql("tools/scoreboard_darshan")), ["darshan"]
    parts, used = [], []
    if _has_rows(wh, "app_hour", period):
        wh.read("app_hour", period).createOrReplaceTempView("ah")
        before = [first - dt.timedelta(days=1), *period]
        wh.read("app_run", before).createOrReplaceTempView("ar")
        parts.append(spark.sql(sql("tools/scoreboard_risk")))
        used.append("risk")
    if _has_rows(wh, "job_summary", period):
        wh.read("job_summary", period).createOrReplaceTempView("js")
        parts.append(spark.sql(sql("tools/scoreboard_beacon")))
        used.append("beacon")
    if not parts:
        span = first.isoformat() if first == last else f"{first}..{last}"
        raise ValueError(f"no darshan_job, app_hour or job_summary data for {span} "
                         "in the warehouse")
    df = parts[0]
    for p in parts[1:]:
        df = df.unionByName(p)
    return df, used


@scoped
def scoreboard(wh: Warehouse, first: dt.date, last: dt.date, top: int = 10,
               ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(users, applications, file systems): top `top` by total bytes over [first, last].

    Each frame has COLUMNS; `df.attrs["source"]` names the source(s) used (see module doc).
    ValueError when the period has no data in any source.
    """
    from lassi.core.sqltext import sql

    if last < first:
        raise ValueError(f"--from {first} is after --to {last}")
    src, used = _input_view(wh, first, last)
    src.createOrReplaceTempView("sb")
    no_fs = "(no mount)" if used == ["darshan"] else "(no fs split)"
    top_rows = wh.spark.sql(sql("tools/scoreboard_top", top_n=int(top), no_fs=no_fs)).toPandas()
    source = " + ".join(f"{u} ({SOURCE_TABLES[u]})" for u in used)
    out = []
    for cat, _ in CATEGORIES:
        d = top_rows[top_rows.category == cat].sort_values("rank").reset_index(drop=True)
        for c in ("read_bytes", "write_bytes", "total_bytes", "jobs", "rank"):
            d[c] = d[c].astype("int64")
        for c in ("read", "write", "total"):
            d[f"{c}_gib"] = d[f"{c}_bytes"] / GIB
        d = d[COLUMNS]
        d.attrs["source"] = source
        d.attrs["category"] = cat
        out.append(d)
    return out[0], out[1], out[2]


def format_tables(tables: tuple[pd.DataFrame, ...], width: int = 40) -> str:
    """The three tables as text, darshan_scoreboard style (GiB)."""
    lines = []
    for (_, title), d in zip(CATEGORIES, tables, strict=True):
        if lines:
            lines.append("")
        lines.append(f"{'#':>3} {title:<{width}} {'Read(GiB)':>11} {'Write(GiB)':>11} "
                     f"{'Total(GiB)':>11} {'Jobs':>7}")
        lines.append("=" * (width + 47))
        if d.empty:
            lines.append("    (none)")
        for r in d.itertuples():
            name = str(r.name)
            if len(name) > width:
                name = name[: width // 2 - 1] + "..." + name[-(width - width // 2 - 2):]
            lines.append(f"{r.rank:>2}. {name:<{width}} {r.read_gib:>11.1f} {r.write_gib:>11.1f} "
                         f"{r.total_gib:>11.1f} {r.jobs:>7d}")
    return "\n".join(lines)


def write_outputs(tables: tuple[pd.DataFrame, ...], first: dt.date, last: dt.date,
                  out: Path) -> list[Path]:
    """CSV (all three tables, a `category` column) and PNG (three bar charts) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    stem = f"scoreboard_{first.isoformat()}_{last.isoformat()}"
    csv = out / f"{stem}.csv"
    frames = [d.assign(category=cat) for (cat, _), d in zip(CATEGORIES, tables, strict=True)]
    pd.concat(frames, ignore_index=True)[["category", *COLUMNS]].to_csv(csv, index=False)
    png = out / f"{stem}.png"
    _figure(tables, first, last, png)
    return [csv, png]


def _figure(tables: tuple[pd.DataFrame, ...], first: dt.date, last: dt.date,
            path: Path) -> None:
    from lassi.core.plotstyle import READ_COLOUR, WRITE_COLOUR, pyplot

    plt = pyplot()
    n = max([len(d) for d in tables] + [1])
    fig, axes = plt.subplots(1, 3, figsize=(16, 1.2 + 0.42 * n + 1.0))
    for ax, (_, title), d in zip(axes, CATEGORIES, tables, strict=True):
        names = [s if len(s) <= 28 else s[:12] + "..." + s[-13:] for s in d["name"].astype(str)]
        y = [n - 1 - i for i in range(len(d))]          # rank 1 on top in every panel
        ax.barh(y, d["read_gib"], color=READ_COLOUR, label="read")
        ax.barh(y, d["write_gib"], left=d["read_gib"], color=WRITE_COLOUR, label="write")
        for yi, tot, jobs in zip(y, d["total_gib"], d["jobs"], strict=True):
            ax.text(tot, yi, f" {tot:,.1f} ({jobs} job{'s' if jobs != 1 else ''})", va="center",
                    fontsize=8)
        ax.set_yticks(y, names)
        ax.set_title(title)
        ax.set_xlabel("I/O volume (GiB)")
        ax.set_ylim(-0.6, n - 0.4)
        if len(d):
            ax.set_xlim(0, float(d["total_gib"].max()) * 1.35 or 1)
        else:
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center")
        ax.legend(loc="lower right")
    span = first.isoformat() if first == last else f"{first} to {last}"
    source = tables[0].attrs.get("source", "")
    fig.suptitle(f"I/O scoreboard, {span}: top {n} by read + write volume\nsource: {source}",
                 fontweight="bold")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
