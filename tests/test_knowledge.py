"""SIOX's knowledge base (stage `component_baseline`): component_minute and its percentiles,
on hand-made raw Beacon layers whose expected values are worked out below."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from lassi.core.config import load_site
from lassi.core.schemas import (
    APP_RUN,
    COMPONENT_ANOMALY,
    FWD_MAP,
    PATH_COMPONENT,
    RAW_LUSTRE_CLIENT,
    RAW_LUSTRE_STATS,
    RAW_LWFS_SERVER,
    RAW_MDS,
    RAW_OST,
)
from lassi.siox.knowledge import bucket_mids, build_component_baseline
from tests.conftest import schema_row

D = dt.date(2018, 2, 25)
OST0, OST1 = "online1-OST0000", "online1-OST0001"
MiB = 1 << 20


def _t(hms: str) -> dt.datetime:
    return dt.datetime.combine(D, dt.time.fromisoformat(hms))


def _client(fwd, ost, hms, read=None, write=None, pages=256, wait_us=None):
    return schema_row(RAW_LUSTRE_CLIENT, fwd=fwd, ip="ip", ts=_t(hms), ost=ost, read_rpc=0,
                      write_rpc=0, pages_per_rpc=pages, read_rpc_delta=read,
                      write_rpc_delta=write, interval_s=10.0, reset=False,
                      rpc_wait_us_delta=wait_us, date=D)


def _ost(ost, hms, rpcs=None):
    delta = None if rpcs is None else rpcs * MiB
    return schema_row(RAW_OST, ost=ost, oss="online1-oss01", ts=_t(hms), read_rpc=0,
                      write_rpc=0, pages_per_rpc=256, read_bytes=0, write_bytes=0,
                      read_rpc_delta=rpcs, write_rpc_delta=None if rpcs is None else 0,
                      read_bytes_delta=delta, write_bytes_delta=None if rpcs is None else 0,
                      interval_s=10.0, reset=False, date=D)


def _lwfs(op_class, kind, hms, hist=None, queue=None):
    return schema_row(RAW_LWFS_SERVER, fwd="fwd000", ip="ip", ts=_t(hms), op_class=op_class,
                      kind=kind, hist_delta=hist, requests=None if hist is None else sum(hist),
                      queue_len=queue, reset=False, date=D)


def _mds(source, node, ops):
    return schema_row(RAW_MDS, mds="online1-mds01", source=source, source_node=node,
                      source_kind="forwarding", ts=_t("00:00:30"), ops=ops, interval_s=10.0,
                      reset=False, date=D)


def _run(job, nodes, a, b):
    return schema_row(APP_RUN, app_id=job, job_id=job, nodes=nodes, n_nodes=len(nodes),
                      start=_t(a), end=_t(b), source="beacon-job", date=D)


@pytest.fixture(scope="module")
def knowledge(spark, tmp_path_factory):
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(tmp_path_factory.mktemp("wh")))
    wh.write_rows([schema_row(FWD_MAP, node=n, fwd=f, date=D)
                   for n, f in (("cn00000", "fwd000"), ("cn00001", "fwd000"),
                                ("cn00002", "fwd001"))], "fwd_map")
    wh.write_rows([_run("J1", ["cn00000", "cn00001"], "00:00:00", "00:10:00"),
                   _run("J2", ["cn00000"], "00:05:00", "00:20:00"),
                   _run("J3", ["cn00002"], "00:00:00", "01:00:00")], "app_run")
    wh.write_rows([_client("fwd000", OST0, "00:00:10"),             # first sample: no delta
                   _client("fwd000", OST0, "00:00:20", read=10, write=0, wait_us=40_000),
                   _client("fwd000", OST0, "00:01:10", read=0, write=5, pages=128),
                   _client("fwd001", OST1, "00:00:20", read=4, write=0)], "raw_lustre_client")
    wh.write_rows([_ost(OST0, "00:00:10"), _ost(OST0, "00:00:20", 10),
                   _ost(OST1, "00:00:20", 4)], "raw_ost")
    wh.write_rows([_lwfs("Read", "exe", "00:00:10"),
                   _lwfs("Read", "exe", "00:00:20", [0, 6, 4, 0, 0, 0, 0, 0]),
                   _lwfs("Read", "wait", "00:00:20", [10, 0, 0, 0, 0, 0, 0, 0]),
                   _lwfs("Queue", "length", "00:00:10", queue=2),
                   _lwfs("Queue", "length", "00:00:20", queue=4)], "raw_lwfs_server")
    wh.write_rows([_mds("20.0.2.100", "fwd000", 30), _mds("login01", "login01", 12)], "raw_mds")
    wh.write_rows([schema_row(PATH_COMPONENT, component=OST0, kind="ost", level=3,
                              software=["ost"], peak_bw=float(MiB), peak_iops=1.0,
                              source="site", date=D)], "path_component", [D])
    # OST1 ran far below its peak 00:00-00:10 (system rule): its minute is not "normal"
    wh.write_rows([schema_row(COMPONENT_ANOMALY, kind="ost", component=OST1, rule="system",
                              start=_t("00:00"), end=_t("00:10"), duration_min=10,
                              ongoing=False, date=D)], "component_anomaly", [D])
    site = load_site("taihulight", nodes=1024)
    summary = build_component_baseline(wh, site, D)
    minutes = {(r["component"], r["ts"].strftime("%H:%M")): r
               for r in wh.read("component_minute", [D]).collect()}
    base = {(r["component"], r["metric"], r["size_class"], r["load_class"]): r
            for r in wh.read("component_baseline", [D]).collect()}
    return wh, site, summary, minutes, base


def test_ost_rpc_wait_by_utilisation_class(knowledge):
    """OST0 at 00:00: 10 RPCs of 1 MiB in the minute, its client waited 40 ms for them ->
    rpc_s 4 ms; utilisation 10/60 of 1 RPC/s + 10 MiB/60 of 1 MiB/s = 1/3 -> u30-60%, the
    class its rpc_s baseline is kept under, pooled over the file system's OSTs
    (`online1-OST*`). OST1 (no peaks, no wait): neither."""
    _, _, _, minutes, base = knowledge
    m = minutes[(OST0, "00:00")]
    assert m["rpc_s"] == pytest.approx(0.004)
    assert m["util_class"] == "u30-60%"
    b = base[("online1-OST*", "rpc_s", m["size_class"], "u30-60%")]
    assert (b["n"], b["p50"]) == (1, pytest.approx(0.004))
    assert not [k for k in base if k[1] == "rpc_s" and k[0] != "online1-OST*"]
    assert (minutes[(OST1, "00:00")]["rpc_s"], minutes[(OST1, "00:00")]["util_class"]) \
        == (None, None)


def test_forwarding_nodes_pooled(spark, warehouse):
    """fwd0 served 3 minutes at 2 ms a request; fwd1 3 minutes at 2 ms, then 4 at 40 ms
    outside any anomaly window. fwd1's own median became 40 ms (a fault longer than its
    normal); the pool's ten minutes (six at 2 ms) keep 2 ms, and component_state judges
    fwd1's slow minutes against the pool: excess 40/2 - 1 = 19."""
    from lassi.core.schemas import COMPONENT_MINUTE
    from lassi.core.sqltext import sql
    from lassi.siox.knowledge import FWD_POOL, component_baseline, ost_pool_sql

    def minute(fwd, k, exe):
        return schema_row(COMPONENT_MINUTE, component=fwd, kind="fwd",
                          ts=_t("10:00") + dt.timedelta(minutes=k), interval_s=60,
                          read_bytes=60.0 * MiB, write_bytes=0.0, read_ops=60.0,
                          write_ops=0.0, md_ops=0.0, bw=float(MiB), iops=1.0,
                          size_class="1M-4M", clients=1, load_class="1", exe_s=exe,
                          wait_s=0.001, date=D)

    slow = [minute("fwd1", k, 0.040) for k in range(3, 7)]
    warehouse.write_rows([*(minute("fwd0", k, 0.002) for k in range(3)),
                          *(minute("fwd1", k, 0.002) for k in range(3)), *slow],
                         "component_minute", [D])
    site = load_site("taihulight", nodes=1024)
    base = {(r["component"], r["metric"], r["size_class"], r["load_class"]): r
            for r in component_baseline(warehouse, site, D).collect()}
    own, pool = base[("fwd1", "exe_s", "all", "all")], base[(FWD_POOL, "exe_s", "all", "all")]
    assert (own["n"], own["p50"]) == (7, pytest.approx(0.040))
    assert (pool["n"], pool["p50"], pool["kind"]) == (10, pytest.approx(0.002), "fwd")
    assert base[(FWD_POOL, "wait_s", "1M-4M", "1")]["n"] == 10
    assert (FWD_POOL, "bw", "all", "all") not in base        # only the service times pool
    warehouse.write(component_baseline(warehouse, site, D), "component_baseline", [D])
    warehouse.read("component_minute", [D]).createOrReplaceTempView("jp_minute")
    warehouse.read("component_baseline", [D]).createOrReplaceTempView("jp_baseline")
    state = spark.sql(sql("siox/steps/component_state", ost_pool=ost_pool_sql("component"),
                          fwd_pool=FWD_POOL)).filter("component = 'fwd1'").collect()
    for r in state:
        assert r["base_exe_s"] == pytest.approx(0.002)
        assert r["base_lat_s"] == pytest.approx(0.003)
    assert sorted(round(r["exe_s"] / r["base_exe_s"] - 1, 6) for r in state) == [0.0] * 3 + [
        19.0] * 4


