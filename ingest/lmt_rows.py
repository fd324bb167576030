"""LMT samples -> `lmt_ost` / `lmt_mds` rows: per-interval deltas, resets, gaps, quarantine.

The connector (`lassi.ingest.lmt.LmtDb.fetch`) reads a window's samples (`LmtSamples`, times
already UTC); `build_rows` turns them into table rows (`LmtRead`), with no database and no
Spark; `window_tables` says how a window's rows are written (`lassi.ingest.writer`).

Deltas: the delta of a sample is its value minus the previous usable sample of the same
series (OST, or MDT + operation). That previous sample may lie before the window (the
connector fetches it), so a window's first delta does not depend on where the window
starts; it counts only when it is at most `lookback` older, in the window as before it, so
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
from dataclasses import dataclass, field

from lassi.ingest.contract import IngestResult, TableRows, WindowRows

from lassi.core.quarantine import ParseStats, Quarantined
from lassi.core.schemas import schema_of

SOURCE = "lmt"
LOOKBACK = dt.timedelta(days=1)
OST_COLS = ("OST_ID", "TS_ID", "READ_BYTES", "WRITE_BYTES", "PCT_CPU", "KBYTES_FREE",
            "KBYTES_USED", "INODES_FREE", "INODES_USED")
MDS_COLS = ("MDS_ID", "TS_ID", "OPERATION_ID", "SAMPLES")


@dataclass
class LmtSamples:
    """What the connector read for one window.

    `stamps`: TS_ID -> UTC time of the window's samples (empty: nothing in the window, and
    nothing else is read). `info`: FILESYSTEM/OSS/OST/MDS/OPERATION_INFO as dicts (`fs`,
    `oss`, `ost`, `mds`, `ops`). `ost` / `mds`: OST_DATA (`OST_COLS`) and MDS_OPS_DATA
    (`MDS_COLS`) rows, each with its TIMESTAMP (None for an orphan TS_ID) last.
    `prev_ost` (OST_ID, TS_ID, READ_BYTES, WRITE_BYTES, UTC time) and `prev_mds` (MDS_ID,
    OPERATION_ID, TS_ID, SAMPLES, UTC time): per series the last usable sample before the
    window. `oss_data` / `mds_data`: (id, TS_ID) -> CPU/memory columns.
    """

    name: str                                   # the database as shown (no password)
    filesystems: list[str] = field(default_factory=list)
    lookback: dt.timedelta = LOOKBACK
    stamps: dict[int, dt.datetime] = field(default_factory=dict)
    info: dict[str, dict] = field(default_factory=dict)
    ost: list[tuple] = field(default_factory=list)
    mds: list[tuple] = field(default_factory=list)
    prev_ost: list[tuple] = field(default_factory=list)
    prev_mds: list[tuple] = field(default_factory=list)
    oss_data: dict = field(default_factory=dict)
    mds_data: dict = field(default_factory=dict)
    bad_stamps: dict[int, str] = field(default_factory=dict)  # TS_ID -> unusable TIMESTAMP


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
        return frame(self.ost_rows, "lmt_ost")

    def mds_frame(self):
        """`lmt_mds` rows as a pandas DataFrame."""
        return frame(self.mds_rows, "lmt_mds")


def frame(rows: list[tuple], table: str):
    """Rows of `lmt_ost` or `lmt_mds` as a pandas DataFrame (nullable Int64/boolean)."""
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


# --- rows ----------------------------------------------------------------------------------------
def build_rows(s: LmtSamples) -> LmtRead:
    """The table rows, quarantine and accounting of one window's samples."""
    out = LmtRead(filesystems=list(s.filesystems))
    out.stats.files = 1
    if not s.stamps:
        return out
    _build_ost(out, s)
    _build_mds(out, s)
    st = out.stats
    st.lines_quarantined = len(out.quarantined)
    st.rows = len(out.ost_rows) + len(out.mds_rows)
    st.extra = {"ost_rows": len(out.ost_rows), "mds_rows": len(out.mds_rows)}
    return out


