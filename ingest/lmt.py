"""LMT (Lustre Monitoring Tool) database connector, schema 1.1 (TOKIO's `lmtdb`).

Opens a live LMT database (`mysql://user[:pass]@host[:port]/db`, through pymysql; the
password may also come from `$LASSI_LMT_PASSWORD`) or an SQLite copy with the same table
names (`.sqlite3`, as pytokio ships). `LmtDb.fetch(start, end)` reads the samples of the UTC
window [start, end) with OST_INFO, OSS_INFO, MDS_INFO, FILESYSTEM_INFO and OPERATION_INFO,
and per series the last usable sample before the window (within the lookback, default one
day) that seeds its first delta; TIMESTAMP_INFO holds LMT's *local* time, converted with
`tz` (an IANA name). This module only reads: the rows, deltas, resets, gaps and the
quarantine of unusable rows are `lassi.ingest.lmt_rows` (`LmtDb.read` = fetch + rows), the
warehouse writes `lassi.ingest.writer`.

Faults of a live database: connecting and every query are retried a bounded number of
times (`retries`, backoff doubling from `backoff_s`) over a fresh connection, so a server
restarted, a connection killed or dropped, or a query over `query_timeout_s` (pymysql's read
timeout) costs a retry and changes no row (the reads are windowed and idempotent). When the
attempts are spent, `LmtUnavailable` says so in one line. Tables altered by an LMT upgrade:
extra columns are ignored; a missing optional column (CPU, space, inodes, host names, the
OSS_DATA/MDS_DATA tables) is read as NULL and named in `warnings`; a missing key or counter
column is an `LmtError` naming it.

`read_inputs` is the connector of `lassi ingest --source lmt`: per database its UTC day
`date` (else all it holds), in the ingest contract (`lassi.ingest.contract`).
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit
from zoneinfo import ZoneInfo

from lassi.ingest.contract import IngestError, IngestResult, SourceUnavailable
from lassi.ingest.lmt_rows import (
    LOOKBACK,
    MDS_COLS,
    OST_COLS,
    SOURCE,
    LmtRead,
    LmtSamples,
    build_rows,
    whole,
    window_result,
)

from lassi.core.quarantine import ParseStats

SQLITE_SUFFIXES = (".sqlite3", ".sqlite", ".db")
_DST_MARGIN = dt.timedelta(hours=3)     # widen local-time queries over DST shifts
_NEAR = dt.timedelta(minutes=15)        # where the sample before a window usually is
# per table, the columns without which no sample can be read, and those read as NULL when
# an LMT version lacks them (a table absent altogether: every column NULL, i.e. no rows)
_REQUIRED = {
    "TIMESTAMP_INFO": ("TS_ID", "TIMESTAMP"),
    "OST_DATA": ("OST_ID", "TS_ID", "READ_BYTES", "WRITE_BYTES"),
    "OST_INFO": ("OST_ID", "OSS_ID", "OST_NAME"),
    "OSS_INFO": ("OSS_ID", "FILESYSTEM_ID"),
    "FILESYSTEM_INFO": ("FILESYSTEM_ID", "FILESYSTEM_NAME"),
    "MDS_INFO": ("MDS_ID", "FILESYSTEM_ID", "MDS_NAME"),
    "MDS_OPS_DATA": ("MDS_ID", "TS_ID", "OPERATION_ID", "SAMPLES"),
    "OPERATION_INFO": ("OPERATION_ID", "OPERATION_NAME"),
}
_OPTIONAL = {
    "OST_DATA": ("PCT_CPU", "KBYTES_FREE", "KBYTES_USED", "INODES_FREE", "INODES_USED"),
    "OST_INFO": ("HOSTNAME",),
    "OSS_INFO": ("HOSTNAME",),
    "MDS_INFO": ("HOSTNAME",),
    "OSS_DATA": ("OSS_ID", "TS_ID", "PCT_CPU", "PCT_MEMORY"),
    "MDS_DATA": ("MDS_ID", "TS_ID", "PCT_CPU"),
}
_NO_RETRY = {1044, 1045, 1049}          # access denied, unknown database: retrying won't help
RETRIES, BACKOFF_S, QUERY_TIMEOUT_S = 5, 0.5, 600.0   # the commands' defaults (~7.5 s of waits)


class LmtError(Exception):
    """The database cannot be opened or is not an LMT database; said in one line."""


class LmtUnavailable(LmtError):
    """The server did not answer within the bounded retries (down, restarting, too slow):
    a run that fails with this can simply be retried later."""


def redact(uri: str) -> str:
    """The input as it may be shown and stored: a mysql:// URI without its password."""
    if not uri.startswith("mysql://"):
        return uri
    u = urlsplit(uri)
    user = f"{unquote(u.username)}@" if u.username else ""
    port = f":{u.port}" if u.port else ""
    return f"mysql://{user}{u.hostname or ''}{port}{u.path}"


