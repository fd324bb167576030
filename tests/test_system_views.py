"""Beacon system views (issue #4, item 4): hand-made raw layers -> view tables -> report.

Two days on a 1,024-node TaihuLight (fwd000, fwd001; OSTs at 5e8 B/s, fwd nodes 2.5e9 B/s):
D1 has both flags set and the forwarding-load cut-offs; D2 has both flags clear, no LWFS
server data (coverage unknown) and a fwd_map that overrides the peaks. Every expected
number below is worked out by hand from the rows.
"""

from __future__ import annotations

import datetime as dt

import pytest

from lassi.core.config import load_site
from lassi.core.schemas import schema_of

D1, D2 = dt.date(2018, 2, 25), dt.date(2018, 2, 26)
FS = "online1"
OST = [f"{FS}-OST{i:04x}" for i in range(3)]


def T(d: dt.date, h: int, m: int = 0, s: int = 0) -> dt.datetime:
    return dt.datetime(d.year, d.month, d.day, h, m, s)


def rows(table: str, items: list[dict]) -> list[tuple]:
    names = schema_of(table).fieldNames()
    defaults = {"reset": False, "count": 1}
    return [tuple(it.get(n, defaults.get(n)) for n in names) for it in items]


def ost_row(d, ost, ts, rb, wb, secs, oss=f"{FS}-oss01"):
    return dict(ost=ost, oss=oss, ts=ts, read_rpc=0, write_rpc=0, read_bytes=0, write_bytes=0,
                read_bytes_delta=rb, write_bytes_delta=wb, interval_s=secs, date=d)


def client_row(d, fwd, ts, ost, r_rpc, w_rpc, secs, pages=1):
    return dict(fwd=fwd, ip="20.0.2.100", ts=ts, ost=ost, read_rpc=0, write_rpc=0,
                pages_per_rpc=pages, read_rpc_delta=r_rpc, write_rpc_delta=w_rpc,
                interval_s=secs, date=d)


def mds_row(d, source, kind, ts, ops, secs, mds=f"{FS}-mds01"):
    return dict(mds=mds, source=source, source_node=source, source_kind=kind, ts=ts, ops=ops,
                interval_s=secs, date=d)


def trace_row(d, op, size, count, ts):
    return dict(node="cn00000", ip="20.0.8.0", ts=ts, op=op, fd="0x1", offset=0, size=size,
                count=count, date=d)


def server_row(d, cls, kind, requests):
    return dict(fwd="fwd000", ip="20.0.2.100", ts=T(d, 1), op_class=cls, kind=kind,
                requests=requests, date=d)


def job(d, job_id, mode, rb, wb, ch, **kw):
    base = dict(job_id=job_id, app=f"app_{job_id}", user="u1", n_nodes=4, n_io_nodes=4,
                read_bytes=rb, write_bytes=wb, io_mode=mode, core_hours=ch, date=d)
    base.update(kw)
    return base


# --- D1 -----------------------------------------------------------------------------------
# raw_ost: OST0 minute 00:01 (util 0.1), minute 10:00 (two samples, max 2.5e8 -> 0.5);
# OST1 has ost_map peak 1e9; OST2's 00:00:20 sample has its midpoint on the day before.
OST_D1 = [
    ost_row(D1, OST[0], T(D1, 0, 1), None, None, 60.0),            # first sample: no deltas
    ost_row(D1, OST[0], T(D1, 0, 2), 3_000_000_000, 0, 60.0),      # 5e7 B/s
    ost_row(D1, OST[0], T(D1, 10, 0, 30), 0, 7_500_000_000, 30.0),  # 2.5e8 B/s
    ost_row(D1, OST[0], T(D1, 10, 0, 50), 2_000_000_000, 0, 20.0),  # 1e8 B/s
    ost_row(D1, OST[1], T(D1, 5), 6_000_000_000, 0, 60.0),         # 1e8 B/s of 1e9
    ost_row(D1, OST[2], T(D1, 0, 0, 20), 60, 0, 60.0),             # 1 B/s, clamped to 00:00
]
OST_MAP_D1 = [dict(ost=OST[1], oss=f"{FS}-oss01", fs=FS, ost_peak_bw=1e9, date=D1)]

