"""The ARCHER simulator: raw files in the real formats whose counters add up to the truth."""

import collections
import datetime as dt
import json

import pytest
from lassi.ingest import alps, pbs
from lassi.ingest.lustre_stats import parse_file

from lassi.core.config import load_site
from lassi.sim.runner import simulate

DATE = dt.date(2017, 10, 10)


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    site = load_site("archer", nodes=48)
    out = tmp_path_factory.mktemp("archer")
    simulate(site, DATE, 1, 3, out)
    return site, out, json.loads((out / "truth.json").read_text())


def _deltas(site, out, truth):
    """Independent re-computation: sum every export series' increments, resets included."""
    base = {tuple(k.split("|")): v for k, v in truth["baseline"].items()}
    series = collections.defaultdict(list)
    for f in sorted((out / "lustre").rglob("*.txt")):
        rows, quarantined, stats = parse_file(f, nid_map=site.nid_map)
        assert not quarantined and stats.conserved
        for r in rows:
            if r["kind"] == "export":
                series[(r["target"], r["nid"], r["counter"])].append(
                    (r["snapshot_time"], r["samples"], r["sum"], r["start_time"]))
    tot = collections.Counter()
    for (target, nid, counter), obs in series.items():
        obs.sort()
        b = base.get((target, nid), {})
        ops_name = {"read_bytes": "read_ops", "write_bytes": "write_ops"}.get(counter, counter)
        prev = (b.get(ops_name, 0), b.get(counter, 0) if counter.endswith("_bytes") else 0)
        prev_start = None
        for _t, samples, total, start in obs:
            cur = (samples, total or 0)
            restarted = prev_start is not None and start > prev_start
            for i, name in enumerate((f"{counter}:samples", f"{counter}:sum")):
                tot[name] += cur[i] if restarted or cur[i] < prev[i] else cur[i] - prev[i]
            prev, prev_start = cur, start
    return tot


def _truth_totals(truth) -> collections.Counter:
    want = collections.Counter()
    for r in truth["runs"]:
        want.update(r["totals"])
    return want


def test_every_byte_and_operation_in_truth_is_in_the_raw_counters(sim):
    site, out, truth = sim
    want = _truth_totals(truth)
    got = _deltas(site, out, truth)
    assert want["write_bytes"] > 0 and want["read_bytes"] > 0 and want["open"] > 0
    assert got["write_bytes:sum"] == want["write_bytes"]
    assert got["write_bytes:samples"] == want["write_ops"]
    assert got["read_bytes:sum"] == want["read_bytes"]
    assert got["read_bytes:samples"] == want["read_ops"]
    for op in ("open", "close", "mknod", "getattr", "unlink", "mkdir", "punch", "preprw"):
        assert got[f"{op}:samples"] == want[op], op
    assert len(truth["counter_resets"]) == 1


def test_scheduler_records_give_back_every_run(sim):
    site, out, truth = sim
    rows, q, stats = alps.parse_files(sorted((out / "alps").glob("*.log")), tz="Europe/London")
    assert not q and stats.conserved
    by_apid = {r["app_id"]: r for r in rows}
    assert len(by_apid) == len(truth["runs"])
    for t in truth["runs"]:
        r = by_apid[t["app_id"]]
        assert r["command"] == t["command"] and r["nodes"] == t["nodes"]
        start = dt.datetime.fromisoformat(t["start"]).replace(tzinfo=None)
        assert abs((r["start"] - start).total_seconds()) < 1e-3
    prow, pq, _ = pbs.parse_files(sorted((out / "pbs").iterdir()), tz="Europe/London")
    assert not pq and {r["job_id"] for r in prow} == {t["job_id"] for t in truth["runs"]}


