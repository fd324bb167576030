"""PBS accounting logs read column-wise (`pbs_columnar`) against the line parser (`pbs`),
which is the reference: the same rows, quarantine records and counts, on lines made to
reach every rule of the fast path and of the pairing, on random logs, on the fuzz cases
of the real sample (../shared, skipped when absent), across files and block boundaries.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pytest
from lassi.ingest import columnar, pbs, pbs_columnar

from tests.test_fuzz_ingest import SEED, _clean_bytes, mutations, realdata_or_none  # noqa: F401

HEAD = "10/10/2017 01:{m:02d}:{s:02d};{t};{job};"
BASE = ("user=u1 group=g1 project=p1 jobname=run queue=standard start=1507597200 "
        "exec_host=nid00008/0*24+nid00009/0*24 Resource_List.nodect=2 Resource_List.ncpus=48")


def _key(row: dict) -> tuple:
    out = []
    for k in sorted(row):
        v = row[k]
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            v = v.replace(tzinfo=None)
        out.append((k, repr(v)))
    return tuple(out)


def both(paths: list[Path], tz: str = "UTC") -> tuple[list, list]:
    """The line parser's and the column-wise reading's results, each as (rows sorted,
    quarantine records, counts); asserts they are equal and returns them."""
    rows, qs, st = pbs.parse_files(paths, tz=tz)
    table, qs2, st2 = pbs_columnar.parse_files(paths, tz=tz)
    ref = (sorted(map(_key, rows)), [(q.file, q.line_no, q.raw, q.reason) for q in qs], st)
    got = (sorted(map(_key, table.to_pylist())),
           [(q.file, q.line_no, q.raw, q.reason) for q in qs2], st2)
    assert got[0] == ref[0]
    assert sorted(got[1]) == sorted(ref[1])
    assert got[2] == ref[2]
    return rows, qs


def per_file(parse_file, paths: list[Path], tz: str) -> tuple[list, list, object]:
    """A line parser's `parse_file` over several files: rows, quarantine, summed counts."""
    rows, qs, st = [], [], None
    for path in paths:
        r, q, s = parse_file(path, tz=tz)
        rows += r
        qs += q
        if st is None:
            st = s
        else:
            st.add(s)
    return rows, qs, st


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _line(t: str, job: str, attrs: str, m: int = 0, s: int = 0) -> str:
    return HEAD.format(m=m, s=s, t=t, job=job) + attrs