def parse_mysql_uri(uri: str) -> dict:
    """pymysql.connect arguments of `mysql://user[:pass]@host[:port]/db`."""
    u = urlsplit(uri)
    try:
        port = u.port or 3306
    except ValueError:
        raise LmtError(f"bad port in {redact(uri)!r}") from None
    db = u.path.lstrip("/")
    if not u.hostname or not db:
        raise LmtError(f"expected mysql://user[:pass]@host[:port]/database, got {redact(uri)!r}")
    password = unquote(u.password) if u.password is not None else os.environ.get(
        "LASSI_LMT_PASSWORD", "")
    return {"host": u.hostname, "port": port, "user": unquote(u.username or ""),
            "password": password, "database": db}


def to_utc(local: dt.datetime | str, zone: ZoneInfo, fold: int = 0) -> dt.datetime:
    """A TIMESTAMP_INFO value (local wall time, datetime or text) as naive UTC; `fold` 1
    picks the second of two equal wall times (the hour repeated when DST ends)."""
    if isinstance(local, str):
        local = dt.datetime.fromisoformat(local)
    aware = local.replace(tzinfo=zone, fold=fold)
    return aware.astimezone(dt.timezone.utc).replace(tzinfo=None)


def _local_text(utc: dt.datetime, zone: ZoneInfo) -> str:
    """Naive UTC -> local wall time text, comparable with TIMESTAMP in SQLite and MySQL."""
    loc = utc.replace(tzinfo=dt.timezone.utc).astimezone(zone)
    return loc.strftime("%Y-%m-%d %H:%M:%S")


