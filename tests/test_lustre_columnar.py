"""The columnar fast path of Lustre captures equals the line parser, file by file.

`lustre_columnar.parse_file_arrow` takes the blocks of a capture (stats and job_stats) in
its strict grammar and hands any other part of a file, cut where the line parser's state
resets, to the line parser (a file that cannot be read to its end, from the last rows
handed on, to `lustre_stats.parse_file`'s streaming reader); these tests feed both the
same files (clean captures with every quirk the grammar covers, files it must refuse,
captures split across read blocks, gzip, truncated gzip, every real Lustre file in
../shared/realdata) and require the same rows, quarantine and accounting. Pure Python.
"""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path

import pytest
from lassi.ingest import columnar, lustre_columnar, lustre_stats
from lassi.ingest.columnar import row_schema, rows_table

SCHEMA = row_schema("raw_lustre_stats")
NIDS = {"10.2.4.27": "cn027"}
# every construct of the grammar: target stats, md_stats, exports with Cray and IP NIDs,
# nsecs and usecs (a short usecs fraction counts microseconds), start_time after the first
# counter, elapsed_time, [regs], sumsq, a counter twice in one snapshot (first value kept),
# blank lines, two snapshots in one block, an export without counters (a zero marker) and
# one at the end of the capture (none: the capture may have been cut there)
CAPTURE = """\
obdfilter.fs2-OST0001.stats=
snapshot_time             1507593600.341749 secs.usecs
write_bytes               7944433 samples [bytes] 0 0 8330341777408
preprw                    7944433 samples [reqs]
obdfilter.fs2-OST0001.exports.10@gni1.stats=
snapshot_time             1507593600.5 secs.usecs
write_bytes               12 samples [bytes] 1048576 1048576 12582912 13194139533312
start_time                1505001600.000000 secs.usecs
elapsed_time              2592000.341749 secs.usecs
read_bytes                3 samples [bytes] 4096 4096 12288
statfs                    7 samples [regs]
statfs                    9 samples [reqs]

snapshot_time             1507593780.123456789 secs.nsecs
write_bytes               15 samples [bytes] 1048576 1048576 15728640
mdt.fs3-MDT0000.exports.10.2.4.27@o2ib1.stats=
snapshot_time:            1507593600 secs.usecs
open                      5 samples [reqs]
getattr                   2 samples
mdt.fs3-MDT0000.md_stats=
snapshot_time             1507593601.000001
close                     4 samples [usecs] -1 20 33
obdfilter.fs2-OST0001.exports.11@gni1.stats=
snapshot_time             1507593600.7 secs.usecs
start_time                1507593500.000000 secs.usecs
elapsed_time              100.7 secs.usecs

obdfilter.fs2-OST0001.exports.12@gni1.stats=
snapshot_time             1507593600.8 secs.usecs
"""
# job_stats blocks in every construct of their grammar: a quoted and a bare id, nsecs and a
# bare snapshot, start_time and elapsed_time, min/max/sum with and without sumsq, hist, the
# old `{ samples: N, unit: reqs }`, [regs], a counter twice in one entry (first kept), an
# entry without counters, blank lines, an MDT block, stats blocks between them
JOBS = """\
obdfilter.fs2-OST0001.job_stats=
job_stats:
- job_id:          "SLURM_JOB10:0:cn027"
  snapshot_time:   1507593600.887515895 secs.nsecs
  start_time:      1507590000.057286226 secs.nsecs
  elapsed_time:    3600.830229669 secs.nsecs
  read_bytes:      { samples:  0, unit: bytes, min:  0, max:  0, sum:  0, sumsq: 0, hist: {  } }
  write_bytes:     { samples:  861, unit: bytes, min: 24576, max: 16777216, sum: 11025514496, \
sumsq: 166242808078794752, hist: { 32K: 1, 64K: 1 } }
  punch:           { samples:   85, unit: usecs, min:   96, max:  354, sum: 16840, sumsq: 3813568 }
  punch:           { samples:   99, unit: usecs, min:   96, max:  354, sum: 16840, sumsq: 3813568 }
- job_id:          4567890.sdb
  snapshot_time:   1507593601

  write_bytes:     { samples: 64575, unit: bytes, min: 4096, max: 4194304, sum: 215147593728 }
  getattr:         { samples:     0, unit:  reqs }
  statfs:          { samples:     2, unit:  regs }
- job_id:          dd.0
  snapshot_time:   1507593602.5 secs.usecs
obdfilter.fs2-OST0001.stats=
snapshot_time             1507593600.341749 secs.usecs
preprw                    7944433 samples [reqs]
mdt.fs3-MDT0000.job_stats=
job_stats:
- job_id:          4567890.sdb
  snapshot_time:   1507593603.000000001 secs.nsecs
  open:            { samples: 5, unit: usecs, min: 1, max: 9, sum: 20, sumsq: 90 }
"""
# files the fast path must leave to the line parser, whole
REFUSED = {
    "lines before the first header":
        "snapshot_time 1507593600.1 secs.usecs\nopen 1 samples [reqs]\n",
    "a job_stats counter before its snapshot":
        "obdfilter.fs-OST0000.job_stats=\njob_stats:\n- job_id: 1\n"
        "  read_bytes: { samples: 1, unit: bytes }\n  snapshot_time: 1507593600\n",
    "a job_stats counter before its job_id":
        "obdfilter.fs-OST0000.job_stats=\njob_stats:\n  snapshot_time: 1507593600\n"
        "  read_bytes: { samples: 1, unit: bytes }\n",
    "a job_stats scalar": "obdfilter.fs-OST0000.job_stats=\njob_stats:\n- job_id: 1\n"
                          "  job_name: a.out\n  snapshot_time: 1507593600\n",
    "a job id with '='": "obdfilter.fs-OST0000.job_stats=\njob_stats:\n- job_id: a=b\n"
                        "  snapshot_time: 1507593600\n  read_bytes: { samples: 1, unit: bytes }\n",
    "an indented job_id": "obdfilter.fs-OST0000.job_stats=\njob_stats:\n  - job_id: 1\n",
    "a skipped parameter": "obdfilter.fs-OST0000.uuid=\nfs-OST0000_UUID\n",
    "a broken counter": "obdfilter.fs-OST0000.stats=\nsnapshot_time 1507593600.1 secs.usecs\n"
                        "read_bytes x samples [bytes]\n",
    "a tab": "obdfilter.fs-OST0000.stats=\nsnapshot_time\t1507593600.1 secs.usecs\n",
    "trailing spaces": "obdfilter.fs-OST0000.stats=\nsnapshot_time 1507593600.1 secs.usecs  \n",
    "a counter before its snapshot": "obdfilter.fs-OST0000.stats=\nopen 1 samples [reqs]\n",
    "start_time before snapshot": "obdfilter.fs-OST0000.stats=\nstart_time 1507593600.1 "
                                  "secs.usecs\nsnapshot_time 1507593600.1 secs.usecs\n",
    "a 19-digit sum": "obdfilter.fs-OST0000.stats=\nsnapshot_time 1507593600.1 secs.usecs\n"
                      "read_bytes 1 samples [bytes] 1 1 9223372036854775807\n",
    "a header with a value": "obdfilter.fs-OST0000.stats=snapshot_time 1507593600.1 secs.usecs\n",
}


