"""The LMT connector under database faults, against real MariaDB servers (issue #16).

A server of this module's own is killed, stopped and restarted mid-read; a connection is
killed by the server; a query is held past its timeout by a real table lock; an LMT upgrade
adds and drops columns. Each read either equals the clean read of the tiny database (whose
answers `tests.test_lmt.check_tiny` works out by hand) or fails with one line after its
bounded attempts, and `archive-lmt` rerun after a failure gives the table of one clean run.
"""

from __future__ import annotations

import threading
import time

import pytest
from lassi.ingest.lmt import LmtDb, LmtError, LmtUnavailable

from lassi.cli.args import EXIT_TEMPFAIL
from lassi.cli.main import main
from tests.conftest import MariaDbServer
from tests.test_lmt import MIN, PACIFIC, UTC0, check_tiny, load_mysql, tiny_tables

WINDOW = (UTC0, UTC0 + 60 * MIN)
DB = "lmt_faults"


def _admin(args: dict, database: str | None = None):
    """A root connection of the test itself (autocommit)."""
    import pymysql

    conn = pymysql.connect(**{k: v for k, v in args.items() if k != "database"},
                           autocommit=True, connect_timeout=5)
    if database:
        conn.select_db(database)
    return conn


def _rows(res) -> tuple[list, list, int, int]:
    return (sorted(res.ost_rows), sorted(res.mds_rows), res.stats.lines_read,
            res.stats.lines_quarantined)


def _wait_for(cond, what: str, timeout: float = 30.0) -> None:
    """Poll `cond()` until true; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)   # polling a condition, bounded by the deadline


def _blocked_on_ost_data(admin) -> bool:
    """True when a connection other than `admin` waits for the lock on OST_DATA."""
    with admin.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> "
                    "CONNECTION_ID() AND INFO LIKE %s AND STATE LIKE %s",
                    ("%FROM OST_DATA%", "%lock%"))
        return cur.fetchone()[0] > 0


class Reader(threading.Thread):
    """`db.read(*WINDOW)` in a thread: the test meanwhile breaks the server under it."""

    def __init__(self, db: LmtDb) -> None:
        super().__init__(daemon=True)
        self.db, self.result, self.error = db, None, None

    def run(self) -> None:
        try:
            self.result = self.db.read(*WINDOW)
        except Exception as exc:  # noqa: BLE001 - handed to the test thread
            self.error = exc


@pytest.fixture(scope="module")
def own_server():
    """A MariaDB server of this module only, holding the tiny LMT database."""
    server = MariaDbServer()
    server.start()
    load_mysql(server.args, DB, tiny_tables())
    yield server
    server.remove()


@pytest.fixture
def server(own_server):
    """The module's server, running at the start of each test (a test may stop it)."""
    if own_server.proc is None or own_server.proc.poll() is not None:
        own_server.start()
    return own_server


@pytest.fixture(scope="module")
def uri(own_server) -> str:
    a = own_server.args
    return f"mysql://{a['user']}@{a['host']}:{a['port']}/{DB}"


@pytest.fixture(scope="module")
def clean(own_server, uri):
    """The read of the tiny database with nothing broken (checked against the hand answers)."""
    with LmtDb(uri, PACIFIC) as db:
        res = db.read(*WINDOW)
    check_tiny(res)
    return _rows(res)


def test_killed_connection_is_reopened(server, uri, clean):
    with LmtDb(uri, PACIFIC, retries=3, backoff_s=0.05) as db:
        admin = _admin(server.args)
        try:
            with admin.cursor() as cur:
                cur.execute("KILL %s", (db.conn.thread_id(),))
        finally:
            admin.close()
        res = db.read(*WINDOW)
        assert db.retried == 1
    assert _rows(res) == clean


def test_query_over_its_timeout_is_retried(server, uri, clean):
    admin = _admin(server.args, DB)
    try:
        with LmtDb(uri, PACIFIC, retries=3, backoff_s=0.05, query_timeout_s=1) as db:
            with admin.cursor() as cur:
                cur.execute("LOCK TABLES OST_DATA WRITE")     # OST_DATA's reads now wait
            reader = Reader(db)
            reader.start()
            _wait_for(lambda: db.retried >= 1, "the first attempt to time out")
            with admin.cursor() as cur:
                cur.execute("UNLOCK TABLES")
            reader.join(timeout=60)
            assert reader.error is None, reader.error
            assert 1 <= db.retried <= 2
        assert _rows(reader.result) == clean
    finally:
        admin.close()


