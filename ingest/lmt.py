"""LMT (Lustre Monitoring Tool) database connector, schema 1.1 (TOKIO's `lmtdb`).

Opens a live LMT database (`mysql://user[:pass]@host[:port]/db`, through pymysql; the
password may also come from `$LASSI_LMT_PASSWORD`) or an SQLite copy with the same table
names (`.sqlite3`, as pytokio ships). `LmtDb.read(start, end)` reads the samples of the UTC
window [start, end) with OST_INFO, OSS_INFO, MDS_INFO, FILESYSTEM_INFO and OPERATION_INFO
joined; TIMESTAMP_INFO holds LMT's *local* time, converted with `tz` (an IANA name).

Deltas: the delta of a sample is its value minus the previous usable sample of the same
series (OST, or MDT + operation). That previous sample may lie before the window and is
fetched, so a window's first delta does not depend on where the window starts; it counts
only when it is at most `lookback` (default one day) older, in the window as before it, so
archiving hour by hour gives the rows of archiving a whole day. A gap stays a gap (no
invented rows, `interval_s` is its length); a counter that goes down is a reset: delta = the
new value, `reset` true, counted in `ParseStats.counter_resets` (one per row).

Unusable rows are quarantined (source `lmt`, file = the database without password, line 0,
raw = the row): a TS_ID without TIMESTAMP_INFO, an OST/MDS/operation without its info rows,
NULL counters, a repeated MDS sample. `lines_read` counts the window's OST_DATA and
MDS_OPS_DATA rows (a TS_ID without timestamp belongs to the window whose TS_ID range holds
it); OSS_DATA and MDS_DATA only add CPU/memory columns.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit
from zoneinfo import ZoneInfo

from lassi.core.quarantine import ParseStats, Quarantined
from lassi.core.schemas import schema_of

SOURCE = "lmt"
SQLITE_SUFFIXES = (".sqlite3", ".sqlite", ".db")
LOOKBACK = dt.timedelta(days=1)
_DST_MARGIN = dt.timedelta(hours=3)     # widen local-time queries over DST shifts
_NEAR = dt.timedelta(minutes=15)        # where the sample before a window usually is
_REQUIRED = ("TIMESTAMP_INFO", "OST_DATA", "OST_INFO", "OSS_INFO", "FILESYSTEM_INFO",
             "MDS_INFO", "MDS_OPS_DATA", "OPERATION_INFO")
_OST_COLS = ("OST_ID", "TS_ID", "READ_BYTES", "WRITE_BYTES", "PCT_CPU", "KBYTES_FREE",
             "KBYTES_USED", "INODES_FREE", "INODES_USED")
_MDS_COLS = ("MDS_ID", "TS_ID", "OPERATION_ID", "SAMPLES")
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


@dataclass
class LmtRead:
    """What one window gave: table rows (tuples in schema order, with `date`), the
    quarantined rows and the accounting."""

    ost_rows: list[tuple] = field(default_factory=list)
    mds_rows: list[tuple] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    stats: ParseStats = field(default_factory=lambda: ParseStats(SOURCE))
    filesystems: list[str] = field(default_factory=list)

    def ost_frame(self):
        """`lmt_ost` rows as a pandas DataFrame (nullable Int64/boolean columns)."""
        return _frame(self.ost_rows, "lmt_ost")

    def mds_frame(self):
        """`lmt_mds` rows as a pandas DataFrame."""
        return _frame(self.mds_rows, "lmt_mds")


def _frame(rows: list[tuple], table: str):
    import pandas as pd
    from pyspark.sql.types import BooleanType, LongType

    schema = schema_of(table)
    df = pd.DataFrame(rows, columns=schema.fieldNames())
    for f in schema.fields:
        if isinstance(f.dataType, LongType):
            df[f.name] = df[f.name].astype("Int64")
        elif isinstance(f.dataType, BooleanType):
            df[f.name] = df[f.name].astype("boolean")
    df["ts"] = pd.to_datetime(df["ts"])
    return df


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

    def read(self, start: dt.datetime | None = None, end: dt.datetime | None = None) -> LmtRead:
        """The window [start, end) (naive UTC; both None: the whole database)."""
        if (start is None) != (end is None):
            raise ValueError("give both start and end, or neither")
        out = LmtRead(filesystems=self.filesystems())
        out.stats.files = 1
        stamps = self._timestamps(start, end)
        if not stamps:
            return out
        lo, hi = min(stamps), self._next_ts_id(max(stamps))
        info = self._info()
        prev_ost: list[tuple] = []
        prev_mds: list[tuple] = []
        lo_rows: int | None = lo
        if start is None:
            lo_rows, hi = None, None
        ost = self._rows("OST_DATA", _OST_COLS, lo_rows, hi)
        mds = self._rows("MDS_OPS_DATA", _MDS_COLS, lo_rows, hi)
        if start is not None:
            prev_ost = self._seeds("OST_DATA", ("OST_ID",), ("READ_BYTES", "WRITE_BYTES"),
                                   start, lo, {(r[0],) for r in ost})
            prev_mds = self._seeds("MDS_OPS_DATA", ("MDS_ID", "OPERATION_ID"), ("SAMPLES",),
                                   start, lo, {(r[0], r[2]) for r in mds})
        oss_data = self._side("OSS_DATA", "OSS_ID", "PCT_CPU, PCT_MEMORY", lo_rows, hi)
        mds_data = self._side("MDS_DATA", "MDS_ID", "PCT_CPU", lo_rows, hi)
        self._build_ost(out, info, ost, prev_ost, stamps, oss_data)
        self._build_mds(out, info, mds, prev_mds, stamps, mds_data)
        st = out.stats
        st.lines_quarantined = len(out.quarantined)
        st.rows = len(out.ost_rows) + len(out.mds_rows)
        st.extra = {"ost_rows": len(out.ost_rows), "mds_rows": len(out.mds_rows)}
        return out

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

    # rows ------------------------------------------------------------------------------------
    def _quarantine(self, out: LmtRead, table: str, cols: tuple[str, ...], row: tuple,
                    reason: str) -> None:
        raw = f"{table} " + " ".join(f"{c}={v}" for c, v in zip(cols, row, strict=False))
        out.quarantined.append(Quarantined(SOURCE, self.name, 0, raw, reason))

    def _in_window(self, out: LmtRead, table: str, cols: tuple[str, ...], row: tuple,
                   stamps: dict[int, dt.datetime]) -> dt.datetime | None:
        """The row's UTC time when it belongs to the window; orphans are quarantined."""
        ts_id, stamp = int(row[1]), row[-1]
        if stamp is None:
            out.stats.lines_read += 1
            self._quarantine(out, table, cols, row[:-1], f"TS_ID {ts_id} has no TIMESTAMP_INFO row")
            return None
        if ts_id not in stamps:
            return None         # a TS_ID of another window (local times out of order)
        out.stats.lines_read += 1
        return stamps[ts_id]

    def _build_ost(self, out: LmtRead, info: dict, rows: list[tuple], prev: list[tuple],
                   stamps: dict, oss_data: dict) -> None:
        series: dict[int, list] = {}
        for oid, ts_id, rd, wr, stamp in prev:
            series.setdefault(oid, []).append((int(ts_id), to_utc(stamp, self.zone),
                                               (rd, wr), None))
        for row in rows:
            ts = self._in_window(out, "OST_DATA", _OST_COLS, row, stamps)
            if ts is None:
                continue
            oid, ts_id, rd, wr = row[:4]
            reason = self._ost_problem(info, oid)
            if reason is None and (rd is None or wr is None):
                reason = "NULL READ_BYTES/WRITE_BYTES"
            if reason:
                self._quarantine(out, "OST_DATA", _OST_COLS, row[:-1], reason)
                continue
            series.setdefault(oid, []).append((int(ts_id), ts, (int(rd), int(wr)), row))
        for oid, samples in series.items():
            if all(s[3] is None for s in samples):
                continue            # only a pre-window sample (or one of an unknown OST)
            oss_id, ost_name, ost_host = info["ost"][oid]
            fid, oss_host = info["oss"][oss_id]
            fs = info["fs"][fid]
            for ts_id, ts, vals, deltas, interval, reset, row in self._chain(samples, out):
                cpu_mem = oss_data.get((oss_id, ts_id), (None, None))
                out.ost_rows.append((
                    fs, ost_name, str(oss_host or ost_host), ts, ts_id, vals[0], vals[1],
                    deltas[0], deltas[1], interval, reset, _float(row[4]),
                    _float(cpu_mem[0]), _float(cpu_mem[1]), *[_int(v) for v in row[5:9]],
                    ts.date()))

    @staticmethod
    def _ost_problem(info: dict, oid) -> str | None:
        if oid not in info["ost"]:
            return f"OST_ID {oid} has no OST_INFO row"
        oss_id = info["ost"][oid][0]
        if oss_id not in info["oss"]:
            return f"OSS_ID {oss_id} (OST_ID {oid}) has no OSS_INFO row"
        if info["oss"][oss_id][0] not in info["fs"]:
            return f"FILESYSTEM_ID {info['oss'][oss_id][0]} has no FILESYSTEM_INFO row"
        return None

    def _build_mds(self, out: LmtRead, info: dict, rows: list[tuple], prev: list[tuple],
                   stamps: dict, mds_data: dict) -> None:
        series: dict[tuple, list] = {}
        seen: set[tuple] = set()
        for mid, op, ts_id, samples, stamp in prev:
            if (mid, op) not in series:
                series[(mid, op)] = [(int(ts_id), to_utc(stamp, self.zone), (samples,), None)]
        for row in rows:
            ts = self._in_window(out, "MDS_OPS_DATA", _MDS_COLS, row, stamps)
            if ts is None:
                continue
            mid, ts_id, op, samples = row[:4]
            reason = None
            if mid not in info["mds"]:
                reason = f"MDS_ID {mid} has no MDS_INFO row"
            elif info["mds"][mid][0] not in info["fs"]:
                reason = f"FILESYSTEM_ID {info['mds'][mid][0]} has no FILESYSTEM_INFO row"
            elif op not in info["ops"]:
                reason = f"OPERATION_ID {op} has no OPERATION_INFO row"
            elif samples is None:
                reason = "NULL SAMPLES"
            elif (mid, op, ts_id) in seen:
                reason = "repeated sample (same MDS_ID, TS_ID, OPERATION_ID)"
            if reason:
                self._quarantine(out, "MDS_OPS_DATA", _MDS_COLS, row[:-1], reason)
                continue
            seen.add((mid, op, ts_id))
            series.setdefault((mid, op), []).append((int(ts_id), ts, (int(samples),), row))
        for (mid, op), samples in series.items():
            if all(s[3] is None for s in samples):
                continue
            fid, mdt, host = info["mds"][mid]
            fs, op_name = info["fs"][fid], info["ops"][op]
            for ts_id, ts, vals, deltas, interval, reset, _row in self._chain(samples, out):
                cpu = mds_data.get((mid, ts_id), (None,))
                out.mds_rows.append((fs, mdt, str(host), ts, ts_id, op_name, vals[0], deltas[0],
                                     interval, reset, _float(cpu[0]), ts.date()))

    def _chain(self, samples: list[tuple], out: LmtRead):
        """Deltas along one series (sorted by TS_ID); the pre-window sample (row None) only
        seeds. Yields (ts_id, ts, values, deltas, interval_s, reset, row)."""
        last = None
        for ts_id, ts, vals, row in sorted(samples, key=lambda s: (s[0], s[1])):
            if row is not None:
                out.stats.lines_used += 1
                if last is not None and dt.timedelta(0) < ts - last[0] <= self.lookback:
                    deltas = tuple(v - p if v >= p else v for v, p in zip(vals, last[1],
                                                                         strict=True))
                    reset = any(v < p for v, p in zip(vals, last[1], strict=True))
                    out.stats.counter_resets += reset
                    yield ts_id, ts, vals, deltas, (ts - last[0]).total_seconds(), reset, row
                else:
                    yield ts_id, ts, vals, (None,) * len(vals), None, False, row
            last = (ts, vals)