def both(path: Path, **kw):
    """(line parser's rows as Arrow, q, stats), (fast path's), and whether the fast path
    parsed every line itself (none went to the line parser, in part or whole)."""
    calls = []
    orig = lustre_stats.stream_lines

    def spy(*a, **k):
        calls.append(a)
        return orig(*a, **k)

    rows, q, st = lustre_stats.parse_file(path, **kw)
    lustre_stats.stream_lines = spy
    try:
        out = lustre_columnar.parse_file_arrow(path, **kw)
    finally:
        lustre_stats.stream_lines = orig
    return (rows_table(rows, SCHEMA), q, st), out, not calls


def assert_same(path: Path, **kw) -> bool:
    ref, got, fast = both(path, **kw)
    assert got[0].schema == SCHEMA
    assert got[0].to_pylist() == ref[0].to_pylist()
    assert got[1] == ref[1]
    assert got[2] == ref[2]
    return fast


def test_capture_takes_the_fast_path_with_equal_rows(tmp_path):
    f = tmp_path / "oss01" / "2017-10-10.txt"
    f.parent.mkdir()
    f.write_text(CAPTURE)
    assert assert_same(f, server="oss01", nid_map=NIDS)
    rows = lustre_columnar.parse_file_arrow(f, server="oss01", nid_map=NIDS)[0].to_pylist()
    by = {(r["target"], r["nid"], r["counter"], r["snapshot_time"]): r for r in rows}
    w = by[("fs2-OST0001", "10@gni1", "write_bytes", 1507593600_000005)]   # `.5` usecs = 5 us
    assert (w["node"], w["kind"], w["fs"], w["sumsq"], w["start_time"]) == \
        ("nid00010", "export", "fs2", 13194139533312.0, None)
    r = by[("fs2-OST0001", "10@gni1", "read_bytes", 1507593600_000005)]
    assert r["start_time"] == 1505001600_000000 and r["sumsq"] is None
    s = by[("fs2-OST0001", "10@gni1", "statfs", 1507593600_000005)]
    assert (s["samples"], s["unit"]) == (7, "reqs")                  # first of two, [regs]
    assert by[("fs2-OST0001", "10@gni1", "write_bytes", 1507593780_123456)]["start_time"] is None
    o = by[("fs3-MDT0000", "10.2.4.27@o2ib1", "getattr", 1507593600_000000)]
    assert (o["node"], o["unit"], o["min"]) == ("cn027", None, None)
    c = by[("fs3-MDT0000", None, "close", 1507593601_000001)]
    assert (c["kind"], c["min"], c["max"], c["sum"]) == ("target", -1, 20, 33)
    st = lustre_columnar.parse_file_arrow(f, server="oss01")[2]
    assert (st.lines_read, st.lines_used, st.rows, st.extra) == \
        (len(CAPTURE.splitlines()), len(CAPTURE.splitlines()), len(rows),
         {"duplicate_counters": 1})


