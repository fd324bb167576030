"""Fuzzed inputs for the text sources' parsers: nothing raises, every line is counted.

Each source's line parser, and the column-wise reader that `lassi ingest` runs for it
(`COLUMNAR`; the LWFS server's crashed on its real sample's header lines until session 43),
is fed mutations of a real sample (../shared/realdata, skipped when absent) or of lines in
its documented grammar (LWFS client traces have no public sample), with a fixed seed:
truncations at many byte offsets, flipped bytes, a line of binary garbage, invalid UTF-8,
NUL bytes, CRLF endings, a 10 MB line, an empty file, gzip whole / truncated / corrupt,
duplicated and shuffled lines (out of order), a timestamp moved far into the future and one
past year 9999, a file that cannot be read at all (a dangling link). For every case:

- no exception reaches the caller;
- lines read = lines used + lines quarantined, every quarantined line has a reason, and
  a file that cannot be read to its end is counted (a quarantined pseudo-line);
- for the line-oriented LWFS client trace, every row of a mutated file is a row of the
  clean file or comes from a line that is not one of the clean file's lines; for
  truncations, the rows of the whole lines kept are exactly the clean file's first rows.

The Beacon counter layers (lustre-client, ost, mds) are fuzzed from lines in their
documented grammar. LMT rows are fuzzed in an SQLite copy, whose columns hold any type:
values of random cells replaced by NULL, negatives, 2^63-1, text, bytes, fractions, far-
future and unparseable times; Darshan logs by truncation and bit flips of a real log,
through the isolated worker. The number of cases tried per source is printed (`pytest -s`).
"""

from __future__ import annotations

import datetime as dt
import functools
import gzip
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from lassi.ingest import (
    alps,
    alps_columnar,
    beacon_columnar,
    beacon_job,
    beacon_job_columnar,
    beacon_layers,
    lctl_dl,
    lfs_df,
    lustre_columnar,
    lustre_stats,
    lwfs_client,
    lwfs_server,
    pbs_columnar,
    slurm,
    slurm_columnar,
    snapshot_columnar,
)
from lassi.ingest import pbs as pbs_parser

from lassi.core.config import Site, load_site
from tests.conftest import _shared_dir

SEED = 16
TRUNCATIONS = 40
FLIPS = 25
BIG_LINE = 10 * 1024 * 1024
LWFS_DAY = dt.date(2018, 9, 10)

@functools.cache
def taihulight() -> Site:
    """The TaihuLight site, loaded once (its 40,960-node map takes a while to build)."""
    return load_site("taihulight")


# a source: (sample path relative to ../shared/realdata or None for `LWFS_LINES`, parser)
Parser = Callable[[Path], tuple]


def _lwfs_lines() -> list[str]:
    ip = "20.0.8.17"
    out = []
    for k in range(60):
        ts = f"2018-09-10T06:{k // 60 + 16:02d}:{k % 60:02d}.{k * 7 % 1000:03d}Z"
        op = ("OPEN", "WRITE", "READ", "CLOSE", "STAT")[k % 5]
        tail = {"OPEN": "path=/User1/f{k}", "WRITE": "{o} 524288", "READ": "{o} 4096 16",
                "CLOSE": "", "STAT": "path=/User1/d count=3"}[op]
        out.append(f"{ip} {ts} {op} 0x{k:x} "
                   + tail.format(k=k, o=k * 524288).rstrip())
    return [x.rstrip() for x in out]


def _layer_lines(layer: str) -> list[str]:
    """60 clean lines of a Beacon counter layer (FORMATS.md §4), cumulative counters."""
    out = []
    for k in range(60):
        ts = f"2018-09-10T06:{k // 2:02d}:00.000Z"
        n = k // 2 + 1
        if layer == "lustre-client":
            out.append(f"20.0.2.100 {ts} online1-OST{k % 2:04x} {10 * n} {20 * n} 256")
        elif layer == "ost":
            out.append(f"oss001 {ts} online1-OST{k % 2:04x} {10 * n} {20 * n} 256 "
                       f"{10 * n << 20} {20 * n << 20}")
        else:
            out.append(f"20.0.2.{100 + k % 2} {ts} open={5 * n} close={5 * n} "
                       f"getattr={12 * n} unlink={n}")
    return out


