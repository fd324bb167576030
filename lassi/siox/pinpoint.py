"""Which component on the forwarding paths explains the forwarding nodes' slow service
(SIOX §4.4 and §6, "pinpoint"): pure numpy, no Spark.

The evidence is the LWFS server's service time per forwarding node and minute against its
knowledge base (`component_baseline`): excess = observed (execution + queueing) time of a
data request / the baseline's for the same request-size and load class − 1. A slow
forwarding node raises its own excess whatever OSTs it sends to; a slow OST holds the
LWFS threads of every forwarding node that sends to it, in proportion to the share of
their Lustre requests that go to it. Over the observations of a period (an hour: every
busy forwarding node's minutes), each candidate explains the excess vector with one
coefficient — a forwarding node f: excess_i = beta * [fwd_i = f]; an OST x:
excess_i = beta * share_i(x) — by least squares. The candidate that removes the most of
the squared excess wins, the chosen ones are refitted together (two faults at once share
the observations they both touch) and the search repeats (greedy, at most MAX_FAULTS), as
long as the winner removes at least MIN_EXPLAINED of what is left and its beta (how much
slower than normal it made a request going entirely through it) is at least `min_excess`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

MAX_FAULTS = 3
MIN_EXPLAINED = 0.2


@dataclass(frozen=True)
class Fault:
    """A pinpointed component: kind fwd|ost, beta (excess of a request through it) and
    the fraction of the period's squared excess it removed."""

    component: str
    kind: str
    beta: float
    explained: float
    n_obs: int


def pinpoint(obs: pd.DataFrame, shares: pd.DataFrame, min_excess: float) -> list[Fault]:
    """Faulty components of one period.

    obs: one row per observation `i` (fwd, minute) with `excess`; shares: rows (i, ost,
    share) — the share of the observation's Lustre requests that went to the OST.
    """
    if obs.empty:
        return []
    e = np.clip(obs["excess"].to_numpy(float), 0.0, None)
    total = float(e @ e)
    if total <= 0:
        return []
    candidates: list[tuple[str, str, np.ndarray]] = []
    fwd = obs["fwd"].to_numpy()
    for f in pd.unique(fwd):
        candidates.append((str(f), "fwd", (fwd == f).astype(float)))
    if not shares.empty:
        pos = {i: k for k, i in enumerate(obs.index)}
        for ost, g in shares.groupby("ost"):
            x = np.zeros(len(e))
            x[[pos[i] for i in g["i"]]] = g["share"].to_numpy(float)
            candidates.append((str(ost), "ost", x))
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


def split_parts(faults: list[Fault], fwd: str, ost_shares: dict[str, float]) -> dict[str, float]:
    """How one forwarding-node observation's excess divides among the period's faults:
    {component: its predicted excess there}; what is left of the observed excess is load
    (queueing behind other work) and is not in the dict."""
    parts = {}
    for f in faults:
        if f.kind == "fwd" and f.component == fwd:
            parts[f.component] = f.beta
        elif f.kind == "ost" and ost_shares.get(f.component, 0.0) > 0:
            parts[f.component] = f.beta * ost_shares[f.component]
    return parts