def test_query_slow_every_time_fails_in_one_line(server, uri):
    admin = _admin(server.args, DB)
    try:
        with admin.cursor() as cur:
            cur.execute("LOCK TABLES OST_DATA WRITE")
        with LmtDb(uri, PACIFIC, retries=3, backoff_s=0.05, query_timeout_s=1) as db:
            with pytest.raises(LmtUnavailable) as err:
                db.read(*WINDOW)
            assert db.retried == 2                    # 3 attempts, then the error
    finally:
        with admin.cursor() as cur:
            cur.execute("UNLOCK TABLES")
        admin.close()
    msg = str(err.value)
    assert "\n" not in msg and "a query failed after 3 attempts" in msg
    assert "timed out" in msg and f"127.0.0.1:{server.port}" in msg


def test_server_crash_mid_query_then_restart(server, uri, clean):
    """SIGKILL of the server while a query waits; the read goes on once it is back."""
    with LmtDb(uri, PACIFIC, retries=8, backoff_s=0.25) as db:   # waits up to 32 s
        admin = _admin(server.args, DB)
        with admin.cursor() as cur:
            cur.execute("LOCK TABLES OST_DATA WRITE")
        reader = Reader(db)
        reader.start()
        _wait_for(lambda: _blocked_on_ost_data(admin), "the read to wait on OST_DATA")
        server.stop(kill=True)
        admin.close()
        server.start()
        reader.join(timeout=90)
        assert not reader.is_alive()
        assert reader.error is None, reader.error
        assert db.retried >= 1
    assert _rows(reader.result) == clean


def test_server_down_one_line_and_exit_75(server, uri, tmp_path, capsys):
    with LmtDb(uri, PACIFIC, retries=2, backoff_s=0.05) as db:
        server.stop()                                  # a clean shutdown, mid-session
        with pytest.raises(LmtUnavailable) as err:
            db.read(*WINDOW)
    msg = str(err.value)
    assert "\n" not in msg and "a query failed after 2 attempts" in msg
    wh = tmp_path / "wh"
    rc = main(["archive-lmt", "--input", uri, "--from", "2018-01-01T08:00", "--to",
               "2018-01-01T09:00", "--tz", PACIFIC, "--retries", "2", "--warehouse", str(wh)])
    err_lines = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_TEMPFAIL == 75
    assert len(err_lines) == 1 and "Traceback" not in err_lines[0]
    assert err_lines[0].startswith("lassi: error: cannot connect to LMT database at "
                                   f"127.0.0.1:{server.port} after 2 attempts")
    assert "rerun the same window" in err_lines[0]
    assert not (wh / "lmt_ost").exists()


def test_ingest_with_the_server_down_exits_75(spark, server, uri, tmp_path, capsys,
                                              monkeypatch):
    """`lassi ingest --source lmt` against a stopped server: one line, exit 75 (retry later),
    not exit 1 (a wrong request), and no table written."""
    import lassi.ingest.lmt as lmt

    monkeypatch.setattr(lmt, "BACKOFF_S", 0.05)
    server.stop()
    wh = tmp_path / "wh"
    rc = main(["ingest", "--source", "lmt", "--input", uri, "--date", "2018-01-01",
               "--tz", PACIFIC, "--warehouse", str(wh)])
    err_lines = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_TEMPFAIL
    assert len(err_lines) == 1 and "Traceback" not in err_lines[0]
    assert err_lines[0].startswith("lassi: error: cannot connect to LMT database at "
                                   f"127.0.0.1:{server.port} after {lmt.RETRIES} attempts")
    assert err_lines[0].endswith("; rerun the same ingest")
    assert not (wh / "lmt_ost").exists()


def test_archive_resumes_after_the_server_died(spark, server, uri, tmp_path):
    """Hour by hour with the server gone for one window: the failed window writes nothing,
    its rerun completes the table of one clean run (no sample lost, none doubled)."""
    from lassi.core.warehouse import Warehouse
    from lassi.tools.lmt_archive import archive

    def both(wh) -> tuple[list, list]:
        return tuple(sorted(tuple(r) for r in wh.read(t).collect())
                     for t in ("lmt_ost", "lmt_mds"))

    whole, parts = (Warehouse(spark, str(tmp_path / n)) for n in ("whole", "parts"))
    cut = UTC0 + 5 * MIN
    with LmtDb(uri, PACIFIC, retries=2, backoff_s=0.05) as db:
        archive(spark, whole, db, *WINDOW)
        archive(spark, parts, db, UTC0, cut)
        before = both(parts)
        server.stop(kill=True)
        with pytest.raises(LmtUnavailable):
            archive(spark, parts, db, cut, WINDOW[1])
        assert both(parts) == before                   # nothing half-written
        server.start()
        archive(spark, parts, db, cut, WINDOW[1])      # the same LmtDb reconnects
        archive(spark, parts, db, cut, WINDOW[1])      # and a rerun changes nothing
    ost, mds = both(whole)
    assert len(ost) == 11 and len(mds) == 8 and len(before[0]) < len(ost)
    assert both(parts) == (ost, mds)
    q = parts.read("quarantine", [UTC0.date()]).filter("source = 'lmt'").collect()
    assert len(q) == 4                                 # quarantined once, not per attempt