def _job_lines() -> list[str]:
    """60 clean Beacon job log lines (FORMATS.md §3/§4): id, node list, name, UTC times."""
    return [f"{1000000 + k}\tcn[{4 * k:05d}-{4 * k + k % 4:05d}]\tapp_{k % 7:03d}\t"
            f"2018-09-10T{k // 6:02d}:{k % 6 * 10:02d}:00Z\t"
            f"2018-09-10T{k // 6 + 1:02d}:{k % 6 * 10 + 5:02d}:30Z" for k in range(60)]


def _layer(layer: str) -> Parser:
    return lambda p: beacon_layers.parse_file(p, taihulight(), layer, day=LWFS_DAY)


SOURCES: dict[str, tuple[str | None, Parser]] = {
    "lustre (2.14 exports)": (
        "lustre/whamcloud_lustrefs_exporter/lctl_fixtures/valid/lustre-2.14.0_ddn133/"
        "2.14.0_ddn133_exports.txt",
        lambda p: lustre_stats.parse_file(p, server="oss1")),
    "slurm (sacct)": ("scheduler/xdmod_shredder/slurm/input/accounting-logs.log",
                      lambda p: slurm.parse_file(p)),
    "slurm (pytokio JSON)": ("pytokio/sample.slurm", lambda p: slurm.parse_file(p)),
    "pbs": ("scheduler/xdmod_shredder/pbs/input/accounting-logs.log",
            lambda p: pbs_parser.parse_file(p)),
    "alps": ("scheduler/alps_apsched/apsched_excerpt_hlrs_2013-12-21.log",
             lambda p: alps.parse_file(p)),
    "lfs-df": ("pytokio/lfs-df.txt.gz", lambda p: lfs_df.parse_file(p)),
    "lctl-dl": ("pytokio/lctl-dl-t.txt.gz", lambda p: lctl_dl.parse_file(p)),
    "lwfs-server": ("beacon/data_example.txt",
                    lambda p: lwfs_server.parse_file(p, taihulight())),
    "lwfs-client": (None, lambda p: lwfs_client.parse_file(p, taihulight(), day=LWFS_DAY)),
    "beacon lustre-client": (None, _layer("lustre-client")),
    "beacon ost": (None, _layer("ost")),
    "beacon mds": (None, _layer("mds")),
    "beacon-job": (None, lambda p: beacon_job.parse_file(p)),
    "lustre (2.14 job_stats YAML)": (
        "lustre/whamcloud_lustrefs_exporter/testcmds_stdout/"
        "jobstats_2.14.0_162_OST_es01a-OST0001.txt",
        lambda p: lustre_stats.parse_file(p, server="oss1")),
    "lustre (old job_stats YAML)": (
        "lustre/hpe_lustre_exporter/proc/fs/lustre/obdfilter/lustrefs-OST0000/job_stats",
        lambda p: lustre_stats.parse_file(p, server="oss1")),
    "lustre (1.8 stats)": (
        "lustre/llnl_lmt_proc_fixtures/test/lustre_versions/1.8.3/proc/fs/lustre/obdfilter/"
        "lc1-OST0000/stats", lambda p: lustre_stats.parse_file(p, server="oss1")),
    "lustre (2.0 md_stats)": (
        "lustre/llnl_lmt_proc_fixtures/test/lustre_versions/2.0.56/proc/fs/lustre/mdt/"
        "lustre-MDT0000/md_stats", lambda p: lustre_stats.parse_file(p, server="mds1")),
}


