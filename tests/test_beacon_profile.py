"""Per-job profiles of a simulated TaihuLight day against the simulator's truth (issue #4.5).

The day is simulated with every job traced, ingested (the day and the next, where the last
jobs end), and profiled by the `job_profile` stage of the next day, which (re)profiles the
jobs that started on both days. Truth per run: read/write bytes, `bandwidth.peak_Bps` (the
largest one-second volume), `bandwidth.mean_Bps` (bytes over the seconds of its I/O
segments) and the archetype's I/O mode.
"""

import datetime as dt
import json

import pytest

from ingest.runner import ingest_raw
from lassi.config import load_site
from lassi.job_profile import build_job_profile
from lassi.sim.runner import simulate

DATE = dt.date(2018, 2, 25)
NEXT = DATE + dt.timedelta(days=1)


@pytest.fixture(scope="module")
def profiled(spark, tmp_path_factory):
    from lassi.warehouse import Warehouse

    site = load_site("taihulight", nodes=256)
    raw = tmp_path_factory.mktemp("raw")
    simulate(site, DATE, 1, 5, raw, traced_fraction=1.0)
    wh = Warehouse(spark, str(tmp_path_factory.mktemp("wh")))
    for d in (DATE, NEXT):
        ingest_raw(spark, wh, site, raw, d)
    summary = build_job_profile(wh, site, NEXT)
    truth = json.loads((raw / "truth.json").read_text())
    jobs = wh.read("job_summary", [DATE, NEXT]).toPandas().set_index("job_id")
    return site, wh, truth, jobs, summary


def test_every_job_is_profiled(profiled):
    _, _, truth, jobs, summary = profiled
    assert {r["job_id"] for r in truth["runs"]} == set(jobs.index)
    assert "jobs" in summary


def test_bytes_are_exact(profiled):
    _, _, truth, jobs, _ = profiled
    for r in truth["runs"]:
        row = jobs.loc[r["job_id"]]
        assert row.read_bytes == r["totals"]["read_bytes"], r["job_id"]
        assert row.write_bytes == r["totals"]["write_bytes"], r["job_id"]


def test_bandwidth_within_two_percent(profiled):
    _, _, truth, jobs, _ = profiled
    checked = 0
    for r in truth["runs"]:
        bw = r["bandwidth"]
        if bw["bytes"] == 0:
            continue
        row = jobs.loc[r["job_id"]]
        assert row.peak_bw == pytest.approx(bw["peak_Bps"], rel=0.02), r["job_id"]
        assert row.avg_bw == pytest.approx(bw["mean_Bps"], rel=0.02), r["job_id"]
        checked += 1
    assert checked >= 20


def test_io_mode_right_for_every_job(profiled):
    _, _, truth, jobs, _ = profiled
    wrong = {r["job_id"]: (r["mode"], jobs.loc[r["job_id"]].io_mode) for r in truth["runs"]
             if jobs.loc[r["job_id"]].io_mode != r["mode"]}
    assert not wrong
    assert {r["mode"] for r in truth["runs"]} == {"N:N", "N:1", "N:M", "1:1"}


def test_io_nodes_forwarding_nodes_and_runtime(profiled):
    site, _, truth, jobs, _ = profiled
    for r in truth["runs"]:
        row = jobs.loc[r["job_id"]]
        io = r["io_nodes"]
        if r["totals"]["read_bytes"] + r["totals"]["write_bytes"] > 0:
            assert row.n_io_nodes == len(io), r["job_id"]
            assert list(row.fwd_nodes) == sorted({site.fwd_of(n) for n in io}), r["job_id"]
        assert row.n_nodes == len(r["nodes"])
        assert row.runtime_s == pytest.approx(r["runtime_s"], abs=1.0)


def test_layers_of_a_lone_job_agree(profiled):
    """A job alone on its forwarding node: its forwarding and OST layers carry its bytes
    (reads amplified by the archetype's read-ahead), and its OSTs are where they went."""
    _, wh, truth, jobs, _ = profiled
    ts = wh.read("job_timeseries", [DATE, NEXT]).groupBy("job_id", "layer") \
        .sum("read_bytes", "write_bytes").toPandas()
    by = {(r.job_id, r.layer): (r["sum(read_bytes)"], r["sum(write_bytes)"])
          for _, r in ts.iterrows()}
    checked = 0
    for r in truth["runs"]:
        w = r["totals"]["write_bytes"]
        if r["neighbours"] or w == 0 or r["totals"]["read_bytes"] > 0:
            continue
        comp = by[(r["job_id"], "compute")]
        assert comp[1] == pytest.approx(2 * w)     # '*' per second + per node per minute
        assert by[(r["job_id"], "forwarding")][1] == pytest.approx(w, rel=0.05)
        assert by[(r["job_id"], "ost")][1] == pytest.approx(w, rel=0.05)
        checked += 1
    assert checked >= 1
