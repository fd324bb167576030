"""ALPS apsys logs read column-wise (`alps_columnar`) against the line parser (`alps`),
the reference: the same rows, quarantine records and counts, on lines made to reach every
rule of the fast path and of the pairing, on random logs, on the fuzz cases of the real
sample (../shared, skipped when absent), across files and block boundaries.
"""

from __future__ import annotations

import datetime as dt
import gzip
import random
from pathlib import Path

import pyarrow as pa
from lassi.ingest import alps, alps_columnar, columnar

from tests.test_fuzz_ingest import SEED, realdata_or_none  # noqa: F401
from tests.test_pbs_columnar import _key, empty_and_missing, fuzz_matches


def both(paths: list[Path], tz: str = "UTC") -> tuple[list, list]:
    """Asserts the column-wise reading equals the line parser; returns the latter's."""
    rows, qs, st = alps.parse_files(paths, tz=tz)
    table, qs2, st2 = alps_columnar.parse_files(paths, tz=tz)
    assert sorted(map(_key, table.to_pylist())) == sorted(map(_key, rows))
    assert sorted((q.file, q.line_no, q.raw, q.reason) for q in qs2) == sorted(
        (q.file, q.line_no, q.raw, q.reason) for q in qs)
    assert st2 == st
    return rows, qs


def _line(apid: str, what: str, rest: str = "", ts: str = "2017-10-10T01:02:00.033072+01:00",
          sep: str = " ") -> str:
    head = sep.join([ts, "c0-0c0s0n1", "apsys", "12345", "-", "-"])
    return f"{head} apid={apid}, {what}" + (f", {rest}" if rest else "")


START = 'user=1054, batch_id=456.sdb, cmd_line="aprun -n 72 -N 24 ./cfd.exe in.nml", ' \
        'num_nodes=3, node_list=8-10'
END = "user=1054, batch_id=456.sdb, exit_code=0, exitcode_array=0"
RULES = [
    _line("1", "Starting", START), _line("1", "Finishing", END, ts="2017-10-10T02:00:00Z"),
    _line("2", "Starting", START.replace("8-10", "8-10,9,12-13")),        # nodes repeated
    _line("3", "Starting", START.replace("num_nodes=3", "num_nodes=5")),   # count differs
    _line("4", "Starting", START.replace(", node_list=8-10", "")),          # stated only
    _line("5", "Starting", START.replace("node_list=8-10", "node_list=")),
    _line("6", "Starting", START), _line("6", "Starting", START),         # a second Starting
    _line("6", "Finishing", END), _line("6", "Finishing", END.replace("=0", "=3")),
    _line("7", "Finishing", END),                                         # never started
    _line("8", "Finishing", END.replace("exit_code=0", "exit_code=137:9")),
    _line("8", "Starting", START, ts="2017-10-10T00:59:00"),              # local time
    _line("9", "Starting", START, ts="2017-10-10T01:00:00.123+05:30"),
    _line("17", "Starting", START, ts="2017-10-10T01:00:00-05:00"),
    _line("10", "Starting", START.replace('"aprun -n 72', '"env X=1 aprun -n 72 : -n 4')),
    _line("11", "Placed", "uid=3"),                                      # another event
    _line("12", "Starting", START.replace("cmd_line=\"aprun", 'cmd_line="aprun, -n')),
    _line("13", "Starting", START.replace('"aprun', '"a\\"prun')),          # an escape
    _line("14", "Starting", START, ts="1507597200"),                      # epoch seconds
    _line("15", "Starting", START, sep="  "),                             # wider spaces
    _line("16", "Starting", START.replace("node_list=8-10", "node_list= 8-10")),
    _line("18", "Starting", START.replace('in.nml"', 'a,b,,c, d,"')),    # `, ` in quotes
    _line("19", "Starting", START.replace('in.nml"', 'a,b,,c,"')),       # commas, no `, `
    # quarantined: bad ranges, counts, ids, times, quotes, duplicates
    _line("20", "Starting", START.replace("8-10", "10-8")),
    _line("21", "Starting", START.replace("num_nodes=3", "num_nodes=three")),
    _line("22", "Starting", START.replace("batch_id=456.sdb", "batch_id=")),
    _line("x23", "Starting", START),
    _line("24", "Starting", START, ts="2017-02-30T00:00:00Z"),
    _line("25", "Starting", START, ts="Unknown"),
    _line("26", "Starting", START.replace('in.nml"', "in.nml")),
    _line("27", "Starting", START + ", apid=28"),
    _line("29", "Starting", START.replace("8-10", "0-2000000")),
    # counts app_run cannot hold (32 bits): quarantined on their own lines
    _line("40", "Starting", START.replace(", node_list=8-10", "").replace("s=3", "s=12345678901")),
    _line("41", "Starting", START.replace("-n 72", "-n 9999999999")),
    _line("42", "Starting", START.replace("-n 72", "-n 2000000000 ./a : -n 2000000000")),
    _line("43", "Starting", START), _line("43", "Finishing", END.replace("=0,", "=4294967296,")),
    "2017-10-10T01:02:00Z c0-0c0s0n1 apsys 12345",
    "2017-10-10T01:02:00Z c0-0c0s0n1 apsys: apid=30, Starting, batch_id=1",
    "2017-10-10T01:02:00Z c0-0c0s0n1 apsched[77]: Bound apid 0 resId 4072",
    "2017-10-10T01:02:00Z c0-0c0s0n1 kernel: something unrelated",
    " 2017-10-10T01:02:00Z c0-0c0s0n1 apsys 1 - - apid=31, Starting, batch_id=1",
    "", "   ", "one two",
]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_rule_matches_the_line_parser(tmp_path):
    rows, qs = both([_write(tmp_path / "rules.log", RULES)])
    by_id = {r["app_id"]: r for r in rows}
    assert by_id["2"]["nodes"] == ["nid00008", "nid00009", "nid00010", "nid00012",
                                   "nid00013"]
    assert by_id["6"]["exit_status"] == 0 and by_id["8"]["exit_status"] == 137
    assert by_id["9"]["start"] == dt.datetime(2017, 10, 9, 19, 30, 0, 123000)
    assert len(qs) == 17
    assert by_id["18"]["command"].endswith('a,b,,c, d,') and by_id["19"]["exe"] == "cfd.exe"


