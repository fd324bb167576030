"""SIOX stage `job_path`: the pinpoint per hour and a job's hops with the time lost on each,
on a hand-made day whose values are worked out below (the knowledge base and job time
series written directly, so only this stage is under test)."""

from __future__ import annotations

import datetime as dt

import pytest

from lassi.core.config import load_site
from lassi.core.schemas import (
    APP_HOUR,
    APP_RUN,
    COMPONENT_BASELINE,
    COMPONENT_MINUTE,
    FWD_MAP,
    JOB_TIMESERIES,
    PATH_COMPONENT,
    RAW_LUSTRE_CLIENT,
    RUN_SLOWDOWN,
)
from lassi.evaluate.diagnosis import evaluate_diagnosis, truth_top
from lassi.siox.diagnosis import build_job_diagnosis
from lassi.siox.job_path import build_job_path
from lassi.tools.why import WhyError, diagnose
from tests.conftest import schema_row

D = dt.date(2018, 2, 25)
OST1, OST2 = "online1-OST0001", "online1-OST0002"
THREADS = 4
REQ = 4000.0                     # the job's LWFS requests at fwd0 in each minute
BASE_EXE, BASE_WAIT = 0.002, 0.001
BASE_RPC = 0.1                   # an OST's normal wait per RPC at its clients (12:00)


def _t(hms: str) -> dt.datetime:
    return dt.datetime.combine(D, dt.time.fromisoformat(hms))


def _minute(fwd, hms, exe):
    return schema_row(COMPONENT_MINUTE, component=fwd, kind="fwd", ts=_t(hms), interval_s=60,
                      read_bytes=1e9, write_bytes=0.0, read_ops=1e4, write_ops=0.0, md_ops=0.0,
                      bw=1e9 / 60, iops=1e4 / 60, size_class="64K-1M", clients=1,
                      load_class="1", exe_s=exe, wait_s=BASE_WAIT, queue_len=0.0, date=D)


def _base(fwd, metric, p50, kind="fwd"):
    return schema_row(COMPONENT_BASELINE, component=fwd, kind=kind, metric=metric,
                      size_class="all", load_class="all", n=100, p10=p50, p50=p50, p90=p50,
                      mean=p50, period_start=D, period_end=D, date=D)


def _rpcs(fwd, ost, hms, n, wait_s=None):
    """n Lustre RPCs from fwd to ost in a sample whose interval's midpoint is in hms' minute
    (the client waiting wait_s seconds in all for the replies, when given)."""
    wait = None if wait_s is None else int(wait_s * 1e6)
    return schema_row(RAW_LUSTRE_CLIENT, fwd=fwd, ip="ip", ts=_t(hms), ost=ost, read_rpc=0,
                      write_rpc=0, pages_per_rpc=256, read_rpc_delta=n, write_rpc_delta=0,
                      interval_s=10.0, reset=False, rpc_wait_us=wait, rpc_wait_us_delta=wait,
                      date=D)


def _ost_minute(ost, hms, rpc_s):
    return schema_row(COMPONENT_MINUTE, component=ost, kind="ost", ts=_t(hms), interval_s=60,
                      read_bytes=5e7, write_bytes=0.0, read_ops=50.0, write_ops=0.0,
                      md_ops=0.0, bw=5e7 / 60, iops=50 / 60, size_class="64K-1M", clients=1,
                      load_class="1", rpc_s=rpc_s, date=D)


def _ts(layer, component, hms, read_ops=0.0, read_bytes=0.0):
    return schema_row(JOB_TIMESERIES, job_id="J", layer=layer, component=component,
                      ts=_t(hms), interval_s=60, read_bytes=read_bytes, write_bytes=0.0,
                      read_ops=read_ops, write_ops=0.0, md_ops=0.0, share=None, date=D)


