"""Beacon's five monitoring layers: parsers (real LWFS server sample, hand-made files with
exact rows, deltas, resets, gaps, newborn series, quarantine, gzip, D−1 seeds), the runner
(tables, quarantine, ingest_log, fwd_map/ost_map, CLI) and, against a simulated
taihulight day, the per-day volumes of every layer versus the simulator's ground truth.
"""

from __future__ import annotations

import datetime as dt
import gzip
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import pytest
from lassi.ingest import beacon_layers, beacon_maps, lwfs_client, lwfs_server
from lassi.ingest.runner import (
    BEACON,
    SOURCES,
    beacon_tasks,
    check_date,
    ingest_raw,
    ingest_source,
    prev_day_file,
)

from lassi.core.config import load_site
from lassi.core.schemas import BEACON_MDS_OPS

D = dt.date(2018, 2, 25)
FWD_IPS = {f"20.0.2.{n}" for n in (26, 29, 35, 44, 81, 110, 113, 125, 136)}


@pytest.fixture(scope="module")
def site():
    """taihulight at 1,024 nodes: fwd000/fwd001 = 20.0.2.100/101, cn00017 = 20.0.8.17."""
    return load_site("taihulight", nodes=1024)


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def write(path: Path, lines: list[str]) -> Path:
    """Write lines to path (gzip when it ends with .gz), creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(line + "\n" for line in lines)
    if path.suffix == ".gz":
        with gzip.open(path, "wt") as fh:
            fh.write(data)
    else:
        path.write_text(data)
    return path


def accounted(stats, q) -> None:
    assert stats.lines_read == stats.lines_used + stats.lines_quarantined
    assert stats.lines_quarantined == len(q)
    assert all(x.reason and "\n" not in x.reason for x in q)


def pick(rows: list[dict], *keys: str) -> list[tuple]:
    return [tuple(r[k] for k in keys) for r in rows]


# --------------------------------------------------------------------------- real LWFS server


@pytest.fixture(scope="module")
def real_server(realdata):
    path = realdata / "beacon" / "data_example.txt"
    return lwfs_server.parse_file(path, load_site("taihulight"))


def test_real_sample_lines_and_junk(real_server):
    rows, q, stats = real_server
    accounted(stats, q)
    assert (stats.lines_read, stats.lines_used, stats.lines_quarantined) == (2581, 2576, 5)
    assert stats.rows == len(rows) == 2576
    assert [x.line_no for x in q] == [1, 2, 3, 4, 5]
    assert q[3].raw == "quert done" and "not an LWFS server trace line" in q[3].reason


def test_real_sample_nodes_kinds_span(real_server):
    rows, _, _ = real_server
    ips = Counter(r["ip"] for r in rows)
    assert set(ips) == FWD_IPS and ips["20.0.2.35"] == 1750
    kinds = Counter((r["op_class"], r["kind"]) for r in rows)
    assert len(kinds) == 7 and set(kinds.values()) == {368}
    assert min(r["ts"] for r in rows) == ts("2018-02-25T10:00:02.276")
    assert max(r["ts"] for r in rows) == ts("2018-02-25T10:00:58.349")
    first = rows[0]  # 20.0.2.110 [2018-02-25 18:00:12] ... 2018-02-25T10:00:12.544Z (UTC+8)
    assert (first["ip"], first["local_ts"], first["ts"]) == (
        "20.0.2.110", ts("2018-02-25 18:00:12"), ts("2018-02-25T10:00:12.544"))
    assert first["hist"] == [772065, 72619, 264959, 22166, 49937, 74762, 72, 0]
    assert first["fwd"] == "fwd010"      # 20.0.2.110 in the full site; 20.0.2.26 is not one
    assert {r["fwd"] for r in rows if r["ip"] == "20.0.2.26"} == {None}


def test_real_sample_deltas(real_server):
    rows, _, stats = real_server
    hist = [r for r in rows if r["op_class"] != "Queue"]
    queue = [r for r in rows if r["op_class"] == "Queue"]
    assert all(r["hist"] is None and r["queue_len"] >= 0 for r in queue)
    assert max(r["queue_len"] for r in queue) == 44
    # one first sample per (ip, class, kind) series: 9 nodes x 6; no resets in a minute
    assert sum(r["hist_delta"] is None for r in hist) == stats.extra["first_samples"] == 54
    assert stats.counter_resets == 0 and not any(r["reset"] for r in rows)
    assert all(min(r["hist_delta"]) >= 0 and r["requests"] == sum(r["hist_delta"])
               for r in hist if r["hist_delta"] is not None)
    # the file is sorted by kind, not time; deltas follow time, so they telescope
    first, last, total = {}, {}, Counter()
    for r in hist:
        k = (r["ip"], r["op_class"], r["kind"])
        total[k] += r["requests"] or 0
        if k not in first or r["ts"] < first[k]["ts"]:
            first[k] = r
        if k not in last or r["ts"] >= last[k]["ts"]:
            last[k] = r
    assert all(total[k] == sum(last[k]["hist"]) - sum(first[k]["hist"]) for k in total)
    assert total[("20.0.2.35", "Write", "exe")] == 249679
    # exe and wait histograms count the same requests, up to one in flight at a sample
    for ip, cls in {(k[0], k[1]) for k in total}:
        assert abs(total[(ip, cls, "exe")] - total[(ip, cls, "wait")]) <= 1
    served = {ip: sum(total[(ip, c, "exe")] for c in ("Meta", "Read", "Write")) for ip in FWD_IPS}
    assert served == {"20.0.2.110": 1000, "20.0.2.26": 2000, "20.0.2.29": 3006,
                      "20.0.2.35": 249998, "20.0.2.44": 3003, "20.0.2.81": 100000,
                      "20.0.2.113": 0, "20.0.2.125": 0, "20.0.2.136": 0}


# --------------------------------------------------------------------------- LWFS server


def test_lwfs_server_seed_reset_skew_bad_lines(tmp_path, site):
    folder = tmp_path / "lwfs-server" / "fwd000"
    head = "20.0.2.100 [{}]  [Trace]: "
    prev = write(folder / "2018-02-24.log.gz", [
        head.format("2018-02-25 07:59:55") + "Read exe: 10 0 0 0 0 0 0 0 2018-02-24T23:59:55.500Z",
        head.format("2018-02-25 07:59:45") + "Read exe: 9 0 0 0 0 0 0 0 2018-02-24T23:59:45.500Z",
    ])
    path = write(folder / "2018-02-25.log", [
        head.format("2018-02-25 08:00:05") + "Read exe: 12 1 0 0 0 0 0 0 2018-02-25T00:00:05.500Z",
        head.format("2018-02-25 08:00:05") + "Read wait: 5 0 0 0 0 0 0 0 2018-02-25T00:00:05.500Z",
        head.format("2018-02-25 08:00:05") + "queue length: 3 2018-02-25T00:00:05.500Z",
        head.format("2018-02-25 08:00:15") + "Read exe: 2 0 0 0 0 0 0 0 2018-02-25T00:00:15.500Z",
        head.format("2018-02-25 08:00:25") + "Read wait: 9 0 0 0 0 0 0 1 2018-02-25T00:00:25.500Z",
        "",
        head.format("2018-02-25 09:00:35") + "Read exe: 2 0 0 0 0 0 0 0 2018-02-25T00:00:35.500Z",
        head.format("2018-02-25 08:00:35") + "Read exe: 1 2 3 4 5 6 7 2018-02-25T00:00:35.500Z",
        head.format("2018-02-25 08:00:35") + "Open exe: 1 2 3 4 5 6 7 8 2018-02-25T00:00:35.500Z",
        head.format("2018-02-26 08:00:35") + "queue length: 1 2018-02-26T00:00:35.500Z",
    ])
    rows, q, stats = lwfs_server.parse_file(path, site, prev=prev, day=D)
    accounted(stats, q)
    assert (stats.lines_read, stats.lines_used, stats.rows) == (10, 6, 5)
    assert [x.line_no for x in q] == [7, 8, 9, 10]
    assert "disagrees with UTC time" in q[0].reason and "Asia/Shanghai" in q[0].reason
    assert "expected 8" in q[1].reason and "not an LWFS" in q[2].reason
    assert "not the file's day 2018-02-25" in q[3].reason
    assert pick(rows, "fwd", "op_class", "kind", "ts", "local_ts", "queue_len") == [
        ("fwd000", "Read", "exe", ts("2018-02-25 00:00:05.5"), ts("2018-02-25 08:00:05"), None),
        ("fwd000", "Read", "wait", ts("2018-02-25 00:00:05.5"), ts("2018-02-25 08:00:05"), None),
        ("fwd000", "Queue", "length", ts("2018-02-25 00:00:05.5"), ts("2018-02-25 08:00:05"), 3),
        ("fwd000", "Read", "exe", ts("2018-02-25 00:00:15.5"), ts("2018-02-25 08:00:15"), None),
        ("fwd000", "Read", "wait", ts("2018-02-25 00:00:25.5"), ts("2018-02-25 08:00:25"), None),
    ]
    assert pick(rows, "hist_delta", "requests", "reset") == [
        ([2, 1, 0, 0, 0, 0, 0, 0], 3, False),     # from the seed's last (latest) sample
        (None, None, False),                      # no seed for this series: first sample
        (None, None, False),                      # a gauge
        ([2, 0, 0, 0, 0, 0, 0, 0], 2, True),      # 12 -> 2: reset, delta = the new value
        ([4, 0, 0, 0, 0, 0, 0, 1], 5, False),
    ]
    assert stats.counter_resets == 1 and stats.extra["seed_files"] == 1
    assert rows[0]["hist"] == [12, 1, 0, 0, 0, 0, 0, 0] and rows[0]["file"] == str(path)


def test_local_time_check_allows_the_dropped_milliseconds():
    tz = lwfs_server.ZoneInfo("Asia/Shanghai")
    local = ts("2018-02-25 18:00:12")
    assert lwfs_server.local_matches(local, ts("2018-02-25 10:00:12.999"), tz)
    assert lwfs_server.local_matches(local, ts("2018-02-25 10:00:14.9"), tz)
    assert not lwfs_server.local_matches(local, ts("2018-02-25 10:00:15.1"), tz)
    assert not lwfs_server.local_matches(local, ts("2018-02-25 18:00:12"), tz)


# --------------------------------------------------------------------------- LWFS client


def test_lwfs_client_rows(tmp_path, site):
    path = write(tmp_path / "lwfs-client" / "cn00017" / "2018-09-10.log.gz", [
        "20.0.8.17 2018-09-10T06:16:52.125Z OPEN 0x1200bd3f0 path=/User146/65968/-11607",
        "20.0.8.17 2018-09-10T06:16:52.127Z WRITE 0x1200bd3f0 0 524288 1",
        "20.0.8.17 2018-09-10T06:16:52.131Z WRITE 0x1200bd3f0 524288 524288",
        "20.0.8.17 2018-09-10T06:16:53.002Z READ 0x1200bd3f0 0 131072 16",
        "20.0.8.17 2018-09-10T06:16:53.100Z STAT 0x1200bd3f0 path=/User146/a dir count=3",
        "20.0.8.17 2018-09-10T06:16:53.410Z CLOSE 0x1200bd3f0",
        "99.9.9.9 2018-09-10T06:16:54.000Z WRITE 0x1 4096 4096 count=2",
        "",
        "20.0.8.17 2018-09-10T06:16:55.000Z READ 0x1 0 4096 0",
        "20.0.8.17 2018-09-10 06:16:55 READ 0x1 0 4096 1",
        "20.0.8.17 2018-09-10T06:16:55.000Z READ 0x1 0",
        "20.0.8.17 2018-09-10T06:16:55.000Z read 0x1 0 1 1",
        "20.0.8.17 2018-09-10T06:16:55.000Z OPEN 0x1 junk",
        "20.0.8.17 2018-09-11T00:00:01.000Z WRITE 0x1 0 1 1",
    ])
    rows, q, stats = lwfs_client.parse_file(path, site, day=dt.date(2018, 9, 10))
    accounted(stats, q)
    assert (stats.lines_read, stats.lines_used, stats.rows) == (14, 8, 7)
    assert [x.line_no for x in q] == [9, 10, 11, 12, 13, 14]
    for x, why in zip(q, ("count '0' is not a 64-bit integer >= 1", "bad UTC time", "5 fields",
                          "bad operation 'read'", "unexpected field 'junk'",
                          "not the file's day"), strict=True):
        assert why in x.reason
    t = lambda s: ts("2018-09-10 06:16:" + s)  # noqa: E731
    assert pick(rows, "node", "ip", "ts", "op", "fd", "offset", "size", "count", "path") == [
        ("cn00017", "20.0.8.17", t("52.125"), "OPEN", "0x1200bd3f0", None, None, 1,
         "/User146/65968/-11607"),
        ("cn00017", "20.0.8.17", t("52.127"), "WRITE", "0x1200bd3f0", 0, 524288, 1, None),
        ("cn00017", "20.0.8.17", t("52.131"), "WRITE", "0x1200bd3f0", 524288, 524288, 1, None),
        ("cn00017", "20.0.8.17", t("53.002"), "READ", "0x1200bd3f0", 0, 131072, 16, None),
        ("cn00017", "20.0.8.17", t("53.100"), "STAT", "0x1200bd3f0", None, None, 3,
         "/User146/a dir"),
        ("cn00017", "20.0.8.17", t("53.410"), "CLOSE", "0x1200bd3f0", None, None, 1, None),
        (None, "99.9.9.9", t("54.000"), "WRITE", "0x1", 4096, 4096, 2, None),
    ]
    assert {r["file"] for r in rows} == {str(path)}


# --------------------------------------------------------------------------- Lustre layers


def test_lustre_client_seed_newborn_gap_reset(tmp_path, site):
    folder = tmp_path / "lustre-client" / "fwd000"
    prev = write(folder / "2018-02-24.log", [
        "20.0.2.100 2018-02-24T23:59:50.000Z online1-OST0000 100 50 256",
    ])
    path = write(folder / "2018-02-25.log.gz", [
        "20.0.2.100 2018-02-25T00:00:00.000Z online1-OST0000 110 50 256",
        "20.0.2.100 2018-02-25T00:00:10.000Z online1-OST0000 120 60 128",
        "20.0.2.100 2018-02-25T00:00:10.000Z online1-OST0001 5 7 64",
        "20.0.2.100 2018-02-25T00:01:10.000Z online1-OST0000 3 1 32",
        "20.0.2.100 2018-02-25T00:01:10.000Z online1-OST0001 5 9 64",
        "20.0.2.100 2018-02-25T00:01:10.000Z OST9 1 2 3",
        "20.0.2.100 2018-02-25T00:01:10.000Z online1-OST0002 5 -1 64",
        "20.0.2.100 2018-02-25T00:01:10.000Z online1-OST0002 5 1",
    ])
    rows, q, stats = beacon_layers.parse_lustre_client(path, site, prev=prev, day=D)
    accounted(stats, q)
    assert (stats.lines_read, stats.rows, stats.counter_resets) == (8, 5, 1)
    assert ["bad OST name" in q[0].reason, "non-negative" in q[1].reason,
            "expected 6" in q[2].reason] == [True] * 3
    keys = ("fwd", "ip", "ost", "read_rpc", "write_rpc", "pages_per_rpc", "read_rpc_delta",
            "write_rpc_delta", "interval_s", "reset")
    assert pick(rows, *keys) == [
        ("fwd000", "20.0.2.100", "online1-OST0000", 110, 50, 256, 10, 0, 10.0, False),  # seed
        ("fwd000", "20.0.2.100", "online1-OST0000", 120, 60, 128, 10, 10, 10.0, False),
        ("fwd000", "20.0.2.100", "online1-OST0001", 5, 7, 64, 5, 7, 10.0, False),  # newborn
        ("fwd000", "20.0.2.100", "online1-OST0000", 3, 1, 32, 3, 1, 60.0, True),   # reset
        ("fwd000", "20.0.2.100", "online1-OST0001", 5, 9, 64, 0, 2, 60.0, False),  # gap
    ]
    assert stats.extra == {"seed_files": 1, "newborn_series": 1}
    # without the seed the first sample of OST0000 is a first sample; OST0001 still newborn
    rows, _, stats = beacon_layers.parse_file(path, site, "lustre-client")
    assert pick(rows[:3], "read_rpc_delta", "interval_s") == [(None, None), (10, 10.0),
                                                              (5, 10.0)]
    assert stats.extra == {"first_samples": 1, "newborn_series": 1}


def test_lustre_client_rpc_wait(tmp_path, site):
    """The optional 7th field (cumulative osc req_waittime, µs): its delta per interval,
    seeded from D-1; null when the collector starts reporting it (no previous value), when
    the sample has no RPC delta; its new value after a reset of the RPC counters."""
    folder = tmp_path / "lustre-client" / "fwd000"
    prev = write(folder / "2018-02-24.log", [
        "20.0.2.100 2018-02-24T23:59:50.000Z online1-OST0000 100 50 256 7000",
    ])
    path = write(folder / "2018-02-25.log", [
        "20.0.2.100 2018-02-25T00:00:00.000Z online1-OST0000 110 50 256 7500",
        "20.0.2.100 2018-02-25T00:00:00.000Z online1-OST0001 1 1 256",
        "20.0.2.100 2018-02-25T00:00:10.000Z online1-OST0000 120 60 256 9100",
        "20.0.2.100 2018-02-25T00:00:10.000Z online1-OST0001 2 1 256 40",
        "20.0.2.100 2018-02-25T00:00:20.000Z online1-OST0000 4 1 256 300",
        "20.0.2.100 2018-02-25T00:00:20.000Z online1-OST0001 3 1 256 x",
    ])
    rows, q, stats = beacon_layers.parse_lustre_client(path, site, prev=prev, day=D)
    accounted(stats, q)
    assert len(q) == 1 and "rpc wait" in q[0].reason
    assert pick(rows, "ost", "read_rpc_delta", "rpc_wait_us", "rpc_wait_us_delta") == [
        ("online1-OST0000", 10, 7500, 500),
        ("online1-OST0001", 1, None, None),            # newborn, without the wait field
        ("online1-OST0000", 10, 9100, 1600),
        ("online1-OST0001", 1, 40, None),              # the field appears: no delta yet
        ("online1-OST0000", 4, 300, 300),              # reset: the new value
    ]


def test_newborn_needs_an_earlier_sample_not_a_slow_one(tmp_path, site):
    """Lines of one sample spread over more than a second (each within 1 s of the last)
    are one sample: a series first seen late in it is a first sample, not a newborn."""
    path = write(tmp_path / "lustre-client" / "fwd000" / "x.log", [
        f"20.0.2.100 2018-02-25T00:00:0{s}Z online1-OST000{i} {9 + i} 0 256"
        for i, s in enumerate(("0.000", "0.700", "1.400", "2.100"))
    ] + ["20.0.2.100 2018-02-25T00:00:12.000Z online1-OST0004 4 0 256"])
    rows, _, stats = beacon_layers.parse_lustre_client(path, site)
    assert pick(rows, "read_rpc_delta", "interval_s") == [(None, None)] * 4 + [(4, 9.9)]
    assert stats.extra == {"first_samples": 4, "newborn_series": 1}


def test_ost_first_sample_reset_bad_line(tmp_path, site):
    path = write(tmp_path / "ost" / "online1-oss01" / "2018-02-25.log", [
        "online1-oss01 2018-02-25T00:00:00.979Z online1-OST0000 0 0 0 0 0",
        "online1-oss01 2018-02-25T00:00:10.979Z online1-OST0000 4 2 256 4194304 2097152",
        "online1-oss01 2018-02-25T00:00:20.979Z online1-OST0000 4 2 0 4194304 2097152",
        "online1-oss01 2018-02-25T00:00:30.979Z online1-OST0000 1 0 256 1048576 0",
        "online1-oss01 2018-02-25T00:00:30.979Z online1-OST0000 1 0 256 1048576",
        "online1-oss01 2018-02-25T00:00:30Z online1-OST0000 1 0 256 1048576 0 9",
        "online1-oss01 2018-02-25T00:00:40Z online1-OST0000 1 0 256 9223372036854775808 0",
    ])
    rows, q, stats = beacon_layers.parse_ost(path, site)
    accounted(stats, q)
    assert (stats.lines_read, stats.rows, stats.counter_resets) == (7, 4, 1)
    assert "64-bit" in q[-1].reason          # 2**63 does not fit the table's LongType
    keys = ("ost", "oss", "ts", "read_bytes", "read_rpc_delta", "write_rpc_delta",
            "read_bytes_delta", "write_bytes_delta", "interval_s", "reset")
    t = lambda s: ts("2018-02-25 00:00:" + s)  # noqa: E731
    assert pick(rows, *keys) == [
        ("online1-OST0000", "online1-oss01", t("00.979"), 0, None, None, None, None, None, False),
        ("online1-OST0000", "online1-oss01", t("10.979"), 4194304, 4, 2, 4194304, 2097152, 10.0,
         False),
        ("online1-OST0000", "online1-oss01", t("20.979"), 4194304, 0, 0, 0, 0, 10.0, False),
        ("online1-OST0000", "online1-oss01", t("30.979"), 1048576, 1, 0, 1048576, 0, 10.0, True),
    ]


def test_mds_kinds_missing_ops_seed_reset(tmp_path, site):
    folder = tmp_path / "mds" / "online1-mds01"
    prev = write(folder / "2018-02-24.log", [
        "20.0.2.100 2018-02-24T23:59:50.000Z open=10 close=10",
        "login01 2018-02-24T23:59:50.000Z getattr=5",
    ])
    path = write(folder / "2018-02-25.log", [
        "20.0.2.100 2018-02-25T00:00:00.000Z open=12 close=11 getattr=4",
        "login01 2018-02-25T00:00:00.000Z getattr=7",
        "cluster2-gw 2018-02-25T00:00:00.000Z statfs=3",
        "elsewhere 2018-02-25T00:00:10.000Z open=1",
        "login01 2018-02-25T00:00:10.000Z getattr=1",
        "fwd001 2018-02-25T00:00:10.000Z",
        "20.0.2.100 2018-02-25T00:00:10.000Z open=x",
        "20.0.2.100 2018-02-25T00:00:10.000Z bogus=1",
        "20.0.2.100 2018-02-25T00:00:10.000Z open=1 open=2",
    ])
    rows, q, stats = beacon_layers.parse_mds(path, site, prev=prev, day=D)
    accounted(stats, q)
    assert (stats.lines_read, stats.rows, stats.counter_resets) == (9, 6, 1)
    assert ["not a non-negative 64-bit" in q[0].reason, "unknown MDS op 'bogus'" in q[1].reason,
            "twice" in q[2].reason] == [True] * 3
    keys = ("mds", "source", "source_node", "source_kind", "ops", "interval_s", "reset")
    assert pick(rows, *keys) == [
        ("online1-mds01", "20.0.2.100", "fwd000", "forwarding", 7, 10.0, False),
        ("online1-mds01", "login01", None, "login", 2, 10.0, False),
        ("online1-mds01", "cluster2-gw", None, "cluster", 3, 10.0, False),   # newborn
        ("online1-mds01", "elsewhere", None, "other", 1, 10.0, False),       # newborn
        ("online1-mds01", "login01", None, "login", 1, 10.0, True),
        ("online1-mds01", "fwd001", "fwd001", "forwarding", 0, 10.0, False),  # all ops 0
    ]
    deltas = [{op: r[op] for op in BEACON_MDS_OPS if r[op]} for r in rows]
    assert deltas == [{"open": 2, "close": 1, "getattr": 4}, {"getattr": 2}, {"statfs": 3},
                      {"open": 1}, {"getattr": 1}, {}]
    assert rows[0]["cumulative"] == [12, 11, 0, 0, 0, 0, 0, 0, 4] + [0] * 7


def test_unreadable_and_truncated_files(tmp_path, site):
    bad = tmp_path / "ost" / "h" / "2018-02-25.log.gz"
    bad.parent.mkdir(parents=True)
    full = gzip.compress(b"".join(
        b"h 2018-02-25T00:00:%02d.000Z fs-OST0000 1 1 1 1 1\n" % i for i in range(50)))
    bad.write_bytes(full[: len(full) // 2])
    rows, q, stats = beacon_layers.parse_ost(bad, site)
    accounted(stats, q)
    assert q[-1].line_no == stats.lines_read and "read error" in q[-1].reason
    missing = beacon_layers.parse_ost(tmp_path / "nope.log", site)
    assert missing[2].lines_read == 1 and missing[1][0].line_no == 0


def test_maps(site):
    fwd = beacon_maps.fwd_map_rows(site, D)
    assert len(fwd) == 1024 and fwd[0] == ("cn00000", "20.0.8.0", "fwd000", "20.0.2.100",
                                           2.5e9, D)
    assert fwd[-1][:4] == ("cn01023", "20.0.11.255", "fwd001", "20.0.2.101")
    osts = beacon_maps.ost_map_rows(site, D)
    assert len(osts) == 12 and osts[0] == ("online1-OST0000", "online1-oss01", "online1", 5e8, D)
    assert osts[-1][:2] == ("online1-OST000b", "online1-oss04")


def test_tasks_and_seeds(tmp_path):
    a = write(tmp_path / "h" / "2018-02-24.log.gz", [""])
    b = write(tmp_path / "h" / "2018-02-25.log", [""])
    c = write(tmp_path / "h" / "notes.txt", [""])
    assert prev_day_file(b) == str(a) and prev_day_file(a) is None and prev_day_file(c) is None
    assert beacon_tasks([a, b, c], D) == [(str(b), str(a), D), (str(c), None, D)]
    assert beacon_tasks([a, b], None) == [(str(a), None, D - dt.timedelta(days=1)),
                                          (str(b), str(a), D)]


def test_parse_tasks_per_core_and_size(spark):
    """One task per core for a few small files (`local[2]`), more once the files pass
    Spark's maxPartitionBytes per core, always a whole number per core and never more
    than one per file; the bins share the bytes out largest first."""
    from lassi.ingest.runner import _balanced, _bin_count, _byte_size

    mib = 1 << 20
    assert [_byte_size(t) for t in ("134217728b", "128m", "64MiB", "1g", "4096")] == [
        128 * mib, 128 * mib, 64 * mib, 1024 * mib, 4096]
    assert _bin_count(spark, [3 * mib] * 15) == 2
    assert _bin_count(spark, [3 * mib]) == 1
    assert _bin_count(spark, [100 * mib] * 10) == 8        # 1,000 MiB: 4 per core
    assert _bin_count(spark, [100 * mib] * 3) == 3
    assert _bin_count(spark, [50 * mib] * 40) == 16
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "64m")
    try:
        assert _bin_count(spark, [50 * mib] * 40) == 32         # 2,000 MiB: 16 per core
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", old)
    tasks = [(f"f{i}", None, D) for i in range(5)]
    bins = _balanced(tasks, 2, [50, 40, 30, 20, 10])
    assert [[t[0] for t in b] for b in bins] == [["f0", "f3", "f4"], ["f1", "f2"]]


# --------------------------------------------------------------------------- runner + CLI


def test_sources_and_cli(capsys, tmp_path):
    from lassi.cli.main import main

    assert set(BEACON) <= set(SOURCES)
    assert {"lwfs-client", "lwfs-server", "lustre-client", "ost", "mds"} == set(BEACON)
    with pytest.raises(SystemExit) as exc:
        main(["ingest", "--help"])
    assert exc.value.code == 0 and "lwfs-server" in capsys.readouterr().out
    rc = main(["ingest", "--source", "mds", "--input", str(tmp_path / "missing")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and err == [f"lassi: error: no such file or directory: {tmp_path / 'missing'}"]


def _hand_raw(root: Path) -> None:
    """A tiny raw folder: every layer, a D−1 seed, a bad line in each of two layers."""
    b = root / "beacon"
    write(b / "lwfs-client" / "cn00000" / "2018-02-25.log.gz", [
        "20.0.8.0 2018-02-25T01:00:00.001Z OPEN 0x10 path=/u/f",
        "20.0.8.0 2018-02-25T01:00:00.002Z WRITE 0x10 0 1048576 3",
        "20.0.8.0 2018-02-25T01:00:01.002Z READ 0x10 0 4096",
        "20.0.8.0 not a line",
    ])
    write(b / "lwfs-client" / "cn00000" / "2018-02-24.log", [
        "20.0.8.0 2018-02-24T01:00:00.002Z WRITE 0x10 0 1048576 3"])
    head = "20.0.2.101 [2018-02-25 08:00:{:02d}]  [Trace]: "
    write(b / "lwfs-server" / "fwd001" / "2018-02-25.log", [
        head.format(s) + f"Write exe: {n} 0 0 0 0 0 0 0 2018-02-25T00:00:{s:02d}.100Z"
        for s, n in ((0, 4), (10, 9))])
    write(b / "lustre-client" / "fwd001" / "2018-02-24.log", [
        "20.0.2.101 2018-02-24T23:59:50.000Z online1-OST0001 0 7 256"])
    write(b / "lustre-client" / "fwd001" / "2018-02-25.log", [
        "20.0.2.101 2018-02-25T00:00:00.000Z online1-OST0001 0 9 256"])
    write(b / "ost" / "online1-oss01" / "2018-02-25.log", [
        "online1-oss01 2018-02-25T00:00:00.500Z online1-OST0001 0 0 0 0 0",
        "online1-oss01 2018-02-25T00:00:10.500Z online1-OST0001 0 2 256 0 2097152",
        "online1-oss01 2018-02-25T00:00:10.500Z online1-OST0001 x"])
    write(b / "mds" / "online1-mds01" / "2018-02-25.log", [
        "login01 2018-02-25T00:00:00.000Z open=1", "login01 2018-02-25T00:00:10.000Z open=4"])


def test_ingest_raw_hand_made(spark, warehouse, tmp_path, site):
    from pyspark.sql import Row
    from pyspark.testing import assertDataFrameEqual

    _hand_raw(tmp_path / "raw")
    stats = {s.source: s for s in ingest_raw(spark, warehouse, site, tmp_path / "raw", D)}
    assert set(stats) == set(BEACON)
    assert {k: (s.files, s.lines_read, s.rows, s.lines_quarantined) for k, s in stats.items()} \
        == {"lwfs-client": (1, 4, 3, 1), "lwfs-server": (1, 2, 2, 0),
            "lustre-client": (1, 1, 1, 0), "ost": (1, 3, 2, 1), "mds": (1, 2, 2, 0)}
    wh = warehouse
    assertDataFrameEqual(
        wh.read("raw_lwfs_trace", D).select("node", "op", "offset", "size", "count", "date"),
        [Row(node="cn00000", op="OPEN", offset=None, size=None, count=1, date=D),
         Row(node="cn00000", op="WRITE", offset=0, size=1048576, count=3, date=D),
         Row(node="cn00000", op="READ", offset=0, size=4096, count=1, date=D)])
    assertDataFrameEqual(
        wh.read("raw_lwfs_server", D).select("fwd", "ts", "hist_delta", "requests", "reset"),
        [Row(fwd="fwd001", ts=ts("2018-02-25 00:00:00.1"), hist_delta=None, requests=None,
             reset=False),
         Row(fwd="fwd001", ts=ts("2018-02-25 00:00:10.1"), hist_delta=[5] + [0] * 7,
             requests=5, reset=False)])
    assertDataFrameEqual(
        wh.read("raw_lustre_client", D).select("fwd", "ost", "write_rpc_delta", "interval_s"),
        [Row(fwd="fwd001", ost="online1-OST0001", write_rpc_delta=2, interval_s=10.0)])
    assertDataFrameEqual(
        wh.read("raw_ost", D).select("ost", "write_bytes_delta", "date"),
        [Row(ost="online1-OST0001", write_bytes_delta=None, date=D),
         Row(ost="online1-OST0001", write_bytes_delta=2097152, date=D)])
    assertDataFrameEqual(
        wh.read("raw_mds", D).select("source", "source_kind", "open", "ops"),
        [Row(source="login01", source_kind="login", open=None, ops=None),
         Row(source="login01", source_kind="login", open=3, ops=3)])
    q = wh.read("quarantine", D).select("source", "line_no", "raw").collect()
    assert sorted(map(tuple, q)) == [("lwfs-client", 4, "20.0.8.0 not a line"),
                                     ("ost", 3, "online1-oss01 2018-02-25T00:00:10.500Z "
                                                "online1-OST0001 x")]
    log = {r.source: r for r in wh.read("ingest_log", D).collect()}
    assert set(log) == set(BEACON) and log["ost"].lines_quarantined == 1
    assert wh.read("fwd_map", D).count() == 1024 and wh.read("ost_map", D).count() == 12
    assert wh.dates("raw_lwfs_trace") == [D]          # the D−1 file only seeds
    # one layer again by --source: replaces its rows, keeps the other layers' quarantine
    st = ingest_source(spark, wh, site, "ost", [str(tmp_path / "raw" / "beacon" / "ost")], D)
    assert (st.rows, st.lines_quarantined) == (2, 1)
    assert wh.read("raw_ost", D).count() == 2
    assert wh.read("quarantine", D).count() == 2 and wh.read("ingest_log", D).count() == 5


# --------------------------------------------------------------------------- simulated day


@pytest.fixture(scope="module")
def sim(spark, taihulight_days):
    """conftest.taihulight_days: a simulated 128-node TaihuLight history (every run traced),
    each date ingested seeded by the one before."""
    from lassi.core.warehouse import Warehouse

    h = taihulight_days
    assert h.dates[0] == D
    return Warehouse(spark, str(h.warehouse)), h.truth, h.ingest_stats


def _by_interval_day(df, *cols: str) -> dict[str, tuple]:
    """Sums of cols per UTC day of each sample's interval start (a delta covers
    (ts − interval_s, ts]; the sampling grid starts at midnight, so this is exact)."""
    from pyspark.sql import functions as F

    start = F.col("ts") - F.make_dt_interval(
        F.lit(0), F.lit(0), F.lit(0), F.coalesce(F.col("interval_s"), F.lit(0.0)))
    out = df.groupBy(F.to_date(start).alias("d")).agg(*[F.sum(c) for c in cols]).collect()
    return {r["d"].isoformat(): tuple(int(x or 0) for x in r[1:]) for r in out}


def _truth(truth: dict, layer: str) -> dict[str, tuple]:
    """The simulator's per-day (read, write) bytes of a layer, days with traffic only."""
    return _nonzero({d: (v["read_bytes"], v["write_bytes"])
                     for d, v in truth["beacon"]["layers"][layer].items()})