RULES = [
    _line("Q", "1.sdb", "queue=standard"),
    _line("S", "1.sdb", BASE),
    _line("E", "1.sdb", BASE + " end=1507600800 Exit_status=0", m=5),
    # E without start=, user or nodes: taken from its S; Exit_status with a suffix
    _line("S", "2.sdb", BASE.replace("user=u1", "user=u2")),
    _line("E", "2.sdb", "queue=standard end=1507600900 Exit_status=271:signal", m=6),
    # S S E: the second S stands; S E E: the second E has no S; S E S: unfinished
    _line("S", "3.sdb", BASE.replace("jobname=run", "jobname=first")),
    _line("S", "3.sdb", BASE.replace("jobname=run", "jobname=second")),
    _line("E", "3.sdb", "end=1507600999", m=7),
    _line("E", "3.sdb", "end=1507601999", m=8),
    _line("S", "3.sdb", BASE, m=9),
    # an E whose job never started here; Exit_status negative
    _line("E", "4.sdb", "user=u4 exec_host=c1/0 end=1507600000 Exit_status=-11"),
    # Torque exec_host: slots per element, hosts repeated; ranges and lists
    _line("E", "5.pbs", "user=u5 exec_host=i02n33/7+i02n33/6+i02n32/0 start=1507590000 "
          "end=1507600000"),
    _line("E", "6.pbs", "user=u6 exec_host=c1/0-3+c2/0,2-3 end=1507600000"),
    _line("E", "7.pbs", "user=u7 exec_host=n1/0*4+n1/4*4 end=1507600000"),
    _line("E", "7b.pbs", "user=u7 exec_host=n*1/0*4+n2/0*2 end=1507600000"),
    # exec_vnode: unneeded (exec_host has slots), needed (no exec_host), unreadable
    _line("E", "8.pbs", "exec_host=c1/0*13 exec_vnode=(c1:ncpus=13) end=1507600000"),
    _line("E", "9.pbs", "exec_vnode=(h[0]:ncpus=24+h[1]:ncpus=24) end=1507600000"),
    _line("E", "10.pbs", "exec_host=c1/0*13 exec_vnode=(:ncpus=13) end=1507600000"),
    _line("E", "11.pbs", "exec_host=c1/0*0 Resource_List.ncpus=7 end=1507600000"),
    # no slots in exec_host: exec_vnode's ncpus count (PBS Pro GPU jobs), else the fallback
    _line("E", "11b.pbs", "exec_host=g1/0*0 exec_vnode=(g1[1]:mem=5kb:ngpus=2:ncpus=24+"
          "g1[0]:ngpus=2:ncpus=24) Resource_List.ncpus=7 end=1507600000"),
    _line("E", "11c.pbs", "exec_host=g1/0*0 exec_vnode=(g1:mem=5kb) Resource_List.ncpus=7 "
          "end=1507600000"),
    _line("E", "11d.pbs", "exec_host=g1/0*0 exec_vnode=(ncpus=4:g1) Resource_List.ncpus=7 "
          "end=1507600000"),
    # project rules: account first, the PBS default project dropped, an empty group kept
    _line("E", "12.pbs", "account=acc project=p group=g end=1507600000"),
    _line("E", "13.pbs", "project=_pbs_project_default group=g end=1507600000"),
    _line("E", "14.pbs", "project= group= end=1507600000"),
    # counts: unique_node_count before nodect (0 falls through), procs fallbacks
    _line("E", "15.pbs", "unique_node_count=0 Resource_List.nodect=3 "
          "total_execution_slots=9x resources_used.ncpus=4 end=1507600000"),
    _line("E", "16.pbs", "unique_node_count=5 resources_used.ncpus=abc "
          "Resource_List.ncpus=12 end=1507600000"),
    # values this reading leaves to the line parser
    _line("E", "17.pbs", 'user=u17 jobname="two words" end=1507600000'),
    _line("E", "18.pbs", "user=u18\tqueue=q end=1507600000"),
    _line("E", "19.pbs", "user=u19 user=u19b end=1507600000"),
    _line("E", "20.pbs", "Resource_List.ncpus=12345678901 end=1507600000"),
    _line("E", "21.pbs", "start=00 end=1507600000"),
    _line("E", "22.pbs", "start= end=0"),
    _line("E", "23.pbs", "user=ü end=1507600000"),
    # a token with an empty key or none, a value holding '='
    _line("E", "24.pbs", "=x user=u24 jobname=a=b=c bare end=1507600000"),
    # quarantined: bad epoch, end before start, Exit_status, exec_host, no attributes,
    # no job id, an impossible date, no record at all
    _line("E", "30.pbs", "end=soon"),
    _line("E", "31.pbs", "start=1507600000 end=1507500000"),
    _line("E", "32.pbs", "Exit_status=x end=1507600000"),
    _line("E", "33.pbs", "exec_host=/0 end=1507600000"),
    _line("E", "34.pbs", "no attributes here"),
    _line("E", "", "user=u end=1507600000"),
    "02/30/2017 01:00:00;E;35.pbs;user=u end=1507600000",
    "not a record",
    "",
    "   ",
    _line("E", "36.pbs", "end=99999999999999"),
    _line("S", "37 x", "user=u start=1507600000"),
]


def test_every_rule_matches_the_line_parser(tmp_path):
    rows, qs = both([_write(tmp_path / "rules", RULES)])
    by_id = {}
    for r in rows:
        by_id.setdefault(r["job_id"], []).append(r)
    assert by_id["2.sdb"][0]["user"] == "u2" and by_id["2.sdb"][0]["nodes"] == [
        "nid00008", "nid00009"]
    assert [r["job_name"] for r in by_id["3.sdb"]] == ["second", None, "run"]
    assert by_id["5.pbs"][0]["nodes"] == ["i02n33", "i02n32"]
    assert by_id["5.pbs"][0]["n_procs"] == 3
    assert by_id["11.pbs"][0]["n_procs"] == 7
    assert by_id["6.pbs"][0]["n_procs"] == 7
    assert [by_id[f"11{k}.pbs"][0]["n_procs"] for k in "bcd"] == [48, 7, 7]
    assert len(qs) == 11


# the exec_host and exec_vnode shapes of real Torque and PBS Pro records (XDMoD's and APEL's
# samples in ../shared/realdata): core lists, and no slots with the vnodes' ncpus
SITE_SHAPES = [
    _line("E", "40.pbs", "user=u exec_host=c1/0-3+c2/0-7 Resource_List.ncpus=12 "
          "end=1507600000"),
    _line("E", "41.pbs", "user=u exec_host=node0703/0-27 Resource_List.nodect=1:ppn=24 "
          "end=1507600000 Exit_status=0"),
    _line("E", "42.pbs", "user=u exec_host=n404/2+n404/3,5-6 end=1507600000"),
    _line("E", "43.[h]", "user=[u] exec_host=[h2]/0*0 exec_vnode=([h2][1]:mem=190000128kb:"
          "ngpus=2:ncpus=24+[h2][0]:ngpus=2:ncpus=24) Resource_List.ncpus=48 end=1507600000"),
]