def test_job_stats_take_the_fast_path_with_equal_rows(tmp_path):
    """job_stats blocks (with stats blocks around them) are parsed column-wise, with the
    line parser's rows, accounting and duplicate count; values checked by hand."""
    f = tmp_path / "oss01" / "2017-10-10.txt"
    f.parent.mkdir()
    f.write_text(CAPTURE + JOBS)
    assert assert_same(f, server="oss01", nid_map=NIDS)
    table, q, st = lustre_columnar.parse_file_arrow(f, server="oss01", nid_map=NIDS)
    jobs = [r for r in table.to_pylist() if r["kind"] == "job"]
    assert [(r["job_id"], r["target"], r["counter"]) for r in jobs] == [
        ("SLURM_JOB10:0:cn027", "fs2-OST0001", "read_bytes"),
        ("SLURM_JOB10:0:cn027", "fs2-OST0001", "write_bytes"),
        ("SLURM_JOB10:0:cn027", "fs2-OST0001", "punch"),
        ("4567890.sdb", "fs2-OST0001", "write_bytes"),
        ("4567890.sdb", "fs2-OST0001", "getattr"),
        ("4567890.sdb", "fs2-OST0001", "statfs"),
        ("4567890.sdb", "fs3-MDT0000", "open")]
    w, p, g, o = jobs[1], jobs[2], jobs[4], jobs[6]
    assert (w["snapshot_time"], w["start_time"], w["samples"], w["sum"], w["sumsq"]) == \
        (1507593600_887515, 1507590000_057286, 861, 11025514496, 166242808078794752.0)
    assert p["samples"] == 85                                  # the entry's first punch
    assert (g["snapshot_time"], g["start_time"], g["unit"], g["min"], g["sum"]) == \
        (1507593601_000000, None, "reqs", None, None)
    assert jobs[5]["unit"] == "reqs"                           # [regs] as in stats
    assert (o["fs"], o["nid"], o["node"], o["snapshot_time"]) == \
        ("fs3", None, None, 1507593603_000000)
    assert not q and st.extra == {"duplicate_counters": 2}     # CAPTURE's statfs, the punch
    assert st.lines_read == st.lines_used == len((CAPTURE + JOBS).splitlines())


