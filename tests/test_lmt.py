"""The LMT connector (ingest/lmt.py) on SQLite copies and on a real MariaDB server.

Known answers: pytokio's snx11025 and lmtdb-reset databases (../shared/realdata README §2b,
§6), and a tiny LMT database built here with a gap, a reset and bad rows whose deltas are
worked out by hand below.
"""

from __future__ import annotations

import datetime as dt
import re
import socket
import sqlite3
import time
from pathlib import Path

import pytest
from lassi.ingest.lmt import LmtDb, LmtError, parse_mysql_uri, redact

PACIFIC = "America/Los_Angeles"
SNX = "pytokio/snx11025_2018-01-28.sqlite3"
RESET = "pytokio/lmtdb-reset.sqlite3"
LMT_TABLES = ("FILESYSTEM_INFO", "OSS_INFO", "OST_INFO", "MDS_INFO", "OPERATION_INFO",
              "TIMESTAMP_INFO", "OST_DATA", "OSS_DATA", "MDS_DATA", "MDS_OPS_DATA",
              "OST_VARIABLE_INFO", "MDS_VARIABLE_INFO")

# The LMT 1.1 tables the connector reads (column names and types of create_schema-1.1.sql);
# valid in SQLite and MariaDB, for tests that do not need ../shared.
TINY_DDL = """
CREATE TABLE FILESYSTEM_INFO (FILESYSTEM_ID integer NOT NULL, FILESYSTEM_NAME varchar(128),
  FILESYSTEM_MOUNT_NAME varchar(64), SCHEMA_VERSION float, PRIMARY KEY (FILESYSTEM_ID));
CREATE TABLE OSS_INFO (OSS_ID integer NOT NULL, FILESYSTEM_ID integer, HOSTNAME varchar(128),
  FAILOVERHOST varchar(128), PRIMARY KEY (OSS_ID));
CREATE TABLE OST_INFO (OST_ID integer NOT NULL, OSS_ID integer, OST_NAME varchar(128),
  HOSTNAME varchar(128), OFFLINE boolean, DEVICE_NAME varchar(128), PRIMARY KEY (OST_ID));
CREATE TABLE MDS_INFO (MDS_ID integer NOT NULL, FILESYSTEM_ID integer, MDS_NAME varchar(128),
  HOSTNAME varchar(128), DEVICE_NAME varchar(128), PRIMARY KEY (MDS_ID));
CREATE TABLE OPERATION_INFO (OPERATION_ID integer NOT NULL, OPERATION_NAME varchar(64),
  UNITS varchar(16), PRIMARY KEY (OPERATION_ID));
CREATE TABLE TIMESTAMP_INFO (TS_ID integer NOT NULL, TIMESTAMP datetime NOT NULL,
  PRIMARY KEY (TS_ID));
CREATE TABLE OST_DATA (OST_ID integer NOT NULL, TS_ID integer NOT NULL, READ_BYTES bigint,
  WRITE_BYTES bigint, PCT_CPU float, KBYTES_FREE bigint, KBYTES_USED bigint,
  INODES_FREE bigint, INODES_USED bigint, PRIMARY KEY (OST_ID, TS_ID));
CREATE TABLE OSS_DATA (OSS_ID integer NOT NULL, TS_ID integer NOT NULL, PCT_CPU float,
  PCT_MEMORY float, PRIMARY KEY (OSS_ID, TS_ID));
CREATE TABLE MDS_DATA (MDS_ID integer NOT NULL, TS_ID integer NOT NULL, PCT_CPU float,
  KBYTES_FREE bigint, KBYTES_USED bigint, INODES_FREE bigint, INODES_USED bigint,
  PRIMARY KEY (MDS_ID, TS_ID));
CREATE TABLE MDS_OPS_DATA (MDS_ID integer NOT NULL, TS_ID integer NOT NULL,
  OPERATION_ID integer NOT NULL, SAMPLES bigint, SUM bigint, SUMSQUARES bigint)
"""


