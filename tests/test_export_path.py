"""SIOX's causal path on a site with Lustre export statistics and no forwarding layer
(ARCHER, lassi.siox.export_path): exact hops from the captures, the pinpoint judged on the
runs that used each target, and the lost time from the runs' history — on a hand-made day
whose values are worked out in the fixture's docstring."""

from __future__ import annotations

import datetime as dt

import pytest

from lassi.core.config import load_site
from lassi.core.schemas import (
    APP_RUN,
    COMPONENT_BASELINE,
    COMPONENT_MINUTE,
    PATH_COMPONENT,
    RAW_LUSTRE_STATS,
    RUN_SLOWDOWN,
)
from lassi.siox.job_path import build_job_path
from lassi.tools.why import diagnose
from tests.conftest import schema_row

D = dt.date(2017, 10, 10)
OST1, OST2, OST3, MDT = "fs2-OST0001", "fs2-OST0002", "fs2-OST0003", "fs2-MDT0000"
MIB = 2**20
MDT_PEAK = 1000.0                 # metadata ops/s


def _t(hms: str) -> dt.datetime:
    return dt.datetime.combine(D, dt.time.fromisoformat(hms))


def _capture(server, target, hms, kind="target", node=None, counter="write_bytes",
             samples=0, total=0):
    return schema_row(RAW_LUSTRE_STATS, server=server, target=target, fs="fs2", kind=kind,
                      nid=None if node is None else f"{node}@gni", node=node,
                      snapshot_time=_t(hms), counter=counter, samples=samples, unit="bytes",
                      sum=total, date=D)


def _writes(node, ost, hms_list):
    """The node's export of `ost` writing 100 requests of 1 MiB in each window (cumulative)."""
    return [_capture("oss1", ost, hms, "export", node, "write_bytes", 100 * k, 100 * k * MIB)
            for k, hms in enumerate(hms_list, 1)]


def _run(app, node, start, end, runtime, mean):
    return (schema_row(APP_RUN, app_id=app, job_id=f"J{app}", user="u", exe="a.x",
                       command=f"aprun a.x {app}", nodes=[node], n_nodes=1, start=_t(start),
                       end=_t(end), source="alps", date=D),
            schema_row(RUN_SLOWDOWN, app_id=app, source="alps", runtime_s=runtime,
                       group_runs=5, group_mean_s=mean, slowdown=runtime / mean,
                       slowed=runtime / mean >= 1.2, risk_oss_sum=0.0, risk_mds_sum=0.0,
                       date=D))


