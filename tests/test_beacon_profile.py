"""Per-job profiles of a simulated TaihuLight history against the simulator's truth (issue #4.5).

The history is conftest.taihulight_days: two days of a 128-node TaihuLight with every job
traced, ingested (both days and the next, where the last jobs end) and profiled by the
`job_profile` stage of each date after the first, which (re)profiles the jobs that started
on the day before and on that date. Truth per run: read/write bytes, `bandwidth.peak_Bps`
(the largest one-second volume), `bandwidth.mean_Bps` (bytes over the seconds of its I/O
segments) and the archetype's I/O mode.
"""

import pytest
from pyspark.sql import functions as F

from lassi.core.config import load_site
from lassi.core.warehouse import Warehouse


@pytest.fixture(scope="module")
def profiled(spark, taihulight_days):
    h = taihulight_days
    site = load_site(h.site_name, nodes=h.nodes)
    wh = Warehouse(spark, str(h.warehouse))
    jobs = wh.read("job_summary", list(h.dates)).toPandas().set_index("job_id")
    return site, wh, h.truth, jobs, h


def test_every_job_is_profiled(profiled):
    _, _, truth, jobs, _ = profiled
    assert {r["job_id"] for r in truth["runs"]} == set(jobs.index)
    assert len(jobs) == jobs.index.nunique()          # each job profiled once


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
    _, wh, truth, _, h = profiled
    ts = wh.read("job_timeseries", list(h.dates))
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
    _, wh, _, _, h = profiled
    sums = (wh.read("job_timeseries", list(h.dates)).where("layer = 'forwarding'")
            .groupBy("component", "ts").agg(F.sum("share").alias("s"),
                                            F.sum("read_bytes").alias("r"),
                                            F.sum("write_bytes").alias("w"))
            .where("r + w > 0").toPandas()["s"])
    assert len(sums) > 100
    assert sums.min() == pytest.approx(1.0) and sums.max() == pytest.approx(1.0)


def test_daily_report_of_a_beacon_site(profiled, tmp_path):
    """The whole Beacon day in the report: system views, top jobs and trace compression."""
    import shutil

    from lassi.beacon.system_views import build_system_views
    from lassi.beacon.trace_merge import build_trace_merged
    from lassi.report.daily import write_daily_report

    site, shared, truth, jobs, h = profiled
    shutil.copytree(shared.root, tmp_path / "wh")      # the shared history stays read-only
    wh = Warehouse(shared.spark, str(tmp_path / "wh"))
    day = h.dates[0]
    assert "lossless" in build_trace_merged(wh, site, day)
    build_system_views(wh, site, day)
    index = write_daily_report(wh, site, day, day, tmp_path / "report")
    page = index.read_text()
    for title in ("Beacon system views", "Top 20 jobs by volume", "Trace compression",
                  "I/O modes"):
        assert title in page
    biggest = max((r for r in truth["runs"] if r["start"].startswith(day.isoformat())),
                  key=lambda r: r["bandwidth"]["bytes"])
    assert f">{biggest['job_id']}<" in page
    # the five Beacon system views; one phase figure per abnormal job of the day, worst first
    from lassi.report.anomaly import FIGURES

    views = {p.stem for p in index.parent.rglob("*.png") if not p.stem.startswith("phases_")}
    assert views == {"layer_volume", "mds_source", "fwd_load", "job_bw_iops", "ost_util"}
    abnormal = set(wh.read("anomaly", [day]).toPandas()["job_id"])
    drawn = {p.stem.removeprefix("phases_") for p in index.parent.rglob("phases_*.png")}
    assert abnormal and drawn <= abnormal and len(drawn) == min(len(abnormal), FIGURES)
    assert len(list(index.parent.rglob("*.png"))) == 5 + len(drawn)
