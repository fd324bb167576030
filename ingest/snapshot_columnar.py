"""`lfs df` and `lctl dl -t` snapshot files read column-wise (Arrow): the fast path of
`lassi.ingest.lfs_df` and `lassi.ingest.lctl_dl`.

A line is read here when it is one this reading computes exactly: a `BEGIN <integer
epoch>` separator, a blank line, and per source
- `lfs df`: the `UUID 1K-blocks ... Mounted on` header, a `filesystem summary:` line, a
  data line `fsname-OSTxxxx_UUID total used avail use% mount[OST:i]` whose kind and index
  agree with its name, or a `fsname-OSTxxxx_UUID : <status>` line;
- `lctl dl -t`: a device line `idx status type name uuid refcount [nid]` whose osc/mdc
  device names its target as the line parser requires.
From the snapshot of the first other line (another unit, a UUID alone on its line, a line
to quarantine, a last line cut short, ...) on, the lines are read by the source's line
parser (its `Tail`: the line parser's state at a snapshot boundary after lines read here
is its first), and a file that cannot be read at all by the line parser whole. Until
session 43 one such line sent the whole file to the line parser: a 67k-line `lfs df` cut
mid-line took 0.65-0.80 s instead of 0.11-0.13 s. The rows equal the line parser's (tests
compare them): the rows of snapshots on another day than the ingest's quarantined with its
reason, the last row of a target repeated in one snapshot, and for `lctl dl` the
failed-over flags by pytokio's mode rule. A file is read in READ_THREADS pieces of whole
snapshots at once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.columnar import (
    READ_THREADS,
    Fields,
    NotFast,
    all_of,
    blank_lines,
    line_blocks,
    matches,
    table_schema,
    when,
)

from lassi.core.quarantine import ParseStats, Quarantined

LFS_DF, LCTL_DL = "lfs-df", "lctl-dl"          # the sources (lfs_df.SOURCE, lctl_dl.SOURCE)
# a source's line parser: (path, date, tz) -> (row dicts, quarantine, counts)
LineParser = Callable[[str | Path, dt.date | None, str], tuple[list[dict], list[Quarantined],
                                                              ParseStats]]
FirstTime = Callable[[str | Path, dt.date | None, str], dt.datetime]
# a source's line parser from a snapshot boundary on (lfs_df.tail_reader): (lines, the
# number of the first, the time before a BEGIN) -> (every row with its `_line` number,
# before the day's filter and the last-row rule; the bad lines as (number, text, reason);
# the lines the classifier counted apart)
Tail = Callable[[list[str], int, dt.datetime], tuple[list[dict], list[tuple[int, str, str]],
                                                     int]]
_TARGET = r"(?P<target>(?P<fs>[A-Za-z0-9_.]+?)-(?P<kind>OST|MDT)(?P<hex>[0-9a-fA-F]{4,8}))"
_BEGIN = r"^BEGIN +(?P<epoch>[0-9]{1,11}) *$"
_LFS_HEADER = r"^ *UUID +1K-blocks +.*Mounted"
_SUMMARY = r"(?i)^ *filesystem[ _]summary:"
_UUID = rf"^{_TARGET}_UUID$"
_KIB = r"^[0-9]{1,18}$"
_PCT = r"^(?:[0-9]{1,15}(?:\.[0-9]{1,15})?|-)%?$"
_MOUNT = r"^(?P<mount>\S+?)\[(?P<kind2>OST|MDT):(?P<idx>[0-9]{1,9})\]$"
_STATUS = rf"^ *{_TARGET}_UUID *: *(?P<status>\S.*?) *$"
_DEVICE_NAME = rf"^{_TARGET}-(?:osc|mdc)(?:-|$)"
_INT32 = 2**31


def read_table(path: str | Path, source: str, date: dt.date | None, tz: str,
               parse: LineParser, first_time: FirstTime, tail: Tail | None = None
               ) -> tuple[pa.Table, list[Quarantined], ParseStats]:
    """One file's ost_health rows (no `date`), quarantine and counts: column-wise up to
    the snapshot of the first line outside the fast grammar, that snapshot and the rest by
    the source's `tail` (all column-wise without one); a file that cannot be read, by the
    source's line parser `parse`. `first_time`: the time of the lines before any BEGIN
    (`lfs_df.snapshot_time`)."""
    try:
        return fast_table(Path(path), source, date, tz, first_time, tail)
    except NotFast:
        rows, qs, stats = parse(path, date, tz)
        return pa.Table.from_pylist(rows, schema=table_schema("ost_health")), qs, stats


def fast_table(path: Path, source: str, date: dt.date | None, tz: str,
               first_time: FirstTime, tail: Tail | None = None
               ) -> tuple[pa.Table, list[Quarantined], ParseStats]:
    """`read_table`'s column-wise reading, with `tail` from the snapshot of the first line
    it does not read (NotFast there without a `tail`, or when the file cannot be read)."""
    lines = pa.concat_arrays(list(line_blocks(path)) or [pa.array([], pa.string())])
    try:
        first_ts = first_time(path, date, tz)
    except OSError as exc:
        raise NotFast(str(exc)) from exc
    n = len(lines)
    begin = pc.extract_regex(lines, _BEGIN).flatten()[0]     # null where no BEGIN line
    with ThreadPoolExecutor(READ_THREADS) as pool:
        parts = list(pool.map(lambda span: _part_rows(lines, begin, span, first_ts, source),
                              _spans(begin, n)))
    table = pa.concat_tables([t for t, _, _ in parts])
    other = np.concatenate([o for _, o, _ in parts])
    missed = np.concatenate([m for _, _, m in parts])
    bad: list[tuple[int, str, str]] = []
    n_other = len(other)
    if len(missed):
        if tail is None:
            raise NotFast("a line the column-wise reading does not take")
        table, n_other, bad = _with_tail(table, other, lines, begin, int(missed.min()),
                                         first_ts, tail)
    table, qs = _off_day(table, lines, date, str(path), source)
    qs = sorted(qs + [Quarantined(source, str(path), no, raw, why) for no, raw, why in bad],
                key=lambda q: q.line_no)
    table, dup = _last_per_target(table.drop_columns(["_line"]))
    if source == LCTL_DL:
        table = _failovers(table)
    stats = ParseStats(source, files=1, lines_read=n, lines_used=n - len(qs),
                       lines_quarantined=len(qs), rows=table.num_rows)
    if dup:
        stats.extra["duplicate_targets"] = dup
    if n_other:
        stats.extra["other_devices"] = n_other
    return table, qs, stats


def _with_tail(table: pa.Table, other: np.ndarray, lines: pa.StringArray, begin: pa.Array,
               missed: int, first_ts: dt.datetime, tail: Tail
               ) -> tuple[pa.Table, int, list[tuple[int, str, str]]]:
    """The column-wise rows before the snapshot of line `missed` (the first the fast
    grammar does not take; its snapshot starts at the last BEGIN before it, where the line
    parser's state is its first's) and `tail`'s rows of the lines from there; the other
    devices of both; the tail's bad lines."""
    begins = np.flatnonzero(np.asarray(pc.is_valid(begin.slice(0, missed + 1))))
    cut = int(begins[-1]) if len(begins) else 0     # a BEGIN line (its time), or the first
    rows, bad, more = tail(lines.slice(cut).to_pylist(), cut + 1, first_ts)
    tail_rows = pa.Table.from_pylist([{**r, "_line": r["_line"] - 1} for r in rows],
                                     schema=table.schema)          # `_line`: from 0
    kept = table.filter(pc.less(table.column("_line"), cut))
    return pa.concat_tables([kept, tail_rows]), int((other < cut).sum()) + more, bad