@pytest.fixture(scope="module")
def day(spark, tmp_path_factory):
    """Hour 10 (captures 10:00, 10:03, 10:06: windows 10:00 and 10:03), 100 MiB per window:
    run 1 (n1) writes to OST1 and OST2, run 2 (n2) to OST1 and OST3, run 3 (n3) to OST2
    and OST3. Runs 1 and 2 took 1.5x their groups' mean (3,660 s against 2,440 s: 1,220 s
    lost each), run 3 its mean. The fit of hour 10 pools hours 9-11: excess (0.5, 0.5, 0)
    and runs 4 and 5 below (0.4 each); OST1 touches runs 1 and 2 (beta 0.5) and removes
    0.5 of the squared excess 0.82 (explained 0.61); OST2 and OST3 each touch one slowed
    run and the healthy one, so they are no candidates. Run 1's part explained by OST1 is
    0.5 / max(0.5, 0.5) = 1, so its 1,220 s spread over its two windows there: 610 s each.
    Hour 11: runs 4 and 5 (n4, n5) are 1.4x slow and both only open files on the MDT, which
    served 900 ops/s of its 1,000 peak: busy, so slowed by load, and not named. Each lost
    400 s, all in its one window on the busy MDT (lost_load_s 400); each had half of the
    MDT's operations there, so its neighbour explains half (200 s) and the other half is its
    own load.
    OST1's window 10:00 moved 200 MiB (bw 200 MiB / 180 s) against a median of twice that:
    rate ratio 0.5, and run 1 had half of its bytes."""
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(tmp_path_factory.mktemp("xp") / "wh"))
    site = load_site("archer")
    caps = [_capture("oss1", o, hms) for o in (OST1, OST2, OST3)
            for hms in ("10:00:00", "10:03:00", "10:06:00")]
    caps += [_capture("mds1", MDT, hms, counter="open") for hms in ("11:00:00", "11:03:00")]
    w = ("10:03:00", "10:06:00")
    caps += (_writes("n1", OST1, w) + _writes("n1", OST2, w) + _writes("n2", OST1, w)
             + _writes("n2", OST3, w) + _writes("n3", OST2, w) + _writes("n3", OST3, w))
    caps += [_capture("mds1", MDT, "11:03:00", "export", n, "open", 5000, None)
             for n in ("n4", "n5")]
    wh.write_rows(caps, "raw_lustre_stats", [D])
    runs = [_run("1", "n1", "09:59:00", "11:00:00", 3660.0, 2440.0),
            _run("2", "n2", "09:59:00", "11:00:00", 3660.0, 2440.0),
            _run("3", "n3", "09:59:00", "11:00:00", 3660.0, 3660.0),
            _run("4", "n4", "10:59:00", "11:30:00", 1400.0, 1000.0),
            _run("5", "n5", "10:59:00", "11:30:00", 1400.0, 1000.0)]
    wh.write_rows([r for r, _ in runs], "app_run", [D])
    wh.write_rows([s for _, s in runs], "run_slowdown", [D])
    wh.write_rows([schema_row(COMPONENT_MINUTE, component=OST1, kind="ost", ts=_t("10:00"),
                              interval_s=180, read_bytes=0.0, write_bytes=200.0 * MIB,
                              read_ops=0.0, write_ops=200.0, md_ops=0.0, bw=200 * MIB / 180,
                              iops=200 / 180, size_class="1M-4M", clients=2, load_class="2-3",
                              date=D),
                   schema_row(COMPONENT_MINUTE, component=MDT, kind="mdt", ts=_t("11:00"),
                              interval_s=180, read_bytes=0.0, write_bytes=0.0, read_ops=0.0,
                              write_ops=0.0, md_ops=0.9 * MDT_PEAK * 180, bw=0.0, iops=0.0,
                              clients=2, load_class="2-3", date=D)],
                  "component_minute", [D])
    wh.write_rows([schema_row(COMPONENT_BASELINE, component=OST1, kind="ost", metric="bw",
                              size_class="all", load_class="all", n=50, p10=1.0,
                              p50=400 * MIB / 180, p90=1e9, mean=1.0, period_start=D,
                              period_end=D, date=D)], "component_baseline", [D])
    wh.write_rows([schema_row(PATH_COMPONENT, component=c, kind=k, level=3, software=["x"],
                              fs="fs2", peak_bw=p_bw, peak_iops=p_iops, source="site", date=D)
                   for c, k, p_bw, p_iops in ((OST1, "ost", 6.5e8, 2e4), (OST2, "ost", 6.5e8, 2e4),
                                              (OST3, "ost", 6.5e8, 2e4),
                                              (MDT, "mdt", None, MDT_PEAK))],
                  "path_component", [D])
    summary = build_job_path(wh, site, D)
    return wh, site, summary


def test_pinpoint_names_the_target_the_slowed_runs_share(day):
    wh, _, summary = day
    pins = [r.asDict() for r in wh.read("component_pinpoint", [D]).collect()]
    assert [(p["hour"], p["component"], p["kind"], p["evidence"]) for p in pins] == [
        (_t("10:00"), OST1, "ost", "slow_runs")]          # not the busy MDT at 11:00
    assert pins[0]["beta"] == pytest.approx(0.5)
    assert pins[0]["explained"] == pytest.approx(0.5 / 0.82)
    assert pins[0]["n_obs"] == 2
    assert "fs2-OST0001" in summary and "2 jobs lost" in summary