@pytest.fixture(scope="module")
def day(spark, tmp_path_factory):
    """10:00: fwd0 serves a request in 2x its normal execution time while fwd1 (same OSTs)
    is normal -> fwd0 is at fault (beta 1). 11:00: both forwarding nodes slowed in
    proportion to their share of RPCs to OST1 (fwd0 half: excess 1.0; fwd1 0.8: 1.6) ->
    OST1 at fault (beta 2). 12:00: fwd0 alone, 2x slow again, and its Lustre client reports
    its wait: 50 RPCs to OST1 in the normal 50 x 0.1 s, 50 to OST2 in 25 s (5x: beta 4) ->
    OST2 at fault on that direct evidence; its extra 20 s of wait are the whole expected
    thread time of fwd0's minute (10,000 requests x 2 ms), so it explains all of fwd0's
    excess (1.0) and fwd0 itself is not named (the fit alone could not tell)."""
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(tmp_path_factory.mktemp("jp") / "wh"))
    site = load_site("taihulight")
    minutes = [_minute("fwd0", "10:00", 2 * BASE_EXE), _minute("fwd1", "10:00", BASE_EXE),
               _minute("fwd0", "11:00", 2 * BASE_EXE), _minute("fwd1", "11:00", 2.6 * BASE_EXE),
               _minute("fwd0", "12:00", 2 * BASE_EXE),
               _ost_minute(OST1, "12:00", BASE_RPC), _ost_minute(OST2, "12:00", 5 * BASE_RPC)]
    wh.write_rows(minutes, "component_minute", [D])
    wh.write_rows([_base(f, m, v) for f in ("fwd0", "fwd1")
                   for m, v in (("exe_s", BASE_EXE), ("wait_s", BASE_WAIT))]
                  + [_base("online1-OST*", "rpc_s", BASE_RPC, "ost")],   # the OSTs' pool
                  "component_baseline", [D])
    client = [_rpcs("fwd0", OST1, "10:00:30", 50), _rpcs("fwd0", OST2, "10:00:30", 50),
              _rpcs("fwd1", OST1, "10:00:30", 50), _rpcs("fwd1", OST2, "10:00:30", 50),
              _rpcs("fwd0", OST1, "11:00:30", 50), _rpcs("fwd0", OST2, "11:00:30", 50),
              _rpcs("fwd1", OST1, "11:00:30", 80), _rpcs("fwd1", OST2, "11:00:30", 20),
              _rpcs("fwd0", OST1, "12:00:30", 50, 50 * BASE_RPC),
              _rpcs("fwd0", OST2, "12:00:30", 50, 50 * 5 * BASE_RPC)]
    wh.write_rows(client, "raw_lustre_client", [D])
    hours = ("10:00", "11:00", "12:00")
    series = [_ts("compute", "cn0", hms, read_ops=REQ) for hms in hours]
    series += [_ts("forwarding", "fwd0", hms, read_bytes=1e8) for hms in hours]
    series += [_ts("ost", OST1, hms, read_bytes=5e7) for hms in ("10:00", "11:00")]
    series += [_ts("ost", OST2, "12:00", read_bytes=5e7)]
    wh.write_rows(series, "job_timeseries", [D])
    wh.write_rows([schema_row(FWD_MAP, node="cn0", fwd="fwd0", date=D)], "fwd_map", [D])
    wh.write_rows([schema_row(PATH_COMPONENT, component=f, kind="fwd", level=1,
                              software=["lwfs-server"], threads=THREADS, source="site", date=D)
                   for f in ("fwd0", "fwd1")], "path_component", [D])
    wh.write_rows([schema_row(APP_RUN, app_id="J", job_id="J", user="u", exe="app.x",
                              nodes=["cn0"], n_nodes=1, start=_t("09:59"), end=_t("12:30"),
                              source="beacon-job", date=D)], "app_run", [D])
    summary = build_job_path(wh, site, D)
    return wh, summary


