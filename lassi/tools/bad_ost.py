"""Which Lustre OST slows a job down? (TOKIO's `darshan_bad_ost`, same method and answers.)

Per file of the Darshan logs (POSIX module, files the LUSTRE module saw): performance =
all ranks' bytes read + written / the longest read + write + meta time of any one rank.
Each file gives a row with, per OST k, 1/stripe-count when the file is striped on k, else 0.
Pearson's r between performance and each OST column (with its two-sided p-value) says
whether files on that OST were slower (r < 0) or faster; an OST is flagged when
p < p_threshold and |r| > c_threshold (pytokio defaults 0.05 and 0.0).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

P_THRESHOLD = 0.05     # pytokio darshan_bad_ost -p default
C_THRESHOLD = 0.0      # -c default
C_WARNING = 0.5        # -C default: the table marks |r| above this
COLUMNS = ["ost_index", "ost_name", "coefficient", "p_value", "n_files", "flagged"]


def pearson(x: Iterable[float], y: Iterable[float]) -> tuple[float, float]:
    """Pearson's r and its two-sided p-value (scipy.stats.pearsonr)."""
    from scipy.stats import pearsonr

    r = pearsonr(list(x), list(y))
    return float(r.statistic), float(r.pvalue)


def file_performance(files: pd.DataFrame) -> pd.DataFrame:
    """One row per (log, file) of POSIX file rows (`darshan_file` columns): `performance`
    (bytes/s by the slowest rank) and `ost_ids` (the union over its LUSTRE records).

    Files without LUSTRE data or without any I/O time (no performance to estimate) are
    left out."""
    f = files[(files["module"] == "POSIX")].copy()
    f = f[f["ost_ids"].map(lambda o: o is not None and len(o) > 0)]
    if f.empty:
        return pd.DataFrame(columns=["log_path", "file_name", "performance", "ost_ids", "mount"])
    f["bytes"] = f["bytes_read"] + f["bytes_written"]
    f["io_time"] = f["read_time_s"] + f["write_time_s"] + f["meta_time_s"]
    rows = []
    for (log, name), g in f.groupby(["log_path", "file_name"], sort=False, dropna=False):
        slowest = float(g["io_time"].max())
        if not slowest > 0:
            continue
        osts = sorted({int(o) for lst in g["ost_ids"] for o in lst})
        rows.append((log, name, float(g["bytes"].sum()) / slowest, osts, g["mount"].iat[0]))
    return pd.DataFrame(rows, columns=["log_path", "file_name", "performance", "ost_ids",
                                       "mount"])


def ost_matrix(perf: pd.DataFrame) -> pd.DataFrame:
    """Per file: `performance` and, per OST k (column k), the share 1/n of a file on n OSTs."""
    import numpy as np

    osts = sorted({o for lst in perf["ost_ids"] for o in lst})
    col = {o: j for j, o in enumerate(osts)}
    share = np.zeros((len(perf), len(osts)))
    for i, lst in enumerate(perf["ost_ids"]):
        share[i, [col[o] for o in lst]] = 1.0 / len(lst)
    m = pd.DataFrame(share, index=perf.index, columns=osts)
    m.insert(0, "performance", perf["performance"])
    return m


def correlate(perf: pd.DataFrame, p_threshold: float = P_THRESHOLD,
              c_threshold: float = C_THRESHOLD, fs: str | None = None) -> pd.DataFrame:
    """Every OST seen: Pearson r and p of file performance against that OST's column
    (NaN when either is constant, as pytokio skips them) and `flagged`."""
    m = ost_matrix(perf)
    osts = [c for c in m.columns if c != "performance"]
    constant_perf = m["performance"].nunique() <= 1
    rows = []
    for k in osts:
        r = p = math.nan
        if not constant_perf and m[k].nunique() > 1:
            r, p = pearson(m["performance"], m[k])
        flagged = bool(p < p_threshold and abs(r) > c_threshold)   # False for NaN
        rows.append((int(k), ost_name(k, fs), r, p, int((m[k] > 0).sum()), flagged))
    return pd.DataFrame(rows, columns=COLUMNS)


def ost_name(index: int, fs: str | None) -> str:
    """`<fs>-OST000e` when the file system is known, else pytokio's `OST#14`."""
    return f"{fs}-OST{index:04x}" if fs else f"OST#{index}"


def fs_from_site_json(path: str | Path, mounts: Iterable[str]) -> str | None:
    """The Lustre name (e.g. snx11025) of the files' mount points from a pytokio site.json
    (`mount_to_fsname` regexes, `fsname_to_backend_name`); None unless exactly one."""
    import json

    cfg = json.loads(Path(path).read_text())
    names = set()
    for mount in mounts:
        hits = [fs for rx, fs in cfg.get("mount_to_fsname", {}).items() if re.match(rx, mount)]
        if hits:
            names.add(cfg.get("fsname_to_backend_name", {}).get(hits[0], hits[0]))
    return names.pop() if len(names) == 1 else None


def bad_osts(logs: list[str | Path], p_threshold: float = P_THRESHOLD,
             c_threshold: float = C_THRESHOLD, fs: str | None = None,
             site_json: str | Path | None = None) -> pd.DataFrame:
    """Library API: read the logs (unreadable ones and those without POSIX and LUSTRE data
    are skipped with a warning on stderr) and correlate; one row per OST, sorted by r."""
    from lassi.core.schemas import schema_of
    from lassi.ingest.darshan import parse_logs

    jobs, files, qs, _ = parse_logs(dict.fromkeys(str(p) for p in logs))   # once each
    for q in qs:
        print(f"warning: {q.file}: {q.reason}", file=sys.stderr)
    for j in jobs:
        if not {"POSIX", "LUSTRE"} <= set(j["modules"]):
            print(f"warning: {j['log_path']}: no POSIX and LUSTRE module data", file=sys.stderr)
    cols = [f.name for f in schema_of("darshan_file").fields]
    perf = file_performance(pd.DataFrame(files, columns=cols))
    if site_json and not fs:
        fs = fs_from_site_json(site_json, perf["mount"].dropna().unique())
    out = correlate(perf, p_threshold, c_threshold, fs)
    return out.sort_values(["coefficient", "ost_index"], na_position="last").reset_index(drop=True)


def format_table(df: pd.DataFrame, c_warning: float = C_WARNING) -> str:
    """The flagged OSTs as a readable table (pytokio's layout plus the OST index)."""
    lines = [f"{'OST':>5} {'OST Name':<18} {'Correlation':>12} {'P-Value':>10}"]
    for r in df[df["flagged"]].itertuples():
        warn = ""
        if abs(r.coefficient) > c_warning:
            warn = (" <-- this OST looks unhealthy" if r.coefficient < 0
                    else " <-- this OST is running unusually quickly")
        lines.append(f"{r.ost_index:>5} {r.ost_name:<18} {r.coefficient:>12.3f} "
                     f"{r.p_value:>10.4g}{warn}")
    if len(lines) == 1:
        lines.append("(no OST correlates with file performance at these thresholds)")
    return "\n".join(lines)


def to_json(df: pd.DataFrame) -> list[dict]:
    """The flagged OSTs as JSON-ready objects."""
    return [{"ost_index": int(r.ost_index), "ost_name": r.ost_name,
             "coefficient": float(r.coefficient), "p_value": float(r.p_value)}
            for r in df[df["flagged"]].itertuples()]