# Lustre client: fwd000, interval 32 s, 1 page per RPC, so load = rpc / 19,531,250.
L = 19_531_250
CLIENT_D1 = [
    client_row(D1, "fwd000", T(D1, 0, 0, 16), OST[0], None, None, 32.0),       # no deltas
    client_row(D1, "fwd000", T(D1, 1, 10, 16), OST[0], 10_000_000, 0, 32.0),    # } one sample:
    client_row(D1, "fwd000", T(D1, 1, 10, 16), OST[1], 7_578_125, 0, 32.0),     # } 0.9
    client_row(D1, "fwd000", T(D1, 1, 20, 16), OST[0], L // 10, 0, 32.0),       # 0.1
    client_row(D1, "fwd000", T(D1, 2, 0, 16), OST[0], 0, L // 2, 32.0),         # 0.5
    client_row(D1, "fwd000", T(D1, 3, 0, 16), OST[0], L // 2 - 1, 0, 32.0),     # < 0.5
    client_row(D1, "fwd000", T(D1, 4, 0, 16), OST[0], L // 10, 0, 32.0),        # 0.1
    client_row(D1, "fwd000", T(D1, 5, 0, 16), OST[0], L // 10 - 1, 0, 32.0),    # < 0.1
]
FWD_READ_RPC_D1 = 10_000_000 + 7_578_125 + L // 10 + L // 2 - 1 + L // 10 + L // 10 - 1
FWD_WRITE_RPC_D1 = L // 2

# trace: 2e9 read, 2.5e9 written by 4,500 requests; the servers served 9,000 -> coverage 0.5
TRACE_D1 = [
    trace_row(D1, "READ", 1_000_000, 2000, T(D1, 1)),
    trace_row(D1, "WRITE", 1_000_000, 2500, T(D1, 2)),
    dict(node="cn00000", ip="20.0.8.0", ts=T(D1, 1), op="OPEN", fd="0x1", count=1,
         path="/a", date=D1),
]
SERVER_D1 = [server_row(D1, "Read", "exe", 4000), server_row(D1, "Write", "exe", 5000),
             server_row(D1, "Read", "wait", 4000), server_row(D1, "Meta", "exe", 777),
             server_row(D1, "Read", "exe", None)]

MDS_D1 = [
    mds_row(D1, "fwd000", "forwarding", T(D1, 0, 30), 600, 60.0),
    mds_row(D1, "fwd000", "forwarding", T(D1, 0, 31), 1200, 60.0),
    mds_row(D1, "fwd000", "forwarding", T(D1, 0, 30), 60, 60.0, mds=f"{FS}-mds02"),
    mds_row(D1, "fwd001", "forwarding", T(D1, 0, 45), 300, 60.0),
    mds_row(D1, "login01", "login", T(D1, 0, 10), 360, 60.0),
    mds_row(D1, "login01", "login", T(D1, 0, 0, 10), 60, 60.0),      # midpoint the day before
    mds_row(D1, "cluster2-gw", "cluster", T(D1, 0, 10), 1500, 60.0),
    mds_row(D1, "cluster2-gw", "cluster", T(D1, 1, 0, 20), 600, 60.0),  # midpoint 00:59:50
    mds_row(D1, "cluster2-gw", "cluster", T(D1, 0, 5), None, None),    # first sample
    mds_row(D1, "10.1.1.1", "other", T(D1, 2, 0, 30), 120, 60.0),
]

# core-hour buckets of a 1,024-node site: (0, 10], (10, 100], (100, 1K], (1K, 10K], > 10K
JOBS_D1 = [
    job(D1, "j1", "N:N", 2_000_000_000, 1_000_000_000, 5.0, avg_bw=2e8, avg_iops=200.0,
        peak_bw=1e9, dominant_size="1M-4M", fwd_nodes=["fwd000"], osts=[OST[0], OST[1]]),
    job(D1, "j2", "N:N", 0, 3_000_000_000, 50.0, avg_bw=1e8, avg_iops=1500.0,
        dominant_size="64K-256K"),
    job(D1, "j3", "1:1", 1_000_000_000, 0, 10.0, avg_bw=5e6, avg_iops=1200.0,
        dominant_size="4K-16K"),
    job(D1, "j4", "N:1", 4_000_000_000, 4_000_000_000, 20_000.0),
    job(D1, "j5", "N:M", 1000, 0, 1.0),                        # trivial I/O: not counted
    job(D1, "j6", None, 0, 0, 1.0),                           # no I/O mode
    job(D1, "j7", "N:N", 1_000_000_000, 1_000_000_000, None),  # no core-hours: 'all' only
    job(D1, "j8", "1:1", 0, 2_000_000, 100.0),
    job(D1, "j9", "1:1", 3_000_000, 0, 100.5),
]

# --- D2: flags clear ------------------------------------------------------------------------
# One Lustre-client sample with reads and writes: 2,000 RPCs x 250 pages on average =
# 2.048e9 B, split by the OST's bytes per RPC in that minute (reads 100 pages, writes 400):
# reads 1,000 x 409,600 = 20 % -> 409.6e6 B, writes 1,638.4e6 B.
TRACE_D2 = [trace_row(D2, "READ", 1_000_000, 1000, T(D2, 12)),
            trace_row(D2, "WRITE", 1_000_000, 2000, T(D2, 12))]
CLIENT_D2 = [client_row(D2, "fwd000", T(D2, 12, 0, 30), OST[0], 1000, 1000, 60.0, pages=250)]
OST_D2 = [dict(ost_row(D2, OST[0], T(D2, 12, 0, 40), 409_600_000, 1_638_400_000, 60.0),
               read_rpc_delta=1000, write_rpc_delta=1000)]
FWD_MAP_D2 = [dict(node="cn00000", fwd="fwd000", fwd_peak_bw=1e9, date=D2),
              dict(node="cn00512", fwd="fwd002", fwd_peak_bw=None, date=D2)]


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    from lassi.beacon.system_views import build_system_views
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(tmp_path_factory.mktemp("sv") / "wh"))
    site = load_site("taihulight", nodes=1024)
    for table, items in (("raw_ost", OST_D1 + OST_D2), ("ost_map", OST_MAP_D1),
                         ("raw_lustre_client", CLIENT_D1 + CLIENT_D2),
                         ("raw_lwfs_trace", TRACE_D1 + TRACE_D2),
                         ("raw_lwfs_server", SERVER_D1), ("raw_mds", MDS_D1),
                         ("job_summary", JOBS_D1), ("fwd_map", FWD_MAP_D2)):
        wh.write(spark.createDataFrame(rows(table, items), schema_of(table)), table)
    summaries = {d: build_system_views(wh, site, d) for d in (D1, D2)}
    return wh, site, summaries


def _rows(wh, table, date, order):
    return [r.asDict() for r in wh.read(table, date).orderBy(*order).collect()]


def test_ost_util(built):
    wh, _, summaries = built
    got = _rows(wh, "view_ost_util", D1, ["ost", "minute"])
    want = [
        (OST[0], T(D1, 0, 1), 1, 3_000_000_000, 0, 5e7, 5e8, 0.1),
        (OST[0], T(D1, 10, 0), 2, 2_000_000_000, 7_500_000_000, 2.5e8, 5e8, 0.5),
        (OST[1], T(D1, 4, 59), 1, 6_000_000_000, 0, 1e8, 1e9, 0.1),
        (OST[2], T(D1, 0, 0), 1, 60, 0, 1.0, 5e8, 2e-9),
    ]
    assert [(r["ost"], r["minute"], r["samples"], r["read_bytes"], r["write_bytes"],
             r["max_bw"], r["peak_bw"]) for r in got] == [w[:7] for w in want]
    assert [r["util"] for r in got] == pytest.approx([w[7] for w in want], rel=1e-12)
    assert {r["fs"] for r in got} == {FS} and {r["date"] for r in got} == {D1}
    assert "3 OSTs" in summaries[D1]


def test_layer_volume_flags_set(built):
    wh, _, _ = built
    got = {r["layer"]: r for r in _rows(wh, "view_layer_volume", D1, ["layer"])}
    assert set(got) == {"compute", "forwarding", "ost"}
    c, f, o = got["compute"], got["forwarding"], got["ost"]
    assert (c["read_bytes"], c["write_bytes"], c["read_ops"], c["write_ops"]) == \
        (2_000_000_000, 2_500_000_000, 2000, 2500)
    assert c["coverage"] == pytest.approx(4500 / 9000)
    assert (c["read_bytes_est"], c["write_bytes_est"]) == pytest.approx((4e9, 5e9))
    assert (f["read_bytes"], f["write_bytes"]) == (FWD_READ_RPC_D1 * 4096,
                                                   FWD_WRITE_RPC_D1 * 4096)
    assert (f["read_ops"], f["write_ops"], f["coverage"]) == (FWD_READ_RPC_D1,
                                                              FWD_WRITE_RPC_D1, 1.0)
    assert (o["read_bytes"], o["write_bytes"]) == (11_000_000_060, 7_500_000_000)
    assert f["read_ratio"] == pytest.approx(FWD_READ_RPC_D1 * 4096 / 4e9)
    assert o["write_ratio"] == pytest.approx(1.5)
    for r in got.values():   # day-level flags: forwarding reads 34x > 2x, OST writes 1.5x > 1.2x
        assert (r["cache_thrashing"], r["write_amplification"]) == (True, True)
        assert (r["thrashing_factor"], r["amplification_factor"]) == (2.0, 1.2)
    assert "cache thrashing, write amplification" in built[2][D1]


def test_layer_volume_flags_clear(built):
    wh, _, _ = built
    got = {r["layer"]: r for r in _rows(wh, "view_layer_volume", D2, ["layer"])}
    c, f, o = got["compute"], got["forwarding"], got["ost"]
    assert c["coverage"] is None          # no LWFS server data: the trace is taken as it is
    assert (c["read_bytes_est"], c["write_bytes_est"]) == (1e9, 2e9)
    assert (f["read_bytes"], f["write_bytes"]) == (409_600_000, 1_638_400_000)
    assert (f["read_ops"], f["write_ops"]) == (1000, 1000)
    assert f["read_ratio"] == pytest.approx(0.4096)       # the naive split would say 1.024
    assert o["write_ratio"] == pytest.approx(0.8192)
    assert all(r["cache_thrashing"] is False and r["write_amplification"] is False
               for r in got.values())


def test_fwd_load_bands_at_cut_offs(built):
    wh, _, _ = built
    got = _rows(wh, "view_fwd_load", D1, ["fwd", "hour"])
    assert len(got) == 2 * 24 and {r["fwd"] for r in got} == {"fwd000", "fwd001"}
    f0 = {r["hour"].hour: r for r in got if r["fwd"] == "fwd000"}
    want = {0: (0, 0.0, "idle"), 1: (2, 0.9, "high"), 2: (1, 0.5, "mid"),
            3: (1, (L // 2 - 1) / L, "low"), 4: (1, 0.1, "low"), 5: (1, (L // 10 - 1) / L, "idle"),
            6: (0, 0.0, "idle")}
    for h, (minutes, load, band) in want.items():
        r = f0[h]
        assert (r["minutes"], r["band"]) == (minutes, band), h
        assert r["load"] == pytest.approx(load, rel=1e-12, abs=0), h
        assert r["fwd_peak_bw"] == 2.5e9
    assert f0[1]["peak_minute"] == T(D1, 1, 10) and f0[1]["peak_bw"] == pytest.approx(2.25e9)
    assert f0[1]["read_bytes"] == (10_000_000 + 7_578_125 + L // 10) * 4096
    assert f0[2]["write_bytes"] == (L // 2) * 4096
    assert all(r["band"] == "idle" and r["minutes"] == 0 for r in got if r["fwd"] == "fwd001")


def test_fwd_load_peaks_from_fwd_map(built):
    wh, _, _ = built
    got = _rows(wh, "view_fwd_load", D2, ["fwd", "hour"])
    peaks = {r["fwd"]: r["fwd_peak_bw"] for r in got}
    assert peaks == {"fwd000": 1e9, "fwd002": 2.5e9}     # fwd_map's nodes; null -> the site's
    r = next(r for r in got if r["fwd"] == "fwd000" and r["hour"] == T(D2, 12))
    assert r["load"] == pytest.approx(2000 * 250 * 4096 / 60 / 1e9) and r["band"] == "idle"


def test_mds_source(built):
    wh, _, _ = built
    got = [(r["source_kind"], r["hour"].hour, r["sources"], r["ops"], r["ops_per_s"], r["share"])
           for r in _rows(wh, "view_mds_source", D1, ["hour", "source_kind"])]
    total0 = 2160 + 420 + 2100
    want = [
        ("cluster", 0, 1, 2100, 2100 / 120, 2100 / total0),
        ("forwarding", 0, 2, 2160, 1800 / 120 + 60 / 60 + 300 / 60, 2160 / total0),
        ("login", 0, 1, 420, 420 / 120, 420 / total0),
        ("other", 2, 1, 120, 2.0, 1.0),
    ]
    assert [g[:4] for g in got] == [w[:4] for w in want]
    assert [g[4:] for g in got] == [pytest.approx(w[4:]) for w in want]


def test_io_mode(built):
    wh, _, _ = built
    got = {(r["io_mode"], r["ch_bucket"]): r for r in _rows(wh, "view_io_mode", D1,
                                                            ["io_mode", "bucket_no"])}
    labels = ["(0, 10]", "(10, 100]", "(100, 1K]", "(1K, 10K]", "> 10K"]
    assert len(got) == 5 * 6
    assert [got[("all", b)]["bucket_no"] for b in labels] == [0, 1, 2, 3, 4]
    assert (got[("all", "(1K, 10K]")]["ch_lo"], got[("all", "(1K, 10K]")]["ch_hi"]) == \
        (1000.0, 10000.0)

    def cell(mode, b):
        r = got[(mode, b)]
        return (r["jobs"], r["read_jobs"], r["write_jobs"], r["read_bytes"], r["write_bytes"])

    assert cell("N:N", "all") == (3, 2, 3, 3_000_000_000, 5_000_000_000)
    assert got[("N:N", "all")]["avg_read_bytes"] == pytest.approx(1e9)
    assert got[("N:N", "all")]["avg_write_bytes"] == pytest.approx(5e9 / 3)
    assert got[("N:N", "all")]["core_hours"] == pytest.approx(55.0)
    assert cell("N:N", "(0, 10]") == (1, 1, 1, 2_000_000_000, 1_000_000_000)
    assert cell("N:N", "(10, 100]") == (1, 0, 1, 0, 3_000_000_000)
    assert cell("1:1", "all") == (3, 2, 1, 1_003_000_000, 2_000_000)
    assert cell("1:1", "(0, 10]") == (1, 1, 0, 1_000_000_000, 0)       # 10 is in (0, 10]
    assert cell("1:1", "(10, 100]") == (1, 0, 1, 0, 2_000_000)
    assert cell("1:1", "(100, 1K]") == (1, 1, 0, 3_000_000, 0)
    assert cell("N:1", "> 10K") == (1, 1, 1, 4_000_000_000, 4_000_000_000)
    assert cell("N:M", "all") == (0, 0, 0, 0, 0) and got[("N:M", "all")]["avg_read_bytes"] is None
    assert cell("all", "all") == (7, 5, 5, 8_003_000_000, 9_002_000_000)
    assert [got[("all", b)]["jobs"] for b in labels] == [2, 2, 1, 0, 1]   # j7: no bucket
    assert got[("all", "(0, 10]")]["avg_read_bytes"] == pytest.approx(1.5e9)


def test_beacon_section(built, tmp_path):
    from lassi.report.beacon import beacon_section

    wh, site, _ = built
    html = beacon_section(wh, site, D1, tmp_path)
    pngs = sorted(p.name for p in (tmp_path / "_beacon" / D1.isoformat()).glob("*.png"))
    assert pngs == ["fwd_load.png", "job_bw_iops.png", "layer_volume.png", "mds_source.png",
                    "ost_util.png"]
    assert all((tmp_path / "_beacon" / D1.isoformat() / p).stat().st_size > 10_000
               for p in pngs)
    for p in pngs:
        assert f'src="_beacon/{D1.isoformat()}/{p}"' in html
    for cls in ("layers", "bands", "mds", "io-mode", "core-hours", "jobs"):
        assert f'<table class="{cls}">' in html
    assert "traced clients" in html and "Cache thrashing</b>: <span class='warn'>yes" in html
    # the jobs table: j4 moved most (8e9 B = 7.45 GiB), the trivial j5 is listed too
    jobs = html.split('<table class="jobs">')[1].split("</table>")[0]
    assert jobs.index(">j4<") < jobs.index(">j1<") < jobs.index(">j5<")
    assert f">{8e9 / 2**30 / 2:.3g}<" in jobs        # j4's read GiB (3.73)
    assert "fwd000" in jobs


def test_no_beacon_data(spark, tmp_path):
    from lassi.beacon.system_views import build_system_views
    from lassi.core.warehouse import Warehouse
    from lassi.report.beacon import beacon_section

    wh = Warehouse(spark, str(tmp_path / "wh"))
    site = load_site("archer")
    assert build_system_views(wh, site, D1) == "no Beacon data for the day"
    assert not wh.has("view_layer_volume", D1) and not wh.has("view_io_mode", D1)
    assert beacon_section(wh, site, D1, tmp_path / "out") == ""
    assert not (tmp_path / "out").exists()


def test_settings():
    import copy

    from lassi.beacon.system_views import band_expr, band_legend, core_hour_buckets
    from lassi.core.config import ConfigError, Site

    full, small = load_site("taihulight"), load_site("taihulight", nodes=1024)
    assert [b[1] for b in core_hour_buckets(full)] == [
        "(0, 1K]", "(1K, 10K]", "(10K, 100K]", "(100K, 1M]", "> 1M"]
    assert core_hour_buckets(small)[0] == (0, "(0, 10]", None, 10.0)
    assert core_hour_buckets(small)[-1] == (4, "> 10K", 10000.0, None)
    bands = full.settings.thresholds.fwd_load_bands
    assert band_legend(bands) == {
        "high": "≥ 90 %", "mid": "50 %–90 %", "low": "10 %–50 %", "idle": "< 10 %"}
    assert band_expr(bands) == (
        "CASE WHEN load IS NULL THEN 'unknown' WHEN load >= 0.9 THEN 'high' "
        "WHEN load >= 0.5 THEN 'mid' WHEN load >= 0.1 THEN 'low' ELSE 'idle' END")
    data = copy.deepcopy(small.data)
    data["thresholds"].update(cache_thrashing_factor=3, write_amplification_factor=1.5,
                              fwd_load_bands={"low": 0.05, "high": 0.8, "mid": 0.4})
    th = Site(data, small.source).settings.thresholds
    assert (th.cache_thrashing_factor, th.write_amplification_factor) == (3.0, 1.5)
    assert th.fwd_load_bands == (("high", 0.8), ("mid", 0.4), ("low", 0.05))
    data["thresholds"]["cache_thrashing_factor"] = "two"
    with pytest.raises(ConfigError, match="thresholds.cache_thrashing_factor"):
        _ = Site(data, small.source).settings
