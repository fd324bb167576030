"""Scheduler parsers (PBS, Slurm, ALPS, Beacon job log) and host-list expansion; no Spark."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone

import pytest
from lassi.ingest import alps, alps_columnar, beacon_job, pbs, pbs_columnar, slurm

from lassi.core.hostlist import expand_hostlist, expand_nid_ranges

XDMOD = "scheduler/xdmod_shredder"


def utc(epoch: int | str) -> datetime:
    return datetime.fromtimestamp(int(epoch), timezone.utc).replace(tzinfo=None)


def check_accounting(stats, quarantine) -> None:
    assert stats.lines_read == stats.lines_used + stats.lines_quarantined
    for q in quarantine:
        assert q.source == stats.source
        assert q.reason and "\n" not in q.reason


# --------------------------------------------------------------------------- host lists


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nid0[1001-1004,1010]", ["nid01001", "nid01002", "nid01003", "nid01004", "nid01010"]),
        ("c[1-2]-[3-4]", ["c1-3", "c1-4", "c2-3", "c2-4"]),
        ("a[08-10]", ["a08", "a09", "a10"]),
        ("a[8-10]", ["a8", "a9", "a10"]),
        ("k10n26s01,k13n[36-37]s01", ["k10n26s01", "k13n36s01", "k13n37s01"]),
        ("d13n[03,05,07-08,16]", ["d13n03", "d13n05", "d13n07", "d13n08", "d13n16"]),
        ("cpn-f13-03-[01-02],x", ["cpn-f13-03-01", "cpn-f13-03-02", "x"]),
        ("single", ["single"]),
        ("", []),
    ],
)
def test_expand_hostlist(text, expected):
    assert expand_hostlist(text) == expected


@pytest.mark.parametrize("bad", ["a[1-2", "a]1", "a[[1-2]]", "a[3-1]", "a[x]", "a,,b", "a[]",
                                 "n[0-99999999]"])
def test_expand_hostlist_rejects(bad):
    with pytest.raises(ValueError, match="host list|range|pattern"):
        expand_hostlist(bad)


def test_expand_nid_ranges():
    assert expand_nid_ranges("12-13,20") == ["nid00012", "nid00013", "nid00020"]
    assert expand_nid_ranges("7", fmt="n{}") == ["n7"]
    with pytest.raises(ValueError):
        expand_nid_ranges("12-x")


@pytest.mark.parametrize(
    ("command", "exe", "procs"),
    [
        ("aprun -n 48 -N 24 ./wrf.exe namelist.input", "wrf.exe", 48),
        ("aprun -n24 -cc none -b ./a.out : -n 24 ./b.out", "a.out", 48),
        ("srun --mpi=pmi2 -n 4 -c 2 --exclusive /opt/x/bin/x.exe -i in", "x.exe", 4),
        ("srun --ntasks 8 --cpu-bind cores ./y", "y", 8),
        ("mpirun -np 8 -x FOO --mca btl self,vader ./z arg", "z", 8),
        ("OMP_NUM_THREADS=4 mpiexec -n 2 python run.py", "python", 2),
        ("sbatch run.sh", "run.sh", None),
        ("./plain", "plain", None),
    ],
)
def test_parse_launch(command, exe, procs):
    assert alps.parse_launch(command) == (exe, procs)


# --------------------------------------------------------------------------- ALPS

ALPS_START = (
    "2017-10-10T00:05:11.123456+01:00 c0-0c0s0n1 apsys 12345 - - apid=28374628, Starting, "
    "user=12345, batch_id=4567890.sdb, cmd_line=\"aprun -n 48 -N 24 ./wrf.exe namelist.input\", "
    "num_nodes=2, node_list=12-13,20, cwd=\"/home/z01/z01/u1/run3\""
)
ALPS_END = (
    "2017-10-10T02:05:40.000001+01:00 c0-0c0s0n1 apsys 12345 - - apid=28374628, Finishing, "
    "user=12345, batch_id=4567890.sdb, exit_code=0, exitcode_array=0, exitsignal_array=0"
)
ALPS_MALFORMED = "2017-10-10T02:06:00+01:00 c0-0c0s0n1 apsys 12345 - - apid=77, Starting, " \
    "batch_id=1.sdb, cmd_line=\"aprun -n 1 ./x"
ALPS_ORPHAN = "2017-10-10T02:07:00+01:00 c0-0c0s0n1 apsys 12345 - - apid=99, Finishing, " \
    "user=1, batch_id=2.sdb, exit_code=1"
ALPS_OTHER = "2017-10-10T02:08:00+01:00 c0-0c0s0n1 kernel: something unrelated"
ALPS_UNFINISHED = (
    "2017-10-10T03:00:00Z c0-0c0s0n1 apsys 1 - - apid=5, Starting, user=7, batch_id=8.sdb, "
    "cmd_line=\"aprun -n 2 /bin/hostname\", num_nodes=1, node_list=3"
)


def test_alps_pinned_format():
    lines = [ALPS_START, ALPS_OTHER, ALPS_MALFORMED, ALPS_ORPHAN, ALPS_END, ALPS_UNFINISHED, ""]
    rows, quarantine, stats = alps.parse_lines(lines, "apsys.log")
    check_accounting(stats, quarantine)
    by_id = {r["app_id"]: r for r in rows}
    assert set(by_id) == {"28374628", "5"}
    row = by_id["28374628"]
    assert row["job_id"] == "4567890.sdb"
    assert row["command"] == "aprun -n 48 -N 24 ./wrf.exe namelist.input"
    assert row["exe"] == "wrf.exe" and row["n_procs"] == 48
    assert row["nodes"] == ["nid00012", "nid00013", "nid00020"] and row["n_nodes"] == 3
    assert row["start"] == datetime(2017, 10, 9, 23, 5, 11, 123456)
    assert row["end"] == datetime(2017, 10, 10, 1, 5, 40, 1)
    assert row["exit_status"] == 0 and row["user"] == "12345" and row["source"] == "alps"
    assert by_id["5"]["end"] is None and by_id["5"]["start"] == datetime(2017, 10, 10, 3)
    assert stats.extra["unfinished"] == 1 and stats.extra["ignored"] == 2
    assert stats.extra["node_count_mismatch"] == 1
    assert [(q.line_no, q.source) for q in quarantine] == [(3, "alps"), (4, "alps")]
    assert "quote" in quarantine[0].reason
    assert "Finishing without Starting" in quarantine[1].reason
    assert (stats.lines_read, stats.lines_used, stats.lines_quarantined) == (7, 5, 2)


def test_alps_pairs_across_files(tmp_path):
    first, second = tmp_path / "a.log", tmp_path / "b.log.gz"
    first.write_text(ALPS_START + "\n")
    with gzip.open(second, "wt") as fh:
        fh.write(ALPS_END + "\n")
    rows, quarantine, stats = alps.parse_files([second, first])
    assert quarantine == [] and stats.files == 2
    assert len(rows) == 1 and rows[0]["end"] == datetime(2017, 10, 10, 1, 5, 40, 1)
    alone = alps.parse_file(second)
    assert alone[0] == [] and "Finishing without Starting" in alone[1][0].reason


def test_alps_real_apsched_excerpt(realdata):
    path = realdata / "scheduler/alps_apsched/apsched_excerpt_hlrs_2013-12-21.log"
    rows, quarantine, stats = alps.parse_file(path)
    assert rows == [] and quarantine == []
    assert stats.lines_read == 5 and stats.extra["ignored"] == 5
    # what `lassi ingest` prints (the column-wise reader): why 5 lines used gave no row
    _, _, stats = alps_columnar.parse_files([path])
    assert stats.summary() == ("alps: 1 files, 5 lines read = 5 used + 0 quarantined; "
                               "0 rows (of the lines used: ignored 5)")


def test_summary_of_lines_that_gave_no_row(tmp_path):
    """Lines used without a row say so; lines that gave rows or none used add nothing."""
    blank = tmp_path / "blank"
    blank.write_text("\n\n   \n")
    _, _, stats = pbs_columnar.parse_files([blank])
    assert stats.summary().endswith("3 used + 0 quarantined; 0 rows (no line used held a "
                                    "record)")
    _, _, stats = pbs_columnar.parse_files([tmp_path / "missing"])
    assert stats.summary().endswith("0 rows; 1 files quarantined (unreadable)")
    one = tmp_path / "one"
    one.write_text("10/10/2017 01:00:00;Q;1.pbs;queue=q\n"
                   "10/10/2017 01:00:00;E;1.pbs;user=u end=1507600000\n")
    _, _, stats = pbs_columnar.parse_files([one])
    assert stats.summary().endswith("2 used + 0 quarantined; 1 rows")


# --------------------------------------------------------------------------- PBS


def test_pbs_xdmod_expected(realdata):
    base = realdata / XDMOD / "pbs"
    expected = list(json.loads((base / "output/accounting-logs.json").read_text()).items())
    rows, quarantine, stats = pbs.parse_file(base / "input/accounting-logs.log")
    check_accounting(stats, quarantine)
    assert quarantine == [] and len(rows) == len(expected) == 9
    for row, (case, exp) in zip(rows, expected, strict=True):
        assert row["job_id"].split(".")[0] == exp["job_id"], case
        assert row["app_id"] == row["job_id"] and row["source"] == "pbs"
        assert row["user"] == exp["user"], case
        assert row["job_name"] == exp["jobname"], case
        assert row["start"] == utc(exp["start"]) and row["end"] == utc(exp["end"]), case
        assert row["exit_status"] == int(exp["exit_status"]), case
        if "node_list" in exp:
            assert row["nodes"] == exp["node_list"].split(","), case
        else:
            assert row["nodes"] is None, case
        if "resources_used_nodes" in exp:
            assert row["n_nodes"] == exp["resources_used_nodes"], case
        # XDMoD counts 2 cpus for `exec_host=h/0*0` + 2 vnodes of 24; we take the 48 ncpus.
        if "resources_used_cpus" in exp and "ngpus" not in case:
            assert row["n_procs"] == exp["resources_used_cpus"], case
    assert rows[-1]["n_procs"] == 48
    assert rows[0]["job_id"] == "6.edge.ccr.buffalo.edu"
    assert rows[2]["project"] == "anonaccount" and rows[3]["project"] == "anongroup"


def test_pbs_apel_expected(realdata):
    base = realdata / "scheduler/apel"
    expected = json.loads((base / "torque_accounting_E_records.expected.json").read_text())
    rows, quarantine, stats = pbs.parse_file(base / "torque_accounting_E_records.log")
    check_accounting(stats, quarantine)
    assert quarantine == [] and len(rows) == len(expected) == 4
    for row, exp in zip(rows, expected, strict=True):
        assert row["job_id"] == exp["JobName"]
        assert row["user"] == exp["LocalUserID"] and row["project"] == exp["LocalUserGroup"]
        assert row["start"] == utc(exp["StartTime_epoch"])
        assert row["end"] == utc(exp["StopTime_epoch"])
        assert row["n_nodes"] == exp["NodeCount"] and row["n_procs"] == exp["Processors"]


def test_pbs_local_header_times_and_pairing():
    lines = [
        "01/15/2020 10:00:00;Q;11.sdb;queue=standard",
        "01/15/2020 10:00:00;S;11.sdb;user=u1 group=g1 jobname=j exec_host=nid00001/0*24",
        "01/15/2020 12:30:00;E;11.sdb;user=u1 group=g1 jobname=j exec_host=nid00001/0*24 "
        "Exit_status=0",
        "07/15/2020 10:00:00;S;12.sdb;user=u2 account=p2 exec_vnode=(nid00002:ncpus=4)",
        "07/15/2020 10:00:00;E;13.sdb;user=u3 start=oops",
        "this is not a record",
        "",
    ]
    rows, quarantine, stats = pbs.parse_lines(lines, "acct", tz="America/New_York")
    check_accounting(stats, quarantine)
    first, second = rows
    assert first["job_id"] == "11.sdb" and first["n_procs"] == 24
    assert first["start"] == datetime(2020, 1, 15, 15, 0)  # EST = UTC-5
    assert first["end"] == datetime(2020, 1, 15, 17, 30)
    assert second["start"] == datetime(2020, 7, 15, 14, 0)  # EDT = UTC-4
    assert second["end"] is None and second["project"] == "p2"
    assert second["nodes"] == ["nid00002"] and second["n_procs"] == 4
    assert stats.extra == {"other_records": 1, "unfinished": 1}
    assert [q.line_no for q in quarantine] == [5, 6]
    assert "start=" in quarantine[0].reason


def test_pbs_pairs_across_files(tmp_path):
    (tmp_path / "20200115").write_text("01/15/2020 10:00:00;S;11.sdb;user=u1 start=1579082400\n")
    (tmp_path / "20200116").write_text(
        "01/16/2020 01:00:00;E;11.sdb;user=u1 start=1579082400 end=1579136400 Exit_status=3\n")
    rows, quarantine, stats = pbs.parse_files(sorted(tmp_path.iterdir()))
    assert quarantine == [] and stats.files == 2 and "unfinished" not in stats.extra
    assert [(r["start"], r["end"], r["exit_status"]) for r in rows] == [
        (utc(1579082400), utc(1579136400), 3)]


# --------------------------------------------------------------------------- Slurm


def test_slurm_xdmod_expected(realdata):
    base = realdata / XDMOD / "slurm"
    expected = json.loads((base / "output/accounting-logs.json").read_text())
    rows, quarantine, stats = slurm.parse_file(base / "input/accounting-logs.log")
    check_accounting(stats, quarantine)
    assert quarantine == [] and len(rows) == len(expected) == 4
    for row, exp in zip(rows, expected, strict=True):
        job = exp["job_id"]
        assert row["job_id"] == row["app_id"] == job
        assert row["user"] == exp["user_name"] and row["project"] == exp["account_name"], job
        assert row["job_name"] == exp["job_name"], job
        assert row["start"] == utc(exp["start_time"]) and row["end"] == utc(exp["end_time"])
        assert row["exit_status"] == int(exp["exit_code"].split(":")[0]), job
        assert row["n_procs"] == int(exp["ncpus"]), job
        nodes = expand_hostlist(exp["node_list"])
        assert row["nodes"] == nodes and row["n_nodes"] == len(nodes), job
    assert rows[0]["n_nodes"] == 32


def test_slurm_xdmod_other_inputs(realdata):
    base = realdata / XDMOD / "slurm/input"
    rows, _, stats = slurm.parse_file(base / "accounting-logs-with-job-arrays.log")
    assert len(rows) == 6 and stats.lines_used == 6
    rows, _, stats = slurm.parse_file(base / "non-ended-job-state.log")
    assert [r["end"] for r in rows] == [None]  # RUNNING: row without end; PENDING: no row
    assert stats.extra == {"unfinished": 1, "not_started": 1}
    rows, _, _ = slurm.parse_file(base / "utf8-multibyte-chars.log")
    assert rows[0]["job_name"] == "aàb"


def test_slurm_phillips_reference_jobs(realdata):
    path = realdata / XDMOD / "referencedata_phillips_sacct.log"
    rows, quarantine, stats = slurm.parse_file(path)
    check_accounting(stats, quarantine)
    assert quarantine == [] and stats.lines_read == 4285
    assert len(rows) == 4285 and len({r["app_id"] for r in rows}) == 4285
    assert all(r["start"] <= r["end"] and r["n_procs"] > 0 for r in rows)
    # 239 jobs were cancelled before getting nodes: NodeList `None assigned`.
    assert sum(r["nodes"] is None for r in rows) == 239
    assert sum(r["exit_status"] == 0 for r in rows) > 2000
    assert min(r["start"] for r in rows) >= datetime(2016, 12, 22, 7, 15, 12)


HEADED = [
    "JobID|JobIDRaw|JobName|User|Account|Start|End|NodeList|NNodes|NCPUS|State|ExitCode|"
    "SubmitLine|",
    "4478544|4478544|vpic|glock|m888|2017-03-20T01:59:02|2017-03-20T02:11:38|"
    "nid0[1001-1004,1010]|5|320|COMPLETED|0:0|sbatch run.sh|",
    "4478544.batch|4478544.batch|batch||m888|2017-03-20T01:59:02|2017-03-20T02:11:38|"
    "nid01001|1|64|COMPLETED|0:0||",
    "4478544.0|4478544.0|vpicio_uni||m888|2017-03-20T02:07:41|2017-03-20T02:09:54|"
    "nid0[1001-1004]|4|256|COMPLETED|0:0|srun -n 256 ./vpicio_uni out.h5|",
    "4478544.1|4478544.1|dbscan_read||m888|2017-03-20T02:09:54|2017-03-20T02:11:34|"
    "nid01010|1|64|FAILED|3:0||",
    "4478545|4478545|solo|bob|m9|2017-03-20T01:00:00|Unknown|c[1-2]-[3-4]|4|8|RUNNING|0:0||",
    "4478546|4478546|never|bob|m9|Unknown|Unknown|None assigned|0|8|PENDING|0:0||",
    "4478547|4478547|bad|bob|m9|2017-03-20T01:00:00|yesterday|c1|1|8|COMPLETED|0:0||",
]


def test_slurm_headed_steps_and_zone():
    rows, quarantine, stats = slurm.parse_lines(HEADED, "sacct.txt", tz="America/Los_Angeles")
    check_accounting(stats, quarantine)
    assert [r["app_id"] for r in rows] == ["4478544.0", "4478544.1", "4478545"]
    step0, step1, solo = rows
    assert step0["job_id"] == "4478544" and step0["user"] == "glock"
    assert step0["job_name"] == "vpic" and step0["project"] == "m888"
    assert step0["command"] == "srun -n 256 ./vpicio_uni out.h5" and step0["exe"] == "vpicio_uni"
    assert step0["start"] == datetime(2017, 3, 20, 9, 7, 41)  # PDT = UTC-7
    assert step0["nodes"] == ["nid01001", "nid01002", "nid01003", "nid01004"]
    assert step1["exe"] == "dbscan_read" and step1["exit_status"] == 3
    assert solo["end"] is None and solo["nodes"] == ["c1-3", "c1-4", "c2-3", "c2-4"]
    assert stats.extra == {"non_app_steps": 1, "unfinished": 1, "not_started": 1,
                           "jobs_with_steps": 1}
    assert [q.line_no for q in quarantine] == [8]


def test_slurm_header_any_order_and_pipes_in_name():
    lines = ["NodeList|End|Start|JobID|JobName", "n[1-2]|2020-01-01T01:00:00|"
             "2020-01-01T00:00:00|77|a|b", "n1|2020-01-01T01:00:00|2020-01-01T00:00:00|78"]
    rows, quarantine, stats = slurm.parse_lines(lines, "x")
    assert rows[0]["job_name"] == "a|b" and rows[0]["nodes"] == ["n1", "n2"]
    assert [q.line_no for q in quarantine] == [3] and "fields" in quarantine[0].reason
    check_accounting(stats, quarantine)


def test_slurm_bad_header_quarantines_file():
    lines = ["JobID|Start|End|JobName", "1|2020-01-01T00:00:00|2020-01-01T00:00:01|x"]
    rows, quarantine, stats = slurm.parse_lines(lines, "f")
    assert rows == [] and len(quarantine) == 1
    assert quarantine[0].line_no == 0 and "NodeList".lower() in quarantine[0].reason.lower()
    assert (stats.lines_read, stats.lines_quarantined) == (2, 2)


# --------------------------------------------------------------------------- Beacon job log


def test_beacon_job_log(tmp_path):
    text = "\n".join([
        "job_id\tnodelist\tjob_name\tstart\tend",
        "1001\tcn[1-3]\twrf\t2018-02-25T18:00:00\t2018-02-25T19:00:00",
        "1002\tcn7\tlammps\t2018-02-25T10:00:00Z\t-",
        "1003\tcn[1-\tbad\t2018-02-25T18:00:00\t2018-02-25T19:00:00",
        "1004 only spaces",
        "",
    ])
    path = tmp_path / "jobs.log.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(text)
    rows, quarantine, stats = beacon_job.parse_file(path, tz="Asia/Shanghai")
    check_accounting(stats, quarantine)
    first, second = rows
    assert first["app_id"] == first["job_id"] == "1001" and first["source"] == "beacon-job"
    assert first["nodes"] == ["cn1", "cn2", "cn3"] and first["n_nodes"] == 3
    assert first["start"] == datetime(2018, 2, 25, 10) and first["end"] == datetime(2018, 2, 25, 11)
    assert second["start"] == datetime(2018, 2, 25, 10) and second["end"] is None
    assert [q.line_no for q in quarantine] == [4, 5] and stats.extra == {"unfinished": 1}


# --------------------------------------------------------------------------- common


def test_rows_have_app_run_fields(tmp_path):
    schemas = pytest.importorskip("lassi.core.schemas")
    names = set(schemas.without_date(schemas.APP_RUN).fieldNames())
    assert set(alps.APP_RUN_FIELDS) == names
    rows = alps.parse_lines([ALPS_START, ALPS_END], "f")[0] + slurm.parse_lines(HEADED, "f")[0]
    assert all(set(r) == names for r in rows)


@pytest.mark.parametrize("module", [alps, pbs, slurm, beacon_job])
def test_unreadable_file_is_quarantined(module, tmp_path):
    rows, quarantine, stats = module.parse_file(tmp_path / "missing.log")
    assert rows == [] and quarantine[0].line_no == 0 and "cannot read" in quarantine[0].reason
    assert stats.files == 1 and stats.conserved


def test_slurm_pytokio_json_cache(realdata):
    """pytokio's sample.slurm: job 4478544, 128 nodes, steps .0-.7 in PDT (realdata §3c)."""
    rows, qs, st = slurm.parse_file(realdata / "pytokio/sample.slurm",
                                    tz="America/Los_Angeles")
    assert (st.lines_read, st.lines_used, qs) == (11, 11, [])
    steps = {r["app_id"]: r for r in rows}
    assert sorted(steps) == [f"4478544.{k}" for k in range(8)]     # .batch/.extern: no row
    six = steps["4478544.6"]                  # 02:07:41-02:09:54 PDT holds the vpicio log
    assert (six["start"], six["end"]) == (datetime(2017, 3, 20, 9, 7, 41),
                                          datetime(2017, 3, 20, 9, 9, 54))
    assert all(r["job_id"] == "4478544" and r["n_nodes"] == 128 for r in rows)


