"""Fuzzed inputs for the text sources' parsers: nothing raises, every line is counted.

Each source's file parser is fed mutations of a real sample (../shared/realdata, skipped
when absent) or of lines in its documented grammar (LWFS client traces have no public
sample), with a fixed seed: truncations at many byte offsets, flipped bytes, a line of
binary garbage, invalid UTF-8, NUL bytes, CRLF endings, a 10 MB line, an empty file,
gzip whole / truncated / corrupt, duplicated and shuffled lines, a file that cannot be
read at all (a dangling link). For every case:

- no exception reaches the caller;
- lines read = lines used + lines quarantined, every quarantined line has a reason, and
  a file that cannot be read to its end is counted (a quarantined pseudo-line);
- for the line-oriented LWFS client trace, every row of a mutated file is a row of the
  clean file or comes from a line that is not one of the clean file's lines; for
  truncations, the rows of the whole lines kept are exactly the clean file's first rows.

The number of cases tried per source is printed (`pytest -s`).
"""

from __future__ import annotations

import datetime as dt
import functools
import gzip
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lassi.ingest import alps, lctl_dl, lfs_df, lustre_stats, lwfs_client, lwfs_server, slurm
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
}


def _clean_bytes(source: str, realdata: Path | None) -> bytes:
    rel, _ = SOURCES[source]
    if rel is None:
        return ("\n".join(_lwfs_lines()) + "\n").encode()
    if realdata is None:
        pytest.skip("../shared/realdata is absent")
    path = realdata / rel
    if not path.exists():
        pytest.skip(f"no sample {rel}")
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


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


def check_contract(case: str, q, stats) -> None:
    assert stats.lines_read == stats.lines_used + stats.lines_quarantined, case
    assert len(q) == stats.lines_quarantined, case
    assert all(isinstance(x.reason, str) and x.reason for x in q), case


@pytest.fixture(scope="module")
def realdata_or_none() -> Path | None:
    """../shared/realdata, or None (the sources with a real sample then skip)."""
    here = _shared_dir() / "realdata"
    return here if here.is_dir() else None


@pytest.mark.parametrize("source", list(SOURCES))
def test_fuzzed_inputs_never_raise_and_count_every_line(source, realdata_or_none, tmp_path):
    clean = _clean_bytes(source, realdata_or_none)
    _, parse = SOURCES[source]
    rng = random.Random(f"{SEED}-{source}")
    base = tmp_path / "clean.log"
    base.write_bytes(clean)
    clean_rows, _, clean_stats = parse(base)
    assert clean_stats.lines_read > 0
    cases = 0
    for case, data, suffix in mutations(clean, rng):
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
    print(f"{source}: {cases} fuzz cases, each: no exception, lines read = used + "
          "quarantined")


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
