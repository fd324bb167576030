"""Stragglers inside large jobs (Beacon Figs. 14-15) on a small simulated TaihuLight history.

The simulator (lassi.sim.engine) lets each (I/O node, OST) pair of a run progress at its
own pace while a fault is active, and lists in truth.json the faulty components that made
a run's I/O through them slower; lassi.beacon.components finds stragglers by DBSCAN per job and
lassi.evaluate.stragglers scores them against that truth.
"""

from __future__ import annotations

import copy
import datetime as dt
import json

import numpy as np
import pytest

from lassi.core.config import Site, load_site

DAY = dt.date(2018, 2, 25)


def _site() -> Site:
    """64 nodes, 4 per forwarding node (16), 24 OSTs; jobs of >= 16 nodes are large."""
    site = load_site("taihulight", nodes=64)
    data = copy.deepcopy(site.data)
    data["forwarding"]["nodes_per_fwd"] = 4
    data["filesystems"][0]["oss_per_fwd"] = 0.5
    data["thresholds"]["large_job_nodes"] = 16
    return Site(data, site.source)


def _simulate(site: Site, out, faults: list[str], seed: int = 11) -> dict:
    """Three 32-node checkpointing jobs (lassi.sim engine + Beacon writer); the truth."""
    from lassi.sim.beacon import BeaconWriter, write_job_log
    from lassi.sim.engine import Engine
    from lassi.sim.runner import epoch, iso, parse_fault, run_truth
    from lassi.sim.workload import ARCHETYPES, App, Run, make_plan

    rng = np.random.default_rng(seed)
    start = epoch(DAY)
    arch = ARCHETYPES["ckpt_nn"]
    runs = []
    for i in range(3):
        app = App(i, arch, 32, f"u10{i:02d}", "p01", "online1",
                  f"srun -N 32 -n 128 ./{arch.exe} input_{i:03d}.nml", 3.0, 1000 + i)
        runs.append(Run(i, app, start + 60.0 * i, make_plan(rng, app)))
    fault_list = [parse_fault(f, start) for f in faults]
    writer = BeaconWriter(site, out, rng, traced_fraction=1.0)
    engine = Engine(site, runs, fault_list, 1.0, rng)
    engine.run(start, [writer])
    write_job_log(site, runs, out)
    truth = {"site": site.name, "start": iso(start),
             "runs": [run_truth(site, r, engine.truth[r.run_no]) for r in runs]}
    truth.update(writer.truth_extra())
    (out / "truth.json").write_text(json.dumps(truth))
    return truth


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    from lassi.ingest.runner import ingest_raw

    from lassi.beacon.components import stragglers
    from lassi.beacon.job_profile import build_job_profile
    from lassi.core.warehouse import Warehouse

    site = _site()
    raw = tmp_path_factory.mktemp("raw")
    # a very slow forwarding node and OST the whole time (>= 3x for the jobs using them),
    # a moderately slow forwarding node for the second job
    truth = _simulate(site, raw, ["fwd:fwd005:0.03:00:00-12:00",
                                  "ost:online1-OST0007:0.1:00:00-12:00",
                                  "fwd:fwd012:0.12:00:00-12:00"])
    wh = Warehouse(spark, str(tmp_path_factory.mktemp("wh")))
    ingest_raw(spark, wh, site, raw, DAY)
    build_job_profile(wh, site, DAY)
    # the straggler rows of stage component_anomaly (its system rule is tested elsewhere)
    wh.write(stragglers(wh, site, DAY), "component_anomaly", [DAY])
    return site, wh, truth


def test_truth_lists_the_slow_components(history):
    _, _, truth = history
    strag = truth["stragglers"]
    assert {s["component"] for s in strag} <= {"fwd005", "online1-OST0007", "fwd012"}
    # the 10x slow forwarding node delays each job that uses it about that much
    severe = [s for s in strag if s["component"] == "fwd005"]
    assert severe and all(s["slowdown"] >= 3.0 and s["peers"] >= 3 for s in severe)
    # a run through a slow component still moves all its bytes (nothing lost or doubled)
    for r in truth["runs"]:
        assert sum(p["bytes"] for p in r["phases"]) == r["bandwidth"]["bytes"]


def test_no_fault_no_straggler(tmp_path):
    truth = _simulate(_site(), tmp_path, [])
    assert truth["stragglers"] == []


def test_detection_against_truth(history):
    from lassi.evaluate.stragglers import evaluate_stragglers, table_lines

    site, wh, truth = history
    res = evaluate_stragglers(wh, truth, DAY, DAY, large_job_nodes=16)
    print("\n".join(table_lines(res)), res["misses"], res["false_alarms"])
    assert res["severe"] >= 2
    assert res["recall_severe"] == 1.0
    assert res["precision"] >= 0.95
    rows = wh.read("component_anomaly", DAY).where("rule = 'straggler'").collect()
    for r in rows:     # the estimated slowdown is of the order of the truth's
        t = [s for s in truth["stragglers"] if (s["job_id"], s["component"])
             == (r["job_id"], r["component"])]
        assert t and r["est_slowdown"] >= 0.5 * min(t[0]["slowdown"], 3.0)
