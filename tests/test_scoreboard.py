"""`lassi scoreboard` (TOKIO darshan_scoreboard, Fig. 8) on small hand-made warehouses."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql.types import DoubleType, IntegerType, LongType

from lassi.core.schemas import schema_of

D = dt.date(2017, 3, 20)
GIB = 2 ** 30


def rows_of(table: str, *dicts: dict) -> list[tuple]:
    """Tuples in schema order: given values, 0 for other non-nullable numbers, else None."""
    out = []
    for d in dicts:
        row = []
        for f in schema_of(table).fields:
            if f.name in d:
                row.append(d[f.name])
            elif not f.nullable and isinstance(f.dataType, (LongType, IntegerType)):
                row.append(0)
            elif not f.nullable and isinstance(f.dataType, DoubleType):
                row.append(0.0)
            else:
                row.append(None)
        out.append(tuple(row))
    return out


def _job(log, job, user, exe, rb, wb, date=D):
    return {"log_path": log, "job_id": job, "user": user, "exe": exe, "bytes_read": rb,
            "bytes_written": wb, "date": date}


def _file(log, job, module, mount, rb, wb, rec, date=D):
    return {"log_path": log, "job_id": job, "module": module, "record_id": rec,
            "mount": mount, "bytes_read": rb, "bytes_written": wb, "date": date}


@pytest.fixture
def darshan_wh(warehouse):
    jobs = [_job("L1", "1", "alice", "/bin/vpicio", 0, 100 * GIB),
            _job("L2", "2", "bob", "/opt/ior", 30 * GIB, 10 * GIB),
            _job("L3", "2", "bob", "/opt/dbscan", 5 * GIB, 0),
            _job("L4", "3", "alice", "/x/ior", 1 * GIB, 1 * GIB),            # no file records
            _job("L5", "9", "carol", "/big", 999 * GIB, 0, dt.date(2017, 3, 25))]  # outside
    files = [_file("L1", "1", "POSIX", "/scratch1", 0, 60 * GIB, "a"),
             _file("L1", "1", "POSIX", "/scratch2", 0, 40 * GIB, "b"),
             _file("L1", "1", "MPI-IO", "/scratch1", 0, 60 * GIB, "a"),    # rides on POSIX
             _file("L2", "2", "POSIX", "/scratch2", 30 * GIB, 10 * GIB, "c"),
             _file("L3", "2", "STDIO", "/scratch1", 5 * GIB, 0, "d"),
             _file("L5", "9", "POSIX", "/scratch3", 999 * GIB, 0, "e", dt.date(2017, 3, 25))]
    warehouse.write_rows(rows_of("darshan_job", *jobs), "darshan_job")
    warehouse.write_rows(rows_of("darshan_file", *files), "darshan_file")
    return warehouse


def _table(df):
    return [(r.name, r.read_bytes // GIB, r.write_bytes // GIB, r.jobs) for r in df.itertuples()]


def test_darshan_scoreboard(darshan_wh):
    from lassi.tools.scoreboard import scoreboard

    users, apps, fss = scoreboard(darshan_wh, D, dt.date(2017, 3, 21), top=10)
    assert users.attrs["source"] == "darshan (darshan_job + darshan_file)"
    # by hand: alice = L1 + L4 (jobs 1, 3), bob = L2 + L3 (job 2)
    assert _table(users) == [("alice", 1, 101, 2), ("bob", 35, 10, 1)]
    assert _table(apps) == [("vpicio", 0, 100, 1), ("ior", 31, 11, 2), ("dbscan", 5, 0, 1)]
    # scratch2 = L1 40 + L2 40; scratch1 = L1 60 (the MPI-IO record not again) + L3 5
    assert _table(fss) == [("/scratch2", 30, 50, 2), ("/scratch1", 5, 60, 2),
                           ("(no mount)", 1, 1, 1)]
    assert list(users["rank"]) == [1, 2]
    assert users["total_gib"].tolist() == [102.0, 45.0]
    top1 = scoreboard(darshan_wh, D, D, top=1)
    assert [len(t) for t in top1] == [1, 1, 1] and top1[1].name.tolist() == ["vpicio"]


@pytest.fixture
def lassi_wh(warehouse):
    day = dt.date(2017, 4, 1)
    kib = 2 ** 20          # KiB in a GiB
    ah = [{"app_id": "A1", "job_id": "10", "fs": "fs1", "hour": dt.datetime(2017, 4, 1, 0),
           "read_kb": 1.0 * kib, "write_kb": 0.0, "date": day},
          {"app_id": "A1", "job_id": "10", "fs": "fs1", "hour": dt.datetime(2017, 4, 1, 1),
           "read_kb": 0.0, "write_kb": 2.0 * kib, "date": day},
          {"app_id": "A2", "job_id": "11", "fs": "fs2", "hour": dt.datetime(2017, 4, 1, 3),
           "user": "eve", "exe": "/usr/bin/lammps", "read_kb": 4.0 * kib, "write_kb": 0.0,
           "date": day}]
    # A1's user/exe only in app_run, which started the day before (crosses midnight)
    ar = [{"app_id": "A1", "job_id": "10", "user": "dave", "exe": "/bin/wrf",
           "source": "slurm", "date": day - dt.timedelta(days=1)}]
    js = [{"job_id": "B1", "user": "frank", "app": "cesm", "read_bytes": 3 * GIB,
           "write_bytes": 0, "date": day}]
    warehouse.write_rows(rows_of("app_hour", *ah), "app_hour")
    warehouse.write_rows(rows_of("app_run", *ar), "app_run")
    warehouse.write_rows(rows_of("job_summary", *js), "job_summary")
    return warehouse


def test_fallback_app_hour_and_job_summary(lassi_wh):
    from lassi.tools.scoreboard import scoreboard

    day = dt.date(2017, 4, 1)
    users, apps, fss = scoreboard(lassi_wh, day, day)
    assert users.attrs["source"] == ("risk (app_hour + app_run) + beacon (job_summary)")
    assert _table(users) == [("eve", 4, 0, 1), ("dave", 1, 2, 1), ("frank", 3, 0, 1)]
    assert _table(apps) == [("lammps", 4, 0, 1), ("cesm", 3, 0, 1), ("wrf", 1, 2, 1)]
    assert _table(fss) == [("fs2", 4, 0, 1), ("(no fs split)", 3, 0, 1), ("fs1", 1, 2, 1)]


def test_cli_scoreboard(darshan_wh, tmp_path, capsys):
    from lassi.cli.main import main

    wh = darshan_wh.root
    out = tmp_path / "out"
    assert main(["scoreboard", "--from", "2017-03-20", "--to", "2017-03-20", "--top", "5",
                 "--warehouse", wh, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "source: darshan" in text
    assert "Users" in text and "Applications" in text and "File systems" in text
    line = next(ln for ln in text.splitlines() if "alice" in ln)
    assert line.split()[-4:] == ["1.0", "101.0", "102.0", "2"]
    csv = out / "scoreboard_2017-03-20_2017-03-20.csv"
    png = out / "scoreboard_2017-03-20_2017-03-20.png"
    assert csv.read_text().splitlines()[0] == ("category,rank,name,read_bytes,write_bytes,"
                                               "total_bytes,jobs,read_gib,write_gib,total_gib")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    cases = [(["--from", "2017-02-30", "--to", "2017-03-20"], "--from: not a date"),
             (["--from", "2017-03-21", "--to", "2017-03-20"], "is after --to"),
             (["--from", "2016-01-01", "--to", "2016-01-02"], "no darshan_job, app_hour")]
    for args, msg in cases:
        assert main(["scoreboard", *args, "--warehouse", wh]) == 1
        err = capsys.readouterr().err
        assert err.startswith("lassi: error: ") and msg in err and err.count("\n") == 1


def test_real_darshan_logs(realdata, spark, warehouse):
    """pytokio's darshanlogs/2017/3/20: vpicio_uni and dbscan_read of job 4478544 (glock)."""
    from lassi.ingest import darshan

    from lassi.tools.scoreboard import scoreboard

    darshan.ingest_inputs(spark, warehouse, None,
                          [str(realdata / "pytokio" / "darshanlogs" / "2017" / "3" / "20")],
                          None, None)
    users, apps, fss = scoreboard(warehouse, D, D)
    assert users.name.tolist() == ["glock"] and users.jobs.tolist() == [1]
    assert apps.name.tolist() == ["vpicio_uni", "dbscan_read"]
    scratch2 = fss[fss.name == "/scratch2"].iloc[0]
    # README §6: POSIX writes of vpicio 2,199,023,259,968 B, dbscan reads 1,649,291,067,392 B
    assert (scratch2.read_bytes, scratch2.write_bytes) == (1_649_291_067_392, 2_199_023_259_968)
    assert fss.name.iloc[0] == "/scratch2"
    # users and applications hold every byte of the logs (+ STDIO records without a mount)
    assert users.total_bytes.sum() == apps.total_bytes.sum() == fss.total_bytes.sum()
