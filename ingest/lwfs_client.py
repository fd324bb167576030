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
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from lassi.ingest.beacon_layers import MAX_LONG, Sample, parse_samples, parse_utc, site_names

from lassi.core.quarantine import ParseStats, Quarantined

if TYPE_CHECKING:
    from lassi.core.config import Site

SOURCE = "lwfs-client"
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