def _nonzero(per_day: dict[str, tuple]) -> dict[str, tuple]:
    return {d: v for d, v in per_day.items() if any(v)}


def test_sim_accounting(sim):
    _, _, stats = sim
    assert set(BEACON) <= set(stats[D])
    for per in stats.values():
        for s in per.values():
            assert s.conserved and s.lines_quarantined == 0 and s.counter_resets == 0
    # the hosts that sample from the start continue on D+1 from D: no first samples there
    nxt = stats[D + dt.timedelta(days=1)]
    assert all("first_samples" not in nxt[k].extra and nxt[k].extra["seed_files"] == nxt[k].files
               for k in ("lwfs-server", "ost", "mds") if k in nxt)


def test_sim_compute_traced_bytes(sim):
    from pyspark.sql import functions as F

    wh, truth, _ = sim
    tr = wh.read("raw_lwfs_trace").filter(F.col("op").isin("READ", "WRITE"))
    got = defaultdict(lambda: [0, 0])
    for r in tr.groupBy("date", "op").agg(F.sum(F.col("count") * F.col("size"))).collect():
        got[r["date"].isoformat()][r["op"] == "WRITE"] = int(r[2])
    assert {d: tuple(v) for d, v in got.items()} == _truth(truth, "compute_traced")
    assert wh.read("raw_lwfs_trace").filter(F.col("node").isNull()).count() == 0