def test_bucket_mids():
    assert bucket_mids([0, 0.001, 0.01, 1000]) == pytest.approx(
        [0.0005, math.sqrt(1e-5), math.sqrt(1e1), 2000])


def test_component_minutes_by_hand(knowledge):
    _, _, summary, m, _ = knowledge
    assert set(m) == {(OST0, "00:00"), (OST1, "00:00"), ("fwd000", "00:00"),
                      ("fwd000", "00:01"), ("fwd001", "00:00"), ("online1-mds01", "00:00")}
    assert summary.startswith("6 component-minutes of 5 components")
    o = m[(OST0, "00:00")]           # 10 RPCs of 1 MiB; fwd000 sent them
    assert (o["kind"], o["read_bytes"], o["read_ops"], o["interval_s"]) == ("ost", 10 * MiB, 10, 60)
    assert o["bw"] == pytest.approx(10 * MiB / 60) and o["iops"] == pytest.approx(10 / 60)
    assert (o["size_class"], o["clients"], o["load_class"]) == ("1M-4M", 1, "1")
    f = m[("fwd000", "00:00")]       # J1 runs on its nodes in the minute, J2 starts at 00:05
    assert (f["read_bytes"], f["read_ops"], f["clients"]) == (10 * 256 * 4096, 10, 1)
    mids = bucket_mids([0, 0.001, 0.01, 0.1, 1, 10, 100, 1000])
    assert f["exe_s"] == pytest.approx((6 * mids[1] + 4 * mids[2]) / 10)
    assert f["wait_s"] == pytest.approx(mids[0]) and f["queue_len"] == pytest.approx(3.0)
    g = m[("fwd000", "00:01")]       # no LWFS sample: requests are the 5 RPCs of 512 KiB
    assert (g["write_bytes"], g["write_ops"], g["size_class"]) == (5 * 128 * 4096, 5, "256K-1M")
    assert g["exe_s"] is None
    assert m[("fwd001", "00:00")]["clients"] == 1          # J3
    md = m[("online1-mds01", "00:00")]
    assert (md["kind"], md["md_ops"], md["clients"], md["bw"]) == ("mds", 42, 2, 0.0)