def tiny_tables(first_local: dt.datetime = dt.datetime(2018, 1, 1)) -> dict[str, list[tuple]]:
    """A one-minute LMT database (TS_ID k at first_local + k-1 minutes, local time) with:
    OST0000 missing TS 5-7 (a gap; TS 5 has no TIMESTAMP_INFO row but an OST_DATA row),
    READ_BYTES going down at TS 9 (reset); OST0001 with NULL counters at TS 3; an OST_DATA
    row of an OST_ID without OST_INFO; MDS `open` going down at TS 3; an unknown operation."""
    ts = [(k, (first_local + dt.timedelta(minutes=k - 1)).strftime("%Y-%m-%d %H:%M:%S"))
          for k in range(1, 12) if k != 5]
    reads = {1: 100, 2: 200, 3: 350, 4: 400, 8: 1000, 9: 50, 10: 80, 11: 130}
    writes = {1: 10, 2: 20, 3: 30, 4: 40, 8: 100, 9: 150, 10: 170, 11: 180}
    ost = [(1, k, reads[k], writes[k], 1.5, 900, 100, 50, 5) for k in reads]
    ost += [(1, 5, 999, 999, 0.0, 0, 0, 0, 0)]                            # orphan TS_ID
    ost += [(2, k, r, w, None, None, None, None, None)
            for k, r, w in ((1, 5, 6), (2, 7, 8), (3, None, 9), (4, 11, 12))]
    ost += [(3, 1, 1, 1, 0.0, 0, 0, 0, 0)]                                # no OST_INFO
    mds = [(1, k, 1, s, 0, 0) for k, s in ((1, 10), (2, 20), (3, 5), (4, 15))]
    mds += [(1, k, 2, k, 0, 0) for k in (1, 2, 3, 4)]
    mds += [(1, 1, 99, 7, 0, 0)]                                          # no OPERATION_INFO
    return {
        "FILESYSTEM_INFO": [(1, "tinyfs", "/tiny", 1.1)],
        "OSS_INFO": [(1, 1, "tiny-oss1", None)],
        "OST_INFO": [(1, 1, "tinyfs-OST0000", "tiny-oss1", 0, "/dev/md0"),
                     (2, 1, "tinyfs-OST0001", "tiny-oss1", 0, "/dev/md1")],
        "MDS_INFO": [(1, 1, "tinyfs-MDT0000", "tiny-mds1", "/dev/md66")],
        "OPERATION_INFO": [(1, "open", "reqs"), (2, "close", "reqs")],
        "TIMESTAMP_INFO": ts,
        "OST_DATA": ost,
        "OSS_DATA": [(1, 1, 10.5, 50.25)],
        "MDS_DATA": [(1, 2, 3.5, 0, 0, 0, 0)],
        "MDS_OPS_DATA": mds,
    }


def _statements(ddl: str) -> list[str]:
    """A DDL file's statements (`#` comment lines dropped)."""
    text = "\n".join(ln for ln in ddl.splitlines() if not ln.lstrip().startswith("#"))
    return [s.strip() for s in text.split(";") if s.strip()]


def write_sqlite(path: Path, tables: dict[str, list[tuple]], ddl: str = TINY_DDL) -> Path:
    """An LMT SQLite copy holding `tables`."""
    conn = sqlite3.connect(path)
    for stmt in _statements(ddl):
        conn.execute(stmt)
    for name, rows in tables.items():
        if rows:
            conn.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(rows[0]))})",
                             rows)
    conn.commit()
    conn.close()
    return path


def sqlite_tables(path: Path) -> dict[str, list[tuple]]:
    """Every LMT table of an SQLite copy."""
    conn = sqlite3.connect(path)
    out = {t: conn.execute(f"SELECT * FROM {t}").fetchall() for t in LMT_TABLES}
    conn.close()
    return out


