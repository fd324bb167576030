"""`lassi correlate`: TOKIO Fig. 9 — the Pearson correlation coefficient and its p-value of
job performance (default `job_metrics.perf_mibs`) against every other numeric column of
`job_metrics`, over the jobs of a period.

The coefficients are Spark aggregates (`corr`, one pass, sql/tools/correlate.sql) over the jobs
where both values are present; only the single aggregate row is collected. p-values are
two-sided, from r and n alone, as `scipy.stats.pearsonr` computes them: under no
correlation r follows a beta distribution on (-1, 1) with a = b = n/2 - 1, so
p = 2 * betaincc(a, a, (|r| + 1) / 2) — the same value as Student's t test with n - 2
degrees of freedom on t = r * sqrt((n - 2) / (1 - r^2)). Metrics with fewer than 3 pairs
or zero variance are reported with r and p n/a (NaN) and a note.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pandas as pd

from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days

NUMERIC = ("bigint", "int", "double", "float", "smallint")
COLUMNS = ["metric", "n", "r", "p", "note"]
# columns that are the performance itself for some jobs (perf_mibs = Darshan's
# agg_perf_by_slowest when the job has logs): not "metrics" to correlate it with
SAME_AS = {"perf_mibs": {"darshan_agg_perf_mibs"}, "darshan_agg_perf_mibs": {"perf_mibs"}}


def numeric_columns(table: str = "job_metrics") -> list[str]:
    """The table's numeric columns (declared schema), in schema order."""
    from lassi.core.schemas import schema_of

    return [f.name for f in schema_of(table).fields
            if f.name != "date" and f.dataType.simpleString() in NUMERIC]


def p_value(r: float, n: int) -> float:
    """Two-sided p-value of Pearson's r over n pairs (scipy.stats.pearsonr's formula)."""
    from scipy.special import betaincc

    if n < 3 or math.isnan(r):
        return math.nan
    a = n / 2 - 1
    return float(2 * betaincc(a, a, (min(abs(r), 1.0) + 1) / 2))


def _aggs(perf: str, metrics: list[str]) -> str:
    y = f"CAST(`{perf}` AS DOUBLE)"
    parts = []
    for i, m in enumerate(metrics):
        x = f"CAST(`{m}` AS DOUBLE)"
        parts += [f"COUNT(CASE WHEN {x} IS NOT NULL AND {y} IS NOT NULL THEN 1 END) AS n_{i}",
                  f"CORR({x}, {y}) AS r_{i}",
                  f"VAR_POP(CASE WHEN {y} IS NOT NULL THEN {x} END) AS vx_{i}",
                  f"VAR_POP(CASE WHEN {x} IS NOT NULL THEN {y} END) AS vy_{i}"]
    return ",\n       ".join(parts)


def _row(metric: str, n: int, r, vx, vy) -> dict:
    if n < 3:
        return {"metric": metric, "n": n, "r": math.nan, "p": math.nan,
                "note": "n/a: fewer than 3 jobs with both values"}
    if not vx or not vy or r is None or math.isnan(r):
        which = "the metric" if not vx else "the performance"
        return {"metric": metric, "n": n, "r": math.nan, "p": math.nan,
                "note": f"n/a: {which} does not vary"}
    r = max(-1.0, min(1.0, float(r)))
    return {"metric": metric, "n": n, "r": r, "p": p_value(r, n), "note": ""}


