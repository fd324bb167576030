"""SIOX pinpoint (lassi.siox.pinpoint): which forwarding node or OST explains the excess
service time, on hand-made observations with known answers. Pure numpy."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from lassi.siox.pinpoint import pinpoint, split_parts

FWDS = ["fwd0", "fwd1", "fwd2"]
OSTS = ["OST0", "OST1", "OST2", "OST3"]


def observations(excess_of):
    """Each forwarding node for 10 minutes, its requests spread over the OSTs by a fixed
    pattern; excess_of(fwd, shares) gives the observation's excess."""
    obs, shares = [], []
    for i, (f, m) in enumerate(itertools.product(range(3), range(10))):
        raw = [(k + f + m) % 4 + 1 for k in range(4)]          # 1..4, varying per minute
        sh = {o: r / sum(raw) for o, r in zip(OSTS, raw, strict=True)}
        obs.append((FWDS[f], m, excess_of(FWDS[f], sh)))
        shares += [(i, o, s) for o, s in sh.items()]
    return (pd.DataFrame(obs, columns=["fwd", "minute", "excess"]),
            pd.DataFrame(shares, columns=["i", "ost", "share"]))


def test_a_slow_forwarding_node_is_named():
    obs, shares = observations(lambda f, sh: 2.0 if f == "fwd1" else 0.0)
    (fault,) = pinpoint(obs, shares, min_excess=0.5)
    assert (fault.component, fault.kind, fault.n_obs) == ("fwd1", "fwd", 10)
    assert fault.beta == pytest.approx(2.0)
    assert fault.explained == pytest.approx(1.0)


def test_a_slow_ost_is_named_not_the_forwarding_nodes_it_slows():
    obs, shares = observations(lambda f, sh: 3.0 * sh["OST2"])
    (fault,) = pinpoint(obs, shares, min_excess=0.5)
    assert (fault.component, fault.kind) == ("OST2", "ost")
    assert fault.beta == pytest.approx(3.0)
    assert fault.explained == pytest.approx(1.0)


def test_two_faults_at_once_are_both_found_largest_first():
    obs, shares = observations(lambda f, sh: 3.0 * sh["OST0"] + (1.5 if f == "fwd2" else 0))
    faults = pinpoint(obs, shares, min_excess=0.5)
    assert {(f.component, f.kind) for f in faults} == {("OST0", "ost"), ("fwd2", "fwd")}
    assert faults[0].explained >= faults[1].explained


def test_nothing_slow_or_too_little_names_nothing():
    obs, shares = observations(lambda f, sh: 0.0)
    assert pinpoint(obs, shares, min_excess=0.5) == []
    obs, shares = observations(lambda f, sh: 0.3 if f == "fwd0" else 0.0)
    assert pinpoint(obs, shares, min_excess=0.5) == []        # 30 % slower: below 50 %
    assert pinpoint(obs.iloc[:0], shares.iloc[:0], min_excess=0.5) == []


def test_split_parts_of_one_observation():
    obs, shares = observations(lambda f, sh: 3.0 * sh["OST0"] + (1.5 if f == "fwd2" else 0))
    faults = pinpoint(obs, shares, min_excess=0.5)
    parts = split_parts(faults, "fwd2", {"OST0": 0.25, "OST1": 0.75})
    assert parts == pytest.approx({"OST0": 0.75, "fwd2": 1.5})
    assert split_parts(faults, "fwd0", {"OST1": 1.0}) == {}