def test_site_shapes_are_read_column_wise(tmp_path):
    """Torque's core lists and PBS Pro's slot-less exec_host are read column-wise (none
    left to the line parser), as the line parser reads them."""
    block = pbs_columnar._fast(pa.array(SITE_SHAPES), "UTC")
    assert block.slow == [] and block.records == len(SITE_SHAPES)
    rows, qs = both([_write(tmp_path / "shapes", SITE_SHAPES)])
    assert [r["n_procs"] for r in sorted(rows, key=lambda r: r["job_id"])] == [12, 28, 4, 48]
    assert [len(r["nodes"]) for r in sorted(rows, key=lambda r: r["job_id"])] == [2, 1, 1, 1]
    assert qs == []


def test_real_records_are_read_column_wise(realdata):
    """Every S/E record of the real PBS samples takes the column-wise reading, and each
    sample reads as the line parser reads it."""
    paths = [realdata / "scheduler" / f for f in ("xdmod_shredder/pbs/input/accounting-logs.log",
                                                  "apel/torque_accounting_E_records.log")]
    lines = [line for p in paths for line in p.read_text().splitlines() if line.strip()]
    block = pbs_columnar._fast(pa.array(lines), "UTC")
    assert len(lines) == 13 and block.slow == [] and block.records == 13
    for p in paths:
        rows, qs = both([p], tz="America/New_York")
        assert len(rows) == {"accounting-logs.log": 9}.get(p.name, 4) and qs == []


def test_tz_and_pairing_across_files_and_blocks(tmp_path, monkeypatch):
    one = _write(tmp_path / "a", RULES[:12])
    two = _write(tmp_path / "b", RULES[12:] + [_line("E", "1.sdb", "end=1507609999")])
    both([one, two], tz="Europe/London")
    for size in (64, 333, 4096):
        monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        both([one, two], tz="America/Chicago")


def test_record_times_at_daylight_saving_changes(tmp_path):
    """Header times are local: in a spring gap, a repeated autumn hour, a minute of each
    side of both changes and an impossible second, read as the line parser reads them."""
    stamps = ["03/12/2017 01:59:59", "03/12/2017 02:00:00", "03/12/2017 02:30:00",
              "03/12/2017 03:00:00", "11/05/2017 00:59:59", "11/05/2017 01:00:00",
              "11/05/2017 01:30:00", "11/05/2017 02:00:00", "03/26/2017 01:30:00",
              "10/29/2017 01:30:00", "12/31/2017 23:59:60", "01/01/0000 00:00:00",
              "13/01/2017 00:00:00"]
    lines = [f"{t};{'SE'[k % 2]};{k}.pbs;user=u{k}" for k, t in enumerate(stamps)]
    path = _write(tmp_path / "dst", lines)
    for tz in ("America/Chicago", "Europe/London", "Australia/Lord_Howe", "UTC"):
        rows, qs = both([path], tz=tz)
        assert len(rows) == 10 and len(qs) == 3


