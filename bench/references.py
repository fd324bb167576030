"""Reference implementations of LASSi attribution + metrics, for `make bench`.

The same computation as the Spark stages `app_hour` and `fs_hour`
(sql/risk/steps/app_launch.sql, launch_cells.sql, app_hour_counts.sql, risk/fs_baseline.sql,
risk/app_hour.sql, risk/fs_hour.sql), read from the same warehouse Parquet files and written
as Parquet, once in DuckDB SQL and once in plain pandas:

* app_launch: ALPS/Slurm/Beacon rows are launches; a PBS job is one only when no finer row
  shares its job_id; finer rows take user/project/job name from their PBS job if missing.
* attribution: each launch exploded to node x 3-minute window for the windows of the day it
  overlaps, equi-joined to node_window on (node, window_start).
* app_hour counters per (app_id, fs, hour); fs_baseline mean and sample std per fs and op
  over the app_hour rows of the baseline period (today's rows plus any earlier app_hour
  partitions of the period in the warehouse; with one simulated day, just today's);
  r_x = (x - alpha*mu_x) / sigma_x (0 when sigma_x is 0 or undefined); risk_oss/risk_mds =
  sums of positive r_x over the site's op sets; read/write_kb_ops; fs_hour sums.

Usage (the benchmark runs each engine as its own timed process):

    python bench/references.py duckdb  --warehouse WH --date D --nodes N --out DIR
    python bench/references.py pandas  --warehouse WH --date D --nodes N --out DIR
    python bench/references.py compare --warehouse WH --date D --out DIR   # vs Spark's tables

An engine writes DIR/app_hour.parquet, DIR/fs_hour.parquet and DIR/fs_baseline.parquet and
prints one line `RESULT {json}` (compute seconds and row counts). `compare` checks them
against the Spark tables of the warehouse and prints "agree" or the differences.
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

OSS_COUNTERS = ["read_kb", "read_ops", "write_kb", "write_ops", "other"]
MDS_COUNTERS = ["open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "ren",
                "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "sdr", "cdr"]
COUNTERS = OSS_COUNTERS + MDS_COUNTERS
MAX_RUN_DAYS = 2          # as lassi.risk.metrics: launches may have started 2 days earlier
US = 1_000_000


@dataclass(frozen=True)
class Params:
    """Everything the computation needs from the site and the date."""

    date: dt.date
    window_s: int
    alpha: float
    oss_ops: tuple[str, ...]
    mds_ops: tuple[str, ...]
    baseline_days: int

    @property
    def day_start(self) -> int:
        d = self.date
        return int(dt.datetime(d.year, d.month, d.day, tzinfo=dt.timezone.utc).timestamp())

    @property
    def day_end(self) -> int:
        return self.day_start + 86400

    def earlier_days(self) -> list[dt.date]:
        """Baseline period days before the date (their app_hour rows join the baseline)."""
        return [self.date - dt.timedelta(days=k) for k in range(self.baseline_days - 1, 0, -1)]

    def launch_days(self) -> list[dt.date]:
        return [self.date - dt.timedelta(days=k) for k in range(MAX_RUN_DAYS, -1, -1)]


def load_params(site: str, nodes: int | None, date: dt.date) -> Params:
    from lassi.core.config import load_site  # YAML only; validation checks op names

    s = load_site(site, nodes=nodes)
    cfg = s.settings
    return Params(date, cfg.window_s, cfg.thresholds.alpha, cfg.risk.oss_ops,
                  cfg.risk.mds_ops, cfg.baseline_days)


def files(wh: str, table: str, dates: list[dt.date]) -> list[str]:
    """Parquet files of the table's date partitions that exist."""
    out: list[str] = []
    for d in dates:
        out += sorted(glob.glob(os.path.join(wh, table, f"date={d.isoformat()}", "*.parquet")))
    return out


def epoch_us(s: pd.Series) -> np.ndarray:
    """Timestamps (naive UTC or tz-aware) as int64 epoch microseconds; NaT -> INT64 min."""
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    return s.astype("datetime64[us]").to_numpy().astype("int64")