def test_pinpoint_names_the_slow_forwarding_node_then_the_slow_ost(day):
    wh, summary = day
    pins = [(r.hour.hour, r.component, r.kind, round(r.beta, 6), round(r.explained, 6),
             r.evidence)
            for r in wh.read("component_pinpoint", [D]).orderBy("hour", "rank").collect()]
    # 10:00: excess (1.0, 0.0); fwd0 removes 1.0 of 1.0 (OST1/OST2: 0.5 each) -> beta 1
    # 11:00: excess (1.0, 1.6) = 2 x OST1 share (0.5, 0.8) -> beta 2, all of it explained
    # 12:00: OST2's clients waited 25 s for 5 s expected -> beta 4; part 20 s / 20 s = 1.0
    assert pins == [(10, "fwd0", "fwd", 1.0, 1.0, "lwfs_fit"),
                    (11, OST1, "ost", 2.0, 1.0, "lwfs_fit"),
                    (12, OST2, "ost", 4.0, 1.0, "rpc_wait")]
    assert "fwd0" in summary and OST1 in summary and OST2 in summary


def test_job_hops_time_and_lost_seconds(day):
    wh, _ = day
    rows = {(r.ts.hour, r.component): r for r in wh.read("job_path", [D]).collect()}
    assert set(rows) == ({(h, c) for h in (10, 11) for c in ("cn0", "fwd0", OST1)}
                         | {(12, c) for c in ("cn0", "fwd0", OST2)})
    lat, base = 2 * BASE_EXE + BASE_WAIT, BASE_EXE + BASE_WAIT
    spent, expected = REQ * lat / THREADS, REQ * base / THREADS        # 5.0 s, 3.0 s
    for hour in (10, 11, 12):
        fwd = rows[(hour, "fwd0")]
        assert (fwd.layer, fwd.kind, fwd.attribution) == ("forwarding", "fwd", "share")
        assert fwd.spent_s == pytest.approx(spent)
        assert fwd.expected_s == pytest.approx(expected)
        assert fwd.rate_ratio == pytest.approx(base / lat)
        assert fwd.lost_load_s == pytest.approx(0.0)
        assert rows[(hour, "cn0")].attribution == "exact"
        assert rows[(hour, "cn0")].lost_s == 0
    # 10:00 the forwarding node itself is at fault: its 2 s land on its own row
    assert rows[(10, "fwd0")].lost_s == pytest.approx(spent - expected)
    assert rows[(10, OST1)].lost_s == 0
    # 11:00 OST1 predicts fwd0's whole excess (2 x 0.5 = 1.0): the 2 s land on OST1's row
    assert rows[(11, "fwd0")].lost_s == 0
    assert rows[(11, OST1)].lost_s == pytest.approx(spent - expected)
    # 12:00 OST2's measured part is fwd0's whole excess: the 2 s land on OST2's row, which
    # carries its clients' wait per RPC against its knowledge base (5x: rate 0.2)
    assert rows[(12, "fwd0")].lost_s == 0
    ost2 = rows[(12, OST2)]
    assert ost2.lost_s == pytest.approx(spent - expected)
    assert (ost2.lat_s, ost2.base_lat_s) == (pytest.approx(5 * BASE_RPC), pytest.approx(BASE_RPC))
    assert ost2.rate_ratio == pytest.approx(0.2)


def test_a_day_without_job_time_series_gets_an_empty_path(spark, tmp_path):
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(tmp_path / "wh"))
    summary = build_job_path(wh, load_site("taihulight"), D)
    assert summary == "no job paths: no job time series for the day"
    assert wh.read("job_path", [D]).count() == 0


