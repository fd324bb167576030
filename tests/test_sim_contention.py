"""The contention model: shared OSTs and the MDS have finite capacity; faults slow components."""

import dataclasses

import numpy as np
import pytest

from lassi.core.config import load_site
from lassi.sim.engine import Engine, Fault
from lassi.sim.workload import ARCHETYPES, App, Run, make_plan

T0 = 1507593600.0


class _Null:
    def begin(self, engine, start):
        pass

    def step(self, t, runs, counts):
        pass

    def end(self, t):
        pass


def _runs(site, specs):
    """Runs from (archetype, nodes, submit offset, overrides) with N:1 files over all OSTs."""
    rng = np.random.default_rng(7)
    n_ost = len(site.fs("fs2").osts)
    runs = []
    for i, (name, nodes, offset, over) in enumerate(specs):
        arch = dataclasses.replace(ARCHETYPES[name], **({"stripe": n_ost} | over))
        app = App(i, arch, nodes, "u1", "p1", "fs2", f"aprun -n {nodes} ./{arch.exe}", 1.0)
        runs.append(Run(i, app, T0 + offset, make_plan(rng, app)))
    return runs


def _simulate(site, runs, faults=()):
    Engine(site, runs, list(faults), 5.0, np.random.default_rng(1)).run(T0, [_Null()])
    return runs


@pytest.fixture(scope="module")
def site():
    return load_site("archer", nodes=256)


VICTIM = ("shared_n1", 8, 0.0, {"mode": "N:1", "cycles": (2, 2), "compute_s": (10, 11)})
HEAVY = ("shared_n1", 48, 0.0, {"mode": "N:1", "cycles": (6, 6), "compute_s": (10, 11),
                                "node_rate": 600e6, "bytes_per_node": (4e9, 4e9)})


def test_victim_is_slower_beside_an_aggressor(site):
    solo = _simulate(site, _runs(site, [VICTIM]))[0]
    victim, heavy = _simulate(site, _runs(site, [VICTIM, HEAVY]))
    solo_time = solo.end - solo.start
    shared_time = victim.end - victim.start
    assert solo_time == pytest.approx(solo.solo_runtime, abs=5.0 * len(solo.plan) + 1)
    assert shared_time > 1.15 * solo_time


def test_truth_names_the_neighbour_and_the_faulty_ost(site):
    runs = _runs(site, [VICTIM, HEAVY])
    eng = Engine(site, runs, [], 5.0, np.random.default_rng(1))
    eng.run(T0, [_Null()])
    assert 1 in eng.truth[0].by_neighbour and eng.truth[0].lost_s > 0
    ost = site.fs("fs2").osts[5]
    runs = _runs(site, [VICTIM])
    eng = Engine(site, runs, [Fault("ost", ost, 0.05, T0, T0 + 86400)], 5.0,
                 np.random.default_rng(1))
    eng.run(T0, [_Null()])
    assert runs[0].end - runs[0].start > 1.3 * runs[0].solo_runtime
    assert set(eng.truth[0].by_component) == {ost}


def test_metadata_farm_slows_metadata_heavy_neighbours(site):
    farm = ("mdfarm", 16, 0.0, {"md_per_node_s": 5000.0})
    # like LASSi's CFD victim: thousands of opens/closes per second
    victim = ("mdfarm", 8, 0.0, {"md_per_node_s": 200.0})
    alone = _simulate(site, _runs(site, [victim]))[0]
    shared = _simulate(site, _runs(site, [victim, farm]))[0]
    assert (shared.end - shared.start) > 1.2 * (alone.end - alone.start)
