"""LWFS client traces (compute nodes) -> `raw_lwfs_trace` rows (pure Python).

Format pinned in FORMATS.md §4 (no public sample), one file per compute node per UTC day,
`beacon/lwfs-client/<node>/<YYYY-MM-DD>.log[.gz]`:

    <ip> <UTC ms Z> READ|WRITE <fd> <offset> <size> [<count>]
    <ip> <UTC ms Z> <OP> <fd> [path=<path>] [count=<n>]      # OPEN CLOSE STAT MKDIR UNLINK ...
    <ip> <UTC ms Z> LSEEK <fd> [<offset>]

READ/WRITE: `count` requests of `size` bytes from `offset` (first-pass compression merged
them; raw traces have no count or count 1; `count=<n>` is accepted too). Metadata lines
carry `path=` (the rest of the line, spaces allowed, minus a trailing `count=<n>`) and count
1 unless `count=` says otherwise (the simulator writes one line per node, second and
operation kind). node = the site's name of the IP (null when unknown, not an error). The
trace holds no cumulative counters: nothing to delta, no D−1 seed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.beacon_layers import (
    MAX_LONG,
    Sample,
    judge_line,
    parse_samples,
    parse_utc,
    site_names,
)
from lassi.ingest.columnar import (
    PRINTABLE_RE,
    Fields,
    NotFast,
    all_of,
    line_blocks,
    matches,
    names_of,
    on_day,
    row_schema,
    rows_table,
    slow_lines,
    utc_micros,
    when,
)

from lassi.core.quarantine import ParseStats, Quarantined

if TYPE_CHECKING:
    from lassi.core.config import Site

SOURCE = "lwfs-client"
BATCH_CHARS = 1 << 24     # characters of small files parsed in one fast-path call
# a file's (file, prev, day) task, its quarantined lines and its stats
FileResult = tuple[tuple[str, str | None, date | None], list[Quarantined], ParseStats]
DATA_OPS = frozenset({"READ", "WRITE"})
_OP = re.compile(r"[A-Z][A-Z0-9_]*")


def _int(text: str, what: str, minimum: int = 0) -> int:
    """A 64-bit integer >= minimum, else ValueError."""
    if not (text.isascii() and text.isdigit()) or not minimum <= int(text) <= MAX_LONG:
        raise ValueError(f"{what} {text!r} is not a 64-bit integer >= {minimum}")
    return int(text)


def _count_token(text: str) -> int:
    return _int(text[6:] if text.startswith("count=") else text, "count", 1)


def _data(parts: list[str], row: dict) -> None:
    """READ/WRITE fields: fd offset size [count]."""
    if not 6 <= len(parts) <= 7:
        raise ValueError(f"{parts[2]}: {len(parts)} fields, expected "
                         "<ip> <ts> <op> <fd> <offset> <size> [<count>]")
    row.update(fd=parts[3], offset=_int(parts[4], "offset"), size=_int(parts[5], "size"),
               count=_count_token(parts[6]) if len(parts) == 7 else 1)


def _meta(line: str, parts: list[str], row: dict) -> None:
    """Metadata fields: [fd] [path=<p>] [count=<n>] (LSEEK: fd [offset])."""
    rest = parts[3:]
    if rest and rest[-1].startswith("count="):
        row["count"] = _count_token(rest.pop())
    if rest and not rest[0].startswith("path="):
        row["fd"] = rest.pop(0)
    if not rest:
        return
    if rest[0].startswith("path="):
        start = line.index("path=", len(parts[0]) + len(parts[1]) + len(parts[2]) + 2)
        path = line[start + 5:].rstrip()
        if "count" in row and path.endswith(parts[-1]):
            path = path[: -len(parts[-1])].rstrip()
        if not path:
            raise ValueError("empty path=")
        row["path"] = path
    elif row["op"] == "LSEEK" and len(rest) == 1:
        row["offset"] = _int(rest[0], "offset")
    else:
        raise ValueError(f"{row['op']}: unexpected field {rest[0]!r} (expected path=<p>)")


def line_parser(names: dict[str, str]):
    """Parser of one trace line (names: IP -> compute node name)."""

    def parse(line: str) -> Sample:
        parts = line.split()
        if len(parts) < 3:
            raise ValueError(f"{len(parts)} fields, expected <ip> <UTC> <op> ...")
        ts = parse_utc(parts[1])
        if ts is None:
            raise ValueError(f"bad UTC time {parts[1]!r} (expected YYYY-MM-DDTHH:MM:SS.fffZ)")
        op = parts[2]
        if not _OP.fullmatch(op):
            raise ValueError(f"bad operation {op!r} (expected upper case, e.g. READ)")
        ip = parts[0]
        row = {"node": names.get(ip), "ip": ip, "ts": ts, "op": op, "fd": None,
               "offset": None, "size": None, "count": 1, "path": None}
        if op in DATA_OPS:
            _data(parts, row)
        else:
            _meta(line, parts, row)
        return Sample((), ts, (), row)

    return parse


def parse_file(path: str | Path, site: Site | None = None, prev: str | Path | None = None,
               day: date | None = None) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one compute node's trace file (`.gz` transparently); lines of another UTC day
    than `day` (when given) are quarantined; `prev` is accepted for symmetry and ignored."""
    samples, q, stats = parse_samples(path, SOURCE, line_parser(site_names(site)), day)
    file = str(path)
    rows = []
    for s in samples:
        s.row["file"] = file
        rows.append(s.row)
    stats.rows = len(rows)
    return rows, q, stats