class LmtDb:
    """One LMT database, live (mysql://) or an SQLite copy; use as a context manager."""

    def __init__(self, source: str, tz: str = "UTC", retries: int = 3, backoff_s: float = 0.2,
                 connect_timeout_s: float = 2.0, lookback: dt.timedelta = LOOKBACK,
                 query_timeout_s: float = QUERY_TIMEOUT_S) -> None:
        self.source, self.name = source, redact(source)
        self.zone = ZoneInfo(tz)
        self.lookback = lookback
        self.retries, self.backoff_s = max(1, retries), backoff_s
        self.warnings: list[str] = []
        self.retried = 0                                   # queries that needed a retry
        if source.startswith("mysql://"):
            self.kind = "mysql"
            self._args = {**parse_mysql_uri(source), "connect_timeout": connect_timeout_s,
                          "read_timeout": query_timeout_s}
            self.conn = None
            self._with_retries(lambda: None, "connect")
        else:
            self.kind = "sqlite"
            self.conn = self._connect_sqlite(Path(source))
        self._check_tables()

    # connection ----------------------------------------------------------------------------
    @property
    def _where(self) -> str:
        return f"{self._args['host']}:{self._args['port']}"

    def _with_retries(self, work, what: str):
        """`work()` over an open MySQL connection (opened first when there is none), tried
        `retries` times: a connection that fails is dropped and a new one opened after a
        backoff. Errors of the query itself (unknown column, syntax) are not retried."""
        import pymysql

        for attempt in range(1, self.retries + 1):
            try:
                if getattr(self, "conn", None) is None:
                    self.conn = pymysql.connect(**self._args)
                return work()
            except (pymysql.err.OperationalError, pymysql.err.InterfaceError) as exc:
                code = exc.args[0] if exc.args else None
                cause = _cause(exc)
                self.close()
                if code in _NO_RETRY:
                    raise LmtError(f"cannot connect to LMT database at {self._where}: "
                                   f"{cause}") from None
                if attempt == self.retries:
                    tries = f" after {attempt} attempts" if attempt > 1 else ""
                    if what == "connect":
                        raise LmtUnavailable(f"cannot connect to LMT database at "
                                             f"{self._where}{tries}: {cause}") from None
                    raise LmtUnavailable(f"LMT database at {self._where}: a query failed"
                                         f"{tries}: {cause}") from None
                if what != "connect":
                    self.retried += 1
                time.sleep(self.backoff_s * 2 ** (attempt - 1))   # bounded: `retries` tries
            except pymysql.err.MySQLError as exc:
                raise LmtError(f"{self.name}: {what} failed: {_cause(exc)}") from None
        raise AssertionError("unreachable")   # the loop returns or raises

    @staticmethod
    def _connect_sqlite(path: Path) -> sqlite3.Connection:
        if not path.is_file():
            raise LmtError(f"no such LMT database file: {path}")
        try:
            return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise LmtError(f"cannot open {path}: {exc}") from None

    def _check_tables(self) -> None:
        """Read the columns of every LMT table; refuse a database without the required ones."""
        try:
            self.columns = self._columns()
        except LmtError:
            self.close()
            raise
        except Exception as exc:  # sqlite3.DatabaseError ("file is not a database"), ...
            self.close()
            raise LmtError(f"{self.name}: cannot read: {_cause(exc)}") from None
        missing = [t for t in _REQUIRED if t not in self.columns]
        if missing:
            self.close()
            raise LmtError(f"{self.name}: not an LMT 1.1 database (no {', '.join(missing)})")
        for table, cols in _REQUIRED.items():
            lost = [c for c in cols if c not in self.columns[table]]
            if lost:
                self.close()
                raise LmtError(f"{self.name}: {table} has no column {', '.join(lost)}: not "
                               "the LMT 1.1 schema this connector reads (an LMT upgrade?)")
        for table, cols in _OPTIONAL.items():
            if table not in self.columns:
                self.warnings.append(f"{self.name}: no {table} table; its columns are NULL")
                continue
            lost = [c for c in cols if c not in self.columns[table]]
            if lost:
                self.warnings.append(f"{self.name}: {table} has no column {', '.join(lost)}; "
                                     "read as NULL")

    def _columns(self) -> dict[str, set[str]]:
        """Upper-case table name -> its upper-case column names."""
        out: dict[str, set[str]] = {}
        if self.kind == "sqlite":
            tables = [r[0] for r in self.query(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
            for t in tables:
                out[t.upper()] = {str(r[1]).upper() for r in
                                  self.query(f'PRAGMA table_info("{t}")')}
            return out
        for t, c in self.query("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS "
                               "WHERE TABLE_SCHEMA = DATABASE()"):
            out.setdefault(str(t).upper(), set()).add(str(c).upper())
        return out

    def _col(self, table: str, col: str, alias: str = "") -> str:
        """`alias.col`, or NULL when this database's table lacks the column."""
        have = col in self.columns.get(table, ())
        return (f"{alias}.{col}" if alias else col) if have else "NULL"

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Run a parameterised query (`%s` placeholders for both back ends); on MySQL with
        the bounded retries over a fresh connection."""
        if self.kind == "sqlite":
            return self.conn.execute(sql.replace("%s", "?"), params).fetchall()

        def run() -> list[tuple]:
            with self.conn.cursor() as cur:
                cur.execute(sql, params)
                return list(cur.fetchall())
        return self._with_retries(run, "query")

    def close(self) -> None:
        """Close the connection (a dead one too); a later query opens a new one."""
        conn, self.conn = getattr(self, "conn", None), None
        if conn is None:
            return
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - closing a dead connection
            pass

    def __enter__(self) -> LmtDb:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # info tables -----------------------------------------------------------------------------
    def filesystems(self) -> list[str]:
        """FILESYSTEM_INFO names."""
        return sorted(str(r[0]) for r in self.query("SELECT FILESYSTEM_NAME FROM FILESYSTEM_INFO"))

    def span(self) -> tuple[dt.datetime, dt.datetime] | None:
        """First and last usable TIMESTAMP_INFO time (UTC), None when there is none."""
        times = self._timestamps(None, None)[0].values()
        return (min(times), max(times)) if times else None

    def _info(self) -> dict[str, dict]:
        fs = {r[0]: str(r[1]) for r in
              self.query("SELECT FILESYSTEM_ID, FILESYSTEM_NAME FROM FILESYSTEM_INFO")}
        oss: dict = {}
        host = self._col("OSS_INFO", "HOSTNAME")
        for oid, fid, name in self.query(
                f"SELECT OSS_ID, FILESYSTEM_ID, {host} FROM OSS_INFO ORDER BY OSS_ID, {host}"):
            oss.setdefault(oid, (fid, name))
        host = self._col("OST_INFO", "HOSTNAME")
        ost = {r[0]: (r[1], str(r[2]), r[3]) for r in
               self.query(f"SELECT OST_ID, OSS_ID, OST_NAME, {host} FROM OST_INFO")}
        host = self._col("MDS_INFO", "HOSTNAME")
        mds = {r[0]: (r[1], str(r[2]), r[3]) for r in
               self.query(f"SELECT MDS_ID, FILESYSTEM_ID, MDS_NAME, {host} FROM MDS_INFO")}
        ops = {r[0]: str(r[1]) for r in
               self.query("SELECT OPERATION_ID, OPERATION_NAME FROM OPERATION_INFO")}
        return {"fs": fs, "oss": oss, "ost": ost, "mds": mds, "ops": ops}

    # windows ---------------------------------------------------------------------------------
    def _timestamps(self, start: dt.datetime | None, end: dt.datetime | None
                    ) -> tuple[dict[int, dt.datetime], dict[int, str]]:
        """TS_ID -> UTC time of the samples in [start, end) (everything when unbounded),
        and TS_ID -> the value of a TIMESTAMP that is no time (its samples are quarantined)."""
        sql, params = "SELECT TS_ID, TIMESTAMP FROM TIMESTAMP_INFO", ()
        if start is not None and end is not None:
            sql += " WHERE TIMESTAMP >= %s AND TIMESTAMP < %s"
            params = (_local_text(start - _DST_MARGIN, self.zone),
                      _local_text(end + _DST_MARGIN, self.zone))
        out, bad, last = {}, {}, None
        rows = [(whole(t), stamp) for t, stamp in self.query(sql, params)]
        for ts_id, stamp in sorted((r for r in rows if r[0] is not None), key=lambda r: r[0]):
            try:
                utc = to_utc(stamp, self.zone)
                if last is not None and utc <= last:     # LMT's clock repeated an hour (DST)
                    utc = max(utc, to_utc(stamp, self.zone, fold=1))
            except (TypeError, ValueError, OverflowError, AttributeError):
                bad[ts_id] = repr(stamp)[:60]
                continue
            last = utc
            if start is None or start <= utc < end:
                out[ts_id] = utc
        return out, bad

    def _first_ts_id_from(self, utc: dt.datetime) -> int | None:
        r = self.query("SELECT MIN(TS_ID) FROM TIMESTAMP_INFO WHERE TIMESTAMP >= %s",
                       (_local_text(utc, self.zone),))
        return whole(r[0][0]) if r else None

    def _next_ts_id(self, ts_id: int) -> int | None:
        r = self.query("SELECT MIN(TS_ID) FROM TIMESTAMP_INFO WHERE TS_ID > %s", (ts_id,))
        return whole(r[0][0]) if r else None

    def _rows(self, table: str, cols: tuple[str, ...], lo: int | None, hi: int | None
              ) -> list[tuple]:
        """Data rows with TS_ID in [lo, hi) (unbounded ends when None), their TIMESTAMP last."""
        sel = ", ".join(self._col(table, c, "d") for c in cols)
        sql = (f"SELECT {sel}, t.TIMESTAMP FROM {table} d "
               "LEFT JOIN TIMESTAMP_INFO t ON t.TS_ID = d.TS_ID WHERE 1 = 1")
        params: list = []
        if lo is not None:
            sql += " AND d.TS_ID >= %s"
            params.append(lo)
        if hi is not None:
            sql += " AND d.TS_ID < %s"
            params.append(hi)
        return self.query(sql + " ORDER BY d.TS_ID", tuple(params))

    def _previous(self, table: str, keys: tuple[str, ...], counters: tuple[str, ...],
                  lb: int, lo: int) -> list[tuple]:
        """Per series, the last usable sample with lb <= TS_ID < lo: keys, TS_ID,
        counters, TIMESTAMP."""
        k_in = ", ".join(f"d2.{k} AS K{i}" for i, k in enumerate(keys))
        k_by = ", ".join(f"d2.{k}" for k in keys)
        notnull = " AND ".join(f"d2.{c} IS NOT NULL" for c in counters)
        on = " AND ".join(f"p.K{i} = d.{k}" for i, k in enumerate(keys))
        sel = ", ".join([*(f"d.{k}" for k in keys), "d.TS_ID", *(f"d.{c}" for c in counters)])
        sql = (f"SELECT {sel}, t.TIMESTAMP FROM {table} d "
               "JOIN TIMESTAMP_INFO t ON t.TS_ID = d.TS_ID "
               f"JOIN (SELECT {k_in}, MAX(d2.TS_ID) AS M FROM {table} d2 "
               "JOIN TIMESTAMP_INFO t2 ON t2.TS_ID = d2.TS_ID "
               f"WHERE d2.TS_ID >= %s AND d2.TS_ID < %s AND {notnull} GROUP BY {k_by}) p "
               f"ON {on} AND p.M = d.TS_ID")
        return self.query(sql, (lb, lo))

    def _seeds(self, table: str, keys: tuple[str, ...], counters: tuple[str, ...],
               start: dt.datetime, lo: int, series: set[tuple]) -> list[tuple]:
        """The last usable sample before the window of each series, within the lookback:
        first from the last `_NEAR` before it (one cheap query when nothing is missing),
        then the whole lookback for series not found there."""
        out: list[tuple] = []
        found: set[tuple] = set()
        for back in dict.fromkeys((min(_NEAR, self.lookback), self.lookback)):
            lb = self._first_ts_id_from(start - back)
            if lb is None or lb >= lo:
                continue
            for r in self._previous(table, keys, counters, lb, lo):
                key = tuple(r[:len(keys)])
                if key not in found:
                    found.add(key)
                    out.append(r)
            if not series - found:
                break
        return out

    def fetch(self, start: dt.datetime | None = None, end: dt.datetime | None = None
              ) -> LmtSamples:
        """The samples of the window [start, end) (naive UTC; both None: the whole
        database), with the seeds before it; times in UTC."""
        if (start is None) != (end is None):
            raise ValueError("give both start and end, or neither")
        out = LmtSamples(self.name, self.filesystems(), self.lookback)
        out.stamps, out.bad_stamps = self._timestamps(start, end)
        stamps = out.stamps
        if not stamps:
            return out
        lo, hi = min(stamps), self._next_ts_id(max(stamps))
        out.info = self._info()
        lo_rows: int | None = lo
        if start is None:
            lo_rows, hi = None, None
        out.ost = self._rows("OST_DATA", OST_COLS, lo_rows, hi)
        out.mds = self._rows("MDS_OPS_DATA", MDS_COLS, lo_rows, hi)
        if start is not None:
            seeds = self._seeds("OST_DATA", ("OST_ID",), ("READ_BYTES", "WRITE_BYTES"),
                                start, lo, {(r[0],) for r in out.ost})
            out.prev_ost = [(*r[:-1], to_utc(r[-1], self.zone)) for r in seeds]
            seeds = self._seeds("MDS_OPS_DATA", ("MDS_ID", "OPERATION_ID"), ("SAMPLES",),
                                start, lo, {(r[0], r[2]) for r in out.mds})
            out.prev_mds = [(*r[:-1], to_utc(r[-1], self.zone)) for r in seeds]
        out.oss_data = self._side("OSS_DATA", "OSS_ID", "PCT_CPU, PCT_MEMORY", lo_rows, hi)
        out.mds_data = self._side("MDS_DATA", "MDS_ID", "PCT_CPU", lo_rows, hi)
        return out

    def read(self, start: dt.datetime | None = None, end: dt.datetime | None = None) -> LmtRead:
        """The table rows of the window [start, end) (naive UTC; both None: the whole
        database): `lassi.ingest.lmt_rows.build_rows` of `fetch`."""
        return build_rows(self.fetch(start, end))

    def read_ost(self, start: dt.datetime | None = None, end: dt.datetime | None = None):
        """`lmt_ost` rows of [start, end) as a pandas DataFrame."""
        return self.read(start, end).ost_frame()

    def read_mds(self, start: dt.datetime | None = None, end: dt.datetime | None = None):
        """`lmt_mds` rows of [start, end) as a pandas DataFrame."""
        return self.read(start, end).mds_frame()

    def _side(self, table: str, key: str, cols: str, lo: int | None, hi: int | None) -> dict:
        """(id, TS_ID) -> the CPU/memory columns of OSS_DATA or MDS_DATA (none when this
        database has no such table; a TS_ID that is no integer matches nothing)."""
        if table not in self.columns or not {key, "TS_ID"} <= self.columns[table]:
            return {}
        sel = ", ".join(self._col(table, c.strip()) for c in cols.split(","))
        sql, params = f"SELECT {key}, TS_ID, {sel} FROM {table} WHERE 1 = 1", []
        if lo is not None:
            sql += " AND TS_ID >= %s"
            params.append(lo)
        if hi is not None:
            sql += " AND TS_ID < %s"
            params.append(hi)
        return {(r[0], whole(r[1])): r[2:] for r in self.query(sql, tuple(params))}


def _cause(exc: BaseException) -> str:
    """The first line of a database error's message (pymysql: its second argument)."""
    arg = exc.args[1] if len(getattr(exc, "args", ())) > 1 else exc
    text = str(arg).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def lmt_inputs(inputs: list[str]) -> list[str]:
    """mysql:// URIs as given; files as given; directories -> their SQLite files."""
    out = []
    for item in inputs:
        p = Path(item)
        if item.startswith("mysql://") or not p.is_dir():
            out.append(item)
        else:
            out += sorted(str(f) for f in p.rglob("*") if f.suffix in SQLITE_SUFFIXES)
    return out


def read_inputs(site, inputs: list[str], date: dt.date | None, tz: str | None
                ) -> Iterator[IngestResult]:
    """`lassi ingest --source lmt`: per database (URI, SQLite file, or the SQLite files under
    a directory), its UTC day `date` (else all it holds) as rows that replace those of the
    database's file systems in that window. One result per database, read when the
    previous one has been consumed (written)."""
    zone = tz or site.tz("lmt")
    sources = lmt_inputs(inputs)
    if not sources:
        raise IngestError(f"no LMT databases under {' '.join(inputs)}")
    for src in sources:
        try:
            with LmtDb(src, zone, RETRIES, BACKOFF_S) as db:
                for warning in db.warnings:
                    print(f"lmt: {warning}", file=sys.stderr)
                if date is not None:
                    start = dt.datetime.combine(date, dt.time())
                    window = (start, start + dt.timedelta(days=1))
                    res = db.read(*window)
                else:
                    span = db.span()
                    window = None if span is None else \
                        (span[0], span[1] + dt.timedelta(microseconds=1))
                    res = None if span is None else db.read()
        except LmtUnavailable as exc:
            raise SourceUnavailable(str(exc)) from None
        except LmtError as exc:
            raise IngestError(str(exc)) from None
        if res is None:                      # an empty database: counted, nothing written
            yield IngestResult(ParseStats(SOURCE, files=1))
        else:
            yield window_result(res, *window)
