"""`lassi archive-lmt` (lassi/lmt_archive.py): idempotent windows of an LMT database.

Archiving hour by hour gives the table of archiving the whole window at once, a rerun
changes nothing, rows outside the window (or of another file system) are kept.
"""

from __future__ import annotations

import datetime as dt

import pytest
from lassi.ingest.lmt import LmtDb

from lassi.cli.main import main
from lassi.tools.lmt_archive import archive, parse_time
from tests.test_lmt import (
    PACIFIC,
    RESET,
    SNX,
    _closed_port,
    load_mysql,
    shared_ddl,
    sqlite_tables,
    tiny_tables,
    write_sqlite,
)

# the tiny database, starting 15:55 PST = 23:55Z: its 10 minutes cross midnight UTC
FIRST_LOCAL = dt.datetime(2017, 12, 31, 15, 55)
D1, D2 = dt.date(2017, 12, 31), dt.date(2018, 1, 1)
H = dt.datetime(2018, 1, 1)          # midnight UTC


def _table(wh, table: str) -> list[tuple]:
    return sorted(tuple(r) for r in wh.read(table).collect())


def _both(wh) -> tuple[list, list]:
    return _table(wh, "lmt_ost"), _table(wh, "lmt_mds")


def _other_rows(spark) -> tuple:
    """lmt_ost rows that an archive of tinyfs must keep: another file system in the window,
    tinyfs outside it."""
    from lassi.core.schemas import schema_of

    keep = [("otherfs", "otherfs-OST0000", "o1", H + dt.timedelta(minutes=1), 7, 1, 2, 1, 1,
             5.0, False, None, None, None, None, None, None, None, D2),
            ("tinyfs", "tinyfs-OST0000", "tiny-oss1", H + dt.timedelta(hours=5), 99, 1, 2,
             None, None, None, False, None, None, None, None, None, None, None, D2)]
    return spark.createDataFrame(keep, schema_of("lmt_ost")), [tuple(r) for r in keep]


def test_hour_by_hour_equals_whole_window(spark, tmp_path):
    from lassi.core.warehouse import Warehouse

    db_path = write_sqlite(tmp_path / "tiny.sqlite3", tiny_tables(FIRST_LOCAL))
    whole, hourly = (Warehouse(spark, str(tmp_path / n)) for n in ("whole", "hourly"))
    extra, extra_rows = _other_rows(spark)
    hourly.write(extra, "lmt_ost", [D2])
    with LmtDb(str(db_path), PACIFIC) as db:
        st = archive(spark, whole, db, dt.datetime(2017, 12, 31), dt.datetime(2018, 1, 2))
        assert (st.lines_read, st.lines_quarantined, st.counter_resets) == (23, 4, 2)
        archive(spark, hourly, db, H - dt.timedelta(hours=1), H)
        archive(spark, hourly, db, H, H + dt.timedelta(hours=1))
        ost, mds = _both(whole)
        assert len(ost) == 11 and len(mds) == 8
        assert {r[-1] for r in ost} == {D1, D2}                     # both UTC days
        h_ost, h_mds = _both(hourly)
        assert [r for r in h_ost if r not in extra_rows] == ost      # same rows, same deltas
        assert h_mds == mds
        assert all(r in h_ost for r in extra_rows)                   # other rows kept
        # OST0000's first sample after midnight (TS 8, 00:02Z) is seeded by TS 4 (23:58Z)
        (first,) = [r for r in ost if r[1] == "tinyfs-OST0000" and r[4] == 8]
        assert (first[3], first[7], first[9]) == (H + dt.timedelta(minutes=2), 600, 240.0)

        archive(spark, hourly, db, H, H + dt.timedelta(hours=1))     # rerun: nothing changes
        assert _both(hourly) == (h_ost, h_mds)
    for wh in (whole, hourly):
        q = wh.read("quarantine", [D1]).filter("source = 'lmt'").collect()
        assert len(q) == 4 and {r.file for r in q} == {str(db_path)}


def test_lmtdb_reset_windows_equal_day(spark, tmp_path, realdata):
    """The gap and the reset of lmtdb-reset on window edges: the same table as the day."""
    from lassi.core.warehouse import Warehouse

    whole, parts = (Warehouse(spark, str(tmp_path / n)) for n in ("whole", "parts"))
    edges = [dt.datetime(2018, 4, 18), dt.datetime(2018, 4, 18, 14, 37),
             dt.datetime(2018, 4, 18, 14, 39, 5), dt.datetime(2018, 4, 19)]
    with LmtDb(str(realdata / RESET), PACIFIC) as db:
        archive(spark, whole, db, edges[0], edges[-1])
        for a, b in zip(edges, edges[1:], strict=False):
            archive(spark, parts, db, a, b)
    ost, mds = _both(whole)
    assert _both(parts) == (ost, mds)
    assert len(ost) == 26 and len(mds) == 21 * 65
    (after,) = [r for r in ost if r[4] == 16486146]
    assert (after[9], after[10], after[7], after[8]) == (200.0, True, 0, 0)
    assert all(r[7] is None or r[7] >= 0 for r in ost)