def test_local_times_files_and_blocks(tmp_path, monkeypatch):
    stamps = ["2017-03-26T00:59:59", "2017-03-26T01:30:00", "2017-10-29T01:30:00",
              "2017-10-29T02:00:00", "2017-03-12T02:30:00.5", "2017-11-05T01:30:00.250000"]
    lines = [_line(str(100 + k), "Starting", START, ts=t) for k, t in enumerate(stamps)]
    one = _write(tmp_path / "a.log", RULES[:9] + lines)
    two = tmp_path / "b.log.gz"
    with gzip.open(two, "wt") as fh:
        fh.write("\n".join(RULES[9:] + [_line("100", "Finishing", END)]) + "\n")
    for tz in ("Europe/London", "America/Chicago"):
        both([two, one], tz=tz)
    for size in (97, 512, 4096):
        monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        both([one, two], tz="Europe/London")


def _random_log(rng: random.Random, n: int) -> list[str]:
    values = {"user": ["1", ""], "batch_id": ["4.sdb", ""],
              "cmd_line": ['"aprun -n 4 ./a.out"', '"aprun -n 2 -N 1 b"', "plain", '""'],
              "num_nodes": ["2", "x", "0"], "node_list": ["1-2", "3", "5-4", "", "1,1-3"],
              "exit_code": ["0", "1:2", "z"], "other": ["1"]}
    out = []
    for _ in range(n):
        items = [f"apid={rng.choice(['1', '2', '3', '4', 'q'])}"]
        items += rng.sample(["Starting", "Finishing", "Placed"], rng.randrange(1, 3))
        items += [f"{k}={rng.choice(v)}" for k, v in values.items() if rng.random() < 0.7]
        rng.shuffle(items)
        ts = rng.choice(["2017-10-10T01:02:00Z", "2017-10-10T01:02:00.5+01:00",
                         "2017-10-10T01:02:00", "bad"])
        out.append(f"{ts} h apsys 1 - - " + ", ".join(items))
    return out


def test_random_logs_match_the_line_parser(tmp_path):
    rng = random.Random(SEED)
    for k in range(30):
        both([_write(tmp_path / f"r{k}.log", _random_log(rng, 60))], tz="Europe/London")


def test_fuzzed_real_sample_matches_the_line_parser(realdata_or_none, tmp_path):  # noqa: F811
    fuzz_matches("alps", both, realdata_or_none, tmp_path)


def test_empty_and_missing_inputs(tmp_path):
    empty_and_missing(alps_columnar.parse_files, both, tmp_path)


LAUNCHES = [
    "aprun -n 72 -N 24 ./cfd.exe in.nml run007", "aprun -n 4 ./dir/sub/a.out", "aprun -n 4 env",
    "aprun -n 4 ./dir/", "aprun -n 4 -N 2 X=1 ./a", "aprun -n 4 ./a : -n 2 ./b",
    "aprun -n 4 -n 8 ./a", "aprun -n 0012 -d 3 -S 1 -j 2 ./a", "aprun -N 2 ./a",
    "aprun -n 4 --pes 8 ./a", "/opt/cray/bin/aprun -n 4 ./a", 'aprun -n 4 ./a arg=1 "q r"',
    "aprun -n 4 -d 2 ./a.out x:y", "aprun -n 4 ./a :", "aprun  -n 4 ./a", "aprun -n 4 -",
    "aprun -n 4 time ./a", "aprun -n 4 ./time", "aprun -n 1234567890 ./a", "aprun -n 4 ./a\tb",
    "aprun -n 4 ./\u00e9", "aprun -n 4 ./a=b", "aprun -n 4 -cc none ./a", "aprun -n 4",
    "aprun -n4 ./a", "srun -n 4 ./a", "env X=1 aprun -n 4 ./a", "aprun -n 4 ./a ", "", None,
]


def test_launch_commands_read_as_the_line_parser_reads_them():
    """The plain aprun commands read by one pattern, every other by parse_launch: the same
    (exe, process count) as parse_launch on each, hand-picked and random."""
    rng = random.Random(SEED)
    words = ["aprun", "-n", "-N", "-d", "-x", "4", "12", "./a.out", "b/c", ":", "=", "X=1",
             "time", "-", "a:b", "--", "'q'"]
    random_ones = [" ".join(rng.choice(words) for _ in range(rng.randrange(1, 8)))
                   for _ in range(400)]
    commands = LAUNCHES + ["aprun " + c for c in random_ones] + random_ones
    exe, procs = alps_columnar._launches(pa.array(commands, pa.string()))
    assert list(zip(exe.to_pylist(), procs.to_pylist(), strict=True)) == [
        alps.parse_launch(c) for c in commands]
    assert alps.parse_launch(LAUNCHES[0]) == ("cfd.exe", 72)        # by hand
    assert alps.parse_launch(LAUNCHES[7]) == ("a", 12)