def test_sim_ost_bytes(sim):
    from pyspark.sql import functions as F

    wh, truth, _ = sim
    ost = wh.read("raw_ost")
    # counters start at zero with the simulation: a first sample's cumulative values are 0,
    # so leaving its delta null loses nothing (taking the value as delta would give the same)
    first = ost.filter(F.col("read_bytes_delta").isNull())
    assert first.count() == len(load_site("taihulight", nodes=128).filesystems[0].osts)
    assert first.agg(F.max(F.col("read_bytes") + F.col("write_bytes"))).first()[0] == 0
    got = _by_interval_day(ost, "read_bytes_delta", "write_bytes_delta")
    assert _nonzero(got) == _truth(truth, "ost")


def test_sim_forwarding_bytes(sim):
    """The Lustre-client layer has RPCs and the interval's average pages per RPC only:
    bytes ≈ RPCs × pages_per_rpc × 4 KiB. Per RPC that is off by less than 1 page (a
    request's last page may be partial) plus ½ page (pages_per_rpc is rounded), so the
    day's read+write total must lie within 1.5 pages per RPC of the truth (0.03 % off on a
    1,024-node day, more on a small last day); read and write cannot be split
    exactly, as pages_per_rpc averages both.
    The first sample of a forwarding node's first day has no delta: it counts everything
    since the counters started, which is when the simulation started. RPC counts are
    exact: per OST they equal the OST layer's.
    """
    from pyspark.sql import functions as F

    wh, truth, _ = sim
    lc = wh.read("raw_lustre_client")
    rpc = (F.coalesce("read_rpc_delta", "read_rpc") + F.coalesce("write_rpc_delta", "write_rpc"))
    lc = lc.withColumn("rpc", rpc).withColumn("est", rpc * F.col("pages_per_rpc") * 4096)
    est = {d: v for d, v in _by_interval_day(lc, "est", "rpc").items() if v[1]}
    want = _truth(truth, "forwarding")
    assert set(est) == set(want)
    for d, (b, n) in est.items():
        assert abs(b - sum(want[d])) <= n * 6144, d
    assert want == _truth(truth, "ost")       # no other clients: same traffic on both sides
    by_ost = lambda df, cols: {r[0]: tuple(r[1:]) for r in  # noqa: E731
                               df.groupBy("ost").agg(*[F.sum(c) for c in cols]).collect()}
    assert by_ost(lc, [F.coalesce("read_rpc_delta", "read_rpc"),
                       F.coalesce("write_rpc_delta", "write_rpc")]) \
        == by_ost(wh.read("raw_ost"), ["read_rpc_delta", "write_rpc_delta"])


