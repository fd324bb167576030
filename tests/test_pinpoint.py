"""SIOX pinpoint (lassi.siox.pinpoint): which forwarding node or OST explains the excess
service time, on hand-made observations with known answers. Pure numpy."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from lassi.siox.pinpoint import pinpoint

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


def one_node_with_waits(ost_slow: dict[str, float], fwd_beta: float):
    """One forwarding node sending to every OST (the confound the LWFS fit alone cannot
    split) for 20 minutes: 1,000 requests a minute expected to take 10 ms of thread time
    each (10 s), one RPC per request expected to wait 5 ms at its OST. A slow OST x (factor
    1 + b) makes its RPCs wait (1 + b) x as long, and the node's excess grows by that extra
    wait / 10 s; a slow node adds fwd_beta to every minute's excess."""
    obs, shares = [], []
    for m in range(20):
        raw = [(k + m) % 4 + 1 for k in range(4)]
        sh = {o: r / sum(raw) for o, r in zip(OSTS, raw, strict=True)}
        extra = 0.0
        for o, share in sh.items():
            expected = 1000 * share * 0.005
            wait = expected * (1 + ost_slow.get(o, 0.0))
            extra += wait - expected
            shares.append((m, o, share, wait, expected))
        obs.append(("fwd0", m, fwd_beta + extra / 10.0, 10.0))
    return (pd.DataFrame(obs, columns=["fwd", "minute", "excess", "base_exe_time_s"]),
            pd.DataFrame(shares, columns=["i", "ost", "share", "rpc_wait_s",
                                          "expected_wait_s"]))


def test_client_wait_separates_a_slow_ost_from_the_one_node_that_sends_to_it():
    obs, shares = one_node_with_waits({"OST2": 19.0}, fwd_beta=0.0)
    (fault,) = pinpoint(obs, shares, min_excess=0.5)
    assert (fault.component, fault.kind, fault.evidence) == ("OST2", "ost", "rpc_wait")
    assert fault.beta == pytest.approx(19.0)
    assert fault.explained == pytest.approx(1.0)
    # without the wait figures only the fit's evidence is left
    blind = pinpoint(obs, shares[["i", "ost", "share"]], min_excess=0.5)
    assert {f.evidence for f in blind} == {"lwfs_fit"}


def test_client_wait_names_both_a_slow_ost_and_a_slow_node():
    obs, shares = one_node_with_waits({"OST1": 4.0}, fwd_beta=1.5)
    faults = pinpoint(obs, shares, min_excess=0.5)
    assert [(f.component, f.evidence) for f in faults] == [("OST1", "rpc_wait"),
                                                           ("fwd0", "lwfs_fit")]
    assert faults[0].beta == pytest.approx(4.0)
    assert faults[1].beta == pytest.approx(1.5)
    assert sum(f.explained for f in faults) == pytest.approx(1.0)


def test_client_wait_clears_the_osts_of_a_slow_node():
    obs, shares = one_node_with_waits({"OST3": 0.3}, fwd_beta=2.0)   # OST3 30 %: normal
    (fault,) = pinpoint(obs, shares, min_excess=0.5)
    assert (fault.component, fault.kind, fault.evidence) == ("fwd0", "fwd", "lwfs_fit")
    assert fault.beta == pytest.approx(2.0, rel=0.05)
    # an OST whose wait is normal is not blamed by the fit either, however its share
    # varies with the node's excess
    obs["excess"] += 6.0 * shares[shares["ost"] == "OST0"].set_index("i")["share"]
    assert [f.component for f in pinpoint(obs, shares, min_excess=0.5)] == ["fwd0"]


def test_client_wait_within_the_osts_normal_spread_is_not_a_fault():
    """OST2 waited 2x its median: slow by the median alone (beta 1.0 >= 0.5), but its
    knowledge base's 90th percentile is 1.6x the median, and 2 < 1.5 x 1.6 -> not named;
    with a 90th percentile of 1.2x the median (2 >= 1.8) it is."""
    obs, shares = one_node_with_waits({"OST2": 1.0}, fwd_beta=0.0)
    shares["expected_wait90_s"] = shares["expected_wait_s"] * 1.6
    assert [f.evidence for f in pinpoint(obs, shares, min_excess=0.5)] == []
    shares["expected_wait90_s"] = shares["expected_wait_s"] * 1.2
    (fault,) = pinpoint(obs, shares, min_excess=0.5)
    assert (fault.component, fault.evidence) == ("OST2", "rpc_wait")
    assert fault.beta == pytest.approx(1.0)



def test_a_slow_ost_that_explains_little_of_the_excess_is_not_named():
    """OST2 waits 2x its median (beyond its 90th percentile at 1.2x), but its extra wait is
    about 1/24 of a node 3x slower than normal: it removes well under MIN_EXPLAINED (20 %)
    of the squared excess, so only the node is named, as the fit would rule."""
    obs, shares = one_node_with_waits({"OST2": 1.0}, fwd_beta=3.0)
    shares["expected_wait90_s"] = shares["expected_wait_s"] * 1.2
    assert [(f.component, f.evidence) for f in pinpoint(obs, shares, min_excess=0.5)] == \
        [("fwd0", "lwfs_fit")]