def _random_log(rng: random.Random, n: int) -> list[str]:
    """Random records of a few jobs, with attributes drawn from shapes good and bad."""
    values = {
        "user": ["u1", "", "u2"], "group": ["g", ""], "project": ["p", "",
                                                                  "_pbs_project_default"],
        "account": ["a", ""], "jobname": ["j", "", "x=y"],
        "start": ["1507590000", "0", "", "15x", "00"], "end": ["1507600000", "", "0"],
        "Exit_status": ["0", "-1", "3:x", "q"],
        "exec_host": ["a/0*2+b/0*2", "a/1+a/2", "a/0-1", "", "a/0*2+a/0*2", "/1",
                      "a/0*2+b/1", "a*b/0+c/1", "a*b/0*2", "h/0*", "h/*5", "h//0",
                      "a/1234567", "a/0*1234567", "+a/0", "a/0+", "a/0++b/1", "b/0+a/1",
                      "a/0*1+b/0*2+a/1*3", "c/0*2+b/0*2+a/0*2", "a/00*007",
                      "a/0-27", "a/0-3+b/0,2-3", "a/3-1", "a/0,,1", "a/-1", "a/1-",
                      "a/0-1-2", "a/1234567-1234568", "a/0-1*2", "a/0*0", "a/0*0+b/0*0",
                      "a/007-010", "a/5,5"],
        "exec_vnode": ["(a:ncpus=2)", "", "(:x)", "(a[1]:mem=5kb:ncpus=24+a[0]:ncpus=24)",
                       "(a:ncpus=x)", "(a:ncpus= 3)", "(a:ncpus=12345678901)", "(a:mem=1)",
                       "(ncpus=4:a)", "()"],
        "total_execution_slots": ["4", "x"], "resources_used.ncpus": ["2"],
        "Resource_List.ncpus": ["8", "8:ppn"], "unique_node_count": ["0", "2"],
        "Resource_List.nodect": ["1", "abc"], "queue": ["q"]}
    out = []
    for k in range(n):
        t = rng.choice("SSEEEQD")
        attrs = [f"{key}={rng.choice(vs)}" for key, vs in values.items() if rng.random() < 0.5]
        if rng.random() < 0.05:
            attrs.append(attrs[0] if attrs else "lone")
        out.append(_line(t, f"{rng.randrange(12)}.pbs", " ".join(attrs), m=k % 60,
                         s=rng.randrange(60)))
    return out


def test_random_logs_match_the_line_parser(tmp_path):
    rng = random.Random(SEED)
    for k in range(20):
        both([_write(tmp_path / f"r{k}", _random_log(rng, 200))])


def fuzz_matches(source: str, check, realdata: Path | None, tmp_path: Path) -> None:
    """`check([path])` on every fuzz case of the source's real sample."""
    clean = _clean_bytes(source, realdata)
    for k, (case, data, suffix) in enumerate(mutations(clean, random.Random(SEED))):
        path = tmp_path / f"case{k}{suffix}"
        path.write_bytes(data)
        try:
            check([path])
        except AssertionError as exc:
            raise AssertionError(f"case {case!r}") from exc


def empty_and_missing(parse_files, check, tmp_path: Path) -> None:
    """An empty file reads as the line parser reads it; a missing one is one quarantined
    pseudo-line."""
    empty = tmp_path / "empty"
    empty.write_text("")
    check([empty])
    table, qs, st = parse_files([tmp_path / "missing"])
    assert table.num_rows == 0 and st.lines_quarantined == 1 and qs[0].line_no == 0


def test_fuzzed_real_sample_matches_the_line_parser(realdata_or_none, tmp_path):  # noqa: F811
    fuzz_matches("pbs", both, realdata_or_none, tmp_path)


def test_empty_and_missing_inputs(tmp_path):
    empty_and_missing(pbs_columnar.parse_files, both, tmp_path)


@pytest.mark.parametrize("data", [b"a\r\nb\rc\n", b"x\xff\xfey\nz", b"\n\n", b"tail\r",
                                  b"one\r\n\r\ntwo\n"])
def test_line_blocks_read_as_open_text(tmp_path, monkeypatch, data):
    """Blocks split from bytes give the lines `open_text` gives (universal newlines,
    undecodable bytes replaced), whatever the block size."""
    from lassi.core.textio import open_text

    path = tmp_path / "f"
    path.write_bytes(data * 3)
    with open_text(path) as fh:
        want = [line.rstrip("\n") for line in fh]
    for size in (1, 2, 3, 7, 1 << 20):
        monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        got = [x for block in columnar.line_blocks(path) for x in block.to_pylist()]
        assert got == want, size


def test_rows_of_other_days_left_out_early_change_nothing_kept(tmp_path):
    """With `day`, E records whose start is on another day make no row but still pair:
    the rows the runner keeps for that day (`runner._run_days`), the quarantine and the
    counts equal those of reading every row. The random logs' starts fall on the day
    before the records' (1507590000 is 2017-10-09 23:00 UTC) or on their own."""
    from lassi.ingest import runner

    rng = random.Random(SEED + 1)
    day = dt.date(2017, 10, 10)
    dropped = 0
    for k in range(12):
        path = _write(tmp_path / f"d{k}", _random_log(rng, 200))
        table, qs, st = pbs_columnar.parse_files([path], tz="UTC")
        early, qs2, st2 = pbs_columnar.parse_files([path], tz="UTC", day=day)
        want, got = runner._run_days(table, day), runner._run_days(early, day)
        assert sorted(map(_key, got.to_pylist())) == sorted(map(_key, want.to_pylist()))
        assert [q.reason for q in qs2] == [q.reason for q in qs] and st2 == st
        dropped += table.num_rows - early.num_rows
    assert dropped > 50