def test_truth_records_slowdowns_and_aggressors(sim):
    _, _, truth = sim
    kinds = {r["archetype"] for r in truth["runs"]}
    assert {"mdfarm", "tracer", "ckpt_nn", "shared_n1"} <= kinds
    for r in truth["runs"]:
        assert r["runtime_s"] >= r["solo_runtime_s"] - 5 * (len(r["phases"]) * 2 + 2)
        assert r["slowed"] == (r["lost_s"] > 0.2 * r["solo_runtime_s"])
    assert truth["faults"] and truth["faults"][0]["kind"] == "ost"


def test_same_seed_same_world(tmp_path):
    site = load_site("archer", nodes=16)
    a, b = tmp_path / "a", tmp_path / "b"
    simulate(site, DATE, 1, 5, a)
    simulate(site, DATE, 1, 5, b)
    assert (a / "truth.json").read_bytes() == (b / "truth.json").read_bytes()
    fa = sorted(p.relative_to(a) for p in a.rglob("*.txt"))
    assert fa and all((a / p).read_bytes() == (b / p).read_bytes() for p in fa)
    # the writers append: a second simulation into the same folder must replace the first
    with pytest.raises(ValueError, match="already holds a simulation"):
        simulate(site, DATE, 1, 5, a)
    simulate(site, DATE, 1, 5, a, overwrite=True)
    assert sorted(p.relative_to(a) for p in a.rglob("*.txt")) == fa
    assert all((a / p).read_bytes() == (b / p).read_bytes() for p in fa)


def test_fault_times_reach_later_days():
    from lassi.sim.runner import parse_fault

    day0 = 1_507_593_600.0                         # 2017-10-10T00:00Z
    f = parse_fault("fwd:fwd000:0.05:33:00-36:30", day0)
    assert (f.kind, f.name, f.factor) == ("fwd", "fwd000", 0.05)
    assert (f.start - day0, f.end - day0) == (33 * 3600, 36.5 * 3600)
    with pytest.raises(ValueError, match="expected KIND:NAME:FACTOR"):
        parse_fault("fwd:fwd000:0.05:33-36", day0)


def _epoch(t: dt.datetime) -> float:
    return t.replace(tzinfo=dt.timezone.utc).timestamp()


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    site = load_site("archer", nodes=32)
    out = tmp_path_factory.mktemp("archer_dense")
    simulate(site, DATE, 1, 4, out, dense=True, tokio=False)
    return site, out, json.loads((out / "truth.json").read_text())


def test_dense_day_counters_still_add_up_to_the_truth(dense):
    site, out, truth = dense
    want = _truth_totals(truth)
    got = _deltas(site, out, truth)
    for op in ("getattr", "open", "close", "statfs", "write_bytes"):
        key = f"{op}:sum" if op.endswith("_bytes") else f"{op}:samples"
        assert got[key] == want[op] > 0, op


def test_dense_day_has_every_busy_node_in_every_window(dense):
    """~90 % of the node-time busy, and each node of a run covering a whole capture window
    has an MDT export delta in the capture that closes it."""
    site, out, truth = dense
    day0 = dt.datetime.combine(DATE, dt.time(), dt.timezone.utc).timestamp()
    w = truth["window_s"]
    seen = set()
    for f in (out / "lustre").rglob("*.txt"):
        if "mds" in f.parent.name:
            rows, _, _ = parse_file(f, nid_map=site.nid_map)
            seen |= {(r["nid"], round((_epoch(r["snapshot_time"]) - day0) / w))
                     for r in rows if r["kind"] == "export"}
    busy = 0.0
    want = set()
    for r in truth["runs"]:
        s, e = (dt.datetime.fromisoformat(r[k]).timestamp() - day0 for k in ("start", "end"))
        busy += len(r["nodes"]) * max(0.0, min(e, 86400) - s)
        nids = [site.node_nid(n) for n in r["nodes"]]
        want |= {(nid, k) for nid in nids for k in range(int(s // w) + 2, int(e // w) + 1)}
    assert busy / (32 * 86400) > 0.8
    assert len(want) > 0.8 * 32 * 86400 / w
    assert not want - seen
