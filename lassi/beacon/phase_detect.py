"""Beacon's I/O phases and two-stage abnormal-phase detection, in plain numpy/pandas.

Spark-free so the stage (`lassi/io_phase.py`) runs it per group with `applyInPandas` and the
tests call it on hand-made series.

Phases (§3.3.1, after IOSI): the job's per-second bandwidth is denoised by a discrete
wavelet transform (detail coefficients thresholded, then reconstructed); a phase is a
maximal run of seconds whose denoised bandwidth exceeds `phase_fraction` x the job's peak,
runs separated by at most `merge_gap_s` idle seconds are merged, and each burst is widened
by at most 2**level seconds over adjacent non-zero seconds of the original series (the
wavelet's blur), then trimmed to its first and last non-zero original second. Start, end and
bytes come from the original series, so a phase's bytes are exact.

Detection (§4.3): per application, stage 1 groups its phases into categories by I/O mode,
kind and log10 volume (DBSCAN per (mode, kind) on log10 bytes); stage 2, per category, the
performance vector of each phase (Algorithm 1: fraction of the phase's seconds in each of N
equal throughput intervals between the category's TH_min and TH_max, the smallest and
largest per-second throughput of its phases) is clustered by DBSCAN. The paper calls the
noise points abnormal; here a phase is abnormal when DBSCAN leaves it out of the category's
main cluster AND its vector says it ran mostly slower: its level (fractions x interval
centres) at most the category's median level / thresholds.slowdown_factor, or at most the
best level of the same job's phases of the category / slowdown_factor (`outliers`: a run's
solo speed depends on its placement, up to 2x apart between runs of one app on
TaihuLight-like striping, so the app median alone misses a slowed phase of a fast-placed
run; the job's own phases are the closest normal reference). The main cluster is the
largest one whose median level is not that much below the category's median
(`main_cluster`): a slow component lasting hours makes the app's slowed runs of those
hours one tight cluster, larger than any single cluster of its normal runs, which spread
over neighbouring throughput intervals. Noise alone fails on a real history: slow phases
recur (the same contention or slow component hits several runs), form small clusters of
their own and stop being noise; and with N = 20 intervals normal phases a little faster
or slower than usual fall into neighbouring intervals and become noise. A category with
fewer than `min_samples` phases has no history to judge against: none of its phases is
abnormal (and neither are stage-1 noise phases). The one-stage baseline (IOSI) clusters
(log10 duration, log10 bytes) of the application's phases; noise = abnormal.

History per application AND job scale (`detect` with an `n_nodes` column): an admin
compares a 1024-node run with the app's other runs at about 1024 nodes, not with its
64-node test runs (volume and bandwidth both change with the node count). Scale classes
are powers of two (the nearest one in log2: 96-181 nodes are the 128 class), the way
sites size jobs. Beacon (§3.3.1, §4.3) groups by application and shows WRF at one scale
but says nothing on sparse scales, so the fallback is ours: a class with fewer than
`scale_min_phases` phases (conf dbscan_stage1.scale_min_phases) is judged against its
neighbouring classes too (half and twice the scale), and if those are still too few,
against the app's whole history (as if scale were ignored). Both methods, two-stage and
the one-stage baseline, use the same groups.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pywt
from sklearn.cluster import DBSCAN

from lassi.core.settings import Wavelet

KIND_FRACTION = 0.9     # read (write) phase: at least this fraction of its bytes read (written)


def _wavelet(conf: Wavelet | Mapping | None) -> Wavelet:
    """The site's `Settings.wavelet`, or a plain mapping of some of its fields over the
    defaults (hand-made tests)."""
    return conf if isinstance(conf, Wavelet) else dataclasses.replace(Wavelet(), **(conf or {}))


def denoise(bw: np.ndarray, name: str = "haar", level: int = 3, threshold: float = 0.1,
            mode: str = "soft") -> np.ndarray:
    """DWT denoising: detail coefficients of level j (1 = finest) below
    threshold x peak x 2**(j/2) are shrunk (soft) or zeroed (hard); then reconstruction.

    The 2**(j/2) makes the threshold the same in bandwidth units at every level (an
    orthonormal wavelet's level-j coefficient of a constant signal h is about h 2**(j/2)).
    """
    bw = np.asarray(bw, dtype=float)
    n = len(bw)
    peak = float(np.max(np.abs(bw))) if n else 0.0
    if n < 2 or peak <= 0:
        return bw.copy()
    w = pywt.Wavelet(name)
    lev = max(0, min(level, pywt.dwt_max_level(n, w.dec_len)))
    if lev == 0:
        return bw.copy()
    coeffs = pywt.wavedec(bw, w, level=lev, mode="periodization" if n % 2 ** lev == 0
                          else "symmetric")
    out = [coeffs[0]]
    # coeffs[1] is the coarsest detail (level lev), coeffs[-1] the finest (level 1)
    for k, c in enumerate(coeffs[1:]):
        j = lev - k
        out.append(pywt.threshold(c, threshold * peak * 2 ** (j / 2), mode=mode))
    mode_ext = "periodization" if n % 2 ** lev == 0 else "symmetric"
    return pywt.waverec(out, w, mode=mode_ext)[:n]


def _runs(mask: np.ndarray) -> list[list[int]]:
    """[start, end) index pairs of the maximal True runs of `mask`."""
    if not mask.any():
        return []
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return [[int(a), int(b)] for a, b in zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1),
                                               strict=True)]


def find_bursts(bw: np.ndarray,
                conf: Wavelet | Mapping | None = None) -> list[tuple[int, int]]:
    """[start, end) second indexes of the phases of one per-second bandwidth series."""
    c = _wavelet(conf)
    bw = np.asarray(bw, dtype=float)
    if len(bw) == 0 or bw.max() <= 0:
        return []
    den = denoise(bw, c.name, c.level, c.threshold, c.mode)
    runs = _runs(den > c.phase_fraction * bw.max())
    blur = 2 ** c.level
    n = len(bw)
    out: list[list[int]] = []
    for a, b in runs:
        # widen over the wavelet's blur where the original has I/O, then trim to it
        lo, hi = max(0, a - blur), min(n, b + blur)
        while a > lo and bw[a - 1] > 0:
            a -= 1
        while b < hi and bw[b] > 0:
            b += 1
        nz = np.flatnonzero(bw[a:b] > 0)
        if len(nz) == 0:
            continue
        a, b = a + int(nz[0]), a + int(nz[-1]) + 1
        if out and a - out[-1][1] <= c.merge_gap_s:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def phase_kind(read_bytes: float, write_bytes: float) -> str:
    total = read_bytes + write_bytes
    if total > 0 and read_bytes >= KIND_FRACTION * total:
        return "read"
    if total > 0 and write_bytes >= KIND_FRACTION * total:
        return "write"
    return "mixed"


def extract_phases(sec: Sequence[int], read_bytes: Sequence[float],
                   write_bytes: Sequence[float], start_s: int | None = None,
                   end_s: int | None = None,
                   conf: Wavelet | Mapping | None = None) -> list[dict]:
    """Phases of one job from its per-second rows (epoch second, bytes read, written).

    Seconds without a row between `start_s` and `end_s` (the job's span; default: the
    rows' span) count as idle. Each phase: phase_no (0-based), start_s, end_s (exclusive,
    epoch seconds), bytes, read_bytes, write_bytes, duration_s, mean_bw (bytes/duration),
    peak_bw (largest second), kind and bw_series (bytes of each of its seconds).
    """
    sec = np.asarray(sec, dtype=np.int64)
    if len(sec) == 0:
        return []
    t0 = int(min(sec.min(), start_s if start_s is not None else sec.min()))
    t1 = int(max(sec.max() + 1, end_s if end_s is not None else sec.max() + 1))
    r = np.zeros(t1 - t0)
    w = np.zeros(t1 - t0)
    np.add.at(r, sec - t0, np.asarray(read_bytes, dtype=float))
    np.add.at(w, sec - t0, np.asarray(write_bytes, dtype=float))
    bw = r + w
    out = []
    for k, (a, b) in enumerate(find_bursts(bw, conf)):
        rb, wb = float(r[a:b].sum()), float(w[a:b].sum())
        dur = float(b - a)
        out.append({"phase_no": k, "start_s": t0 + a, "end_s": t0 + b, "bytes": rb + wb,
                    "read_bytes": rb, "write_bytes": wb, "duration_s": dur,
                    "mean_bw": (rb + wb) / dur, "peak_bw": float(bw[a:b].max()),
                    "kind": phase_kind(rb, wb), "bw_series": bw[a:b].tolist()})
    return out


def perf_vector(series: Sequence[float], th_min: float, th_max: float, n: int) -> list[float]:
    """Algorithm 1: the fraction of the phase's seconds whose throughput falls in each of `n`
    equal intervals of [th_min, th_max] (interval k = [th_min + kR, th_min + (k+1)R), the
    last one closed; R = (th_max - th_min)/n; values outside are clipped to the ends)."""
    s = np.asarray(series, dtype=float)
    if len(s) == 0:
        return [0.0] * n
    width = (th_max - th_min) / n
    if width <= 0:
        idx = np.full(len(s), n - 1)
    else:
        idx = np.clip(np.floor((s - th_min) / width).astype(int), 0, n - 1)
    return (np.bincount(idx, minlength=n) / len(s)).tolist()


def _dbscan(x: np.ndarray, eps: float, min_samples: int) -> np.ndarray:
    return DBSCAN(eps=eps, min_samples=min_samples).fit_predict(x)


def vector_level(vecs: np.ndarray, th_min: float, th_max: float) -> np.ndarray:
    """The throughput a performance vector stands for: sum of its fractions x the centres
    of their intervals."""
    n = vecs.shape[1]
    width = (th_max - th_min) / n
    return vecs @ (th_min + width * (np.arange(n) + 0.5))


def main_cluster(labels: np.ndarray, level: np.ndarray | None = None,
                 slowdown_factor: float = 1.5) -> int | None:
    """The largest stage-2 cluster (the category's usual performance); None if all noise.

    With `level`, a cluster whose median level is at most the category's median level /
    slowdown_factor cannot be the usual performance however large it is: a slow component
    that lasts for hours makes the app's slowed runs of those hours the largest cluster.
    """
    labs, counts = np.unique(labels[labels != -1], return_counts=True)
    if level is not None and len(labs):
        med = float(np.median(level))
        ok = np.array([np.median(level[labels == lab]) * slowdown_factor > med for lab in labs])
        if ok.any():
            labs, counts = labs[ok], counts[ok]
    return int(labs[np.argmax(counts)]) if len(labs) else None


def outliers(labels: np.ndarray, level: np.ndarray, slowdown_factor: float,
             job_ids: Sequence[str] | None = None,
             durations: Sequence[float] | None = None) -> np.ndarray:
    """Stage-2 verdict (mask): a phase is abnormal when DBSCAN leaves it out of the main
    cluster (noise, or a smaller cluster of recurring slow phases) and its vector's level
    is at most 1 / slowdown_factor of a normal reference (mostly slower, as §3.3.1
    describes abnormal phases; a phase off the main cluster by being faster is not).

    References: the category's median level; and, with `job_ids`, the best level of the
    same job's phases in the category: a run's other phases show what its own placement
    (OSTs, forwarding nodes) delivers, so a phase slowed inside a fast-placed run is caught
    although it is no slower than the app's median. Against that reference, a phase of
    `durations` d seconds must be slower by the factor even with one second less (d - 1):
    per-second series put up to a second of error on a phase's length, which on a 2-3 s
    phase alone looks like a 1.5x slowdown next to its sibling.
    """
    main = main_cluster(labels, level, slowdown_factor)
    off = labels != main
    slow = level * slowdown_factor
    bad = off & (slow <= float(np.median(level)))
    if job_ids is not None:
        best = pd.Series(level).groupby(np.asarray(job_ids)).transform("max").to_numpy()
        if durations is not None:
            d = np.asarray(durations, dtype=float)
            slow = slow * d / np.maximum(d - 1.0, 0.5)
        bad |= off & (slow <= best)
    return bad


def scale_bucket(n_nodes: float | None) -> int | None:
    """The job-scale class of a node count: the nearest power of two, as log2 (96 and 128
    nodes are class 7, 90 is class 6); None when unknown."""
    if n_nodes is None or not np.isfinite(n_nodes) or n_nodes <= 0:
        return None
    return int(np.round(np.log2(float(n_nodes))))


def scale_groups(buckets: Sequence[int | None], min_phases: int) -> list[tuple[np.ndarray,
                                                                              np.ndarray]]:
    """How one application's phases are judged by scale: (judged, pool) index pairs, each
    scale class's phases judged against a pool of the app's history.

    A class with at least `min_phases` phases is its own pool; a smaller one is pooled
    with its neighbouring classes (half and twice the scale), and if that is still smaller
    than `min_phases`, with the app's phases at every scale. Unknown scales (None) form
    one class like the others but only fall back to the whole app.
    """
    b = pd.Series(list(buckets), dtype=object)
    out = []
    every = np.arange(len(b))
    for key in pd.unique(b):
        judged = np.flatnonzero(b.isna().to_numpy() if key is None else (b == key).to_numpy())
        if len(judged) >= min_phases:
            out.append((judged, judged))
            continue
        pool = every
        if key is not None:
            near = np.flatnonzero(b.map(lambda x, k=key: x is not None and abs(x - k) <= 1)
                                  .to_numpy(dtype=bool))
            if len(near) >= min_phases:
                pool = near
        out.append((judged, pool))
    return out


def detect(phases: pd.DataFrame, n_intervals: int, stage1: dict, stage2: dict,
           one_stage: dict | None = None, slowdown_factor: float = 1.5,
           scale_min_phases: int | None = None) -> pd.DataFrame:
    """Two-stage and one-stage detection over one application's phases (its history),
    per job scale.

    With an `n_nodes` column, the phases are judged per scale class (`scale_bucket`) as
    `scale_groups` pools them (`scale_min_phases`, default 0: every class alone);
    without it, all together. Category ids are unique within the app. See
    `detect_group` for the columns.
    """
    df = phases.reset_index(drop=True)
    if "n_nodes" not in df.columns or len(df) == 0:
        return detect_group(df, n_intervals, stage1, stage2, one_stage, slowdown_factor)
    buckets = [scale_bucket(x) for x in pd.to_numeric(df["n_nodes"], errors="coerce")]
    parts, offset = [], 0
    for judged, pool in scale_groups(buckets, int(scale_min_phases or 0)):
        d = detect_group(df.iloc[pool], n_intervals, stage1, stage2, one_stage,
                         slowdown_factor)
        d.index = pool
        d = d.loc[judged]
        cat = d["category"].to_numpy()
        d["category"] = np.where(cat >= 0, cat + offset, -1)
        offset += int(cat.max()) + 1 if (cat >= 0).any() else 0
        parts.append(d)
    return pd.concat(parts).sort_index()


def detect_group(phases: pd.DataFrame, n_intervals: int, stage1: dict, stage2: dict,
                 one_stage: dict | None = None, slowdown_factor: float = 1.5) -> pd.DataFrame:
    """Two-stage and one-stage detection over one group of phases (an app at one scale).

    `phases` needs columns io_mode, kind, bytes, duration_s, mean_bw and bw_series. Returns
    a copy with category (stage-1 cluster id within the app, -1 noise), perf_vector,
    is_abnormal (stage 2: `outliers`), is_abnormal_1stage (DBSCAN noise on log10
    duration and volume with `one_stage`, default `stage1`'s eps and min_samples) and
    slowdown_est (median mean_bw of the category's main-cluster phases / the phase's
    mean_bw, for abnormal phases; else null).
    """
    df = phases.reset_index(drop=True).copy()
    n = len(df)
    one_stage = one_stage or stage1
    df["category"] = -1
    df["perf_vector"] = [None] * n
    df["is_abnormal"] = False
    df["is_abnormal_1stage"] = False
    df["slowdown_est"] = np.nan
    if n == 0:
        return df
    logv = np.log10(np.maximum(df["bytes"].to_numpy(dtype=float), 1.0))
    # stage 1: categories by (I/O mode, kind) and volume
    next_cat = 0
    for _, idx in df.groupby([df["io_mode"].fillna(""), df["kind"]]).groups.items():
        idx = np.asarray(idx)
        if len(idx) < stage1["min_samples"]:
            continue
        labels = _dbscan(logv[idx].reshape(-1, 1), stage1["eps"], stage1["min_samples"])
        for lab in sorted(set(labels) - {-1}):
            df.loc[idx[labels == lab], "category"] = next_cat
            next_cat += 1
    # stage 2: performance vectors per category
    for cat in range(next_cat):
        idx = np.flatnonzero(df["category"].to_numpy() == cat)
        series = [np.asarray(s, dtype=float) for s in df.loc[idx, "bw_series"]]
        allsec = np.concatenate(series)
        th_min, th_max = float(allsec.min()), float(allsec.max())
        vecs = np.asarray([perf_vector(s, th_min, th_max, n_intervals) for s in series])
        for i, v in zip(idx, vecs, strict=True):
            df.at[i, "perf_vector"] = v.tolist()
        if len(idx) < stage2["min_samples"]:
            continue
        labels = _dbscan(vecs, stage2["eps"], stage2["min_samples"])
        jobs = df.loc[idx, "job_id"].to_numpy() if "job_id" in df.columns else None
        level = vector_level(vecs, th_min, th_max)
        bad = idx[outliers(labels, level, slowdown_factor, jobs,
                           df.loc[idx, "duration_s"].to_numpy(dtype=float))]
        df.loc[bad, "is_abnormal"] = True
        normal = idx[labels == main_cluster(labels, level, slowdown_factor)]
        if len(normal):
            ref = float(np.median(df.loc[normal, "mean_bw"]))
            df.loc[bad, "slowdown_est"] = ref / np.maximum(df.loc[bad, "mean_bw"], 1e-9)
    # one-stage baseline (IOSI): duration and volume only
    if n >= one_stage["min_samples"]:
        x = np.column_stack([np.log10(np.maximum(df["duration_s"].to_numpy(dtype=float), 1.0)),
                             logv])
        df["is_abnormal_1stage"] = _dbscan(x, one_stage["eps"], one_stage["min_samples"]) == -1
    return df