def _int(v) -> int | None:
    return None if v is None else int(v)


def _float(v) -> float | None:
    return None if v is None else float(v)


# warehouse -------------------------------------------------------------------------------


def window_days(start: dt.datetime, end: dt.datetime) -> list[dt.date]:
    """The UTC days that [start, end) touches."""
    last = (end - dt.timedelta(microseconds=1)).date()
    return [start.date() + dt.timedelta(days=k) for k in range((last - start.date()).days + 1)]


def write_window(spark, wh, res: LmtRead, start: dt.datetime, end: dt.datetime) -> list[dt.date]:
    """Replace the rows of `res.filesystems` with ts in [start, end) in `lmt_ost`/`lmt_mds`
    by `res`'s rows; other rows of the touched day partitions are kept. Idempotent."""
    from pyspark.sql import functions as F

    dates = window_days(start, end)
    if not res.filesystems:
        return []
    for table, rows in (("lmt_ost", res.ost_rows), ("lmt_mds", res.mds_rows)):
        new = spark.createDataFrame(rows, schema_of(table))
        inside = (F.col("fs").isin(res.filesystems) & (F.col("ts") >= F.lit(start))
                  & (F.col("ts") < F.lit(end)))
        wh.replace_rows(new, table, dates, inside)
    return dates


