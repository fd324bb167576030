"""The command line: --help everywhere, one-line errors, non-zero exits, no tracebacks."""

import subprocess
import sys

import pytest

from lassi.cli.main import main

SUBCOMMANDS = ["simulate", "ingest", "run", "report", "evaluate", "sql", "demo",
               "compress-trace", "summarize-job", "bad-ost", "scoreboard", "umami", "correlate",
               "archive-lmt", "why", "jvm-archive"]


@pytest.mark.parametrize("cmd", SUBCOMMANDS)
def test_every_subcommand_has_help(cmd, capsys):
    with pytest.raises(SystemExit) as exc:
        main([cmd, "--help"])
    assert exc.value.code == 0
    assert "usage: lassi " + cmd in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["run", "daily", "--date", "2017-02-30"], "not a date"),
    (["ingest", "--source", "nosuch", "--input", "x"], "invalid choice"),
    (["simulate", "--date", "2017-10-10"], "--out"),
    (["frobnicate"], "invalid choice"),
])
def test_usage_errors_are_one_line(argv, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and needle in err and len(err.splitlines()) == 1


def test_wrong_path_is_one_line(capsys, tmp_path):
    rc = main(["ingest", "--source", "lustre", "--input", str(tmp_path / "missing")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and err == [f"lassi: error: no such file or directory: {tmp_path / 'missing'}"]
    rc = main(["run", "daily", "--date", "2017-10-10", "--raw", str(tmp_path / "missing")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and err == [f"lassi: error: no such raw folder: {tmp_path / 'missing'}"]


@pytest.mark.parametrize("argv", [
    ["summarize-job", "123"], ["umami", "123"], ["why", "123"],
    ["scoreboard", "--from", "2017-10-10", "--to", "2017-10-10"]])
def test_tokio_tools_name_a_missing_warehouse(argv, capsys, tmp_path):
    rc = main([*argv, "--warehouse", str(tmp_path / "nowhere")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and err == [f"lassi: error: no warehouse at {tmp_path / 'nowhere'}"]


def test_ingest_wrong_time_zone_is_one_line(capsys, tmp_path):
    f = tmp_path / "lfs-df.txt"
    f.write_text("")
    rc = main(["ingest", "--source", "lfs-df", "--input", str(f), "--tz", "Mars/Olympus"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "unknown time zone 'Mars/Olympus'" in err[0]


def test_unknown_site_is_one_line(capsys, tmp_path):
    rc = main(["simulate", "--site", "mars", "--date", "2017-10-10", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "unknown site 'mars'" in err[0]


def test_dense_on_a_beacon_site_is_one_line(capsys, tmp_path):
    rc = main(["simulate", "--site", "taihulight", "--dense", "--date", "2018-02-25",
               "--nodes", "64", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "--dense is for Lustre-capture sites" in err[0]
    assert not (tmp_path / "x").exists()


def test_simulate_too_few_nodes_is_one_line(capsys, tmp_path):
    """Two nodes cannot run the 3-node N:M jobs: once, the simulation ran for years."""
    rc = main(["simulate", "--site", "archer", "--nodes", "2", "--date", "2017-10-10",
               "--out", str(tmp_path / "raw")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and err == ["lassi: error: --nodes 2: a simulated site needs at least 3 "
                               "compute nodes (its N:M runs use 3)"]
    assert not (tmp_path / "raw").exists()


def test_simulate_into_a_used_folder_is_one_line(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    rc = main(["simulate", "--date", "2017-10-10", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "is not empty" in err[0]
    assert (tmp_path / "notes.txt").read_text() == "mine"
    (tmp_path / "truth.json").write_text("{}")
    rc = main(["simulate", "--date", "2017-10-10", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "--overwrite" in err[0]


def test_evaluate_without_truth_is_one_line(capsys, tmp_path):
    rc = main(["evaluate", "--truth", str(tmp_path / "t.json"), "--date", "2017-10-10"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "no truth file" in err[0]


def test_console_script_exits_nonzero_without_traceback(tmp_path):
    exe = [sys.executable, "-m", "lassi.cli", "ingest", "--raw", str(tmp_path / "x"),
           "--date", "2017-10-10"]
    p = subprocess.run(exe, capture_output=True, text=True)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert p.stderr.strip() == f"lassi: error: no such raw folder: {tmp_path / 'x'}"
