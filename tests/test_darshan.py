"""Darshan connector (PyDarshan) and log repository lookup: upstream known answers
(realdata README §4, §6), quarantine of broken logs, warehouse merge by log."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import struct
from pathlib import Path

import pytest
from lassi.ingest.contract import IngestError
from lassi.ingest.darshan import (
    IsolatedReader,
    log_files,
    parse_log,
    parse_logs,
    read_log,
    timeout_s,
    user_from_name,
)
from lassi.ingest.darshan_repo import find_logs

from lassi.core.schemas import schema_of

DT = dt.datetime
VPIC = "/scratch2/scratchdirs/glock/tokioabc-s.4478544/vpicio/vpicio.hdf5"
REPO_VPIC = "2017/3/20/glock_vpicio_uni_id4478544_3-20-7667-18385393005962577517_1.darshan"
REPO_DBSCAN = "2017/3/20/glock_dbscan_read_id4478544_3-20-7800-15217972833987807816_1.darshan"
RELEASE_35 = "darshan/darshan-logs/release_logs/mpi-io-test-x86_64-3.5.0.darshan"


def all_logs(realdata: Path) -> list[str]:
    """Every Darshan log of realdata: darshan-logs/**/*.darshan, pytokio/*.darshan and
    everything in pytokio/darshanlogs/ (0-byte placeholders and `_empty` included)."""
    out = sorted((realdata / "darshan" / "darshan-logs").rglob("*.darshan"))
    out += sorted((realdata / "pytokio").glob("*.darshan"))
    out += sorted(p for p in (realdata / "pytokio" / "darshanlogs").rglob("*") if p.is_file())
    return [str(p) for p in out]


@pytest.fixture(scope="module")
def parsed(realdata):
    """All realdata logs through the isolated reader (as the ingest reads them)."""
    return parse_logs(all_logs(realdata))


def test_every_realdata_log_loads_or_is_quarantined(realdata, parsed):
    jobs, files, qs, stats = parsed
    logs = all_logs(realdata)
    assert stats.files == stats.lines_read == len(logs) == 30
    assert stats.conserved and stats.lines_used == len(jobs) == 27
    # exactly the three 0-byte files are quarantined, each with its reason, line_no 0
    zero = {p for p in logs if Path(p).stat().st_size == 0}
    assert len(zero) == 3 and {q.file for q in qs} == zero
    assert all(q.line_no == 0 and "0 bytes" in q.reason and q.source == "darshan" for q in qs)
    # the two partial logs load, flagged partial and counted
    partial = {Path(j["log_path"]).name for j in jobs if j["partial"]}
    assert partial == {"imbalanced-io.darshan", "partial_data_stdio.darshan"}
    assert stats.extra["partial"] == 2
    # an empty log with a valid header is a job with zero files
    empty = next(j for j in jobs if j["log_path"].endswith("empty_log.darshan"))
    assert (empty["job_id"], empty["nprocs"], empty["n_files"], empty["modules"]) == \
        ("395998", 4, 0, [])
    assert stats.rows == len(jobs) + len(files)
    names = set(schema_of("darshan_job").fieldNames())
    assert all(set(j) == names for j in jobs)
    doubles = [f.name for f in schema_of("darshan_job").fields if f.dataType.typeName() == "double"]
    assert all(j[k] is None or type(j[k]) is float for j in jobs for k in doubles)
    # a directory gives its *.darshan files only (not the READMEs beside them)
    found = log_files([str(realdata / "darshan" / "darshan-logs")])
    assert len(found) == 21 and all(p.endswith(".darshan") for p in found)


def test_readme_job_table(parsed):
    """jobid / nprocs / start (UTC) of the README §4 table."""
    jobs = {Path(j["log_path"]).name: j for j in parsed[0]}
    expect = {
        "mpi-io-test-x86_64-3.0.0.darshan": ("2112", 4, DT(2016, 3, 24, 21, 5, 44)),
        "imbalanced-io.darshan": ("1452113755", 496, DT(2021, 4, 14, 21, 29, 55)),
        "e3sm_io_heatmap_only.darshan": ("586491", 512, DT(2022, 3, 2, 19, 52, 46)),
        "darshan-apmpi-2nodes-64mpi.darshan": ("526820", 128, None),
    }
    for name, (jobid, nprocs, start) in expect.items():
        j = jobs[name]
        assert (j["job_id"], j["nprocs"]) == (jobid, nprocs)
        if start:
            assert j["start"] == start
    assert jobs["imbalanced-io.darshan"]["end"] == DT(2021, 4, 14, 21, 54, 33)
    assert jobs["e3sm_io_heatmap_only.darshan"]["end"] == DT(2022, 3, 2, 20, 4, 52)
    # POSIX read = write = 64 MiB for the mpi-io-test release logs
    for v in ("3.2.1", "3.4.0", "3.5.0"):
        rows = [f for f in parsed[1] if f["log_path"].endswith(f"x86_64-{v}.darshan")
                and f["module"] == "POSIX"]
        assert sum(f["bytes_read"] for f in rows) == sum(f["bytes_written"] for f in rows) \
            == 67_108_864


def test_sample_darshan(realdata):
    job, files = read_log(realdata / "pytokio" / "sample.darshan")
    assert job["job_id"] == "4478544" and job["nprocs"] == 2048
    assert job["start"] == DT(2017, 3, 20, 9, 7, 47) and job["end"] == DT(2017, 3, 20, 9, 9, 43)
    assert Path(job["exe"]).name == "vpicio_uni" and VPIC in job["cmdline"]
    assert job["user"] == "69615"          # no repository name: the uid
    assert job["mounts"] == ["/scratch2"] and job["partial"] is False
    vpic = files[(files.module == "POSIX") & (files.file_name == VPIC)]
    assert len(vpic) == 1
    v = vpic.iloc[0]
    assert v.bytes_written == 2_199_023_259_968 and v["rank"] == -1
    assert v.stripe_count == 24 and v.stripe_size == 1 << 20
    assert sorted(v.ost_ids) == list(range(24))
    assert (v["mount"], v.fs_type) == ("/scratch2", "lustre")


def test_agg_perf_is_darshan_parser_perf(realdata):
    """One shared file: agg_perf_by_slowest = bytes / the slowest rank's time (MiB/s)."""
    import darshan

    path = realdata / "pytokio" / "sample.darshan"
    rep = darshan.DarshanReport(str(path), read_all=True)
    c, f = rep.records["POSIX"].to_df()["counters"], rep.records["POSIX"].to_df()["fcounters"]
    nbytes = int(c["POSIX_BYTES_READ"].sum() + c["POSIX_BYTES_WRITTEN"].sum())
    slowest = float(f["POSIX_F_SLOWEST_RANK_TIME"].max())
    job, _ = parse_log(path)
    assert job["io_time_slowest_s"] == pytest.approx(slowest)
    assert job["agg_perf_mibs"] == pytest.approx(nbytes / 2**20 / slowest, rel=1e-9)
    assert 24_000 < job["agg_perf_mibs"] < 25_000


def test_imbalanced_io_lustre_record(realdata):
    _, files = read_log(realdata / "darshan/darshan-logs/imbalanced_io/imbalanced-io.darshan")
    rec = files[(files.record_id == "15708535418621378501") & (files.module == "POSIX")]
    r = rec.iloc[0]
    assert r.file_name == "/lus/theta-fs0/3981085427"
    assert (r.stripe_count, r.stripe_size, list(r.ost_ids)) == (1, 1 << 20, [29])


def test_sample2_reads_the_vpic_file(realdata):
    _, files = read_log(realdata / "pytokio" / "sample-2.darshan")
    posix = files[(files.module == "POSIX") & (files.file_name == VPIC)]
    assert posix.bytes_read.sum() == 1_649_291_067_392


def test_user_from_repository_name(realdata):
    job, _ = parse_log(realdata / "pytokio" / "darshanlogs" / REPO_VPIC)
    assert job["user"] == "glock"
    assert user_from_name("snyder_python3_id3116902-2110365_12-19-66957-18895_1.darshan") \
        == "snyder"
    assert user_from_name("sample.darshan") is None


def _name_map_span(data: bytes) -> tuple[int, int]:
    """(offset, length) of the name map of a 3.41 header (bytes 32-48)."""
    return struct.unpack("<QQ", data[32:48])


def test_broken_logs_are_quarantined_not_fatal(realdata, tmp_path):
    good = realdata / "pytokio" / "sample.darshan"
    src = (realdata / RELEASE_35).read_bytes()
    off, length = _name_map_span(src)
    assert off > 0 and off + length <= len(src)
    cases = {
        "zero.darshan": b"",
        "garbage.darshan": b"this is not a darshan log\n" * 10,
        "truncated.darshan": good.read_bytes()[:5000],
        # a smashed name map: darshan-util aborts (heap corruption) in the worker; the
        # worker dies, the ingest goes on with a fresh one
        "crash.darshan": src[:off + length // 2] + b"\xff" * (length - length // 2)
        + src[off + length:],
        # smashed differently, darshan-util reads nonsense: refused, worker restarted
        "corrupt.darshan": src[:off] + b"\x00" * length + src[off + length:],
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    shutil.copy(good, tmp_path / "ok.darshan")
    paths = [str(tmp_path / n) for n in ["crash.darshan", "corrupt.darshan", "ok.darshan",
                                         "zero.darshan", "garbage.darshan",
                                         "truncated.darshan"]]
    jobs, _, qs, stats = parse_logs(paths)
    reasons = {Path(q.file).name: q.reason for q in qs}
    assert set(reasons) == set(cases) and [Path(j["log_path"]).name for j in jobs] == \
        ["ok.darshan"]
    assert "0 bytes" in reasons["zero.darshan"]
    assert "not a readable Darshan log" in reasons["garbage.darshan"]
    assert "truncated" in reasons["truncated.darshan"] and "11472" in reasons["truncated.darshan"]
    assert "aborted" in reasons["crash.darshan"]
    assert "corrupt Darshan log" in reasons["corrupt.darshan"]
    assert (stats.lines_read, stats.lines_used, stats.lines_quarantined) == (6, 1, 5)
    assert stats.rows == 1 + len(parse_log(good)[1])


def test_a_hung_worker_is_killed_and_the_next_log_read(realdata):
    """A darshan-util call that never returns (a log on a dead mount): the worker is
    stopped for real (SIGSTOP), the log is quarantined after the timeout, the worker is
    killed and the next log gets a fresh one."""
    good = str(realdata / "pytokio" / "sample.darshan")
    reader = IsolatedReader(timeout_s=4)
    try:
        assert reader.parse(good)[0] == "ok"
        hung = reader._proc
        os.kill(hung.pid, signal.SIGSTOP)
        status, reason = reader.parse(good)
        assert status == "bad"
        assert reason.startswith("darshan-util did not finish reading the log within 4 s")
        assert hung.poll() == -signal.SIGKILL and reader._proc is None
        status, out = reader.parse(good)
        assert status == "ok", out
        assert reader._proc.pid != hung.pid and out == parse_log(good)
    finally:
        reader.close()


def _child_site(tmp_path: Path, monkeypatch, code: str) -> None:
    """Run `code` at the start of every child Python (a sitecustomize on PYTHONPATH)."""
    (tmp_path / "sitecustomize.py").write_text(code)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))


def test_a_slow_worker_start_does_not_count_against_the_log(realdata, tmp_path, monkeypatch):
    """A loaded node starts Python + PyDarshan slowly (CI saw > 2 s): the log's timeout starts
    when the worker says it is ready, so a 3 s start with a 2 s timeout still reads the log;
    what the interpreter prints before the worker takes over its stdout is skipped."""
    good = str(realdata / "pytokio" / "sample.darshan")
    _child_site(tmp_path, monkeypatch, "import time\nprint('site says hello')\ntime.sleep(3)\n")
    with IsolatedReader(timeout_s=2) as reader:
        status, out = reader.parse(good)
        assert status == "ok", out
        assert out == parse_log(good)


def test_a_worker_that_cannot_start_is_an_error_not_a_bad_log(tmp_path, monkeypatch):
    """A reader process that dies at start (a broken PyDarshan on the node) fails the ingest
    with one clear line; it does not quarantine every log of the day as unreadable."""
    _child_site(tmp_path, monkeypatch, "import os\nos._exit(7)\n")
    with IsolatedReader(timeout_s=2) as reader, \
            pytest.raises(IngestError, match="did not start: it exited with code 7"):
        reader.parse(str(tmp_path / "any.darshan"))


def test_darshan_timeout_setting(monkeypatch):
    monkeypatch.delenv("LASSI_DARSHAN_TIMEOUT", raising=False)
    assert timeout_s() == 300.0
    monkeypatch.setenv("LASSI_DARSHAN_TIMEOUT", "12.5")
    assert timeout_s() == 12.5
    monkeypatch.setenv("LASSI_DARSHAN_TIMEOUT", "five minutes")
    with pytest.raises(IngestError, match="LASSI_DARSHAN_TIMEOUT must be seconds"):
        timeout_s()


def test_repo_lookup_pytokio_answers(realdata):
    root = realdata / "pytokio" / "darshanlogs"
    day, prev, nxt = dt.date(2017, 3, 20), dt.date(2017, 3, 19), dt.date(2017, 3, 21)
    found = find_logs(root, day, jobid=4478544)
    assert {p.name for p in found} == {Path(REPO_VPIC).name, Path(REPO_DBSCAN).name}
    assert len(find_logs(root, day, user="glock", jobid=4478544)) == 2
    assert find_logs(root, day, user="invaliduser", jobid=4478544) == []
    assert len(find_logs(root, prev, nxt, jobid=4478544)) == 2
    assert find_logs(root, day, jobid=4487503) == []
    assert len(find_logs(root, prev, nxt, jobid=4487503)) == 2
    assert find_logs(root, day, jobid=5) == []
    assert len(find_logs(root, day)) >= 2
    assert len(find_logs(root, prev, nxt)) >= 4
    assert find_logs(root, DT(2017, 3, 20, 2, 7, 47), "2017-03-21", user="glock") == \
        found + find_logs(root, nxt)
    with pytest.raises(ValueError):
        find_logs(root, nxt, day)


# --- warehouse (Spark) ---------------------------------------------------------------------

def _rows(wh, table: str, day: dt.date) -> list[tuple]:
    cols = [c for c in schema_of(table).fieldNames() if c != "log_path"]
    return sorted(tuple(str(v) for v in r) for r in wh.read(table, [day]).select(*cols).collect())


def test_ingest_merges_by_log(realdata, warehouse, tmp_path):
    """Two logs of one day; a rerun changes nothing; re-ingesting one log (from another
    folder, same file name) replaces only its rows; bad logs go to the quarantine."""
    from lassi.ingest.runner import ingest_source

    from lassi.core.config import load_site

    site, spark = load_site("archer"), warehouse.spark
    day = dt.date(2017, 3, 20)
    logs = tmp_path / "logs"
    logs.mkdir()
    for rel in (REPO_VPIC, REPO_DBSCAN):
        shutil.copy(realdata / "pytokio" / "darshanlogs" / rel, logs / Path(rel).name)
    (logs / "placeholder.darshan").write_bytes(b"")
    st = ingest_source(spark, warehouse, site, "darshan", [str(logs)])
    assert (st.lines_read, st.lines_used, st.lines_quarantined) == (3, 2, 1)
    jobs = warehouse.read("darshan_job", [day]).collect()
    assert sorted(j.exe.rsplit("/", 1)[-1] for j in jobs) == ["dbscan_read", "vpicio_uni"]
    assert {j.user for j in jobs} == {"glock"} and {j.date for j in jobs} == {day}
    first = {t: _rows(warehouse, t, day) for t in ("darshan_job", "darshan_file")}
    n_files = len(first["darshan_file"])
    assert n_files == sum(1 for _ in parse_log(logs / Path(REPO_VPIC).name)[1]) + \
        sum(1 for _ in parse_log(logs / Path(REPO_DBSCAN).name)[1])

    st = ingest_source(spark, warehouse, site, "darshan", [str(logs)], day)   # rerun
    assert {t: _rows(warehouse, t, day) for t in first} == first

    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(logs / Path(REPO_VPIC).name, other / Path(REPO_VPIC).name)
    ingest_source(spark, warehouse, site, "darshan", [str(other)], day)
    assert {t: _rows(warehouse, t, day) for t in first} == first
    paths = {r.log_path for r in warehouse.read("darshan_job", [day]).collect()}
    assert paths == {str(other / Path(REPO_VPIC).name), str(logs / Path(REPO_DBSCAN).name)}

    q = warehouse.read("quarantine", [day]).filter("source = 'darshan'").collect()
    assert q == [] or all(r.file.endswith("placeholder.darshan") for r in q)
    qs = [r for d in warehouse.dates("quarantine") for r in
          warehouse.read("quarantine", [d]).filter("source = 'darshan'").collect()]
    assert any(r.file.endswith("placeholder.darshan") and r.line_no == 0 and
               "0 bytes" in r.reason for r in qs)
    log = warehouse.read("ingest_log", [day]).filter("source = 'darshan'").collect()
    assert len(log) == 1 and log[0].lines_read == 1


def test_ingest_date_filter(realdata, warehouse, tmp_path):
    from lassi.ingest.darshan import ingest_inputs

    for name in ("sample.darshan", "sample-goodost.darshan"):
        shutil.copy(realdata / "pytokio" / name, tmp_path / name)
    st = ingest_inputs(warehouse.spark, warehouse, None, [str(tmp_path)], dt.date(2017, 8, 4),
                       None)
    assert st.extra["other_day"] == 1 and st.lines_used == 2
    assert warehouse.dates("darshan_job") == [dt.date(2017, 8, 4)]
    (job,) = warehouse.read("darshan_job").collect()
    assert job.job_id == "6909118" and job.nprocs == 48
