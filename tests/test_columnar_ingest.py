"""The columnar fast path of the LWFS client trace equals the line-by-line parser.

`lwfs_client.parse_file_arrow` takes only the lines its strict grammar covers and hands
every other line to `line_parser`; these tests feed both parsers the same files (clean,
awkward, broken, gzipped, truncated, split across read blocks) and require the same rows,
the same quarantined lines with the same reasons and the same accounting. Pure Python.
"""

from __future__ import annotations

import datetime as dt
import gzip
import random

import numpy as np
import pyarrow as pa
import pytest
from lassi.ingest import columnar, lwfs_client
from lassi.ingest.columnar import row_schema, rows_table, utc_micros
from lassi.ingest.driver_reads import reader_allocator
from lassi.ingest.iso_times import read_iso

from lassi.core.config import load_site

DAY = dt.date(2018, 9, 10)
IP = "20.0.8.17"
GOOD = [
    f"{IP} 2018-09-10T06:16:52.125Z OPEN 0x1200bd3f0 path=/User146/65968/-11607",
    f"{IP} 2018-09-10T06:16:52.127Z WRITE 0x1200bd3f0 0 524288",
    f"{IP} 2018-09-10T06:16:52.131Z WRITE 0x1200bd3f0 524288 524288 458",
    f"{IP} 2018-09-10T06:16:53.002Z READ 0x1200bd3f0 0 131072 count=16",
    f"{IP} 2018-09-10T06:16:53.100Z STAT 0x1200bd3f0 path=/User146/a count=3",
    f"{IP} 2018-09-10T06:16:53.200Z UNLINK 0x1200bd3f0 count=7",
    f"{IP} 2018-09-10T06:16:53.410Z CLOSE 0x1200bd3f0",
    f"{IP} 2018-09-10T06:16:53.410123Z CLOSE 0x2",
    f"{IP} 2018-09-10T06:16:54Z MKDIR 0x3 path=/a/path=b count=0002",
    "99.9.9.9 2018-09-10T06:16:54.000Z WRITE 0x1 4096 4096 count=2",
]
# lines the strict grammar leaves to the line parser: valid ones (spaces in paths, LSEEK
# offsets, tabs, no fd) and broken ones (each with its own quarantine reason)
AWKWARD = [
    f"{IP} 2018-09-10T06:16:55.000Z STAT 0x1 path=/User146/a dir count=3",
    f"{IP} 2018-09-10T06:16:55.000Z LSEEK 0x1 4096",
    f"{IP}\t2018-09-10T06:16:55.000Z  READ 0x1 0 4096",
    f"{IP} 2018-09-10T06:16:55.000Z SYNC",
    f"{IP} 2018-09-10T06:16:55.000Z OPEN 0x1 path=/données/é",
    f"{IP} 2018-09-10T06:16:55.000Z OPEN xpath=1 path=/a",
    f"{IP} 2018-09-10T06:16:55.5Z READ 0x1 0 1",
    "",
    "   ",
    f"{IP} 2018-09-10T06:16:55.000Z READ 0x1 0 4096 0",
    f"{IP} 2018-09-10T06:16:55.000Z READ 0x1 0 4096 count=0",
    f"{IP} 2018-09-10 06:16:55 READ 0x1 0 4096 1",
    f"{IP} 2018-09-10T06:16:55.000Z READ 0x1 0",
    f"{IP} 2018-09-10T06:16:55.000Z read 0x1 0 1 1",
    f"{IP} 2018-09-10T06:16:55.000Z OPEN 0x1 junk",
    f"{IP} 2018-09-11T00:00:01.000Z WRITE 0x1 0 1 1",
    f"{IP} 2018-02-30T00:00:01.000Z WRITE 0x1 0 1 1",
    f"{IP} 2018-09-10T23:59:60.000Z WRITE 0x1 0 1 1",
    f"{IP} 2018-09-10T24:00:00.000Z WRITE 0x1 0 1 1",
    f"{IP} 2018-09-10T06:16:55.000Z WRITE 0x1 99999999999999999999 1",
    f"{IP} 2018-09-10T06:16:55.000Z WRITE 0x1 9223372036854775807 1",
    f"{IP} 2018-09-10T06:16:55.000Z WRITE 0x1 -1 1",
    f"{IP} 2018-09-10T06:16:55.000Z OPEN 0x1 path=",
    f"{IP} 2018-09-10T06:16:55.000Z OPEN count=4",
    "\x00\x01 garbage \ufffd",
]