def test_hops_are_exact_and_carry_the_lost_time(day):
    wh, _, _ = day
    rows = {(r.ts, r.layer, r.component): r
            for r in wh.read("job_path", [D]).filter("job_id = 'J1'").collect()}
    assert set(rows) == {(_t(h), layer, c) for h in ("10:00", "10:03")
                         for layer, c in (("compute", "n1"), ("ost", OST1), ("ost", OST2))}
    first = rows[(_t("10:00"), "ost", OST1)]
    assert (first.write_bytes, first.ops, first.kind, first.attribution) == (
        100.0 * MIB, 100.0, "ost", "exact")
    assert first.lost_s == pytest.approx(610.0)
    assert rows[(_t("10:03"), "ost", OST1)].lost_s == pytest.approx(610.0)
    assert rows[(_t("10:00"), "ost", OST2)].lost_s == 0.0
    assert first.rate_ratio == pytest.approx(0.5)
    assert first.share == pytest.approx(0.5)
    node = rows[(_t("10:00"), "compute", "n1")]
    assert (node.write_bytes, node.lost_s) == (200.0 * MIB, 0.0)
    healthy = wh.read("job_path", [D]).filter("job_id = 'J3'").agg({"lost_s": "sum"}).first()
    assert healthy[0] == 0.0
    mdt = wh.read("job_path", [D]).filter("job_id = 'J4'").collect()
    assert {(r.layer, r.component, r.kind, r.md_ops, r.lost_s, r.lost_load_s) for r in mdt} == {
        ("compute", "n4", "compute", 5000.0, 0.0, None), ("mds", MDT, "mdt", 5000.0, 0.0, 400.0)}
    assert all(r.lost_load_s is None for r in rows.values())   # J1 used no busy target


def test_why_names_the_ost_with_its_evidence(day):
    wh, site, _ = day
    d = diagnose(wh, site, "J1")
    top = d.causes[0]
    assert (top.kind, top.name) == ("component", OST1)
    assert top.share == pytest.approx(1.0)
    assert "command groups" in top.evidence and "10:00-10:03" in top.evidence


def test_why_names_the_neighbour_on_a_busy_target(day):
    wh, site, _ = day
    d = diagnose(wh, site, "J4")
    assert d.lost_s == pytest.approx(400.0)
    nb = [c for c in d.causes if c.kind == "neighbour"]
    assert [(c.name, round(c.share, 6)) for c in nb] == [("J5", 0.5)]
    assert "MDT fs2-MDT0000" in nb[0].evidence and "NRS" in nb[0].recommendation
    assert "on average 50 % of its traffic in the 1 capture windows" in nb[0].evidence


def test_a_day_without_captures_gets_an_empty_path(spark, tmp_path):
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(tmp_path / "wh"))
    assert build_job_path(wh, load_site("archer"), D) == (
        "no job paths: no Lustre captures for the day")
    assert wh.read("job_path", [D]).count() == 0


def test_why_page_draws_compute_to_targets_without_forwarding(day, tmp_path):
    from lassi.report.why_page import _interval_s, _layers, job_path_frame, write_page

    wh, site, _ = day
    d = diagnose(wh, site, "J1")
    path = job_path_frame(wh, d)
    assert [k for k, _ in _layers(path)] == ["compute", "ost", "mds"]
    assert _interval_s(path) == 180.0
    page = write_page(wh, d, tmp_path / "J1.html", path)
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "J1_components.png", "J1_layers.png", "J1_path.png"]
    assert "fs2-OST0001" in page.read_text()


def test_shared_neighbours_come_from_busy_targets_not_forwarding_load(spark):
    """A forwarding node's load part (Beacon) is the interference stage's: only OST/MDT rows
    with load name neighbours here. A and B share fwd0 (A's load there) and OST1 (A's load
    there, B with 3 of its 4 bytes)."""
    from lassi.core.schemas import JOB_PATH
    from lassi.core.sqltext import sql

    def hop(job, layer, comp, kind, nbytes, load):
        return schema_row(JOB_PATH, job_id=job, ts=_t("10:00"), layer=layer, component=comp,
                          kind=kind, read_bytes=nbytes, write_bytes=0.0, ops=1.0, md_ops=0.0,
                          attribution="exact", lost_s=0.0, lost_load_s=load, date=D)

    rows = [hop("A", "forwarding", "fwd0", "fwd", 1.0, 30.0), hop("B", "forwarding", "fwd0",
                                                                      "fwd", 9.0, None),
            hop("A", "ost", OST1, "ost", 1.0, 10.0), hop("B", "ost", OST1, "ost", 3.0, None)]
    df = spark.createDataFrame(rows, JOB_PATH)
    df.filter("job_id = 'A'").createOrReplaceTempView("dg_path")
    df.createOrReplaceTempView("dg_day_path")
    got = [r.asDict() for r in spark.sql(sql("siox/steps/diagnosis_shared", window_s=180,
                                             max_neighbours=5)).collect()]
    assert [(r["neighbour"], r["target"]) for r in got] == [("B", f"OST {OST1}")]
    assert (got[0]["weight"], got[0]["self_weight"], got[0]["windows"]) == (0.75, 0.25, 1)