def load_mysql(mariadb: dict, database: str, tables: dict[str, list[tuple]],
               ddl: str = TINY_DDL) -> str:
    """A fresh MariaDB database `database` with the DDL and the rows (executemany); returns
    its mysql:// URI. Seed rows of the DDL are dropped from the tables loaded."""
    import pymysql

    args = {k: v for k, v in mariadb.items() if k != "database"}
    conn = pymysql.connect(**args, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {database}")
        cur.execute(f"CREATE DATABASE {database}")
        cur.execute(f"USE {database}")
        cur.execute("SET FOREIGN_KEY_CHECKS = 0")      # the bad rows break references
        for stmt in _statements(ddl):
            cur.execute(stmt)
        for name, rows in tables.items():
            cur.execute(f"DELETE FROM {name}")
            if rows:
                cur.executemany(f"INSERT INTO {name} VALUES ({', '.join(['%s'] * len(rows[0]))})",
                                rows)
    conn.close()
    return f"mysql://{args['user']}@{args['host']}:{args['port']}/{database}"


def shared_ddl(realdata: Path) -> str:
    return (realdata / "lmt/llnl_lmt/create_schema-1.1.sql").read_text()


# --- the tiny database: exact deltas ----------------------------------------------------------

UTC0 = dt.datetime(2018, 1, 1, 8)     # 00:00 PST
MIN = dt.timedelta(minutes=1)


def _by(rows, key: str, schema: str = "lmt_ost") -> dict:
    from lassi.core.schemas import schema_of

    names = schema_of(schema).fieldNames()
    return {tuple(r[names.index(k)] for k in key.split(",")): dict(zip(names, r, strict=True))
            for r in rows}


def check_tiny(res) -> None:
    """The hand-computed answers of `tiny_tables`, read over [08:00, 09:00) UTC."""
    ost = _by(res.ost_rows, "ost,ts_id")
    a = {k[1]: v for k, v in ost.items() if k[0] == "tinyfs-OST0000"}
    assert sorted(a) == [1, 2, 3, 4, 8, 9, 10, 11]            # the gap stays a gap
    assert a[1]["read_bytes_delta"] is None and a[1]["interval_s"] is None
    assert [a[k]["read_bytes_delta"] for k in (2, 3, 4, 8, 9, 10, 11)] == \
        [100, 150, 50, 600, 50, 30, 50]
    assert [a[k]["write_bytes_delta"] for k in (2, 3, 4, 8, 9, 10, 11)] == \
        [10, 10, 10, 60, 50, 20, 10]
    assert a[8]["interval_s"] == 240.0 and a[9]["interval_s"] == 60.0
    assert [k for k in a if a[k]["reset"]] == [9]
    assert a[1]["ts"] == UTC0 and a[11]["ts"] == UTC0 + 10 * MIN
    assert (a[1]["fs"], a[1]["oss"], a[1]["date"]) == ("tinyfs", "tiny-oss1", UTC0.date())
    assert a[1]["oss_cpu_pct"] == 10.5 and a[1]["oss_mem_pct"] == 50.25
    assert a[2]["oss_cpu_pct"] is None
    b = {k[1]: v for k, v in ost.items() if k[0] == "tinyfs-OST0001"}
    assert sorted(b) == [1, 2, 4]
    assert b[4]["read_bytes_delta"] == 4 and b[4]["interval_s"] == 120.0
    mds = _by(res.mds_rows, "op,ts_id", "lmt_mds")
    assert [mds[("open", k)]["samples_delta"] for k in (1, 2, 3, 4)] == [None, 10, 5, 10]
    assert [mds[("open", k)]["reset"] for k in (1, 2, 3, 4)] == [False, False, True, False]
    assert [mds[("close", k)]["samples_delta"] for k in (2, 3, 4)] == [1, 1, 1]
    assert mds[("open", 2)]["mds_cpu_pct"] == 3.5 and mds[("open", 1)]["mdt"] == "tinyfs-MDT0000"
    st = res.stats
    assert (st.lines_read, st.lines_used, st.lines_quarantined) == (23, 19, 4)
    assert st.conserved and st.rows == 19 and st.counter_resets == 2
    reasons = sorted(q.reason for q in res.quarantined)
    assert reasons == ["NULL READ_BYTES/WRITE_BYTES", "OPERATION_ID 99 has no OPERATION_INFO row",
                       "OST_ID 3 has no OST_INFO row", "TS_ID 5 has no TIMESTAMP_INFO row"]
    assert all(q.source == "lmt" and q.line_no == 0 for q in res.quarantined)
    assert any(q.raw.startswith("OST_DATA OST_ID=1 TS_ID=5 ") for q in res.quarantined)


def check_windows_agree(db: LmtDb) -> None:
    """Any split of the hour gives the rows of the whole hour (deltas seeded before)."""
    whole = db.read(UTC0, UTC0 + 60 * MIN)
    for cut in (2 * MIN, 4 * MIN + 30 * dt.timedelta(seconds=1), 8 * MIN, 9 * MIN):
        parts = [db.read(UTC0, UTC0 + cut), db.read(UTC0 + cut, UTC0 + 60 * MIN)]
        for attr in ("ost_rows", "mds_rows"):
            assert sorted(getattr(parts[0], attr) + getattr(parts[1], attr)) == \
                sorted(getattr(whole, attr)), (cut, attr)
        assert sum(p.stats.lines_read for p in parts) == whole.stats.lines_read
        assert sum(p.stats.counter_resets for p in parts) == whole.stats.counter_resets
        assert sorted(q.raw for p in parts for q in p.quarantined) == \
            sorted(q.raw for q in whole.quarantined)


def test_tiny_sqlite(tmp_path):
    path = write_sqlite(tmp_path / "tiny.sqlite3", tiny_tables())
    with LmtDb(str(path), PACIFIC) as db:
        res = db.read(UTC0, UTC0 + 60 * MIN)
        check_tiny(res)
        assert {q.file for q in res.quarantined} == {str(path)}
        check_windows_agree(db)
        late = db.read(UTC0 + 8 * MIN, UTC0 + 9 * MIN)        # seeded by TS 8 before it
        (row,) = [r for r in late.ost_rows if r[1] == "tinyfs-OST0000"]
        assert (row[4], row[7], row[9], row[10]) == (9, 50, 60.0, True)
        assert late.stats.counter_resets == 1
        assert db.read(UTC0 - 60 * MIN, UTC0).ost_rows == []   # nothing before
        every = db.read()                                      # the whole database
        assert sorted(every.ost_rows) == sorted(res.ost_rows)
        frame = db.read_ost(UTC0, UTC0 + 60 * MIN)
        assert len(frame) == 11 and str(frame["read_bytes_delta"].dtype) == "Int64"
        assert int(frame["read_bytes_delta"].sum()) == 1030 + 2 + 4
        assert len(db.read_mds(UTC0, UTC0 + 60 * MIN)) == 8


def test_lookback_bounds_the_previous_sample(tmp_path):
    """A previous sample older than the lookback seeds nothing, inside a window or before."""
    path = write_sqlite(tmp_path / "tiny.sqlite3", tiny_tables())
    with LmtDb(str(path), PACIFIC, lookback=dt.timedelta(minutes=3)) as db:
        whole = _by(db.read(UTC0, UTC0 + 60 * MIN).ost_rows, "ost,ts_id")
        assert whole[("tinyfs-OST0000", 8)]["read_bytes_delta"] is None   # 4 min after TS 4
        assert whole[("tinyfs-OST0000", 9)]["read_bytes_delta"] == 50
        after = _by(db.read(UTC0 + 7 * MIN, UTC0 + 60 * MIN).ost_rows, "ost,ts_id")
        assert after[("tinyfs-OST0000", 8)]["read_bytes_delta"] is None


def test_seed_far_before_the_window(tmp_path):
    """A previous sample 20 minutes (or 20 hours) before the window still seeds its first
    delta; one more than the lookback (a day) before does not."""
    tables = tiny_tables()
    gaps = [0, 20, 20 * 60, 20 * 60 + 25 * 60 * 24]          # minutes after 00:00 local
    tables["TIMESTAMP_INFO"] = [
        (k + 1, (dt.datetime(2018, 1, 1) + dt.timedelta(minutes=m)).strftime("%Y-%m-%d %H:%M:%S"))
        for k, m in enumerate(gaps)]
    tables["OST_DATA"] = [(1, k + 1, 10 * (k + 1), 0, None, None, None, None, None)
                          for k in range(len(gaps))]
    tables["MDS_OPS_DATA"] = []
    path = write_sqlite(tmp_path / "far.sqlite3", tables)
    with LmtDb(str(path), PACIFIC) as db:
        for k, m in enumerate(gaps[1:], start=2):
            t = UTC0 + dt.timedelta(minutes=m)
            (row,) = db.read(t, t + MIN).ost_rows
            want = (None, None) if k == 4 else (10, (m - gaps[k - 2]) * 60.0)
            assert (row[4], row[7], row[9]) == (k, *want)


def test_repeated_local_hour_when_dst_ends(tmp_path):
    """2017-11-05 01:00-02:00 happens twice in US/Pacific: TS_ID order tells which is which."""
    tables = tiny_tables()
    local = ["00:40", "01:00", "01:20", "01:40", "01:00", "01:20", "01:40", "02:00"]
    tables["TIMESTAMP_INFO"] = [(k + 1, f"2017-11-05 {hm}:00") for k, hm in enumerate(local)]
    tables["OST_DATA"] = [(1, k + 1, 100 * k, 0, None, None, None, None, None)
                          for k in range(len(local))]
    tables["MDS_OPS_DATA"] = []
    path = write_sqlite(tmp_path / "dst.sqlite3", tables)
    t0 = dt.datetime(2017, 11, 5, 7, 40)                         # 00:40 PDT
    with LmtDb(str(path), PACIFIC) as db:
        rows = sorted(db.read(t0, t0 + 4 * 60 * MIN).ost_rows, key=lambda r: r[4])
        assert [r[3] for r in rows] == [t0 + k * 20 * MIN for k in range(8)]
        assert [r[9] for r in rows[1:]] == [1200.0] * 7 and all(r[7] == 100 for r in rows[1:])
        pst = db.read(dt.datetime(2017, 11, 5, 9), dt.datetime(2017, 11, 5, 10)).ost_rows
        assert sorted(r[4] for r in pst) == [5, 6, 7]            # the second 01:00-01:40


def test_tiny_mariadb(mariadb, tmp_path, monkeypatch):
    monkeypatch.delenv("LASSI_LMT_PASSWORD", raising=False)
    uri = load_mysql(mariadb, "lassi_lmt_tiny", tiny_tables())
    with LmtDb(uri, PACIFIC) as db:
        assert db.kind == "mysql"
        res = db.read(UTC0, UTC0 + 60 * MIN)
        check_tiny(res)
        assert {q.file for q in res.quarantined} == {uri}
        check_windows_agree(db)
    with LmtDb(str(write_sqlite(tmp_path / "t.sqlite3", tiny_tables())), PACIFIC) as lite:
        assert sorted(lite.read(UTC0, UTC0 + 60 * MIN).ost_rows) == sorted(res.ost_rows)


# --- pytokio's databases: upstream answers ---------------------------------------------------

SNX_START = dt.datetime(2018, 1, 28, 8)   # 1517126400


def check_snx(res) -> None:
    import pandas as pd

    ost, mds = res.ost_frame(), res.mds_frame()
    assert len(ost) == 1464 and ost["ost"].nunique() == 24 and res.filesystems == ["snx11025"]
    assert ost["ts"].min() == pd.Timestamp(SNX_START)
    assert ost["ts"].max() == pd.Timestamp(SNX_START + dt.timedelta(minutes=5))
    assert int(ost["ts"].min().timestamp()) == 1517126400
    steps = ost.sort_values("ts")["ts"].drop_duplicates().diff().dropna().dt.total_seconds()
    assert set(steps) == {5.0}
    assert set(ost["interval_s"].dropna()) == {5.0}
    assert int(ost["read_bytes_delta"].sum()) == 6_347_173_888
    assert int(ost["write_bytes_delta"].sum()) == 119_037_925_429
    per_ost = ost.groupby("ost")["write_bytes_delta"].sum()
    assert per_ost.idxmax() == "snx11025-OST000f" and int(per_ost.max()) == 12_990_907_394
    ops = mds.groupby("op")["samples_delta"].sum()
    assert (int(ops["getattr"]), int(ops["open"]), int(ops["close"])) == \
        (2_968_372, 1_529_078, 1_512_366)
    assert len(mds) == 1281 and set(mds["mdt"]) == {"snx11025-MDT0000"}
    assert set(mds["mds"]) == {"snx11025n003"}
    assert res.stats.counter_resets == 0 and res.stats.lines_quarantined == 0
    assert res.stats.lines_read == 1464 + 1281 and res.stats.conserved


def check_reset(res) -> None:
    ost = res.ost_frame().sort_values("ts_id").reset_index(drop=True)
    assert len(ost) == 26 and set(ost["ost"]) == {"snx11168-OST00ad"}
    ids = list(ost["ts_id"])
    assert ids == [*range(16486100, 16486107), *range(16486146, 16486165)]   # no invented rows
    after = ost[ost["ts_id"] == 16486146].iloc[0]
    assert after["interval_s"] == 200.0 and bool(after["reset"])
    assert after["read_bytes_delta"] == 0 and after["write_bytes_delta"] == 0
    assert after["ts"] == dt.datetime(2018, 4, 18, 14, 39, 5)              # 07:39:05 PDT
    assert (ost["read_bytes_delta"].dropna() >= 0).all()
    assert (ost["write_bytes_delta"].dropna() >= 0).all()
    assert int(ost["reset"].sum()) == 1 and res.stats.counter_resets == 1
    assert set(ost["interval_s"].dropna()) == {5.0, 200.0}
    assert ost["oss_cpu_pct"].notna().sum() == 7                            # OSS_DATA: 7 samples
    mds = res.mds_frame()                      # MDS_OPS_DATA has MDT0000 only: 21 ops x 65
    assert set(mds["mdt"]) == {"snx11168-MDT0000"} and len(mds) == 21 * 65


def test_snx11025_sqlite(realdata):
    with LmtDb(str(realdata / SNX), PACIFIC) as db:
        check_snx(db.read(SNX_START, SNX_START + dt.timedelta(hours=1)))
        assert db.span() == (SNX_START, SNX_START + dt.timedelta(minutes=5))


def test_lmtdb_reset_sqlite(realdata):
    with LmtDb(str(realdata / RESET), PACIFIC) as db:
        day = dt.datetime(2018, 4, 18)
        check_reset(db.read(day, day + dt.timedelta(days=1)))
        late = db.read(dt.datetime(2018, 4, 18, 14, 37), day + dt.timedelta(days=1))
        first = min(late.ost_rows, key=lambda r: r[4])       # seeded from before the window
        assert (first[4], first[9], first[10]) == (16486146, 200.0, True)


@pytest.fixture(scope="module")
def snx_mysql(mariadb, realdata):
    return load_mysql(mariadb, "lassi_lmt_snx", sqlite_tables(realdata / SNX),
                      shared_ddl(realdata))


def test_snx11025_mariadb_equals_sqlite(snx_mysql, realdata, monkeypatch):
    monkeypatch.delenv("LASSI_LMT_PASSWORD", raising=False)
    window = (SNX_START, SNX_START + dt.timedelta(hours=1))
    with LmtDb(snx_mysql, PACIFIC) as db:
        live = db.read(*window)
    check_snx(live)
    with LmtDb(str(realdata / SNX), PACIFIC) as db:
        lite = db.read(*window)
    # counters, deltas, times are identical; MariaDB's `float` columns are single precision
    strip = lambda rows: sorted(r[:11] + r[14:] for r in rows)  # noqa: E731
    assert strip(live.ost_rows) == strip(lite.ost_rows)
    assert sorted(r[:10] for r in live.mds_rows) == sorted(r[:10] for r in lite.mds_rows)
    for a, b in zip(sorted(live.ost_rows), sorted(lite.ost_rows), strict=True):
        assert a[12] == pytest.approx(b[12], rel=1e-6)


def test_lmtdb_reset_mariadb(mariadb, realdata, monkeypatch):
    monkeypatch.delenv("LASSI_LMT_PASSWORD", raising=False)
    uri = load_mysql(mariadb, "lassi_lmt_reset", sqlite_tables(realdata / RESET),
                     shared_ddl(realdata))
    with LmtDb(uri, PACIFIC) as db:
        check_reset(db.read(dt.datetime(2018, 4, 18), dt.datetime(2018, 4, 19)))


# --- errors -----------------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused_is_one_clear_line():
    port = _closed_port()
    t0 = time.monotonic()
    with pytest.raises(LmtError) as err:
        LmtDb(f"mysql://lmt:secret@127.0.0.1:{port}/filesystem_x", PACIFIC)
    took = time.monotonic() - t0
    msg = str(err.value)
    assert took < 5, took
    assert f"127.0.0.1:{port}" in msg and "after 3 attempts" in msg and "refused" in msg
    assert "\n" not in msg and "secret" not in msg


def test_bad_credentials_and_not_lmt(mariadb, tmp_path):
    args = mariadb
    with pytest.raises(LmtError, match=r"at 127\.0\.0\.1:\d+: .*[Aa]ccess denied"):
        LmtDb(f"mysql://nobody:wrong@{args['host']}:{args['port']}/lassi_test", PACIFIC)
    with pytest.raises(LmtError, match="not an LMT 1.1 database"):
        LmtDb(f"mysql://{args['user']}@{args['host']}:{args['port']}/lassi_test", PACIFIC)
    other = tmp_path / "x.sqlite3"
    sqlite3.connect(other).execute("CREATE TABLE T (A)").connection.close()
    with pytest.raises(LmtError, match="no TIMESTAMP_INFO"):
        LmtDb(str(other), PACIFIC)
    (tmp_path / "junk.sqlite3").write_text("not a database\n" * 100)
    with pytest.raises(LmtError, match="cannot read"):
        LmtDb(str(tmp_path / "junk.sqlite3"), PACIFIC)
    with pytest.raises(LmtError, match="no such LMT database file"):
        LmtDb(str(tmp_path / "absent.sqlite3"), PACIFIC)


def test_uri_parsing(monkeypatch):
    monkeypatch.setenv("LASSI_LMT_PASSWORD", "fromenv")
    assert parse_mysql_uri("mysql://lmt:p%40ss@db.example:3307/filesystem_scratch") == {
        "host": "db.example", "port": 3307, "user": "lmt", "password": "p@ss",
        "database": "filesystem_scratch"}
    assert parse_mysql_uri("mysql://lmt@db.example/fs")["password"] == "fromenv"
    assert parse_mysql_uri("mysql://lmt@db.example/fs")["port"] == 3306
    assert redact("mysql://lmt:secret@db:3307/fs") == "mysql://lmt@db:3307/fs"
    with pytest.raises(LmtError, match="database"):
        parse_mysql_uri("mysql://lmt@db.example")
    assert re.fullmatch(r"/x/y\.sqlite3", redact("/x/y.sqlite3"))


# --- `lassi ingest --source lmt` ---------------------------------------------------------------


def test_ingest_source_lmt(spark, warehouse, tmp_path):
    """The runner's contract: the UTC day into lmt_ost/lmt_mds, quarantine and ingest_log."""
    from lassi.ingest.runner import ingest_source

    from lassi.core.config import load_site

    (tmp_path / "dbs").mkdir()
    write_sqlite(tmp_path / "dbs" / "tiny.sqlite3", tiny_tables())
    site = load_site("archer")
    day = UTC0.date()
    st = ingest_source(spark, warehouse, site, "lmt", [str(tmp_path / "dbs")], day, tz=PACIFIC)
    assert (st.files, st.lines_read, st.lines_quarantined, st.counter_resets) == (1, 23, 4, 2)
    assert warehouse.read("lmt_ost", [day]).count() == 11
    assert warehouse.read("lmt_mds", [day]).count() == 8
    q = warehouse.read("quarantine", [day]).filter("source = 'lmt'").collect()
    assert len(q) == 4 and {r.line_no for r in q} == {0}
    log = warehouse.read("ingest_log", [day]).filter("source = 'lmt'").collect()
    assert len(log) == 1 and log[0].lines_read == 23
    st2 = ingest_source(spark, warehouse, site, "lmt", [str(tmp_path / "dbs")], day, tz=PACIFIC)
    assert st2.lines_read == 23 and warehouse.read("lmt_ost", [day]).count() == 11   # idempotent
    assert warehouse.read("quarantine", [day]).filter("source = 'lmt'").count() == 4


# --- the ingest contract: connectors read, one writer writes ----------------------------------


def test_writer_takes_row_tuples_or_pandas(spark, tmp_path):
    """A window's rows written as tuples and as the connector's pandas frames give one table."""
    from lassi.ingest.lmt_rows import window_tables
    from lassi.ingest.writer import write_tables

    from lassi.core.warehouse import Warehouse

    path = write_sqlite(tmp_path / "tiny.sqlite3", tiny_tables())
    window = (UTC0, UTC0 + 60 * MIN)
    with LmtDb(str(path), PACIFIC) as db:
        res = db.read(*window)
    as_tuples, as_pandas = (Warehouse(spark, str(tmp_path / n)) for n in ("tuples", "pandas"))
    assert write_tables(as_tuples, window_tables(res, *window)) == [UTC0.date()]
    tables = window_tables(res, *window)
    for t in tables:
        t.rows = res.ost_frame() if t.table == "lmt_ost" else res.mds_frame()
    write_tables(as_pandas, tables)
    for table, rows in (("lmt_ost", res.ost_rows), ("lmt_mds", res.mds_rows)):
        got = [sorted(tuple(r) for r in wh.read(table).collect()) for wh in (as_tuples, as_pandas)]
        assert got[0] == got[1] == sorted(rows)


def test_only_the_writer_writes():
    """No ingest module but `lassi.ingest.writer` writes to the warehouse, none imports the
    runner or another module's private names (parsed, nothing imported)."""
    import ast

    root = Path(__file__).resolve().parents[1] / "ingest"
    bad = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lassi"):
                bad += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") or node.module == "lassi.ingest.runner"]
            elif (path.name != "writer.py" and isinstance(node, ast.Attribute)
                  and node.attr in ("write", "replace_rows", "write_rows")
                  and isinstance(node.value, ast.Name) and node.value.id in ("wh", "warehouse")):
                bad.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert bad == []