# ------------------------------------------------------------------------------------------
# DuckDB
# ------------------------------------------------------------------------------------------

def _sql_list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def run_duckdb(wh: str, p: Params, out: Path) -> dict:
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    w, d0, d1 = p.window_s, p.day_start, p.day_end
    runs_f, nw_f = files(wh, "app_run", p.launch_days()), files(wh, "node_window", [p.date])
    if not runs_f or not nw_f:
        raise SystemExit(f"error: no app_run or node_window for {p.date} in {wh}")
    con.execute(f"CREATE VIEW app_run_in AS SELECT * FROM read_parquet({_sql_list(runs_f)}, "
                "hive_partitioning = false, union_by_name = true)")
    # node_window with its window as epoch seconds (the join key)
    con.execute(f"CREATE VIEW nw AS SELECT *, epoch_us(window_start) // {US} AS slot "
                f"FROM read_parquet({_sql_list(nw_f)}, hive_partitioning = false)")
    con.execute("""
        CREATE TEMP TABLE app_launch AS
        WITH fine AS (SELECT * FROM app_run_in WHERE source <> 'pbs'),
        pbs AS (
          SELECT job_id, any_value("user") AS "user", any_value(project) AS project,
                 any_value(job_name) AS job_name
          FROM app_run_in WHERE source = 'pbs' GROUP BY job_id
        )
        SELECT f.app_id, f.job_id, COALESCE(f."user", p."user") AS "user", f.exe, f.command,
               f.nodes, f.start, f."end"
        FROM fine f LEFT JOIN pbs p ON f.job_id = p.job_id
        UNION ALL
        SELECT r.app_id, r.job_id, r."user", r.exe, r.command, r.nodes, r.start, r."end"
        FROM app_run_in r
        WHERE r.source = 'pbs' AND NOT EXISTS (SELECT 1 FROM fine f WHERE f.job_id = r.job_id)
    """)
    sums = ",\n".join(f"SUM(w.{c}) AS {c}" for c in COUNTERS)
    # cells: launch x node x window; same slot arithmetic as risk/steps/launch_cells.sql
    con.execute(f"""
        CREATE TEMP TABLE counts AS
        WITH runs AS (
          SELECT app_id, job_id, "user", exe, command, nodes,
                 CAST(len(nodes) AS INTEGER) AS n_nodes,
                 GREATEST((epoch_us(start) // {US}) // {w} * {w}, {d0}) AS first_slot,
                 LEAST(CAST(CEIL(COALESCE(epoch_us("end") / 1e6, {d1}) / {w}) AS BIGINT) * {w}
                       - {w}, {d1 - w}) AS last_slot
          FROM app_launch
          WHERE start IS NOT NULL AND nodes IS NOT NULL
            AND epoch_us(start) < {d1 * US}
            AND ("end" IS NULL OR epoch_us("end") > {d0 * US})
        ),
        run_nodes AS (
          SELECT app_id, job_id, "user", exe, command, n_nodes, first_slot, last_slot,
                 unnest(nodes) AS node
          FROM runs WHERE last_slot >= first_slot
        ),
        cells AS (
          SELECT app_id, job_id, "user", exe, command, n_nodes, node,
                 unnest(generate_series(first_slot, last_slot, {w})) AS slot
          FROM run_nodes
        )
        SELECT c.app_id, first(c.job_id) AS job_id, w.fs, c.slot // 3600 * 3600 AS hour_s,
               first(c."user") AS "user", first(c.exe) AS exe, first(c.command) AS command,
               first(c.n_nodes) AS n_nodes, COUNT(*) AS node_windows,
               {sums}
        FROM cells c JOIN nw w ON c.node = w.node AND c.slot = w.slot
        GROUP BY c.app_id, w.fs, c.slot // 3600 * 3600
    """)
    earlier = files(wh, "app_hour", p.earlier_days())
    cols = ", ".join(["fs", *COUNTERS])
    rows = f"SELECT {cols} FROM counts"
    if earlier:
        rows += f" UNION ALL SELECT {cols} FROM read_parquet({_sql_list(earlier)})"
    stats = ",\n".join(f"AVG(CAST({c} AS DOUBLE)) AS mu_{c}, "
                       f"STDDEV_SAMP(CAST({c} AS DOUBLE)) AS sd_{c}" for c in COUNTERS)
    con.execute(f"CREATE TEMP TABLE base AS SELECT fs, COUNT(*) AS n, {stats} "
                f"FROM ({rows}) GROUP BY fs")
    risk_cols = ",\n".join(
        f"CASE WHEN b.sd_{c} > 0 THEN (c.{c} - {p.alpha} * b.mu_{c}) / b.sd_{c} ELSE 0.0 END "
        f"AS r_{c}" for c in COUNTERS)

    def pos(ops) -> str:
        return " + ".join(f"GREATEST(r_{o}, 0.0)" for o in ops) or "0.0"

    con.execute(f"""
        CREATE TEMP TABLE app_hour AS
        WITH risk AS (SELECT c.*, {risk_cols} FROM counts c JOIN base b ON c.fs = b.fs)
        SELECT * EXCLUDE (hour_s), make_timestamp(hour_s * CAST({US} AS BIGINT)) AS hour,
               {pos(p.oss_ops)} AS risk_oss, {pos(p.mds_ops)} AS risk_mds,
               CASE WHEN read_kb > 0 THEN read_ops * 1024.0 / read_kb END AS read_kb_ops,
               CASE WHEN write_kb > 0 THEN write_ops * 1024.0 / write_kb END AS write_kb_ops
        FROM risk
    """)
    fs_sums = ",\n".join(f"SUM({c}) AS {c}" for c in COUNTERS)
    fs_risks = ",\n".join(f"SUM(GREATEST(r_{c}, 0.0)) AS r_{c}" for c in COUNTERS)
    con.execute(f"""
        CREATE TEMP TABLE fs_hour AS
        SELECT fs, hour, COUNT(DISTINCT app_id) AS n_apps, {fs_sums}, {fs_risks},
               SUM(risk_oss) AS risk_oss, SUM(risk_mds) AS risk_mds,
               CASE WHEN SUM(read_kb) > 0 THEN SUM(read_ops) * 1024.0 / SUM(read_kb) END
                 AS read_kb_ops,
               CASE WHEN SUM(write_kb) > 0 THEN SUM(write_ops) * 1024.0 / SUM(write_kb) END
                 AS write_kb_ops
        FROM app_hour GROUP BY fs, hour
    """)
    base_long = " UNION ALL ".join(
        f"SELECT fs, '{c}' AS op, mu_{c} AS mean, sd_{c} AS std, n FROM base" for c in COUNTERS)
    out.mkdir(parents=True, exist_ok=True)
    for name, q in [("app_hour", "SELECT * FROM app_hour"), ("fs_hour", "SELECT * FROM fs_hour"),
                    ("fs_baseline", base_long)]:
        target = str(out / f"{name}.parquet").replace("'", "''")
        con.execute(f"COPY ({q}) TO '{target}' (FORMAT parquet, COMPRESSION zstd)")
    n = {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
         for t in ("app_launch", "app_hour", "fs_hour")}
    return {"launches": n["app_launch"], "app_hour_rows": n["app_hour"],
            "fs_hour_rows": n["fs_hour"]}


