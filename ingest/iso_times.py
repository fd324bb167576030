"""ISO-8601 times read from an Arrow string array's bytes with numpy: no regex, no
`strptime`, no Python object per value.

The shapes read are the fixed-width ones the columnar readers take:
`YYYY-MM-DD[T| ]HH:MM:SS`, then `.fff` or `.ffffff` or nothing, then `Z`, `+HH:MM`,
`-HH:MM` or nothing. A value counts only when it names a real instant as Python's
`datetime` reads it (year 1-9999, the month's days, hours to 23, no leap second), so a
caller's line parser never disagrees with it. Each length of text has one shape, which
is how the fraction and the offset are found.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from lassi.ingest.arrow_bytes import string_bytes

# text length -> (fraction digits, offset: 0 none, 1 `Z`, 2 `+HH:MM`)
_SHAPES = {19: (0, 0), 20: (0, 1), 25: (0, 2), 23: (3, 0), 24: (3, 1), 29: (3, 2),
           26: (6, 0), 27: (6, 1), 32: (6, 2)}
_WIDTH = 32
_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_MONTH_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
_FRACTION = np.zeros(_WIDTH + 1, np.int32)
_ZONE = np.zeros(_WIDTH + 1, np.int8)
_KNOWN = np.zeros(_WIDTH + 1, bool)
for _n, (_f, _o) in _SHAPES.items():
    _FRACTION[_n], _ZONE[_n], _KNOWN[_n] = _f, _o, True


@dataclass
class IsoTimes:
    """Per value: `wall` the written wall time as epoch microseconds (read as if UTC),
    `offset` the written UTC offset in seconds (0 for `Z` and for none), `zone` 0 without
    an offset, 1 for `Z`, 2 for `+HH:MM`; `ok` where the value has one of the shapes
    (`T` or a space between date and time) and names a real instant."""

    wall: np.ndarray
    offset: np.ndarray
    zone: np.ndarray
    ok: np.ndarray
    spaced: np.ndarray        # a space, not `T`, between date and time


def read_iso(text: pa.Array) -> IsoTimes:
    """The ISO-8601 times of a string array (nulls: not ok)."""
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    if not pa.types.is_string(text.type):
        text = text.cast(pa.string())
    offsets, raw = string_bytes(text)
    return iso_at(raw, offsets[:-1], np.diff(offsets),
                  np.asarray(text.is_valid()) if text.null_count else None)


def iso_at(raw: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
           valid: np.ndarray | None = None) -> IsoTimes:
    """The ISO-8601 times written in `raw[starts[i]:starts[i] + lengths[i]]` (`valid`:
    where there is one at all)."""
    shape = np.where(lengths <= _WIDTH, lengths, 0)
    known = _KNOWN[shape]
    if valid is not None:
        known &= valid
    width = max(19, int(lengths[known].max(initial=19)))
    if int(starts.max(initial=0)) + width > len(raw):
        raw = np.concatenate([raw, np.zeros(width, np.uint8)])
    b = np.lib.stride_tricks.sliding_window_view(raw, width)[starts]   # row per value
    b[~known] = 0                     # bytes past a value's end: never read for its shape
    frac_digits, zone = _FRACTION[shape], _ZONE[shape]
    d = b - np.uint8(48)                       # a byte below `0` wraps past 9
    ok = known & np.all(d[:, _DIGITS] <= 9, axis=1)
    ok &= (b[:, 4] == 45) & (b[:, 7] == 45) & (b[:, 13] == 58) & (b[:, 16] == 58)
    spaced = b[:, 10] == 32
    ok &= (b[:, 10] == 84) | spaced
    year, month, day, hour, minute, second = (
        _number(d, cols) for cols in ((0, 1, 2, 3), (5, 6), (8, 9), (11, 12), (14, 15),
                                      (17, 18)))
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_ok = (month >= 1) & (month <= 12)
    last = _MONTH_DAYS[np.where(month_ok, month, 1) - 1] + ((month == 2) & leap)
    ok &= (year >= 1) & month_ok & (day >= 1) & (day <= last)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    frac = _fraction(b, d, frac_digits)
    ok &= frac >= 0
    tail = np.where(frac_digits > 0, frac_digits + 20, 19)      # where the offset starts
    offset, offset_ok = _offset(b, d, tail, zone)
    ok &= offset_ok
    wall = ((_days(year, month, day).astype(np.int64) * 86_400
             + (hour * 3600 + minute * 60 + second)) * 1_000_000 + frac)
    return IsoTimes(np.where(ok, wall, 0), np.where(ok, offset, 0), zone, ok, spaced & ok)


def _number(d: np.ndarray, cols: tuple[int, ...]) -> np.ndarray:
    """The decimal number written in these digit columns."""
    out = d[:, cols[0]].astype(np.int32)
    for c in cols[1:]:
        out = out * 10 + d[:, c]
    return out


def _fraction(b: np.ndarray, d: np.ndarray, digits: np.ndarray) -> np.ndarray:
    """The fraction in microseconds; -1 where it is not `.` and its digits."""
    out = np.zeros(len(b), np.int64)
    for width, scale in ((3, 1000), (6, 1)):
        rows = np.flatnonzero(digits == width)
        if not len(rows):
            continue
        part = d[rows, 20:20 + width]
        good = (b[rows, 19] == 46) & np.all(part <= 9, axis=1)
        out[rows] = np.where(good, _number(part, tuple(range(width))) * scale, -1)
    return out


def _offset(b: np.ndarray, d: np.ndarray, tail: np.ndarray, zone: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """The written UTC offset in seconds (east positive) and where it reads."""
    ok = zone == 0
    offset = np.zeros(len(b), np.int64)
    rows = np.flatnonzero(zone == 1)
    ok[rows] = b[rows, tail[rows]] == 90                      # `Z`
    rows = np.flatnonzero(zone == 2)
    if len(rows):
        at = tail[rows][:, None] + np.arange(6)
        c, e = b[rows[:, None], at], d[rows[:, None], at]
        hours, minutes = _number(e, (1, 2)), _number(e, (4, 5))
        ok[rows] = (((c[:, 0] == 43) | (c[:, 0] == 45)) & (c[:, 3] == 58)
                    & np.all(e[:, [1, 2, 4, 5]] <= 9, axis=1) & (hours <= 23) & (minutes <= 59))
        offset[rows] = np.where(c[:, 0] == 45, -1, 1) * (hours * 3600 + minutes * 60)
    return offset, ok


def _days(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's days_from_civil)."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * np.where(m > 2, m - 3, m + 9) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


# `MM/DD/YYYY HH:MM:SS`: the digits of year, month, day, hour, minute, second
_MDY_DIGITS = ((6, 7, 8, 9), (0, 1), (3, 4), (11, 12), (14, 15), (17, 18))
_MDY_SEPARATORS = ((2, 47), (5, 47), (10, 32), (13, 58), (16, 58))   # `/`, `/`, ` `, `:`, `:`
_MDY_WIDTH = 19


def read_mdy_prefix(text: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """The `MM/DD/YYYY HH:MM:SS` each value begins with (a PBS record's time), as wall
    epoch microseconds (read as if UTC), and where it names a real time as `datetime`
    reads it (year 1-9999, the month's days, hours to 23, no leap second). Only the 19
    bytes at each value's start are read (copied row by row, not the whole text)."""
    offsets, raw = string_bytes(text)
    starts = offsets[:-1].astype(np.int64)
    ok = np.diff(offsets) >= _MDY_WIDTH
    if text.null_count:
        ok &= np.asarray(text.is_valid())
    if not ok.any():
        return np.zeros(len(text), np.int64), ok
    rows = np.lib.stride_tricks.sliding_window_view(raw, _MDY_WIDTH)
    b = rows[np.where(ok, starts, 0)]            # (values, 19) bytes
    d = b - np.uint8(48)                         # a byte below `0` wraps past 9
    digits = [c for cols in _MDY_DIGITS for c in cols]
    ok &= np.all(d[:, digits] <= 9, axis=1)
    for col, byte in _MDY_SEPARATORS:
        ok &= b[:, col] == byte
    year, month, day, hour, minute, second = (_number(d, cols) for cols in _MDY_DIGITS)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_ok = (month >= 1) & (month <= 12)
    last = _MONTH_DAYS[np.where(month_ok, month, 1) - 1] + ((month == 2) & leap)
    ok &= (year >= 1) & month_ok & (day >= 1) & (day <= last)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    wall = ((_days(year, month, day).astype(np.int64) * 86_400
             + (hour * 3600 + minute * 60 + second)) * 1_000_000)
    return np.where(ok, wall, 0), ok
