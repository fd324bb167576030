"""Beacon MDS lines read from a block's bytes (`byte_fields`): the fast path of the `mds`
layer (`beacon_columnar.MDS`).

The fast grammar is `beacon_columnar._mds_fast`'s: `<source> <UTC> open=<n> close=<n> ...`,
printable ASCII, 18 fields one space apart, every op of BEACON_MDS_OPS once and in that
order, each count of 1-18 digits, the time on the file's day. Found by position instead of
split into 18 Arrow strings a line, the block's lines are read in about half the time (an
MDS line is 16 counters, ~230 bytes). Every other line is left to the layer's line parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import pyarrow as pa
from lassi.ingest.byte_fields import (
    MAX_DIGITS,
    byte_lines,
    decimals,
    prefix_words,
    printable,
    split_at_spaces,
    starts_with,
    strings_at,
)
from lassi.ingest.columnar import on_day_micros, utc_micros_at

from lassi.core.schemas import BEACON_MDS_OPS

_PREFIXES = prefix_words([op + "=" for op in BEACON_MDS_OPS])
_PREFIX_LEN = np.array([len(op) + 1 for op in BEACON_MDS_OPS], np.int32)


@dataclass(frozen=True)
class MdsLines:
    """The lines of a block in the fast grammar: `rows` their indices among the block's
    `lines`, with their source, UTC time (epoch µs) and counters (rows x ops)."""

    lines: int
    rows: np.ndarray
    source: pa.StringArray
    ts: np.ndarray
    counts: np.ndarray


def read_block(data: bytes | bytearray | memoryview, day: date | None) -> MdsLines | None:
    """The fast lines of whole lines' bytes (`columnar.raw_blocks`), or None when the block
    needs `columnar.block_lines` (a carriage return)."""
    lines = byte_lines(data)
    if lines is None:
        return None
    ops = len(BEACON_MDS_OPS)
    rows, spaces = split_at_spaces(lines, ops + 1)
    first = lines.starts[rows]
    ok = printable(lines)[rows] & (spaces[:, 0] > first)          # a source
    at = spaces[:, 1:] + 1                                        # each op's field
    end = np.empty_like(at)
    end[:, :-1] = spaces[:, 2:]
    end[:, -1] = lines.ends[rows]
    digits = end - at - _PREFIX_LEN
    ok &= ((digits >= 1) & (digits <= MAX_DIGITS)).all(axis=1)
    ok &= starts_with(lines, at, _PREFIXES)
    counts, good = decimals(lines, end, np.clip(digits, 0, MAX_DIGITS))
    ok &= good.all(axis=1)
    ts, ts_ok = utc_micros_at(lines.buf, spaces[:, 0] + 1, spaces[:, 1] - spaces[:, 0] - 1)
    ok &= ts_ok & on_day_micros(ts, day)
    keep = np.flatnonzero(ok)
    return MdsLines(len(lines), rows[keep],
                    strings_at(lines, first[keep], spaces[keep, 0]), ts[keep], counts[keep])
