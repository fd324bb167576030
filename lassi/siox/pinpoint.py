"""Which component on the forwarding paths explains the forwarding nodes' slow service
(SIOX §4.4 and §6, "pinpoint"): pure numpy (the fit), plus the glue that runs it per group
of a Spark frame into `component_pinpoint` rows.

The evidence is the LWFS server's service time per forwarding node and minute against its
knowledge base (`component_baseline`): excess = observed execution time of a data request
/ the baseline's for the same request-size and load class − 1. Two kinds of candidate:

1. An OST whose clients report how long they waited for its replies (osc req_waittime,
   the lustre-client layer's optional field) is judged on that direct evidence (evidence
   `rpc_wait`): its beta is the hour's wait over what its knowledge base's median predicts
   for as many RPCs at the same utilisation, − 1. It is at fault when the wait exceeds
   even the knowledge base's 90th percentile (its normal spread: queueing varies with
   load) by `min_excess` and its measured part of the forwarding-node minutes' excess (the
   extra wait / the thread time the node's requests were expected to take) removes at
   least MIN_EXPLAINED of what is left, as for the fit below; that part is taken off
   before anything else is fitted. This is what separates a slow OST from a slow
   forwarding node even when one forwarding node sends to every OST.
2. What is left is fitted (evidence `lwfs_fit`): a forwarding node f explains
   excess_i = beta * [fwd_i = f]; an OST without wait figures excess_i = beta * share_i(x)
   (the share of the minute's Lustre requests that went to it: a slow OST holds the LWFS
   threads of every forwarding node that sends to it in proportion). By least squares the
   candidate that removes the most of the squared excess wins, the chosen ones are refitted
   together (two faults at once share the observations they both touch) and the search
   repeats (greedy, at most MAX_FAULTS), as long as the winner removes at least
   MIN_EXPLAINED of what is left and its beta (how much slower than normal it made a
   request going entirely through it) is at least `min_excess`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame

from lassi.core.gc_tuning import frozen_imports
from lassi.core.schemas import schema_of

MAX_FAULTS = 3
MIN_EXPLAINED = 0.2
PIN_COLS = [f.name for f in schema_of("component_pinpoint").fields if f.name != "date"]


@dataclass(frozen=True)
class Fault:
    """A pinpointed component: kind fwd|ost, beta (excess of a request through it), the
    fraction of the period's squared excess it removed, and its evidence (rpc_wait |
    lwfs_fit)."""

    component: str
    kind: str
    beta: float
    explained: float
    n_obs: int
    evidence: str = "lwfs_fit"


def pinpoint(obs: pd.DataFrame, shares: pd.DataFrame, min_excess: float) -> list[Fault]:
    """Faulty components of one period.

    obs: one row per observation `i` (fwd, minute) with `excess` (and `base_exe_time_s`
    where OSTs have wait figures); shares: rows (i, ost, share[, rpc_wait_s,
    expected_wait_s, expected_wait90_s]) — the share of the observation's Lustre requests
    that went to the OST, and the client's wait for it next to the knowledge base's median
    and 90th-percentile predictions (without the latter the median is the test).
    Without a `fwd` column (a site without forwarding nodes: the observations are runs)
    only the targets in `shares` are candidates; a `kind` column there names their kind
    (ost | mdt).
    """
    if obs.empty:
        return []
    e = np.clip(obs["excess"].to_numpy(float), 0.0, None)
    total = float(e @ e)
    if total <= 0:
        return []
    measured, judged, left = _measured_osts(obs, shares, e, min_excess)
    return measured + _fit(obs, shares, left, total, min_excess, judged)


def _measured_osts(obs: pd.DataFrame, shares: pd.DataFrame, e: np.ndarray,
                   min_excess: float) -> tuple[list[Fault], set[str], np.ndarray]:
    """OSTs at fault by their clients' wait (evidence rpc_wait), largest part first; every
    OST judged on its wait (faulty or not: the fit must not blame a healthy one); the
    excess left once the faults' measured parts are taken off."""
    total = float(e @ e)
    if "expected_wait_s" not in shares or "base_exe_time_s" not in obs:
        return [], set(), e
    w = shares.dropna(subset=["rpc_wait_s", "expected_wait_s"])
    w = w[w["expected_wait_s"] > 0]
    if w.empty:
        return [], set(), e
    base = obs["base_exe_time_s"].to_numpy(float)
    pos = {i: k for k, i in enumerate(obs.index)}
    found = []
    for ost, g in w.groupby("ost"):
        beta = float(g["rpc_wait_s"].sum() / g["expected_wait_s"].sum() - 1.0)
        high = g["expected_wait_s"]
        if "expected_wait90_s" in g:
            high = g["expected_wait90_s"].fillna(high)
        if g["rpc_wait_s"].sum() < (1.0 + min_excess) * high.sum():
            continue
        k = np.array([pos[i] for i in g["i"]])
        part = np.zeros(len(e))
        ok = base[k] > 0
        part[k[ok]] = np.clip((g["rpc_wait_s"].to_numpy(float)
                               - g["expected_wait_s"].to_numpy(float))[ok] / base[k[ok]],
                              0.0, None)
        found.append((float(part @ np.minimum(part, e)), str(ost), beta, part))
    left = e.copy()
    out = []
    for _, ost, beta, part in sorted(found, key=lambda x: -x[0]):
        rest = float(left @ left)
        after = np.clip(left - part, 0.0, None)
        if rest <= 0 or rest - float(after @ after) < MIN_EXPLAINED * rest:
            continue                # slow, but it explains little of the nodes' excess
        left = after
        out.append(Fault(ost, "ost", beta, (rest - float(left @ left)) / total,
                         int((part > 0).sum()), "rpc_wait"))
    return out, {str(o) for o in w["ost"].unique()}, left