def test_sim_mds_background_and_meta_requests(sim):
    from pyspark.sql import functions as F

    wh, truth, _ = sim
    mds = wh.read("raw_mds")
    got = {(r["mds"], r["source"]): r for r in
           mds.groupBy("mds", "source", "source_kind")
           .agg(*[F.sum(op).alias(op) for op in BEACON_MDS_OPS]).collect()}
    for m, sources in truth["beacon"]["mds_background"].items():
        for src, t in sources.items():
            r = got[(m, src)]
            assert {op: r[op] for op in BEACON_MDS_OPS if r[op]} == t["ops"]
            assert r["source_kind"] == ("login" if src.startswith("login") else "cluster")
    # the forwarding nodes' MDS ops are the metadata requests their LWFS servers served
    fwd_ops = {r["source_node"]: r[1] for r in mds.filter(F.col("source_kind") == "forwarding")
               .groupBy("source_node").agg(F.sum("ops")).collect()}
    srv = wh.read("raw_lwfs_server").filter("op_class = 'Meta' AND kind = 'exe'")
    meta = {r["fwd"]: r[1] for r in srv.groupBy("fwd").agg(F.sum("requests")).collect()}
    assert fwd_ops and all(meta[f] == n for f, n in fwd_ops.items())


def test_job_log_listing_nodes_by_ip_is_named_through_the_site(warehouse, tmp_path):
    """Beacon's node identity is the IP: a job log may list IPs, and ingest names them."""
    from lassi.core.config import load_site

    site = load_site("taihulight", nodes=256)
    ips = [site.node_ip(n) for n in ("cn00001", "cn00002", "cn00003")]
    log = tmp_path / "jobs.log"
    log.write_text(f"7\t{','.join(ips)}\tipjob\t2018-02-25T01:00:00Z\t2018-02-25T02:00:00Z\n"
                   "8\tcn[00004-00005]\tnamejob\t2018-02-25T01:00:00Z\t2018-02-25T02:00:00Z\n")
    ingest_source(warehouse.spark, warehouse, site, "beacon-job", [str(log)],
                  dt.date(2018, 2, 25))
    rows = {r.job_id: r for r in warehouse.read("app_run", [dt.date(2018, 2, 25)]).collect()}
    assert rows["7"].nodes == ["cn00001", "cn00002", "cn00003"] and rows["7"].n_nodes == 3
    assert rows["8"].nodes == ["cn00004", "cn00005"]