def _listed(parse: Callable) -> Parser:
    """A column-wise reader as a file parser giving row dicts."""
    def rows(path: Path):
        table, q, stats = parse(path)
        return (table.to_pylist() if isinstance(table, pa.Table) else table), q, stats
    return rows


def _snapshots(source: str) -> Parser:
    mod = lfs_df if source == "lfs-df" else lctl_dl
    return _listed(lambda p: snapshot_columnar.read_table(p, source, None, "UTC",
                                                          mod.parse_file, lfs_df.snapshot_time,
                                                          mod.TAIL))


def _columnar_layer(layer: str) -> Parser:
    parse = {"lustre-client": beacon_columnar.parse_lustre_client_arrow,
             "ost": beacon_columnar.parse_ost_arrow, "mds": beacon_columnar.parse_mds_arrow,
             "lwfs-server": beacon_columnar.parse_lwfs_server_arrow}[layer]
    day = None if layer == "lwfs-server" else LWFS_DAY     # as SOURCES' line parsers
    return _listed(lambda p: parse(p, taihulight(), day=day))


# what `lassi ingest` runs for each source: the column-wise readings (each hands the lines
# outside its grammar to the line parser above)
COLUMNAR: dict[str, Parser] = {
    "slurm (sacct)": _listed(lambda p: slurm_columnar.parse_files([p])),
    "slurm (pytokio JSON)": _listed(lambda p: slurm_columnar.parse_files([p])),
    "pbs": _listed(lambda p: pbs_columnar.parse_files([p])),
    "alps": _listed(lambda p: alps_columnar.parse_files([p])),
    "lfs-df": _snapshots("lfs-df"),
    "lctl-dl": _snapshots("lctl-dl"),
    "lwfs-server": _columnar_layer("lwfs-server"),
    "lwfs-client": _listed(lambda p: lwfs_client.parse_file_arrow(p, taihulight(),
                                                                   day=LWFS_DAY)),
    "beacon lustre-client": _columnar_layer("lustre-client"),
    "beacon ost": _columnar_layer("ost"),
    "beacon mds": _columnar_layer("mds"),
    "beacon-job": _listed(lambda p: beacon_job_columnar.parse_files([p])),
    **{k: _listed(lambda p, server=("mds1" if "md_stats" in k else "oss1"):
                  lustre_columnar.parse_file_arrow(p, server=server))
       for k in SOURCES if k.startswith("lustre")},
}
# bare /proc files become captures of that version's layout under their `lctl` header
HEADERS = {
    "lustre (old job_stats YAML)": "obdfilter.lustrefs-OST0000.job_stats=",
    "lustre (1.8 stats)": "obdfilter.lc1-OST0000.stats=",
    "lustre (2.0 md_stats)": "mdt.lustre-MDT0000.md_stats=",
}
# sources whose rows depend only on the lines before them: a file cut at a line boundary
# gives a subset of the clean file's rows
PREFIX_CLOSED = {"lwfs-server", "beacon lustre-client", "beacon ost", "beacon mds",
                 "beacon-job", *(k for k in SOURCES if k.startswith("lustre"))}


def _clean_bytes(source: str, realdata: Path | None) -> bytes:
    rel, _ = SOURCES[source]
    if rel is None:
        lines = {"lwfs-client": _lwfs_lines, "beacon-job": _job_lines}.get(
            source, lambda: _layer_lines(source.removeprefix("beacon ")))()
        return ("\n".join(lines) + "\n").encode()
    if realdata is None:
        pytest.skip("../shared/realdata is absent")
    path = realdata / rel
    if not path.exists():
        pytest.skip(f"no sample {rel}")
    data = path.read_bytes()
    data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return (HEADERS[source] + "\n").encode() + data if source in HEADERS else data