@pytest.fixture(scope="module")
def site():
    return load_site("taihulight")


def both(path, site, day=DAY):
    """(fast, reference) results, rows as sorted tuples of the Arrow row schema."""
    fast_rows, fq, fs = lwfs_client.parse_file_arrow(path, site, None, day)
    ref_rows, rq, rs = lwfs_client.parse_file(path, site, None, day)
    schema = row_schema("raw_lwfs_trace")
    ref = rows_table(ref_rows, schema)
    assert fast_rows.schema == schema
    key = lambda r: tuple("" if v is None else str(v) for v in r.values())  # noqa: E731
    return ((sorted(fast_rows.to_pylist(), key=key), fq, fs),
            (sorted(ref.to_pylist(), key=key), rq, rs))


def same(path, site, day=DAY):
    fast, ref = both(path, site, day)
    assert fast[0] == ref[0]
    assert [(q.line_no, q.raw, q.reason) for q in fast[1]] == \
        [(q.line_no, q.raw, q.reason) for q in ref[1]]
    assert fast[2] == ref[2]
    assert fast[2].lines_read == fast[2].lines_used + fast[2].lines_quarantined
    return fast


def test_utc_micros_rejects_what_python_rejects():
    text = pa.array(["2018-09-10T06:16:52Z", "2018-09-10T06:16:52.125Z",
                     "2018-09-10T06:16:52.125001Z", "2024-02-29T23:59:59.999Z",
                     "2018-02-30T00:00:00Z", "2018-09-10T23:59:60Z", "2018-09-10T24:00:00Z",
                     "0000-01-01T00:00:00Z", "2018-09-10T06:16:52.1Z", "junk", None])
    base = 1536560212 * 10**6                     # 2018-09-10T06:16:52Z, by hand
    leap = (dt.datetime(2024, 2, 29, 23, 59, 59, 999000) - dt.datetime(1970, 1, 1))
    assert utc_micros(text).to_pylist() == [
        base, base + 125000, base + 125001, leap // dt.timedelta(microseconds=1),
        None, None, None, None, None, None, None]
    # the same texts repeated (most distinct texts converted once, then taken): same values
    many = pa.concat_arrays([text] * 5)
    assert utc_micros(many).to_pylist() == utc_micros(text).to_pylist() * 5


def test_clean_lines_all_take_the_fast_path(tmp_path, site):
    path = tmp_path / "clean.log"
    path.write_text("\n".join(GOOD) + "\n")
    rows, q, stats = same(path, site)
    assert (stats.lines_read, stats.rows, len(q)) == (10, 10, 0)
    first = next(r for r in rows if r["op"] == "MKDIR")
    assert (first["node"], first["path"], first["count"]) == ("cn00017", "/a/path=b", 2)
    # by hand: 2018-09-10T06:16:54Z
    assert first["ts"] == 1536560214 * 10**6


def test_strict_grammar_takes_good_lines_only(site):
    schema = row_schema("raw_lwfs_trace")
    for lines, want in ((GOOD, True), (AWKWARD, False)):
        fields = columnar.Fields(pa.array(lines, pa.string()))
        fast, table = lwfs_client._fast_block(fields, DAY, site.nid_map, "f", schema)
        assert fast.to_pylist() == [want] * len(lines)
        assert table.num_rows == (len(lines) if want else 0)


def test_awkward_and_broken_lines_match_the_line_parser(tmp_path, site):
    path = tmp_path / "mixed.log"
    lines = GOOD + AWKWARD
    random.Random(7).shuffle(lines)
    path.write_text("\r\n".join(lines) + "\r\n")
    rows, q, stats = same(path, site)
    assert stats.lines_read == len(lines)
    assert len(q) == 14          # by hand: AWKWARD from "READ ... 0" on, less MAX_LONG and count=4