def test_baseline_percentiles_by_hand(knowledge):
    _, _, _, m, base = knowledge
    bw = base[("fwd000", "bw", "all", "all")]   # two busy minutes: 10 MiB and 2.5 MiB
    hi, lo = m[("fwd000", "00:00")]["bw"], m[("fwd000", "00:01")]["bw"]
    assert bw["n"] == 2 and bw["mean"] == pytest.approx((hi + lo) / 2)
    assert (bw["p10"], bw["p50"], bw["p90"]) == (pytest.approx(lo), pytest.approx(lo),
                                                 pytest.approx(hi))
    one = base[("fwd000", "bw", "1M-4M", "1")]
    assert one["n"] == 1 and one["p50"] == pytest.approx(hi)
    exe = base[("fwd000", "exe_s", "1M-4M", "all")]
    assert exe["n"] == 1 and exe["p50"] == pytest.approx(m[("fwd000", "00:00")]["exe_s"])
    md = base[("online1-mds01", "md_ops", "none", "2-3")]
    assert md["n"] == 1 and md["p50"] == pytest.approx(42 / 60)
    assert ("online1-mds01", "bw", "all", "all") not in base       # no data moved
    assert not [k for k in base if k[0] == OST1]    # its only minute is in its anomaly
    assert all(r["period_start"] == D - dt.timedelta(days=29) and r["period_end"] == D
               for r in base.values())