# --------------------------------------------------------------------------- fast path
def _number(arr: pa.Array, minimum: int = 0) -> pa.BooleanArray:
    """ASCII decimal of at most 18 digits (always a LongType), >= 1 when `minimum`."""
    ok = all_of(pc.ascii_is_decimal(arr), pc.less_equal(pc.utf8_length(arr), 18))
    if minimum:
        ok = all_of(ok, pc.greater(pc.utf8_length(pc.utf8_ltrim(arr, "0")), 0))
    return ok


def _count(arr: pa.Array, prefix: bool) -> pa.BooleanArray:
    """A count token: `count=<n>` (or a bare `<n>` too when not `prefix`), n >= 1."""
    has = pc.fill_null(pc.starts_with(arr, "count="), False)
    bare = pc.utf8_slice_codeunits(arr, 6) if prefix else when(has, pc.utf8_slice_codeunits(
        arr, 6), arr)
    return all_of(has if prefix else pc.is_valid(arr), _number(bare, 1))


def _fast_block(f: Fields, day: date | None, names: dict[str, str], file: str | pa.Array,
                schema: pa.Schema) -> tuple[pa.BooleanArray, pa.Table]:
    """The lines of a block the strict grammar covers (mask) and their rows (`file`: the
    file of every line, or one name for all).

    Strict grammar: printable ASCII fields one space apart; `<ip> <UTC>Z <OP> <fd>` then,
    for READ/WRITE, `<offset> <size> [[count=]<n>]`, otherwise `[path=<p>] [count=<n>]`
    (an fd holding `path=` or starting with `count=`, LSEEK offsets, paths with spaces or
    non-ASCII bytes, and every malformed line are left to `line_parser`)."""
    n = f.n
    ip, ts_text, op, fd, a4, a5, a6 = (f.field(i) for i in range(7))
    ts = utc_micros(ts_text)
    data = pc.fill_null(pc.is_in(op, value_set=pa.array(sorted(DATA_OPS))), False)
    data_ok = all_of(data, pc.or_(pc.equal(n, 6), pc.equal(n, 7)), _number(a4), _number(a5),
                     pc.or_(pc.equal(n, 6), _count(a6, prefix=False)))
    path = all_of(pc.starts_with(a4, "path="), pc.greater(pc.utf8_length(a4), 5))
    four = pc.equal(n, 4)
    five = all_of(pc.equal(n, 5), pc.or_(path, _count(a4, prefix=True)))
    six = all_of(pc.equal(n, 6), path, _count(a5, prefix=True))
    meta_ok = all_of(pc.invert(data), pc.invert(matches(fd, r"^count=|path=")),
                     pc.or_(pc.or_(four, five), six))
    fast = all_of(matches(f.lines, PRINTABLE_RE), matches(op, _OP.pattern.join("^$")),
                  pc.is_valid(ts), on_day(ts, day), pc.or_(data_ok, meta_ok))
    ip, ts, op, fd, a4, a5, a6, n, data = (pc.filter(a, fast)
                                           for a in (ip, ts, op, fd, a4, a5, a6, n, data))
    null = pa.scalar(None, pa.int64())
    count = when(data, when(pc.equal(n, 7), a6, "1"),
                 when(pc.equal(n, 6), a5,
                      when(pc.starts_with(a4, "count="), a4, "1")))
    count = pc.cast(pc.replace_substring_regex(count, "^count=", ""), pa.int64())
    cols = {
        "node": names_of(ip, names), "ip": ip, "ts": ts, "op": op, "fd": fd,
        "offset": when(data, pc.cast(when(data, a4, "0"), pa.int64()), null),
        "size": when(data, pc.cast(when(data, a5, "0"), pa.int64()), null),
        "count": count,
        "path": when(pc.starts_with(a4, "path="), pc.utf8_slice_codeunits(a4, 5),
                     pa.scalar(None, pa.string())),
        "file": (pa.repeat(pa.scalar(file, pa.string()), len(ip)) if isinstance(file, str)
                 else pc.filter(file, fast)),
    }
    return fast, pa.Table.from_arrays([cols[c].cast(schema.field(c).type)
                                       for c in schema.names], schema=schema)