def _off_day(table: pa.Table, lines: pa.StringArray, date: dt.date | None, file: str,
             source: str) -> tuple[pa.Table, list[Quarantined]]:
    """The rows of snapshots on `date` (all without one), and the others' lines
    quarantined as the line parser does."""
    if date is None or table.num_rows == 0:
        return table, []
    on = pc.equal(pc.cast(table.column("ts"), pa.date32()), pa.scalar(date, pa.date32()))
    off = table.filter(pc.invert(on))
    if off.num_rows == 0:
        return table, []
    enc = pc.dictionary_encode(off.column("ts").combine_chunks())
    reasons = pc.take(pa.array([f"snapshot {t.replace(tzinfo=None).isoformat()}Z is not on {date}"
                                for t in enc.dictionary.to_pylist()]), enc.indices)
    at = off.column("_line").to_pylist()
    qs = [Quarantined(source, file, i + 1, raw, reason) for i, raw, reason in
          zip(at, lines.take(pa.array(at)).to_pylist(), reasons.to_pylist(), strict=True)]
    return table.filter(on), qs


def _spans(begin: pa.Array, n: int) -> list[tuple[int, int]]:
    """The file cut into READ_THREADS pieces of whole snapshots (each after the first starts
    at a BEGIN line)."""
    starts = np.flatnonzero(np.asarray(pc.is_valid(begin)))
    cuts = sorted({0, n, *(int(starts[np.searchsorted(starts, n * k // READ_THREADS)])
                           for k in range(1, READ_THREADS)
                           if np.searchsorted(starts, n * k // READ_THREADS) < len(starts))})
    return list(zip(cuts[:-1], cuts[1:], strict=True)) or [(0, n)]


def _part_rows(all_lines: pa.StringArray, all_begin: pa.Array, span: tuple[int, int],
               first_ts: dt.datetime, source: str
               ) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """The rows of the lines [start, stop) that the fast grammar takes, the lines (indices
    in the file) of other devices, and the lines it does not take (not printable ASCII, or
    outside the grammar: `_with_tail` reads from their snapshot on)."""
    start, stop = span
    lines, begin = all_lines.slice(start, stop - start), all_begin.slice(start, stop - start)
    printable = pc.or_(pc.ascii_is_printable(lines), pc.equal(lines, ""))
    blank = blank_lines(lines)
    fields = Fields(pc.utf8_trim(lines, " "), runs=True)   # aligned columns
    if source == LFS_DF:
        rows, used, other = _lfs_df(lines, fields)
    else:
        rows, used, other = _lctl_dl(fields)
    covered = all_of(printable, pc.or_(pc.or_(pc.is_valid(begin), blank), used))
    missed = np.flatnonzero(~np.asarray(covered)) + start
    ts = _line_times(begin, first_ts)
    taken = np.asarray(rows["_row"]) & np.asarray(printable)
    return (_rows(rows, ts, np.flatnonzero(taken), source, start),
            np.flatnonzero(np.asarray(other)) + start, missed)


def _lfs_df(lines: pa.StringArray, f: Fields
            ) -> tuple[dict[str, pa.Array], pa.Array, pa.Array]:
    """Per line: the row fields (`_row` where a line gives one), which lines are used, and
    which list other devices (none in `lfs df`)."""
    header = matches(lines, _LFS_HEADER)
    summary = matches(lines, _SUMMARY)
    uuid = _per_distinct(f.field(0), lambda v: pc.extract_regex(v, _UUID))
    mount = _per_distinct(f.field(5), lambda v: pc.extract_regex(v, _MOUNT))
    kind, kind2 = uuid.flatten()[2], mount.flatten()[1]
    hexes = uuid.flatten()[3]
    index = _hex_index(hexes)
    data = all_of(pc.equal(f.n, 6), pc.is_valid(uuid), pc.is_valid(mount),
                  matches(f.field(1), _KIB), matches(f.field(2), _KIB), matches(f.field(3), _KIB),
                  matches(f.field(4), _PCT), pc.equal(kind, kind2),
                  pc.equal(index, pc.cast(mount.flatten()[2], pa.int64())))
    maybe = pc.indices_nonzero(all_of(pc.invert(data), pc.match_substring(lines, ":")))
    status = _scatter(pc.extract_regex(lines.take(maybe), _STATUS), maybe, len(lines))
    is_status = all_of(pc.is_valid(status), pc.invert(data), pc.is_valid(_hex_index(
        status.flatten()[3])))
    st = status.flatten()
    text = pc.utf8_lower(st[4])
    text = when(pc.starts_with(text, "inactive"), "inactive", text)
    row = pc.or_(data, is_status)
    pct = pc.utf8_rtrim(f.field(4), "%")
    null_i = pa.scalar(None, pa.int64())
    kib = {name: when(data, pc.cast(when(data, f.field(i), "0"), pa.int64()), null_i)
           for i, name in ((1, "total_kib"), (2, "used_kib"), (3, "avail_kib"))}
    pct_v = when(all_of(data, pc.not_equal(pct, "-")),
                 pc.cast(when(all_of(data, pc.not_equal(pct, "-")), pct, "0"), pa.float64()),
                 pa.scalar(None, pa.float64()))
    cols = {"_row": row,
            "fs": when(data, uuid.flatten()[1], st[1]),
            "target": when(data, uuid.flatten()[0], st[0]),
            "kind": when(data, kind, st[2]),
            "target_index": when(data, index, _hex_index(st[3])),
            "mount": when(data, mount.flatten()[0], pa.scalar(None, pa.string())),
            "use_pct": pct_v, "status": when(data, pa.scalar(None, pa.string()), text), **kib}
    return cols, pc.or_(pc.or_(header, summary), row), pa.array(np.zeros(len(lines), bool))


def _lctl_dl(f: Fields) -> tuple[dict[str, pa.Array], pa.Array, pa.Array]:
    """Per line: the row fields of osc/mdc devices, which lines are used, which list other
    devices."""
    nid = f.field(6)
    device = all_of(pc.or_(pc.equal(f.n, 6), all_of(pc.equal(f.n, 7),
                                                    matches(nid, r"^\S+@\S+$"))),
                    matches(f.field(0), r"^[0-9]+$"), matches(f.field(5), r"^[0-9]+$"))
    dtype = pc.utf8_lower(f.field(2))
    client = all_of(device, pc.is_in(dtype, pa.array(["osc", "mdc"])))
    other = all_of(device, pc.invert(client))
    name = pc.extract_regex(f.field(3), _DEVICE_NAME)
    parts = name.flatten()
    want = when(pc.equal(dtype, "osc"), "OST", "MDT")
    index = _hex_index(parts[3])
    row = all_of(client, pc.is_valid(name), pc.equal(parts[2], want), pc.is_valid(index))
    cols = {"_row": row, "fs": parts[1], "target": parts[0], "kind": parts[2],
            "target_index": index, "status": f.field(1), "server_nid": nid}
    return cols, pc.or_(row, other), pc.fill_null(other, False)


def _per_distinct(values: pa.Array, fn) -> pa.Array:
    """fn of each distinct value once (a snapshot file repeats its targets and mounts)."""
    enc = pc.dictionary_encode(values)
    return pc.take(fn(enc.dictionary), enc.indices)


def _scatter(values: pa.Array, at: pa.Array, n: int) -> pa.Array:
    """An array of n, values at positions `at`, null elsewhere."""
    where = np.full(n, -1, np.int64)
    where[np.asarray(at)] = np.arange(len(at))
    return values.take(pa.array(where, mask=where < 0))


def _hex_index(hexes: pa.Array) -> pa.Array:
    """int(hex, 16) of each distinct text once (null beyond a 32-bit integer)."""
    enc = pc.dictionary_encode(hexes)
    values = [int(h, 16) for h in enc.dictionary.to_pylist()]
    return pc.take(pa.array([v if v < _INT32 else None for v in values], pa.int64()),
                   enc.indices)


def _line_times(begin: pa.Array, first: dt.datetime) -> np.ndarray:
    """Each line's snapshot time in epoch microseconds: its last BEGIN's, else `first`."""
    has = np.asarray(pc.is_valid(begin))
    epochs = np.asarray(pc.cast(begin.filter(pc.is_valid(begin)), pa.int64())) * 1_000_000
    first_us = (first - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    times = np.concatenate([[first_us], epochs])
    return times[np.cumsum(has)]


def _rows(cols: dict[str, pa.Array], ts: np.ndarray, idx: np.ndarray, source: str,
          first: int) -> pa.Table:
    """The rows' table (ost_health columns but `date`, and `_line`: the line's index in
    the file, the rows' lines being `first` + idx)."""
    take = pa.array(idx)
    arrays = []
    for field in table_schema("ost_health"):
        if field.name == "source":
            arrays.append(pa.repeat(pa.scalar(source), len(idx)))
        elif field.name == "ts":
            arrays.append(pa.array(ts[idx]).cast(pa.timestamp("us"))
                          .cast(pa.timestamp("us", tz="UTC")))
        elif field.name in cols:
            arrays.append(cols[field.name].take(take).cast(field.type))
        else:
            arrays.append(pa.nulls(len(idx), field.type))
    return pa.Table.from_arrays([*arrays, pa.array(idx + first, pa.int64())],
                                names=[*table_schema("ost_health").names, "_line"])


def _last_per_target(table: pa.Table) -> tuple[pa.Table, int]:
    """Per snapshot and target its last row, at its first row's place (the line parser's
    dict of targets per snapshot time); and how many rows were replaced."""
    everyone = np.arange(table.num_rows)
    snap = pd.factorize(np.asarray(table.column("ts").cast(pa.int64())))[0]
    target, n_targets = _codes(table.column("target"), everyone)
    key = pd.factorize(snap * n_targets + target)[0]        # (ts, target)
    place = _first_of(key)[key]                             # its first row
    later = len(key) - 1 - _first_of(pd.factorize(key[::-1])[0])   # last rows, reversed
    last = np.zeros(len(key), bool)
    last[later] = True
    keep = np.flatnonzero(last)
    order = keep[np.lexsort((place[keep], _first_of(snap)[snap][keep]))]
    return table.take(pa.array(order)), table.num_rows - len(keep)


def _failovers(table: pa.Table) -> pa.Table:
    """lctl_dl.flag_failovers: per snapshot and file system, OSTs of a server whose OST
    count is not the mode (ties: the count seen first) are failed over; MDTs null. In
    numpy over integer codes (pandas' groupbys and merges over strings took 77 ms of a
    66k-line ingest's 0.16 s)."""
    ost = np.asarray(pc.fill_null(pc.equal(table.column("kind"), "OST"), False))
    ip = pc.list_element(pc.split_pattern(table.column("server_nid"), "@", max_splits=1), 0)
    rows = np.flatnonzero(ost & np.asarray(pc.is_valid(ip)))
    ts = pd.factorize(np.asarray(table.column("ts").cast(pa.int64()))[rows])[0]
    fs, n_fs = _codes(table.column("fs"), rows)
    snap = pd.factorize(ts * n_fs + fs)[0]                 # (ts, fs) of each OST row
    ips, n_ips = _codes(ip, rows)
    server = pd.factorize(snap * n_ips + ips)[0]           # (ts, fs, ip), first seen first
    count = np.bincount(server)
    snap_of = snap[_first_of(server)]
    # each (snapshot, count): how many servers have it, and its server seen first
    kind = pd.factorize(snap_of * (count.max(initial=0) + 1) + count)[0]
    freq, first = np.bincount(kind), _first_of(kind)
    best = np.lexsort((first, -freq, snap_of[first]))      # per snapshot: the mode first
    at = snap_of[first][best]
    top = best[np.r_[True, at[1:] != at[:-1]]] if len(best) else best    # no OST with a NID
    mode = np.zeros(int(snap.max(initial=-1)) + 1, np.int64)
    mode[snap_of[first][top]] = count[first][top]
    value = np.zeros(table.num_rows, bool)
    value[rows] = count[server] != mode[snap]
    valid = np.zeros(table.num_rows, bool)
    valid[rows] = True
    col = pa.array(value, pa.bool_(), mask=~valid)
    return table.set_column(table.schema.get_field_index("failed_over"), "failed_over", col)


def _codes(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense codes of the values at `rows` (null one of them) and how many there are."""
    enc = pc.dictionary_encode(values)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    codes = pd.factorize(np.asarray(pc.fill_null(enc.indices, -1))[rows])[0]
    return codes, int(codes.max(initial=-1)) + 1


def _first_of(codes: np.ndarray) -> np.ndarray:
    """Per code, the position of its first occurrence; codes numbered in the order they
    first occur (pd.factorize's), so a first occurrence is a code above all before it."""
    if not len(codes):
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.r_[True, codes[1:] > np.maximum.accumulate(codes)[:-1]])