def test_rerun_is_idempotent_and_a_site_without_beacon_layers_writes_nothing(knowledge, warehouse):
    wh, site, _, m, base = knowledge
    build_component_baseline(wh, site, D)
    assert wh.read("component_minute", [D]).count() == len(m)
    assert wh.read("component_baseline", [D]).count() == len(base)
    summary = build_component_baseline(warehouse, load_site("archer", nodes=4), D)
    assert "no forwarding-node, OST or MDS observations" in summary
    assert warehouse.read("component_minute", [D]).count() == 0


def _stat(target, kind, hms, counter, samples, total=None, nid=None):
    return schema_row(RAW_LUSTRE_STATS, server="oss", target=target, fs="fs2", kind=kind,
                      nid=nid, snapshot_time=_t(hms), counter=counter, samples=samples,
                      sum=total, date=D)


def test_lustre_targets_per_capture_window(warehouse):
    """Export-statistics sites: an OST's and an MDT's own counters per 3-minute window, the
    exports that moved as its clients (B is listed again only when it changed)."""
    ost, mdt = "fs2-OST0000", "fs2-MDT0000"
    rows = [_stat(ost, "target", t, "read_bytes", n, n * MiB)
            for t, n in (("00:00:00", 100), ("00:03:00", 110), ("00:06:00", 130))]
    rows += [_stat(ost, "export", t, "read_bytes", n, n * MiB, nid=nid)
             for t, n, nid in (("00:00:00", 50, "A"), ("00:03:00", 60, "A"), ("00:06:00", 70, "A"),
                               ("00:00:00", 50, "B"), ("00:06:00", 60, "B"))]
    rows += [_stat(mdt, "target", t, c, n)
             for t, c, n in (("00:00:00", "open", 50), ("00:03:00", "open", 60),
                             ("00:06:00", "open", 75), ("00:00:00", "close", 50),
                             ("00:03:00", "close", 55), ("00:06:00", "close", 55))]
    warehouse.write_rows(rows, "raw_lustre_stats")
    build_component_baseline(warehouse, load_site("archer", nodes=16), D)
    m = {(r["component"], r["ts"].strftime("%H:%M")): r
         for r in warehouse.read("component_minute", [D]).collect()}
    assert set(m) == {(ost, "00:00"), (ost, "00:03"), (mdt, "00:00"), (mdt, "00:03")}
    a, b = m[(ost, "00:00")], m[(ost, "00:03")]
    assert (a["kind"], a["interval_s"], a["read_bytes"], a["read_ops"], a["clients"]) == (
        "ost", 180, 10 * MiB, 10, 1)
    assert (b["read_bytes"], b["read_ops"], b["clients"], b["load_class"]) == (
        20 * MiB, 20, 2, "2-3")
    assert a["bw"] == pytest.approx(10 * MiB / 180) and a["size_class"] == "1M-4M"
    assert (m[(mdt, "00:00")]["md_ops"], m[(mdt, "00:03")]["md_ops"]) == (15, 15)
    assert m[(mdt, "00:00")]["kind"] == "mdt"


def test_report_section(knowledge):
    from lassi.report.siox import siox_section
    from lassi.siox.path_model import build_io_path

    wh, site, _, _, _ = knowledge
    assert siox_section(wh, site, D + dt.timedelta(days=1)) == ""       # io_path not run
    build_io_path(wh, site, D)
    html = siox_section(wh, site, D)
    assert f'<h2 id="siox-{D}">I/O path (SIOX), {D}</h2>' in html
    # 1,024 compute nodes; 2 forwarding nodes of 2.5e9 B/s = 4.66 GiB/s in all
    assert "<td>compute nodes</td><td class=\"num\">1,024</td>" in html
    assert "4.66 GiB/s" in html
    # knowledge base: fwd000 busy 2 minutes + fwd001 1; fwd000's exe time median 14.55 ms
    assert "<td>forwarding nodes</td><td class=\"num\">2</td><td class=\"num\">3</td>" in html
    assert "14.55 ms" in html
