"""`lfs df` and `lctl dl -t` files read column-wise (`snapshot_columnar.read_table`)
against their line parsers, the reference: the same rows in the same order, quarantine
and counts; on files the fast path takes, on files it must leave to the line parser, on
random snapshots and on the fuzz cases of the real samples (../shared, skipped when
absent).
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest
from lassi.ingest import lctl_dl, lfs_df, snapshot_columnar
from lassi.ingest.columnar import NotFast

from tests.test_fuzz_ingest import SEED, _clean_bytes, mutations, realdata_or_none  # noqa: F401
from tests.test_ost_health import LCTL, LFS_DF

DAY = dt.date(2017, 3, 20)
PARSERS = {"lfs-df": lfs_df.parse_file, "lctl-dl": lctl_dl.parse_file}
TAILS = {"lfs-df": lfs_df.TAIL, "lctl-dl": lctl_dl.TAIL}


def _plain(row: dict) -> dict:
    return {k: v.replace(tzinfo=None) if isinstance(v, dt.datetime) else v
            for k, v in row.items()}


def same(path: Path, source: str, date: dt.date | None = None, tz: str = "UTC") -> bool:
    """Asserts read_table equals the line parser, with the source's tail (what `lassi
    ingest` runs) and without one (the whole file to the line parser after a line the fast
    grammar does not take); True when the fast grammar took every line."""
    rows, qs, st = PARSERS[source](path, date, tz)
    for tail in (TAILS[source], None):
        table, qs2, st2 = snapshot_columnar.read_table(path, source, date, tz,
                                                       PARSERS[source], lfs_df.snapshot_time,
                                                       tail)
        assert [_plain(r) for r in table.to_pylist()] == [
            {c: r[c] for c in table.column_names} for r in rows], tail
        assert [(q.line_no, q.raw, q.reason) for q in qs2] == [(q.line_no, q.raw, q.reason)
                                                               for q in qs], tail
        assert st2 == st, tail
    try:
        snapshot_columnar.fast_table(path, source, date, tz, lfs_df.snapshot_time)
    except NotFast:
        return False
    return True


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


LFS_CLEAN = "\n".join(line for line in LFS_DF.splitlines() if "junk" not in line) + "\n"
LCTL_CLEAN = "\n".join(line for line in LCTL.splitlines() if "garbage" not in line) + "\n"


@pytest.mark.parametrize(("source", "text", "fast"), [
    ("lfs-df", LFS_CLEAN, True),
    ("lfs-df", LFS_CLEAN + LFS_CLEAN.replace("1489975200", "1489975260"), True),
    # a target twice in one snapshot, a BEGIN repeated later: the last row, first place
    ("lfs-df", LFS_CLEAN + LFS_CLEAN.replace("7000  70%", "7100  71%"), True),
    ("lfs-df", LFS_CLEAN.replace("\nfsx", "\n  fsx").replace("\nUUID", "\n UUID"), True),
    ("lfs-df", LFS_CLEAN.replace("BEGIN 1489975200\n", ""), True),      # the name's time
    ("lfs-df", LFS_CLEAN.replace(": inactive device", ": Inactive device (read-only)"), True),
    ("lfs-df", LFS_DF, False),                                        # a junk line
    ("lfs-df", LFS_CLEAN.replace("1K-blocks", "Inodes"), False),
    ("lfs-df", LFS_CLEAN.replace("BEGIN 1489975200", "BEGIN 1489975200.5"), False),
    ("lfs-df", LFS_CLEAN.replace("[OST:1]", "[OST:7]"), False),
    ("lfs-df", LFS_CLEAN.replace("fsx-OST0002_UUID  ", "fsx-OST0002_UUID\n  "), False),
    ("lfs-df", LFS_CLEAN.replace("BEGIN 1489975200", "BEGIN 1490054400"), True),  # next day
    ("lfs-df", LFS_CLEAN + LFS_CLEAN.replace("1489975200", "1490054400"), True),  # a day each
    ("lctl-dl", LCTL_CLEAN, True),
    ("lctl-dl", "BEGIN 1490054399\n" + LCTL_CLEAN + "BEGIN 1490054400\n" + LCTL_CLEAN, True),
    ("lctl-dl", "BEGIN 1489975200\n" + LCTL_CLEAN + "BEGIN 1489975260\n"
     + LCTL_CLEAN.replace("10.0.0.12", "10.0.0.11") + LCTL_CLEAN, True),
    ("lctl-dl", LCTL_CLEAN.replace("10.0.0.14@o2ib", ""), True),          # no NID
    ("lctl-dl", LCTL, False),
    ("lctl-dl", LCTL_CLEAN.replace("fsx-OST0001-osc", "fsx-MDT0001-osc"), False),
    ("lctl-dl", LCTL_CLEAN.replace("10.0.0.11@o2ib", "10.0.0.11"), False),
])
def test_files_match_the_line_parser(tmp_path, source, text, fast):
    path = _write(tmp_path, "2017-03-20T02:00:00.txt", text)
    assert same(path, source, DAY) is fast
    assert same(path, source, None, tz="Europe/Berlin") is (fast or "1490054400" in text)


def test_a_bad_line_leaves_its_snapshot_on_to_the_line_parser(tmp_path):
    """A line outside the fast grammar (a file cut mid-line by a killed collector) sends
    the lines from its snapshot's BEGIN on to the line parser, not the whole file."""
    snaps = [LFS_CLEAN.replace("1489975200", str(1489975200 + 60 * k)) for k in range(3)]
    path = _write(tmp_path, "2017-03-20T02:00:00.txt", "".join(snaps) + "fsx-OST00")
    starts = []

    def tail(lines, first_no, ts):
        starts.append(first_no)
        return lfs_df.TAIL(lines, first_no, ts)

    table, qs, st = snapshot_columnar.read_table(path, "lfs-df", DAY, "UTC", lfs_df.parse_file,
                                                 lfs_df.snapshot_time, tail)
    rows, qs2, st2 = lfs_df.parse_file(path, DAY)
    assert [_plain(r) for r in table.to_pylist()] == [
        {c: r[c] for c in table.column_names} for r in rows]
    assert (qs, st) == (qs2, st2) and st.lines_quarantined == 1
    begins = [no for no, line in enumerate(path.read_text().splitlines(), 1)
              if line.startswith("BEGIN")]
    assert len(begins) == 3 and starts == [begins[-1]]


def _random_lctl(rng: random.Random) -> str:
    """Snapshots of OSCs over a few servers, some moved (failovers, count ties)."""
    out = []
    for k in range(rng.randrange(1, 5)):
        out.append(f"BEGIN {1489975200 + 60 * rng.randrange(3)}")
        for i in range(rng.randrange(1, 12)):
            server = rng.choice([i // 2, i // 2, i // 3, 7])
            nid = f" 10.0.0.{server}@o2ib" if rng.random() > 0.1 else ""
            kind, dev = rng.choice([("OST", "osc")] * 4 + [("MDT", "mdc")])
            out.append(f"{i:3d} UP {dev} fs{k % 2}-{kind}{rng.randrange(6):04x}-{dev}-ff "
                       f"abc 5{nid}")
    return "\n".join(out) + "\n"


def test_random_lctl_snapshots_match(tmp_path):
    rng = random.Random(SEED)
    for k in range(40):
        assert same(_write(tmp_path, f"r{k}.txt", _random_lctl(rng)), "lctl-dl")


@pytest.mark.parametrize("source", ["lfs-df", "lctl-dl"])
def test_fuzzed_real_samples_match(realdata_or_none, tmp_path, source):  # noqa: F811
    clean = _clean_bytes(source, realdata_or_none)
    path = tmp_path / "clean.txt"
    path.write_bytes(clean)
    assert same(path, source)
    for k, (case, data, suffix) in enumerate(mutations(clean, random.Random(SEED))):
        path = tmp_path / f"case{k}{suffix}"
        path.write_bytes(data)
        try:
            same(path, source)
        except AssertionError as exc:
            raise AssertionError(f"case {case!r}") from exc
