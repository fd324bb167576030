"""ISO-8601 times read from bytes with numpy (`iso_times.read_iso`, behind
`columnar.utc_micros` and `columnar.iso_micros`) and PBS's `MM/DD/YYYY HH:MM:SS` record
times (`read_mdy_prefix`) against Python's `datetime`: edge dates by hand, then random
texts near the shapes, each read as Python reads it."""

from __future__ import annotations

import datetime as dt
import random
import re

import numpy as np
import pyarrow as pa
from lassi.ingest import alps, columnar
from lassi.ingest.iso_times import read_iso, read_mdy_prefix

from tests.test_fuzz_ingest import SEED

_SHAPE = re.compile(r"(?P<wall>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d{3}|\.\d{6})?)"
                    r"(?P<off>Z|[+-]\d\d:\d\d)?", re.ASCII)
_EPOCH = dt.datetime(1970, 1, 1)
_US = dt.timedelta(microseconds=1)


def python(text: str | None) -> tuple[int, int, int] | None:
    """(wall µs as if UTC, offset s, zone kind) as Python reads the text, or None."""
    m = _SHAPE.fullmatch(text or "")
    if not m:
        return None
    off = m["off"] or ""
    if off[1:] and (int(off[1:3]) > 23 or int(off[4:6]) > 59):
        return None
    try:
        wall = dt.datetime.fromisoformat(m["wall"].replace(" ", "T"))
    except ValueError:
        return None
    seconds = 0 if len(off) < 2 else (1 if off[0] == "+" else -1) * (
        int(off[1:3]) * 3600 + int(off[4:6]) * 60)
    return (wall - _EPOCH) // _US, seconds, {"": 0, "Z": 1}.get(off, 2)


def _check(texts: list[str | None]) -> None:
    iso = read_iso(pa.array(texts, pa.string()))
    for i, text in enumerate(texts):
        want = python(text)
        got = (int(iso.wall[i]), int(iso.offset[i]), int(iso.zone[i])) if iso.ok[i] else None
        assert got == want, text


EDGES = [
    "2018-09-10T06:16:52Z", "2018-09-10 06:16:52", "2024-02-29T23:59:59.999999+05:30",
    "2023-02-29T00:00:00", "1900-02-29T00:00:00", "2000-02-29T00:00:00", "2018-04-31T00:00:00",
    "2018-12-31T23:59:60Z", "2018-12-31T24:00:00", "0000-01-01T00:00:00", "0001-01-01T00:00:00",
    "9999-12-31T23:59:59.999999Z", "2018-13-01T00:00:00", "2018-00-10T00:00:00",
    "2018-09-00T00:00:00", "2018-09-10T06:16:52.1Z", "2018-09-10T06:16:52.12345Z",
    "2018-09-10T06:16:52+24:00", "2018-09-10T06:16:52-23:59", "2018-09-10T06:16:52+05:60",
    "2018-09-10T06:16:52+0530", "2018-09-10t06:16:52z", "2018-09-10T06:16:52.125-03:30",
    "2018-09-10T06:16:52 ", " 2018-09-10T06:16:52", "2018/09/10T06:16:52", "", None,
    "2018-09-10T06:16:5x", "2018-09-10T06:16:52.12xZ", "2018-09-10T06:16:52Zx",
    "1969-12-31T23:59:59.999999Z", "1600-03-01T00:00:00", "1582-10-10T00:00:00",
]


def test_edge_dates_read_as_python_reads_them():
    _check(EDGES)


def _near(rng: random.Random, base: str) -> str:
    """A text near `base`: characters replaced, dropped or added."""
    chars = list(base)
    for _ in range(rng.randrange(1, 3)):
        at = rng.randrange(len(chars) + 1)
        pick = rng.choice("0123456789-:T .Z+x/")
        kind = rng.randrange(3)
        if kind == 0 and at < len(chars):
            chars[at] = pick
        elif kind == 1 and at < len(chars):
            del chars[at]
        else:
            chars.insert(at, pick)
    return "".join(chars)