@scoped
def correlate(wh: Warehouse, first: dt.date | None = None, last: dt.date | None = None,
              perf: str = "perf_mibs") -> pd.DataFrame:
    """Pearson r and p of `perf` against every other numeric job_metrics column.

    Sorted by |r| (n/a last). attrs: perf, jobs (rows in the period), first, last.
    ValueError: unknown/non-numeric `perf`, or no job_metrics rows in the period.
    """
    from lassi.core.sqltext import sql

    cols = numeric_columns()
    if perf not in cols:
        raise ValueError(f"--perf {perf!r} is not a numeric job_metrics column; "
                         f"choose one of: {', '.join(cols)}")
    dates = None if first is None else days(first, last or first)
    jm = wh.read("job_metrics", dates)
    jm.createOrReplaceTempView("jm")
    metrics = [c for c in cols if c != perf and c not in SAME_AS.get(perf, set())]
    row = wh.spark.sql(sql("tools/correlate", aggs=_aggs(perf, metrics))).collect()[0]
    span = "every day" if first is None else (
        first.isoformat() if first == last else f"{first}..{last}")
    if not row["jobs"]:
        raise ValueError(f"no job_metrics rows for {span} in the warehouse "
                         "(run `lassi summarize-job` first)")
    out = pd.DataFrame([_row(m, int(row[f"n_{i}"]), row[f"r_{i}"], row[f"vx_{i}"],
                             row[f"vy_{i}"]) for i, m in enumerate(metrics)], columns=COLUMNS)
    out["abs_r"] = out["r"].abs()
    out = (out.sort_values(["abs_r", "metric"], ascending=[False, True], na_position="last")
           .drop(columns="abs_r").reset_index(drop=True))
    out.attrs.update(perf=perf, jobs=int(row["jobs"]), span=span, first=first, last=last)
    return out


def format_table(res: pd.DataFrame, threshold: float = 0.05) -> str:
    """The table as text; `*` marks p < threshold."""
    lines = [f"Pearson correlation of {res.attrs.get('perf')} with job metrics "
             f"({res.attrs.get('jobs')} jobs, {res.attrs.get('span')}); * p < {threshold:g}",
             f"{'metric':<24} {'n':>6} {'r':>8} {'p-value':>11}",
             "=" * 52]
    for t in res.itertuples():
        if math.isnan(t.r):
            lines.append(f"{t.metric:<24} {t.n:>6d} {'n/a':>8} {'n/a':>11}  {t.note}")
        else:
            star = " *" if t.p < threshold else ""
            lines.append(f"{t.metric:<24} {t.n:>6d} {t.r:>8.3f} {t.p:>11.3g}{star}")
    return "\n".join(lines)


def write_outputs(res: pd.DataFrame, out: Path, threshold: float = 0.05) -> list[Path]:
    """CSV (the table plus `significant`) and a PNG bar chart in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    span = str(res.attrs.get("span", "all")).replace("..", "_").replace(" ", "-")
    stem = f"correlate_{res.attrs.get('perf')}_{span}"
    csv = out / f"{stem}.csv"
    res.assign(significant=res["p"] < threshold).to_csv(csv, index=False)
    png = out / f"{stem}.png"
    _figure(res, threshold, png)
    return [csv, png]


def _figure(res: pd.DataFrame, threshold: float, path: Path) -> None:
    """Horizontal bars of r per metric, labelled with r and p; bold when p < threshold."""
    from lassi.core.plotstyle import pyplot

    plt = pyplot()
    n = max(len(res), 1)
    fig, ax = plt.subplots(figsize=(10, 1.6 + 0.32 * n))
    y = list(range(len(res)))[::-1]
    r = res["r"].fillna(0.0)
    colours = ["#d62728" if v < 0 else "#1f77b4" for v in r]
    ax.barh(y, r, color=colours, alpha=0.85)
    for yi, t in zip(y, res.itertuples(), strict=True):
        bold = not math.isnan(t.p) and t.p < threshold
        weight = "bold" if bold else "normal"
        text = "n/a" if math.isnan(t.r) else f"r={t.r:+.2f}  p={t.p:.2g}  n={t.n}"
        ax.text(1.04, yi, text, va="center", fontsize=8.5, fontweight=weight,
                transform=ax.get_yaxis_transform())
    ax.set_yticks(y, res["metric"])
    for label, t in zip(ax.get_yticklabels(), res.itertuples(), strict=True):
        if not math.isnan(t.p) and t.p < threshold:
            label.set_fontweight("bold")
    ax.set_xlim(-1, 1)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel(f"Pearson r with {res.attrs.get('perf')}")
    span = str(res.attrs.get("span")).replace("..", " to ")
    ax.set_title(f"Job performance vs metrics ({res.attrs.get('jobs')} jobs, {span})\n"
                 f"bold: p < {threshold:g}", fontweight="bold")
    fig.tight_layout()
    fig.subplots_adjust(right=0.74)
    fig.savefig(path, dpi=100)
    plt.close(fig)