def mutations(clean: bytes, rng: random.Random) -> Iterator[tuple[str, bytes, str]]:
    """(case name, file bytes, file suffix) of every fuzz case of one clean file."""
    n = len(clean)
    for k in range(TRUNCATIONS):
        cut = rng.randrange(n + 1) if k else n // 2
        yield f"truncated at byte {cut}", clean[:cut], ".log"
    for k in range(FLIPS):
        b = bytearray(clean)
        for _ in range(1 + k % 3):
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
        yield f"{1 + k % 3} bytes flipped", bytes(b), ".log"
    lines = clean.split(b"\n")
    mid = len(lines) // 2
    garbage = bytes(rng.randrange(256) for _ in range(200))
    yield "binary garbage line", b"\n".join(lines[:mid] + [garbage] + lines[mid:]), ".log"
    yield "invalid UTF-8", b"\n".join(lines[:mid] + [lines[mid] + b"\xff\xfe\xc3"]
                                      + lines[mid + 1:]), ".log"
    yield "NUL bytes", clean.replace(b"\n", b"\x00\n", 3), ".log"
    yield "CRLF endings", clean.replace(b"\n", b"\r\n"), ".log"
    yield "a 10 MB line", b"\n".join(lines[:mid] + [b"x" * BIG_LINE] + lines[mid:]), ".log"
    yield "empty file", b"", ".log"
    gz = gzip.compress(clean)
    yield "gzip", gz, ".log.gz"
    yield "truncated gzip", gz[: len(gz) * 2 // 3], ".log.gz"
    bad = bytearray(gz)
    bad[len(bad) // 2] ^= 0xFF
    yield "corrupt gzip", bytes(bad), ".log.gz"
    yield "duplicated lines", b"\n".join(x for line in lines for x in (line, line)), ".log"
    shuffled = lines[:]
    rng.shuffle(shuffled)
    yield "shuffled lines", b"\n".join(shuffled), ".log"
    for name, year, epoch in (("far-future timestamp", b"2999", b"32503680000"),
                              ("timestamp past year 9999", b"99999", b"999999999999")):
        yield name, b"\n".join(lines[:mid] + [_retime(x, year, epoch) for x in lines[mid:]]), \
            ".log"


def _retime(line: bytes, year: bytes, epoch: bytes) -> bytes:
    """The line with its first 4-digit year (20xx/19xx) or 10-digit epoch replaced."""
    m = re.search(rb"(?<![0-9])(?:19|20)[0-9]{2}(?=[-/])|(?<![0-9])1[0-9]{9}(?![0-9])", line)
    if m is None:
        return line
    new = year if len(m.group()) == 4 else epoch
    return line[:m.start()] + new + line[m.end():]


def check_contract(case: str, q, stats) -> None:
    assert stats.lines_read == stats.lines_used + stats.lines_quarantined, case
    assert len(q) == stats.lines_quarantined, case
    assert all(isinstance(x.reason, str) and x.reason for x in q), case


@pytest.fixture(scope="module")
def realdata_or_none() -> Path | None:
    """../shared/realdata, or None (the sources with a real sample then skip)."""
    here = _shared_dir() / "realdata"
    return here if here.is_dir() else None


@pytest.mark.parametrize("reader", ["line parser", "column-wise"])
@pytest.mark.parametrize("source", list(SOURCES))
def test_fuzzed_inputs_never_raise_and_count_every_line(source, reader, realdata_or_none,
                                                        tmp_path):
    """The contract for the line parser and for the column-wise reader `lassi ingest` runs
    (every named case and a third of the random truncations and flips for the latter)."""
    clean = _clean_bytes(source, realdata_or_none)
    parse = SOURCES[source][1] if reader == "line parser" else COLUMNAR[source]
    rng = random.Random(f"{SEED}-{source}")
    base = tmp_path / "clean.log"
    base.write_bytes(clean)
    clean_rows, _, clean_stats = parse(base)
    assert clean_stats.lines_read > 0 and clean_stats.lines_quarantined < clean_stats.lines_read
    cases = prefix_checked = 0
    for k, (case, data, suffix) in enumerate(mutations(clean, rng)):
        if (reader == "column-wise" and k % 3
                and case.startswith(("truncated at", "1 bytes", "2 bytes", "3 bytes"))):
            continue
        path = tmp_path / f"case{cases}{suffix}"
        path.write_bytes(data)
        rows, q, stats = parse(path)
        check_contract(case, q, stats)
        if case in ("truncated gzip", "corrupt gzip") and stats.lines_read:
            assert q and ("read error" in q[-1].reason or "cannot read" in q[-1].reason
                          or stats.lines_quarantined), case
        if case == "empty file":
            assert (len(rows), stats.lines_quarantined) == (0, 0), case
        if case == "gzip":
            assert (len(rows), stats.lines_read) == (len(clean_rows), clean_stats.lines_read)
        if case.startswith("truncated at") and source in PREFIX_CLOSED:
            path.write_bytes(data[: data.rfind(b"\n") + 1])   # the whole lines kept
            kept = Counter(_key(r) for r in parse(path)[0])
            assert not kept - Counter(_key(r) for r in clean_rows), case
            prefix_checked += 1
        path.unlink()
        cases += 1
    gone = tmp_path / "gone.log"
    gone.symlink_to(tmp_path / "no-such-file")           # cannot be read at all
    rows, q, stats = parse(gone)
    check_contract("unreadable file", q, stats)
    assert (len(rows), stats.lines_quarantined, stats.extra.get("files_unreadable")) == \
        (0, 1, 1)
    assert "files quarantined (unreadable)" in stats.summary()
    cases += 1
    cut = (f"; {prefix_checked} cut at a line boundary give a subset of the clean rows"
           if prefix_checked else "")
    print(f"{source}: {cases} fuzz cases, each: no exception, lines read = used + "
          f"quarantined{cut}")


def _key(row: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in row.items() if k != "file"))


def test_lwfs_client_rows_come_from_clean_lines_or_changed_ones(tmp_path):
    """Line-level property of a row-per-line source: a mutated file's rows are the clean
    file's rows of its unchanged lines, plus rows of lines the clean file does not have."""
    site = taihulight()
    clean_lines = _lwfs_lines()
    clean = ("\n".join(clean_lines) + "\n").encode()
    base = tmp_path / "clean.log"
    base.write_bytes(clean)
    rows, _, _ = lwfs_client.parse_file(base, site, day=LWFS_DAY)
    by_line = {line: _key(r) for line, r in zip(clean_lines, rows, strict=True)}
    rng = random.Random(SEED)
    cases = 0
    for case, data, suffix in mutations(clean, rng):
        if suffix != ".log":
            continue
        path = tmp_path / "m.log"
        path.write_bytes(data)
        got, q, stats = lwfs_client.parse_file(path, site, day=LWFS_DAY)
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n")
        kept = [line for line in text if line in by_line]
        want = sorted(by_line[line] for line in kept)
        have = sorted(_key(r) for r in got)
        extra = set(have) - set(want)
        assert all(k not in by_line.values() or k in want for k in extra), case
        assert set(want) <= set(have), case
        if case.startswith("truncated"):
            whole = data[: data.rfind(b"\n") + 1].decode().split("\n")[:-1]
            assert have[: len(whole)] or not whole
            assert sorted(_key(r) for r in got[: len(whole)]) == \
                sorted(by_line[line] for line in whole), case
        cases += 1
    print(f"lwfs-client: {cases} cases checked line by line against the clean file")


# --- LMT rows (an SQLite copy holds any value in any column) ------------------------------

LMT_VALUES = (None, -1, 2**63 - 1, "garbage", b"\xff\xfe", 1.5, "2999-01-01 00:00:00",
              "not a time", "")
LMT_CASES = 120


def test_fuzzed_lmt_rows_are_counted_never_raise(tmp_path):
    """Random cells of the tiny LMT database's data and time tables replaced by values of
    other types, out-of-range numbers and bad or far-future times: the read never raises,
    rows read = used + quarantined, and every quarantined row has a reason."""
    import sqlite3

    from lassi.ingest.lmt import LmtDb

    from tests.test_lmt import PACIFIC, UTC0, tiny_tables, write_sqlite

    window = (UTC0 - dt.timedelta(hours=1), UTC0 + dt.timedelta(hours=2))
    base = write_sqlite(tmp_path / "clean.sqlite3", tiny_tables())
    with LmtDb(str(base), PACIFIC) as db:
        clean = db.read(*window).stats
    assert clean.conserved and clean.lines_read == 23
    rng = random.Random(f"{SEED}-lmt")
    tables = {"OST_DATA": 9, "MDS_OPS_DATA": 6, "TIMESTAMP_INFO": 2, "OSS_DATA": 4,
              "MDS_DATA": 7}
    for case in range(LMT_CASES):
        path = tmp_path / f"case{case}.sqlite3"
        path.write_bytes(base.read_bytes())
        conn = sqlite3.connect(path)
        for _ in range(1 + case % 4):
            table = rng.choice(sorted(tables))
            rowids = [r[0] for r in conn.execute(f"SELECT rowid FROM {table}")]
            col = rng.randrange(tables[table])
            name = conn.execute(f"PRAGMA table_info({table})").fetchall()[col][1]
            try:
                conn.execute(f"UPDATE {table} SET {name} = ? WHERE rowid = ?",
                             (rng.choice(LMT_VALUES), rng.choice(rowids)))
            except sqlite3.IntegrityError:
                continue          # a NOT NULL or INTEGER PRIMARY KEY column refuses it too
        conn.commit()
        conn.close()
        with LmtDb(str(path), PACIFIC) as db:
            res = db.read(*window)
        st = res.stats
        assert st.lines_read == st.lines_used + st.lines_quarantined, case
        assert len(res.quarantined) == st.lines_quarantined, case
        assert all(q.reason for q in res.quarantined), case
        assert st.rows == len(res.ost_rows) + len(res.mds_rows), case
    print(f"lmt: {LMT_CASES} fuzzed databases, each: no exception, rows read = used + "
          "quarantined")


# --- Darshan logs (darshan-util through the isolated worker) -------------------------------

DARSHAN_CASES = 24


def test_fuzzed_darshan_logs_are_counted_never_raise(tmp_path, realdata_or_none):
    """Truncations and bit flips of a real log: every log is read or quarantined with a
    reason, nothing raises, and the intact copy among them still gives its job."""
    from lassi.ingest.darshan import parse_logs

    if realdata_or_none is None:
        pytest.skip("../shared/realdata is absent")
    clean = (realdata_or_none / "pytokio" / "sample.darshan").read_bytes()
    rng = random.Random(f"{SEED}-darshan")
    paths = []
    for k in range(DARSHAN_CASES):
        b = bytearray(clean)
        if k % 2:
            for _ in range(1 + k % 3):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
        else:
            b = b[:rng.randrange(len(b))]
        paths.append(tmp_path / f"case{k}.darshan")
        paths[-1].write_bytes(bytes(b))
    (tmp_path / "intact.darshan").write_bytes(clean)
    paths.append(tmp_path / "intact.darshan")
    jobs, _, qs, stats = parse_logs(paths, timeout=120)
    assert stats.lines_read == len(paths) == stats.lines_used + stats.lines_quarantined
    assert len(qs) == stats.lines_quarantined and all(q.reason for q in qs)
    assert "intact.darshan" in {Path(j["log_path"]).name for j in jobs}
    print(f"darshan: {len(paths)} logs, {stats.lines_quarantined} quarantined, each with a "
          "reason; no exception")