def test_a_block_off_the_grammar_after_rows_were_handed_on(tmp_path, monkeypatch):
    """A capture in the grammar is handed on in chunks of CHUNK_ROWS rows; a block outside
    it further on goes alone to the line parser (session 43; before, the rest of the file
    did), and the blocks after it are read column-wise again: together the rows,
    quarantine (file line numbers) and accounting of one parse."""
    broken = "obdfilter.fs-OST0000.stats=\nbroken line\n"
    f = tmp_path / "oss1" / "cap.txt"
    f.parent.mkdir()
    f.write_text((CAPTURE + JOBS) * 4 + broken + CAPTURE + JOBS)
    whole = lustre_stats.parse_file(f, server="oss1")
    monkeypatch.setattr(lustre_stats, "CHUNK_ROWS", 7)
    monkeypatch.setattr(columnar, "BLOCK_CHARS", 900)
    calls = []
    orig = lustre_stats.stream_lines
    monkeypatch.setattr(lustre_stats, "stream_lines",
                        lambda lines, *a, **k: calls.append((k["first_line_no"], len(lines)))
                        or orig(lines, *a, **k))
    chunks = list(lustre_columnar.stream_file_arrow(f, server="oss1"))
    lines = len((CAPTURE + JOBS).splitlines())
    assert calls == [(4 * lines + 1, 2)]                    # the broken block, nothing else
    assert all(end is None for _, end in chunks[:-1])
    q, st = chunks[-1][1]
    assert [r for t, _ in chunks for r in t.to_pylist()] == \
        rows_table(whole[0], SCHEMA).to_pylist()
    assert (q, st) == (whole[1], whole[2])
    assert [x.line_no for x in q] == [4 * lines + 2]


def test_a_snapshot_without_counters_is_a_zero_marker(tmp_path):
    f = tmp_path / "cap.txt"
    f.write_text(CAPTURE * 2)
    assert assert_same(f, server="oss01")
    rows = lustre_columnar.parse_file_arrow(f, server="oss01")[0].to_pylist()
    marks = [(r["nid"], r["node"], r["kind"], r["samples"], r["sum"], r["start_time"])
             for r in rows if r["counter"] == lustre_stats.ZERO_MARKER]
    a, b = ("11@gni1", "nid00011", "export", 0, None, 1507593500_000000), \
        ("12@gni1", "nid00012", "export", 0, None, None)
    assert marks == [a, b, a]          # the last block of the file is no marker
    i = [r["counter"] for r in rows].index(lustre_stats.ZERO_MARKER)
    assert rows[i - 1]["counter"] == "close" and rows[i + 1]["counter"] == "snapshot_time"


def test_a_bare_export_file_without_counters(realdata):
    """A real /proc export stats file of a client with all counters zero (HPE exporter)."""
    f = (realdata / "lustre/hpe_lustre_exporter/proc/fs/lustre/mdt/lustrefs-MDT0000/exports/"
         "172.20.20.5@o2ib/stats")
    rows, q, st = lustre_stats.parse_file(f)
    assert not q and st.lines_read == st.lines_used == 1
    assert [(r["target"], r["kind"], r["nid"], r["counter"], r["samples"]) for r in rows] == \
        [("lustrefs-MDT0000", "export", "172.20.20.5@o2ib", "snapshot_time", 0)]
    assert rows[0]["snapshot_time"] == dt.datetime(2017, 11, 15, 21, 37, 33, 9228)  # .009228175


def test_a_file_off_the_fast_path_streams_in_chunks(tmp_path, monkeypatch):
    """A capture outside the fast path's grammar from its first block is handed on by the
    line parser in chunks of CHUNK_ROWS rows, its quarantine and accounting with the last:
    together the rows of one parse, with a broken line and a truncated gzip end as well."""
    body = (REFUSED["a job_stats scalar"] + CAPTURE + JOBS
            + "obdfilter.fs-OST0000.stats=\nbroken line\n") * 5
    gz = tmp_path / "oss1" / "cap.txt.gz"
    gz.parent.mkdir()
    gz.write_bytes(gzip.compress(body.encode())[:-20])
    whole = lustre_stats.parse_file(gz, server="oss1")
    monkeypatch.setattr(lustre_stats, "CHUNK_ROWS", 7)
    chunks = list(lustre_columnar.stream_file_arrow(gz, server="oss1"))
    assert len(chunks) > 3 and all(end is None for _, end in chunks[:-1])
    assert all(t.num_rows <= 7 for t, _ in chunks)
    q, st = chunks[-1][1]
    assert sum(t.num_rows for t, _ in chunks) == st.rows == len(whole[0])
    rows = [r for t, _ in chunks for r in t.to_pylist()]
    assert rows == rows_table(whole[0], SCHEMA).to_pylist()
    assert (q, st) == (whole[1], whole[2]) and q[-1].reason.startswith("read error")


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_files_outside_the_grammar_go_to_the_line_parser(tmp_path, case):
    f = tmp_path / "cap.txt"
    f.write_text(REFUSED[case])
    assert not assert_same(f, server="s")


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_refused_block_between_clean_ones_goes_alone(tmp_path, monkeypatch, case):
    """Each refused text between two clean captures: the line parser reads only the
    parameter blocks it touches (cut where the line parser's state resets), the fast
    path the rest, and the whole equals one parse by the line parser: a snapshot without
    counters closed by the next header, line numbers, skipped blocks counted once."""
    f = tmp_path / "oss1" / "cap.txt"
    f.parent.mkdir()
    text = CAPTURE + JOBS + REFUSED[case] + CAPTURE
    f.write_text(text)
    calls = []
    orig = lustre_stats.stream_lines
    monkeypatch.setattr(lustre_stats, "stream_lines",
                        lambda lines, *a, **k: calls.append(lines) or orig(lines, *a, **k))
    ref, got, _ = both(f, server="oss1", nid_map=NIDS)
    assert got[0].to_pylist() == ref[0].to_pylist()
    assert (got[1], got[2]) == (ref[1], ref[2])
    parts = [len(x) for x in calls if isinstance(x, list)]    # not the reference's file
    assert 0 < sum(parts) < len(text.splitlines()) / 2