def test_trace_ips_the_site_does_not_know_are_a_loud_warning(sim, taihulight_days, spark,
                                                               tmp_path):
    """The day's own site: every trace line's IP is a compute node's (check found nothing).
    A site whose compute IPs start elsewhere (`ip_offset`), as a wrong conf/ would: every
    line is counted, one warning line says so (counts from the raw files)."""
    import copy

    from lassi.core.config import Site
    from lassi.core.warehouse import Warehouse

    wh, _, _ = sim
    raw = taihulight_days.raw
    files = sorted((raw / "beacon" / "lwfs-client").glob(f"*/{D}.log"))
    lines = sum(1 for f in files for x in f.read_text().splitlines() if x.strip())
    checks = {r["source"]: r for r in wh.read("data_check", [D]).collect()}
    assert (checks["lwfs-client"]["n_bad"], checks["lwfs-client"]["n_total"]) == (0, lines)
    assert checks["scheduler"]["n_bad"] == 0 and checks["lwfs-client"]["warning"] is None

    site = load_site("taihulight", nodes=taihulight_days.nodes)
    data = copy.deepcopy(site.data)
    data["compute"]["ip_offset"] = 8192                    # IPs from 20.0.32.0
    shifted = Site(data, "shifted.yaml")
    other = Warehouse(spark, str(tmp_path / "wh"))
    ingest_source(spark, other, shifted, "lwfs-client", [str(raw / "beacon" / "lwfs-client")],
                  D)
    warnings: list[str] = []
    check_date(other, shifted, D, warnings.append)
    assert len(warnings) == 1
    assert warnings[0].startswith(f"warning: lwfs-client: {lines:,} of {lines:,} trace lines "
                                  "from IPs the site does not know (e.g. 20.0.8.")
    assert "shifted.yaml (compute.ip_format, ip_offset)" in warnings[0]