def test_why_ranks_the_components_on_the_path(day):
    wh, _ = day
    d = diagnose(wh, load_site("taihulight"), "J")
    assert d.date == D and d.runtime_s == pytest.approx(151 * 60)
    out = d.as_json()
    assert set(out) >= {"job_id", "slowdown", "lost_s", "causes"}
    assert out["job_id"] == "J" and out["slowdown"] is None
    # lost: 2 s at fwd0 (10:00) + 2 s at OST1 (11:00) + 2 s at OST2 (12:00), no history
    assert out["lost_s"] == pytest.approx(6.0)
    got = sorted((c["kind"], c["name"], round(c["share"], 6)) for c in out["causes"])
    assert got == [("component", "fwd0", 0.333333), ("component", OST1, 0.333333),
                   ("component", OST2, 0.333333)]
    (ost2,) = [c for c in out["causes"] if c["name"] == OST2]
    assert "(service up to 5.0x its normal time)" in ost2["evidence"]
    assert all(set(c) == {"kind", "name", "share", "evidence", "recommendation"}
               for c in out["causes"])
    assert any("no command-group history" in n for n in out["notes"])
    assert not any("one forwarding node" in n for n in out["notes"])
    # at 64 nodes the site has one forwarding node: fwd0's slowness and OST1's are confounded
    small = diagnose(wh, load_site("taihulight", nodes=64), "J")
    assert any("one forwarding node" in n and "may be the forwarding node" in n
               for n in small.notes)


def test_why_page_draws_the_path(day, tmp_path):
    from lassi.report.why_page import write_page

    wh, _ = day
    d = diagnose(wh, load_site("taihulight"), "J")
    page = write_page(wh, d, tmp_path / "why" / "J.html")
    html = page.read_text()
    assert "Why was job J slow?" in html and "<b>fwd0</b>" in html and f"<b>{OST1}</b>" in html
    for part in ("path", "layers", "components"):
        png = tmp_path / "why" / f"J_{part}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="J_{part}.png"' in html


def test_why_of_an_unknown_job_says_so(day):
    wh, _ = day
    with pytest.raises(WhyError, match="job nope is not in the warehouse"):
        diagnose(wh, load_site("taihulight"), "nope")


def test_job_diagnosis_stage_explains_a_slowed_job(day):
    """J slowed against its command group (run_slowdown: 5460 s vs a 4000 s mean): 1460 s
    lost; the path explains 2 + 2 + 2 s, the rest is history (no job_summary: no pattern
    flagged)."""
    wh, _ = day
    site = load_site("taihulight")
    wh.write_rows([schema_row(RUN_SLOWDOWN, app_id="J", source="beacon-job", runtime_s=5460.0,
                              group_runs=5, group_mean_s=4000.0, slowdown=1.365, slowed=True,
                              risk_oss_sum=0.0, risk_mds_sum=0.0, date=D)], "run_slowdown", [D])
    try:
        summary = build_job_diagnosis(wh, site, D)
        assert summary == "1 jobs diagnosed, 1 lost time; top cause: 1 history"
        rows = [(r.rank, r.kind, r.name, round(r.lost_s, 6), round(r.job_lost_s, 6))
                for r in wh.read("job_diagnosis", [D]).orderBy("rank").collect()]
        assert rows == [(1, "history", "slower-than-group", 1454.0, 1460.0),
                        (2, "component", "fwd0", 2.0, 1460.0),
                        (3, "component", OST1, 2.0, 1460.0),
                        (4, "component", OST2, 2.0, 1460.0)]
        d = diagnose(wh, site, "J")                    # read back from the table
        assert d.slowdown == pytest.approx(1.365) and d.lost_s == pytest.approx(1460.0)
        assert [c.name for c in d.causes] == ["slower-than-group", "fwd0", OST1, OST2]
        assert d.causes[0].share == pytest.approx(1454 / 1460)
        assert "1.36x the mean of its 5 command-group runs" in d.causes[0].evidence
        # scored against a truth in which fwd0 cost J most (80 of 100 s lost)
        run = {"run_no": 1, "job_id": "J", "start": "2018-02-25T09:59:00", "slowdown": 1.6,
               "slowed": True,
               "lost_s": 100.0, "components": [{"name": "fwd0", "lost_s": 80.0}],
               "neighbours": [], "neighbours_lost_s": 0.0}
        res = evaluate_diagnosis(wh, {"runs": [run]}, D, D)
        assert (res["slowed_runs"], res["top_cause_right"]) == (1, 0)   # lassi: history
        assert (res["component_runs"], res["component_named"]) == (1, 1)
        assert res["by_truth_kind"] == {"component": {"runs": 1, "right": 0}}
        assert (res["sim_slowed_runs"], res["sim_slowed_right"]) == (1, 0)
    finally:
        wh.write(wh.read("run_slowdown", []), "run_slowdown", [D])
        wh.write(wh.read("job_diagnosis", []), "job_diagnosis", [D])