def test_lone_carriage_returns_and_no_final_newline(tmp_path, site):
    path = tmp_path / "cr.log"
    path.write_bytes(("\r".join(GOOD[:4]) + "\n" + "\n".join(GOOD[4:])).encode())
    rows, q, stats = same(path, site)
    assert (stats.lines_read, stats.rows) == (10, 10)


def test_blocks_split_lines_anywhere(tmp_path, site, monkeypatch):
    path = tmp_path / "blocks.log"
    path.write_text("\n".join((GOOD + AWKWARD) * 5))
    for size in (7, 64, 1000):
        monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        same(path, site)


def test_gzip_and_truncated_gzip(tmp_path, site):
    text = ("\n".join(GOOD * 200) + "\n").encode()
    gz = tmp_path / "t.log.gz"
    gz.write_bytes(gzip.compress(text))
    rows, q, stats = same(gz, site)
    assert stats.rows == 2000
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gz.read_bytes()[: len(gz.read_bytes()) // 2])
    rows, q, stats = same(cut, site)               # the whole file by the line parser
    assert q[-1].reason.startswith("read error after line")
    assert 0 < stats.rows < 2000


def test_invalid_utf8_and_empty_file(tmp_path, site):
    bad = tmp_path / "bad.log"
    bad.write_bytes(GOOD[0].encode() + b"\n" + GOOD[1].encode()[:-3] + b"\xff\xfe\n" +
                    GOOD[2].encode() + b"\n")
    rows, q, stats = same(bad, site)
    assert (stats.rows, len(q)) == (2, 1)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    rows, q, stats = same(empty, site)
    assert (stats.lines_read, stats.rows) == (0, 0)


def test_many_files_in_one_call_equal_file_by_file(tmp_path, site, monkeypatch):
    """`parse_files_arrow` puts small files through one fast-path call: every file keeps its
    own rows, quarantine (its own line numbers) and accounting; a file of another day, a
    file bigger than one block and a truncated gzip are handled apart, as file by file."""
    rng = random.Random(11)
    paths = []
    for i in range(6):
        lines = GOOD + AWKWARD
        rng.shuffle(lines)
        p = tmp_path / f"n{i}.log"
        p.write_text("\n".join(lines[: 5 + 4 * i]) + "\n")
        paths.append(p)
    (tmp_path / "empty.log").write_bytes(b"")
    cut = tmp_path / "cut.log.gz"
    full = gzip.compress(("\n".join(GOOD * 200) + "\n").encode())
    cut.write_bytes(full[: len(full) // 2])
    big = tmp_path / "big.log"
    big.write_text("\n".join((GOOD + AWKWARD) * 3))
    paths[3:3] = [tmp_path / "empty.log", cut, big]
    tasks = [(str(p), None, DAY) for p in paths]
    tasks.insert(2, (str(paths[0]), None, dt.date(2018, 9, 11)))      # another day: apart
    monkeypatch.setattr(columnar, "BLOCK_CHARS", 4000)          # `big` spans two blocks
    monkeypatch.setattr(lwfs_client, "BATCH_CHARS", 1500)       # and batches flush midway
    got_rows, got = [], []
    calls = 0
    for table, files in lwfs_client.parse_files_arrow(tasks, site):
        calls += 1
        got_rows += table.to_pylist()
        got += files
    assert calls < len(tasks)                                    # files did share calls
    assert sorted(str(task) for task, _, _ in got) == sorted(map(str, tasks))  # each once
    want_rows = []
    for task, q, stats in got:
        rows, rq, rs = lwfs_client.parse_file_arrow(task[0], site, None, task[2])
        want_rows += rows.to_pylist()
        assert [(x.file, x.line_no, x.raw, x.reason) for x in q] == \
            [(x.file, x.line_no, x.raw, x.reason) for x in rq], task
        assert stats == rs, task
    key = lambda r: tuple("" if v is None else str(v) for v in r.values())  # noqa: E731
    assert sorted(got_rows, key=key) == sorted(want_rows, key=key)
    assert sum(s.lines_quarantined for _, _, s in got) > 20      # the awkward lines counted


def test_no_zone_changes_offset_twice_within_a_day():
    """`fold_offsets` takes a day's offsets from its first and last seconds: exact only
    while no zone of the tz database has two transitions within a day (the closest two:
    Africa/Freetown's, four days apart in 1939). Later years follow each zone's rule."""
    zoneinfo = pytest.importorskip("zoneinfo._zoneinfo")
    from zoneinfo import available_timezones

    gaps = []
    for key in available_timezones():
        zone = zoneinfo.ZoneInfo.no_cache(key)
        times = getattr(zone, "_trans_utc", None)
        if times is None:
            pytest.skip("this zoneinfo keeps its transitions elsewhere")
        gaps += [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) > 86_400


def test_fold_offsets_per_day_equal_python_at_every_minute_of_changes():
    """Every minute (and the seconds either side of each change) of days with and without
    a transition, in zones with hour and half-hour changes, read as Python reads them: from
    their text read by `read_iso`, and from their wall microseconds with a fraction."""
    from zoneinfo import ZoneInfo

    days = [dt.datetime(2017, 3, 12), dt.datetime(2017, 11, 5), dt.datetime(2017, 6, 1),
            dt.datetime(2017, 4, 2), dt.datetime(2017, 10, 1), dt.datetime(1939, 9, 1)]
    stamps = [d + dt.timedelta(minutes=m, seconds=s) for d in days for m in range(1440)
              for s in (0, 59)]
    keys = pa.array([t.strftime("%Y-%m-%d %H:%M:%S") for t in stamps])
    for name in ("America/Chicago", "Australia/Lord_Howe", "Africa/Freetown", "UTC"):
        tz = ZoneInfo(name)
        iso = read_iso(keys)
        assert iso.ok.all()
        got = columnar.fold_offsets(iso.wall, np.ones(len(keys), bool), tz)
        want = [[(t.replace(fold=f, tzinfo=tz).utcoffset() // dt.timedelta(microseconds=1))
                 for f in (0, 1)] for t in stamps]
        assert got.tolist() == want, name
        wall = np.array([(t - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
                         for t in stamps]) + 999_999          # a fraction is ignored
        got = columnar.fold_offsets(wall, np.ones(len(wall), bool), tz)
        assert got.tolist() == want, name


def test_leading_ints_read_as_to_int():
    """`columnar.leading_ints` (a cast of values of 1-9 digits alone, RE2 for the others)
    gives `alps.to_int` of every value with at most 9 digits and says which have 10 or
    more, on a sliced array too."""
    import re

    from lassi.ingest.alps import to_int

    rng = random.Random(16)
    texts = ["0:0", "12x", "-1:9", "", None, "x", "123456789", "1234567890", "-123456789",
             "-1234567890", "  42", " -7x", "-", "--1", "007", "99999999999", " ", "9"]
    texts += ["".join(rng.choice("0123456789-: x") for _ in range(rng.randrange(14)))
              for _ in range(5000)]
    for array in (pa.array(texts), pa.array(["1", "x", *texts]).slice(2)):
        values, long = columnar.leading_ints(array)
        for text, got, too_long in zip(texts, values.to_pylist(), long.to_pylist(),
                                       strict=True):
            assert too_long == bool(re.match(r" *-?[0-9]{10}", text or "")), text
            assert got == (None if too_long else to_int(text)), text


def test_blank_lines_as_trimmed_text():
    """`blank_lines` (only the lines that start with a trimmed character are trimmed) gives
    what trimming every line gives, on random texts of spaces, tabs, letters and non-ASCII,
    sliced arrays, an empty array and one without a data buffer."""
    import pyarrow.compute as pc

    rng = random.Random(5)
    pieces = [" ", "\t", "a", "é", "", "  "]
    cases = [pa.array([], pa.string()), pa.array(["", ""], pa.string())]
    for _ in range(600):
        vals = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
                for _ in range(rng.randint(1, 12))]
        arr = pa.array(vals, pa.string())
        cases.append(arr.slice(1, len(arr) - 2) if len(arr) > 2 and rng.random() < 0.4 else arr)
    blanks = 0
    for arr in cases:
        for chars in (" ", " \t"):
            expected = pc.equal(pc.utf8_trim(arr, chars), "")
            assert columnar.blank_lines(arr, chars).equals(expected), (arr, chars)
            blanks += pc.sum(expected).as_py() or 0
    assert blanks > 500


def test_list_item_as_python_indexing():
    """`list_item` gives each list's i-th item, null where a list is shorter or null, also
    on a sliced list array (whose offsets do not start at 0)."""
    rng = random.Random(3)
    tried = 0
    for _ in range(400):
        vals = [None if rng.random() < 0.1 else
                [rng.choice("abc") for _ in range(rng.randint(0, 4))]
                for _ in range(rng.randint(1, 10))]
        arr = pa.array(vals, pa.list_(pa.string()))
        if len(arr) > 2 and rng.random() < 0.5:
            arr = arr.slice(1, len(arr) - 1)
        for i in range(5):
            expected = [v[i] if v is not None and len(v) > i else None for v in arr.to_pylist()]
            assert columnar.list_item(arr, i).to_pylist() == expected, (arr, i)
            tried += 1
    assert tried == 2000


def test_driver_readers_cut_a_file_into_even_blocks(tmp_path, monkeypatch):
    """parsed_blocks reads a file in a multiple of READ_THREADS blocks of about equal
    size (none over BLOCK_CHARS): 2,500 bytes at 1,000 per block are four of ~625 bytes,
    not 1,000 + 1,000 + 500; a file under MIN_BLOCK_CHARS is one block; every line once,
    in order."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(columnar, "BLOCK_CHARS", 1000)
    monkeypatch.setattr(columnar, "MIN_BLOCK_CHARS", 100)
    assert columnar.READ_THREADS == 2
    lines = [f"line {k:03d} " + "x" * 15 for k in range(100)]          # 25 bytes each
    path = tmp_path / "even.log"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size == 2500
    assert columnar.balanced_block_chars(path) == 625
    with ThreadPoolExecutor(2) as pool:
        blocks = columnar.parsed_blocks(path, lambda b: b.to_pylist(), pool)
    assert [len(b) for b in blocks] == [25, 25, 25, 25]
    assert [x for b in blocks for x in b] == lines
    monkeypatch.setattr(columnar, "MIN_BLOCK_CHARS", 4096)
    assert columnar.balanced_block_chars(path) == 1000      # capped by BLOCK_CHARS
    assert columnar.balanced_block_chars(tmp_path / "absent") == 1000


def test_mapped_blocks_cut_a_file_as_its_reads_do(tmp_path):
    """A plain file's blocks (memory-mapped) hold the file's bytes in order, each ending
    with a line end but the last; a block with a carriage return is a copy (bytearray),
    the others memoryviews without one; block k ends at the last line end before
    (k + 1) * size, so a file of n sizes of short lines is n blocks; a line longer than a
    block is one block. A gzip file's blocks (read into buffers) hold the same bytes."""
    rng = random.Random(11)
    tried = 0
    for case in range(60):
        size = rng.choice([1, 7, 64, 300, 5000])
        parts = []
        for _ in range(rng.randint(0, 80)):
            line = "x" * rng.choice([0, 1, 5, 40, 400, 9000])
            parts.append(line + rng.choice(["\n", "\n", "\n", "\r\n", "\r"]))
        data = "".join(parts)
        if data and rng.random() < 0.3:
            data = data.rstrip("\r\n") + "tail"           # no final line end
        path = tmp_path / f"f{case}.log"
        path.write_bytes(data.encode())
        blocks = list(columnar.raw_blocks(path, size))
        assert b"".join(bytes(b) for b in blocks) == data.encode(), case
        for b in blocks[:-1]:
            assert bytes(b).endswith(b"\n"), case
        for b in blocks:
            assert len(b) > 0
            cr = b"\r" in bytes(b)
            assert isinstance(b, bytearray if cr else memoryview), case
            assert columnar.has_carriage_return(b) == cr
        gz = tmp_path / f"f{case}.gz"
        gz.write_bytes(gzip.compress(data.encode()))
        read = list(columnar.raw_blocks(gz, size))
        assert all(isinstance(b, bytearray) for b in read)
        assert b"".join(read) == data.encode(), case
        tried += bool(blocks)
    assert tried > 40
    even = tmp_path / "even.log"
    even.write_text("".join(f"{k:09d}\n" for k in range(1000)))       # 10,000 bytes
    assert [len(b) for b in columnar.raw_blocks(even, 2500)] == [2500] * 4
    ends = np.cumsum([len(b) for b in columnar.raw_blocks(even, 2495)])
    assert ends.tolist() == [2490, 4990, 7480, 9980, 10000]     # lines end at multiples of 10


def test_files_that_cannot_be_mapped_are_read(tmp_path, monkeypatch):
    """A file on a filesystem that maps nothing (mmap raises) gives its bytes in read
    blocks, every line once."""
    data = "".join(f"line {k}\n" for k in range(500)).encode()
    path = tmp_path / "plain.log"
    path.write_bytes(data)

    def refuse(*_args, **_kwargs):
        raise OSError(19, "No such device")

    monkeypatch.setattr(columnar.mmap, "mmap", refuse)
    blocks = list(columnar.raw_blocks(path, 700))
    assert all(isinstance(b, bytearray) for b in blocks) and len(blocks) > 3
    assert b"".join(blocks) == data


def test_driver_readers_allocate_from_malloc_unless_mimalloc_keeps_its_pages(monkeypatch):
    """Inside `reader_allocator` Arrow's buffers come from its default pool when mimalloc
    keeps its pages (`lassi.ARROW_KEEPS_PAGES`), else from the C library's malloc; after
    it (also after an error) the pool is the one before."""
    from lassi.ingest import driver_reads

    before = pa.default_memory_pool()
    monkeypatch.setattr(driver_reads, "ARROW_KEEPS_PAGES", True)
    with reader_allocator():
        assert pa.default_memory_pool().backend_name == before.backend_name
    monkeypatch.setattr(driver_reads, "ARROW_KEEPS_PAGES", False)
    with reader_allocator():
        assert pa.default_memory_pool().backend_name == "system"
        assert pa.array(["x"] * 1000).buffers()[2] is not None
    assert pa.default_memory_pool().backend_name == before.backend_name
    with pytest.raises(ValueError), reader_allocator():
        raise ValueError("a reader fails")
    assert pa.default_memory_pool().backend_name == before.backend_name


@pytest.mark.parametrize(("first", "env", "want"), [
    ("import lassi, pyarrow", None, "True -1"),
    ("import pyarrow, lassi", None, "False -1"),       # mimalloc read its options already
    ("import lassi, pyarrow", "10", "False 10"),       # the caller's setting stands
])
def test_lassi_tells_mimalloc_to_keep_its_pages_before_pyarrow_loads(first, env, want):
    """`import lassi` sets MIMALLOC_PURGE_DELAY=-1 unless it is set, and says whether
    mimalloc, which reads it once as pyarrow loads, got it (a fresh interpreter each)."""
    import os
    import subprocess
    import sys

    environ = {k: v for k, v in os.environ.items() if k != "MIMALLOC_PURGE_DELAY"}
    if env is not None:
        environ["MIMALLOC_PURGE_DELAY"] = env
    code = (f"{first}; import os; print(lassi.ARROW_KEEPS_PAGES, "
            "os.environ['MIMALLOC_PURGE_DELAY'])")
    out = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == want


def test_take_ascending_equals_take():
    """`columnar.take_ascending` (chunk by chunk on threads) gives Arrow's own take: lists
    and strings over three chunks (one empty), a column rebuilt whole, no row, every row."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(7)
    chunks = [[["a", "b"], None, ["c"]], [], [["d"], ["e", "f", "g"]]]
    table = pa.table({
        "nodes": pa.chunked_array(chunks, pa.list_(pa.string())),
        "name": pa.chunked_array([["x", None, "z"], [], ["v", "w"]]),
        "whole": pa.array([1, 2, 3, 4, 5]),
    })
    with ThreadPoolExecutor(2) as pool:
        for at in ([], [0, 1, 2, 3, 4], [1, 3], sorted(rng.choice(5, 3, replace=False))):
            at = np.asarray(at, np.int64)
            got = columnar.take_ascending(table, at, pool)
            assert got.equals(table.take(pa.array(at, pa.int64()))), at