# ------------------------------------------------------------------------------------------
# pandas
# ------------------------------------------------------------------------------------------

def _read(paths: list[str], columns: list[str] | None = None) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(f, columns=columns) for f in paths], ignore_index=True)


def app_launch_pd(ar: pd.DataFrame) -> pd.DataFrame:
    """sql/risk/steps/app_launch.sql in pandas (only the columns attribution needs)."""
    cols = ["app_id", "job_id", "user", "exe", "command", "nodes", "start", "end"]
    fine = ar[ar["source"] != "pbs"]
    pbs = ar[ar["source"] == "pbs"]
    info = pbs.groupby("job_id")[["user"]].first()          # first non-null, like FIRST(x, TRUE)
    f = fine.join(info, on="job_id", rsuffix="_pbs")
    f = f.assign(user=f["user"].fillna(f["user_pbs"]))
    lone = pbs[~pbs["job_id"].isin(set(fine["job_id"]))]
    return pd.concat([f[cols], lone[cols]], ignore_index=True)


def counts_pd(launch: pd.DataFrame, nw: pd.DataFrame, p: Params) -> tuple[pd.DataFrame, int]:
    """app_hour counters: launches exploded to node x window, equi-joined to node_window."""
    w, d0, d1 = p.window_s, p.day_start, p.day_end
    start, end = launch["start"], launch["end"]
    s_us, e_us = epoch_us(start), epoch_us(end)
    has_end = end.notna().to_numpy()
    keep = (start.notna().to_numpy() & launch["nodes"].notna().to_numpy() & (s_us < d1 * US)
            & (~has_end | (e_us > d0 * US)))
    r = launch[keep].reset_index(drop=True)
    s_us, e_us, has_end = s_us[keep], e_us[keep], has_end[keep]
    first = np.maximum((s_us // US) // w * w, d0)
    end_s = np.where(has_end, e_us / 1e6, float(d1))
    last = np.minimum(np.ceil(end_s / w).astype(np.int64) * w - w, d1 - w)
    ok = last >= first
    r, first, last = r[ok].reset_index(drop=True), first[ok], last[ok]

    # node codes shared with node_window; cells as flat numpy arrays
    node_index = pd.Index(nw["node"].unique())
    n_nodes = r["nodes"].map(len).to_numpy()
    run_of_pair = np.repeat(np.arange(len(r)), n_nodes)
    node_code = node_index.get_indexer(np.concatenate(r["nodes"].to_numpy()) if len(r) else [])
    n_slots = ((last - first) // w + 1)[run_of_pair]
    pair = np.repeat(np.arange(len(run_of_pair)), n_slots)
    offset = np.arange(len(pair)) - np.repeat(np.cumsum(n_slots) - n_slots, n_slots)
    app_code, app_ids = pd.factorize(r["app_id"])
    cell_run = run_of_pair[pair]
    cells = pd.DataFrame({
        "key": node_code[pair].astype(np.int64) * 10**10 + first[cell_run] + offset * w,
        "app": app_code[cell_run],
    })
    cells = cells[node_code[pair] >= 0]

    nw_key = node_index.get_indexer(nw["node"]).astype(np.int64) * 10**10 \
        + epoch_us(nw["window_start"]) // US
    right = nw[["fs", *COUNTERS]].assign(key=nw_key)
    j = cells.merge(right, on="key", how="inner")
    j["hour_s"] = (j["key"] % 10**10) // 3600 * 3600
    g = j.groupby(["app", "fs", "hour_s"], sort=False)
    out = g[COUNTERS].sum()
    out.insert(0, "node_windows", g.size())
    out = out.reset_index()
    attrs = r.assign(app=app_code, n_nodes=n_nodes.astype(np.int32)) \
        .drop_duplicates("app").set_index("app")[["job_id", "user", "exe", "command", "n_nodes"]]
    out = out.join(attrs, on="app")
    out.insert(0, "app_id", np.asarray(app_ids, dtype=object)[out["app"].to_numpy()])
    out["hour"] = pd.to_datetime(out["hour_s"] * US, unit="us")
    return out.drop(columns=["app", "hour_s"]), len(cells)


def risk_pd(counts: pd.DataFrame, earlier: pd.DataFrame | None, p: Params
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """fs_baseline (mean, sample std per fs and op) and app_hour with r_x, risks, ops metrics."""
    rows = counts[["fs", *COUNTERS]]
    if earlier is not None and len(earlier):
        rows = pd.concat([rows, earlier[["fs", *COUNTERS]]], ignore_index=True)
    rows = rows.astype({c: "float64" for c in COUNTERS})
    g = rows.groupby("fs")
    mu, sd = g[COUNTERS].mean(), g[COUNTERS].std(ddof=1)
    ah = counts.copy()
    for c in COUNTERS:
        m = ah["fs"].map(mu[c]).to_numpy()
        s = ah["fs"].map(sd[c]).to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            ah[f"r_{c}"] = np.where(s > 0, (ah[c].to_numpy() - p.alpha * m) / s, 0.0)
    ah["risk_oss"] = sum((ah[f"r_{o}"].clip(lower=0.0) for o in p.oss_ops), 0.0)
    ah["risk_mds"] = sum((ah[f"r_{o}"].clip(lower=0.0) for o in p.mds_ops), 0.0)
    for kind in ("read", "write"):
        kb, ops = ah[f"{kind}_kb"], ah[f"{kind}_ops"]
        ah[f"{kind}_kb_ops"] = (ops * 1024.0 / kb).where(kb > 0)
    base = pd.concat([pd.DataFrame({"fs": mu.index, "op": c, "mean": mu[c].to_numpy(),
                                    "std": sd[c].to_numpy(), "n": g.size().to_numpy()})
                      for c in COUNTERS], ignore_index=True)
    return ah, base


def fs_hour_pd(ah: pd.DataFrame) -> pd.DataFrame:
    pos = ah[["fs", "hour"]].copy()
    for c in COUNTERS:
        pos[f"r_{c}"] = ah[f"r_{c}"].clip(lower=0.0)
    g = ah.groupby(["fs", "hour"])
    out = g[[*COUNTERS, "risk_oss", "risk_mds"]].sum()
    out = out.join(pos.groupby(["fs", "hour"]).sum())
    out.insert(0, "n_apps", g["app_id"].nunique())
    for kind in ("read", "write"):
        kb, ops = out[f"{kind}_kb"], out[f"{kind}_ops"]
        out[f"{kind}_kb_ops"] = (ops * 1024.0 / kb).where(kb > 0)
    return out.reset_index()


def run_pandas(wh: str, p: Params, out: Path) -> dict:
    runs_f, nw_f = files(wh, "app_run", p.launch_days()), files(wh, "node_window", [p.date])
    if not runs_f or not nw_f:
        raise SystemExit(f"error: no app_run or node_window for {p.date} in {wh}")
    ar = _read(runs_f, ["app_id", "job_id", "user", "exe", "command", "nodes", "start", "end",
                        "source"])
    nw = _read(nw_f, ["node", "fs", "window_start", *COUNTERS])
    launch = app_launch_pd(ar)
    counts, n_cells = counts_pd(launch, nw, p)
    earlier_f = files(wh, "app_hour", p.earlier_days())
    earlier = _read(earlier_f, ["fs", *COUNTERS]) if earlier_f else None
    ah, base = risk_pd(counts, earlier, p)
    fh = fs_hour_pd(ah)
    out.mkdir(parents=True, exist_ok=True)
    ah.to_parquet(out / "app_hour.parquet", index=False)
    fh.to_parquet(out / "fs_hour.parquet", index=False)
    base.to_parquet(out / "fs_baseline.parquet", index=False)
    return {"launches": len(launch), "cells": n_cells, "app_hour_rows": len(ah),
            "fs_hour_rows": len(fh)}


# ------------------------------------------------------------------------------------------
# comparison with the Spark tables
# ------------------------------------------------------------------------------------------

APP_HOUR_VALUES = ["node_windows", *COUNTERS, *[f"r_{c}" for c in COUNTERS], "risk_oss",
                   "risk_mds", "read_kb_ops", "write_kb_ops"]
FS_HOUR_VALUES = ["n_apps", *COUNTERS, *[f"r_{c}" for c in COUNTERS], "risk_oss", "risk_mds",
                  "read_kb_ops", "write_kb_ops"]
SHOWN = ["risk_oss", "risk_mds", "write_kb"]
REL_TOL = 1e-9     # floating sums in another order differ in the last digits only


def _keyed(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    df = df.copy()
    if "hour" in df:
        df["hour"] = epoch_us(df["hour"])
    return df.set_index(keys).sort_index()


def diff_tables(spark: pd.DataFrame, ref: pd.DataFrame, keys: list[str],
                values: list[str]) -> dict:
    """Row counts, key mismatches, max abs diff per value column (inf where one is null)."""
    a, b = _keyed(spark[[*keys, *values]], keys), _keyed(ref[[*keys, *values]], keys)
    res = {"rows_spark": len(a), "rows_ref": len(b),
           "dup_keys": int(a.index.duplicated().sum() + b.index.duplicated().sum()),
           "only_spark": int((~a.index.isin(b.index)).sum()),
           "only_ref": int((~b.index.isin(a.index)).sum()), "max_abs": {}, "bad": []}
    a, b = a.align(b, join="inner")
    for c in values:
        x, y = a[c].astype("float64").to_numpy(), b[c].astype("float64").to_numpy()
        both_null = np.isnan(x) & np.isnan(y)
        d = np.where(both_null, 0.0, np.abs(x - y))
        d = np.where(np.isnan(d), np.inf, d)
        scale = np.maximum(1.0, np.maximum(np.nan_to_num(np.abs(x)), np.nan_to_num(np.abs(y))))
        res["max_abs"][c] = float(d.max()) if len(d) else 0.0
        if len(d) and (d > REL_TOL * scale).any():
            res["bad"].append(c)
    res["agree"] = (res["rows_spark"] == res["rows_ref"] and not res["dup_keys"]
                    and not res["only_spark"] and not res["only_ref"] and not res["bad"])
    return res


def compare(wh: str, date: dt.date, out: Path) -> dict:
    """Compare the reference outputs in `out` with the Spark app_hour / fs_hour of `date`."""
    res = {}
    for table, keys, values in [("app_hour", ["app_id", "fs", "hour"], APP_HOUR_VALUES),
                                ("fs_hour", ["fs", "hour"], FS_HOUR_VALUES)]:
        sp = files(wh, table, [date])
        if not sp:
            res[table] = {"agree": False, "error": f"no Spark {table} for {date}"}
            continue
        res[table] = diff_tables(_read(sp), pd.read_parquet(out / f"{table}.parquet"),
                                 keys, values)
    res["agree"] = all(r["agree"] for r in res.values())
    return res


def describe(res: dict) -> str:
    """One line per table: 'agree' or what differs."""
    lines = []
    for table in ("app_hour", "fs_hour"):
        r = res[table]
        if "error" in r:
            lines.append(f"{table}: {r['error']}")
            continue
        shown = " ".join(f"{c}={r['max_abs'][c]:.3g}" for c in SHOWN)
        worst = max(r["max_abs"], key=lambda c: r["max_abs"][c])
        head = "agree" if r["agree"] else "DIFFER"
        detail = (f"rows {r['rows_spark']} vs {r['rows_ref']}; max abs diff {shown} "
                  f"(largest: {worst}={r['max_abs'][worst]:.3g})")
        if not r["agree"]:
            detail += (f"; keys only in Spark {r['only_spark']}, only in ref {r['only_ref']}, "
                       f"duplicate keys {r['dup_keys']}; columns over tolerance {r['bad']}")
        lines.append(f"{table}: {head} — {detail}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("engine", choices=["duckdb", "pandas", "compare"])
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--date", required=True, type=dt.date.fromisoformat)
    ap.add_argument("--site", default="archer")
    ap.add_argument("--nodes", type=int, default=None)
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args()
    if a.engine == "compare":
        res = compare(a.warehouse, a.date, a.out)
        print(describe(res))
        print("RESULT " + json.dumps(res))
        return 0
    p = load_params(a.site, a.nodes, a.date)
    t0 = time.perf_counter()
    fn = run_duckdb if a.engine == "duckdb" else run_pandas
    res = fn(a.warehouse, p, a.out)
    res["compute_s"] = round(time.perf_counter() - t0, 2)
    print(f"{a.engine}: {res}", file=sys.stderr)
    print("RESULT " + json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