def parse_file_arrow(path: str | Path, site: Site | None = None,
                     prev: str | Path | None = None, day: date | None = None
                     ) -> tuple[pa.Table, list[Quarantined], ParseStats]:
    """`parse_file` with the columnar fast path (`lassi.ingest.columnar`): the same rows,
    as an Arrow table of `row_schema("raw_lwfs_trace")`; lines outside the strict grammar
    go through `line_parser`, an unreadable file through `parse_file` as a whole."""
    schema = row_schema("raw_lwfs_trace")
    names = site_names(site)
    parse = line_parser(names)
    file = str(path)
    stats = ParseStats(SOURCE, files=1)
    q: list[Quarantined] = []
    tables, slow = [], []
    first = 1
    try:
        for lines in line_blocks(path):
            fast, table = _fast_block(Fields(lines), day, names, file, schema)
            tables.append(table)
            stats.lines_read += table.num_rows
            stats.lines_used += table.num_rows
            for line_no, line in slow_lines(lines, fast, first):
                s = judge_line(parse, SOURCE, file, line_no, line, day, q, stats)
                if s is not None:
                    s.row["file"] = file
                    slow.append(s.row)
            first += len(lines)
    except NotFast:
        rows, q, stats = parse_file(path, site, prev, day)
        return rows_table(rows, schema), q, stats
    out = pa.concat_tables([*tables, rows_table(slow, schema)])
    stats.rows = out.num_rows
    return out, q, stats


def parse_files_arrow(tasks: list[tuple[str, str | None, date | None]], site: Site | None
                      ) -> Iterator[tuple[pa.Table, list[FileResult]]]:
    """`parse_file_arrow` of many (file, prev, day) tasks, small files together: their lines
    go through the strict grammar in one block of up to BATCH_CHARS characters (a node's
    daily trace is a few thousand lines; per file, the ~250 Arrow calls of a block would
    cost more than the lines). Yields each batch's rows with every file's (task,
    quarantine, stats); the same rows, quarantine and accounting as file by file. A file
    bigger than one read block, or unreadable to its end, is parsed on its own."""
    schema = row_schema("raw_lwfs_trace")
    names = site_names(site)
    parse = line_parser(names)
    batch: list[tuple[tuple, pa.StringArray]] = []
    chars = 0

    def flush() -> tuple[pa.Table, list[FileResult]]:
        nonlocal chars
        out = _batch(batch, names, parse, schema)
        batch.clear()
        chars = 0
        return out

    for task in tasks:
        file, prev, day = task
        if batch and batch[0][0][2] != day:
            yield flush()
        blocks = line_blocks(file)
        try:
            first = next(blocks, pa.array([], pa.string()))
            alone = next(blocks, None) is not None
        except NotFast:
            alone = True
        blocks.close()
        if alone:
            table, q, st = parse_file_arrow(file, site, prev, day)
            yield table, [(task, q, st)]
            continue
        batch.append((task, first))
        chars += first.nbytes
        if chars >= BATCH_CHARS:
            yield flush()
    if batch:
        yield flush()


def _batch(batch: list[tuple[tuple, pa.StringArray]], names: dict[str, str], parse,
           schema: pa.Schema) -> tuple[pa.Table, list[FileResult]]:
    """One fast-path call over the lines of several whole files (same day): rows, and per
    file its task, quarantine (its own line numbers) and stats."""
    day = batch[0][0][2]
    sizes = np.array([len(lines) for _, lines in batch])
    starts = np.concatenate([[0], np.cumsum(sizes)])
    files = pa.array([task[0] for task, _ in batch], pa.string())
    which = pa.array(np.repeat(np.arange(len(batch), dtype=np.int32), sizes))
    lines = pa.concat_arrays([lines for _, lines in batch])
    fast, table = _fast_block(Fields(lines), day, names, pc.take(files, which), schema)
    fast_per_file = np.bincount(pc.filter(which, fast).to_numpy(zero_copy_only=False),
                                minlength=len(batch))
    results: list[FileResult] = []
    for (task, _), n_fast in zip(batch, fast_per_file, strict=True):
        results.append((task, [], ParseStats(SOURCE, files=1, lines_read=int(n_fast),
                                             lines_used=int(n_fast), rows=int(n_fast))))
    slow = []
    for i, line in slow_lines(lines, fast, 0):
        k = int(np.searchsorted(starts, i, side="right")) - 1
        task, q, stats = results[k]
        s = judge_line(parse, SOURCE, task[0], i - int(starts[k]) + 1, line, day, q, stats)
        if s is not None:
            s.row["file"] = task[0]
            slow.append(s.row)
            stats.rows += 1
    return pa.concat_tables([table, rows_table(slow, schema)]), results