def _fit(obs: pd.DataFrame, shares: pd.DataFrame, e: np.ndarray, total: float,
         min_excess: float, skip: set[str]) -> list[Fault]:
    """The greedy least-squares search (evidence lwfs_fit) over what is left of the excess;
    OSTs in `skip` (judged on their wait) are not candidates."""
    if float(e @ e) <= 0:
        return []
    candidates: list[tuple[str, str, np.ndarray]] = []
    if "fwd" in obs:            # observations of forwarding nodes: each is a candidate
        fwd = obs["fwd"].to_numpy()
        for f in pd.unique(fwd):
            candidates.append((str(f), "fwd", (fwd == f).astype(float)))
    if not shares.empty:
        pos = {i: k for k, i in enumerate(obs.index)}
        for ost, g in shares.groupby("ost"):
            if str(ost) in skip:
                continue
            x = np.zeros(len(e))
            x[[pos[i] for i in g["i"]]] = g["share"].to_numpy(float)
            kind = str(g["kind"].iat[0]) if "kind" in g else "ost"
            candidates.append((str(ost), kind, x))
    chosen: list[tuple[str, str, np.ndarray, float]] = []
    left = e.copy()
    for _ in range(MAX_FAULTS):
        rest = float(left @ left)
        if rest <= 0:
            break
        best = None
        for name, kind, x in candidates:
            xx = float(x @ x)
            if xx <= 0 or any(c[0] == name for c in chosen):
                continue
            gain = float(x @ left) ** 2 / xx
            if best is None or gain > best[0]:
                best = (gain, name, kind, x, float(x @ left) / xx)
        if best is None:
            break
        gain, name, kind, x, beta = best
        if gain < MIN_EXPLAINED * rest or beta < min_excess:
            break
        chosen.append((name, kind, x, 0.0))
        betas = _joint_fit(e, [c[2] for c in chosen])
        left = np.clip(e - sum(b * c[2] for b, c in zip(betas, chosen, strict=True)), 0.0, None)
        chosen[-1] = (name, kind, x, (rest - float(left @ left)) / total)
    betas = _joint_fit(e, [c[2] for c in chosen]) if chosen else []
    return [Fault(name, kind, float(b), expl, int((x > 0).sum()))
            for (name, kind, x, expl), b in zip(chosen, betas, strict=True) if b > 0]


def _joint_fit(e: np.ndarray, xs: list[np.ndarray]) -> list[float]:
    """Least-squares coefficients of e on the chosen candidates together (>= 0): two faults
    at once share the observations they both touch."""
    beta, *_ = np.linalg.lstsq(np.column_stack(xs), e, rcond=None)
    return [max(0.0, float(b)) for b in beta]


def fault_rows(hour, faults: list[Fault], evidence: str | None = None) -> pd.DataFrame:
    """One period's faults as component_pinpoint rows (without the date), ranked as found;
    `evidence` overrides each fault's own."""
    return pd.DataFrame([(hour, f.component, f.kind, f.beta, f.explained, f.n_obs, k,
                          evidence or f.evidence) for k, f in enumerate(faults, 1)],
                        columns=PIN_COLS)


def pinpoint_frame(inp: DataFrame, key: str, fit: Callable[[pd.DataFrame], pd.DataFrame],
                   date: dt.date) -> DataFrame:
    """component_pinpoint rows of `date`: `fit` (pandas -> fault_rows) per `key` group."""
    ddl = ", ".join(f"{f.name} {f.dataType.simpleString()}"
                    for f in schema_of("component_pinpoint").fields if f.name != "date")
    pins = inp.groupBy(key).applyInPandas(frozen_imports(fit), ddl)
    return pins.selectExpr("*", f"DATE '{date.isoformat()}' AS date")
