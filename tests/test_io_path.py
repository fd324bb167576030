"""SIOX's I/O path model (stage `io_path`): components, capacities and links of a site,
checked against counts and peaks worked out by hand from conf/sites/*.yaml."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from lassi.core.config import load_site
from lassi.siox.path_model import build_io_path

D = dt.date(2018, 2, 25)


def _tables(wh):
    comps = {r["component"]: r for r in wh.read("path_component", [D]).collect()}
    edges = wh.read("path_edge", [D]).collect()
    return comps, edges


def test_archer_compute_nodes_mount_the_filesystems_directly(warehouse):
    site = load_site("archer", nodes=16)
    summary = build_io_path(warehouse, site, D)
    comps, edges = _tables(warehouse)
    # 16 nodes; fs2/fs3/fs4 keep 48/48/56 OSTs at 4 per OSS (12 + 12 + 14 OSSes), 1 MDT each
    assert Counter(r["kind"] for r in comps.values()) == {
        "compute": 16, "filesystem": 3, "ost": 152, "mdt": 3, "oss": 38, "mds": 3}
    assert summary == ("16 compute, 3 filesystem, 152 ost, 3 mdt, 38 oss, 3 mds; 358 links")
    rel = Counter(e["relation"] for e in edges)
    # mounts 16 x 3; stripes 152; metadata 3; hosted_on 152 OSTs + 3 MDTs; no forwarding
    assert rel == {"mounts": 48, "stripes": 152, "metadata": 3, "hosted_on": 155}
    assert {e["dst"] for e in edges if e["src"] == "nid00008"} == {"fs2", "fs3", "fs4"}
    n = comps["nid00008"]
    assert (n["level"], n["software"], n["peak_bw"]) == (0, ["application", "Lustre client"], None)
    # a 16-node ARCHER keeps 5 % of the nominal peaks (MIN_PEAK_FRACTION): 6.5e8 x 0.05
    ost = comps["fs4-OST0037"]
    assert (ost["host"], ost["fs"], ost["level"]) == ("fs4-oss14", "fs4", 3)
    assert ost["peak_bw"] == 6.5e8 * 0.05 and ost["peak_iops"] == 20000 * 0.05
    assert comps["fs4-oss14"]["peak_bw"] == 4 * 6.5e8 * 0.05
    assert comps["fs2"]["peak_bw"] == 48 * 6.5e8 * 0.05
    assert comps["fs2-MDT0000"]["host"] == "fs2-mds01"
    assert comps["fs2-mds01"]["peak_iops"] == 60000 * 0.05


def test_taihulight_path_goes_through_the_forwarding_nodes_and_the_maps_win(warehouse):
    from lassi.ingest.beacon_maps import fwd_map_rows, ost_map_rows

    site = load_site("taihulight", nodes=1024)
    fwd = [r[:4] + ((2.0e9,) if r[2] == "fwd001" else r[4:5]) + r[5:]
           for r in fwd_map_rows(site, D)]
    ost = ost_map_rows(site, D) + [("online1-OST00ff", "online1-oss04", "online1", 4.0e8, D)]
    warehouse.write_rows(fwd, "fwd_map")
    warehouse.write_rows(ost, "ost_map")
    build_io_path(warehouse, site, D)
    comps, edges = _tables(warehouse)
    # 1,024 nodes at 512 per forwarding node: 2; OSSes max(2, ceil(2 x 1.8)) = 4, 3 OSTs
    # each: 12 configured OSTs, plus the one only the map knows
    assert Counter(r["kind"] for r in comps.values()) == {
        "compute": 1024, "fwd": 2, "filesystem": 1, "ost": 13, "mdt": 1, "oss": 4, "mds": 1}
    f0, f1 = comps["fwd000"], comps["fwd001"]
    assert (f0["peak_bw"], f0["peak_iops"], f0["threads"], f0["source"]) == (
        2.5e9, 40000, 16, "fwd_map")
    assert f1["peak_bw"] == 2.0e9                         # the map's benchmark wins
    assert f0["software"] == ["LWFS server", "Lustre client"] and f0["level"] == 1
    assert comps["cn00000"]["software"] == ["application", "LWFS client"]
    extra = comps["online1-OST00ff"]
    assert (extra["source"], extra["host"], extra["peak_bw"]) == ("ost_map", "online1-oss04",
                                                                  4.0e8)
    fwd_of = {e["src"]: e["dst"] for e in edges if e["relation"] == "forwards"}
    assert len(fwd_of) == 1024 and fwd_of["cn00511"] == "fwd000" and fwd_of["cn00512"] == "fwd001"
    rel = Counter(e["relation"] for e in edges)
    assert rel == {"forwards": 1024, "mounts": 2, "stripes": 13, "metadata": 1, "hosted_on": 14}
    assert {e["src"] for e in edges if e["relation"] == "mounts"} == {"fwd000", "fwd001"}


def test_rerun_replaces_the_date(warehouse):
    site = load_site("archer", nodes=4)
    build_io_path(warehouse, site, D)
    build_io_path(warehouse, load_site("archer", nodes=2), D)
    comps, _ = _tables(warehouse)
    assert sum(r["kind"] == "compute" for r in comps.values()) == 2