def test_truth_top_cause():
    jobs = {7: "J7"}
    run = {"lost_s": 100.0, "components": [{"name": "OST1", "lost_s": 30.0}],
           "neighbours": [{"run_no": 7, "lost_s": 45.0}], "neighbours_lost_s": 45.0}
    assert truth_top(run, jobs) == ("neighbour", "J7", 45.0)
    run["components"][0]["lost_s"] = 50.0
    assert truth_top(run, jobs) == ("component", "OST1", 50.0)
    run = {"lost_s": 100.0, "components": [{"name": "OST1", "lost_s": 10.0}],
           "neighbours": [], "neighbours_lost_s": 0.0}
    assert truth_top(run, jobs) == ("own", None, 90.0)


def test_why_of_a_job_without_beacon_profile_uses_lassi_counters(day):
    """Job K (no trace, no path): slowed 3600 s against a 3000 s mean -> 600 s lost; its
    app_hour counters say 1000 requests of 4 KiB on average -> the small-requests pattern
    explains all of it; 200 metadata ops/s stay under high_mdops (300)."""
    from pyspark.sql.types import DoubleType, LongType

    wh, _ = day
    site = load_site("taihulight")
    wh.write_rows([schema_row(APP_RUN, app_id="K", job_id="K", exe="small.x", nodes=["cn9"],
                              n_nodes=1, start=_t("12:00"), end=_t("13:00"), source="pbs",
                              date=D)], "app_run", [D])
    zero = {f.name: (0.0 if isinstance(f.dataType, DoubleType) else 0)
            for f in APP_HOUR.fields if isinstance(f.dataType, (DoubleType, LongType))}
    hour = {**zero, "app_id": "K", "job_id": "K", "fs": "fs1", "hour": _t("12:00"),
            "node_windows": 20, "read_ops": 1000, "read_kb": 4000.0, "getattr": 720000,
            "read_kb_ops": None, "write_kb_ops": None, "date": D}
    wh.write_rows([schema_row(APP_HOUR, **hour)], "app_hour", [D])
    wh.write_rows([schema_row(RUN_SLOWDOWN, app_id="K", source="pbs", runtime_s=3600.0,
                              group_runs=4, group_mean_s=3000.0, slowdown=1.2, slowed=False,
                              risk_oss_sum=0.0, risk_mds_sum=0.0, date=D)], "run_slowdown", [D])
    try:
        d = diagnose(wh, site, "K")
        assert d.lost_s == pytest.approx(600.0)
        assert [(c.kind, c.name, round(c.share, 6)) for c in d.causes] == \
            [("pattern", "small-requests", 1.0)]
        assert d.causes[0].evidence == ("its 1,000 requests averaged 4.0 KiB (Lustre export "
                                        "counters), under 64 KiB")
        assert any("no causal path" in n for n in d.notes)
    finally:
        for t in ("app_hour", "run_slowdown"):
            wh.write(wh.read(t, []), t, [D])
        wh.write_rows([r for r in wh.read("app_run", [D]).collect() if r["job_id"] != "K"],
                      "app_run", [D])
