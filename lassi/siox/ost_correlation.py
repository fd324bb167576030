"""Which Lustre OST slows a job's files down? TOKIO's `darshan_bad_ost` method in pure
pandas, here because SIOX's `job_diagnosis` runs it on each job's own Darshan log (the
`lassi bad-ost` tool runs it on any logs).

Per file of the Darshan logs (POSIX module, files the LUSTRE module saw): performance =
all ranks' bytes read + written / the longest read + write + meta time of any one rank.
Each file gives a row with, per OST k, 1/stripe-count when the file is striped on k, else 0.
Pearson's r between performance and each OST column (with its two-sided p-value) says
whether files on that OST were slower (r < 0) or faster; an OST is flagged when
p < p_threshold and |r| > c_threshold (pytokio defaults 0.05 and 0.0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

P_THRESHOLD = 0.05     # pytokio darshan_bad_ost -p default
C_THRESHOLD = 0.0      # -c default
C_WARNING = 0.5        # -C default: |r| above this marks an unhealthy (r < 0) OST
COLUMNS = ["ost_index", "ost_name", "coefficient", "p_value", "n_files", "flagged"]


def pearson(x: Iterable[float], y: Iterable[float]) -> tuple[float, float]:
    """Pearson's r and its two-sided p-value (scipy.stats.pearsonr)."""
    from scipy.stats import pearsonr

    r = pearsonr(list(x), list(y))
    return float(r.statistic), float(r.pvalue)


def point_biserial(n_on: int, sd_on: float, n: int, sdd: float) -> tuple[float, float]:
    """Pearson's r (and two-sided p) between values x and a 0/1 indicator, from sums of the
    centred values d = x - mean(x): sd_on over the n_on values with the indicator, sdd (the
    sum of d * d) over all n. What scipy's pearsonr gives on the same vectors."""
    from scipy.stats import t as student

    n_off = n - n_on
    if n < 3 or n_on == 0 or n_off == 0 or not sdd > 0:
        return math.nan, math.nan
    r = max(-1.0, min(1.0, sd_on * math.sqrt(n / (n_on * n_off * sdd))))
    if abs(r) == 1.0:
        return r, 0.0
    tstat = r * math.sqrt((n - 2) / (1 - r * r))
    return r, float(2 * student.sf(abs(tstat), n - 2))


def file_performance(files: pd.DataFrame) -> pd.DataFrame:
    """One row per (log, file) of POSIX file rows (`darshan_file` columns): `performance`
    (bytes/s by the slowest rank) and `ost_ids` (the union over its LUSTRE records).

    Files without LUSTRE data or without any I/O time (no performance to estimate) are
    left out."""
    f = files[(files["module"] == "POSIX")].copy()
    f = f[f["ost_ids"].map(lambda o: o is not None and len(o) > 0)]
    if f.empty:
        return pd.DataFrame(columns=["log_path", "file_name", "performance", "ost_ids", "mount",
                                     "io_time"])
    f["bytes"] = f["bytes_read"] + f["bytes_written"]
    f["io_time"] = f["read_time_s"] + f["write_time_s"] + f["meta_time_s"]
    rows = []
    for (log, name), g in f.groupby(["log_path", "file_name"], sort=False, dropna=False):
        slowest = float(g["io_time"].max())
        if not slowest > 0:
            continue
        osts = sorted({int(o) for lst in g["ost_ids"] for o in lst})
        rows.append((log, name, float(g["bytes"].sum()) / slowest, osts, g["mount"].iat[0],
                     slowest))
    return pd.DataFrame(rows, columns=["log_path", "file_name", "performance", "ost_ids",
                                       "mount", "io_time"])


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


SLOW_OST_COLUMNS = ["ost_index", "ost_name", "coefficient", "p_value", "n_files",
                    "n_total", "slowest_on_s", "slowest_off_s"]


def slow_osts(files: pd.DataFrame, fs: str | None, p_threshold: float = P_THRESHOLD,
              c_warning: float = C_WARNING) -> pd.DataFrame:
    """The OSTs whose files were slower (r < -c_warning, p < p_threshold) among one file
    system's POSIX `darshan_file` rows, with the longest I/O time of a file on the OST
    (`slowest_on_s`) and of any file not on it (`slowest_off_s`): what the job's I/O would
    have waited without that OST, when its files are written in parallel."""
    perf = file_performance(files)
    if len(perf) < 3:
        return pd.DataFrame(columns=SLOW_OST_COLUMNS)
    stats = correlate(perf, p_threshold, 0.0, fs)
    bad = stats[stats["flagged"] & (stats["coefficient"] < -c_warning)]
    rows = []
    for r in bad.itertuples():
        on = perf["ost_ids"].map(lambda o, k=r.ost_index: k in o)
        off = perf.loc[~on, "io_time"]
        rows.append((r.ost_index, r.ost_name, r.coefficient, r.p_value, r.n_files, len(perf),
                     float(perf.loc[on, "io_time"].max()),
                     float(off.max()) if len(off) else math.nan))
    return pd.DataFrame(rows, columns=SLOW_OST_COLUMNS)
