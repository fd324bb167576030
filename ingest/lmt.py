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

`read_inputs` is the connector of `lassi ingest --source lmt`: per database its UTC day
`date` (else all it holds), in the ingest contract (`lassi.ingest.contract`).
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit
from zoneinfo import ZoneInfo

from lassi.ingest.contract import IngestError, IngestResult
from lassi.ingest.lmt_rows import (
    LOOKBACK,
    MDS_COLS,
    OST_COLS,
    SOURCE,
    LmtRead,
    LmtSamples,
    build_rows,
    window_result,
)

from lassi.core.quarantine import ParseStats

SQLITE_SUFFIXES = (".sqlite3", ".sqlite", ".db")
_DST_MARGIN = dt.timedelta(hours=3)     # widen local-time queries over DST shifts
_NEAR = dt.timedelta(minutes=15)        # where the sample before a window usually is
_REQUIRED = ("TIMESTAMP_INFO", "OST_DATA", "OST_INFO", "OSS_INFO", "FILESYSTEM_INFO",
             "MDS_INFO", "MDS_OPS_DATA", "OPERATION_INFO")
_NO_RETRY = {1044, 1045, 1049}          # access denied, unknown database: retrying won't help


class LmtError(Exception):
    """The database cannot be opened or is not an LMT database; said in one line."""


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
                 connect_timeout_s: float = 2.0, lookback: dt.timedelta = LOOKBACK) -> None:
        self.source, self.name = source, redact(source)
        self.zone = ZoneInfo(tz)
        self.lookback = lookback
        if source.startswith("mysql://"):
            self.kind = "mysql"
            self.conn = self._connect_mysql(parse_mysql_uri(source), retries, backoff_s,
                                            connect_timeout_s)
        else:
            self.kind = "sqlite"
            self.conn = self._connect_sqlite(Path(source))
        self._check_tables()

    # connection ----------------------------------------------------------------------------
    @staticmethod
    def _connect_mysql(args: dict, retries: int, backoff_s: float, timeout_s: float):
        import pymysql

        where = f"{args['host']}:{args['port']}"
        for attempt in range(1, retries + 1):
            try:
                return pymysql.connect(**args, connect_timeout=timeout_s, read_timeout=600)
            except pymysql.err.OperationalError as exc:
                code = exc.args[0] if exc.args else None
                cause = str(exc.args[1] if len(exc.args) > 1 else exc).splitlines()[0]
                if code in _NO_RETRY or attempt == retries:
                    tries = f" after {attempt} attempts" if attempt > 1 else ""
                    raise LmtError(f"cannot connect to LMT database at {where}{tries}: "
                                   f"{cause}") from None
                time.sleep(backoff_s * 2 ** (attempt - 1))   # bounded: `retries` attempts
        raise LmtError(f"cannot connect to LMT database at {where}")   # retries < 1

    @staticmethod
    def _connect_sqlite(path: Path) -> sqlite3.Connection:
        if not path.is_file():
            raise LmtError(f"no such LMT database file: {path}")
        try:
            return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise LmtError(f"cannot open {path}: {exc}") from None

    def _check_tables(self) -> None:
        if self.kind == "sqlite":
            sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
        else:
            sql = "SHOW TABLES"
        try:
            have = {r[0].upper() for r in self.query(sql)}
        except Exception as exc:  # sqlite3.DatabaseError ("file is not a database"), ...
            self.close()
            raise LmtError(f"{self.name}: cannot read: {str(exc).splitlines()[0]}") from None
        missing = [t for t in _REQUIRED if t not in have]
        if missing:
            self.close()
            raise LmtError(f"{self.name}: not an LMT 1.1 database (no {', '.join(missing)})")

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Run a parameterised query (`%s` placeholders for both back ends)."""
        if self.kind == "sqlite":
            return self.conn.execute(sql.replace("%s", "?"), params).fetchall()
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())

    def close(self) -> None:
        try:
            self.conn.close()
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
        """First and last TIMESTAMP_INFO time (UTC), None when empty."""
        r = self.query("SELECT MIN(TIMESTAMP), MAX(TIMESTAMP) FROM TIMESTAMP_INFO")
        if not r or r[0][0] is None:
            return None
        return to_utc(r[0][0], self.zone), to_utc(r[0][1], self.zone)

    def _info(self) -> dict[str, dict]:
        fs = {r[0]: str(r[1]) for r in
              self.query("SELECT FILESYSTEM_ID, FILESYSTEM_NAME FROM FILESYSTEM_INFO")}
        oss: dict = {}
        for oid, fid, host in self.query(
                "SELECT OSS_ID, FILESYSTEM_ID, HOSTNAME FROM OSS_INFO ORDER BY OSS_ID, HOSTNAME"):
            oss.setdefault(oid, (fid, host))
        ost = {r[0]: (r[1], str(r[2]), r[3]) for r in
               self.query("SELECT OST_ID, OSS_ID, OST_NAME, HOSTNAME FROM OST_INFO")}
        mds = {r[0]: (r[1], str(r[2]), r[3]) for r in
               self.query("SELECT MDS_ID, FILESYSTEM_ID, MDS_NAME, HOSTNAME FROM MDS_INFO")}
        ops = {r[0]: str(r[1]) for r in
               self.query("SELECT OPERATION_ID, OPERATION_NAME FROM OPERATION_INFO")}
        return {"fs": fs, "oss": oss, "ost": ost, "mds": mds, "ops": ops}

    # windows ---------------------------------------------------------------------------------
    def _timestamps(self, start: dt.datetime | None, end: dt.datetime | None
                    ) -> dict[int, dt.datetime]:
        """TS_ID -> UTC time of the samples in [start, end) (everything when unbounded)."""
        sql, params = "SELECT TS_ID, TIMESTAMP FROM TIMESTAMP_INFO", ()
        if start is not None and end is not None:
            sql += " WHERE TIMESTAMP >= %s AND TIMESTAMP < %s"
            params = (_local_text(start - _DST_MARGIN, self.zone),
                      _local_text(end + _DST_MARGIN, self.zone))
        out, last = {}, None
        for ts_id, stamp in sorted(self.query(sql, params)):
            utc = to_utc(stamp, self.zone)
            if last is not None and utc <= last:       # LMT's clock repeated an hour (DST)
                utc = max(utc, to_utc(stamp, self.zone, fold=1))
            last = utc
            if start is None or start <= utc < end:
                out[int(ts_id)] = utc
        return out

    def _first_ts_id_from(self, utc: dt.datetime) -> int | None:
        r = self.query("SELECT MIN(TS_ID) FROM TIMESTAMP_INFO WHERE TIMESTAMP >= %s",
                       (_local_text(utc, self.zone),))
        return None if not r or r[0][0] is None else int(r[0][0])

    def _next_ts_id(self, ts_id: int) -> int | None:
        r = self.query("SELECT MIN(TS_ID) FROM TIMESTAMP_INFO WHERE TS_ID > %s", (ts_id,))
        return None if not r or r[0][0] is None else int(r[0][0])

    def _rows(self, table: str, cols: tuple[str, ...], lo: int | None, hi: int | None
              ) -> list[tuple]:
        """Data rows with TS_ID in [lo, hi) (unbounded ends when None), their TIMESTAMP last."""
        sel = ", ".join(f"d.{c}" for c in cols)
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
        out.stamps = stamps = self._timestamps(start, end)
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
        """(id, TS_ID) -> the CPU/memory columns of OSS_DATA or MDS_DATA."""
        sql, params = f"SELECT {key}, TS_ID, {cols} FROM {table} WHERE 1 = 1", []
        if lo is not None:
            sql += " AND TS_ID >= %s"
            params.append(lo)
        if hi is not None:
            sql += " AND TS_ID < %s"
            params.append(hi)
        return {(r[0], int(r[1])): r[2:] for r in self.query(sql, tuple(params))}


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
            with LmtDb(src, zone) as db:
                if date is not None:
                    start = dt.datetime.combine(date, dt.time())
                    window = (start, start + dt.timedelta(days=1))
                    res = db.read(*window)
                else:
                    span = db.span()
                    window = None if span is None else \
                        (span[0], span[1] + dt.timedelta(microseconds=1))
                    res = None if span is None else db.read()
        except LmtError as exc:
            raise IngestError(str(exc)) from None
        if res is None:                      # an empty database: counted, nothing written
            yield IngestResult(ParseStats(SOURCE, files=1))
        else:
            yield window_result(res, *window)