def merge_quarantine(spark, wh, qs: list[Quarantined], date: dt.date) -> None:
    """Add quarantined rows to `date`, keeping earlier ones; a row already there (same
    source, file, line, raw, reason) is not added twice, so reruns change nothing."""
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    new = spark.createDataFrame([(q.source, q.file, q.line_no, q.raw, q.reason, now, date)
                                 for q in qs], schema_of("quarantine"))
    old = wh.read("quarantine", [date])
    merged = old.unionByName(new).dropDuplicates(["source", "file", "line_no", "raw", "reason"])
    wh.write(merged.localCheckpoint(), "quarantine", [date])


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


def ingest_inputs(spark, wh, site, inputs: list[str], date: dt.date | None,
                  tz: str | None) -> ParseStats:
    """`lassi ingest --source lmt`: each database's UTC day `date` (else all it holds) into
    `lmt_ost`/`lmt_mds`; replaces those rows of the database's file systems; writes this
    source's quarantine rows of `date` (today when None). Returns the accounting."""
    from lassi.ingest.runner import IngestError, _append_quarantine

    zone = tz or site.tz("lmt")
    stats, qs = ParseStats(SOURCE), []
    sources = lmt_inputs(inputs)
    if not sources:
        raise IngestError(f"no LMT databases under {' '.join(inputs)}")
    for src in sources:
        try:
            with LmtDb(src, zone) as db:
                if date is not None:
                    start = dt.datetime.combine(date, dt.time())
                    end = start + dt.timedelta(days=1)
                else:
                    span = db.span()
                    if span is None:
                        stats.files += 1
                        continue
                    start, end = span[0], span[1] + dt.timedelta(microseconds=1)
                res = db.read(start, end) if date is not None else db.read()
        except LmtError as exc:
            raise IngestError(str(exc)) from None
        write_window(spark, wh, res, start, end)
        stats.add(res.stats)
        qs += res.quarantined
    qdate = date or dt.datetime.now(dt.timezone.utc).date()
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    q_df = spark.createDataFrame([(q.source, q.file, q.line_no, q.raw, q.reason, now, qdate)
                                  for q in qs], schema_of("quarantine"))
    _append_quarantine(spark, wh, q_df, qdate, SOURCE)
    return stats