def _quarantine(out: LmtRead, name: str, table: str, cols: tuple[str, ...], row: tuple,
                reason: str) -> None:
    raw = f"{table} " + " ".join(f"{c}={v}" for c, v in zip(cols, row, strict=False))
    out.quarantined.append(Quarantined(SOURCE, name, 0, raw, reason))


def _in_window(out: LmtRead, s: LmtSamples, table: str, cols: tuple[str, ...], row: tuple
               ) -> dt.datetime | None:
    """The row's UTC time when it belongs to the window; orphans, rows whose TS_ID is not
    an integer and rows whose TIMESTAMP_INFO time is unusable are quarantined."""
    ts_id, stamp = whole(row[1]), row[-1]
    reason = None
    if ts_id is None:
        reason = f"TS_ID is not an integer: {row[1]!r}"
    elif ts_id in s.bad_stamps:
        reason = f"TIMESTAMP_INFO of TS_ID {ts_id} is not a time: {s.bad_stamps[ts_id]}"
    elif stamp is None:
        reason = f"TS_ID {ts_id} has no TIMESTAMP_INFO row"
    if reason is not None:
        out.stats.lines_read += 1
        _quarantine(out, s.name, table, cols, row[:-1], reason)
        return None
    if ts_id not in s.stamps:
        return None         # a TS_ID of another window (local times out of order)
    out.stats.lines_read += 1
    return s.stamps[ts_id]


def _build_ost(out: LmtRead, s: LmtSamples) -> None:
    info = s.info
    series: dict[int, list] = {}
    for oid, ts_id, rd, wr, ts in s.prev_ost:
        seed = (whole(ts_id), counter(rd), counter(wr))
        if None not in seed:                     # an unusable seed seeds nothing
            series.setdefault(oid, []).append((seed[0], ts, seed[1:], None))
    for row in s.ost:
        ts = _in_window(out, s, "OST_DATA", OST_COLS, row)
        if ts is None:
            continue
        oid, ts_id, rd, wr = row[:4]
        reason = _ost_problem(info, oid)
        if reason is None and (rd is None or wr is None):
            reason = "NULL READ_BYTES/WRITE_BYTES"
        elif reason is None and None in (counter(rd), counter(wr)):
            reason = "READ_BYTES/WRITE_BYTES not non-negative 64-bit integers"
        if reason:
            _quarantine(out, s.name, "OST_DATA", OST_COLS, row[:-1], reason)
            continue
        series.setdefault(oid, []).append((whole(ts_id), ts, (counter(rd), counter(wr)), row))
    for oid, samples in series.items():
        if all(x[3] is None for x in samples):
            continue            # only a pre-window sample (or one of an unknown OST)
        oss_id, ost_name, ost_host = info["ost"][oid]
        fid, oss_host = info["oss"][oss_id]
        fs = info["fs"][fid]
        for ts_id, ts, vals, deltas, interval, reset, row in _chain(samples, out, s.lookback):
            cpu_mem = s.oss_data.get((oss_id, ts_id), (None, None))
            out.ost_rows.append((
                fs, ost_name, str(oss_host or ost_host), ts, ts_id, vals[0], vals[1],
                deltas[0], deltas[1], interval, reset, _float(row[4]),
                _float(cpu_mem[0]), _float(cpu_mem[1]), *[whole(v) for v in row[5:9]],
                ts.date()))


def _ost_problem(info: dict, oid) -> str | None:
    if oid not in info["ost"]:
        return f"OST_ID {oid} has no OST_INFO row"
    oss_id = info["ost"][oid][0]
    if oss_id not in info["oss"]:
        return f"OSS_ID {oss_id} (OST_ID {oid}) has no OSS_INFO row"
    if info["oss"][oss_id][0] not in info["fs"]:
        return f"FILESYSTEM_ID {info['oss'][oss_id][0]} has no FILESYSTEM_INFO row"
    return None


