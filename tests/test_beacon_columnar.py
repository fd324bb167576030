"""The columnar OST and Lustre-client parsers equal the line parsers, file by file.

`beacon_columnar.parse_*_arrow` parse the lines of their strict grammar as Arrow arrays,
hand every other line to the layer's line parser and compute the deltas with numpy; these
tests feed both parsers the files whose rows tests/test_beacon_ingest.py checks by hand
(seeds, newborn series, slow samples, resets, the optional wait counter, bad lines) and
more (gzip, truncated gzip, a missing file, an unreadable seed, blocks split anywhere, a
simulated day), and require the same rows, quarantine and accounting. Pure Python.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip
import random
from pathlib import Path

import pyarrow as pa
import pytest
from lassi.ingest import beacon_columnar, beacon_layers, columnar, lwfs_server
from lassi.ingest.columnar import row_schema, rows_table

from lassi.core.config import load_site
from lassi.core.schemas import BEACON_MDS_OPS

D = dt.date(2018, 2, 25)
IP = "20.0.2.100"
CLIENT_PREV = [f"{IP} 2018-02-24T23:59:50.000Z online1-OST0000 100 50 256 7000",
               f"{IP} 2018-02-24T23:59:40.000Z online1-OST0003 9 9 256",
               "junk"]
CLIENT = [
    f"{IP} 2018-02-25T00:00:00.000Z online1-OST0000 110 50 256 7500",
    f"{IP} 2018-02-25T00:00:00.000Z online1-OST0001 1 1 256",
    f"{IP} 2018-02-25T00:00:10.000Z online1-OST0000 120 60 128 9100",
    f"{IP} 2018-02-25T00:00:10.000Z online1-OST0001 2 1 256 40",
    f"{IP} 2018-02-25T00:00:10.000Z online1-OST0003 8 9 256",
    f"{IP} 2018-02-25T00:00:20.000Z online1-OST0000 4 1 256 300",
    f"{IP} 2018-02-25T00:00:20.000Z online1-OST0001 3 1 256 x",
    f"{IP} 2018-02-25T00:01:10.000Z OST9 1 2 3",
    f"{IP} 2018-02-25T00:01:10.000Z online1-OST0002 5 -1 64",
    f"{IP}  2018-02-25T00:01:10.000Z online1-OST0002 5 1 64",
    f"{IP} 2018-02-25T00:01:10.5Z online1-OST0004 5 1 64",
    f"{IP} 2018-02-26T00:00:00.000Z online1-OST0000 130 60 128",
    "",
    "99.1.1.1 2018-02-25T00:01:10.000Z online1-OST0000 1 1 1",
] + [f"{IP} 2018-02-25T00:02:0{s}Z online1-OST001{i} {9 + i} 0 256"      # a slow sample
     for i, s in enumerate(("0.000", "0.700", "1.400", "2.100"))]
OST = [
    "online1-oss01 2018-02-25T00:00:00.979Z online1-OST0000 0 0 0 0 0",
    "online1-oss01 2018-02-25T00:00:10.979Z online1-OST0000 4 2 256 4194304 2097152",
    "online1-oss01 2018-02-25T00:00:20.979Z online1-OST0000 4 2 0 4194304 2097152",
    "online1-oss01 2018-02-25T00:00:30.979Z online1-OST0000 1 0 256 1048576 0",
    "online1-oss01 2018-02-25T00:00:30.979Z online1-OST0000 1 0 256 1048576",
    "online1-oss01 2018-02-25T00:00:30Z online1-OST0000 1 0 256 1048576 0 9",
    "online1-oss01 2018-02-25T00:00:40Z online1-OST0000 1 0 256 9223372036854775808 0",
    "online1-oss01 2018-02-25T00:00:40Z online1-OST0001 1 0 256 922337203685477580 0",
    "online1-oss01 2018-02-25T00:00:40Z online1-OST0001 1 0 256 922337203685477580 0",
]
OPS = BEACON_MDS_OPS


def mds_line(src: str, t: str, base: int) -> str:
    """A canonical MDS line: every op, in order (the fast grammar)."""
    return f"{src} 2018-02-25T00:{t}Z " + " ".join(f"{op}={base + i}" for i, op in enumerate(OPS))


MDS_PREV = ["20.0.2.100 2018-02-24T23:59:50.000Z open=10 close=10",
            "login01 2018-02-24T23:59:50.000Z getattr=5"]
MDS = [
    mds_line("20.0.2.100", "00:00.000", 20),
    "login01 2018-02-25T00:00:00.000Z getattr=7",
    mds_line("cluster2-gw", "00:00.000", 3),
    mds_line("20.0.2.101", "00:10.000", 1),
    "login01 2018-02-25T00:00:10.000Z getattr=1",
    "fwd001 2018-02-25T00:00:10.000Z",
    mds_line("20.0.2.100", "00:10.000", 25),
    mds_line("cluster2-gw", "00:10.000", 2),               # a reset
    "20.0.2.100 2018-02-25T00:00:10.000Z open=x",
    "20.0.2.100 2018-02-25T00:00:10.000Z bogus=1",
    "20.0.2.100 2018-02-25T00:00:10.000Z open=1 open=2",
    mds_line("elsewhere", "00:20.000", 0).replace("open=0", "open=99999999999999999999"),
    # every op, not in order; a count past int64 in 19 digits; two spaces; one more item
    mds_line("20.0.2.102", "00:20.000", 4).replace("close=5 mknod=6", "mknod=6 close=5"),
    mds_line("20.0.2.105", "00:20.000", 4) + " bogus=1",
    mds_line("20.0.2.103", "00:20.000", 0).replace("open=0", "open=9999999999999999999"),
    mds_line("20.0.2.104", "00:20.000", 0).replace("open=0 ", "open=0  "),
]
LAYERS = {"lustre-client": (beacon_columnar.parse_lustre_client_arrow,
                            beacon_layers.parse_lustre_client, "raw_lustre_client"),
          "ost": (beacon_columnar.parse_ost_arrow, beacon_layers.parse_ost, "raw_ost"),
          "mds": (beacon_columnar.parse_mds_arrow, beacon_layers.parse_mds, "raw_mds"),
          "lwfs-server": (beacon_columnar.parse_lwfs_server_arrow, lwfs_server.parse_file,
                          "raw_lwfs_server")}


@pytest.fixture(scope="module")
def site():
    return load_site("taihulight", nodes=1024)


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


SLOW_LINES: list[str] = []      # the lines the columnar parsers left to the line parser


def same(layer: str, path: Path, site, prev=None, day=D):
    """Both parsers on one file: equal rows (in order), quarantine and accounting."""
    fast, slow, table = LAYERS[layer]
    rows, q, st = slow(path, site, prev, day)
    judge = beacon_layers.judge_line
    beacon_layers.judge_line = lambda *a: SLOW_LINES.append(a[4]) or judge(*a)
    try:
        t, q2, st2 = fast(path, site, prev, day)
    finally:
        beacon_layers.judge_line = judge
    assert t.schema == row_schema(table)
    assert t.to_pylist() == rows_table(rows, row_schema(table)).to_pylist()
    assert (q2, st2) == (q, st)
    return st


@pytest.mark.parametrize("seeded", [False, True])
@pytest.mark.parametrize("gz", [False, True])
def test_lustre_client_equals_the_line_parser(tmp_path, site, seeded, gz):
    folder = tmp_path / "lustre-client" / "fwd000"
    prev = write(folder / "2018-02-24.log", CLIENT_PREV) if seeded else None
    path = write(folder / ("2018-02-25.log" + (".gz" if gz else "")), CLIENT)
    st = same("lustre-client", path, site, prev)
    assert st.lines_quarantined == 4 and st.counter_resets == 1 + seeded   # OST0003 9 -> 8
    assert st.extra.get("newborn_series") and bool(st.extra.get("first_samples")) != seeded
    assert st.extra.get("seed_files", 0) == seeded


def test_ost_equals_the_line_parser(tmp_path, site):
    path = write(tmp_path / "ost" / "online1-oss01" / "2018-02-25.log", OST)
    st = same("ost", path, site)
    assert (st.lines_read, st.rows, st.counter_resets) == (9, 6, 1)
    same("ost", path, site, day=None)
    same("ost", path, site, day=dt.date(2018, 2, 26))      # every line of another day


@pytest.mark.parametrize("seeded", [False, True])
def test_mds_equals_the_line_parser(tmp_path, site, seeded):
    folder = tmp_path / "mds" / "online1-mds01"
    prev = write(folder / "2018-02-24.log", MDS_PREV) if seeded else None
    path = write(folder / "2018-02-25.log", MDS)
    st = same("mds", path, site, prev)
    assert (st.lines_read, st.lines_quarantined, st.counter_resets) == (16, 6, 2)


# lines the byte-level MDS reader (beacon_mds_bytes) must leave to the line parser, next to
# ones it must take: 18 and 19 digits, the bytes beside the digits in ASCII, prefixes wrong
# in their second word or their case, no source, a tab, a byte past ASCII, another day, a
# time without its `Z`, an empty count
MDS_BYTES = [
    mds_line("20.0.2.100", "00:30.000", 7).replace("open=7", "open=123456789012345678"),
    mds_line("20.0.2.100", "00:40.000", 7).replace("open=7", "open=1234567890123456789"),
    mds_line("20.0.2.101", "00:30.000", 7).replace("sync=20", "sync=2/"),
    mds_line("20.0.2.101", "00:40.000", 7).replace("sync=20", "sync=:0"),
    mds_line("20.0.2.102", "00:30.000", 7).replace("crossdir_rename=", "crossdir_renamX="),
    mds_line("20.0.2.102", "00:40.000", 7).replace("getxattr=", "getXattr="),
    mds_line("", "00:30.000", 7),
    mds_line("20.0.2.103", "00:30.000", 7).replace(" close", "\tclose"),
    mds_line("20.0.2.103", "00:40.000", 7).replace("20.0.2.103", "20.0.2.10\u00e9"),
    mds_line("20.0.2.104", "00:30.000", 7).replace("2018-02-25", "2018-02-26"),
    mds_line("20.0.2.104", "00:40.000", 7).replace(".000Z", ".000"),
    mds_line("20.0.2.104", "00:50.000", 7).replace("open=7", "open="),
    mds_line("20.0.2.105", "00:30.000", 99999999),
]
MDS_SLOW = 11                   # of MDS's lines: all but the 5 of mds_line
MDS_BYTES_SLOW = 11             # all but the first and the last


@pytest.mark.parametrize("from_bytes", [True, False])
def test_mds_read_from_bytes_or_as_fields(tmp_path, site, monkeypatch, from_bytes):
    """The MDS fast path, from the block's bytes (`beacon_mds_bytes`) and from Arrow fields
    (`_mds_fast`, for blocks with carriage returns), takes exactly the lines of its grammar,
    also in blocks of one line."""
    if not from_bytes:
        monkeypatch.setattr(beacon_columnar, "MDS",
                            dataclasses.replace(beacon_columnar.MDS, block=None))
    folder = tmp_path / "mds" / "online1-mds01"
    path = write(folder / "2018-02-25.log", MDS + MDS_BYTES)
    for size in (None, 5):
        if size:
            monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        SLOW_LINES.clear()
        st = same("mds", path, site, write(folder / "2018-02-24.log", MDS_PREV))
        assert len(SLOW_LINES) == MDS_SLOW + MDS_BYTES_SLOW + len(MDS_PREV)   # and the seed's
        assert st.lines_read == len(MDS) + len(MDS_BYTES)
    crlf = folder / "crlf" / "2018-02-25.log"
    crlf.parent.mkdir()
    crlf.write_bytes("".join(line + "\r\n" for line in MDS + MDS_BYTES).encode())
    SLOW_LINES.clear()
    same("mds", crlf, site)
    assert len(SLOW_LINES) == MDS_SLOW + MDS_BYTES_SLOW


def lwfs(ip: str, local: str, utc: str, what: str = "Meta exe:", counts=(1,) * 8) -> str:
    body = f"{what} " + " ".join(map(str, counts)) if what != "queue" else "queue length: 3"
    return f"{ip} [2018-02-25 {local}]  [Trace]: {body} 2018-02-25T{utc}Z"


LWFS_PREV = [f"{IP} [2018-02-25 07:59:50]  [Trace]: Meta exe: 1 1 1 1 1 1 1 1 "
             "2018-02-24T23:59:50.100Z"]
LWFS = [
    lwfs(IP, "08:00:00", "00:00:00.827"),
    lwfs(IP, "08:00:00", "00:00:00.827", "Meta wait:", (0, 1, 2, 3, 4, 5, 6, 7)),
    lwfs(IP, "08:00:00", "00:00:00.827", "queue"),
    lwfs(IP, "08:00:10", "00:00:10.827", counts=(2,) * 8),
    lwfs(IP, "08:00:10", "00:00:10.827", "Meta wait:", (0,) * 8),           # a reset
    lwfs(IP, "08:00:20", "00:00:10.827", counts=(3,) * 8),                  # local skew
    lwfs(IP, "08:00:20", "00:00:20.827", counts=(3,) * 7),                  # 7 buckets
    lwfs("20.0.2.101", "08:00:20", "00:00:20.827", "Read exe:", (5,) * 8),
    f"{IP} [2018-02-25 08:00:30]   [Trace]: Meta exe: 4 4 4 4 4 4 4 4 2018-02-25T00:00:30.827Z",
    lwfs(IP, "08:00:40", "00:00:40.827", "Write exe:", (1, 2, 3, 4, 5, 6, 7, 99999999999999999999)),
    "Reshape and sort done...",
    "quert done",                               # lines of the real sample's header: fewer
    "2018.02.25",                               # fields than a time needs
]


@pytest.mark.parametrize("seeded", [False, True])
def test_lwfs_server_equals_the_line_parser(tmp_path, site, seeded):
    folder = tmp_path / "lwfs-server" / "fwd000"
    prev = write(folder / "2018-02-24.log", LWFS_PREV) if seeded else None
    path = write(folder / "2018-02-25.log", LWFS)
    st = same("lwfs-server", path, site, prev)
    assert (st.lines_read, st.lines_quarantined, st.counter_resets) == (13, 6, 1)
    assert st.extra["queue_lines"] == 1


def test_real_lwfs_server_sample_and_its_fuzz_cases(realdata, tmp_path, site):
    """Beacon's real LWFS server sample (its header lines included) and its fuzz cases
    (tests/test_fuzz_ingest.mutations: every named case, a fifth of the random truncations
    and flips) read as the line parser reads them, on the day and without one."""
    from tests.test_fuzz_ingest import SEED, mutations

    clean = (realdata / "beacon" / "data_example.txt").read_bytes()
    path = write(tmp_path / "lwfs-server" / "fwd000" / "2018-02-25.log", [])
    for k, (case, data, suffix) in enumerate(mutations(clean, random.Random(SEED))):
        if case.startswith(("truncated at", "1 bytes", "2 bytes", "3 bytes")) and k % 5:
            continue
        case_path = path.with_name(f"case{k}{suffix}")
        case_path.write_bytes(data)
        try:
            same("lwfs-server", case_path, site, day=D if k % 2 else None)
        except AssertionError as exc:
            raise AssertionError(f"case {case!r}") from exc
    path.write_bytes(clean)
    st = same("lwfs-server", path, site)
    assert (st.lines_read, st.lines_quarantined, st.rows) == (2581, 5, 2576)


def test_blocks_split_anywhere(tmp_path, site, monkeypatch):
    folder = tmp_path / "lustre-client" / "fwd000"
    prev = write(folder / "2018-02-24.log", CLIENT_PREV)
    path = write(folder / "2018-02-25.log", CLIENT * 3)
    for size in (5, 77, 1000):
        monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        same("lustre-client", path, site, prev)


def test_unreadable_files_and_seeds(tmp_path, site):
    folder = tmp_path / "ost" / "h"
    full = gzip.compress(b"".join(b"h 2018-02-25T00:00:%02d.000Z fs-OST0000 1 1 1 1 1\n" % i
                                  for i in range(50)))
    cut = folder / "2018-02-25.log.gz"
    folder.mkdir(parents=True)
    cut.write_bytes(full[: len(full) // 2])
    same("ost", cut, site)
    same("ost", folder / "missing.log", site)
    good = write(folder / "2018-02-26.log", OST[:4])
    st = same("ost", good, site, prev=cut, day=None)         # a seed that breaks mid-read
    assert st.extra["seed_read_errors"] == 1
    same("ost", good, site, prev=folder / "missing.log", day=None)


def test_simulated_days(taihulight_days):
    """The shared simulated TaihuLight history (conftest.taihulight_days: every day's files
    seeded by the day before, the forwarding node slowed twice) equals the line parsers'
    rows, every line on the fast path."""
    from lassi.ingest.runner import file_day, prev_day_file

    tl = load_site("taihulight", nodes=taihulight_days.nodes)
    SLOW_LINES.clear()
    n = 0
    for layer in LAYERS:
        for f in sorted((taihulight_days.raw / "beacon" / layer).rglob("*.log")):
            st = same(layer, f, tl, prev_day_file(f), file_day(f))
            n += st.rows
    assert n > 1000
    assert SLOW_LINES == []         # every simulated line is on the fast path


def test_local_times_across_daylight_saving_changes():
    """The LWFS server's local-time check, columnar (offsets per distinct minute), equals
    `lwfs_server.local_matches` second by second across a zone's spring gap and autumn
    fold and across a change in the middle of a minute (Monrovia, 1972: -0:44:30 to UTC,
    the gap ends at 00:44:30), for UTC times that match either fold, are skewed within and
    beyond the limit, and for local times that name no date."""
    from zoneinfo import ZoneInfo

    for tz, starts, span in (
            (ZoneInfo("Europe/Berlin"), (dt.datetime(2018, 3, 25, 1, 58),
                                         dt.datetime(2018, 10, 28, 1, 58)), 3 * 3600 + 240),
            (ZoneInfo("Africa/Monrovia"), (dt.datetime(1972, 1, 7, 0, 43),), 240)):
        _same_local_times(tz, starts, span)


def _same_local_times(tz, starts: tuple[dt.datetime, ...], span: int) -> None:
    """`_local_times` against the line parser's check, every 7 s (every second when the
    span is short) from each start, five UTC times per fold."""
    utc0 = dt.datetime(1970, 1, 1)
    local, utc = [], []
    for start in starts:
        for k in range(0, span, 7 if span > 600 else 1):
            t = start + dt.timedelta(seconds=k)
            for fold in (0, 1):
                off = t.replace(fold=fold, tzinfo=tz).utcoffset()
                for skew in (0.0, 0.5, 1.2, -0.4, 3600.0):
                    local.append(t.strftime("%Y-%m-%d %H:%M:%S"))
                    utc.append(t - off + dt.timedelta(seconds=skew))
    for bad in ("2018-02-30 10:00:00", "2018-03-25 24:00:00", "2018-03-25 10:00:60"):
        local.append(bad)
        utc.append(dt.datetime(2018, 3, 25, 9))
    us = pa.array([(u - utc0) // dt.timedelta(microseconds=1) for u in utc], pa.int64())
    got_us, got_ok = beacon_columnar._local_times(pa.array(local), us, tz)
    want_us, want_ok = [], []
    for text, u in zip(local, utc, strict=True):
        try:
            t = dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
        except ValueError:
            want_us.append(None)
            want_ok.append(False)
            continue
        want_us.append((t - utc0) // dt.timedelta(microseconds=1))
        want_ok.append(lwfs_server.local_matches(t, u, tz))
    assert got_us.to_pylist() == want_us
    assert got_ok.to_pylist() == want_ok
    assert 0 < sum(want_ok) < len(want_ok)