def test_random_texts_near_the_shapes_read_as_python_reads_them():
    rng = random.Random(SEED)
    texts = []
    for _ in range(20_000):
        t = _EPOCH + dt.timedelta(seconds=rng.randrange(-2_500_000_000, 8_000_000_000),
                                  microseconds=rng.randrange(1_000_000))
        frac = rng.choice(["", f".{t.microsecond // 1000:03d}", f".{t.microsecond:06d}"])
        off = rng.choice(["", "Z", "+05:30", "-11:00", "+00:00"])
        base = t.strftime(f"%Y-%m-%d{rng.choice('T ')}%H:%M:%S") + frac + off
        texts.append(base if rng.random() < 0.5 else _near(rng, base))
    _check(texts)


def test_iso_micros_and_utc_micros_equal_the_line_parsers():
    """`iso_micros` gives `alps.parse_time` (offsets applied, local times in the zone,
    years 1900-2200) and `utc_micros` its `Z` texts with `T` only."""
    texts = [*EDGES[:-14], "2017-03-12 02:30:00", "2017-11-05T01:30:00", "2201-01-01T00:00:00",
             "1899-12-31T23:59:59Z", "2018-09-10 06:16:52Z"]
    for tz in ("UTC", "America/Chicago", "Australia/Lord_Howe"):
        micros, ok = columnar.iso_micros(pa.array(texts), tz)
        for text, value, good in zip(texts, micros.to_pylist(), ok.to_pylist(), strict=True):
            read = python(text)
            if read is None or not 1900 <= (_EPOCH + read[0] * _US).year <= 2200:
                assert not good, (text, tz)
                continue
            assert good and value == (alps.parse_time(text, tz) - _EPOCH) // _US, (text, tz)
    utc = columnar.utc_micros(pa.array(texts)).to_pylist()
    want = [python(t)[0] if python(t) and python(t)[2] == 1 and "T" in t else None
            for t in texts]
    assert utc == want
    assert np.array_equal(np.asarray(columnar.utc_micros(pa.array([], pa.string()))), [])


_MDY = re.compile(r"(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d)", re.ASCII)


def _mdy_python(text: str | None) -> int | None:
    """Wall µs (as if UTC) of the `MM/DD/YYYY HH:MM:SS` the text begins with, as
    pbs._header_time reads it, or None."""
    m = _MDY.match(text or "")
    if not m:
        return None
    mo, d, y, h, mi, s = (int(g) for g in m.groups())
    try:
        return (dt.datetime(y, mo, d, h, mi, s) - _EPOCH) // _US
    except ValueError:
        return None


def test_pbs_record_times_read_as_python_reads_them():
    """`read_mdy_prefix`: edge dates (each followed by a record's rest or by nothing), then
    random texts near the shape, on a sliced array."""
    rng = random.Random(SEED)
    edges = ["02/29/2024 23:59:59", "02/29/2023 00:00:00", "02/29/1900 00:00:00",
             "02/29/2000 00:00:00", "04/31/2018 00:00:00", "12/31/2018 23:59:60",
             "12/31/2018 24:00:00", "01/01/0000 00:00:00", "01/01/0001 00:00:00",
             "12/31/9999 23:59:59", "13/01/2018 00:00:00", "00/10/2018 00:00:00",
             "09/00/2018 00:00:00", "9/10/2018 06:16:52", "09/10/2018 06:16:5", "", None,
             "09/10/2018T06:16:52", "09-10-2018 06:16:52", "09/10/2018 06:16:52"]
    texts = [e + tail if e else e for e in edges for tail in ("", ";E;1.sdb;user=u", "x")]
    for _ in range(20_000):
        t = _EPOCH + dt.timedelta(seconds=rng.randrange(-2_500_000_000, 8_000_000_000))
        base = t.strftime("%m/%d/%Y %H:%M:%S") + rng.choice(["", ";S;12.sdb;a=b", " x"])
        texts.append(base if rng.random() < 0.5 else _near(rng, base))
    arr = pa.array(["pad", *texts, "pad"], pa.string()).slice(1, len(texts))
    wall, ok = read_mdy_prefix(arr)
    for i, text in enumerate(texts):
        assert (int(wall[i]) if ok[i] else None) == _mdy_python(text), text