# --- tables altered by an LMT upgrade --------------------------------------------------------

def _altered(mariadb, name: str, *alter: str) -> str:
    """The tiny database with ALTER/DROP statements applied; its mysql:// URI."""
    uri = load_mysql(mariadb, name, tiny_tables())
    admin = _admin(mariadb, name)
    try:
        with admin.cursor() as cur:
            for stmt in alter:
                cur.execute(stmt)
    finally:
        admin.close()
    return uri


def test_extra_and_missing_optional_columns(mariadb, monkeypatch):
    from lassi.core.schemas import schema_of

    monkeypatch.delenv("LASSI_LMT_PASSWORD", raising=False)
    with LmtDb(load_mysql(mariadb, "lmt_plain", tiny_tables()), PACIFIC) as db:
        plain = db.read(*WINDOW)
    uri = _altered(mariadb, "lmt_upgraded",
                   "ALTER TABLE OST_DATA ADD COLUMN READ_OPS bigint DEFAULT 7 AFTER TS_ID",
                   "ALTER TABLE MDS_OPS_DATA ADD COLUMN LATENCY_US bigint DEFAULT 3 FIRST",
                   "ALTER TABLE OST_DATA DROP COLUMN KBYTES_FREE, DROP COLUMN PCT_CPU",
                   "ALTER TABLE OST_INFO DROP COLUMN HOSTNAME",
                   "DROP TABLE OSS_DATA")
    with LmtDb(uri, PACIFIC) as db:
        res = db.read(*WINDOW)
        warnings = db.warnings
    names = schema_of("lmt_ost").fieldNames()
    gone = {names.index(c) for c in ("ost_cpu_pct", "kbytes_free", "oss_cpu_pct",
                                     "oss_mem_pct")}
    for r in res.ost_rows:
        assert all(r[i] is None for i in gone)
    keep = lambda rows: sorted(tuple(v for i, v in enumerate(r) if i not in gone)  # noqa: E731
                               for r in rows)
    assert keep(res.ost_rows) == keep(plain.ost_rows)   # counters, deltas, resets: the same
    assert sorted(res.mds_rows) == sorted(plain.mds_rows)
    assert (res.stats.lines_read, res.stats.lines_quarantined) == (23, 4)
    assert sorted(w.split(": ", 1)[1] for w in warnings) == [
        "OST_DATA has no column PCT_CPU, KBYTES_FREE; read as NULL",
        "OST_INFO has no column HOSTNAME; read as NULL",
        "no OSS_DATA table; its columns are NULL"]


def test_missing_counter_column_is_one_line(mariadb, capsys, tmp_path):
    uri = _altered(mariadb, "lmt_no_writes", "ALTER TABLE OST_DATA DROP COLUMN WRITE_BYTES")
    with pytest.raises(LmtError) as err:
        LmtDb(uri, PACIFIC)
    assert "OST_DATA has no column WRITE_BYTES" in str(err.value)
    assert not isinstance(err.value, LmtUnavailable)
    rc = main(["archive-lmt", "--input", uri, "--from", "2018-01-01", "--to", "2018-01-02",
               "--tz", PACIFIC, "--warehouse", str(tmp_path / "wh")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(lines) == 1
    assert lines[0].startswith("lassi: error: ") and "OST_DATA has no column WRITE_BYTES" \
        in lines[0] and "(an LMT upgrade?)" in lines[0]


def test_sqlite_copy_without_optional_columns(tmp_path):
    """The same column check on an SQLite copy: a missing counter refuses, a missing
    optional table is NULL."""
    import sqlite3

    from tests.test_lmt import write_sqlite

    path = write_sqlite(tmp_path / "t.sqlite3", tiny_tables())
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE MDS_DATA")
    conn.commit()
    conn.close()
    with LmtDb(str(path), PACIFIC) as db:
        res = db.read(*WINDOW)
        assert [w.split(": ", 1)[1] for w in db.warnings] == \
            ["no MDS_DATA table; its columns are NULL"]
    from lassi.core.schemas import schema_of

    cpu = schema_of("lmt_mds").fieldNames().index("mds_cpu_pct")
    assert len(res.mds_rows) == 8 and {r[cpu] for r in res.mds_rows} == {None}   # 3.5 before
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE MDS_OPS_DATA DROP COLUMN SAMPLES")
    conn.commit()
    conn.close()
    with pytest.raises(LmtError, match="MDS_OPS_DATA has no column SAMPLES"):
        LmtDb(str(path), PACIFIC)
