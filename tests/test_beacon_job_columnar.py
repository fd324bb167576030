"""Beacon job logs read column-wise (`beacon_job_columnar`) against the line parser
(`beacon_job`), the reference: the same rows, quarantine records and counts, on lines
made to reach every rule (node lists, times, headers), on random logs and on the fuzz
cases of the documented grammar; and the IP node names of a job log named through the
site's map as the runner's line-by-line rule names them.
"""

from __future__ import annotations

import random
from pathlib import Path

from lassi.ingest import beacon_job, beacon_job_columnar, columnar

from tests.test_fuzz_ingest import SEED, realdata_or_none  # noqa: F401
from tests.test_pbs_columnar import _key, empty_and_missing, fuzz_matches, per_file


def both(paths: list[Path], tz: str = "UTC") -> tuple[list, list]:
    """Asserts the column-wise reading equals the line parser; returns the latter's."""
    rows, qs, st = per_file(beacon_job.parse_file, paths, tz)
    table, qs2, st2 = beacon_job_columnar.parse_files(paths, tz=tz)
    assert sorted(map(_key, table.to_pylist())) == sorted(map(_key, rows))
    assert sorted((q.file, q.line_no, q.raw, q.reason) for q in qs2) == sorted(
        (q.file, q.line_no, q.raw, q.reason) for q in qs)
    assert st2 == st
    return rows, qs


def _line(job: str, nodes: str, start: str = "2018-02-25T00:01:00Z",
          end: str = "2018-02-25T01:45:30Z", name: str = "cfd") -> str:
    return "\t".join([job, nodes, name, start, end])


RULES = [
    "job_id\tnodelist\tjob_name\tstart\tend",
    _line("1", "cn[00000-00028]"),
    _line("2", "cn[08-10,9,12,09]x"),                    # repeats, a suffix
    _line("3", "cn[8-10,007]"),                          # padding from each lower bound
    _line("4", "cn5"), _line("5", ""), _line("6", "cn[1-2],cn[4]"),
    _line("7", "cn[1-3]", end="-"), _line("8", "cn[1]", end=""),
    _line("9", "cn[1]", end="Unknown"), _line("10", "cn[1]", name=""),
    _line("11", "cn[1]", start="2018-02-25 00:01:00", end="2018-02-25 02:00:00.250"),
    _line("12", "cn[1]", start="2018-02-25T00:01:00+08:00", end="2018-02-25T00:01:00-03:30"),
    _line("13", "cn[1]", start="1519516860"),            # epoch seconds
    _line(" 14 ", " cn[1] ", start=" 2018-02-25T00:01:00Z "),
    _line("15", "20.0.2.100"), _line("16", "cn[1]", end="2018-02-25t02:00:00z"),
    # quarantined
    _line("20", "cn[3-1]"), _line("21", "cn[1"), _line("22", "cn 1"),
    _line("23", "cn[1]", start="-"), _line("24", "cn[1]", start="2018-02-30T00:00:00Z"),
    _line("25", "cn[1]", end="2018-02-24T00:00:00Z"), _line("", "cn[1]"),
    "1\tcn[1]\tx", _line("26", "cn[0-2000000]"), _line("27", "cn[1]", name="é"),
    "", "   ", "\t",
]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_rule_matches_the_line_parser(tmp_path, monkeypatch):
    rows, qs = both([_write(tmp_path / "rules.log", RULES)], tz="Asia/Shanghai")
    by_id = {r["job_id"]: r for r in rows}
    assert by_id["2"]["nodes"] == ["cn08x", "cn09x", "cn10x", "cn9x", "cn12x"]
    assert by_id["3"]["nodes"] == ["cn8", "cn9", "cn10", "cn007"]
    assert by_id["7"]["end"] is None and by_id["5"]["nodes"] is None
    assert len(qs) == 9
    for size in (50, 300):
        monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        both([_write(tmp_path / "a.log", RULES[:12]), _write(tmp_path / "b.log", RULES[12:])])


def _random_log(rng: random.Random, n: int) -> list[str]:
    lists = ["cn[0-3]", "cn[2,2-3]", "cn[07-9]", "x[1]y", "cn[5-1]", "", "a,b", "n9"]
    times = ["2018-02-25T00:00:00Z", "2018-02-25 03:00:00", "2018-02-25T01:00:00.5+01:00",
             "-", "", "bad", "2018-02-25T00:30:00.000000"]
    return [_line(str(rng.randrange(50)), rng.choice(lists), rng.choice(times),
                  rng.choice(times), rng.choice(["j", ""])) for _ in range(n)]


def test_random_logs_match_the_line_parser(tmp_path):
    rng = random.Random(SEED)
    for k in range(30):
        both([_write(tmp_path / f"r{k}.log", _random_log(rng, 40))], tz="Europe/Berlin")


def test_fuzzed_grammar_matches_the_line_parser(realdata_or_none, tmp_path):  # noqa: F811
    fuzz_matches("beacon-job", both, realdata_or_none, tmp_path)


def test_empty_and_missing_inputs(tmp_path):
    empty_and_missing(beacon_job_columnar.parse_files, both, tmp_path)


def test_ip_node_names_as_the_runner_names_them(tmp_path):
    lines = [_line("1", "20.0.2.100"), _line("2", "cn[1-2]"), _line("3", ""),
             "\t".join(["4", "20.0.2.[100-101]", "x", "2018-02-25T00:01:00Z", "-"])]
    path = _write(tmp_path / "ips.log", lines)
    names = {"20.0.2.100": "cn7", "20.0.2.101": "cn7", "cn1": "cn9"}
    want = [beacon_job.named_nodes(r, names) for r in beacon_job.parse_file(path)[0]]
    table = beacon_job_columnar.named_nodes(beacon_job_columnar.parse_files([path])[0], names)
    assert sorted(map(_key, table.to_pylist())) == sorted(map(_key, want))
    assert {r["job_id"]: r["nodes"] for r in want}["4"] == ["cn7"]
    unnamed = beacon_job_columnar.parse_files([path])[0]        # a map naming none of them
    assert beacon_job_columnar.named_nodes(unnamed, {"cn99": "x"}).equals(unnamed)