def test_slurm_json_cache_junk_is_quarantined(tmp_path):
    bad = tmp_path / "bad.slurm"
    bad.write_text('{"1": {"start": "2017-03-20T01:00:00"}}\n')   # no end, no nodelist
    rows, qs, st = slurm.parse_file(bad)
    assert rows == [] and len(qs) == 1 and "JSON cache" in qs[0].reason


# --------------------------------------------------------------------------- fast paths


def _random_texts(seed: int, pieces: list[str], n: int, longest: int) -> list[str]:
    import random

    rnd = random.Random(seed)
    return ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, longest)))
            for _ in range(n)]


def _outcome(fn, *args):
    try:
        return fn(*args)
    except ValueError:
        return "ValueError"


def test_fast_paths_equal_the_general_rules():
    """The one-regex fast paths of the PBS and ALPS parsers (bench/scheduler_scale.py) give
    what the general token-by-token rules give, on random texts built from the formats'
    pieces (fixed seed): PBS attributes and exec_host, ALPS messages, quoted values and
    launch commands (shlex.split is the reference). Each fast path is taken often enough
    to be tested."""
    import shlex

    taken = dict.fromkeys(("attributes", "exec_host", "message", "quoted", "command"), 0)
    for m in _random_texts(1, ["a", "b=", "=", " ", "\t", "x=1", "é", "\x00", "a=b=c",
                               "exec_host=n1/0*2"], 20_000, 10):
        taken["attributes"] += '"' not in m
        assert pbs.split_attributes(m) == pbs._split_tokens(m), repr(m)
    elements = ["nid00008/0*24", "n1/0*2", "n1/3*1", "c/0*013", "h/0", "h/0-3", "h/1,2",
                "/0*2", "h/*2", "h/0*", "h0*2", "h/0*2/1", "h/0*2 ", ""]
    for v in ("+".join(e.split()) for e in _random_texts(2, [e + " " for e in elements],
                                                        20_000, 5)):
        if pbs._EXEC_STAR.fullmatch(v):
            taken["exec_host"] += 1
            assert pbs._exec_host(v) == pbs._exec_host_elements(v), repr(v)
    for m in _random_texts(3, ["apid", "=", "1", ", ", ",", " ", '"', "a b", "Starting",
                               "\\", "-", "x=y", "_k", "\t", "é", "8-10,12"], 60_000, 10):
        taken["message"] += bool(alps._PLAIN_MESSAGE.fullmatch(m))
        assert _outcome(alps.split_message, m) == _outcome(alps._split_items, m), repr(m)
        q = '"' + m
        end = q.find('"', 1)
        taken["quoted"] += end > 0 and "\\" not in q[1:end]
        text, j = alps._unescape(q, 1)
        general = ("ValueError" if j >= len(q) or (q[j + 1:].strip() and
                                                    not q[j + 1:].startswith(","))
                   else (text, j + 2))
        assert _outcome(alps._read_value, q, 0) == general, repr(q)
    for c in _random_texts(4, ["aprun", " ", "-n", "4", "'", '"', "\\", "#", "\t", "\xa0",
                               "./a.exe", ":"], 20_000, 8):
        taken["command"] += bool(alps._PLAIN_COMMAND.fullmatch(c))
        assert alps._tokens(c) == _outcome(shlex.split, c) or (
            _outcome(shlex.split, c) == "ValueError" and alps._tokens(c) == c.split()), repr(c)
    print(f"fast path taken: {taken}")
    assert min(taken.values()) >= 500, taken
