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
from lassi.ingest.runner import ingest_raw
from pyspark.sql import functions as F

from lassi.beacon.job_profile import build_job_profile
from lassi.core.config import load_site
from lassi.sim.runner import simulate

DATE = dt.date(2018, 2, 25)
NEXT = DATE + dt.timedelta(days=1)


@pytest.fixture(scope="module")
def profiled(spark, tmp_path_factory):
    from lassi.core.warehouse import Warehouse

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
        assert row.runtime_s == pytest.approx(r["runtime_s"], abs=2.0)  # log: whole seconds


def test_layers_of_a_lone_job_agree(profiled):
    """A job alone on its forwarding nodes in every minute it does I/O (share 1): its
    forwarding and OST layers carry exactly its compute bytes (none of the simulated
    archetypes that are alone here amplify reads)."""
    _, wh, truth, _, _ = profiled
    ts = wh.read("job_timeseries", [DATE, NEXT])
    ts.createOrReplaceTempView("ts")
    lone = wh.spark.sql("""
        SELECT job_id, layer, SUM(read_bytes) AS r, SUM(write_bytes) AS w
        FROM ts WHERE layer IN ('forwarding', 'ost') OR component = '*'
        GROUP BY job_id, layer
        HAVING job_id IN (SELECT job_id FROM ts WHERE layer = 'forwarding'
                          GROUP BY job_id HAVING MIN(share) > 0.999)""").toPandas()
    amp = {r["job_id"]: r["archetype"] for r in truth["runs"]}
    checked = 0
    for job, g in lone.groupby("job_id"):
        if amp[job] == "seq_reader":
            continue
        by = g.set_index("layer")
        for layer in ("forwarding", "ost"):
            assert by.loc[layer, "w"] == pytest.approx(by.loc["compute", "w"], rel=1e-6), job
            assert by.loc[layer, "r"] == pytest.approx(by.loc["compute", "r"], rel=1e-6), job
        checked += 1
    assert checked >= 1


def test_shared_forwarding_load_is_split_whole(profiled):
    """Every traced request is some job's: per forwarding node and minute with data, the
    jobs' shares add up to 1 (Beacon's split by compute-side throughput)."""
    _, wh, _, _, _ = profiled
    sums = (wh.read("job_timeseries", [DATE, NEXT]).where("layer = 'forwarding'")
            .groupBy("component", "ts").agg(F.sum("share").alias("s"),
                                            F.sum("read_bytes").alias("r"),
                                            F.sum("write_bytes").alias("w"))
            .where("r + w > 0").toPandas()["s"])
    assert len(sums) > 100
    assert sums.min() == pytest.approx(1.0) and sums.max() == pytest.approx(1.0)


def test_daily_report_of_a_beacon_site(profiled, tmp_path):
    """The whole Beacon day in the report: system views, top jobs and trace compression."""
    from lassi.beacon.system_views import build_system_views
    from lassi.beacon.trace_merge import build_trace_merged
    from lassi.report.daily import write_daily_report

    site, wh, truth, jobs, _ = profiled
    assert "lossless" in build_trace_merged(wh, site, DATE)
    build_system_views(wh, site, DATE)
    index = write_daily_report(wh, site, DATE, DATE, tmp_path)
    page = index.read_text()
    for title in ("Beacon system views", "Top 20 jobs by volume", "Trace compression",
                  "I/O modes"):
        assert title in page
    biggest = max((r for r in truth["runs"] if r["start"].startswith(DATE.isoformat())),
                  key=lambda r: r["bandwidth"]["bytes"])
    assert f">{biggest['job_id']}<" in page
    assert len(list(index.parent.rglob("*.png"))) == 5