def _build_mds(out: LmtRead, s: LmtSamples) -> None:
    info = s.info
    series: dict[tuple, list] = {}
    seen: set[tuple] = set()
    for mid, op, ts_id, samples, ts in s.prev_mds:
        seed = (whole(ts_id), counter(samples))
        if (mid, op) not in series and None not in seed:
            series[(mid, op)] = [(seed[0], ts, seed[1:], None)]
    for row in s.mds:
        ts = _in_window(out, s, "MDS_OPS_DATA", MDS_COLS, row)
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
        elif counter(samples) is None:
            reason = "SAMPLES not a non-negative 64-bit integer"
        elif (mid, op, ts_id) in seen:
            reason = "repeated sample (same MDS_ID, TS_ID, OPERATION_ID)"
        if reason:
            _quarantine(out, s.name, "MDS_OPS_DATA", MDS_COLS, row[:-1], reason)
            continue
        seen.add((mid, op, ts_id))
        series.setdefault((mid, op), []).append((whole(ts_id), ts, (counter(samples),), row))
    for (mid, op), samples in series.items():
        if all(x[3] is None for x in samples):
            continue
        fid, mdt, host = info["mds"][mid]
        fs, op_name = info["fs"][fid], info["ops"][op]
        for ts_id, ts, vals, deltas, interval, reset, _row in _chain(samples, out, s.lookback):
            cpu = s.mds_data.get((mid, ts_id), (None,))
            out.mds_rows.append((fs, mdt, str(host), ts, ts_id, op_name, vals[0], deltas[0],
                                 interval, reset, _float(cpu[0]), ts.date()))


def _chain(samples: list[tuple], out: LmtRead, lookback: dt.timedelta):
    """Deltas along one series (sorted by TS_ID); the pre-window sample (row None) only
    seeds. Yields (ts_id, ts, values, deltas, interval_s, reset, row)."""
    last = None
    for ts_id, ts, vals, row in sorted(samples, key=lambda x: (x[0], x[1])):
        if row is not None:
            out.stats.lines_used += 1
            if last is not None and dt.timedelta(0) < ts - last[0] <= lookback:
                deltas = tuple(v - p if v >= p else v for v, p in zip(vals, last[1],
                                                                     strict=True))
                reset = any(v < p for v, p in zip(vals, last[1], strict=True))
                out.stats.counter_resets += reset
                yield ts_id, ts, vals, deltas, (ts - last[0]).total_seconds(), reset, row
            else:
                yield ts_id, ts, vals, (None,) * len(vals), None, False, row
        last = (ts, vals)


_I64 = 2**63 - 1


def whole(v) -> int | None:
    """A database value as a 64-bit integer; None when it is NULL or not one (text, bytes,
    a fraction: an SQLite copy's columns hold any type)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v if -_I64 - 1 <= v <= _I64 else None
    try:
        f = float(v) if not isinstance(v, (str, bytes)) else None   # float, Decimal
    except (TypeError, ValueError):
        return None
    return int(f) if f is not None and f.is_integer() and abs(f) <= _I64 else None


def counter(v) -> int | None:
    """A cumulative counter: a non-negative 64-bit integer, else None."""
    n = whole(v)
    return n if n is not None and n >= 0 else None


def _float(v) -> float | None:
    """A CPU or memory percentage; None when NULL or not a number."""
    if v is None or isinstance(v, (str, bytes, bool)):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if f == f and abs(f) != float("inf") else None


# --- what a window writes ----------------------------------------------------------------------
def window_days(start: dt.datetime, end: dt.datetime) -> list[dt.date]:
    """The UTC days that [start, end) touches."""
    last = (end - dt.timedelta(microseconds=1)).date()
    return [start.date() + dt.timedelta(days=k) for k in range((last - start.date()).days + 1)]


def window_tables(res: LmtRead, start: dt.datetime, end: dt.datetime) -> list[TableRows]:
    """`res`'s rows replace the rows of its database's file systems with ts in [start, end)
    of `lmt_ost`/`lmt_mds`; other rows of the touched day partitions are kept. Idempotent.
    Nothing when the database names no file system."""
    if not res.filesystems:
        return []
    days, replace = window_days(start, end), WindowRows(tuple(res.filesystems), start, end)
    return [TableRows("lmt_ost", res.ost_rows, days, replace),
            TableRows("lmt_mds", res.mds_rows, days, replace)]


def window_result(res: LmtRead, start: dt.datetime, end: dt.datetime) -> IngestResult:
    """One window of one database in the ingest contract."""
    return IngestResult(res.stats, window_tables(res, start, end), res.quarantined)