def test_a_snapshot_without_counters_before_a_refused_block(tmp_path):
    """The half before a refused block ends in a snapshot without counters: the header
    after it closes it, so it has its zero marker, as in one parse by the line parser."""
    f = tmp_path / "oss1" / "cap.txt"
    f.parent.mkdir()
    f.write_text("obdfilter.fs-OST0000.exports.1@gni1.stats=\n"
                 "snapshot_time 1507593600.1 secs.usecs\n"
                 "obdfilter.fs-OST0000.stats=\nbroken line\n"
                 "obdfilter.fs-OST0001.stats=\nsnapshot_time 1507593600.1 secs.usecs\n"
                 "read_bytes 1 samples [bytes] 1 1 1\n")
    ref, got, fast = both(f, server="oss1")
    assert not fast and got[0].to_pylist() == ref[0].to_pylist()
    assert (got[1], got[2]) == (ref[1], ref[2])
    assert [r["counter"] for r in got[0].to_pylist()] == [lustre_stats.ZERO_MARKER,
                                                         "read_bytes"]


def test_blocks_cut_at_headers_anywhere(tmp_path, monkeypatch):
    big = (CAPTURE + JOBS) * 40
    f = tmp_path / "cap.txt"
    f.write_text(big)
    ref = assert_same(f, server="s", nid_map=NIDS)
    for size in (7, 64, 333, 4096):
        monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        assert assert_same(f, server="s", nid_map=NIDS) == ref


def test_gzip_truncated_gzip_and_empty(tmp_path):
    gz = tmp_path / "cap.txt.gz"
    gz.write_bytes(gzip.compress(CAPTURE.encode()))
    assert assert_same(gz, server="s")
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(gz.read_bytes()[:-30])
    assert not assert_same(cut, server="s")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert_same(empty, server="s")
    assert lustre_columnar.parse_file_arrow(empty)[0].num_rows == 0


def test_simulated_archer_captures(tmp_path):
    import datetime as dt

    from lassi.core.config import load_site
    from lassi.sim.runner import simulate

    simulate(load_site("archer", nodes=8), dt.date(2017, 10, 10), 1, 3, tmp_path / "raw",
             tokio=False)
    files = sorted(p for p in (tmp_path / "raw" / "lustre").rglob("*") if p.is_file())
    assert len(files) >= 4
    assert all(assert_same(f, server=f.parent.name) for f in files)


def test_every_real_lustre_file(realdata):
    n = 0
    for p in sorted((realdata / "lustre").rglob("*")):
        if p.is_file() and p.suffix not in (".c", ".go", ".py", ".md", ".am", ".h"):
            assert_same(p, server="x")
            n += 1
    assert n > 100


def test_interleaved_small_job_stats_and_stats_blocks_take_the_fast_path(tmp_path):
    """A capture of a stats block and a small job_stats block per target, captured three
    times (the simulated servers' layout): both kinds are gathered into one pass each and
    the rows come back in line order, equal to the line parser's."""
    f = tmp_path / "cap.txt"
    f.write_text((CAPTURE + JOBS) * 3)
    assert assert_same(f, server="s")
