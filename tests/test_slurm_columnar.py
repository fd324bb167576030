"""Slurm sacct dumps read column-wise (`slurm_columnar`) against the line parser
(`slurm`), the reference: the same rows in the same order, quarantine records and counts,
on lines made to reach every rule (layouts and headers, steps, times, node lists,
counts), on random dumps, on the real samples and their fuzz cases (../shared, skipped
when absent), across files and block boundaries.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lassi.ingest import columnar, slurm, slurm_columnar

from tests.test_fuzz_ingest import SEED, realdata_or_none  # noqa: F401
from tests.test_pbs_columnar import _key, empty_and_missing, fuzz_matches, per_file

XDMOD = "scheduler/xdmod_shredder"


def both(paths: list[Path], tz: str = "UTC") -> tuple[list, list]:
    """Asserts the column-wise reading equals the line parser; returns the latter's
    rows and quarantine."""
    rows, qs, st = per_file(slurm.parse_file, paths, tz)
    table, qs2, st2 = slurm_columnar.parse_files(paths, tz=tz)
    assert list(map(_key, table.to_pylist())) == list(map(_key, rows))
    assert [(q.file, q.line_no, q.raw, q.reason) for q in qs2] == [
        (q.file, q.line_no, q.raw, q.reason) for q in qs]
    assert st2 == st
    return rows, qs


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


HEAD = ("JobID|JobIDRaw|JobName|User|Account|Start|End|NodeList|NNodes|NCPUS|State|"
        "ExitCode|SubmitLine|")
T0, T1 = "2017-03-20T01:59:02", "2017-03-20T02:11:38"


def _h(job: str, raw: str | None = None, name: str = "run", user: str = "u", acct: str = "a",
       start: str = T0, end: str = T1, nodes: str = "nid0[1001-1004,1010]", nn: str = "5",
       ncpus: str = "320", state: str = "COMPLETED", exit_: str = "0:0",
       submit: str = "") -> str:
    return "|".join([job, job if raw is None else raw, name, user, acct, start, end, nodes,
                     nn, ncpus, state, exit_, submit]) + "|"


RULES = [
    HEAD,
    # a job with steps: the allocation gives no row, steps take its user/account/name
    _h("10", submit="sbatch run.sh"),
    _h("10.batch", name="batch", user=""),
    _h("10.0", name="vpicio", user="", acct="", submit="srun -n 256 ./vpicio_uni out.h5"),
    _h("10.1", name="dbscan", user="", nodes="nid01010", state="FAILED", exit_="3:0"),
    _h("10.2+1", name="het", user="", submit="VAR=1 srun -n 4 ./a.out : -n 2 ./b.out"),
    # without steps; no-time words, epoch seconds, offsets, a space for T, fractions
    _h("11", end="Unknown", state="RUNNING"),
    _h("12", start="Unknown", end="Unknown", nodes="None assigned", state="PENDING"),
    _h("13", start="1490000000", end="1490000600"),
    _h("14", start="2017-03-20 01:00:00.250", end="2017-03-20T11:00:00+02:00"),
    _h("15", start=" 2017-03-20T01:00:00Z ", end="2017-03-20T01:30:00-03:30"),
    _h("16", end="", state="COMPLETED"),
    _h("17", state="CANCELLED by 380693", end="2017-03-20T02:30:00"),
    _h("18", state="REQUEUED+ by 1"),
    # node lists: comma lists of groups, repeats across groups, products, none
    _h("19", nodes="cpn-f13-03-[01-02],cpn-f13-04-[01-02],cpn-f13-03-01"),
    _h("20", nodes="c[1-2]-[3-4]"), _h("21", nodes="(null)", nn="7"),
    _h("22", nodes="a1,b[08-10,9],c", nn="x"), _h("23", nodes=" n[1-2] "),
    # job ids: raw differs from shown (arrays), raw empty, a step shown only
    _h("24_7", raw="30"), _h("24_8.0", raw="31.0", name="arr", user=""),
    _h("25", raw=""), _h("26.3", raw="26", user=""), _h(" 27 ", raw=" 27 "),
    # counts: leading integers, absent
    _h("28", nn="", ncpus="12x", exit_="-1:9"), _h("29", ncpus="", exit_=""),
    _h("30.extern", name="extern", start="garbage"),     # a named step is never read
    # left to the line parser
    _h("31", name="é"), _h("32", ncpus="12345678901"), _h("33", nodes="n[1-2]-x[3]"),
    _h("34", start="2017-03-20t01:00:00z"),
    # quarantined: end before start, bad times, bad node lists, no id, field count
    _h("40", start=T1, end=T0), _h("41", start="soon"), _h("42", end="2017-02-30T00:00:00"),
    _h("43", nodes="n[2-1]"), _h("44", nodes="n[1"), _h("45", nodes="a,,b"),
    _h("46", nodes="n[0-2000000]"), _h("", raw=""), "1|2|3", _h("47", nodes="a b"),
    _h("48", ncpus="99999999999"), _h("49", exit_="3000000000"),
    _h("54", end="9999-12-31T23:59:59"), _h("55", start="99999999999999"),  # beyond datetime
    "",
    "   ",
    # a layout without the trailing `|` and with the job name last (pipes kept in it)
    "JobID|Start|End|NodeList|State|JobName",
    "50|2017-03-20T01:00:00|2017-03-20T02:00:00|n1|COMPLETED|a|b|c",
    "50.0|2017-03-20T01:00:00|2017-03-20T02:00:00|n1|COMPLETED|step|x",
    "51|2017-03-20T01:00:00|2017-03-20T02:00:00|n1|COMPLETED|",
    "JobID|Start|End|NodeList|State|JobName",              # a repeated header
    "52|2017-03-20T01:00:00|2017-03-20T02:00:00|n1|COMPLETED|p||q",
    HEAD,
    _h("53", name="a|b"),                                   # extra `|` in a trailing layout
    _h("10.3", name="late", user=""),                       # a step of job 10, further on
    _h("10", name="again", user="u2"),                      # its allocation written again
]


def test_every_rule_matches_the_line_parser(tmp_path):
    rows, qs = both([_write(tmp_path / "rules", RULES)], tz="America/Los_Angeles")
    by_id = {r["app_id"]: r for r in rows}
    assert "10" not in by_id and by_id["10.0"]["user"] == "u2"
    assert by_id["10.0"]["job_name"] == "again" and by_id["10.0"]["exe"] == "vpicio_uni"
    assert by_id["10.1"]["exe"] == "dbscan" and by_id["10.1"]["exit_status"] == 3
    assert by_id["19"]["nodes"] == ["cpn-f13-03-01", "cpn-f13-03-02", "cpn-f13-04-01",
                                    "cpn-f13-04-02"]
    assert by_id["22"]["n_nodes"] == 6 and by_id["21"]["n_nodes"] == 7
    assert by_id["31.0"]["job_id"] == "31" and "26.3" in by_id and "30" in by_id
    assert by_id["50.0"]["job_name"] == "a|b|c" and by_id["52"]["job_name"] == "p||q"
    assert by_id["11"]["end"] is None and "12" not in by_id
    assert len(qs) == 16


def test_blocks_files_and_zones(tmp_path, monkeypatch):
    one = _write(tmp_path / "a", RULES[:20])
    two = _write(tmp_path / "b", RULES[20:])
    both([one, two], tz="Europe/London")
    for size in (64, 333, 4096):
        monkeypatch.setattr(columnar, "BLOCK_CHARS", size)
        both([one, two], tz="America/Chicago")


def test_a_bad_header_anywhere_quarantines_the_file(tmp_path, monkeypatch):
    lines = RULES[:30] + ["JobID|Start|End"] + RULES[30:]
    monkeypatch.setattr(columnar, "BLOCK_CHARS", 256)       # found in a later block
    rows, qs = both([_write(tmp_path / "bad", lines), _write(tmp_path / "good", RULES)])
    assert [q.line_no for q in qs][0] == 0


def _random_dump(rng: random.Random, n: int) -> list[str]:
    """Random records of a few jobs and their steps, fields drawn from shapes good and
    bad, with headers now and then."""
    values = {
        "step": ["", "", ".0", ".1", ".batch", ".extern", ".2+1", ".x"],
        "name": ["run", "", "a|b"], "user": ["u", "", "v"], "acct": ["a", ""],
        "start": [T0, "Unknown", "", "1490000000", "bad", "2017-03-20 00:00:00"],
        "end": [T1, "Unknown", "", T0, "2017-03-19T00:00:00"],
        "nodes": ["n[1-3]", "n1,n2", "None assigned", "n[1-2],n2", "n[", ""],
        "nn": ["3", "", "x"], "ncpus": ["8", "", "9999999999"],
        "state": ["COMPLETED", "RUNNING", "FAILED", "PENDING"], "exit_": ["0:0", "1:0", ""],
        "submit": ["", "srun -n 4 ./x", "mpirun ./y z"]}
    out = [HEAD]
    for _ in range(n):
        if rng.random() < 0.03:
            out.append(rng.choice([HEAD, HEAD.rstrip("|"), "JobID|Start|End|NodeList"]))
            continue
        pick = {k: rng.choice(vs) for k, vs in values.items()}
        job = f"{rng.randrange(15)}{pick.pop('step')}"
        out.append(_h(job, **pick))
    return out


def test_random_dumps_match_the_line_parser(tmp_path):
    rng = random.Random(SEED)
    for k in range(20):
        both([_write(tmp_path / f"r{k}", _random_dump(rng, 200))], tz="Australia/Lord_Howe")


@pytest.mark.parametrize("name", ["referencedata_phillips_sacct.log",
                                  "slurm/input/accounting-logs.log",
                                  "slurm/input/accounting-logs-with-job-arrays.log",
                                  "slurm/input/non-ended-job-state.log",
                                  "slurm/input/unknown-job-state.log",
                                  "slurm/input/utf8-multibyte-chars.log"])
def test_real_samples_match_the_line_parser(realdata_or_none, name):  # noqa: F811
    if realdata_or_none is None:
        pytest.skip("../shared/realdata is absent")
    rows, _ = both([realdata_or_none / XDMOD / name], tz="America/New_York")
    assert rows


def test_pytokio_json_cache_matches_the_line_parser(realdata_or_none):  # noqa: F811
    if realdata_or_none is None:
        pytest.skip("../shared/realdata is absent")
    rows, _ = both([realdata_or_none / "pytokio/sample.slurm"], tz="America/Los_Angeles")
    assert len(rows) == 8


def test_fuzzed_real_sample_matches_the_line_parser(realdata_or_none, tmp_path):  # noqa: F811
    fuzz_matches("slurm (sacct)", both, realdata_or_none, tmp_path)


def test_empty_and_missing_inputs(tmp_path):
    empty_and_missing(slurm_columnar.parse_files, both, tmp_path)


HOST_LISTS = [
    "a1,b[01-03],a1", "c[1-2]-[3-4]", "n[1,2]x,n[3]", "n[2-1]", "n[1", "n]1[", "a,,b", ",a",
    "a,", "n[[1]]", "a b", "", "n[001-003,2,0002]", "x[1-500,1-500],y[1-10]",
    "x[1-400],x[1-400],y1", "x[0-999],y[1-2]", "x[0-998],y[1]", "q[08-10],q[9],q9", "é[1]",
    "n[1-3],m[2],n2",
]


def test_host_lists_expand_as_expand_hostlist(monkeypatch):
    """`hostlist_columnar.expand_host_lists` against `expand_hostlist` with repeats dropped:
    each value it reads gives the same names in the same order, and it leaves to the line
    parser every value `expand_hostlist` refuses (including a list of more than MAX_HOSTS
    names before its repeats are dropped; MAX_HOSTS 1,000 here)."""
    import pyarrow as pa
    from lassi.ingest import hostlist_columnar
    from lassi.ingest.hostlist_columnar import expand_host_lists

    from lassi.core import hostlist
    from lassi.core.hostlist import expand_hostlist

    monkeypatch.setattr(hostlist, "MAX_HOSTS", 1000)
    monkeypatch.setattr(hostlist_columnar, "MAX_HOSTS", 1000)

    nodes, ok = expand_host_lists(pa.array(HOST_LISTS))
    for text, got, fine in zip(HOST_LISTS, nodes.to_pylist(), ok.to_pylist(), strict=True):
        try:
            want = list(dict.fromkeys(expand_hostlist(text))) or None
        except ValueError:
            assert not fine, text
            continue
        if fine:
            assert got == want, text
    assert ok.to_pylist()[HOST_LISTS.index("a1,b[01-03],a1")]
    assert not ok.to_pylist()[HOST_LISTS.index("x[1-500,1-500],y[1-10]")]
    assert nodes.to_pylist()[HOST_LISTS.index("x[1-400],x[1-400],y1")][-2:] == ["x400", "y1"]


def test_range_combinations_numbered_as_a_sort_would():
    """`hostlist_columnar._combos` gives each range's (prefix, suffix, width) one number,
    0..k-1, the same for the same combination: without a sort when the combinations are
    few, with one when they are many."""
    import numpy as np
    import pyarrow as pa
    from lassi.ingest.hostlist_columnar import _combos

    rng = np.random.default_rng(SEED)
    for n_pre in (1, 3, 5000):                       # 5000 prefixes: the sorting branch
        owner = np.arange(6000)
        pre = pa.array([f"p{k}" for k in rng.integers(0, n_pre, 6000)])
        post = pa.array([["", "-ib"][k] for k in rng.integers(0, 2, 6000)])
        width = rng.integers(1, 6, 6000)
        p = np.unique(pre.to_numpy(zero_copy_only=False), return_inverse=True)[1]
        q = np.unique(post.to_numpy(zero_copy_only=False), return_inverse=True)[1]
        triples = np.stack([p, q, width], axis=1)
        got = _combos(pre, post, owner, width)
        # same triple <=> same number, and the numbers are 0..k-1
        want = np.unique(triples, axis=0, return_inverse=True)[1].ravel()
        pairs = set(zip(got.tolist(), want.tolist(), strict=True))
        assert len(pairs) == len(set(want.tolist()))
        assert sorted(set(got.tolist())) == list(range(len(set(want.tolist()))))