def test_cli_archive_from_mariadb(spark, tmp_path, mariadb, realdata, capsys, monkeypatch):
    """`lassi archive-lmt` from a live MariaDB copy of snx11025: the upstream totals."""
    from pyspark.sql import functions as F

    from lassi.core.warehouse import Warehouse

    monkeypatch.delenv("LASSI_LMT_PASSWORD", raising=False)
    uri = load_mysql(mariadb, "lassi_lmtarch_snx", sqlite_tables(realdata / SNX),
                     shared_ddl(realdata))
    wh = str(tmp_path / "wh")
    assert main(["archive-lmt", "--input", uri, "--from", "2018-01-28T08:00Z",
                 "--to", "2018-01-28T09:00", "--tz", PACIFIC, "--warehouse", wh]) == 0
    out = capsys.readouterr().out
    assert "1464 lmt_ost + 1281 lmt_mds rows" in out and "0 quarantined" in out
    w = Warehouse(spark, wh)
    tot = w.read("lmt_ost").agg(F.sum("read_bytes_delta"), F.sum("write_bytes_delta")).first()
    assert tuple(tot) == (6_347_173_888, 119_037_925_429)
    ops = {r.op: r.n for r in w.read("lmt_mds").groupBy("op")
           .agg(F.sum("samples_delta").alias("n")).collect()}
    assert (ops["getattr"], ops["open"], ops["close"]) == (2_968_372, 1_529_078, 1_512_366)


def test_cli_archive_sqlite(spark, tmp_path, capsys):
    db = write_sqlite(tmp_path / "tiny.sqlite3", tiny_tables(FIRST_LOCAL))
    wh = str(tmp_path / "wh")
    assert main(["archive-lmt", "--input", str(db), "--from", "2018-01-01", "--to",
                 "2018-01-01T01:00:00+00:00", "--tz", PACIFIC, "--warehouse", wh]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    assert out.startswith(f"archive-lmt {db} [2018-01-01T00:00:00Z, 2018-01-01T01:00:00Z)")
    assert "counter resets" in out      # the reset at TS 9 (00:03Z)


def _error(argv: list[str], capsys, status: int = 1) -> str:
    assert main(argv) == status
    err = capsys.readouterr().err.strip()
    assert err.startswith("lassi: error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_cli_errors(tmp_path, capsys):
    db = str(write_sqlite(tmp_path / "tiny.sqlite3", tiny_tables()))
    base = ["archive-lmt", "--warehouse", str(tmp_path / "wh"), "--tz", PACIFIC]
    assert "not an ISO date" in _error([*base, "--input", db, "--from", "2018-02-30",
                                        "--to", "2018-03-01"], capsys)
    assert "is not before" in _error([*base, "--input", db, "--from", "2018-03-02",
                                      "--to", "2018-03-01"], capsys)
    assert "no such LMT database file" in _error(
        [*base, "--input", str(tmp_path / "nope.sqlite3"), "--from", "2018-01-01",
         "--to", "2018-01-02"], capsys)
    assert "unknown time zone" in _error(
        ["archive-lmt", "--input", db, "--from", "2018-01-01", "--to", "2018-01-02",
         "--tz", "Mars/Olympus"], capsys)
    port = _closed_port()
    err = _error([*base, "--input", f"mysql://lmt:pw@127.0.0.1:{port}/lmt", "--from",
                  "2018-01-01", "--to", "2018-01-02", "--retries", "2"], capsys, status=75)
    assert f"127.0.0.1:{port} after 2 attempts" in err and "refused" in err
    assert "pw@" not in err and "rerun the same window" in err
    assert not (tmp_path / "wh").exists()          # nothing started, nothing written


def test_parse_time():
    assert parse_time("2018-01-28") == dt.datetime(2018, 1, 28)
    assert parse_time("2018-01-28T00:00:00-08:00") == dt.datetime(2018, 1, 28, 8)
    assert parse_time("2018-01-28 08:30Z") == dt.datetime(2018, 1, 28, 8, 30)
    with pytest.raises(ValueError, match="not an ISO date"):
        parse_time("yesterday")
